"""Internal: the confidence baselines of a network's logits, and the post-hoc scores tuned on held-out rows."""

from __future__ import annotations

import numpy as np
from scipy.optimize import minimize_scalar

from ..metrics import aurc
from ..scores import mcp, svm_margin
from ..scores._shared import block_rows, pnorm_max, pnorm_unit, row_blocks
from . import _parameters
from ._outputs import _by_rows, _checked, _log_softmax, check_network_outputs


# --------------------------------------------------------------------------------------------
# Baselines (uncertainties: larger = more uncertain)
# --------------------------------------------------------------------------------------------
def msp(logits):
    """Maximum softmax probability, as an uncertainty: ``1 - max_y p(y|x)`` (:func:`rejectopt.scores.mcp`).

    Parameters
    ----------
    logits : array-like of shape (n, K)
        MSP reads their softmax.

    Returns
    -------
    ndarray of shape (n,)
        In [0, 1 - 1/K].

    Examples
    --------
    >>> msp([[0.0, np.log(3.0)]]).round(12).tolist()  # 1 - 3/4
    [0.25]
    """
    return _by_rows(_checked(logits, "msp"), lambda block: mcp(np.exp(_log_softmax(block))))


def entropy(logits):
    """Entropy of the softmax posterior in nats, ``-sum_y p(y|x) log p(y|x)``.

    Parameters
    ----------
    logits : array-like of shape (n, K)
        Pre-softmax outputs of n rows.

    Returns
    -------
    ndarray of shape (n,)
        Nats, in [0, log K].

    Examples
    --------
    >>> entropy([[0.0, 0.0]]).round(12).tolist()  # log 2
    [0.69314718056]
    """
    return _by_rows(_checked(logits, "entropy"), _entropy)


def _entropy(logits):
    log_p = _log_softmax(logits)
    finite = np.where(
        log_p > -np.inf, log_p, 0.0
    )  # 0 log 0 = 0: a probability that underflows adds nothing
    return -(np.exp(log_p) * finite).sum(axis=1)


def energy(logits, temperature=1.0):
    """Free energy ``E(x) = -T log sum_y exp(f_y(x) / T)`` (eq. 1 of Liu et al. 2020).

    A large energy means a low density under the network: the uncertainty is ``E`` itself.

    Parameters
    ----------
    logits : array-like of shape (n, K)
    temperature : float, default=1.0
        ``T > 0``, a real number.

    Returns
    -------
    ndarray of shape (n,)

    Raises
    ------
    TypeError
        A temperature that is not a real number (e.g. the text ``"1"``).
    ValueError
        A temperature that is not finite and > 0, or one with which ``f / T`` or ``E`` leaves
        the float range (``T = 1e-310``, or ``f = 1e308`` with ``T = 0.5``): the message names the
        temperature and the row.

    Examples
    --------
    >>> energy([[0.0, 0.0]]).round(12).tolist()  # -log 2
    [-0.69314718056]
    """
    temperature = _temperature(temperature, "energy")
    logits = _checked(logits, "energy")
    result, overflow = np.empty(logits.shape[0]), []
    for rows in row_blocks(
        logits.shape[0], block_rows(logits.shape[1])
    ):  # rows in blocks: no n x K temporaries
        with np.errstate(over="ignore", under="ignore"):
            scaled = logits[rows] / temperature
            bad_rows = np.flatnonzero(~np.isfinite(scaled).all(axis=1))
            overflow.append(rows.start + bad_rows)
            if not bad_rows.size and not any(b.size for b in overflow):
                top = scaled.max(axis=1)
                result[rows] = -temperature * (
                    top + np.log(np.exp(scaled - top[:, None]).sum(axis=1))
                )
    bad = np.concatenate(overflow)
    if bad.size:
        i = int(bad[0])
        raise ValueError(
            f"energy: logits / temperature overflows at index {i} (largest |logit| "
            f"{np.abs(logits[i]).max():g}, temperature {temperature!r}; {bad.size} row(s) in all): "
            "use a larger temperature, or rescale the logits"
        )
    bad = np.flatnonzero(~np.isfinite(result))
    if bad.size:
        i = int(bad[0])
        raise ValueError(
            f"energy: -T log sum exp(f / T) overflows at index {i} with temperature {temperature!r} "
            f"({bad.size} row(s) in all): use a smaller temperature"
        )
    return result


def doctor(logits):
    """DOCTOR's uncertainty ``1 - g(x)``, ``g(x) = sum_y p(y|x)^2`` (Granese et al. 2021, Section 3).

    It orders the rows as ``D_alpha``'s ratio ``(1 - g(x)) / g(x)`` does (see the module docstring).

    Parameters
    ----------
    logits : array-like of shape (n, K)
        DOCTOR reads their squared posteriors.

    Returns
    -------
    ndarray of shape (n,)
        In [0, 1).

    Examples
    --------
    >>> doctor([[0.0, 0.0]]).round(12).tolist()  # 1 - (1/4 + 1/4)
    [0.5]
    """
    return _by_rows(_checked(logits, "doctor"), _doctor)


def _doctor(logits):
    p = np.exp(_log_softmax(logits))
    return 1.0 - (p * p).sum(axis=1)


def max_logit(logits):
    """Negated largest logit, ``-max_y f_y(x)`` (:func:`rejectopt.scores.svm_margin` of the logits).

    Parameters
    ----------
    logits : array-like of shape (n, K)
        Read as they are (no softmax).

    Returns
    -------
    ndarray of shape (n,)

    Examples
    --------
    >>> max_logit([[1.0, 3.0]]).tolist()
    [-3.0]
    """
    return svm_margin(_checked(logits, "max_logit"))


def margin(logits):
    """Negated gap between the two largest posteriors, ``-(p_(1)(x) - p_(2)(x))``.

    Parameters
    ----------
    logits : array-like of shape (n, K)
        Logits of at least two classes, via their softmax.

    Returns
    -------
    ndarray of shape (n,)
        In (-1, 0].

    Examples
    --------
    >>> margin([[0.0, 0.0, -50.0]]).round(12).tolist()
    [-0.0]
    """
    return _by_rows(_checked(logits, "margin"), _margin)


def _margin(logits):
    p = np.sort(np.exp(_log_softmax(logits)), axis=1)
    return -(p[:, -1] - p[:, -2])


# --------------------------------------------------------------------------------------------
# Post-hoc scores tuned on held-out rows (Cattelan & Silva 2024; temperature scaling)
# --------------------------------------------------------------------------------------------
#: The p grid of the p-norm scores: 0 (no normalisation) .. 8, as Cattelan & Silva (2024).
P_GRID = tuple(range(9))
#: The temperature grid of MSP-pNorm, relative to the mean p-norm of the tuning rows' centred logits
#: (Cattelan & Silva tune 0.01 .. 1.99 in steps of 0.01; a step of 0.05 costs a fifth for K = 1,000).
TEMPERATURE_GRID = tuple(np.round(np.arange(0.05, 2.0001, 0.05), 2))


def _temperature(temperature, function):
    """``temperature`` as a float, refused naming ``function`` (:mod:`._parameters`)."""
    return float(_parameters.check(function, temperature=temperature)[0])


def _check_p(p, function):
    """``p`` as a float, refused naming ``function`` (:mod:`._parameters`)."""
    return float(_parameters.check(function, p=p)[0])


def _max_softmax(values, temperature, function):
    """``max_y softmax(values / T)`` per row, stably; refuses a temperature that overflows ``values / T``."""
    with np.errstate(over="ignore", under="ignore"):
        scaled = values / temperature
    bad = np.flatnonzero(~np.isfinite(scaled).all(axis=1))
    if bad.size:
        raise ValueError(
            f"{function}: logits / temperature overflows at index {int(bad[0])} with temperature "
            f"{temperature!r} ({bad.size} row(s) in all): use a larger temperature"
        )
    with np.errstate(over="ignore"):
        shifted = scaled - scaled.max(axis=1, keepdims=True)
    return 1.0 / np.exp(shifted).sum(axis=1)


def maxlogit_pnorm(logits, p=2):
    """MaxLogit-pNorm as an uncertainty: ``-max_y z_y / ||z||_p``, ``z = f - mean_y f_y`` (Cattelan & Silva 2024).

    The centred logits are normalised by their p-norm before the largest is read: it removes the
    part of the logits' scale that says nothing about an error. ``p`` is tuned on held-out rows
    by :func:`fit_pnorm`.

    Parameters
    ----------
    logits : array-like of shape (n, K)
    p : float, default=2
        0 (no normalisation: the largest centred logit) or ``p >= 1``; ``inf``: the max norm.

    Returns
    -------
    ndarray of shape (n,)
        In [-1, 0] for ``p >= 1``.

    Examples
    --------
    >>> maxlogit_pnorm([[3.0, 0.0, 0.0]], p=1).round(12).tolist()  # z = (2, -1, -1), ||z||_1 = 4
    [-0.5]
    """
    p = _check_p(p, "maxlogit_pnorm")
    return -pnorm_max(_checked(logits, "maxlogit_pnorm"), p)


def msp_pnorm(logits, p=2, temperature=1.0):
    """MSP-pNorm as an uncertainty: ``1 - max_y softmax(z / (T ||z||_p))_y`` (Cattelan & Silva 2024).

    ``z`` are the centred logits; ``p = 0`` leaves them unnormalised, so ``msp_pnorm(f, 0, T)``
    is temperature-scaled MSP, ``msp(f / T)`` (:func:`fit_temperature` fits T by the NLL).

    Parameters
    ----------
    logits : array-like of shape (n, K)
    p : float, default=2
        As :func:`maxlogit_pnorm`.
    temperature : float, default=1.0
        ``T > 0`` applied to the normalised logits.

    Returns
    -------
    ndarray of shape (n,)
        In [0, 1 - 1/K].

    Examples
    --------
    >>> msp_pnorm([[0.0, np.log(3.0)]], p=0).round(12).tolist()  # MSP
    [0.25]
    >>> msp_pnorm([[0.0, np.log(3.0)]], p=0, temperature=2.0).round(12).tolist()  # 1 - sqrt(3) / (1 + sqrt(3))
    [0.366025403784]
    """
    p = _check_p(p, "msp_pnorm")
    temperature = _temperature(temperature, "msp_pnorm")
    unit, _ = pnorm_unit(_checked(logits, "msp_pnorm"), p)
    return 1.0 - _max_softmax(unit, temperature, "msp_pnorm")


def _zero_one_loss(logits, labels, function):
    logits, labels, _ = check_network_outputs(logits, labels)
    if labels is None:
        raise ValueError(f"{function}: labels are needed (the loss of each prediction)")
    return logits, 100.0 * (labels != logits.argmax(axis=1))


def fit_pnorm(
    logits, labels, method="maxlogit", *, p_grid=P_GRID, temperature_grid=TEMPERATURE_GRID
):
    """The p (and for MSP-pNorm the temperature) of least AuRC on held-out rows (Cattelan & Silva 2024).

    A grid search, as the paper's: AuRC (eq. 27 of Franc et al. 2023, 0/100 loss of the network's
    prediction) of :func:`maxlogit_pnorm` for each p, or of :func:`msp_pnorm` for each p and
    temperature ``t / mean_i ||z_i||_p`` (``t`` in ``temperature_grid``: the rows' own scale).
    Ties go to the first in grid order. Tune on rows that the evaluation does not use.

    Parameters
    ----------
    logits : array-like of shape (n, K)
        The tuning rows' logits.
    labels : array-like of shape (n,)
        Their true classes.
    method : {"maxlogit", "msp"}, default="maxlogit"
    p_grid : sequence of float, default=(0, 1, ..., 8)
    temperature_grid : sequence of float, default=(0.05, 0.10, ..., 2.0)
        Relative temperatures of ``"msp"``.

    Returns
    -------
    dict
        ``p``, ``temperature`` (absolute; None for ``"maxlogit"``) and ``aurc`` (percent) on these rows.

    Examples
    --------
    >>> from rejectopt.logits import softmax
    >>> rng = np.random.default_rng(0)
    >>> logits = rng.normal(size=(400, 10)) * rng.uniform(0.5, 4.0, size=(400, 1))
    >>> labels = np.array([rng.choice(10, p=q) for q in softmax(logits)])
    >>> fit_pnorm(logits, labels)["p"] in P_GRID
    True
    """
    logits, loss = _zero_one_loss(logits, labels, "fit_pnorm")
    _parameters.check("fit_pnorm", method=method)
    p_grid = [_check_p(p, "fit_pnorm") for p in np.atleast_1d(p_grid).tolist()]
    relative = [_temperature(t, "fit_pnorm") for t in np.atleast_1d(temperature_grid).tolist()]
    if not p_grid or (method == "msp" and not relative):
        raise ValueError("fit_pnorm: p_grid and temperature_grid need at least one value each")
    best = None
    for p in p_grid:
        unit, norm = pnorm_unit(logits, p)
        if method == "maxlogit":
            candidates = [(None, -unit.max(axis=1))]
        else:
            mean_norm = float(norm.mean()) if p else 1.0
            candidates = [
                (t / mean_norm, 1.0 - _max_softmax(unit, t / mean_norm, "fit_pnorm"))
                for t in relative
            ]
        for temperature, uncertainty in candidates:
            value = aurc(loss, uncertainty)
            if best is None or value < best["aurc"]:
                best = {"p": p, "temperature": temperature, "aurc": float(value)}
    return best


def fit_temperature(logits, labels, *, bounds=(1e-3, 1e3)):
    """Temperature scaling: the T minimising the negative log-likelihood ``-mean_i log softmax(f_i / T)_{y_i}``.

    Guo et al. (2017). The NLL is convex in ``1 / T``; it is minimised over ``log T`` in
    ``bounds`` (bounded Brent). Fit it on held-out rows, then ``msp_pnorm(f, 0, T)`` is the
    temperature-scaled MSP. A minimiser at a bound (e.g. logits that separate the labels
    perfectly, whose NLL falls as T -> 0) is refused rather than returned.

    Parameters
    ----------
    logits : array-like of shape (n, K)
    labels : array-like of shape (n,)
    bounds : (float, float), default=(1e-3, 1e3)

    Returns
    -------
    float

    Examples
    --------
    >>> from rejectopt.logits import softmax
    >>> rng = np.random.default_rng(0)
    >>> logits = rng.normal(size=(5000, 5)) * 3
    >>> labels = np.array([rng.choice(5, p=q) for q in softmax(logits / 2.0)])  # drawn at T = 2
    >>> bool(abs(fit_temperature(logits, labels) - 2.0) < 0.2)
    True
    """
    logits, labels, _ = check_network_outputs(logits, labels)
    if labels is None:
        raise ValueError("fit_temperature: labels are needed")
    low, high = (_temperature(b, "fit_temperature") for b in bounds)
    if not low < high:
        raise ValueError(
            f"fit_temperature: bounds must be (low, high) with low < high, got {bounds!r}"
        )
    true_logit = logits[np.arange(len(labels)), labels]

    def nll(log_t):
        t = np.exp(log_t)
        scaled = logits / t
        top = scaled.max(axis=1)
        return float(
            np.mean(top + np.log(np.exp(scaled - top[:, None]).sum(axis=1)) - true_logit / t)
        )

    result = minimize_scalar(
        nll, bounds=(np.log(low), np.log(high)), method="bounded", options={"xatol": 1e-10}
    )
    t = float(np.exp(result.x))
    at_bounds = {b: nll(np.log(b)) for b in (low, high)}
    edge = min(at_bounds, key=at_bounds.get)
    if at_bounds[edge] <= result.fun + 1e-12 * max(
        1.0, abs(result.fun)
    ):  # a bound is as good: no interior minimum
        raise ValueError(
            f"fit_temperature: the NLL is least at the bound T = {edge:.4g} of {bounds!r}: the logits "
            "separate these labels (almost) perfectly, or the rows are too few; no temperature fits"
        )
    return t


#: The post-hoc scores of :func:`fit_logits`, tuned on its training rows: name -> display label.
POST_HOC = {
    "maxlogit_pnorm": "MaxLogit-pNorm",
    "msp_pnorm": "MSP-pNorm",
    "msp_ts": "MSP, temperature-scaled",
}


def _post_hoc(name, logits, labels, tune):
    """Uncertainty of every row and the label naming its tuned parameters, tuned on rows ``tune``."""
    if name == "maxlogit_pnorm":
        best = fit_pnorm(logits[tune], labels[tune], "maxlogit")
        return maxlogit_pnorm(logits, best["p"]), f"{POST_HOC[name]} (p={best['p']:g})"
    if name == "msp_pnorm":
        best = fit_pnorm(logits[tune], labels[tune], "msp")
        return (
            msp_pnorm(logits, best["p"], best["temperature"]),
            f"{POST_HOC[name]} (p={best['p']:g}, T={best['temperature']:.3g})",
        )
    t = fit_temperature(logits[tune], labels[tune])
    return msp_pnorm(logits, 0, t), f"{POST_HOC[name]} (T={t:.3g})"


#: The baselines by name, each ``function(logits) -> uncertainty``; their display labels.
BASELINES = {
    "mcp": (msp, "MSP / MCP"),
    "entropy": (entropy, "Entropy"),
    "energy": (energy, "Energy"),
    "doctor": (doctor, "DOCTOR"),
    "max_logit": (max_logit, "Max-logit"),
    "margin": (margin, "Margin"),
}


def baseline_uncertainties(logits, names=None):
    """Every baseline's uncertainty of each row: ``{name: ndarray of shape (n,)}``.

    Parameters
    ----------
    logits : array-like of shape (n, K)
    names : sequence of str or None, default=None
        Keys of :data:`BASELINES`; None = all, in their order.

    Returns
    -------
    dict of str -> ndarray of shape (n,)
        In the order of ``names``.

    Examples
    --------
    >>> sorted(baseline_uncertainties([[0.0, 1.0]], ["energy", "mcp"]))
    ['energy', 'mcp']
    """
    logits = check_network_outputs(logits)[0]
    names = list(BASELINES) if names is None else list(names)
    unknown = [n for n in names if n not in BASELINES]
    if unknown:
        raise ValueError(f"unknown baseline(s) {unknown}; known: {', '.join(BASELINES)}")
    return {name: BASELINES[name][0](logits) for name in names}
