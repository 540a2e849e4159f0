"""rejectopt: learning uncertainty scores for classifiers with a reject option.

Reproduces Franc, Prusa & Voracek, "Optimal Strategies for Reject Option
Classifiers", JMLR 24(11), 2023. Submodules load on first use
(``rejectopt.scores.register_score`` works after a bare ``import rejectopt``),
so importing the package itself stays cheap.
"""

import sys as _sys

import lazy_loader as _lazy

# The one place the version is written: pyproject.toml reads it ([tool.setuptools.dynamic]).
__version__ = "0.9.0"

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
_lazy_getattr, _, _ = _lazy.attach(
    __name__,
    submodules=_SUBMODULES,
    submod_attrs={"estimator": ["SelectiveClassifier"], "metrics": ["RiskCoverageDisplay"]},
)

#: The pipeline's modules that 0.3.0 moved under ``rejectopt.pipeline``: an import of the old
#: path is told the new one rather than a bare "No module named" (their names are as before but
#: for the tables' ``aurc_table``, now ``metric_table``).
_MOVED = {
    "config": "",
    "experiments": "",
    "report": "",
    "resources": "",
    "tables": " (its aurc_table is metric_table)",
}


def _moved_message(name):
    """Where an old module path of the pipeline lives now, or None for a name that never moved."""
    parts = name.split(".")
    if len(parts) < 2 or parts[0] != __name__ or parts[1] not in _MOVED:
        return None
    new = ".".join([__name__, "pipeline", *parts[1:]])
    return (
        f"No module named {name!r}: rejectopt 0.3.0 moved it to {new!r}{_MOVED[parts[1]]}; "
        f"import {new}"
    )


class _MovedModuleFinder:
    """Last on ``sys.meta_path``: reached only when no module of the name exists, and then, for a
    path that 0.3.0 moved, it raises the error naming the new one (others: None, as usual)."""

    @staticmethod
    def find_spec(name, path=None, target=None):
        message = _moved_message(name)
        if message is not None:
            # no ``name``: ``from rejectopt import report`` would swallow an error naming the
            # module it tried, and say only "cannot import name"
            raise ModuleNotFoundError(message)
        return None


if not any(type(finder).__name__ == "_MovedModuleFinder" for finder in _sys.meta_path):
    _sys.meta_path.append(_MovedModuleFinder())


def __getattr__(name):
    """The lazy submodules and classes; an attribute of a moved module path names its new home."""
    message = _moved_message(f"{__name__}.{name}")
    if message is not None:
        raise AttributeError(message.replace("No module named", "No attribute"))
    return _lazy_getattr(name)


# What the package holds: its submodules (each lists its own names) and the two classes it re-exports.
__all__ = ["RiskCoverageDisplay", "SelectiveClassifier", *_SUBMODULES]


def __dir__():
    """The names of ``__all__``: ``dir()`` shows what the package holds, as ``import *`` takes it."""
    return list(__all__)
