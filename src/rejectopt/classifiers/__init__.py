"""Classifiers of section 5.2 of Franc, Prusa & Voracek (2023): LR, linear SVM, SVOR; plus XGBoost."""

from ._linear import BinaryHingeSVM, make_classifier
from ._selection import C_GRID, classifier_outputs, train_classifier
from ._svor import SVOR, svor_objective
from ._xgb import XGB_GRID, XGBLabelSpaceClassifier, train_xgb, xgb_outputs

__all__ = [
    "BinaryHingeSVM",
    "C_GRID",
    "SVOR",
    "XGBLabelSpaceClassifier",
    "XGB_GRID",
    "classifier_outputs",
    "make_classifier",
    "svor_objective",
    "train_classifier",
    "train_xgb",
    "xgb_outputs",
]
