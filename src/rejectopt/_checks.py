"""Internal: the small checks and helpers that several layers share, each written once.

:func:`check_open_unit` and :func:`check_1d` are the one (0, 1) and the one 1-D check;
:func:`as_loss_and_uncertainty` the one check of a (loss, uncertainty) pair (the metrics, the
selection functions, the OOD metrics); the scalar parameters are checked against their owners'
tables by :mod:`rejectopt._params`, which imports this module (never the other way round).
:func:`check_confidence` reads a level ``1 - delta`` (certified targets, bands, paired tests,
bootstrap intervals); :func:`check_ratios` a split's five fractions (the splits, the settings,
custom datasets); :func:`derive_seed` gives every named cell of a run its own seed (the splits,
the experiments, the benchmarks); :func:`clopper_pearson` is the exact binomial interval (the
risk-coverage bands, the guarantees' violation rates). Below every other module but
:mod:`rejectopt.exceptions`; it imports no module of the package.
"""

from __future__ import annotations

import collections.abc
import functools
import numbers
import warnings
import zlib
from collections.abc import Callable
from typing import Any, TypeVar

import lazy_loader as _lazy
import numpy as np

#: scipy.stats, imported at its first use (heavy to import: ``benchmarks/import_costs_records.csv``;
#: only the Clopper-Pearson interval needs it).
_sps = _lazy.load("scipy.stats", suppress_warning=True)

__all__ = [
    "CONFIDENCE_MIN",
    "CONFIDENCE_RANGE",
    "SPLIT_PARTS",
    "as_loss",
    "as_loss_and_uncertainty",
    "as_ood_mask",
    "as_uncertainty",
    "check_1d",
    "check_confidence",
    "check_open_unit",
    "check_ratios",
    "clopper_pearson",
    "derive_seed",
    "renamed_argument",
]

_F = TypeVar("_F", bound=Callable[..., Any])

#: The five parts of a split (Section 5.2), in the order in which ratio vectors list them.
SPLIT_PARTS = ("trn1", "val1", "trn2", "val2", "tst")


def check_open_unit(
    value: Any, name: str, *, hint: str = "", error: type[Exception] = ValueError
) -> float:
    """``value`` as a float strictly inside (0, 1), or ``error`` naming ``name``: the one (0, 1) check.

    Levels, fractions and priors are open-interval parameters: 0 or 1 would make a bound vacuous or
    a split empty. ``hint`` follows the interval in the message (what the number means); ``error``
    lets a shell raise its own error class with the same words.

    >>> check_open_unit(0.25, "fraction")
    0.25
    >>> check_open_unit(1.0, "fraction", hint=" (a share of the rows)")
    Traceback (most recent call last):
    ValueError: fraction must lie in (0, 1) (a share of the rows), got 1
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise error(f"{name} must be a real number in (0, 1){hint}, got {value!r}")
    number = float(value)
    if not 0.0 < number < 1.0:  # NaN too
        raise error(f"{name} must lie in (0, 1){hint}, got {number:g}")
    return number


def check_1d(
    values: Any, name: str, *, error: Callable[[str], Exception] = ValueError
) -> np.ndarray:
    """``values`` as a 1-D array, or ``error`` naming ``name`` and the shape: the one 1-D check.

    ``error`` is called with the message: an exception class, or a function that builds one
    (an error that records the array's name apart, as :class:`rejectopt.exceptions.NetworkOutputError`).

    >>> check_1d([1, 2], "loss").shape
    (2,)
    >>> check_1d([[1, 2]], "loss")
    Traceback (most recent call last):
    ValueError: loss must be 1-D, got shape (1, 2)
    """
    array = np.asarray(values)
    if array.ndim != 1:
        raise error(f"{name} must be 1-D, got shape {array.shape}")
    return array


#: Largest loss magnitude whose sums (and sums of squares, scaled) stay finite: ``max(loss) * n`` below it.
LOSS_SUM_LIMIT = np.finfo(np.float64).max / 16


def _as_array(values: Any, name: str) -> np.ndarray:
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


def _to_float(values: np.ndarray, name: str) -> np.ndarray:
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


def _check_finite(values: np.ndarray, name: str) -> None:
    """ValueError counting the NaN or infinite entries of ``values`` and naming the first one."""
    bad = ~np.isfinite(values)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"{name} contains {np.count_nonzero(bad)} NaN or infinite value(s) "
            f"(first: {name}[{i}] = {values[i]})"
        )


def as_loss(loss: Any, name: str = "loss", *, ignored: Any = None) -> np.ndarray:
    """``loss`` as a non-empty 1-D float64 array of finite non-negative values, or the error naming it.

    ``ignored`` (a boolean mask of the same length) marks rows whose loss does not count: the
    out-of-distribution rows, which may have no label and so a NaN loss; they are set to 0.

    >>> as_loss([0, 100]).tolist()
    [0.0, 100.0]
    >>> as_loss([0.0, -1.0])
    Traceback (most recent call last):
    ValueError: loss must be non-negative; loss[1] = -1.0
    """
    loss = check_1d(_to_float(_as_array(loss, name), name), name)
    if loss.size == 0:
        raise ValueError(f"{name} must contain at least one example, got shape (0,)")
    if ignored is not None:
        loss = np.where(ignored, 0.0, loss)
    _check_finite(loss, name)
    if (loss < 0).any():
        i = int(np.flatnonzero(loss < 0)[0])
        raise ValueError(f"{name} must be non-negative; {name}[{i}] = {loss[i]}")
    if loss.max() > LOSS_SUM_LIMIT / loss.size:
        raise ValueError(
            f"{name} values up to {loss.max():.3g} over {loss.size} rows overflow float64 sums "
            "(the cumulative losses of the risk-coverage curve); rescale the losses, e.g. divide "
            "by their maximum"
        )
    return loss


def as_uncertainty(
    uncertainty: Any, name: str = "uncertainty", *, exact_order: bool = True
) -> np.ndarray:
    """``uncertainty`` as a 1-D finite float64 array that orders and ties exactly as the input.

    Integers beyond 2**53 (int64 / uint64, or Python ints) are not all representable in
    float64: distinct scores would collapse into ties. Every risk-coverage metric depends on
    the scores' order only, so with ``exact_order`` such input is replaced by its dense ranks
    (exact integer sort); without it (a threshold is compared with the values) it is refused.
    """
    raw = _as_array(uncertainty, name)
    values = _exact_ranks(raw, name, exact_order)
    if values is None:
        values = _to_float(raw, name)
    values = check_1d(values, name)
    _check_finite(values, name)
    return values


def _exact_ranks(raw: np.ndarray, name: str, exact_order: bool) -> np.ndarray | None:
    """Dense ranks of 1-D integers beyond 2**53 (``exact_order``), else None; refused without it."""
    if raw.ndim != 1 or raw.size == 0:
        return None
    if raw.dtype == object and all(isinstance(v, (int, np.integer)) for v in raw):
        if max(abs(int(v)) for v in raw) > 2**53 and exact_order:
            _, ranks = np.unique(np.array([int(v) for v in raw], dtype=object), return_inverse=True)
            return ranks.astype(np.float64)
    if raw.dtype.kind in "iu" and (int(np.max(raw)) > 2**53 or int(np.min(raw)) < -(2**53)):
        if not exact_order:
            raise ValueError(
                f"{name} holds integers beyond 2**53, which float64 cannot tell apart; "
                "pass their ranks (scipy.stats.rankdata) together with a rank threshold"
            )
        _, ranks = np.unique(raw, return_inverse=True)  # exact integer comparison, no float cast
        return ranks.astype(np.float64)
    return None


def as_loss_and_uncertainty(
    loss: Any,
    uncertainty: Any,
    *,
    exact_order: bool = True,
    ignored: Any = None,
    loss_name: str = "loss",
    uncertainty_name: str = "uncertainty",
) -> tuple[np.ndarray, np.ndarray]:
    """A pair (loss, uncertainty) as equally long 1-D finite float64 arrays: the one check of the pair.

    The metrics, the selection functions and the OOD metrics all read this pair; they refuse it
    with the same words. ``loss`` as :func:`as_loss` (``ignored`` rows set to 0), ``uncertainty``
    as :func:`as_uncertainty` (``exact_order``: False where a threshold is compared with it).

    >>> loss, u = as_loss_and_uncertainty([0, 100], [0.2, 0.7])
    >>> loss.tolist(), u.tolist()
    ([0.0, 100.0], [0.2, 0.7])
    >>> as_loss_and_uncertainty([0, 100], [0.2])
    Traceback (most recent call last):
    ValueError: length mismatch: loss and uncertainty must have the same length, got shapes (2,) and (1,)
    """
    loss = as_loss(loss, loss_name, ignored=ignored)
    uncertainty = as_uncertainty(uncertainty, uncertainty_name, exact_order=exact_order)
    if uncertainty.shape != loss.shape:
        raise ValueError(
            f"length mismatch: {loss_name} and {uncertainty_name} must have the same length, "
            f"got shapes {loss.shape} and {uncertainty.shape}"
        )
    return loss, uncertainty


#: Smallest level the certified computations represent faithfully. A level enters them as
#: ``delta = 1 - confidence``, rounded to the float grid just below 1 (spacing 2**-53), so the level
#: they use, ``1 - delta``, is off by up to 2**-54 (5.6e-17): from 1e-10 on that is below 1e-6 of
#: the level, under the 6 significant digits a statement prints, and the binomial and beta tails
#: evaluated near 1 (absolute error about 1e-16) still order against ``delta`` (at 1e-16 a
#: coverage certificate's bound falls below its own target; at 1e-300 ``delta`` is exactly 1 and
#: the normal quantile of ``1 - delta`` is undefined). The upper end is 1, open: every float below
#: 1 leaves ``delta >= 2**-53``, where ``log(delta)``, the normal quantile of ``1 - delta``, the
#: Clopper-Pearson, Hoeffding-Bentkus and binomial tails and a ``model.json`` round trip (the
#: level is written as its shortest repr, read back exactly) are all finite and exact.
CONFIDENCE_MIN = 1e-10

#: The usable range of a confidence, as the messages name it.
CONFIDENCE_RANGE = f"[{CONFIDENCE_MIN:g}, 1)"


def check_confidence(confidence: Any, name: str = "confidence") -> float:
    """``confidence`` (a level ``1 - delta``) as a float in [:data:`CONFIDENCE_MIN`, 1), or ValueError.

    The one check of a level: the parameter tables' confidence entries
    (:data:`rejectopt._params.CONFIDENCE`) accept what it accepts and word a refusal as it does.

    Parameters
    ----------
    confidence : object
        The level as given.
    name : str, default "confidence"
        The parameter's name in the message.

    Returns
    -------
    float
        The level.

    Raises
    ------
    ValueError
        Not a real number (text such as ``"0.95"``, a bool, None), NaN, outside (0, 1) (worded
        as :func:`check_open_unit` words it), or below :data:`CONFIDENCE_MIN` (naming the range).

    Examples
    --------
    >>> check_confidence(0.95)
    0.95
    >>> check_confidence(1e-300)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ValueError: confidence must lie in [1e-10, 1) (it is 1 - delta, e.g. 0.95), got 1e-300: ...
    """
    hint = " (it is 1 - delta, e.g. 0.95)"
    if isinstance(confidence, (bool, np.bool_)) or not isinstance(confidence, numbers.Real):
        raise ValueError(
            f"{name} must be a real number in (0, 1){hint}, got "
            f"{confidence!r}; convert text with float() first"
        )
    number = check_open_unit(confidence, name, hint=hint)
    if number < CONFIDENCE_MIN:
        raise ValueError(
            f"{name} must lie in {CONFIDENCE_RANGE}{hint}, got {number:g}: below {CONFIDENCE_MIN:g}, "
            "delta = 1 - confidence rounds the level away"
        )
    return number


def as_ood_mask(is_ood: Any) -> np.ndarray:
    """``is_ood`` as a 1-D boolean mask: booleans, or numbers that are exactly 0 or 1.

    Any other value (0.5, 2, NaN, a text) is refused naming its index, because reading it as
    ``bool`` would silently count a soft label or a typo as an OOD row in every rate and certificate.

    Parameters
    ----------
    is_ood : array_like of shape (n,)
        True (or 1) for the out-of-distribution rows.

    Returns
    -------
    numpy.ndarray of bool, shape (n,)

    Raises
    ------
    ValueError
        ``is_ood`` is not 1-D, is empty, or holds a value other than a boolean, 0 or 1.
    """
    arr = check_1d(is_ood, "is_ood")
    if arr.size == 0:
        raise ValueError("is_ood is empty; need at least one ID and one OOD sample")
    if arr.dtype == bool:
        return arr
    try:
        num = arr.astype(float)
    except (TypeError, ValueError):
        raise ValueError("is_ood must be boolean (or 0/1)") from None
    bad = ~np.isin(num, (0.0, 1.0))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"is_ood must be boolean (or 0/1); is_ood[{i}] = {arr[i].item()!r}")
    return num.astype(bool)


def check_ratios(ratios: Any) -> np.ndarray:
    """Validate a ratio vector for (Trn1, Val1, Trn2, Val2, Tst).

    Parameters
    ----------
    ratios : sequence of 5 floats
        The fraction of the examples in each part of :data:`SPLIT_PARTS`.

    Returns
    -------
    numpy.ndarray
        As floats.

    Raises
    ------
    ValueError
        Not five positive entries summing to 1; the values are named.
    """
    ratios = np.asarray(ratios, dtype=float)
    if ratios.shape != (len(SPLIT_PARTS),):
        raise ValueError(
            f"ratios must have {len(SPLIT_PARTS)} entries ({'/'.join(SPLIT_PARTS)}), got {ratios.tolist()}"
        )
    if np.any(ratios <= 0) or not np.isclose(ratios.sum(), 1.0, atol=1e-6):
        raise ValueError(f"ratios must be positive and sum to 1, got {ratios.tolist()}")
    return ratios


def derive_seed(master_seed: int, *names: str | int) -> int:
    """A 32-bit seed from a master seed and cell names, alike on every machine (CRC32, not salted ``hash``).

    Parameters
    ----------
    master_seed : int
        The run's seed (config key ``seed``).
    *names : str or int
        What the seed is for, e.g. the dataset, ``"split"`` and the split number.

    Returns
    -------
    int
        A seed in ``[0, 2**32)``.
    """
    key = [int(master_seed)] + [zlib.crc32(str(name).encode()) for name in names]
    return int(np.random.SeedSequence(key).generate_state(1)[0])


def clopper_pearson(errors: Any, trials: Any, alpha: Any) -> tuple[np.ndarray, np.ndarray]:
    """Clopper-Pearson interval of ``errors / trials`` at level ``1 - alpha``, elementwise.

    The exact binomial interval (Clopper & Pearson 1934), through the beta quantiles
    ``B(alpha/2; x, k - x + 1)`` and ``B(1 - alpha/2; x + 1, k - x)``; 0 and 1 at the ends.
    Fractional counts (an expected count under randomised acceptance) use the same formula.

    Parameters
    ----------
    errors, trials : array_like
        Errors (may be fractional) and trials, broadcast together.
    alpha : array_like
        1 - the level, broadcast to them.

    Returns
    -------
    tuple of numpy.ndarray
        The lower and upper ends.
    """
    x, k = np.broadcast_arrays(np.asarray(errors, dtype=float), np.asarray(trials, dtype=float))
    alpha = np.broadcast_to(np.asarray(alpha, dtype=float), x.shape)
    with np.errstate(invalid="ignore", divide="ignore"):
        low = np.where(x > 0, _sps.beta.ppf(alpha / 2, np.maximum(x, 1e-300), k - x + 1), 0.0)
        high = np.where(x < k, _sps.beta.isf(alpha / 2, x + 1, np.maximum(k - x, 1e-300)), 1.0)
    return np.nan_to_num(low, nan=0.0), np.nan_to_num(high, nan=1.0)


def renamed_argument(old: str, new: str, *, since: str) -> Callable[[_F], _F]:
    """Accept the keyword ``old`` for ``new`` for one more release, with one FutureWarning.

    A renamed argument breaks every caller that passes it by keyword; the old spelling keeps working
    for one release and warns once per function and process (not on every call of a loop), so that
    a caller sees what to change without a flood. Positional calls are unaffected.

    >>> @renamed_argument("s", "uncertainty", since="0.6.0")
    ... def lowest(uncertainty):
    ...     return min(uncertainty)
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     lowest(s=[3, 1]), lowest(s=[2])
    (1, 2)
    >>> print(*[str(w.message) for w in caught])
    lowest(s=...) is renamed lowest(uncertainty=...) in 0.6.0; the old name is removed in the next release
    """

    def decorate(function: _F) -> _F:
        warned = False

        @functools.wraps(function)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            nonlocal warned
            if old in kwargs:
                if new in kwargs:
                    raise TypeError(
                        f"{function.__name__}() got both {old}= and {new}=; pass {new}= alone"
                    )
                kwargs[new] = kwargs.pop(old)
                if not warned:
                    warned = True
                    warnings.warn(
                        f"{function.__name__}({old}=...) is renamed {function.__name__}({new}=...) "
                        f"in {since}; the old name is removed in the next release",
                        FutureWarning,
                        stacklevel=2,
                    )
            return function(*args, **kwargs)

        return wrapper  # type: ignore[return-value]

    return decorate
