"""rejectopt: learning uncertainty scores for classifiers with a reject option.

Reproduces Franc, Prusa & Voracek, "Optimal Strategies for Reject Option
Classifiers", JMLR 24(11), 2023. Submodules load on first use
(``rejectopt.scores.register_score`` works after a bare ``import rejectopt``),
so importing the package itself stays cheap.
"""

import lazy_loader as _lazy

# The one place the version is written: pyproject.toml reads it ([tool.setuptools.dynamic]).
__version__ = "0.6.0"

_SUBMODULES = [
    "classifiers",
    "datasets",
    "estimator",
    "exceptions",
    "fitting",
    "landmarks",
    "logits",
    "metrics",
    "model",
    "ood",
    "pipeline",
    "scores",
    "selective",
    "splits",
    "stats",
    "targets",
]
__getattr__, _, _ = _lazy.attach(
    __name__,
    submodules=_SUBMODULES,
    submod_attrs={"estimator": ["SelectiveClassifier"], "metrics": ["RiskCoverageDisplay"]},
)
# What the package holds: its submodules (each lists its own names) and the two classes it re-exports.
__all__ = ["RiskCoverageDisplay", "SelectiveClassifier", *_SUBMODULES]


def __dir__():
    """The names of ``__all__``: ``dir()`` shows what the package holds, as ``import *`` takes it."""
    return list(__all__)
