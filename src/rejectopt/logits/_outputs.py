"""Internal: a network's outputs checked, and its posterior and prediction."""

from __future__ import annotations

import numpy as np

from .._checks import check_1d
from ..exceptions import NetworkOutputError
from ..scores._shared import block_rows, first_non_finite, log_softmax, row_blocks

# --------------------------------------------------------------------------------------------
# Validation
# --------------------------------------------------------------------------------------------


def _real_matrix(values, name, function=None):
    try:
        values = np.asarray(values)
    except ValueError as err:  # ragged rows
        raise NetworkOutputError(
            name, f"is not a rectangular array ({err})", function=function
        ) from None
    if values.ndim != 2:
        hint = (
            f"; one row of {values.shape[0]} logits is a 2-D array of one row, e.g. [row] or row[None, :]"
            if values.ndim == 1 and name == "logits"
            else ""
        )
        raise NetworkOutputError(
            name,
            f"must be 2-D (n x {'K' if name == 'logits' else 'd'}), got shape {values.shape}{hint}",
            function=function,
        )
    if values.dtype.kind not in "biuf":
        raise NetworkOutputError(
            name, f"must hold real numbers, got dtype {values.dtype}", function=function
        )
    values = np.asarray(
        values, dtype=np.float64
    )  # no copy of float64 outputs: n x K can be gigabytes
    bad = first_non_finite(values)
    if bad is not None:
        i, j, count = bad
        raise NetworkOutputError(
            name, f"non-finite value {values[i, j]} ({count} in all)", i, j, function=function
        )
    return values


def _checked(logits, function):
    """``logits`` as a finite float (n, K) array, or a NetworkOutputError naming ``function`` and the first bad row."""
    logits = _real_matrix(logits, "logits", function)
    if logits.shape[0] == 0:
        raise NetworkOutputError("logits", "no rows", function=function)
    if logits.shape[1] < 2 and function not in ("max_logit", "predictions"):
        raise NetworkOutputError(
            "logits",
            f"needs at least 2 columns (classes), got shape {logits.shape}",
            function=function,
        )
    return logits


def check_network_outputs(logits, labels=None, embeddings=None):
    """Validate a network's outputs; returns ``(logits, labels, embeddings)`` as float / int arrays.

    Parameters
    ----------
    logits : array-like of shape (n, K)
        Pre-softmax outputs, finite, ``K >= 2``.
    labels : array-like of shape (n,) or None
        True classes ``0..K-1`` (integers; integral floats such as ``3.0`` are accepted).
    embeddings : array-like of shape (n, d) or None
        Penultimate-layer features, finite.

    Returns
    -------
    logits : ndarray of float64, shape (n, K)
    labels : ndarray of int64, shape (n,), or None
    embeddings : ndarray of float64, shape (n, d), or None

    Raises
    ------
    NetworkOutputError
        Wrong shape or dtype, < 2 classes, no rows, unequal row counts, a non-finite value or a
        label not an integer in ``0..K-1``; names the array and the first bad row and column.

    Examples
    --------
    >>> check_network_outputs([[0.0, 1.0]], [2])
    Traceback (most recent call last):
    ...
    rejectopt.exceptions.NetworkOutputError: labels: label 2 is not a class of the 2 logits (0..1) at index 0
    """
    logits = _real_matrix(logits, "logits")
    n, K = logits.shape
    if n == 0:
        raise NetworkOutputError("logits", "no rows")
    if K < 2:
        raise NetworkOutputError(
            "logits", f"needs at least 2 columns (classes), got shape {logits.shape}"
        )
    if embeddings is not None:
        embeddings = _real_matrix(embeddings, "embeddings")
        if embeddings.shape[0] != n:
            raise NetworkOutputError("embeddings", f"has {embeddings.shape[0]} rows, logits {n}")
        if embeddings.shape[1] == 0:
            raise NetworkOutputError("embeddings", f"has no columns (shape {embeddings.shape})")
    if labels is not None:
        labels = check_1d(
            labels,
            "labels",
            error=lambda message: NetworkOutputError("labels", message.removeprefix("labels ")),
        )
        if labels.shape[0] != n:
            raise NetworkOutputError("labels", f"has {labels.shape[0]} rows, logits {n}")
        if labels.dtype.kind not in "biuf":
            raise NetworkOutputError(
                "labels", f"must hold class indices 0..{K - 1}, got dtype {labels.dtype}"
            )
        values = labels.astype(np.float64)
        bad = np.flatnonzero(
            ~np.isfinite(values) | (values != np.round(values)) | (values < 0) | (values > K - 1)
        )
        if bad.size:
            i = int(bad[0])
            raise NetworkOutputError(
                "labels",
                f"label {_number(labels[i])} is not a class of the {K} logits "
                f"(0..{K - 1}{_whole_hint(values[i])})"
                + (f" ({bad.size} rows in all)" if bad.size > 1 else ""),
                i,
            )
        labels = values.astype(np.int64)
    return logits, labels, embeddings


def _whole_hint(value):
    return "; a class is a whole number" if np.isfinite(value) and value != np.round(value) else ""


def _number(value):
    """A label as its file holds it: ``3`` for 3 and 3.0, ``3.0000000001`` in full (not rounded to ``3``)."""
    value = value.item() if hasattr(value, "item") else value
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return repr(value)


# --------------------------------------------------------------------------------------------
# The network's posterior and prediction
# --------------------------------------------------------------------------------------------
def _log_softmax(logits):
    """``log p(y|x)`` of validated ``logits`` (:func:`rejectopt.scores._shared.log_softmax`, the one home)."""
    return log_softmax(logits)


def _by_rows(logits, per_block):
    """``per_block`` (a block of rows -> one number per row) over validated logits, in row blocks.

    Every baseline is a function of its row alone: in blocks of
    :func:`rejectopt.scores._shared.block_rows` rows the result is the same, bit for bit, and the
    softmax temporaries are a few small blocks, not a few copies of the n x K logits.
    """
    result = np.empty(logits.shape[0])
    for rows in row_blocks(logits.shape[0], block_rows(logits.shape[1])):
        result[rows] = per_block(logits[rows])
    return result


def softmax(logits):
    """The network's posterior ``p(y|x)``, the softmax of the logits (rows sum to 1).

    Parameters
    ----------
    logits : array-like of shape (n, K)
        Pre-softmax outputs.

    Returns
    -------
    ndarray of shape (n, K)

    Examples
    --------
    >>> softmax([[0.0, np.log(3.0)]]).round(12).tolist()
    [[0.25, 0.75]]
    """
    logits = _checked(logits, "softmax")
    proba = np.empty_like(logits)
    for rows in row_blocks(logits.shape[0], block_rows(logits.shape[1])):
        proba[rows] = np.exp(_log_softmax(logits[rows]))
    return proba


def predictions(logits):
    """The network's predicted class ``argmax_y f_y(x)`` (the first largest logit at a tie).

    Parameters
    ----------
    logits : array-like of shape (n, K)
        The network's outputs, one row per input.

    Returns
    -------
    ndarray of int64, shape (n,)

    Examples
    --------
    >>> predictions([[0.0, 2.0, 2.0], [1.0, 0.0, 0.0]]).tolist()
    [1, 0]
    """
    return _checked(logits, "predictions").argmax(axis=1).astype(np.int64)
