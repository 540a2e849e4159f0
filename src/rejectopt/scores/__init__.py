"""Uncertainty scores for reject option classifiers: learned (SELE, REG, TCP) and baselines.

Every score is registered once (:func:`register_score`); the pipeline, the CLI and
the reports read :data:`SCORES`.
"""

from ._registry import SCORES, ScoreInfo, get_score, make_score, register_score, score_names
from ._baselines import FaceScore, Margin, MCP, face_score, mcp, svm_margin, svor_margin
from ._ridge import REG, TCP
from ._sele import SELE, ChunkedSELEObjective, make_chunks
from ._selection import SCORE_C_GRID, select_C

__all__ = [
    "SCORES",
    "SCORE_C_GRID",
    "ScoreInfo",
    "get_score",
    "make_score",
    "register_score",
    "score_names",
    "SELE",
    "REG",
    "TCP",
    "MCP",
    "Margin",
    "FaceScore",
    "ChunkedSELEObjective",
    "make_chunks",
    "mcp",
    "svm_margin",
    "svor_margin",
    "face_score",
    "select_C",
]
