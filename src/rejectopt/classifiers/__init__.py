"""Classifiers of section 5.2 of Franc, Prusa & Voracek (2023): LR, linear SVM, SVOR; plus XGBoost.

Every classifier is registered once, here for the built-in ones and with
:func:`register_classifier` for a user's; the pipeline and the reports read
:data:`CLASSIFIERS`. The built-in classes are registered by import path and loaded
on first use, so reading the registry imports no scikit-learn (heavy to import:
``benchmarks/import_costs_records.csv``; a table job's start-up:
``benchmarks/measured_records.csv``, topic ``registry_import``); the names below are
likewise imported on first access (SPEC 1, ``lazy_loader``).
"""

import lazy_loader as _lazy

from ._registry import CLASSIFIERS, classifier_names, get_classifier, register_classifier

_MODELS = "rejectopt.classifiers._training"
register_classifier(
    "lr",
    task="classification",
    baseline="mcp",
    posteriors=True,
    label="LR",
    table="table3a",
    title="Table 3a: logistic regression",
    extension=False,
)(f"{_MODELS}:LogisticRegressionModel")
register_classifier(
    "svm",
    task="classification",
    baseline="margin",
    posteriors=False,
    label="SVM",
    table="table3b",
    title="Table 3b: linear SVM",
    extension=False,
)(f"{_MODELS}:LinearSVMModel")
register_classifier(
    "svor",
    task="ordinal",
    baseline="margin",
    posteriors=False,
    threads=2,
    label="SVOR",
    table="table4",
    title="Table 4: SVOR (ordinal regression)",
    extension=False,
)(f"{_MODELS}:SVORModel")
register_classifier(
    "xgb",
    task="classification",
    baseline="mcp",
    posteriors=True,
    uses_C=False,
    threads=1,
    label="XGBoost",
    table="table3c",
    title="Table 3c: gradient-boosted trees (XGBoost; extension, not in the paper)",
)(f"{_MODELS}:XGBoostModel")

# The pipeline's own steps (``_training.train_classifier``, ``classifier_outputs``,
# ``_double_hinge.fit_double_hinge``) are reached through these private submodules, loaded on
# first use like the public names.
__getattr__, _, _ = _lazy.attach(
    __name__,
    submodules=["_double_hinge", "_training"],
    submod_attrs={
        "_crammer_singer": ["CrammerSingerSVM"],
        "_double_hinge": ["DoubleHingeSVM"],
        "_linear": ["BinaryHingeSVM", "make_classifier"],
        "_svor": ["SVOR"],
    },
)

__all__ = [
    "BinaryHingeSVM",
    "CLASSIFIERS",
    "CrammerSingerSVM",
    "DoubleHingeSVM",
    "SVOR",
    "classifier_names",
    "get_classifier",
    "make_classifier",
    "register_classifier",
]


def __dir__():
    """The names of ``__all__``: lazy_loader's own lists only the names it loads."""
    return list(__all__)
