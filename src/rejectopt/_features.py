"""The feature guard: which rows hold a value a linear score cannot use, and how messages say it.

A value beyond :data:`FEATURE_LIMIT` (raw, or once standardised with a score's mean and scale), NaN
or infinite makes a linear score overflow or say nothing. The estimator, the network-output
helpers, the command line's tables and :func:`rejectopt.model.decide` all stop such rows with
this one guard, so that they reject the same rows and word them alike. Imports nothing of the
package.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = [
    "FEATURE_LIMIT",
    "check_features",
    "feature_bounds",
    "out_of_range",
    "out_of_range_message",
    "value_text",
]

#: Largest magnitude of a feature value (and of a loss): beyond it, standardising's sums of
#: squares overflow float64 on large samples, and a linear score of it says nothing.
FEATURE_LIMIT = 1e150


def out_of_range(
    X: np.ndarray, low: Any = -FEATURE_LIMIT, high: Any = FEATURE_LIMIT
) -> tuple[np.ndarray, tuple[int, int] | None]:
    """Rows of ``X`` with a value outside ``[low, high]`` or NaN, and the first one's ``(row, column)``.

    The one home of the guard (the estimator, the CLI, :func:`rejectopt.model.decide`). A first pass on the column
    extremes avoids float temporaries, so a million rows cost little.

    Parameters
    ----------
    X : ndarray of shape (n, d)
        Feature values.
    low, high : float or ndarray of shape (d,), default=-FEATURE_LIMIT, FEATURE_LIMIT
        Bounds, one for all columns or one per column (:func:`feature_bounds`).

    Returns
    -------
    rows : ndarray of bool of shape (n,)
        True for a row out of range.
    first : tuple of (int, int) or None
        0-based, row-major first such value; None if none.
    """
    rows = np.zeros(X.shape[0], dtype=bool)
    if X.size == 0:
        return rows, None
    low_col, high_col = X.min(axis=0), X.max(axis=0)  # NaN where a column holds a NaN
    if np.all(low_col >= low) and np.all(high_col <= high):
        return rows, None
    rows = ~((X >= low) & (X <= high)).all(axis=1)
    i = int(np.flatnonzero(rows)[0])
    low, high = np.broadcast_to(low, X.shape[1:]), np.broadcast_to(high, X.shape[1:])
    return rows, (i, int(np.flatnonzero(~((X[i] >= low) & (X[i] <= high)))[0]))


def _out_of_range_reason(value: float) -> str:
    """Why ``value`` is out of range: not finite, beyond the raw bound, or beyond it once standardised."""
    if not np.isfinite(value):
        return "values must be finite numbers"
    if abs(value) > FEATURE_LIMIT:
        return f"values must lie within +-{FEATURE_LIMIT:g} (beyond, standardising the features overflows float64)"
    return f"standardised with the model's mean and scale it lies beyond +-{FEATURE_LIMIT:g}"


def value_text(value: float) -> str:
    """A feature value as messages print it: ``1e+308``, ``inf``, ``-inf``, ``NaN``."""
    return "NaN" if np.isnan(value) else f"{value:g}"


def out_of_range_message(value: float, position: str, *, stated: bool = True) -> str:
    """``value 1e+308 <position> is out of range: <why>``, for the guard's first stopped value.

    Parameters
    ----------
    value : float
        The value.
    position : str
        In the caller's terms: ``at row 3, column 2``, ``in column 'f4' at row 7``.
    stated : bool, default=True
        False leaves out "is out of range", for a sentence that has said it.

    Returns
    -------
    str
    """
    return f"value {value_text(value)} {position}{' is out of range' if stated else ''}: {_out_of_range_reason(value)}"


def feature_bounds(score: Any) -> tuple[Any, Any]:
    """Per-feature raw bounds with ``|x| <= L`` and ``|(x - mean) / scale| <= L`` (:data:`FEATURE_LIMIT`).

    A score without ``mean_`` / ``scale_`` gets the raw bound alone, as scalars.
    """
    if not (hasattr(score, "mean_") and hasattr(score, "scale_")):
        return -FEATURE_LIMIT, FEATURE_LIMIT
    with np.errstate(over="ignore"):
        low = np.maximum(-FEATURE_LIMIT, score.mean_ - FEATURE_LIMIT * score.scale_)
        high = np.minimum(FEATURE_LIMIT, score.mean_ + FEATURE_LIMIT * score.scale_)
    return low, high


def check_features(X: np.ndarray, *, what: str = "X") -> None:
    """ValueError naming the first training value beyond :data:`FEATURE_LIMIT` or not finite."""
    rows, first = out_of_range(X)
    if first is not None:
        i, j = first
        raise ValueError(
            f"{what}: {out_of_range_message(X[i, j], f'at row {i}, column {j}')} "
            f"({int(rows.sum())} row(s) in all)"
        )
