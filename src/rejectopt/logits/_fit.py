"""Internal: :func:`fit_logits`, the whole route from a network's outputs to a compared table."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .._features import FEATURE_LIMIT, out_of_range
from ..exceptions import NetworkOutputError
from ..fitting import LearnedScore, choose_score, fit_selective, split_rows
from ..metrics import METRICS, aurc, per_example_loss, rc_curve, risk_full
from ..scores import get_score, score_names
from ..scores._confidence import ConfidenceScore, baseline_names
from ..scores._tuning import SCORE_C_GRID
from ..selective import InfeasibleTargetError, empirical_risk_coverage
from ..targets import Target, parse_target
from . import _parameters
from ._baselines import BASELINES, POST_HOC, _post_hoc, baseline_uncertainties
from ._outputs import check_network_outputs, predictions, softmax

#: Where the learned scores read their features: the penultimate-layer embeddings or the logits.
_FEATURE_SOURCES = ("embeddings", "logits")


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
    chosen : str
        The method ``"auto"`` would decide with (``select --score auto``): of the baselines and
        learned scores, the one of least AuRC on the validation rows (the learned scores' at
        their chosen C, fitted on the fit rows), MSP kept unless beaten in 95 % of bootstrap
        resamples of those rows (:func:`rejectopt.fitting.choose_score`). The post-hoc scores,
        tuned on the validation rows, are not candidates: their AuRC there is in-sample.
    candidate_aurc : dict of str -> float
        Each candidate's validation AuRC, MSP first.
    chosen_score : object
        The chosen method's fitted score: a learned score, or a baseline's
        :class:`~rejectopt.scores._confidence.ConfidenceScore` reading the logits (its
        ``predict(logits)`` is the baseline's uncertainty).

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
    chosen: str = ""
    candidate_aurc: dict = field(default_factory=dict)
    chosen_score: object = None


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


def _check_feature_range(logits, embeddings):
    """Refuse a logit or embedding beyond :data:`rejectopt.model.FEATURE_LIMIT`, naming its row.

    Standardising such a feature overflows float64: every learned score would be constant.
    """
    for array, values in (("logits", logits), ("embeddings", embeddings)):
        first = None if values is None else out_of_range(values)[1]
        if first is not None:
            raise NetworkOutputError(
                array,
                f"value {values[first]:g} is beyond +-{FEATURE_LIMIT:g}, the bound of a "
                "feature (standardising it overflows float64); rescale the outputs",
                *first,
            )


def _checked_inputs(logits, labels, embeddings, target, scores, baselines, post_hoc, features):
    """:func:`fit_logits`'s arguments checked, in the order its messages are given.

    Returns the arrays, the target, the learned scores', baselines' and post-hoc scores' names,
    and the feature sources of the learned scores.
    """
    logits, labels, embeddings = check_network_outputs(logits, labels, embeddings)
    if labels is None:
        raise ValueError("labels are needed: the scores learn from the loss of each prediction")
    _check_feature_range(logits, embeddings)
    if scores is None:
        scores = score_names(learned=True, general=True)
    else:
        scores = [scores] if isinstance(scores, str) else list(scores)
    baselines = [baselines] if isinstance(baselines, str) else baselines
    if post_hoc is None:
        post_hoc = list(POST_HOC)
    else:
        post_hoc = [post_hoc] if isinstance(post_hoc, str) else list(post_hoc)
    unknown = [name for name in post_hoc if name not in POST_HOC]
    if unknown:
        raise ValueError(f"unknown post-hoc score(s) {unknown}; known: {', '.join(POST_HOC)}")
    if isinstance(target, str):
        target = parse_target(target)
    if not isinstance(target, Target):  # an OOD target: a wrong value of the option, not a type
        raise ValueError(f"target must be a coverage, risk or reject-cost target, got {target!r}")  # noqa: TRY004
    unknown = [s for s in scores if s not in score_names(learned=True)]
    if unknown:
        raise ValueError(
            f"unknown learned score(s) {unknown}; registered: {', '.join(score_names(learned=True))}"
        )
    sources = _feature_sources(features, embeddings) if scores else []
    if not scores and not post_hoc and baselines is not None and not list(baselines):
        raise ValueError("nothing to compare: give at least one learned score or baseline")
    return logits, labels, embeddings, target, scores, baselines, post_hoc, sources


class _Comparison:
    """The methods compared so far: their uncertainties, selections, fitted scores and table rows.

    Each method's selection is fitted on the calibration rows and measured on the report rows.
    """

    def __init__(self, loss, parts, target, seed):
        self.loss, self.target, self.seed = loss, target, seed
        self.cal, self.rep = parts["calibration"], parts["report"]
        self.uncertainty, self.selections, self.fitted, self.rows = {}, {}, {}, []
        self.learned = {}  # the candidates of the choice, by method: baselines and learned scores

    def fit_target(self, method, s):
        """The target's selection of ``s`` on the calibration rows, or ValueError naming ``method``."""
        try:
            return self.target.fit(self.loss[self.cal], s[self.cal])
        except InfeasibleTargetError as err:
            raise ValueError(
                f"{method}: cannot meet target {self.target} on the {self.cal.size} calibration "
                f"rows: {err}"
            ) from None

    def add(self, method, label, kind, source, C, s, selection):
        """Record ``method``: its uncertainty, its selection and its row of the table."""
        loss, rep = self.loss[self.rep], s[self.rep]
        self.uncertainty[method], self.selections[method] = s, selection
        risk, coverage = empirical_risk_coverage(loss, rep, selection)
        self.rows.append(
            {
                "method": method,
                "label": label,
                "kind": kind,
                "features": source,
                "C": C,
                "aurc": METRICS["aurc"].function(loss, rep),
                **{m: METRICS[m].function(loss, rep) for m in _EXTRA_METRICS},
                "risk_full": risk_full(loss),
                "threshold": selection.threshold,
                "accept_prob": selection.accept_prob,
                "coverage": coverage,
                "selective_risk": risk,
                "n_eval": int(self.rep.size),
                "seed": self.seed,
            }
        )

    def curves(self):
        """Each method's RC curve on the report rows, one frame."""
        curves = []
        for method, s in self.uncertainty.items():
            coverage, risk = rc_curve(self.loss[self.rep], s[self.rep])
            curves.append(pd.DataFrame({"method": method, "coverage": coverage, "risk": risk}))
        return pd.concat(curves, ignore_index=True)


def _add_post_hoc(comparison, post_hoc, logits, labels, tune):
    """The post-hoc scores, each tuned on the training rows ``tune``."""
    for name in post_hoc:
        try:
            s, label = _post_hoc(name, logits, labels, tune)
        except ValueError as err:
            others = tuple(other for other in post_hoc if other != name)
            raise ValueError(
                f"{name}: {err} (on the {tune.size} training rows); leave it out with "
                f"post_hoc={others!r}"
            ) from None
        comparison.add(
            name, label, "post-hoc", "logits", float("nan"), s, comparison.fit_target(name, s)
        )


def _add_learned(comparison, scores, sources, logits, labels, embeddings, y_pred, parts, options):
    """The learned scores on each feature source, fitted as ``select`` does (``options``: C grid...)."""
    loss, K = comparison.loss, logits.shape[1]
    proba = None  # the n x K posteriors, computed only for a score that learns from them (TCP)
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
                    comparison.target,
                    parts,
                    score=name,
                    n_classes=K,
                    fit_target=fit_target,
                    **options,
                )
            except InfeasibleTargetError as err:
                raise ValueError(
                    f"{method}: cannot meet target {comparison.target} on the "
                    f"{comparison.cal.size} calibration rows: {err}"
                ) from None
            comparison.fitted[method] = fit.score
            comparison.learned[method] = LearnedScore(
                fit.score,
                fit.C,
                fit.validation_aurc,
                min(fit.validation_aurc.values()),
                fit.uncertainty,
            )
            source_read = "logits" if reads_logits else source
            comparison.add(
                method, info.label, "learned", source_read, fit.C, fit.uncertainty, fit.selection
            )


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
        (``score_names(learned=True, general=True)``: REG, TCP, SELE and a user's own).
        ``"sele_shared"`` / ``"reg_shared"`` (one weight vector for all classes on class-agnostic
        features of the logits, for many classes) always read the logits, whatever ``features``.
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
    _parameters.check(
        "fit_logits",
        calibration_fraction=calibration_fraction,
        report_fraction=report_fraction,
        validation_fraction=validation_fraction,
        seed=seed,
    )
    logits, labels, embeddings, target, scores, baselines, post_hoc, sources = _checked_inputs(
        logits, labels, embeddings, target, scores, baselines, post_hoc, features
    )
    y_pred = predictions(logits)
    loss = per_example_loss("zero_one", labels, y_pred)
    parts = split_rows(
        logits.shape[0],
        calibration_fraction,
        report_fraction,
        validation_fraction,
        seed,
        min_rows=min_rows,
    )
    comparison = _Comparison(loss, parts, target, seed)
    val = parts["validation"]
    for name, s in baseline_uncertainties(logits, baselines).items():
        selection = comparison.fit_target(name, s)
        comparison.add(name, BASELINES[name][1], "baseline", "", float("nan"), s, selection)
        if name in baseline_names("logits"):
            score = ConfidenceScore(name, "logits", logits.shape[1]).fit(logits, y_pred)
            comparison.learned[name] = LearnedScore(
                score, float("nan"), {}, aurc(loss[val], s[val]), s
            )
    tune = np.concatenate([parts["fit"], parts["validation"]])
    _add_post_hoc(comparison, post_hoc, logits, labels, tune)
    options = {"C_grid": C_grid, "seed": seed, "n_jobs": n_jobs}
    _add_learned(comparison, scores, sources, logits, labels, embeddings, y_pred, parts, options)
    chosen, candidate_aurc = "", {}
    if comparison.learned:
        # MSP first: the incumbent, kept unless another candidate wins beyond the noise
        candidates = dict(sorted(comparison.learned.items(), key=lambda item: item[0] != "mcp"))
        msp_first = "mcp" in candidates
        test = (loss, val) if msp_first else (None, None)
        chosen, candidate_aurc = choose_score(candidates, *test, seed=seed)
    return LogitsFit(
        chosen=chosen,
        candidate_aurc=candidate_aurc,
        chosen_score=comparison.learned[chosen].score if chosen else None,
        table=pd.DataFrame(comparison.rows),
        curves=comparison.curves(),
        selections=comparison.selections,
        scores=comparison.fitted,
        uncertainty=comparison.uncertainty,
        parts=parts,
        loss=loss,
        y_pred=y_pred,
    )
