"""Uncertainty scores for reject option classifiers: learned (SELE, REG, TCP) and baselines.

Every score is registered once, here for the built-in ones and with
:func:`register_score` for a user's; the pipeline, the CLI and the reports read
:data:`SCORES`. The built-in classes are registered by import path and loaded on
first use, so reading the registry imports no scikit-learn (heavy to import:
``benchmarks/import_costs_records.csv``; a table job's start-up:
``benchmarks/measured_records.csv``, topic ``registry_import``); the names below are
likewise imported on first access (SPEC 1, ``lazy_loader``).
"""

import lazy_loader as _lazy

from ._registry import SCORES, get_score, make_score, register_score, score_names
from ._registry import ScoreError as ScoreError  # importable here, outside __all__ (the pipeline's)

# The order of registration is the order of the registry (CLI choices, default score lists).
register_score("mcp", label="MCP", learns_from="classifier")("rejectopt.scores._baselines:MCP")
register_score("margin", label="Margin", learns_from="classifier")(
    "rejectopt.scores._baselines:Margin"
)
register_score("face_score", label="Face score", learns_from="classifier")(
    "rejectopt.scores._baselines:FaceScore"
)
register_score("reg", label="REG", learns_from="loss")("rejectopt.scores._ridge:REG")
register_score("tcp", label="TCP", learns_from="true_class_posterior")(
    "rejectopt.scores._ridge:TCP"
)
register_score("sele", label="SELE", learns_from="loss")("rejectopt.scores._sele:SELE")
# One weight vector for all classes, on class-agnostic features of a network's logits: their X is
# the logits, so they apply to the deep-network route only (no classifier of the pipeline).
register_score(
    "reg_shared", label="REG (class-shared)", learns_from="loss", applies_to=("network",)
)("rejectopt.scores._shared:REGShared")
register_score(
    "sele_shared", label="SELE (class-shared)", learns_from="loss", applies_to=("network",)
)("rejectopt.scores._shared:SELEShared")

__getattr__, _, _ = _lazy.attach(
    __name__,
    submod_attrs={
        "_baselines": ["mcp", "svm_margin"],
        "_ridge": ["REG", "TCP"],
        "_sele": ["SELE"],
        "_tuning": ["select_C"],
    },
)

__all__ = [
    "SCORES",
    "get_score",
    "make_score",
    "register_score",
    "score_names",
    "SELE",
    "REG",
    "TCP",
    "mcp",
    "svm_margin",
    "select_C",
]


def __dir__():
    """The names of ``__all__``: lazy_loader's own lists only the names it loads."""
    return list(__all__)
