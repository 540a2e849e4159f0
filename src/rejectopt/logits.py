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
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from .fitting import fit_selective, split_rows
from .metrics import METRICS, per_example_loss, rc_curve, risk_full
from .scores import get_score, mcp, score_names, svm_margin
from .scores._selection import SCORE_C_GRID
from .selective import InfeasibleTargetError, empirical_risk_coverage
from .targets import Target, parse_target

__all__ = [
    "BASELINES",
    "LogitsFit",
    "NetworkOutputError",
    "baseline_uncertainties",
    "check_network_outputs",
    "doctor",
    "energy",
    "entropy",
    "fit_logits",
    "margin",
    "max_logit",
    "msp",
    "predictions",
    "softmax",
]

#: Where the learned scores read their features: the penultimate-layer embeddings or the logits.
_FEATURE_SOURCES = ("embeddings", "logits")


# --------------------------------------------------------------------------------------------
# Validation
# --------------------------------------------------------------------------------------------
class NetworkOutputError(ValueError):
    """A bad value or shape in a network's outputs, with where it is.

    ``str()`` words the position in the library's terms (the CLI rewords it as its file's rows
    and columns, e.g. ``row 7``, ``logit_3``); the parameters are kept as attributes.

    Parameters
    ----------
    array : str
        ``"logits"``, ``"labels"`` or ``"embeddings"``.
    problem : str
        What is wrong, without the position (e.g. ``"non-finite value nan"``).
    index : int or None, default=None
        0-based row of the first bad value (None for a shape error).
    column : int or None, default=None
        0-based column of that value in a 2-D array.

    Examples
    --------
    >>> err = NetworkOutputError("logits", "non-finite value nan", 3, 2)
    >>> str(err), err.index, err.column
    ('logits: non-finite value nan at index 3, column 2', 3, 2)
    """

    def __init__(self, array, problem, index=None, column=None):
        self.array, self.problem, self.index, self.column = array, problem, index, column
        where = "" if index is None else f" at index {index}" + ("" if column is None else f", column {column}")
        super().__init__(f"{array}: {problem}{where}")


def _real_matrix(values, name):
    values = np.asarray(values)
    if values.ndim != 2:
        raise NetworkOutputError(name, f"must be 2-D (n x {'K' if name == 'logits' else 'd'}), got shape "
                                       f"{values.shape}")
    if values.dtype.kind not in "biuf":
        raise NetworkOutputError(name, f"must hold real numbers, got dtype {values.dtype}")
    values = values.astype(np.float64)
    bad = np.argwhere(~np.isfinite(values))
    if bad.size:
        i, j = (int(v) for v in bad[0])
        raise NetworkOutputError(name, f"non-finite value {values[i, j]} ({len(bad)} in all)", i, j)
    return values


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
    rejectopt.logits.NetworkOutputError: labels: label 2 is not a class of the 2 logits (0..1) at index 0
    """
    logits = _real_matrix(logits, "logits")
    n, K = logits.shape
    if n == 0:
        raise NetworkOutputError("logits", "no rows")
    if K < 2:
        raise NetworkOutputError("logits", f"needs at least 2 columns (classes), got shape {logits.shape}")
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
            raise NetworkOutputError("labels", f"must hold class indices 0..{K - 1}, got dtype {labels.dtype}")
        values = labels.astype(np.float64)
        bad = np.flatnonzero(~np.isfinite(values) | (values != np.round(values)) | (values < 0) | (values > K - 1))
        if bad.size:
            i = int(bad[0])
            raise NetworkOutputError("labels", f"label {values[i]:g} is not a class of the {K} logits (0..{K - 1})"
                                     + (f" ({bad.size} rows in all)" if bad.size > 1 else ""), i)
        labels = values.astype(np.int64)
    return logits, labels, embeddings


# --------------------------------------------------------------------------------------------
# The network's posterior and prediction
# --------------------------------------------------------------------------------------------
def _log_softmax(logits):
    """``log p(y|x) = f_y(x) - log sum_k exp f_k(x)`` of ``logits`` (n, K), the largest logit factored out."""
    logits = np.asarray(logits, dtype=np.float64)
    shifted = logits - logits.max(axis=1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))


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
    return np.exp(_log_softmax(logits))


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
    return np.asarray(logits).argmax(axis=1).astype(np.int64)


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
    >>> float(msp([[0.0, np.log(3.0)]])[0])
    0.25
    """
    return mcp(softmax(logits))


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
    log_p = _log_softmax(logits)
    return -(np.exp(log_p) * log_p).sum(axis=1)


def energy(logits, temperature=1.0):
    """Free energy ``E(x) = -T log sum_y exp(f_y(x) / T)`` (eq. 1 of Liu et al. 2020).

    A large energy means a low density under the network: the uncertainty is ``E`` itself.

    Parameters
    ----------
    logits : array-like of shape (n, K)
    temperature : float, default=1.0
        ``T > 0``.

    Returns
    -------
    ndarray of shape (n,)

    Examples
    --------
    >>> energy([[0.0, 0.0]]).round(12).tolist()  # -log 2
    [-0.69314718056]
    """
    if not (np.isfinite(temperature) and temperature > 0):
        raise ValueError(f"temperature must be a finite number > 0, got {temperature!r}")
    scaled = np.asarray(logits, dtype=np.float64) / temperature
    top = scaled.max(axis=1)
    return -temperature * (top + np.log(np.exp(scaled - top[:, None]).sum(axis=1)))


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
    p = softmax(logits)
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
    return svm_margin(np.asarray(logits, dtype=np.float64))


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
    p = np.sort(softmax(logits), axis=1)
    return -(p[:, -1] - p[:, -2])


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
        ``label``, ``kind`` (``"baseline"`` / ``"learned"``), ``features`` (empty for a baseline),
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
        raise ValueError("features='embeddings' needs embeddings; pass them or use features='logits'")
    return sources


def fit_logits(logits, labels, embeddings=None, *, target="coverage=0.8", scores=("sele", "reg", "tcp"),
               baselines=None, features="auto", C_grid=SCORE_C_GRID, calibration_fraction=0.3,
               report_fraction=0.2, validation_fraction=0.3, seed=0, n_jobs=1, min_rows=10):
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
    scores : sequence of str, default=("sele", "reg", "tcp")
        Registered learned scores.
    baselines : sequence of str or None, default=None
        Keys of :data:`BASELINES`; None = all.
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
        An unknown score, baseline or feature source, too few rows for the split, or a target
        that a method cannot meet on the calibration rows (the message names the method).

    Examples
    --------
    >>> from sklearn.datasets import load_digits
    >>> from sklearn.linear_model import LogisticRegression
    >>> X, y = load_digits(return_X_y=True)
    >>> net = LogisticRegression(max_iter=3000).fit(X[:600], y[:600])
    >>> result = fit_logits(net.decision_function(X[600:]), y[600:], scores=("reg",), C_grid=(1, 10))
    >>> result.table["method"].tolist()
    ['mcp', 'entropy', 'energy', 'doctor', 'max_logit', 'margin', 'reg']
    >>> bool(result.table.set_index("method").loc["mcp", "aurc"] < result.table["risk_full"].iloc[0])
    True
    """
    logits, labels, embeddings = check_network_outputs(logits, labels, embeddings)
    if labels is None:
        raise ValueError("labels are needed: the scores learn from the loss of each prediction")
    if isinstance(target, str):
        target = parse_target(target)
    if not isinstance(target, Target):  # an OOD target: a wrong value of the option, not a wrong type
        raise ValueError(f"target must be a coverage, risk or reject-cost target, got {target!r}")  # noqa: TRY004
    unknown = [s for s in scores if s not in score_names(learned=True)]
    if unknown:
        raise ValueError(f"unknown learned score(s) {unknown}; registered: {', '.join(score_names(learned=True))}")
    sources = _feature_sources(features, embeddings) if scores else []
    if not scores and baselines is not None and not list(baselines):
        raise ValueError("nothing to compare: give at least one learned score or baseline")
    n, K = logits.shape
    y_pred = predictions(logits)
    loss = per_example_loss("zero_one", labels, y_pred)
    proba = softmax(logits)
    parts = split_rows(n, calibration_fraction, report_fraction, validation_fraction, seed, min_rows=min_rows)
    cal, rep = parts["calibration"], parts["report"]

    uncertainty, selections, fitted, rows = {}, {}, {}, []

    def add_row(method, label, kind, source, C, s, selection):
        risk, coverage = empirical_risk_coverage(loss[rep], s[rep], selection)
        rows.append({"method": method, "label": label, "kind": kind, "features": source, "C": C,
                     "aurc": METRICS["aurc"].function(loss[rep], s[rep]),
                     **{m: METRICS[m].function(loss[rep], s[rep]) for m in _EXTRA_METRICS},
                     "risk_full": risk_full(loss[rep]), "threshold": selection.threshold,
                     "accept_prob": selection.accept_prob, "coverage": coverage, "selective_risk": risk,
                     "n_eval": int(rep.size), "seed": seed})

    for name, s in baseline_uncertainties(logits, baselines).items():
        try:
            selection = target.fit(loss[cal], s[cal])
        except InfeasibleTargetError as err:
            raise ValueError(f"{name}: cannot meet target {target} on the {cal.size} calibration rows: {err}") from None
        uncertainty[name], selections[name] = s, selection
        add_row(name, BASELINES[name][1], "baseline", "", float("nan"), s, selection)
    for source in sources:
        X = embeddings if source == "embeddings" else logits
        for name in scores:
            info = get_score(name)
            method = name if len(sources) == 1 else f"{name}@{source}"
            fit_target = info.target(loss, labels, proba) if info.needs_posteriors else None
            try:
                fit = fit_selective(X, y_pred, loss, target, parts, score=name, n_classes=K, C_grid=C_grid,
                                    seed=seed, n_jobs=n_jobs, fit_target=fit_target)
            except InfeasibleTargetError as err:
                raise ValueError(f"{method}: cannot meet target {target} on the {cal.size} calibration rows: "
                                 f"{err}") from None
            uncertainty[method], selections[method], fitted[method] = fit.uncertainty, fit.selection, fit.score
            add_row(method, info.label, "learned", source, fit.C, fit.uncertainty, fit.selection)
    curves = []
    for method, s in uncertainty.items():
        coverage, risk = rc_curve(loss[rep], s[rep])
        curves.append(pd.DataFrame({"method": method, "coverage": coverage, "risk": risk}))
    return LogitsFit(table=pd.DataFrame(rows), curves=pd.concat(curves, ignore_index=True), selections=selections,
                     scores=fitted, uncertainty=uncertainty, parts=parts, loss=loss, y_pred=y_pred)
