"""rejectopt: learning uncertainty scores for classifiers with a reject option.

Reproduces Franc, Prusa & Voracek, "Optimal Strategies for Reject Option
Classifiers", JMLR 24(11), 2023. Submodules load on first use
(``rejectopt.scores.register_score`` works after a bare ``import rejectopt``),
so importing the package itself stays cheap.
"""

import lazy_loader as _lazy

# The one place the version is written: pyproject.toml reads it ([tool.setuptools.dynamic]).
__version__ = "0.3.0"

__getattr__, __dir__, _lazy_names = _lazy.attach(
    __name__,
    submodules=[
        "classifiers", "datasets", "estimator", "fitting", "landmarks", "logits", "metrics", "model", "ood",
        "pipeline", "scores", "selective", "splits", "stats", "targets",
    ],
    submod_attrs={"estimator": ["SelectiveClassifier"], "metrics": ["RiskCoverageDisplay"]},
)
# The public API of the package itself; the submodules list their own.
__all__ = ["RiskCoverageDisplay", "SelectiveClassifier"]
