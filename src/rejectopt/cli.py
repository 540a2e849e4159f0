"""Selective prediction for your own classifier: ``python -m rejectopt select|apply``.

``select`` learns an uncertainty score (SELE or REG, eq. 37 of Franc, Prusa &
Voracek, 2023) from the features, predictions and losses of *your* classifier
on labelled data, and fits the paper's randomized Bayes selection function
(eq. 25) for a target coverage, a target selective risk or a reject cost.
``apply`` uses the resulting ``model.json`` to accept or reject new predictions.

Row scheme of ``select`` (seeded permutation of the input rows)::

    train        1 - calibration - report  (default 50 %): fits the score;
                 its last ``validation`` share (default 30 % of it) picks C by AuRC,
                 then the score is refitted on the whole train part with that C
    calibration  --calibration-fraction    (default 30 %): fits the selection function
    report       --report-fraction         (default 20 %): held out; achieved coverage
                 and selective risk with 95 % confidence intervals

The model file is plain JSON (no pickle): loading a model from elsewhere cannot
run code. Errors in the input exit with status 2 and a one-line message naming
the file, row and column; no partial output is left behind.

Row numbers in messages: for a CSV, ``row N`` is the N-th data row (the header
is not counted, so it is on line N + 1 of the file); for an NPZ, ``index i`` is
the 0-based array index.

Predicted classes not seen by ``select`` are an error at ``apply`` time by
default (a new value usually means a different label encoding); with
``--unseen-classes reject`` such rows are rejected and get uncertainty ``inf``
(stricter than the score's own rule, which gives them the largest training
uncertainty and could still accept them at a tie).
"""

from __future__ import annotations

import argparse
import io
import json
import logging
import math
import platform
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats as _sps

from . import __version__
from ._io import atomic_path
from .metrics import aurc, rc_curve
from .scores import REG, SELE, select_C
from .selective import (
    SelectionFunction,
    empirical_risk_coverage,
    fit_bounded_abstention,
    fit_bounded_improvement,
    fit_cost_based,
)

__all__ = [
    "InputError",
    "MODEL_FORMAT",
    "Table",
    "Target",
    "apply_model",
    "build_parser",
    "load_model",
    "load_table",
    "main",
    "parse_target",
    "score_from_dict",
    "score_to_dict",
    "select_model",
    "split_rows",
    "wilson_interval",
]

log = logging.getLogger(__name__)

MODEL_FORMAT = "rejectopt-selective-model"
MODEL_FORMAT_VERSION = 1
CONFIDENCE = 0.95
#: Value of ``--pred-column`` meaning "no predicted class": one class-agnostic score.
NO_PRED = "none"
#: Fewest rows allowed in each part of the split.
MIN_ROWS_PER_PART = 10
_EXIT_INPUT_ERROR = 2


class InputError(ValueError):
    """Bad user input (file, column, value, option); reported as one line with exit status 2."""


# --------------------------------------------------------------------------------------------
# Targets
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Target:
    """What the selection function is fitted for.

    ``kind`` is ``"coverage"`` (bounded abstention, value in (0, 1]), ``"risk"``
    (bounded improvement: largest coverage with selective risk <= value, in loss
    units, e.g. percent for the 0/100 loss) or ``"reject-cost"`` (cost-based
    model: minimise risk + value * rejection rate).
    """

    kind: str
    value: float

    def fit(self, loss, uncertainty):
        """Fit the selection function on calibration ``loss`` and ``uncertainty``."""
        if self.kind == "coverage":
            return fit_bounded_abstention(loss, uncertainty, self.value)
        if self.kind == "risk":
            return fit_bounded_improvement(loss, uncertainty, self.value)
        return fit_cost_based(loss, uncertainty, self.value)


def parse_target(text):
    """Parse ``coverage=0.8``, ``risk=5`` or ``reject-cost=10`` into a :class:`Target`."""
    kind, sep, value = str(text).partition("=")
    kind = kind.strip().lower().replace("_", "-")
    if not sep or kind not in ("coverage", "risk", "reject-cost"):
        raise InputError(f"--target must be coverage=W, risk=L or reject-cost=E, got {text!r}")
    try:
        number = float(value)
    except ValueError:
        raise InputError(f"--target {kind}: {value!r} is not a number") from None
    if kind == "coverage" and not 0.0 < number <= 1.0:
        raise InputError(f"--target coverage must lie in (0, 1], got {number:g}")
    if kind == "risk" and not (math.isfinite(number) and number > 0):
        raise InputError(f"--target risk must be a finite number > 0 (loss units), got {number:g}")
    if kind == "reject-cost" and not (math.isfinite(number) and number >= 0):
        raise InputError(f"--target reject-cost must be a finite number >= 0, got {number:g}")
    return Target(kind, number)


# --------------------------------------------------------------------------------------------
# Input tables
# --------------------------------------------------------------------------------------------
@dataclass
class Table:
    """Validated input: features, predicted-class keys and, for ``select``, losses.

    Attributes
    ----------
    X : ndarray of shape (n, d), float64, finite
    feature_columns : list of str
    pred_keys : ndarray of str objects (n,) or None
        Normalised predicted classes (``"3"`` for 3, 3.0 and " 3"; other text as is).
    loss : ndarray (n,) or None
    source : str
        File name, for messages.
    is_csv : bool
    """

    X: np.ndarray
    feature_columns: list
    pred_keys: np.ndarray | None
    loss: np.ndarray | None
    source: str
    is_csv: bool = True
    pred_raw: object = field(default=None, repr=False)

    def where(self, i):
        """Human-readable position of 0-based row ``i``."""
        return row_label(i, self.is_csv)


def row_label(i, is_csv):
    """``row N`` (1-based data row) for a CSV, ``index i`` for an NPZ."""
    return f"row {int(i) + 1}" if is_csv else f"index {int(i)}"


def _class_key(value):
    """Canonical text of a class label: integral numbers as ``"3"``, other text stripped; None for NaN."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return str(value).strip()
    if math.isnan(number):
        return None
    if number.is_integer():
        return str(int(number))
    return repr(number)


def _class_keys(values, column, source, is_csv):
    """Canonical class keys of a column; missing values raise InputError naming the row."""
    codes, uniques = pd.factorize(pd.Series(values), use_na_sentinel=True)
    keys = [_class_key(u) for u in uniques]
    missing = np.flatnonzero(codes < 0)
    if missing.size == 0 and any(k is None for k in keys):
        missing = np.flatnonzero([keys[c] is None for c in codes])
    if missing.size:
        raise InputError(f"{source}: missing value (NaN) in column {column!r} at {row_label(missing[0], is_csv)}"
                         f" ({missing.size} row(s) in all)")
    return np.array(keys, dtype=object)[codes]


def _numeric_column(values, column, source, is_csv, non_negative=False):
    """Column as float64; non-numeric, NaN, infinite (and negative) values raise InputError."""
    series = pd.Series(values)
    numbers = pd.to_numeric(series, errors="coerce")
    non_numeric = np.flatnonzero(numbers.isna().to_numpy() & series.notna().to_numpy())
    if non_numeric.size:
        i = non_numeric[0]
        raise InputError(f"{source}: non-numeric value {series.iloc[i]!r} in column {column!r} at "
                         f"{row_label(i, is_csv)}")
    numbers = numbers.to_numpy(dtype=float)
    missing = np.flatnonzero(np.isnan(numbers))
    if missing.size:
        raise InputError(f"{source}: missing value (NaN) in column {column!r} at {row_label(missing[0], is_csv)}"
                         f" ({missing.size} row(s) in all)")
    infinite = np.flatnonzero(np.isinf(numbers))
    if infinite.size:
        raise InputError(f"{source}: infinite value in column {column!r} at {row_label(infinite[0], is_csv)}")
    if non_negative and (numbers < 0).any():
        i = int(np.flatnonzero(numbers < 0)[0])
        raise InputError(f"{source}: negative loss {numbers[i]:g} in column {column!r} at {row_label(i, is_csv)}")
    return numbers


def _read_frame(path):
    path = Path(path)
    if not path.is_file():
        raise InputError(f"{path}: no such file")
    if path.suffix.lower() == ".npz":
        try:
            with np.load(path, allow_pickle=False) as data:
                return {name: data[name] for name in data.files}, False
        except (ValueError, OSError) as err:
            raise InputError(f"{path}: cannot read NPZ ({_one_line(err)})") from None
    try:
        return pd.read_csv(path, skipinitialspace=True), True
    except pd.errors.EmptyDataError:
        raise InputError(f"{path}: the file is empty") from None
    except (pd.errors.ParserError, UnicodeDecodeError) as err:
        raise InputError(f"{path}: cannot parse CSV ({_one_line(err)})") from None


def _require_columns(available, required, source):
    missing = [c for c in required if c not in available]
    if missing:
        raise InputError(f"{source}: missing column(s) {missing}; the file has columns {list(available)}")


def _feature_matrix_from_csv(frame, feature_columns, source):
    X = np.empty((len(frame), len(feature_columns)))
    for j, column in enumerate(feature_columns):
        X[:, j] = _numeric_column(frame[column].to_numpy(), column, source, True)
    return X


def _feature_matrix_from_npz(arrays, source, n_features=None):
    _require_columns(arrays, ["X"], source)
    X = arrays["X"]
    if X.ndim != 2:
        raise InputError(f"{source}: array 'X' must be 2-D, got shape {X.shape}")
    if not np.issubdtype(X.dtype, np.number):
        raise InputError(f"{source}: array 'X' must be numeric, got dtype {X.dtype}")
    X = X.astype(float)
    bad = np.argwhere(~np.isfinite(X))
    if bad.size:
        i, j = bad[0]
        raise InputError(f"{source}: non-finite value {X[i, j]} in 'X' at index {i}, column {j}")
    if n_features is not None and X.shape[1] != n_features:
        raise InputError(f"{source}: 'X' has {X.shape[1]} columns, the model expects {n_features}")
    return X


def load_table(path, *, pred_column="y_pred", label_column="y", loss_column=None, loss="zero_one",
               feature_columns=None, need_loss=True):
    """Read and validate a CSV or NPZ for ``select`` (``need_loss=True``) or ``apply``.

    Parameters
    ----------
    path : path-like
        ``.npz`` with arrays ``X``, ``y_pred`` and ``y`` or ``loss`` (and optionally
        ``feature_names``); anything else is read as a CSV with a header.
    pred_column : str
        Predicted class column; ``"none"`` for no predicted class (one score for all).
    label_column : str
        True label column, used with ``loss`` when ``loss_column`` is None.
    loss_column : str or None
        Column holding the loss of each prediction directly.
    loss : {"zero_one", "mae"}
        ``zero_one``: ``100 [y != y_pred]`` (the paper's 0/100 loss, in percent);
        ``mae``: ``|y - y_pred|`` (numeric labels).
    feature_columns : list of str or None
        None: every column except the label, prediction and loss columns.
    need_loss : bool

    Returns
    -------
    Table

    Raises
    ------
    InputError
        Missing columns, NaN, non-numeric features: naming the row and column.
    """
    frame, is_csv = _read_frame(path)
    source = str(path)
    use_pred = pred_column != NO_PRED
    special = [c for c in (pred_column if use_pred else None,
                           (loss_column or label_column) if need_loss else None) if c]
    if is_csv:
        required = special + list(feature_columns or [])
        _require_columns(frame.columns, required, source)
        inferred = feature_columns is None
        if inferred:
            excluded = {pred_column, label_column, loss_column}
            feature_columns = [str(c) for c in frame.columns if c not in excluded]
        if not feature_columns:
            raise InputError(f"{source}: no feature columns (the file has columns {list(frame.columns)})")
        try:
            X = _feature_matrix_from_csv(frame, feature_columns, source)
        except InputError as err:
            hint = " (feature columns were inferred: choose them with --feature-columns)" if inferred else ""
            raise InputError(f"{err}{hint}") from None
        column = frame.__getitem__
    else:
        npz_names = {pred_column: "y_pred", label_column: "y", loss_column: "loss"}
        _require_columns(frame, [npz_names[c] for c in special], source)
        X = _feature_matrix_from_npz(frame, source, None if feature_columns is None else len(feature_columns))
        if feature_columns is None:
            names = frame.get("feature_names")
            feature_columns = ([str(v) for v in names] if names is not None and len(names) == X.shape[1]
                               else [f"x{j}" for j in range(X.shape[1])])

        def column(name):
            return frame[npz_names[name]]
    for name in special:
        if len(column(name)) != X.shape[0]:
            raise InputError(f"{source}: column {name!r} has {len(column(name))} rows, X has {X.shape[0]}")
    pred_raw = column(pred_column) if use_pred else None
    pred_keys = _class_keys(pred_raw, pred_column, source, is_csv) if use_pred else None
    losses = None
    if need_loss:
        losses = _losses(column, pred_raw, pred_keys, pred_column, label_column, loss_column, loss, source, is_csv)
    return Table(X=X, feature_columns=list(feature_columns), pred_keys=pred_keys, loss=losses, source=source,
                 is_csv=is_csv, pred_raw=pred_raw)


def _losses(column, pred_raw, pred_keys, pred_column, label_column, loss_column, loss, source, is_csv):
    if loss_column is not None:
        return _numeric_column(column(loss_column), loss_column, source, is_csv, non_negative=True)
    if pred_keys is None:
        raise InputError("--pred-column none needs --loss-column (the loss cannot be computed without predictions)")
    if loss == "zero_one":
        labels = _class_keys(column(label_column), label_column, source, is_csv)
        if not set(labels.tolist()) & set(pred_keys.tolist()):
            log.warning("%s: no value of %r occurs in %r: every prediction counts as an error (label encodings "
                        "differ?)", source, label_column, pred_column)
        return 100.0 * (labels != pred_keys).astype(float)
    if loss == "mae":
        y = _numeric_column(column(label_column), label_column, source, is_csv)
        y_pred = _numeric_column(pred_raw, pred_column, source, is_csv)
        return np.abs(y - y_pred)
    raise InputError(f"--loss must be zero_one or mae, got {loss!r}")


# --------------------------------------------------------------------------------------------
# Classes, split, intervals
# --------------------------------------------------------------------------------------------
def class_vocabulary(keys):
    """Sorted distinct class keys: numerically when all are integers, else as text."""
    distinct = set(keys.tolist())
    if all(_is_integer_text(k) for k in distinct):
        return sorted(distinct, key=int)
    return sorted(distinct)


def _is_integer_text(text):
    try:
        int(text)
    except ValueError:
        return False
    return True


def class_indices(keys, vocabulary, source="", is_csv=True, column="y_pred", unseen="error"):
    """Map class keys to positions in ``vocabulary``.

    Returns ``(indices, unseen_mask)``; with ``unseen="error"`` a key not in the
    vocabulary raises InputError naming the first such row and its value.
    """
    lookup = {k: i for i, k in enumerate(vocabulary)}
    indices = np.array([lookup.get(k, -1) for k in keys], dtype=np.intp)
    unseen_mask = indices < 0
    if unseen_mask.any() and unseen == "error":
        i = int(np.flatnonzero(unseen_mask)[0])
        raise InputError(
            f"{source}: predicted class {keys[i]!r} in column {column!r} at {row_label(i, is_csv)} was not seen "
            f"when the model was built ({int(unseen_mask.sum())} row(s) in all; known classes {list(vocabulary)}); "
            f"pass --unseen-classes reject to reject such rows")
    return np.where(unseen_mask, 0, indices), unseen_mask


def split_rows(n, calibration_fraction=0.3, report_fraction=0.2, validation_fraction=0.3, seed=0):
    """Seeded split of ``range(n)`` into train (fit / validation), calibration and report rows.

    Returns
    -------
    dict of ndarray
        ``fit``, ``validation`` (together: the train part), ``calibration``, ``report``.
    """
    for name, value in (("--calibration-fraction", calibration_fraction), ("--report-fraction", report_fraction),
                        ("--validation-fraction", validation_fraction)):
        if not 0.0 < value < 1.0:
            raise InputError(f"{name} must lie in (0, 1), got {value:g}")
    n_calibration = int(round(calibration_fraction * n))
    n_report = int(round(report_fraction * n))
    n_train = n - n_calibration - n_report
    n_validation = int(round(validation_fraction * n_train))
    sizes = {"fit": n_train - n_validation, "validation": n_validation,
             "calibration": n_calibration, "report": n_report}
    small = {k: v for k, v in sizes.items() if v < MIN_ROWS_PER_PART}
    if small:
        raise InputError(f"too few rows ({n}) for the split {sizes}: every part needs at least "
                         f"{MIN_ROWS_PER_PART} rows")
    order = np.random.default_rng(seed).permutation(n)
    bounds = np.cumsum([0] + list(sizes.values()))
    return {name: np.sort(order[bounds[k]:bounds[k + 1]]) for k, name in enumerate(sizes)}


def wilson_interval(successes, n, confidence=CONFIDENCE):
    """Wilson score interval for a binomial proportion (``successes`` may be fractional)."""
    if n <= 0:
        return float("nan"), float("nan")
    z = float(_sps.norm.ppf(0.5 + confidence / 2))
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(max(p * (1 - p), 0.0) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, min(centre - half, p)), min(1.0, max(centre + half, p))  # contains p despite round-off


def _is_two_valued(loss):
    values = np.unique(loss)
    return values.size <= 2 and values.min() == 0.0


def selective_risk_interval(loss, accept_prob, confidence=CONFIDENCE):
    """Confidence interval of the selective risk over the accepted rows, and its method.

    Losses taking only the values 0 and ``m`` (e.g. the 0/100 loss): Wilson interval of
    the error rate among accepted rows, times ``m``. Other losses (e.g. MAE): normal
    approximation ``mean +- z sd / sqrt(n_accepted)``. Rows are weighted by their
    acceptance probability (only tie rows have weights in (0, 1)).
    """
    accepted = float(accept_prob.sum())
    if accepted <= 0:
        return (float("nan"), float("nan")), "none (nothing accepted)"
    if _is_two_valued(loss):
        scale = float(loss.max()) or 1.0
        low, high = wilson_interval(float(accept_prob @ (loss > 0)), accepted, confidence)
        return (low * scale, high * scale), f"Wilson score interval ({confidence:.0%}) on the accepted rows"
    mean = float(accept_prob @ loss) / accepted
    variance = float(accept_prob @ (loss - mean) ** 2) / max(accepted - 1.0, 1.0)
    half = float(_sps.norm.ppf(0.5 + confidence / 2)) * math.sqrt(variance / accepted)
    return (max(0.0, mean - half), mean + half), f"normal approximation ({confidence:.0%}) on the accepted rows"


# --------------------------------------------------------------------------------------------
# The score: fitting and JSON round trip
# --------------------------------------------------------------------------------------------
_SCORE_CLASSES = {"sele": SELE, "reg": REG}


def _make_score(kind, C, n_classes, seed, n_jobs):
    if kind == "sele":
        return SELE(C=C, n_classes=n_classes, random_state=seed, n_jobs=n_jobs)
    return REG(C=C, n_classes=n_classes)


def fit_score(kind, X, classes, loss, parts, C_grid, n_classes, seed=0, n_jobs=1):
    """Pick C on the validation rows by AuRC, refit on fit + validation rows.

    Returns
    -------
    score : SELE or REG
    C : float
    validation_aurc : dict
    """
    fit_rows, val_rows = parts["fit"], parts["validation"]
    template = _make_score(kind, 0.0, n_classes, seed, n_jobs)
    best, val_aurc = select_C(template, X[fit_rows], classes[fit_rows], loss[fit_rows],
                              X[val_rows], classes[val_rows], loss[val_rows], C_grid=C_grid)
    train_rows = np.concatenate([fit_rows, val_rows])
    score = _make_score(kind, best.C, n_classes, seed, n_jobs).fit(X[train_rows], classes[train_rows],
                                                                    loss[train_rows])
    return score, float(best.C), {float(c): float(v) for c, v in val_aurc.items()}


def score_to_dict(score, kind):
    """JSON-able parameters of a fitted SELE/REG score (everything ``predict`` needs)."""
    return {
        "kind": kind,
        "C": float(score.C),
        "n_classes": int(score.n_classes_),
        "n_features": int(score.n_features_in_),
        "mean": score.mean_.tolist(),
        "scale": score.scale_.tolist(),
        "coef": score.coef_.tolist(),
        "intercept": score.intercept_.tolist(),
        "unseen_class_score": float(score.unseen_class_score_),
        "class_seen": [bool(v) for v in score.class_seen_],
    }


def score_from_dict(data):
    """Rebuild a fitted SELE/REG score from :func:`score_to_dict` output, validating shapes.

    Only numbers are read: no code is loaded. Raises InputError on a malformed dict.
    """
    try:
        kind = data["kind"]
        if kind not in _SCORE_CLASSES:
            raise InputError(f"unknown score kind {kind!r}")
        K, d = int(data["n_classes"]), int(data["n_features"])
        arrays = {name: np.asarray(data[name], dtype=np.float64)
                  for name in ("mean", "scale", "coef", "intercept")}
        unseen = float(data["unseen_class_score"])
        seen = np.asarray(data["class_seen"], dtype=bool)
    except (KeyError, TypeError, ValueError) as err:
        if isinstance(err, InputError):
            raise
        raise InputError(f"malformed score in model file ({_one_line(err)})") from None
    shapes = {"mean": (d,), "scale": (d,), "coef": (K, d), "intercept": (K,)}
    for name, shape in shapes.items():
        if arrays[name].shape != shape:
            raise InputError(f"malformed score in model file: {name} has shape {arrays[name].shape}, "
                             f"expected {shape}")
        if not np.all(np.isfinite(arrays[name])):
            raise InputError(f"malformed score in model file: {name} is not finite")
    score = _make_score(kind, float(data.get("C", 0.0)), K, 0, 1)
    score.mean_, score.scale_ = arrays["mean"], arrays["scale"]
    score.coef_, score.intercept_ = arrays["coef"], arrays["intercept"]
    score.n_classes_, score.n_features_in_ = K, d
    score.unseen_class_score_, score.class_seen_ = unseen, seen
    score.structured_ = False
    return score


def _versions():
    import scipy
    import sklearn

    return {"rejectopt": __version__, "python": platform.python_version(), "numpy": np.__version__,
            "scipy": scipy.__version__, "scikit-learn": sklearn.__version__}


# --------------------------------------------------------------------------------------------
# select
# --------------------------------------------------------------------------------------------
def _operating_point(loss, s, selection):
    """Expected coverage and selective risk of ``selection`` on (loss, s), with 95 % intervals."""
    prob = selection.acceptance_probability(s)
    risk, coverage = empirical_risk_coverage(loss, s, selection)
    risk_ci, risk_method = selective_risk_interval(loss, prob)
    return {
        "coverage": coverage,
        "coverage_ci": list(wilson_interval(float(prob.sum()), loss.size)),
        "coverage_ci_method": f"Wilson score interval ({CONFIDENCE:.0%})",
        "selective_risk": None if math.isnan(risk) else risk,
        "selective_risk_ci": [None if math.isnan(v) else v for v in risk_ci],
        "selective_risk_ci_method": risk_method,
        "n_accepted_expected": float(prob.sum()),
    }


def select_model(table, target, *, score_kind="sele", C_grid=(0, 1, 10, 100, 1000), calibration_fraction=0.3,
                 report_fraction=0.2, validation_fraction=0.3, seed=0, n_jobs=1, loss_name="zero_one"):
    """Learn the score and the selection function; returns ``(model_dict, report_dict, curves)``.

    ``curves`` holds the report rows' RC curves for the figure.
    """
    n = table.X.shape[0]
    vocabulary = class_vocabulary(table.pred_keys) if table.pred_keys is not None else None
    classes = (class_indices(table.pred_keys, vocabulary)[0] if vocabulary is not None
               else np.zeros(n, dtype=np.intp))
    n_classes = len(vocabulary) if vocabulary is not None else 1
    parts = split_rows(n, calibration_fraction, report_fraction, validation_fraction, seed)
    log.info("rows: %s", {k: int(v.size) for k, v in parts.items()})
    score, C, val_aurc = fit_score(score_kind, table.X, classes, table.loss, parts, C_grid, n_classes,
                                   seed, n_jobs)
    log.info("%s: C=%g chosen by validation AuRC %s", score_kind.upper(), C, val_aurc)
    s = score.predict(table.X, classes)
    cal, rep = parts["calibration"], parts["report"]
    try:
        selection = target.fit(table.loss[cal], s[cal])
    except ValueError as err:
        raise InputError(f"cannot meet --target {target.kind}={target.value:g} on the calibration rows: "
                         f"{_one_line(err)}") from None
    log.info("selection function: threshold %.6g, acceptance probability %.4g at the threshold",
             selection.threshold, selection.accept_prob)
    loss_rep, s_rep = table.loss[rep], s[rep]
    calibration_risk, calibration_coverage = empirical_risk_coverage(table.loss[cal], s[cal], selection)
    report = {
        "target": {"kind": target.kind, "value": target.value},
        "loss": loss_name,
        "score": score_kind,
        "C": C,
        "C_grid": [float(c) for c in C_grid],
        "validation_aurc": {str(k): v for k, v in val_aurc.items()},
        "selection": selection.to_dict(),
        "split": {"seed": seed, "calibration_fraction": calibration_fraction, "report_fraction": report_fraction,
                  "validation_fraction": validation_fraction},
        "rows": {"total": n, "train_fit": int(parts["fit"].size), "train_validation": int(parts["validation"].size),
                 "calibration": int(cal.size), "report": int(rep.size)},
        "calibration": {"coverage": calibration_coverage,
                        "selective_risk": None if math.isnan(calibration_risk) else calibration_risk},
        "report": _operating_point(loss_rep, s_rep, selection),
        "aurc_report": {"learned_score": aurc(loss_rep, s_rep), "random_order": float(loss_rep.mean()),
                        "oracle": aurc(loss_rep, loss_rep)},
        "risk_full_coverage_report": float(loss_rep.mean()),
        "versions": _versions(),
    }
    model = {
        "format": MODEL_FORMAT,
        "format_version": MODEL_FORMAT_VERSION,
        "feature_columns": table.feature_columns,
        "classes": vocabulary,
        "score": score_to_dict(score, score_kind),
        "selection": selection.to_dict(),
        "target": {"kind": target.kind, "value": target.value},
        "loss": loss_name,
        "versions": report["versions"],
    }
    curves = {"learned": rc_curve(loss_rep, s_rep), "oracle": rc_curve(loss_rep, loss_rep)}
    return model, report, curves


def rc_figure(curves, report):
    """RC curve of the learned score on the report rows with the operating point; a matplotlib Figure."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(5.5, 4.0), dpi=110)
    ax = fig.add_subplot()
    aurcs = report["aurc_report"]
    coverage, risk = curves["learned"]
    ax.plot(coverage, risk, label=f"{report['score'].upper()} score (AuRC {aurcs['learned_score']:.3g})")
    ax.plot(*curves["oracle"], color="0.6", lw=1, label=f"oracle (AuRC {aurcs['oracle']:.3g})")
    ax.axhline(aurcs["random_order"], color="0.3", ls="--", lw=1,
               label=f"random order (AuRC {aurcs['random_order']:.3g})")
    point = report["report"]
    if point["selective_risk"] is not None:
        cov_ci, risk_ci = point["coverage_ci"], point["selective_risk_ci"]
        ax.errorbar([point["coverage"]], [point["selective_risk"]],
                    xerr=[[max(0.0, point["coverage"] - cov_ci[0])], [max(0.0, cov_ci[1] - point["coverage"])]],
                    yerr=[[max(0.0, point["selective_risk"] - risk_ci[0])],
                          [max(0.0, risk_ci[1] - point["selective_risk"])]],
                    fmt="o", color="C3", capsize=3,
                    label=f"chosen point ({report['target']['kind']}={report['target']['value']:g})")
    ax.set_xlabel("coverage")
    ax.set_ylabel(f"selective risk ({report['loss']}{', %' if report['loss'] == 'zero_one' else ''})")
    ax.set_xlim(0, 1)
    ax.set_title(f"report rows (n={report['rows']['report']})", fontsize=10)
    ax.legend(fontsize=8, loc="upper left")
    fig.tight_layout()
    return fig


def _fmt(value, digits=4):
    return "n/a" if value is None else f"{value:.{digits}g}"


def report_markdown(report):
    """The human-readable ``report.md``."""
    point, rows, aurcs = report["report"], report["rows"], report["aurc_report"]
    sel = report["selection"]
    lines = [
        "# Selective prediction report",
        "",
        f"Target: **{report['target']['kind']} = {report['target']['value']:g}** (loss: {report['loss']}); "
        f"score: {report['score'].upper()} with C = {report['C']:g} (chosen by validation AuRC).",
        "",
        f"Selection function (randomized Bayes rule, eq. 25): accept if uncertainty < {sel['threshold']}, "
        f"accept with probability {sel['accept_prob']:.4g} if equal, reject otherwise.",
        "",
        "| rows | fit | validation | calibration | report | total |",
        "|---|---|---|---|---|---|",
        f"| | {rows['train_fit']} | {rows['train_validation']} | {rows['calibration']} | {rows['report']} | "
        f"{rows['total']} |",
        "",
        "Achieved on the held-out report rows (not used for fitting or calibration):",
        "",
        "| quantity | value | 95 % interval | method |",
        "|---|---|---|---|",
        f"| coverage | {_fmt(point['coverage'])} | [{_fmt(point['coverage_ci'][0])}, {_fmt(point['coverage_ci'][1])}] "
        f"| {point['coverage_ci_method']} |",
        f"| selective risk | {_fmt(point['selective_risk'])} | [{_fmt(point['selective_risk_ci'][0])}, "
        f"{_fmt(point['selective_risk_ci'][1])}] | {point['selective_risk_ci_method']} |",
        f"| risk at full coverage | {_fmt(report['risk_full_coverage_report'])} | | |",
        "",
        f"On the calibration rows: coverage {_fmt(report['calibration']['coverage'])}, selective risk "
        f"{_fmt(report['calibration']['selective_risk'])}.",
        "",
        "AuRC on the report rows (lower is better): "
        f"learned score {_fmt(aurcs['learned_score'])}, random order {_fmt(aurcs['random_order'])}, "
        f"oracle {_fmt(aurcs['oracle'])}.",
        "",
        "![RC curve](rc_curve.png)",
        "",
    ]
    return "\n".join(lines)


def _figure_png(fig):
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    return buffer.getvalue()


def _json_bytes(obj):
    return (json.dumps(obj, indent=2, allow_nan=False) + "\n").encode()


def write_outputs(out_dir, files):
    """Write ``{name: bytes}`` into ``out_dir``, each file atomically; on failure remove what was written."""
    out_dir = Path(out_dir)
    if out_dir.exists() and not out_dir.is_dir():
        raise InputError(f"--out {out_dir} exists and is not a folder")
    created = not out_dir.exists()
    written = []
    try:
        for name, data in files.items():
            with atomic_path(out_dir / name) as tmp:
                tmp.write_bytes(data)
            written.append(out_dir / name)
    except BaseException:
        for path in written:
            path.unlink(missing_ok=True)
        if created and out_dir.exists() and not any(out_dir.iterdir()):
            out_dir.rmdir()
        raise


def _parse_C_grid(text):
    try:
        grid = [float(v) for v in str(text).split(",") if v.strip()]
    except ValueError:
        raise InputError(f"--C must be comma-separated numbers, got {text!r}") from None
    if not grid or any(not math.isfinite(c) or c < 0 for c in grid):
        raise InputError(f"--C must be non-negative finite numbers, got {text!r}")
    return grid


def _run_select(args):
    target = parse_target(args.target)
    C_grid = _parse_C_grid(args.C)
    if args.loss_column is None and args.loss not in ("zero_one", "mae"):
        raise InputError(f"--loss must be zero_one or mae, got {args.loss!r}")
    features = [c.strip() for c in args.feature_columns.split(",")] if args.feature_columns else None
    table = load_table(args.data, pred_column=args.pred_column, label_column=args.label_column,
                       loss_column=args.loss_column, loss=args.loss, feature_columns=features)
    loss_name = f"column {args.loss_column}" if args.loss_column else args.loss
    model, report, curves = select_model(
        table, target, score_kind=args.score, C_grid=C_grid, calibration_fraction=args.calibration_fraction,
        report_fraction=args.report_fraction, validation_fraction=args.validation_fraction, seed=args.seed,
        n_jobs=args.n_jobs, loss_name=loss_name)
    model["pred_column"] = args.pred_column
    files = {
        "model.json": _json_bytes(model),
        "report.json": _json_bytes(report),
        "report.md": report_markdown(report).encode(),
        "rc_curve.png": _figure_png(rc_figure(curves, report)),
    }
    write_outputs(args.out, files)
    point = report["report"]
    print(f"wrote {', '.join(files)} to {args.out}")
    print(f"report rows: coverage {_fmt(point['coverage'])} [{_fmt(point['coverage_ci'][0])}, "
          f"{_fmt(point['coverage_ci'][1])}], selective risk {_fmt(point['selective_risk'])} "
          f"[{_fmt(point['selective_risk_ci'][0])}, {_fmt(point['selective_risk_ci'][1])}]")
    return 0


# --------------------------------------------------------------------------------------------
# apply
# --------------------------------------------------------------------------------------------
def load_model(path):
    """Read and validate a ``model.json`` written by ``select``; returns ``(model, score, selection)``."""
    path = Path(path)
    if not path.is_file():
        raise InputError(f"{path}: no such file")
    try:
        model = json.loads(path.read_text())
    except (ValueError, UnicodeDecodeError) as err:
        raise InputError(f"{path}: not a JSON model file ({_one_line(err)})") from None
    if not isinstance(model, dict) or model.get("format") != MODEL_FORMAT:
        raise InputError(f"{path}: not a rejectopt model (expected \"format\": \"{MODEL_FORMAT}\")")
    if model.get("format_version") != MODEL_FORMAT_VERSION:
        raise InputError(f"{path}: unsupported format_version {model.get('format_version')!r}")
    try:
        score = score_from_dict(model["score"])
        selection = SelectionFunction.from_dict(model["selection"])
        features = [str(c) for c in model["feature_columns"]]
    except InputError as err:
        raise InputError(f"{path}: {err}") from None
    except (KeyError, TypeError, ValueError) as err:
        raise InputError(f"{path}: malformed model ({_one_line(err)})") from None
    if len(features) != score.n_features_in_:
        raise InputError(f"{path}: {len(features)} feature columns but the score has {score.n_features_in_}")
    classes = model.get("classes")
    if classes is not None and len(classes) != score.n_classes_:
        raise InputError(f"{path}: {len(classes)} classes but the score has {score.n_classes_}")
    return model, score, selection


def apply_model(model, score, selection, table, unseen="error", seed=0):
    """Uncertainty and accept/reject decisions for the rows of ``table``.

    Rows whose predicted class was not seen by ``select`` raise InputError
    (``unseen="error"``) or are rejected with uncertainty ``+inf`` (``"reject"``).

    Returns
    -------
    pandas.DataFrame
        ``row``, the predicted class, ``uncertainty``, ``acceptance_probability``, ``accept`` (0/1).
    """
    n = table.X.shape[0]
    vocabulary = model.get("classes")
    if vocabulary is None:
        classes, unseen_mask = np.zeros(n, dtype=np.intp), np.zeros(n, dtype=bool)
    else:
        classes, unseen_mask = class_indices(table.pred_keys, vocabulary, table.source, table.is_csv,
                                             model.get("pred_column", "y_pred"), unseen)
    uncertainty = score.predict(table.X, classes)
    if unseen_mask.any():
        first = int(np.flatnonzero(unseen_mask)[0])
        log.warning("%d row(s) predict a class not seen by select (first: %s, value %r): rejected",
                    int(unseen_mask.sum()), table.where(first), table.pred_keys[first])
        uncertainty[unseen_mask] = np.inf
    accept = selection.accept(uncertainty, random_state=seed) & ~unseen_mask
    probability = np.where(unseen_mask, 0.0, selection.acceptance_probability(uncertainty))
    columns = {"row": np.arange(1, n + 1) if table.is_csv else np.arange(n)}
    if table.pred_keys is not None:
        columns[model.get("pred_column", "y_pred")] = table.pred_keys
    columns.update(uncertainty=uncertainty, acceptance_probability=probability, accept=accept.astype(int))
    return pd.DataFrame(columns)


def _run_apply(args):
    model, score, selection = load_model(args.model)
    pred_column = model.get("pred_column", "y_pred")
    table = load_table(args.data, pred_column=pred_column, feature_columns=model["feature_columns"],
                       need_loss=False)
    decisions = apply_model(model, score, selection, table, unseen=args.unseen_classes, seed=args.seed)
    out = Path(args.out)
    if out.is_dir():
        raise InputError(f"--out {out} is a folder; give a file name such as decisions.csv")
    with atomic_path(out) as tmp:
        decisions.to_csv(tmp, index=False, float_format="%.17g")
    print(f"wrote {out}: {int(decisions['accept'].sum())} of {len(decisions)} rows accepted "
          f"({decisions['accept'].mean():.4f})")
    return 0


# --------------------------------------------------------------------------------------------
# Parser and entry point
# --------------------------------------------------------------------------------------------
def build_parser():
    """The ``argparse`` parser of ``python -m rejectopt``."""
    parser = argparse.ArgumentParser(
        prog="python -m rejectopt",
        description="Selective prediction for your own classifier: learn an uncertainty score and the optimal "
                    "(randomized Bayes) selection function of Franc, Prusa & Voracek (JMLR 2023).",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="Exit status: 0 on success, 2 on bad input (one-line message, no partial output).")
    sub = parser.add_subparsers(dest="command", required=True, metavar="{select,apply}")
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("-q", "--quiet", action="store_true", help="log warnings only (no progress)")
    _add_select_parser(sub, common)
    _add_apply_parser(sub, common)
    return parser


def _add_select_parser(sub, common):
    p = sub.add_parser(
        "select", parents=[common], formatter_class=argparse.RawDescriptionHelpFormatter,
        help="learn the score and selection function from labelled predictions",
        description="Learn an uncertainty score (SELE or REG) from your classifier's predictions and losses, and "
                    "fit the selection function for a target.\n\nRows are split (seeded): train (score; an internal "
                    "validation share picks C by AuRC), calibration (selection function) and report (held out: "
                    "achieved coverage and selective risk with 95% intervals).",
        epilog="Examples:\n  python -m rejectopt select --data val.csv --target coverage=0.8 --out sel/\n"
               "  python -m rejectopt select --data val.npz --target risk=5 --score reg --out sel/\n"
               "  python -m rejectopt select --data val.csv --loss-column loss --target reject-cost=10 --out sel/")
    p.add_argument("--data", required=True, help="CSV with a header, or NPZ with arrays X, y_pred and y or loss")
    p.add_argument("--target", required=True,
                   help="coverage=W (accept a fraction W in (0,1]), risk=L (largest coverage with selective risk "
                        "<= L, in loss units: percent for zero_one) or reject-cost=E (cost-based rule)")
    p.add_argument("--out", required=True, help="output folder: model.json, report.md, report.json, rc_curve.png")
    p.add_argument("--score", choices=("sele", "reg"), default="sele",
                   help="learned uncertainty score: SELE (default) or REG (loss regression)")
    p.add_argument("--C", default="0,1,10,100,1000", help="regularisation grid, comma-separated (default %(default)s)")
    p.add_argument("--calibration-fraction", type=float, default=0.3,
                   help="share of rows for fitting the selection function (default %(default)s)")
    p.add_argument("--report-fraction", type=float, default=0.2,
                   help="share of held-out rows for the report (default %(default)s)")
    p.add_argument("--validation-fraction", type=float, default=0.3,
                   help="share of the train rows that picks C (default %(default)s)")
    p.add_argument("--seed", type=int, default=0, help="seed of the row split and of SELE's chunks (default 0)")
    p.add_argument("--label-column", default="y", help="true label column (default %(default)s)")
    p.add_argument("--pred-column", default="y_pred",
                   help="predicted class column (default %(default)s); 'none' for one class-agnostic score "
                        "(needs --loss-column)")
    p.add_argument("--loss-column", default=None, help="column with the loss of each prediction (instead of "
                                                       "--label-column and --loss)")
    p.add_argument("--loss", default="zero_one", choices=("zero_one", "mae"),
                   help="loss from labels: zero_one = 100*[y != y_pred] (percent, as in the paper), "
                        "mae = |y - y_pred| (default %(default)s)")
    p.add_argument("--feature-columns", default=None,
                   help="comma-separated feature columns (default: every column except label/pred/loss)")
    p.add_argument("--n-jobs", type=int, default=1, help="threads of SELE (default %(default)s)")
    p.set_defaults(run=_run_select)


def _add_apply_parser(sub, common):
    p = sub.add_parser(
        "apply", parents=[common], help="accept or reject new predictions with a model.json",
        description="Compute the uncertainty of new predictions with a model.json written by 'select' and decide "
                    "accept/reject per row (randomised only at exact ties with the threshold, seeded).")
    p.add_argument("--model", required=True, help="model.json written by 'select'")
    p.add_argument("--data", required=True, help="CSV or NPZ with the model's feature columns and predicted class")
    p.add_argument("--out", required=True, help="output CSV: row, predicted class, uncertainty, "
                                                "acceptance_probability, accept (1/0)")
    p.add_argument("--seed", type=int, default=0, help="seed of the draws at ties (default %(default)s)")
    p.add_argument("--unseen-classes", choices=("error", "reject"), default="error",
                   help="a predicted class not seen by 'select': stop with an error (default) or reject the row")
    p.set_defaults(run=_run_apply)


def _one_line(err):
    return " ".join(str(err).split())


def main(argv=None):
    """Entry point of ``python -m rejectopt``; returns the exit status."""
    args = build_parser().parse_args(argv)
    if not logging.getLogger().handlers:
        logging.basicConfig(level=logging.WARNING if args.quiet else logging.INFO,
                            format="%(levelname)s: %(message)s", stream=sys.stderr)
    try:
        return args.run(args)
    except (InputError, ValueError, OSError) as err:
        print(f"error: {_one_line(err)}", file=sys.stderr)
        return _EXIT_INPUT_ERROR
