"""Classifiers of section 5.2 of Franc, Prusa & Voracek (2023): LR, linear SVM, SVOR; plus XGBoost.

Every classifier is registered once (:func:`register_classifier`); the pipeline and
the reports read :data:`CLASSIFIERS`.
"""

from ._registry import CLASSIFIERS, TASKS, ClassifierInfo, classifier_names, get_classifier, register_classifier
from ._crammer_singer import CrammerSingerSVM, crammer_singer_objective, fit_crammer_singer_path
from ._double_hinge import DoubleHingeSVM, chow_thresholds, double_hinge_loss
from ._linear import C_GRID, BinaryHingeSVM, make_classifier
from ._selection import classifier_outputs, train_classifier
from ._svor import SVOR, svor_objective
from ._xgb import XGB_GRID, XGBLabelSpaceClassifier, train_xgb, xgb_outputs

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
    "get_classifier",
    "make_classifier",
    "register_classifier",
    "svor_objective",
    "train_classifier",
    "train_xgb",
    "xgb_outputs",
]
