"""A deep network's outputs as input: baselines from its logits, SELE / REG / TCP on its embeddings.

From a network's exported logits (n x K), optional penultimate-layer embeddings (n x d) and
labels, :func:`fit_logits` computes the usual confidence baselines and learns the paper's scores
(SELE, REG, TCP; one linear score per predicted class, eq. 37 of [1]) on the embeddings, else the
logits, with the paper's fit / validate / calibrate / evaluate row split (Section 5.1).

The network predicts ``argmax_y f_y(x)`` (first largest logit at a tie); its posterior is the
softmax. Every baseline is an *uncertainty* (larger = reject first):

========== ================================================= ======================================
name       uncertainty                                       reference
========== ================================================= ======================================
mcp        ``1 - max_y p(y|x)`` (MSP / MCP)                  Hendrycks & Gimpel 2017 [2]
entropy    ``-sum_y p(y|x) log p(y|x)`` (nats)               predictive entropy
energy     ``-T log sum_y exp(f_y(x) / T)``                  Liu et al. 2020 [3], eq. (1)
doctor     ``1 - sum_y p(y|x)^2`` (DOCTOR's ``1 - g(x)``)    Granese et al. 2021 [4], Section 3
max_logit  ``-max_y f_y(x)``                                 Hendrycks et al. 2022 [5]
margin     ``-(p_(1) - p_(2))``, the two largest posteriors  margin sampling, Scheffer et al. [6]
========== ================================================= ======================================

Post-hoc scores with a parameter tuned on held-out rows: MaxLogit-pNorm and MSP-pNorm
(:func:`maxlogit_pnorm`, :func:`msp_pnorm`, p and T of least AuRC by :func:`fit_pnorm`; Cattelan
& Silva 2024 [7]) and temperature-scaled MSP (:func:`fit_temperature`, T of least NLL; Guo et al.
2017 [8]). For many classes, ``sele_shared`` / ``reg_shared`` learn one weight vector for all
classes on class-agnostic features of the logits (:mod:`rejectopt.scores`).

``mcp`` and ``max_logit`` are :func:`rejectopt.scores.mcp` of the softmax and
:func:`rejectopt.scores.svm_margin` of the logits: one home per formula. DOCTOR's black-box
``D_alpha`` rejects when ``1 - g(x) > gamma g(x)``; ``1 - g(x)`` orders rows as that ratio does
(same AuRC and RC curve) and stays bounded. DOCTOR's temperature and input perturbation are left
out: the route sees outputs, not inputs.

References
----------
.. [1] V. Franc, D. Prusa, V. Voracek. Optimal Strategies for Reject Option Classifiers.
   JMLR 24(11):1-49, 2023.
.. [2] D. Hendrycks, K. Gimpel. A Baseline for Detecting Misclassified and Out-of-Distribution
   Examples in Neural Networks. ICLR 2017.
.. [3] W. Liu, X. Wang, J. Owens, Y. Li. Energy-based Out-of-distribution Detection. NeurIPS 2020.
.. [4] F. Granese, M. Romanelli, D. Gorla, C. Palamidessi, P. Piantanida. DOCTOR: A Simple Method
   for Detecting Misclassification Errors. NeurIPS 2021.
.. [5] D. Hendrycks, S. Basart, M. Mazeika, et al. Scaling Out-of-Distribution Detection for
   Real-World Settings. ICML 2022.
.. [6] T. Scheffer, C. Decomain, S. Wrobel. Active Hidden Markov Models for Information
   Extraction. IDA 2001.
.. [7] L. F. P. Cattelan, D. Silva. How to Fix a Broken Confidence Estimator: Evaluating Post-hoc
   Methods for Selective Classification with Deep Neural Networks. UAI 2024.
.. [8] C. Guo, G. Pleiss, Y. Sun, K. Q. Weinberger. On Calibration of Modern Neural Networks.
   ICML 2017.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.optimize import minimize_scalar

from .exceptions import NetworkOutputError
from .fitting import fit_selective, split_rows
from .metrics import METRICS, aurc, per_example_loss, rc_curve, risk_full
from .model import FEATURE_LIMIT, _out_of_range
from .scores import get_score, mcp, score_names, svm_margin
from .scores._selection import SCORE_C_GRID
from .scores._shared import (
    block_rows,
    first_non_finite,
    log_softmax,
    pnorm_max,
    pnorm_unit,
    row_blocks,
)
from .selective import InfeasibleTargetError, empirical_risk_coverage
from .targets import Target, parse_target

__all__ = [
    "BASELINES",
    "LogitsFit",
    "baseline_uncertainties",
    "check_network_outputs",
    "doctor",
    "energy",
    "entropy",
    "fit_logits",
    "fit_pnorm",
    "fit_temperature",
    "margin",
    "max_logit",
    "maxlogit_pnorm",
    "msp",
    "msp_pnorm",
    "predictions",
    "softmax",
]

#: Where the learned scores read their features: the penultimate-layer embeddings or the logits.
_FEATURE_SOURCES = ("embeddings", "logits")


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
        labels = np.asarray(labels)
        if labels.ndim != 1:
            raise NetworkOutputError("labels", f"must be 1-D, got shape {labels.shape}")
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
    if isinstance(temperature, bool) or not isinstance(temperature, numbers.Real):
        raise TypeError(
            f"energy: temperature must be a real number > 0, got {temperature!r} "
            f"({type(temperature).__name__})"
        )
    temperature = float(temperature)
    if not (np.isfinite(temperature) and temperature > 0):
        raise ValueError(f"energy: temperature must be a finite number > 0, got {temperature!r}")
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
    if isinstance(temperature, bool) or not isinstance(temperature, numbers.Real):
        raise TypeError(
            f"{function}: temperature must be a real number > 0, got {temperature!r} "
            f"({type(temperature).__name__})"
        )
    temperature = float(temperature)
    if not (np.isfinite(temperature) and temperature > 0):
        raise ValueError(
            f"{function}: temperature must be a finite number > 0, got {temperature!r}"
        )
    return temperature


def _check_p(p, function):
    if (
        isinstance(p, bool)
        or not isinstance(p, numbers.Real)
        or not (p == 0 or p >= 1)
        or np.isnan(p)
    ):
        raise ValueError(
            f"{function}: p must be 0 (no normalisation) or a number >= 1 (inf: the max norm), got {p!r}"
        )
    return float(p)


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
    >>> rng = np.random.default_rng(0)
    >>> logits = rng.normal(size=(400, 10)) * rng.uniform(0.5, 4.0, size=(400, 1))
    >>> labels = np.array([rng.choice(10, p=q) for q in softmax(logits)])
    >>> fit_pnorm(logits, labels)["p"] in P_GRID
    True
    """
    logits, loss = _zero_one_loss(logits, labels, "fit_pnorm")
    if method not in ("maxlogit", "msp"):
        raise ValueError(f"fit_pnorm: method must be 'maxlogit' or 'msp', got {method!r}")
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


# --------------------------------------------------------------------------------------------
# The whole route
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class LogitsFit:
    """Result of :func:`fit_logits`.

    Parameters
    ----------
    table : pandas.DataFrame
        One row per method: ``method`` (``sele@logits`` etc. when several feature sources),
        ``label``, ``kind`` (``"baseline"`` / ``"post-hoc"`` / ``"learned"``), ``features`` (empty for a baseline),
        ``C`` (NaN for a baseline), ``aurc`` and the other :data:`rejectopt.metrics.METRICS`
        (percent), ``risk_full``, the selection's ``threshold``, ``accept_prob``, ``coverage`` and
        ``selective_risk``, ``n_eval``, ``seed``; all measured on the evaluation rows.
    curves : pandas.DataFrame
        Each method's RC curve on the evaluation rows: ``method``, ``coverage``, ``risk``.
    selections : dict of str -> SelectionFunction
        Each method's selection function (eq. 25), fitted on the calibration rows.
    scores : dict of str -> fitted score
        The learned scores (refitted on the fit + validation rows with the chosen C).
    uncertainty : dict of str -> ndarray of shape (n,)
        Each method's uncertainty of every row.
    parts : dict of str -> ndarray
        The row split (:func:`rejectopt.fitting.split_rows`): ``fit``, ``validation``,
        ``calibration``, ``report`` (the evaluation rows).
    loss : ndarray of shape (n,)
        ``100 [label != prediction]``.
    y_pred : ndarray of shape (n,)
        The network's predictions.

    Examples
    --------
    See :func:`fit_logits`, which returns it.
    """

    table: pd.DataFrame
    curves: pd.DataFrame
    selections: dict
    scores: dict
    uncertainty: dict
    parts: dict
    loss: np.ndarray
    y_pred: np.ndarray


#: Metrics of the table besides ``aurc``, in registry order.
_EXTRA_METRICS = [name for name in METRICS if name != "aurc"]


def _feature_sources(features, embeddings):
    if features == "auto":
        return ["embeddings" if embeddings is not None else "logits"]
    sources = [features] if isinstance(features, str) else list(features)
    bad = [s for s in sources if s not in _FEATURE_SOURCES]
    if bad or not sources:
        raise ValueError(f"features must be 'auto' or among {_FEATURE_SOURCES}, got {features!r}")
    if "embeddings" in sources and embeddings is None:
        raise ValueError(
            "features='embeddings' needs embeddings; pass them or use features='logits'"
        )
    return sources


def fit_logits(
    logits,
    labels,
    embeddings=None,
    *,
    target="coverage=0.8",
    scores=None,
    baselines=None,
    features="auto",
    C_grid=SCORE_C_GRID,
    calibration_fraction=0.3,
    report_fraction=0.2,
    validation_fraction=0.3,
    seed=0,
    n_jobs=1,
    min_rows=10,
    post_hoc=None,
):
    """Baselines and learned scores of a network's outputs, compared on held-out rows.

    Seeded split (:func:`rejectopt.fitting.split_rows`): ``fit`` trains each learned score,
    ``validation`` chooses its C by the AuRC (eq. 27; then refitted on both), ``calibration``
    fits every selection function for ``target`` (eq. 25), ``report`` evaluates them all. Scores
    are fitted as ``select`` does (:func:`rejectopt.fitting.fit_selective`); TCP learns the
    softmax posterior of the true class (eq. 35 of [1]). The loss is 0/100 of the prediction.

    Parameters
    ----------
    logits : array-like of shape (n, K)
    labels : array-like of shape (n,)
        True classes ``0..K-1``.
    embeddings : array-like of shape (n, d) or None, default=None
        Penultimate-layer features (see ``features``).
    target : str or Target, default="coverage=0.8"
        Of the selection functions (:func:`rejectopt.targets.parse_target`; risk in percent).
    scores : str or sequence of str or None, default=None
        Registered learned scores; None = every one that works on any features
        (``score_names(learned=True, general=True)``: REG, TCP, SELE and a user's own). ``"sele_shared"`` / ``"reg_shared"`` (one weight vector for
        all classes on class-agnostic features of the logits, for many classes) always read the
        logits, whatever ``features``.
    baselines : str or sequence of str or None, default=None
        Keys of :data:`BASELINES`; None = all.
    post_hoc : str or sequence of str or None, default=None
        Post-hoc scores tuned on the training rows (``fit`` + ``validation``): ``"maxlogit_pnorm"``
        and ``"msp_pnorm"`` (p, and T, of least AuRC: :func:`fit_pnorm`), ``"msp_ts"`` (MSP at the
        temperature of least NLL: :func:`fit_temperature`); None = all three, ``()`` none.
    features : {"auto", "embeddings", "logits"} or sequence of them, default="auto"
        The learned scores' features: ``"auto"`` = the embeddings when given, else the logits;
        a sequence learns each score on each source (methods ``sele@embeddings``, ...).
    C_grid : sequence of float, default=(0, 1, 10, 100, 1000)
        The score's C grid (Section 5.1).
    calibration_fraction, report_fraction, validation_fraction : float
        As :func:`rejectopt.fitting.split_rows` (defaults 0.3, 0.2, 0.3, as ``select``).
    seed : int, default=0
        Seed of the split and of SELE's chunks.
    n_jobs : int, default=1
        Threads of SELE.
    min_rows : int, default=10
        Fewest rows of each part.

    Returns
    -------
    LogitsFit

    Raises
    ------
    NetworkOutputError
        Bad logits, labels or embeddings (:func:`check_network_outputs`).
    ValueError
        An unknown score, baseline or feature source, too few rows for the split, a logit or
        embedding beyond +-1e150 (:data:`rejectopt.model.FEATURE_LIMIT`, as the command line), or
        a target that a method cannot meet on the calibration rows (the message names the method).

    Examples
    --------
    >>> from sklearn.datasets import load_digits
    >>> from sklearn.linear_model import LogisticRegression
    >>> X, y = load_digits(return_X_y=True)
    >>> net = LogisticRegression(max_iter=3000).fit(X[:600], y[:600])
    >>> result = fit_logits(net.decision_function(X[600:]), y[600:], scores=("reg",), C_grid=(1, 10))
    >>> result.table["method"].tolist()
    ['mcp', 'entropy', 'energy', 'doctor', 'max_logit', 'margin', 'maxlogit_pnorm', 'msp_pnorm', 'msp_ts', 'reg']
    >>> bool(result.table.set_index("method").loc["mcp", "aurc"] < result.table["risk_full"].iloc[0])
    True
    """
    logits, labels, embeddings = check_network_outputs(logits, labels, embeddings)
    if labels is None:
        raise ValueError("labels are needed: the scores learn from the loss of each prediction")
    for array, values in (("logits", logits), ("embeddings", embeddings)):
        first = None if values is None else _out_of_range(values)[1]
        if (
            first is not None
        ):  # standardising such a feature overflows: every learned score would be constant
            raise NetworkOutputError(
                array,
                f"value {values[first]:g} is beyond +-{FEATURE_LIMIT:g}, the bound of a "
                "feature (standardising it overflows float64); rescale the outputs",
                *first,
            )
    scores = (
        score_names(learned=True, general=True)
        if scores is None
        else [scores]
        if isinstance(scores, str)
        else list(scores)
    )
    baselines = [baselines] if isinstance(baselines, str) else baselines
    post_hoc = (
        list(POST_HOC)
        if post_hoc is None
        else [post_hoc]
        if isinstance(post_hoc, str)
        else list(post_hoc)
    )
    unknown = [name for name in post_hoc if name not in POST_HOC]
    if unknown:
        raise ValueError(f"unknown post-hoc score(s) {unknown}; known: {', '.join(POST_HOC)}")
    if isinstance(target, str):
        target = parse_target(target)
    if not isinstance(
        target, Target
    ):  # an OOD target: a wrong value of the option, not a wrong type
        raise ValueError(f"target must be a coverage, risk or reject-cost target, got {target!r}")  # noqa: TRY004
    unknown = [s for s in scores if s not in score_names(learned=True)]
    if unknown:
        raise ValueError(
            f"unknown learned score(s) {unknown}; registered: {', '.join(score_names(learned=True))}"
        )
    sources = _feature_sources(features, embeddings) if scores else []
    if not scores and not post_hoc and baselines is not None and not list(baselines):
        raise ValueError("nothing to compare: give at least one learned score or baseline")
    n, K = logits.shape
    y_pred = predictions(logits)
    loss = per_example_loss("zero_one", labels, y_pred)
    proba = None  # the n x K posteriors, computed only for a score that learns from them (TCP)
    parts = split_rows(
        n, calibration_fraction, report_fraction, validation_fraction, seed, min_rows=min_rows
    )
    cal, rep = parts["calibration"], parts["report"]

    uncertainty, selections, fitted, rows = {}, {}, {}, []

    def add_row(method, label, kind, source, C, s, selection):
        risk, coverage = empirical_risk_coverage(loss[rep], s[rep], selection)
        rows.append(
            {
                "method": method,
                "label": label,
                "kind": kind,
                "features": source,
                "C": C,
                "aurc": METRICS["aurc"].function(loss[rep], s[rep]),
                **{m: METRICS[m].function(loss[rep], s[rep]) for m in _EXTRA_METRICS},
                "risk_full": risk_full(loss[rep]),
                "threshold": selection.threshold,
                "accept_prob": selection.accept_prob,
                "coverage": coverage,
                "selective_risk": risk,
                "n_eval": int(rep.size),
                "seed": seed,
            }
        )

    for name, s in baseline_uncertainties(logits, baselines).items():
        try:
            selection = target.fit(loss[cal], s[cal])
        except InfeasibleTargetError as err:
            raise ValueError(
                f"{name}: cannot meet target {target} on the {cal.size} calibration rows: {err}"
            ) from None
        uncertainty[name], selections[name] = s, selection
        add_row(name, BASELINES[name][1], "baseline", "", float("nan"), s, selection)
    tune = np.concatenate([parts["fit"], parts["validation"]])
    for name in post_hoc:
        try:
            s, label = _post_hoc(name, logits, labels, tune)
        except ValueError as err:
            others = tuple(other for other in post_hoc if other != name)
            raise ValueError(
                f"{name}: {err} (on the {tune.size} training rows); leave it out with "
                f"post_hoc={others!r}"
            ) from None
        try:
            selection = target.fit(loss[cal], s[cal])
        except InfeasibleTargetError as err:
            raise ValueError(
                f"{name}: cannot meet target {target} on the {cal.size} calibration rows: {err}"
            ) from None
        uncertainty[name], selections[name] = s, selection
        add_row(name, label, "post-hoc", "logits", float("nan"), s, selection)
    shared_source = "logits" if "logits" in sources else (sources[0] if sources else None)
    for source in sources:
        for name in scores:
            info = get_score(name)
            reads_logits = getattr(info.cls, "reads_logits", False)
            if reads_logits and source != shared_source:
                continue  # the class-shared scores read the logits once, whatever the sources
            X = logits if reads_logits or source == "logits" else embeddings
            method = name if len(sources) == 1 else f"{name}@{'logits' if reads_logits else source}"
            if info.needs_posteriors and proba is None:
                proba = softmax(logits)
            fit_target = info.target(loss, labels, proba) if info.needs_posteriors else None
            try:
                fit = fit_selective(
                    X,
                    y_pred,
                    loss,
                    target,
                    parts,
                    score=name,
                    n_classes=K,
                    C_grid=C_grid,
                    seed=seed,
                    n_jobs=n_jobs,
                    fit_target=fit_target,
                )
            except InfeasibleTargetError as err:
                raise ValueError(
                    f"{method}: cannot meet target {target} on the {cal.size} calibration rows: "
                    f"{err}"
                ) from None
            uncertainty[method], selections[method], fitted[method] = (
                fit.uncertainty,
                fit.selection,
                fit.score,
            )
            add_row(
                method,
                info.label,
                "learned",
                "logits" if reads_logits else source,
                fit.C,
                fit.uncertainty,
                fit.selection,
            )
    curves = []
    for method, s in uncertainty.items():
        coverage, risk = rc_curve(loss[rep], s[rep])
        curves.append(pd.DataFrame({"method": method, "coverage": coverage, "risk": risk}))
    return LogitsFit(
        table=pd.DataFrame(rows),
        curves=pd.concat(curves, ignore_index=True),
        selections=selections,
        scores=fitted,
        uncertainty=uncertainty,
        parts=parts,
        loss=loss,
        y_pred=y_pred,
    )
