"""rejectopt: learning uncertainty scores for classifiers with a reject option.

Reproduces Franc, Prusa & Voracek, "Optimal Strategies for Reject Option
Classifiers", JMLR 24(11), 2023. Submodules load on first use
(``rejectopt.scores.register_score`` works after a bare ``import rejectopt``),
so importing the package itself stays cheap.
"""

import importlib

__version__ = "0.1.0"

_SUBMODULES = (
    "classifiers", "config", "datasets", "estimator", "experiment", "landmarks", "metrics", "ood",
    "report", "scores", "selective", "splits", "stats",
)
_ATTRIBUTES = {"SelectiveClassifier": "estimator"}

__all__ = [*_SUBMODULES, *_ATTRIBUTES, "__version__"]


def __getattr__(name):
    if name in _SUBMODULES:
        return importlib.import_module(f".{name}", __name__)
    if name in _ATTRIBUTES:
        return getattr(importlib.import_module(f".{_ATTRIBUTES[name]}", __name__), name)
    raise AttributeError(f"module 'rejectopt' has no attribute {name!r}")


def __dir__():
    return sorted(__all__)
