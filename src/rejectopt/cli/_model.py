"""``model.json``: what ``select`` writes, its validation on load, and ``apply``'s decisions.

The model file is plain JSON (no pickle): loading a model from elsewhere cannot run
code, and every field is checked before use (:func:`load_model`), so a hand-edited or
damaged file is refused naming the field instead of deciding wrongly.
"""

from __future__ import annotations

import json
import logging
import reprlib
from pathlib import Path

import numpy as np
import pandas as pd

from ..scores._base import PerClassLinearScore
from ..selective import SelectionFunction
from ..targets import OOD_TARGET_KINDS, target_from_dict, target_to_dict
from ._errors import InputError, one_line
from ._table import FEATURE_LIMIT, NO_PRED, class_indices, first_out_of_range, out_of_range, out_of_range_message

__all__ = ["MODEL_FORMAT", "MODEL_FORMAT_VERSION", "apply_model", "load_model", "model_dict"]

log = logging.getLogger(__name__)

MODEL_FORMAT = "rejectopt-selective-model"
MODEL_FORMAT_VERSION = 1
_MODEL_KEYS = ("format", "format_version", "feature_columns", "classes", "score", "selection", "target", "loss",
               "versions", "pred_column")


def model_dict(*, feature_columns, classes, score, selection, target, loss_name, versions, pred_column,
               ood_column=None):
    """The content of ``model.json`` (key order fixed: the file is byte-identical for the same input).

    ``target`` is ``{"kind": "coverage", "value": 0.8}``; for an OOD target
    ``{"kind": "tpr-fpr", "value": {"tpr": 0.8, "fpr": 0.2}, "ood_column": "is_ood"}``
    (the column that marked the OOD rows at ``select``; ``apply`` does not read it).
    """
    target_entry = target_to_dict(target)
    if ood_column is not None:
        target_entry["ood_column"] = ood_column
    return {
        "format": MODEL_FORMAT,
        "format_version": MODEL_FORMAT_VERSION,
        "feature_columns": list(feature_columns),
        "classes": classes,
        "score": score.to_dict(),
        "selection": selection.to_dict(),
        "target": target_entry,
        "loss": loss_name,
        "versions": versions,
        "pred_column": pred_column,
    }


def _reject_constant(name):
    raise ValueError(f"non-standard JSON number {name}")


def _text_list(value, field, *, unique=True):
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"{field} must be a list of strings")
    if unique and len(set(value)) != len(value):
        first = next(v for i, v in enumerate(value) if v in value[:i])
        raise ValueError(f"{field} lists {first!r} twice")
    return value


def _validate(model):
    """Check every field of a parsed model; returns ``(score, selection)`` or raises ValueError naming the field."""
    if not isinstance(model, dict) or model.get("format") != MODEL_FORMAT:
        raise ValueError(f"not a rejectopt model (expected \"format\": \"{MODEL_FORMAT}\")")
    version = model.get("format_version")
    if isinstance(version, bool) or version != MODEL_FORMAT_VERSION:
        raise ValueError(f"unsupported format_version {reprlib.repr(version)}")
    missing = [k for k in _MODEL_KEYS if k not in model]
    unknown = sorted(str(k) for k in model if k not in _MODEL_KEYS)
    if missing or unknown:
        raise ValueError("; ".join(([f"missing field(s) {missing}"] if missing else [])
                                   + ([f"unknown field(s) {unknown}"] if unknown else [])))
    score = PerClassLinearScore.from_dict(model["score"], name="score")
    selection = SelectionFunction.from_dict(model["selection"], name="selection")
    features = _text_list(model["feature_columns"], "feature_columns")
    if len(features) != score.n_features_in_:
        raise ValueError(f"feature_columns has {len(features)} names but score.n_features is {score.n_features_in_}")
    pred_column = model["pred_column"]
    if not isinstance(pred_column, str):
        raise ValueError("pred_column must be a string")
    if pred_column in features:
        raise ValueError(f"feature_columns includes the pred_column {pred_column!r}")
    classes = model["classes"]
    if pred_column == NO_PRED:
        if classes is not None or score.n_classes_ != 1:
            raise ValueError(f"classes must be null and score.n_classes 1 with pred_column {NO_PRED!r}")
    else:
        if classes is None:
            raise ValueError(f"classes is null but pred_column is {pred_column!r}: the list of predicted classes "
                             "is needed to pick each row's weights")
        _text_list(classes, "classes")
        if len(classes) != score.n_classes_:
            raise ValueError(f"classes has {len(classes)} entries but score.n_classes is {score.n_classes_}")
    target = model["target"]
    if isinstance(target, dict) and target.get("kind") in OOD_TARGET_KINDS:
        if set(target) != {"kind", "value", "ood_column"}:
            raise ValueError(f"target of kind {target['kind']} must be an object with keys kind, value and ood_column")
        if not isinstance(target["ood_column"], str):
            raise ValueError("target.ood_column must be a string")
        target = {"kind": target["kind"], "value": target["value"]}
    target_from_dict(target)
    if not isinstance(model["loss"], str):
        raise ValueError("loss must be a string")
    versions = model["versions"]
    if not isinstance(versions, dict) or not all(isinstance(v, str) for v in versions.values()):
        raise ValueError("versions must be an object of strings")
    return score, selection


def load_model(path):
    """Read and validate a ``model.json`` written by ``select``; returns ``(model, score, selection)``.

    Raises
    ------
    InputError
        Not a file, not JSON (also: nested too deeply, NaN / Infinity), or any field
        missing, unknown, of the wrong type or length, not finite, a scale <= 0, ...:
        naming the field.
    """
    path = Path(path)
    if not path.is_file():
        raise InputError(f"{path}: no such file")
    try:
        model = json.loads(path.read_bytes(), parse_constant=_reject_constant)
    except RecursionError:
        raise InputError(f"{path}: not a JSON model file (nested too deeply)") from None
    except (ValueError, OSError) as err:  # JSONDecodeError, UnicodeDecodeError, unreadable
        raise InputError(f"{path}: not a JSON model file ({one_line(err)})") from None
    try:
        score, selection = _validate(model)
    except ValueError as err:
        raise InputError(f"{path}: invalid model: {one_line(err)}") from None
    return model, score, selection


def _feature_bounds(score):
    """Per-feature bounds of the raw values whose raw and standardised values lie within
    :data:`FEATURE_LIMIT` (``|x| <= L`` and ``|(x - mean) / scale| <= L``)."""
    with np.errstate(over="ignore"):
        low = np.maximum(-FEATURE_LIMIT, score.mean_ - FEATURE_LIMIT * score.scale_)
        high = np.minimum(FEATURE_LIMIT, score.mean_ + FEATURE_LIMIT * score.scale_)
    return low, high


def apply_model(model, score, selection, table, unseen="error", extreme="reject", seed=0):
    """Uncertainty and accept/reject decisions for the rows of ``table``.

    Rows whose predicted class was not seen by ``select`` raise InputError
    (``unseen="error"``) or are rejected with uncertainty ``+inf`` (``"reject"``); so are
    rows with a feature value beyond :data:`FEATURE_LIMIT` (raw or standardised), by
    ``extreme``.

    Returns
    -------
    pandas.DataFrame
        ``row``, the predicted class, ``uncertainty``, ``acceptance_probability``, ``accept`` (0/1).
    """
    n = table.X.shape[0]
    vocabulary = model["classes"]
    pred_column = model["pred_column"]
    if vocabulary is None:
        classes, unseen_mask = np.zeros(n, dtype=np.intp), np.zeros(n, dtype=bool)
    else:
        classes, unseen_mask = class_indices(table.pred_keys, vocabulary, table.source, table.is_csv,
                                             pred_column, unseen)
    low, high = _feature_bounds(score)
    extreme_mask = out_of_range(table.X, low, high)
    if extreme_mask.any():
        first, j = first_out_of_range(table.X, extreme_mask, low, high)
        message = out_of_range_message(table.source, table.X[first, j], table.feature_columns[j], table.where(first))
        if extreme == "error":
            raise InputError(f"{message} ({int(extreme_mask.sum())} row(s) in all); pass --extreme-values reject "
                             "to reject such rows")
        log.warning("%d row(s) with values out of range (first: %s): rejected", int(extreme_mask.sum()),
                    one_line(message))
    with np.errstate(over="ignore", invalid="ignore"):
        uncertainty = score.predict(table.X, classes)
    extreme_mask |= ~np.isfinite(uncertainty)
    if unseen_mask.any():
        first = int(np.flatnonzero(unseen_mask)[0])
        log.warning("%d row(s) predict a class not seen by select (first: %s, value %r): rejected",
                    int(unseen_mask.sum()), table.where(first), table.pred_keys[first])
    rejected = unseen_mask | extreme_mask
    uncertainty[rejected] = np.inf
    accept = selection.accept(uncertainty, random_state=seed) & ~rejected
    probability = np.where(rejected, 0.0, selection.acceptance_probability(uncertainty))
    columns = {"row": np.arange(1, n + 1) if table.is_csv else np.arange(n)}
    if table.pred_keys is not None:
        columns[pred_column] = table.pred_keys
    columns.update(uncertainty=uncertainty, acceptance_probability=probability, accept=accept.astype(int))
    return pd.DataFrame(columns)
