"""A fitted selective model: its ``model.json``, the guard on the rows it decides on, its decisions.

One decision path. ``python -m rejectopt apply`` and :class:`rejectopt.SelectiveClassifier`
both decide through :func:`decide`, so that a row the one rejects or refuses the other does too:

* a feature value beyond :data:`FEATURE_LIMIT` (raw, or standardised with the score's mean and
  scale), NaN or infinite, or a predicted class the model never saw, is never accepted: its
  uncertainty is ``+inf`` and its acceptance probability 0 (the CLI can refuse such rows instead,
  by option). Without the guard, a linear score (eq. 37 of Franc, Prusa & Voracek, 2023) of a
  feature of 1e308 is any number at all, most certain as often as not;
* the same bound refuses such a value in the training rows (:func:`check_features`): a score
  fitted on it says nothing about the other rows.

The model file is plain JSON (no pickle): loading a model from elsewhere cannot run code, and
every field is checked before use (:func:`validate_model`), so a hand-edited or damaged file is
refused naming the field instead of deciding wrongly. Its format (:data:`MODEL_FORMAT`, version
:data:`MODEL_FORMAT_VERSION`) is what ``select`` has written since version 1.
"""

from __future__ import annotations

import json
import reprlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .scores import PerClassLinearScore, call_score
from .selective import SelectionFunction
from .targets import OOD_TARGET_KINDS, target_from_dict, target_to_dict

__all__ = [
    "FEATURE_LIMIT",
    "MODEL_FORMAT",
    "MODEL_FORMAT_VERSION",
    "NO_PRED",
    "Decisions",
    "check_features",
    "decide",
    "feature_bounds",
    "first_out_of_range",
    "model_dict",
    "out_of_range",
    "out_of_range_reason",
    "read_model",
    "validate_model",
    "value_text",
]

#: Largest magnitude of a feature value (and of a loss). Beyond it the squares summed to
#: standardise the features overflow float64 (max 1.8e308) on large samples, and a linear score
#: of such a value says nothing.
FEATURE_LIMIT = 1e150

MODEL_FORMAT = "rejectopt-selective-model"
MODEL_FORMAT_VERSION = 1
#: ``pred_column`` of a model with one class-agnostic score (no predicted class).
NO_PRED = "none"
_MODEL_KEYS = ("format", "format_version", "feature_columns", "classes", "score", "selection", "target", "loss",
               "versions", "pred_column")
#: How ties at the threshold are broken (where the selection function randomises, eq. 25).
TIE_BREAKING = ("hash", "sequential")
_MASK64 = (1 << 64) - 1


# --------------------------------------------------------------------------------------------
# The guard
# --------------------------------------------------------------------------------------------
def out_of_range(X: np.ndarray, low: Any = -FEATURE_LIMIT, high: Any = FEATURE_LIMIT) -> np.ndarray:
    """Mask of the rows of ``X`` with a value outside ``[low, high]`` (per column or scalar bounds), or NaN.

    Compares without float temporaries where it can (a pass for the extremes first), so it
    costs little on a million rows.
    """
    if X.size == 0:
        return np.zeros(X.shape[0], dtype=bool)
    low_col, high_col = X.min(axis=0), X.max(axis=0)  # NaN where a column holds a NaN
    if np.all(low_col >= low) and np.all(high_col <= high):
        return np.zeros(X.shape[0], dtype=bool)
    return ~((X >= low) & (X <= high)).all(axis=1)


def first_out_of_range(X: np.ndarray, rows: np.ndarray, low: Any = -FEATURE_LIMIT,
                       high: Any = FEATURE_LIMIT) -> tuple[int, int]:
    """``(row, column)`` of the first value outside the bounds (or NaN) among the rows of the mask ``rows``."""
    i = int(np.flatnonzero(rows)[0])
    low, high = np.broadcast_to(low, X.shape[1:]), np.broadcast_to(high, X.shape[1:])
    return i, int(np.flatnonzero(~((X[i] >= low) & (X[i] <= high)))[0])


def out_of_range_reason(value: float) -> str:
    """Why ``value`` is out of range: beyond the raw bound, not finite, or beyond it once standardised."""
    if not np.isfinite(value):
        return "values must be finite numbers"
    if abs(value) > FEATURE_LIMIT:
        return f"values must lie within +-{FEATURE_LIMIT:g} (beyond, standardising the features overflows float64)"
    return f"standardised with the model's mean and scale it lies beyond +-{FEATURE_LIMIT:g}"


def feature_bounds(score: Any) -> tuple[Any, Any]:
    """Per-feature bounds of the raw values whose raw and standardised values lie within :data:`FEATURE_LIMIT`.

    ``|x| <= L`` and ``|(x - mean) / scale| <= L``; a score without ``mean_`` / ``scale_`` (not a
    standardising linear score) gets the raw bound alone.
    """
    if not (hasattr(score, "mean_") and hasattr(score, "scale_")):
        return -FEATURE_LIMIT, FEATURE_LIMIT
    with np.errstate(over="ignore"):
        low = np.maximum(-FEATURE_LIMIT, score.mean_ - FEATURE_LIMIT * score.scale_)
        high = np.minimum(FEATURE_LIMIT, score.mean_ + FEATURE_LIMIT * score.scale_)
    return low, high


def check_features(X: np.ndarray, *, what: str = "X") -> None:
    """Refuse training rows with a value beyond :data:`FEATURE_LIMIT` or not finite.

    Raises
    ------
    ValueError
        Naming the first such value's row and column index (0-based) and how many rows hold one.
    """
    rows = out_of_range(X)
    if rows.any():
        i, j = first_out_of_range(X, rows)
        raise ValueError(f"{what}: value {value_text(X[i, j])} at row {i}, column {j} is out of range: "
                         f"{out_of_range_reason(X[i, j])} ({int(rows.sum())} row(s) in all)")


def value_text(value: float) -> str:
    """A feature value as messages print it: ``1e+308``, ``inf``, ``-inf``, ``NaN``."""
    return "NaN" if np.isnan(value) else f"{value:g}"


# --------------------------------------------------------------------------------------------
# Decisions
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Decisions:
    """What a selective model decides on each row.

    Attributes
    ----------
    uncertainty : ndarray of float
        The score ``s(x)``; ``+inf`` on a guarded row.
    accept : ndarray of bool
    acceptance_probability : ndarray of float
        ``c(x)`` of eq. (25): 1, the selection function's probability at the threshold, or 0.
    out_of_range : ndarray of bool
        Rows with a feature out of range (:func:`feature_bounds`) or NaN.
    overflow : ndarray of bool
        Other rows whose uncertainty is not finite (the score overflows on them).
    unseen : ndarray of bool
        Rows whose predicted class the model never saw.
    """

    uncertainty: np.ndarray
    accept: np.ndarray
    acceptance_probability: np.ndarray
    out_of_range: np.ndarray
    overflow: np.ndarray
    unseen: np.ndarray


def _splitmix64(values):
    """SplitMix64 finaliser on a uint64 array (wrapping arithmetic)."""
    values = values + np.uint64(0x9E3779B97F4A7C15)
    values = (values ^ (values >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    values = (values ^ (values >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return values ^ (values >> np.uint64(31))


def row_uniforms(X: np.ndarray, seed: int) -> np.ndarray:
    """A uniform number in [0, 1) per row of ``X``, a deterministic function of the row and ``seed``.

    The ``"hash"`` tie-breaking: every copy of an input is decided alike, in any batch.
    """
    bits = np.ascontiguousarray(np.asarray(X, dtype=np.float64) + 0.0).view(np.uint64)  # + 0.0: -0.0 -> 0.0
    with np.errstate(over="ignore"):
        state = _splitmix64(np.full(bits.shape[0], np.uint64(seed & _MASK64)))
        for j in range(bits.shape[1]):
            state = _splitmix64(state ^ bits[:, j])
    return (state >> np.uint64(11)).astype(np.float64) * 2.0**-53


def decide(score: Any, selection: SelectionFunction, X: Any, classes: Any, *, unseen: Any = None, seed: int = 0,
           tie_breaking: str = "sequential") -> Decisions:
    """The guarded decisions of a fitted score and selection function on the rows of ``X``.

    Parameters
    ----------
    score : fitted score with ``predict(X, classes)``
    selection : SelectionFunction
    X : ndarray of shape (n, d)
    classes : ndarray of int of shape (n,)
        Predicted class indices (any value on the ``unseen`` rows).
    unseen : ndarray of bool of shape (n,) or None
        Rows whose predicted class the model never saw: rejected.
    seed : int
        Seed of the draws at the threshold.
    tie_breaking : {"sequential", "hash"}
        ``"sequential"``: one seeded draw per tied row in row order (``apply``'s);
        ``"hash"``: a draw from the row's own values (:func:`row_uniforms`).

    Raises
    ------
    rejectopt.scores.ScoreError
        A score other than the built-in linear one (a plugin's, a user's instance) fails or
        returns a non-finite uncertainty on a row within the bounds, naming the score and its
        file. Only the linear score's overflow on such a row is a decision (rejected, in
        ``overflow``): its weights are finite, so it overflows only on extreme values.
    """
    if tie_breaking not in TIE_BREAKING:
        raise ValueError(f"tie_breaking must be one of {', '.join(map(repr, TIE_BREAKING))}; got {tie_breaking!r}")
    X = np.asarray(X, dtype=np.float64)
    n = X.shape[0]
    unseen = np.zeros(n, dtype=bool) if unseen is None else np.asarray(unseen, dtype=bool)
    low, high = feature_bounds(score)
    extreme = out_of_range(X, low, high)
    classes = np.where(unseen, 0, np.asarray(classes)) if unseen.any() else classes
    # an out-of-range row's features are replaced before the score sees them (a NaN would stop it):
    # the row is rejected whatever its score
    X_safe = np.where(extreme[:, None], 0.0, X) if extreme.any() else X
    if isinstance(score, PerClassLinearScore):
        with np.errstate(over="ignore", invalid="ignore"):
            uncertainty = np.array(score.predict(X_safe, classes), dtype=np.float64)
    else:  # a user's score: a non-finite value on an in-range row is its defect, refused naming it
        uncertainty = np.array(call_score(score, "predict", X_safe, classes, n_rows=n), dtype=np.float64)
    overflow = ~np.isfinite(uncertainty) & ~extreme
    rejected = extreme | overflow | unseen
    uncertainty[rejected] = np.inf
    if tie_breaking == "sequential":
        accept = selection.accept(uncertainty, random_state=seed)
    else:
        accept = uncertainty < selection.threshold
        ties = uncertainty == selection.threshold
        if selection.accept_prob >= 1.0:
            accept |= ties
        elif selection.accept_prob > 0.0 and ties.any():
            accept[ties] = row_uniforms(X_safe[ties], seed) < selection.accept_prob
    accept = accept & ~rejected
    probability = np.where(rejected, 0.0, selection.acceptance_probability(uncertainty))
    return Decisions(uncertainty=uncertainty, accept=accept, acceptance_probability=probability,
                     out_of_range=extreme, overflow=overflow, unseen=unseen)


# --------------------------------------------------------------------------------------------
# model.json
# --------------------------------------------------------------------------------------------
def model_dict(*, feature_columns, classes, score, selection, target, loss_name, versions, pred_column,
               ood_column=None) -> dict:
    """The content of ``model.json`` (key order fixed: the file is byte-identical for the same input).

    ``target`` is ``{"kind": "coverage", "value": 0.8}``; for an OOD target
    ``{"kind": "tpr-fpr", "value": {"tpr": 0.8, "fpr": 0.2}, "ood_column": "is_ood"}``
    (the column that marked the OOD rows at ``select``; deciding does not read it).
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


def validate_model(model: Any) -> tuple[PerClassLinearScore, SelectionFunction]:
    """Check every field of a parsed ``model.json``; returns ``(score, selection)``.

    Raises
    ------
    ValueError
        Naming the first bad field: missing, unknown, of the wrong type or length, not finite,
        a scale <= 0, ...
    """
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


def _one_line(err: BaseException) -> str:
    return " ".join(str(err).split()) or type(err).__name__


def read_model(path: Any) -> tuple[dict, PerClassLinearScore, SelectionFunction]:
    """Read and validate a ``model.json``; returns ``(model, score, selection)``.

    Raises
    ------
    ValueError
        Not a file, not JSON (also: nested too deeply, NaN / Infinity), or an invalid field
        (:func:`validate_model`); the message starts with the path.
    """
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"{path}: no such file")
    try:
        model = json.loads(path.read_bytes(), parse_constant=_reject_constant)
    except RecursionError:
        raise ValueError(f"{path}: not a JSON model file (nested too deeply)") from None
    except (ValueError, OSError) as err:  # JSONDecodeError, UnicodeDecodeError, unreadable
        raise ValueError(f"{path}: not a JSON model file ({_one_line(err)})") from None
    try:
        score, selection = validate_model(model)
    except ValueError as err:
        raise ValueError(f"{path}: invalid model: {_one_line(err)}") from None
    return model, score, selection
