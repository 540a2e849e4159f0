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

#: The ``format`` field of every ``model.json``: a file without it is not read as a model.
MODEL_FORMAT = "rejectopt-selective-model"
#: The ``format_version`` this release writes and reads; a change of the fields raises it.
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

    Parameters
    ----------
    X : ndarray of shape (n, d)
        Feature values.
    low, high : float or ndarray of shape (d,), default=-FEATURE_LIMIT, FEATURE_LIMIT
        Bounds, one for all columns or one per column (:func:`feature_bounds`).

    Returns
    -------
    ndarray of bool of shape (n,)
        True for a row with a value below ``low``, above ``high`` or NaN.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0, 1.0], [np.nan, 2.0], [3.0, 1e200]])
    >>> out_of_range(X)
    array([False,  True,  True])
    >>> out_of_range(X, low=0.0, high=[2.5, 1.5])
    array([False,  True,  True])
    """
    if X.size == 0:
        return np.zeros(X.shape[0], dtype=bool)
    low_col, high_col = X.min(axis=0), X.max(axis=0)  # NaN where a column holds a NaN
    if np.all(low_col >= low) and np.all(high_col <= high):
        return np.zeros(X.shape[0], dtype=bool)
    return ~((X >= low) & (X <= high)).all(axis=1)


def first_out_of_range(X: np.ndarray, rows: np.ndarray, low: Any = -FEATURE_LIMIT,
                       high: Any = FEATURE_LIMIT) -> tuple[int, int]:
    """``(row, column)`` of the first value outside the bounds (or NaN) among the rows of the mask ``rows``.

    Parameters
    ----------
    X : ndarray of shape (n, d)
        Feature values.
    rows : ndarray of bool of shape (n,)
        Rows out of range (:func:`out_of_range` with the same bounds); at least one True.
    low, high : float or ndarray of shape (d,), default=-FEATURE_LIMIT, FEATURE_LIMIT
        The bounds.

    Returns
    -------
    tuple of (int, int)
        Row and column index (0-based) of the first offending value, for error messages.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0, 1.0], [2.0, np.inf], [np.nan, 3.0]])
    >>> first_out_of_range(X, out_of_range(X))
    (1, 1)
    """
    i = int(np.flatnonzero(rows)[0])
    low, high = np.broadcast_to(low, X.shape[1:]), np.broadcast_to(high, X.shape[1:])
    return i, int(np.flatnonzero(~((X[i] >= low) & (X[i] <= high)))[0])


def out_of_range_reason(value: float) -> str:
    """Why ``value`` is out of range: beyond the raw bound, not finite, or beyond it once standardised.

    Parameters
    ----------
    value : float
        A value that :func:`out_of_range` flagged.

    Returns
    -------
    str
        The reason, as the error messages of ``apply`` and :func:`check_features` word it.

    Examples
    --------
    >>> out_of_range_reason(float("inf"))
    'values must be finite numbers'
    >>> out_of_range_reason(1e200)
    'values must lie within +-1e+150 (beyond, standardising the features overflows float64)'
    >>> out_of_range_reason(5.0)
    "standardised with the model's mean and scale it lies beyond +-1e+150"
    """
    if not np.isfinite(value):
        return "values must be finite numbers"
    if abs(value) > FEATURE_LIMIT:
        return f"values must lie within +-{FEATURE_LIMIT:g} (beyond, standardising the features overflows float64)"
    return f"standardised with the model's mean and scale it lies beyond +-{FEATURE_LIMIT:g}"


def feature_bounds(score: Any) -> tuple[Any, Any]:
    """Per-feature bounds of the raw values whose raw and standardised values lie within :data:`FEATURE_LIMIT`.

    ``|x| <= L`` and ``|(x - mean) / scale| <= L``; a score without ``mean_`` / ``scale_`` (not a
    standardising linear score) gets the raw bound alone.

    Parameters
    ----------
    score : object
        A fitted uncertainty score; its ``mean_`` and ``scale_`` (of shape (d,)) are read if it
        has them.

    Returns
    -------
    low, high : float or ndarray of shape (d,)
        Lower and upper bound per feature (scalars for a score without ``mean_`` / ``scale_``).

    Examples
    --------
    A feature whose training values spread over 1e-6 gets a bound 1e6 times tighter:

    >>> import numpy as np
    >>> from rejectopt.scores import REG
    >>> score = REG(C=0).fit(np.array([[0.0], [1e-6]]), np.array([0, 0]), np.array([0.0, 1.0]))
    >>> feature_bounds(score)
    (array([-5.e+143]), array([5.e+143]))
    >>> feature_bounds(object())
    (-1e+150, 1e+150)
    """
    if not (hasattr(score, "mean_") and hasattr(score, "scale_")):
        return -FEATURE_LIMIT, FEATURE_LIMIT
    with np.errstate(over="ignore"):
        low = np.maximum(-FEATURE_LIMIT, score.mean_ - FEATURE_LIMIT * score.scale_)
        high = np.minimum(FEATURE_LIMIT, score.mean_ + FEATURE_LIMIT * score.scale_)
    return low, high


def check_features(X: np.ndarray, *, what: str = "X") -> None:
    """Refuse training rows with a value beyond :data:`FEATURE_LIMIT` or not finite.

    Parameters
    ----------
    X : ndarray of shape (n, d)
        Training features.
    what : str, default="X"
        Name of ``X`` that starts the message.

    Raises
    ------
    ValueError
        Naming the first such value's row and column index (0-based) and how many rows hold one.

    Examples
    --------
    >>> import numpy as np
    >>> check_features(np.array([[0.0, 1.0], [2.0, 3.0]]))  # in range: returns None
    >>> check_features(np.array([[0.0, 1.0], [np.nan, 3.0], [1e200, 0.0]]), what="X_train")
    Traceback (most recent call last):
        ...
    ValueError: X_train: value NaN at row 1, column 0 is out of range: values must be finite numbers (2 row(s) in all)
    """
    rows = out_of_range(X)
    if rows.any():
        i, j = first_out_of_range(X, rows)
        raise ValueError(f"{what}: value {value_text(X[i, j])} at row {i}, column {j} is out of range: "
                         f"{out_of_range_reason(X[i, j])} ({int(rows.sum())} row(s) in all)")


def value_text(value: float) -> str:
    """A feature value as messages print it: ``1e+308``, ``inf``, ``-inf``, ``NaN``.

    Parameters
    ----------
    value : float
        The value.

    Returns
    -------
    str
        ``format(value, "g")``, or ``"NaN"`` for a NaN.

    Examples
    --------
    >>> [value_text(v) for v in (1e308, float("-inf"), float("nan"), 0.25)]
    ['1e+308', '-inf', 'NaN', '0.25']
    """
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

    Parameters
    ----------
    uncertainty, acceptance_probability : ndarray of float
        The attributes above.
    accept, out_of_range, overflow, unseen : ndarray of bool
        The attributes above.

    Examples
    --------
    Made by :func:`decide`; a row is accepted only if it is in range, its uncertainty finite and
    its class seen:

    >>> import numpy as np
    >>> from rejectopt.scores import REG
    >>> from rejectopt.selective import SelectionFunction
    >>> score = REG(C=0).fit(np.array([[0.0], [1.0], [2.0], [3.0]]), np.array([0, 0, 1, 1]),
    ...                      np.array([10.0, 30.0, 20.0, 60.0]))
    >>> decisions = decide(score, SelectionFunction(threshold=50.0, accept_prob=1.0),
    ...                    np.array([[0.0], [np.nan], [3.0]]), np.array([0, 0, 1]))
    >>> decisions.accept, decisions.out_of_range
    (array([ True, False, False]), array([False,  True, False]))
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
    score : object
        A fitted score with ``predict(X, classes)`` (the uncertainty, larger = more uncertain).
    selection : SelectionFunction
        Threshold and acceptance probability at the threshold (eq. 25).
    X : ndarray of shape (n, d)
        Features of the rows to decide on, as the score reads them.
    classes : ndarray of int of shape (n,)
        Predicted class indices (any value on the ``unseen`` rows).
    unseen : ndarray of bool of shape (n,) or None
        Rows whose predicted class the model never saw: rejected.
    seed : int
        Seed of the draws at the threshold.
    tie_breaking : {"sequential", "hash"}
        ``"sequential"``: one seeded draw per tied row in row order (``apply``'s);
        ``"hash"``: a draw from the row's own values (:func:`row_uniforms`).

    Returns
    -------
    Decisions
        Per row: uncertainty (``+inf`` on a guarded row), acceptance, acceptance probability
        and why a row was guarded.

    Raises
    ------
    rejectopt.scores.ScoreError
        A score other than the built-in linear one (a plugin's, a user's instance) fails or
        returns a non-finite uncertainty on a row within the bounds, naming the score and its
        file. Only the linear score's overflow on such a row is a decision (rejected, in
        ``overflow``): its weights are finite, so it overflows only on extreme values.

    Examples
    --------
    A REG score (one line per predicted class) and a threshold 30 with acceptance probability
    0.5: the row at the threshold is drawn, the NaN row, the row beyond the limit and the row of
    an unseen class are rejected with uncertainty ``+inf``.

    >>> import numpy as np
    >>> from rejectopt.scores import REG
    >>> from rejectopt.selective import SelectionFunction
    >>> score = REG(C=0).fit(np.array([[0.0], [1.0], [2.0], [3.0]]), np.array([0, 0, 1, 1]),
    ...                      np.array([10.0, 30.0, 20.0, 60.0]))
    >>> X = np.array([[0.0], [1.0], [np.nan], [1e200], [0.5]])
    >>> decisions = decide(score, SelectionFunction(threshold=30.0, accept_prob=0.5), X,
    ...                    np.array([0, 0, 0, 1, 0]), unseen=np.array([0, 0, 0, 0, 1], dtype=bool))
    >>> decisions.uncertainty.round(4)
    array([10., 30., inf, inf, inf])
    >>> decisions.acceptance_probability
    array([1. , 0.5, 0. , 0. , 0. ])
    >>> decisions.out_of_range, decisions.unseen
    (array([False, False,  True,  True, False]), array([False, False, False, False,  True]))
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

    Parameters
    ----------
    feature_columns : sequence of str
        Names of the feature columns, in the order the score reads them.
    classes : list of str or None
        The predicted classes as text, in the order of the score's per-class weights; None
        with ``pred_column`` :data:`NO_PRED`.
    score : PerClassLinearScore
        The fitted score (written by its ``to_dict``).
    selection : SelectionFunction
        The fitted selection function.
    target : Target or OODTarget
        What the selection function was fitted for.
    loss_name : str
        The loss the score learned from (``"zero_one"``, ``"mae"`` or ``"column NAME"``).
    versions : dict of str
        Versions of the libraries that fitted the model.
    pred_column : str
        Column of the predicted class in the data ``apply`` reads, or :data:`NO_PRED`.
    ood_column : str or None, default=None
        Column that marked the OOD rows at ``select`` (OOD targets only).

    Returns
    -------
    dict
        JSON-able: ``json.dumps`` of it is the file.

    Examples
    --------
    >>> import numpy as np
    >>> from rejectopt.scores import REG
    >>> from rejectopt.selective import SelectionFunction
    >>> from rejectopt.targets import Target
    >>> score = REG(C=0).fit(np.array([[0.0], [1.0], [2.0], [3.0]]), np.array([0, 0, 1, 1]),
    ...                      np.array([10.0, 30.0, 20.0, 60.0]))
    >>> model = model_dict(feature_columns=["x"], classes=["cat", "dog"], score=score,
    ...                    selection=SelectionFunction(threshold=30.0, accept_prob=0.5),
    ...                    target=Target("coverage", 0.75), loss_name="zero_one",
    ...                    versions={"rejectopt": "1.0"}, pred_column="pred")
    >>> list(model)
    ['format', 'format_version', 'feature_columns', 'classes', 'score', 'selection', 'target', 'loss', 'versions', 'pred_column']
    >>> model["target"], model["selection"]
    ({'kind': 'coverage', 'value': 0.75}, {'threshold': 30.0, 'accept_prob': 0.5})
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

    Parameters
    ----------
    model : object
        The parsed JSON (untrusted: any value is checked, not assumed to be a dict).

    Returns
    -------
    score : PerClassLinearScore
        The fitted score the file describes.
    selection : SelectionFunction
        Its selection function.

    Raises
    ------
    ValueError
        Naming the first bad field: missing, unknown, of the wrong type or length, not finite,
        a scale <= 0, ...

    Examples
    --------
    >>> import numpy as np
    >>> from rejectopt.scores import REG
    >>> from rejectopt.selective import SelectionFunction
    >>> from rejectopt.targets import Target
    >>> score = REG(C=0).fit(np.array([[0.0], [1.0], [2.0], [3.0]]), np.array([0, 0, 1, 1]),
    ...                      np.array([10.0, 30.0, 20.0, 60.0]))
    >>> model = model_dict(feature_columns=["x"], classes=["cat", "dog"], score=score,
    ...                    selection=SelectionFunction(threshold=30.0, accept_prob=0.5),
    ...                    target=Target("coverage", 0.75), loss_name="zero_one",
    ...                    versions={"rejectopt": "1.0"}, pred_column="pred")
    >>> validate_model(model)
    (REG(C=0.0, n_classes=2), SelectionFunction(threshold=30.0, accept_prob=0.5))
    >>> validate_model(dict(model, classes=["cat"]))
    Traceback (most recent call last):
        ...
    ValueError: classes has 1 entries but score.n_classes is 2
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

    Parameters
    ----------
    path : str or os.PathLike
        The file ``select`` wrote.

    Returns
    -------
    model : dict
        The parsed file.
    score : PerClassLinearScore
        The fitted score.
    selection : SelectionFunction
        The fitted selection function.

    Raises
    ------
    ValueError
        Not a file, not JSON (also: nested too deeply, NaN / Infinity), or an invalid field
        (:func:`validate_model`); the message starts with the path.

    Examples
    --------
    >>> import numpy as np
    >>> from rejectopt.scores import REG
    >>> from rejectopt.selective import SelectionFunction
    >>> from rejectopt.targets import Target
    >>> score = REG(C=0).fit(np.array([[0.0], [1.0], [2.0], [3.0]]), np.array([0, 0, 1, 1]),
    ...                      np.array([10.0, 30.0, 20.0, 60.0]))
    >>> model = model_dict(feature_columns=["x"], classes=["cat", "dog"], score=score,
    ...                    selection=SelectionFunction(threshold=30.0, accept_prob=0.5),
    ...                    target=Target("coverage", 0.75), loss_name="zero_one",
    ...                    versions={"rejectopt": "1.0"}, pred_column="pred")
    >>> import json, tempfile
    >>> from pathlib import Path
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = Path(folder) / "model.json"
    ...     _ = path.write_text(json.dumps(model))
    ...     read, score, selection = read_model(path)
    >>> read == model, selection
    (True, SelectionFunction(threshold=30.0, accept_prob=0.5))
    >>> score.predict(np.array([[1.0], [3.0]]), np.array([0, 1])).round(4)
    array([30., 60.])
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
