"""Uncertainty scores for reject option classifiers: learned (SELE, REG, TCP) and baselines."""

from ._baselines import mcp, svm_margin, svor_margin
from ._ridge import REG, TCP
from ._sele import SELE, ChunkedSELEObjective, make_chunks
from ._selection import select_C

__all__ = [
    "SELE",
    "REG",
    "TCP",
    "ChunkedSELEObjective",
    "make_chunks",
    "mcp",
    "svm_margin",
    "svor_margin",
    "select_C",
]
