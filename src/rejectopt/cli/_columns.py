"""Columns of an input table: the validated :class:`Table`, and the checks of its columns.

Row numbers in messages: for a CSV, ``row N`` is the N-th data row (the header is not
counted, so it is on line N + 1 of the file); for an NPZ, ``index i`` is the 0-based
array index. Both kinds of input file (:mod:`rejectopt.cli._table`, :mod:`rejectopt.cli._network`)
check their columns here, so a value is refused in the same words whichever file holds it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from numbers import Real

import numpy as np
import pandas as pd

from .. import _features
from ..model import NO_PRED
from ._errors import InputError

__all__ = ["Table", "has_prediction", "out_of_range_message", "row_label"]


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
        NaN for the OOD rows (their loss is not read).
    source : str
        File name, for messages.
    is_csv : bool
    is_ood : ndarray of bool (n,) or None
        With an OOD column: True for the rows it marks OOD.
    columns : list of str
        Every column (CSV) or array (NPZ) of the file.
    loss_bound : float or None
        The largest loss a prediction can have, by the loss's definition: 100 for the 0/100
        loss, the span of the numeric labels and predictions (K - 1 on labels 0..K-1) for the
        MAE; None for a loss column (its bound is declared by ``--loss-bound``).
    n_logits : int or None
        A network's outputs: the width K of its logits (recorded in ``model.json``).
    label_keys : ndarray of str objects (n,) or None
        The labels, normalised as ``pred_keys``, where the 0/100 loss was computed from them on
        every row (the balanced-accuracy areas of ``select --metrics`` read them); None else.
    probabilities : ndarray (n, K) or None
        A network's class probabilities (the softmax of its logits), for the calibration
        metrics of ``select --metrics``; None for a table of predictions.
    groups : list or None
        ``select --group-column``: each row's group label; None without one.

    Parameters
    ----------
    X, feature_columns, pred_keys, loss, source, is_csv, is_ood, columns, loss_bound, n_logits
    label_keys, probabilities, groups
        The attributes above.
    pred_raw : ndarray or None
        The predicted classes as read, before normalisation (for the ``mae`` loss).
    """

    X: np.ndarray
    feature_columns: list
    pred_keys: np.ndarray | None
    loss: np.ndarray | None
    source: str
    is_csv: bool = True
    pred_raw: object = field(default=None, repr=False)
    is_ood: np.ndarray | None = None
    columns: list = field(default_factory=list, repr=False)
    loss_bound: float | None = None
    n_logits: int | None = None
    label_keys: np.ndarray | None = field(default=None, repr=False)
    probabilities: np.ndarray | None = field(default=None, repr=False)
    groups: list | None = field(default=None, repr=False)

    def where(self, i):
        """Human-readable position of 0-based row ``i``."""
        return row_label(i, self.is_csv)


def has_prediction(pred_column):
    """Whether ``pred_column`` names a predicted-class column (``--pred-column none``: one score for all).

    Parameters
    ----------
    pred_column : str
        The option's value.

    Returns
    -------
    bool
    """
    return pred_column != NO_PRED


def row_label(i, is_csv):
    """``row N`` (1-based data row) for a CSV, ``index i`` for an NPZ."""
    return f"row {int(i) + 1}" if is_csv else f"index {int(i)}"


# --------------------------------------------------------------------------------------------
# Columns
# --------------------------------------------------------------------------------------------
def _class_key(value):
    """Canonical text of a class label: integral numbers as ``"3"``, other text stripped; None for NaN."""
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        return str(value).strip()
    if math.isnan(number):
        return None
    if number.is_integer():
        return str(int(number))
    return repr(number)


def _position(i, index):
    """Row ``i`` of a column, or of the subset of rows ``index`` (a row of the file)."""
    return i if index is None else index[i]


def _class_keys(values, column, source, is_csv, index=None):
    """Canonical class keys of a column; missing values raise InputError naming the row.

    ``index``: the file rows of ``values`` when they are a subset (for the messages).
    """
    codes, uniques = pd.factorize(pd.Series(values), use_na_sentinel=True)
    keys = [_class_key(u) for u in uniques]
    missing = np.flatnonzero(codes < 0)
    if missing.size == 0 and any(k is None for k in keys):
        missing = np.flatnonzero([keys[c] is None for c in codes])
    if missing.size:
        raise InputError(
            f"{source}: missing value (NaN) in column {column!r} at "
            f"{row_label(_position(missing[0], index), is_csv)} ({missing.size} row(s) in all)"
        )
    return np.array(keys, dtype=object)[codes]


def _numeric_column(values, column, source, is_csv, non_negative=False, index=None):
    """Column as float64; non-numeric, NaN, infinite (and negative) values raise InputError.

    ``index``: the file rows of ``values`` when they are a subset (for the messages).
    """
    series = pd.Series(values)
    numbers = pd.to_numeric(series, errors="coerce")
    non_numeric = np.flatnonzero(numbers.isna().to_numpy() & series.notna().to_numpy())
    if non_numeric.size:
        i = non_numeric[0]
        raise InputError(
            f"{source}: non-numeric value {series.iloc[i]!r} in column {column!r} at "
            f"{row_label(_position(i, index), is_csv)}"
        )
    numbers = numbers.to_numpy(dtype=float)
    missing = np.flatnonzero(np.isnan(numbers))
    if missing.size:
        raise InputError(
            f"{source}: missing value (NaN) in column {column!r} at "
            f"{row_label(_position(missing[0], index), is_csv)} ({missing.size} row(s) in all)"
        )
    infinite = np.flatnonzero(np.isinf(numbers))
    if infinite.size:
        raise InputError(
            f"{source}: infinite value in column {column!r} at "
            f"{row_label(_position(infinite[0], index), is_csv)}"
        )
    if non_negative and (numbers < 0).any():
        i = int(np.flatnonzero(numbers < 0)[0])
        raise InputError(
            f"{source}: negative loss {numbers[i]:g} in column {column!r} at "
            f"{row_label(_position(i, index), is_csv)}"
        )
    return numbers


#: Texts of an OOD column (case-insensitive, stripped) and their meaning.
_OOD_TEXT = {"1": True, "1.0": True, "true": True, "0": False, "0.0": False, "false": False}


def _ood_flag(value):
    """True / False for an OOD-column value, None if missing (NaN), ValueError otherwise."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (Real, np.number)):
        number = float(value)
        if math.isnan(number):
            return None
        if number in (0.0, 1.0):
            return number == 1.0
        raise ValueError(value)
    text = str(value).strip().lower()
    if text in _OOD_TEXT:
        return _OOD_TEXT[text]
    raise ValueError(value)


def _ood_column(values, column, source, is_csv):
    """The OOD column as a bool mask: 0/1 or false/true; NaN or another value raises InputError naming the row."""
    series = pd.Series(values, dtype=object)
    codes, uniques = pd.factorize(series, use_na_sentinel=True)
    flags = np.empty(len(uniques), dtype=np.int8)  # 0 ID, 1 OOD, -1 missing, -2 other
    for k, value in enumerate(uniques):
        try:
            flag = _ood_flag(value)
        except ValueError:
            flags[k] = -2
        else:
            flags[k] = -1 if flag is None else int(flag)
    per_row = np.where(codes < 0, -1, flags[np.maximum(codes, 0)] if len(uniques) else -1)
    bad = np.flatnonzero(per_row < 0)
    if bad.size:
        i = int(bad[0])
        if per_row[i] == -1:
            n_missing = int((per_row == -1).sum())
            raise InputError(
                f"{source}: missing value (NaN) in the OOD column {column!r} at {row_label(i, is_csv)} "
                f"({n_missing} row(s) in all): mark every row 0/false (ID) or 1/true (OOD)"
            )
        raise InputError(
            f"{source}: value {series.iloc[i]!r} in the OOD column {column!r} at {row_label(i, is_csv)} "
            "is not 0/false (ID) or 1/true (OOD)"
        )
    is_ood = per_row.astype(bool)
    if not is_ood.any():
        raise InputError(
            f"{source}: the OOD column {column!r} marks no row OOD (1/true): a TPR-FPR or "
            "precision-recall target needs OOD rows"
        )
    if is_ood.all():
        raise InputError(
            f"{source}: the OOD column {column!r} marks every row OOD (1/true): a TPR-FPR or "
            "precision-recall target needs ID rows"
        )
    return is_ood


def _require_columns(available, required, source):
    missing = [c for c in required if c not in available]
    if missing:
        raise InputError(
            f"{source}: missing column(s) {missing}; the file has columns {list(available)}"
        )


def out_of_range_message(source, X, first, columns, where):
    """``<file>: value 1e+308 in column 'f4' at row 7 is out of range: ...`` for the value at ``first``.

    ``first`` is the value's (row, column) in ``X``; ``where`` names its row as the file does.
    """
    i, j = first
    return f"{source}: {_features.out_of_range_message(X[i, j], f'in column {columns[j]!r} at {where}')}"


def _check_range(X, columns, source, is_csv, index=None):
    """InputError naming the first value beyond :data:`rejectopt.model.FEATURE_LIMIT` (row-major order).

    ``index``: the file rows of ``X`` when they are a subset (for the message).
    """
    first = _features.out_of_range(X)[1]
    if first is not None:
        where = row_label(_position(first[0], index), is_csv)
        raise InputError(out_of_range_message(source, X, first, columns, where))
