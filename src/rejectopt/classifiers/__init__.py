"""Classifiers of section 5.2 of Franc, Prusa & Voracek (2023): LR, linear SVM, SVOR; plus XGBoost.

Every classifier is registered once, here for the built-in ones and with
:func:`register_classifier` for a user's; the pipeline and the reports read
:data:`CLASSIFIERS`. The built-in classes are registered by import path and loaded
on first use, so reading the registry imports no scikit-learn (a table job starts in a third of the time); the names
below are likewise imported on first access (SPEC 1, ``lazy_loader``).
"""

import lazy_loader as _lazy

from ._registry import CLASSIFIERS, TASKS, ClassifierInfo, classifier_names, get_classifier, register_classifier

_MODELS = "rejectopt.classifiers._selection"
register_classifier("lr", task="classification", baseline="mcp", posteriors=True, label="LR", table="table3a",
                    title="Table 3a: logistic regression", extension=False)(f"{_MODELS}:LogisticRegressionModel")
register_classifier("svm", task="classification", baseline="margin", posteriors=False, label="SVM",
                    table="table3b", title="Table 3b: linear SVM", extension=False)(f"{_MODELS}:LinearSVMModel")
register_classifier("svor", task="ordinal", baseline="margin", posteriors=False, threads=2, label="SVOR",
                    table="table4", title="Table 4: SVOR (ordinal regression)", extension=False)(f"{_MODELS}:SVORModel")
register_classifier("xgb", task="classification", baseline="mcp", posteriors=True, uses_C=False, threads=1,
                    label="XGBoost", table="table3c",
                    title="Table 3c: gradient-boosted trees (XGBoost; extension, not in the paper)")(f"{_MODELS}:XGBoostModel")

__getattr__, __dir__, _ = _lazy.attach(
    __name__,
    submod_attrs={
        "_crammer_singer": ["CrammerSingerSVM", "crammer_singer_objective", "fit_crammer_singer_path"],
        "_double_hinge": ["DoubleHingeSVM", "chow_thresholds", "double_hinge_loss", "fit_double_hinge"],
        "_linear": ["C_GRID", "BinaryHingeSVM", "make_classifier"],
        "_selection": ["classifier_outputs", "train_classifier"],
        "_svor": ["SVOR", "svor_objective"],
        "_xgb": ["XGB_GRID", "XGBLabelSpaceClassifier", "train_xgb", "xgb_outputs"],
    },
)

__all__ = [
    "BinaryHingeSVM",
    "CLASSIFIERS",
    "C_GRID",
    "ClassifierInfo",
    "CrammerSingerSVM",
    "DoubleHingeSVM",
    "SVOR",
    "TASKS",
    "XGBLabelSpaceClassifier",
    "XGB_GRID",
    "chow_thresholds",
    "classifier_names",
    "classifier_outputs",
    "crammer_singer_objective",
    "double_hinge_loss",
    "fit_crammer_singer_path",
    "fit_double_hinge",
    "get_classifier",
    "make_classifier",
    "register_classifier",
    "svor_objective",
    "train_classifier",
    "train_xgb",
    "xgb_outputs",
]
