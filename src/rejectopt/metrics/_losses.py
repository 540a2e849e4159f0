"""Per-example losses ``l(y, h(x))`` and the validation of ``(loss, uncertainty)`` pairs.

The one home of the loss for the pipeline, the CLI and the estimator (Section 5.2 of [1]).

[1] is listed in the references of :mod:`rejectopt.metrics`.
"""

import collections.abc

import numpy as np

#: The per-example losses by name: ``zero_one`` = ``100 [y != y']`` (the paper's 0/100 loss, so
#: risks read in percent, Section 5.2) and ``mae`` = ``|y - y'|`` (ordinal labels, Table 4).
LOSSES = ("zero_one", "mae")

#: The loss of each task of the benchmark (Section 5.2): classification 0/100, ordinal MAE.
TASK_LOSS = {"classification": "zero_one", "ordinal": "mae"}


def per_example_loss(name, y_true, y_pred):
    """The loss ``name`` (``"zero_one"`` or ``"mae"``) of each prediction, as float64.

    ``zero_one`` compares labels of any type; ``mae`` needs numeric labels.

    Parameters
    ----------
    name : {"zero_one", "mae"}
        The loss: ``100 [y != y']`` (risks read in percent) or ``|y - y'|``.
    y_true : array-like of shape (n,)
        True labels.
    y_pred : array-like of shape (n,)
        Predicted labels, of the same shape as ``y_true``.

    Returns
    -------
    ndarray of float64, shape (n,)
        The loss of each prediction.

    Raises
    ------
    ValueError
        An unknown loss name, or labels of different lengths.

    Examples
    --------
    >>> per_example_loss("zero_one", [0, 1, 2], [0, 2, 2]).tolist()
    [0.0, 100.0, 0.0]
    >>> per_example_loss("mae", [0, 1, 3], [0, 2, 1]).tolist()
    [0.0, 1.0, 2.0]
    """
    y_true = np.asarray(y_true)
    y_pred = np.asarray(y_pred)
    if name not in LOSSES:
        raise ValueError(f"unknown loss {name!r}: expected one of {', '.join(map(repr, LOSSES))}")
    if y_true.shape != y_pred.shape:
        raise ValueError(
            f"labels of shape {y_true.shape} and predictions of shape {y_pred.shape} differ"
        )
    if name == "zero_one":
        return 100.0 * (y_true != y_pred)
    return np.abs(y_true - y_pred).astype(float)


def task_loss(task, y_true, y_pred):
    """Loss of each prediction for a benchmark ``task`` (:data:`TASK_LOSS`): 0/100 or absolute error.

    Parameters
    ----------
    task : {"classification", "ordinal"}
        The benchmark task; its loss is ``TASK_LOSS[task]`` (Section 5.2 of [1]).
    y_true, y_pred : array-like of shape (n,)
        True and predicted labels, as in :func:`per_example_loss`.

    Returns
    -------
    ndarray of float64, shape (n,)
        The loss of each prediction, as :func:`per_example_loss` computes it.

    Raises
    ------
    ValueError
        An unknown task, or labels of different lengths.

    Examples
    --------
    >>> task_loss("classification", ["a", "b"], ["a", "a"]).tolist()
    [0.0, 100.0]
    >>> task_loss("ordinal", [0, 1, 3], [0, 2, 1]).tolist()
    [0.0, 1.0, 2.0]
    """
    if task not in TASK_LOSS:
        raise ValueError(f"unknown task {task!r}: expected 'classification' or 'ordinal'")
    return per_example_loss(TASK_LOSS[task], y_true, y_pred)


#: Largest loss magnitude whose sums (and sums of squares, scaled) stay finite: ``max(loss) * n`` below it.
_LOSS_SUM_LIMIT = np.finfo(np.float64).max / 16


def _as_array(values, name):
    """``np.asarray(values)`` with the errors a newcomer meets named: generators, numbers beyond float64."""
    if isinstance(values, (str, bytes, collections.abc.Iterator)):
        raise TypeError(
            f"{name} must be an array-like of numbers (list, tuple, numpy or pandas array), got a "
            f"{type(values).__name__}; pass list({name}) or np.fromiter({name}, float)"
        )
    try:
        return np.asarray(values)
    except OverflowError:
        raise ValueError(
            f"{name} holds an integer too large for any numpy dtype (beyond 2**64); pass "
            "floats or rescale the values"
        ) from None


def _to_float(values, name):
    """Cast to float64, naming the argument when a value overflows (|x| > 1.8e308) or is not a number."""
    try:
        with np.errstate(over="raise", invalid="ignore"):
            return values.astype(np.float64)
    except (OverflowError, FloatingPointError):
        raise ValueError(
            f"{name} holds a value beyond the float64 range (|x| > 1.8e308); rescale it (the "
            "metrics depend on the order of the uncertainties only)"
        ) from None
    except (TypeError, ValueError) as error:
        raise ValueError(f"{name} must hold numbers only: {error}") from None


def _as_loss(loss):
    """Validate a 1-D array of finite non-negative losses; return it as float64."""
    loss = _to_float(_as_array(loss, "loss"), "loss")
    if loss.ndim != 1:
        raise ValueError(f"loss must be 1-D, got shape {loss.shape}")
    if loss.size == 0:
        raise ValueError("loss must contain at least one example, got shape (0,)")
    if not np.all(np.isfinite(loss)):
        raise ValueError(
            f"loss contains {np.count_nonzero(~np.isfinite(loss))} NaN or infinite value(s)"
        )
    if np.any(loss < 0):
        raise ValueError(f"loss must be non-negative, got minimum {loss.min()!r}")
    if loss.max() > _LOSS_SUM_LIMIT / loss.size:
        raise ValueError(
            f"loss values up to {loss.max():.3g} over {loss.size} rows overflow float64 sums "
            "(the cumulative losses of the risk-coverage curve); rescale the losses, e.g. divide "
            "by their maximum"
        )
    return loss


def _as_uncertainty(uncertainty, exact_order=True):
    """Uncertainties as float64 that order and tie exactly as the input.

    Integers beyond 2**53 (int64 / uint64, or Python ints) are not all representable in
    float64: distinct scores would collapse into ties. Every risk-coverage metric depends on
    the scores' order only, so with ``exact_order`` such input is replaced by its dense ranks
    (exact integer sort); without it (a threshold is compared with the values) it is refused.
    """
    raw = _as_array(uncertainty, "uncertainty")
    if (
        raw.dtype == object
        and raw.size
        and all(isinstance(v, (int, np.integer)) for v in raw.ravel())
    ):
        big = max(abs(int(v)) for v in raw.ravel()) > 2**53
        if big and exact_order and raw.ndim == 1:
            _, ranks = np.unique(np.array([int(v) for v in raw], dtype=object), return_inverse=True)
            return ranks.astype(np.float64)
    if raw.dtype.kind in "iu" and raw.size and raw.ndim == 1:
        if int(np.max(raw)) > 2**53 or int(np.min(raw)) < -(2**53):
            if not exact_order:
                raise ValueError(
                    "uncertainty holds integers beyond 2**53, which float64 cannot tell apart; "
                    "pass their ranks (scipy.stats.rankdata) together with a rank threshold"
                )
            _, ranks = np.unique(
                raw, return_inverse=True
            )  # exact integer comparison, no float cast
            return ranks.astype(np.float64)
    return _to_float(raw, "uncertainty")


def _as_loss_and_uncertainty(loss, uncertainty, exact_order=True):
    """Validate a pair (loss, uncertainty) of equally long 1-D finite arrays (:func:`_as_uncertainty`)."""
    loss = _as_loss(loss)
    uncertainty = _as_uncertainty(uncertainty, exact_order)
    if uncertainty.ndim != 1:
        raise ValueError(f"uncertainty must be 1-D, got shape {uncertainty.shape}")
    if uncertainty.shape != loss.shape:
        raise ValueError(
            f"loss and uncertainty must have the same length, got shapes {loss.shape} and {uncertainty.shape}"
        )
    if not np.all(np.isfinite(uncertainty)):
        raise ValueError(
            f"uncertainty contains {np.count_nonzero(~np.isfinite(uncertainty))} NaN or infinite value(s)"
        )
    return loss, uncertainty
