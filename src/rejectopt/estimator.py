"""SelectiveClassifier: a scikit-learn meta-estimator adding the paper's optimal reject option to any classifier."""

from __future__ import annotations

import math
import numbers
import warnings

import numpy as np
from sklearn import get_config
from sklearn.base import (
    BaseEstimator,
    ClassifierMixin,
    MetaEstimatorMixin,
    clone,
    is_regressor,
)
from sklearn.exceptions import NotFittedError
from sklearn.frozen import FrozenEstimator
from sklearn.model_selection import StratifiedKFold
from sklearn.utils import _safe_indexing, check_random_state
from sklearn.utils.metadata_routing import (
    MetadataRouter,
    MethodMapping,
    get_routing_for_object,
    process_routing,
)
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import check_classification_targets, type_of_target
from sklearn.utils.validation import (
    check_consistent_length,
    check_is_fitted,
    column_or_1d,
    has_fit_parameter,
    validate_data,
)

from ._diagnostics import (
    labels_never_predicted,
    loses_to_confidence,
    missed_coverage,
    missed_risk,
    nothing_to_learn,
    risk_in_percent,
)
from ._features import (
    check_features,
    feature_bounds,
    out_of_range,
    out_of_range_message,
    value_text,
)
from ._params import NONE, HasMethods, InstanceOf, Interval, Options, format_level, validate_params
from .exceptions import InfeasibleTargetError
from .fitting import choose_score, fit_selection, learn_score, split_rows
from .metrics import per_example_loss
from .model import decide, gate_statement
from .scores import SCORES, TCP, get_score, score_names
from .scores._confidence import AUTO, ConfidenceScore, baseline_names
from .scores._tuning import SCORE_C_GRID
from .selective import TIE_BREAKING, operating_point
from .stats import wilson_interval
from .targets import Target

__all__ = ["SelectiveClassifier"]

#: Default of ``cv``, chosen by benchmarks/bench_estimator_cv.py (its records: bench_estimator_cv.csv).
_DEFAULT_CV = 5

_LOSSES = ("zero_one", "mae")
#: The unit of a selective risk under each loss, as ``select``'s report.json names it (``risk_unit``):
#: a risk read without it is taken on the wrong scale (2.5 % errors for 0.025).
_RISK_UNITS = {"zero_one": "%", "mae": "MAE"}


def _named(target):
    """A target as this estimator's messages name it: by its parameters (``target='risk', value=2``)."""
    extra = "" if target.confidence is None else f", confidence={format_level(target.confidence)}"
    if target.min_coverage is not None:
        extra += f", min_coverage={target.min_coverage:g}"
    return f"target={target.kind!r}, value={target.value:g}{extra}"


def _take_rows(X_raw, X, rows):
    """Rows of the input as given (list, array, DataFrame) for the classifier; else of the validated array."""
    if isinstance(X_raw, (list, np.ndarray)) or hasattr(X_raw, "iloc"):
        return _safe_indexing(X_raw, rows)
    return X[rows]


def _check_numeric_columns(X):
    """Refuse text columns, naming the first one: the score would read them as numbers, the classifier as text.

    ``validate_data`` turns a DataFrame column of numbers written as text (``"1.5"``) into floats
    without a word, while the classifier inside sees the text; a column of words fails there
    naming no column. ``apply`` reads every feature column as numbers and names the column and
    row of a value that is not one; so does this.
    """
    dtypes = getattr(X, "dtypes", None)
    if dtypes is not None and hasattr(X, "columns"):
        for position, (column, dtype) in enumerate(zip(X.columns, dtypes)):
            if dtype.kind in "biufc" or dtype.kind == "b":
                continue
            values = X.iloc[:, position]
            texts = np.flatnonzero([isinstance(v, (str, bytes)) for v in values.tolist()])
            if texts.size or dtype.kind not in "O":
                first = values.iloc[int(texts[0])] if texts.size else values.iloc[0]
                row = values.index[int(texts[0])] if texts.size else values.index[0]
                raise ValueError(
                    f"X: column {column!r} holds {dtype} values (e.g. {first!r} at row {row!r}), not "
                    "numbers: the uncertainty score reads every column as a number; encode the column "
                    "before the SelectiveClassifier (e.g. make_pipeline(ColumnTransformer(...), "
                    "SelectiveClassifier(...))) or convert it with pandas.to_numeric"
                )
        return
    array = X if isinstance(X, np.ndarray) else None
    if array is not None and array.dtype.kind in "USO" and array.ndim == 2:
        texts = np.argwhere(
            np.vectorize(lambda v: isinstance(v, (str, bytes)), otypes=[bool])(array)
        )
        if texts.size:
            i, j = texts[0]
            raise ValueError(
                f"X: value {array[i, j]!r} at row {i}, column {j} is text, not a number: the uncertainty "
                "score reads every column as a number; convert X to numbers first"
            )


def _check_number(value, name, meaning):
    """Refuse a ``value`` or ``confidence`` given as text or a bool, before anything is fitted.

    ``float("0.95")`` and ``float(True)`` would read them as numbers; scikit-learn's parameters
    are numbers, and a level of ``True`` (1) or a coverage of ``"0.8"`` is a slip, so it is named.
    """
    if isinstance(value, (str, bytes, bool, np.bool_)) or not isinstance(value, numbers.Real):
        kind = type(value).__name__
        raise ValueError(
            f"{name} must be a number ({meaning}), got {value!r} (a {kind}): pass it as a number, "
            f"e.g. {name}={0.95 if name == 'confidence' else 0.8}"
        )


def _estimator_has(method):
    """``available_if`` check: the fitted classifier (else the unfitted one) has ``method``."""

    def check(self):
        return hasattr(getattr(self, "estimator_", self.estimator), method)

    return check


class SelectiveClassifier(ClassifierMixin, MetaEstimatorMixin, BaseEstimator):
    """Classifier with a reject option: the paper's optimal strategy on top of any classifier.

    An uncertainty score (SELE, REG or TCP: one linear score per predicted class, eq. 37 of [1];
    or the classifier's own confidence, such as MCP, when no learned score ranks its errors
    better) is learned from the losses of the classifier's predictions, and the randomized Bayes
    selection function (eq. 25) is fitted for a target coverage (Problem 5), selective risk
    (Problem 3) or reject cost (Problem 1, Chow's rule). Fitting and deciding are the code of
    ``python -m rejectopt select`` and ``apply`` (:func:`rejectopt.fitting.fit_selective`,
    :func:`rejectopt.model.decide`): with ``prefit=True`` and the same score, seed, target and C
    grid, the decisions are theirs.

    Parameters
    ----------
    estimator : object
        Classifier with ``predict`` (and ``fit`` unless ``prefit=True``); ``predict_proba``
        is needed for ``uncertainty_score="tcp"`` and the baselines, and lets ``"auto"`` try
        them. It sees ``X`` as passed to :meth:`fit` and
        :meth:`predict` (e.g. a DataFrame); the uncertainty score sees ``X`` as a float array.
    uncertainty_score : str or estimator, default="auto"
        ``"auto"``: every candidate below is learned on the fit rows and scored by its AuRC on
        the validation rows (eq. 27), the rows that choose C; the classifier's own confidence
        (MCP; without ``predict_proba``, SELE) is kept unless a candidate has the lesser AuRC
        there and in 95 % of bootstrap resamples of those rows
        (:func:`rejectopt.fitting.choose_score`): on a few hundred rows a learned score beats
        it by chance as often as not. The choice is
        :attr:`chosen_score_`, the candidates' AuRCs :attr:`candidate_aurc_`. The calibration
        rows play no part in it, so a certified target's guarantee holds as for a fixed score.
        Candidates: the baselines of the class probabilities when the classifier has
        ``predict_proba`` (``"mcp"``, 1 - the largest probability; ``"margin"``, minus the gap
        between the two largest; ``"entropy"``; ``"doctor"``, 1 - the sum of squares), then the
        learned scores of the registry that work on any features (:func:`rejectopt.scores.get_score`:
        ``"reg"``, loss regression; ``"tcp"``, true-class-probability regression, which needs
        ``predict_proba``; ``"sele"``, the paper's SELE, eq. 30; or a registered plugin).
        Any of these names forces that score; an unfitted instance such as
        ``SELE(chunk_size=200)`` forces it with its options (its ``n_classes`` and
        ``random_state`` are set from this estimator, and ``n_jobs`` unless ``n_jobs=None``).
        A forced learned score whose validation AuRC is worse than MCP's warns (UserWarning).
        Not called ``score``, which would hide the :meth:`score` method (scikit-learn stores
        parameters as attributes); not an instance by default, because scikit-learn
        requires immutable defaults.

        .. versionchanged:: 0.8.0
           The default is ``"auto"`` (was ``"sele"``), and the baselines are accepted.
    target : {"coverage", "risk", "reject-cost"}, default="coverage"
        ``"coverage"``: accept a fraction ``value`` in (0, 1] of inputs (bounded abstention);
        ``"risk"``: the largest coverage whose selective risk is <= ``value`` in loss units
        (bounded improvement; percent for the 0/100 loss); ``"reject-cost"``: minimise
        loss + ``value`` per rejection (cost-based model).
    value : float, default=0.8
        Target coverage, selective risk or reject cost.
    reject_label : object or None, default=None
        Label returned by :meth:`predict` for rejected inputs; a class is refused by name. None:
        ``-1`` when the classes are numbers, ``"reject"`` when they are text, a label of the
        classes' own type, so that :meth:`predict` returns an array of their dtype kind (a
        label of another type, ``-1`` among text classes, gives an object array). The label in
        use is :attr:`reject_label_`: compare predictions with it, not with ``reject_label``.

        .. versionchanged:: 0.8.0
           The default is None (``-1`` for numeric classes, ``"reject"`` for text ones); it was
           ``-1``, which text classes got mixed into an object array.
    prefit : bool, default=False
        ``estimator`` is already fitted: it is used as is (not cloned, not refitted) and
        all rows go to the score and the selection function. ``clone`` (e.g. inside
        ``GridSearchCV``) returns an unfitted copy of a plain estimator; wrap it in
        ``sklearn.frozen.FrozenEstimator`` to keep it fitted there.
    classifier_fraction : float, default=0.5
        Share of the rows that fits the classifier with ``cv=None`` (ignored with cross-fitting
        and with ``prefit=True``).
    calibration_fraction : float, default=0.3
        Share of the remaining rows that fits the selection function.
    report_fraction : float, default=0.2
        Share of the remaining rows held out for :attr:`report_`.
    validation_fraction : float, default=0.3
        Share of the train part (remaining rows minus calibration and report) that chooses C.
    C_grid : tuple of float, default=(0, 1, 10, 100, 1000)
        Regularisation constants tried for the score, chosen by the validation AuRC
        (section 5.1: 0, 1, 10, 100, 1000). A single value fixes C (then the
        validation rows only add to the training rows of the refit).
    loss : {"zero_one", "mae"}, default="zero_one"
        Loss of a prediction: ``100 [y != h(x)]`` (the paper's 0/100 loss, percent) or
        ``|y - h(x)|`` (numeric labels, ordinal regression). Same as ``select --loss``.
    tie_breaking : {"hash", "sequential"}, default="hash"
        How inputs whose uncertainty equals the threshold are accepted with probability
        ``accept_prob`` (eq. 25). ``"hash"``: a pseudo-random number computed from the
        input's features and ``random_state``, so a given input always gets the same
        decision, in any batch and order (scikit-learn's invariance conventions).
        ``"sequential"``: ``numpy.random.default_rng(random_state)`` draws in row order,
        exactly as ``python -m rejectopt apply --seed``. Inputs off the threshold are
        decided deterministically either way. Read at prediction time only.
    random_state : int, RandomState, Generator or None, default=0
        Seed of the splits, of SELE's random chunks and of the tie draws (as ``--seed`` of
        ``select`` and ``apply``). None draws a fresh seed at each fit.
    n_jobs : int or None, default=1
        Threads of SELE (the score's ``n_jobs``); None keeps the score's own setting.
    confidence : float in (0, 1) or None, default=None
        None: the plug-in target, met on the calibration rows. A level ``1 - delta`` certifies
        the target (:class:`rejectopt.targets.Target` with ``confidence``): with probability at
        least ``confidence`` over the calibration sample, the population's selective risk is at
        most ``value`` (``target="risk"``), or its coverage at least ``value``
        (``target="coverage"``). :attr:`selection_` then carries the bound, the confidence, the
        number of calibration rows and the method; an unattainable target raises
        :class:`~rejectopt.exceptions.InfeasibleTargetError` with the best bound reached
        (``best_bound``). With cross-fitting, the calibration rows stay out of it (see Notes).
    cv : int, cross-validation splitter or None, default=5
        Cross-fitting of the classifier. An integer K: ``StratifiedKFold(K, shuffle=True)``
        seeded by ``random_state``; a splitter (e.g. ``KFold(5)``) must put each row in exactly
        one test fold. Each row is then predicted by the clone fitted on the other folds (out of
        fold), the score and the selection function learn from these predictions, and
        ``estimator_`` is refitted on all the classifier's rows. None: the held-out split of the
        Notes (``classifier_fraction``). Ignored with ``prefit=True``. The default is measured
        by ``benchmarks/bench_estimator_cv.py`` (records: ``bench_estimator_cv.csv``): on digits
        at coverage 0.8 over 8 seeds, the test coverage is nearer the target and steadier with
        5 folds than with None, its selective risk lower, for about 3x the fit time; 10 folds
        cost about twice as much as 5 for a gain within the seeds' noise.

        .. versionadded:: 0.4.0
           Cross-fitting is the default (``cv=5``); ``cv=None`` is the former held-out split.
    loss_bound : float > 0 or None, default=None
        ``loss="mae"`` only: B, the largest loss a prediction can have (``K - 1`` for K ordinal
        labels 0..K-1), as ``select --loss-bound``. A certified risk's bound holds for losses in
        [0, B], fixed before the rows are drawn. None: the span of the labels of ``y`` and of
        the predictions, which is ``K - 1`` only when the smallest and largest classes occur; a
        certified target then warns, as ``select`` does, that a missing class makes B too small.
    min_coverage : float in (0, 1) or None, default=None
        A release gate: with ``target="risk"`` and a ``confidence``, the coverage floor ``w``
        certified *together* with the risk (:class:`rejectopt.targets.Target` with
        ``min_coverage``, the Guarantees page's "Release gate"): with probability at least
        ``confidence`` over the calibration sample, the population's selective risk is at most
        ``value`` and its coverage at least ``min_coverage``, both at once. :attr:`selection_`'s
        method is then ``"ltt+order-statistic"``; a gate the calibration rows cannot grant raises
        :class:`~rejectopt.exceptions.InfeasibleTargetError` saying which part failed. None: no
        floor; refused without a certified risk target.

        .. versionadded:: 0.8.0

    Attributes
    ----------
    estimator_ : object
        The fitted classifier (``estimator`` itself when ``prefit=True``).
    uncertainty_score_ : SELE, REG, TCP or ConfidenceScore
        The fitted uncertainty score; a baseline's reads the classifier's ``predict_proba``.
    chosen_score_ : str
        The name of the score fitted: ``"auto"``'s choice, or the one forced (an instance's
        class name).
    candidate_aurc_ : dict
        ``name -> validation AuRC`` of each candidate (``"auto"``), or of the forced score and
        MCP, its yardstick, when the classifier has ``predict_proba``.
    selection_ : rejectopt.selective.SelectionFunction
        Threshold and acceptance probability at the threshold (eq. 25). A certified risk or
        coverage target's (:class:`~rejectopt.targets.CertifiedSelection`) carries its audit
        trail as ``selection_.audit`` (:class:`~rejectopt.targets.AuditTrail`): the cuts tested,
        in order, at which level, and why the procedure stopped.
    classes_ : ndarray
        Class labels: those of ``y``, of ``estimator_.classes_`` and of its predictions.
    reject_label_ : object
        The label :meth:`predict` gives a rejected input: ``reject_label``, or its default for
        :attr:`classes_` when None.

        .. versionadded:: 0.8.0
    C_ : float
        Regularisation constant of the score; NaN for a baseline (nothing is learned).
    validation_aurc_ : dict
        ``C -> validation AuRC``; empty for a baseline.
    report_ : dict
        The selection function on the ``n_rows`` held-out report rows:

        - ``coverage_expected``: the share of them accepted in expectation, a row tied at the
          threshold counting as its acceptance probability (``coverage`` of ``select``'s
          ``report.json``);
        - ``coverage_reached``: the share :meth:`predict` accepts once the tied rows are drawn
          (``tie_breaking``); it strays from the expected one when many rows tie;
        - ``selective_risk``: the mean loss of the accepted rows, in ``risk_unit``; None when
          nothing is accepted;
        - ``risk_unit``: ``"%"`` for the 0/100 loss (2.5 means 2.5 % errors, not 250 %),
          ``"MAE"`` for ``loss="mae"`` (label units), as ``report.json``'s ``risk_unit``;
        - ``guarantee``: with ``min_coverage`` only, the release gate's guarantee, the one
          sentence ``select``'s ``report.md`` states (:func:`rejectopt.model.gate_statement`).
    split_ : dict of ndarray
        Row indices of ``X`` in each part: ``classifier`` (the rows ``estimator_`` is fitted
        on; with cross-fitting, also in other parts), ``fit``, ``validation``, ``calibration``,
        ``report``.
    cv_folds_ : list of (ndarray, ndarray)
        With cross-fitting only: the ``(train, test)`` row indices of ``X`` of each fold.
    cv_predictions_ : ndarray of shape (n_samples,)
        With cross-fitting only: the prediction of each row that the score and the selection
        function learn from, out of fold for the classifier's rows, ``estimator_``'s for the
        others (a certified target's calibration and report rows).
    random_seed_ : int
        The integer seed used.
    n_features_in_, feature_names_in_
        As in scikit-learn.

    See Also
    --------
    rejectopt.metrics.reject_confusion_matrix : accepted/rejected x correct/wrong counts.

    Notes
    -----
    With ``cv=None``, :meth:`fit` splits the labelled rows (seeded by ``random_state``, with
    :func:`rejectopt.fitting.split_rows`) into

    =========== =========================== ===============================================
    part        size                        used for
    =========== =========================== ===============================================
    classifier  ``classifier_fraction``     fitting a clone of ``estimator`` (not with
                                            ``prefit=True``: then all rows go on)
    fit         rest of the train part      fitting the uncertainty score for each C
    validation  ``validation_fraction`` of  choosing C, and the score (``"auto"``), by the AuRC
                the train part              (eq. 27); the score is refitted on fit + validation
    calibration ``calibration_fraction``    fitting the selection function for the target
    report      ``report_fraction``         held out: :attr:`report_`
    =========== =========================== ===============================================

    where the last four fractions are of the rows left after the classifier part. Unlike
    ``select``, a part may be as small as one row, so that tiny samples still fit.

    *Cross-fitting* (``cv``, the default) cuts all the rows into the last four parts, with the
    same fractions, so the calibration rows double. For a plug-in target (no ``confidence``)
    the classifier learns from every row, the score and the selection function from every
    row's out-of-fold prediction, and :attr:`report_` is computed on the report rows'
    out-of-fold predictions. The target is then met by the fold models, and ``estimator_``,
    refitted on more rows, predicts a little differently; a coverage barely notices (see the
    benchmark named under ``cv``), a risk is usually lower. A *certified* target's guarantee
    needs calibration rows exchangeable with new rows: predictions of the very classifier and
    score that :meth:`predict` uses, on rows neither learned from. Out-of-fold predictions are
    not (they come from other models than ``estimator_``), so with a ``confidence`` only the
    fit and validation rows are cross-fitted: ``estimator_`` is fitted on them alone, and the
    calibration and report rows, seen by neither the classifier nor the score, are predicted
    by it. The certificate then holds for ``estimator_`` as it is, on twice the calibration
    rows of ``cv=None``.

    Rows are decided, not refused, so that one hostile row does not stop a batch: a row with
    a feature beyond :data:`rejectopt.model.FEATURE_LIMIT` (raw or standardised) is rejected
    with a warning naming it and never reaches the classifier; a row predicting a label unseen
    at fit is rejected too. A NaN, an infinite value or a text column is refused (ValueError
    naming its row and column), as ``apply`` refuses it; so is a training row out of range,
    since a score fitted on it says nothing about the other rows. :meth:`fit` warns, as
    ``select`` does, when every loss is 0, when no label of ``y`` is ever predicted, when
    the coverage reached on the report rows misses a coverage target (many rows tied at the
    threshold), when a risk target below 1 is given for the 0/100 loss (a risk in percent:
    0.02 means 0.02 %, not 2 %), and when the report rows' selective risk exceeds a risk
    target beyond its 95 % interval (the calibration rows were too few for so small a risk).

    *Sample weights* (``fit(X, y, sample_weight=w)``, routed as scikit-learn's meta-estimators
    route them: see :meth:`fit`) reach the classifier only. The uncertainty score, the choice
    of C and the selection function give every row weight one: the learned scores fit no
    weights, and a target is a statement about the inputs :meth:`predict` will see (a coverage
    is a share of them, a certified bound assumes unweighted i.i.d. calibration rows), which
    weighting the calibration rows would change rather than estimate better.

    *Model selection.* :meth:`score` is the selective accuracy, scikit-learn's default for a
    classifier, and it rewards rejecting more: ``GridSearchCV`` over ``value`` with the default
    scoring picks the lowest coverage of the grid. Search with
    :func:`rejectopt.metrics.selective_scorer` instead: ``"aurc"`` (the AuRC of the learned
    score, lower is better; the scorer returns its negative, as scikit-learn's ``neg_``
    scorers do), ``"selective_risk"`` at the fitted target, or ``"coverage"``.

    References
    ----------
    .. [1] V. Franc, D. Prusa and V. Voracek, "Optimal Strategies for Reject Option
       Classifiers", Journal of Machine Learning Research 24(11):1-49, 2023.

    Examples
    --------
    >>> from sklearn.datasets import load_digits
    >>> from sklearn.linear_model import LogisticRegression
    >>> X, y = load_digits(return_X_y=True)
    >>> model = SelectiveClassifier(LogisticRegression(max_iter=2000), value=0.9, C_grid=(1.0,))
    >>> model = model.fit(X[:1200], y[:1200])
    >>> {part: len(rows) for part, rows in model.split_.items()}  # cross-fitted: the classifier sees all
    {'classifier': 1200, 'fit': 420, 'validation': 180, 'calibration': 360, 'report': 240}
    >>> labels = model.predict(X[1200:])
    >>> bool(abs((labels != -1).mean() - 0.9) < 0.1)
    True
    """

    def __init__(
        self,
        estimator,
        *,
        uncertainty_score=AUTO,
        target="coverage",
        value=0.8,
        reject_label=None,
        prefit=False,
        classifier_fraction=0.5,
        calibration_fraction=0.3,
        report_fraction=0.2,
        validation_fraction=0.3,
        C_grid=SCORE_C_GRID,
        loss="zero_one",
        tie_breaking="hash",
        random_state=0,
        n_jobs=1,
        confidence=None,
        cv=_DEFAULT_CV,
        loss_bound=None,
        min_coverage=None,
    ):
        self.estimator = estimator
        self.uncertainty_score = uncertainty_score
        self.target = target
        self.value = value
        self.reject_label = reject_label
        self.prefit = prefit
        self.classifier_fraction = classifier_fraction
        self.calibration_fraction = calibration_fraction
        self.report_fraction = report_fraction
        self.validation_fraction = validation_fraction
        self.C_grid = C_grid
        self.loss = loss
        self.tie_breaking = tie_breaking
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.confidence = confidence
        self.cv = cv
        self.loss_bound = loss_bound
        self.min_coverage = min_coverage

    #: The parameters checked by one table (``rejectopt._params.validate_params``) before any fit;
    #: ``target``, ``value``, ``confidence`` and ``min_coverage`` are checked as a
    #: :class:`~rejectopt.targets.Target` (the floor's range is declared here too),
    #: ``uncertainty_score`` against the score registry and ``C_grid`` as a sequence.
    _param_constraints = {
        **{
            f"{part}_fraction": Interval(0, 1)
            for part in ("classifier", "calibration", "report", "validation")
        },
        "loss": Options(*_LOSSES),
        "tie_breaking": Options(*TIE_BREAKING),
        "n_jobs": [NONE, Interval(1, None, integer=True, closed="left")],
        "random_state": [
            Interval(0, None, integer=True, closed="left", label="a non-negative integer"),
            NONE,
            InstanceOf(np.random.RandomState, np.random.Generator),
        ],
        "cv": [
            NONE("None (a held-out split)"),
            Interval(2, None, integer=True, closed="left", label="a number of folds >= 2"),
            HasMethods(
                "split", "get_n_splits", label="a splitter such as sklearn.model_selection.KFold(5)"
            ),
        ],
        "loss_bound": [
            NONE("None (the span of the labels)"),
            Interval(0, None, label="the largest loss a prediction can have, a number > 0"),
        ],
        "min_coverage": [NONE("None (no coverage floor)"), Interval(0, 1)],
    }

    # ----------------------------------------------------------------------------------------
    # Parameter checks
    # ----------------------------------------------------------------------------------------
    def _target(self):
        """The :class:`~rejectopt.targets.Target` of ``target``, ``value``, ``confidence`` and
        ``min_coverage``: its checks, in this estimator's parameters."""
        _check_number(self.value, "value", "a coverage, selective risk or reject cost")
        if self.confidence is not None:
            _check_number(self.confidence, "confidence", "a level 1 - delta in (0, 1), or None")
        if self.min_coverage is not None:
            _check_number(self.min_coverage, "min_coverage", "a coverage floor in (0, 1), or None")
        extra = "" if self.confidence is None else f", confidence={self.confidence!r}"
        try:
            target = Target(self.target, self.value, self.confidence)
        except ValueError as err:
            raise ValueError(
                f"target={self.target!r}, value={self.value!r}{extra}: {err}"
            ) from None
        if self.min_coverage is None:
            return target
        if target.kind != "risk" or target.confidence is None:
            raise ValueError(
                f"min_coverage={self.min_coverage!r} is the coverage floor of a certified risk "
                f"target (a release gate), not of target={target.kind!r} with confidence="
                f"{self.confidence!r}: pass target='risk' and a confidence, e.g. "
                "target='risk', value=5, confidence=0.9, min_coverage=0.5"
            )
        if self.min_coverage == 1:
            raise ValueError(
                f"min_coverage=1 leaves the full set only, whose risk is the target with no floor: "
                f"drop min_coverage (target='risk', value={target.value:g}, confidence="
                f"{format_level(target.confidence)})"
            )
        try:
            return Target("risk", target.value, target.confidence, self.min_coverage)
        except ValueError as err:
            raise ValueError(
                f"target={self.target!r}, value={self.value!r}{extra}, "
                f"min_coverage={self.min_coverage!r}: {err}"
            ) from None

    def _loss_bound(self, kind, loss):
        """The largest loss: 100 for the 0/100 loss; for the MAE, ``loss_bound``, else the label range."""
        if kind != "risk":
            return None
        if self.loss == "zero_one":
            return 100.0
        if self.loss_bound is not None:
            return float(self.loss_bound)
        return max(
            float(np.ptp(np.asarray(self.classes_, dtype=np.float64))), float(loss.max(initial=0.0))
        )

    def _score_spec(self):
        """``(registry entry or None, instance or None, choice)`` of ``uncertainty_score``, validated.

        ``choice`` is ``"auto"``, the name of a baseline of the classifier's probabilities, or None
        (a learned score is forced: the registry entry's or the instance).
        """
        spec = self.uncertainty_score
        if isinstance(spec, str):
            if spec == AUTO or spec in baseline_names("proba"):
                return None, None, spec
            try:
                info = get_score(spec)
            except ValueError as err:
                raise ValueError(f"uncertainty_score: {err}") from None
            if info.baseline:
                raise ValueError(
                    f"uncertainty_score={spec!r} is computed from outputs a classifier of this "
                    f"estimator does not give; choose {AUTO!r}, a learned score "
                    f"({', '.join(score_names(learned=True))}) or a baseline of the class "
                    f"probabilities ({', '.join(baseline_names('proba'))})"
                )
            return info, None, None
        if not (hasattr(spec, "fit") and hasattr(spec, "predict") and hasattr(spec, "get_params")):
            raise ValueError(
                f"uncertainty_score must be {AUTO!r}, the name of a learned score "
                f"({', '.join(score_names(learned=True))}) or of a baseline of the class "
                f"probabilities ({', '.join(baseline_names('proba'))}), or an unfitted score "
                f"estimator such as SELE(); got {spec!r}"
            )
        return None, spec, None

    def _n_jobs(self):
        return None if self.n_jobs is None else int(self.n_jobs)

    def _score_template(self, instance, n_classes, seed):
        """An unfitted copy of a score instance with this estimator's classes, seed and threads."""
        params = instance.get_params()
        updates = {"n_classes": n_classes, "random_state": seed, "n_jobs": self._n_jobs(), "C": 0.0}
        updates = {
            k: v for k, v in updates.items() if k in params and not (k == "n_jobs" and v is None)
        }
        return clone(instance).set_params(**updates)

    def _C_grid(self):
        try:
            grid = [float(c) for c in self.C_grid]
        except (TypeError, ValueError):
            grid = []
        if not grid or not all(math.isfinite(c) and c >= 0 for c in grid):
            raise ValueError(
                f"C_grid must be a non-empty sequence of finite numbers >= 0, got {self.C_grid!r}"
            )
        return grid

    def _seed(self):
        state = self.random_state
        if isinstance(state, numbers.Integral) and not isinstance(state, bool):
            return int(state)
        if isinstance(state, np.random.Generator):
            return int(state.integers(2**31 - 1))
        return int(check_random_state(state).randint(2**31 - 1))

    def _cv(self):
        """``cv`` checked: None, a number of folds >= 2, or a splitter such as ``KFold(5)``; None when prefitted
        (ignored, as ``classifier_fraction`` is: nothing is fitted to cross-fit)."""
        cv = self.cv
        if cv is None or self._prefit():
            return None
        if isinstance(cv, numbers.Integral):
            return int(cv)
        if get_routing_for_object(cv).consumes("split", ["groups"]):
            raise ValueError(
                f"cv={cv!r} splits by groups, which SelectiveClassifier does not take: fit's "
                "parameters go to the estimator, and the calibration and report rows are drawn "
                "at random, not by group, so rows of one group would reach both the classifier and "
                "the rows that certify it. Pass a splitter without groups (e.g. StratifiedKFold(5)), "
                "or cv=None with whole groups held out of X"
            )
        return cv

    def _check_fractions(self):
        classifier, calibration, report, validation = (
            float(getattr(self, f"{part}_fraction"))
            for part in ("classifier", "calibration", "report", "validation")
        )
        if calibration + report >= 1.0:
            raise ValueError(
                f"calibration_fraction + report_fraction must be < 1, got "
                f"{self.calibration_fraction!r} + {self.report_fraction!r}"
            )
        return classifier, calibration, report, validation

    # ----------------------------------------------------------------------------------------
    # Fit
    # ----------------------------------------------------------------------------------------
    def _split(self, n, seed, cv, certified):
        """Row indices of every part; the parts after the classifier's come from ``split_rows``.

        With ``cv``, ``split_rows`` cuts all rows, and the classifier learns from all of them, or,
        for a certified target, from the fit and validation rows only (see the class Notes).
        """
        classifier_fraction, calibration, report, validation = self._check_fractions()
        if cv is not None:
            try:
                parts = split_rows(n, calibration, report, validation, seed, min_rows=1)
            except ValueError as err:
                raise ValueError(
                    f"SelectiveClassifier: too few samples, n_samples = {n} ({err}); every part "
                    f"needs at least 1 sample"
                ) from None
            classifier_rows = (
                np.union1d(parts["fit"], parts["validation"])
                if certified
                else np.arange(n, dtype=np.intp)
            )
            return {"classifier": classifier_rows, **parts}, np.arange(n, dtype=np.intp), parts
        if self._prefit():
            classifier_rows, rest = np.array([], dtype=np.intp), np.arange(n)
        else:
            n_classifier = int(round(classifier_fraction * n))
            order = np.random.default_rng([seed, 1]).permutation(n)
            classifier_rows, rest = np.sort(order[:n_classifier]), np.sort(order[n_classifier:])
        try:
            if not self._prefit() and min(classifier_rows.size, rest.size) < 1:
                raise ValueError(
                    f"{classifier_rows.size} rows for the classifier and {rest.size} for the rest"
                )
            parts = split_rows(rest.size, calibration, report, validation, seed, min_rows=1)
        except ValueError as err:
            raise ValueError(
                f"SelectiveClassifier: too few samples, n_samples = {n} ({err}); every part "
                f"needs at least 1 sample"
            ) from None
        return (
            {"classifier": classifier_rows, **{name: rest[rows] for name, rows in parts.items()}},
            rest,
            parts,
        )

    def _losses(self, y, y_pred):
        if self.loss == "mae":
            try:
                y, y_pred = np.asarray(y, dtype=np.float64), np.asarray(y_pred, dtype=np.float64)
            except (TypeError, ValueError):
                raise ValueError("loss='mae' needs numeric labels and predictions") from None
        return per_example_loss(self.loss, y, y_pred)

    def _class_index(self, y_pred):
        """Position of each predicted label in ``classes_``; ``len(classes_)`` for an unknown label."""
        y_pred = np.asarray(y_pred)
        n_classes = len(self.classes_)
        try:
            position = np.clip(np.searchsorted(self.classes_, y_pred), 0, n_classes - 1)
            known = np.asarray(self.classes_[position] == y_pred, dtype=bool)
        except TypeError:
            lookup = {label: k for k, label in enumerate(self.classes_.tolist())}
            position = np.array(
                [lookup.get(label, n_classes) for label in y_pred.tolist()], dtype=np.intp
            )
            known = position < n_classes
        return np.where(known, position, n_classes).astype(np.intp)

    @staticmethod
    def _posterior(model, X, y, needs):
        """``(true-class probability or None, class probabilities)`` of ``model`` on rows ``X``.

        ``needs`` names the score that cannot do without them (``"tcp"``, a forced baseline),
        else None: then a classifier without ``predict_proba`` gives None (``"auto"`` leaves the
        baselines out), and one without ``classes_`` gives no true-class probability (no TCP).
        """
        if not hasattr(model, "predict_proba"):
            if needs is None:
                return None
            raise ValueError(f"uncertainty_score={needs!r} needs an estimator with predict_proba")
        proba = np.asarray(model.predict_proba(X), dtype=np.float64)
        if proba.ndim != 2 or proba.shape[0] != len(y):
            raise ValueError(
                f"estimator.predict_proba returned shape {proba.shape} for {len(y)} rows"
            )
        if not hasattr(model, "classes_"):
            if needs == "tcp":
                raise ValueError(
                    f"uncertainty_score='tcp' needs the estimator's classes_ (the class of each "
                    f"predict_proba column); {type(model).__name__} has predict_proba but no "
                    "classes_: set it on the classifier, or choose uncertainty_score='sele'"
                )
            return None, proba
        classes = np.asarray(model.classes_)
        lookup = {label: k for k, label in enumerate(classes.tolist())}
        column = np.array(
            [lookup.get(label, -1) for label in np.asarray(y).tolist()], dtype=np.intp
        )
        true_class = proba[np.arange(len(column)), np.maximum(column, 0)]
        return np.where(column >= 0, true_class, 0.0), proba

    def fit(self, X, y, **fit_params):
        """Fit the classifier (unless prefitted), the uncertainty score and the selection function.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        **fit_params : dict
            Parameters of the classifier's ``fit``, such as ``sample_weight``: those of one value
            per sample are cut to the classifier part's rows. With metadata routing enabled
            (``sklearn.set_config(enable_metadata_routing=True)``) they are routed as the
            estimator requests them (``estimator.set_fit_request(sample_weight=True)``), as
            scikit-learn's meta-estimators do. With routing off, ``sample_weight`` alone is
            passed on, when the estimator's ``fit`` accepts it (as scikit-learn's
            ``CalibratedClassifierCV`` does), and refused naming the estimator otherwise. A
            prefitted estimator (``prefit=True`` or a ``FrozenEstimator``) is not fitted here,
            so fit parameters for it are refused. The uncertainty score, the choice of C and the
            selection function use every row with weight one (see the class Notes). With
            cross-fitting, each fold's clone gets the values of its own training rows.

        Returns
        -------
        self

        Raises
        ------
        ValueError
            A bad parameter (``value`` or ``confidence`` given as text or a bool, out of range,
            a confidence with ``target="reject-cost"``, a bad ``cv`` ...), refused before the
            classifier is fitted; bad rows (NaN, text, a value out of range), too few rows for
            the parts or the folds.
        InfeasibleTargetError
            No selection function meets the target on the calibration rows (a
            :class:`ValueError`); for a certified target it carries ``best_bound``,
            ``confidence`` and ``n_calibration``, as :meth:`rejectopt.targets.Target.fit` gives
            them.
        """
        routed = self._route_fit_params(fit_params)
        target, spec = self._check_params()
        X_raw, X, y = self._check_rows(X, y)
        seed = self._seed()
        cv = self._cv()
        split, rest, parts = self._split(
            X.shape[0], seed, cv, certified=target.confidence is not None
        )
        info, instance, choice = spec
        # the posterior is read whenever the classifier gives one: "auto" compares the baselines
        # with the learned scores, and a forced learned score is compared with MCP (a warning)
        posterior = (
            "tcp"
            if _learns_from_posterior(info, instance)
            else (choice if choice not in (None, AUTO) else None)
        )
        if cv is None:
            for name in ("cv_folds_", "cv_predictions_"):  # of an earlier fit with cross-fitting
                self.__dict__.pop(name, None)
            self.estimator_ = self._fit_estimator(X_raw, X, y, split["classifier"], routed)
            y_pred, outputs = self._predictions(self.estimator_, X_raw, X, y, rest, posterior)
        else:
            self.estimator_, y_pred, outputs = self._cross_fit(
                X_raw, X, y, split["classifier"], cv, seed, routed, posterior
            )
        classes, loss = self._losses_of_rest(
            y,
            rest,
            y_pred,
            "of the rows after the classifier's part"
            if cv is None
            else "of the rows (out of fold: each by a classifier that did not see it)",
        )
        self._check_loss_bound(target, loss)
        fitted, inputs = self._fit_score_and_selection(
            X, rest, parts, classes, loss, target, spec, seed, outputs
        )
        self.uncertainty_score_, self.C_, self.validation_aurc_, self.selection_ = (
            fitted.score,
            fitted.C,
            dict(fitted.validation_aurc),
            fitted.selection,
        )
        self.split_, self.random_seed_ = split, seed
        report = parts["report"]
        self._report(
            inputs[report], classes[report], loss[report], fitted.uncertainty[report], target
        )
        return self

    def _check_params(self):
        """The target and ``(registry entry, instance)`` of the score, once every parameter is checked."""
        target = self._target()
        validate_params(type(self).__name__, self.get_params(deep=False), self._param_constraints)
        self._C_grid()
        spec = self._score_spec()
        prefit = self._prefit()
        if not hasattr(self.estimator, "predict") or not (prefit or hasattr(self.estimator, "fit")):
            raise ValueError(
                f"estimator must have predict{'' if prefit else ' and fit'}; got {self.estimator!r}"
            )
        if self.loss_bound is not None and self.loss != "mae":
            raise ValueError(
                f"loss_bound={self.loss_bound!r} applies to loss='mae' only: the {self.loss} loss is "
                "bounded by its definition (100)"
            )
        self._warn(risk_in_percent(target, self.loss, _named))
        return target, spec

    def _check_loss_bound(self, target, loss):
        """Refuse a loss above ``loss_bound``; warn when a certified risk takes B from the labels.

        The certificate holds for losses in [0, B] with B fixed before the rows are drawn; the
        span of the labels read is the MAE's ``K - 1`` only when the smallest and largest classes
        occur, so a class missing from the sample makes B, and the certified risk, too small.
        """
        if self.loss != "mae":
            return
        worst = float(loss.max(initial=0.0))
        if self.loss_bound is not None:
            if worst > self.loss_bound:
                raise ValueError(
                    f"loss_bound={self.loss_bound!r}: a prediction has the loss {worst:g}, above it; "
                    "give the largest loss a prediction can have (K - 1 for K ordinal labels)"
                )
            return
        if target.kind == "risk" and target.confidence is not None:
            self._warn(
                f"{_named(target)} with loss='mae': the certificate takes B = "
                f"{self._loss_bound('risk', loss):g}, the span of the labels and predictions, as the "
                "largest loss; it is the MAE's K - 1 only when the smallest and largest classes "
                "occur: pass loss_bound=K-1 if one may be missing"
            )

    def _check_rows(self, X, y):
        """``(X as given, X as a float array, y)``, refused as ``apply`` refuses rows (see the class Notes)."""
        X_raw = X
        _check_numeric_columns(X)
        X, y = validate_data(self, X, y, dtype=np.float64, ensure_all_finite=False)
        check_features(X)
        check_classification_targets(y)
        self._check_reject_label(np.unique(y))
        return X_raw, X, y

    def _fit_estimator(self, X_raw, X, y, rows, routed):
        """The classifier: ``estimator`` itself when prefitted, else a clone fitted on ``rows``."""
        if not self._prefit():
            params = _rows_of_params(routed, X.shape[0], rows)
            return clone(self.estimator).fit(_take_rows(X_raw, X, rows), y[rows], **params)
        why = (
            "prefit=True" if self.prefit else "the estimator is a FrozenEstimator (used as fitted)"
        )
        if routed:
            raise ValueError(
                f"fit parameters {sorted(routed)} are for the estimator's fit, but {why}: it is not "
                "fitted here; fit it with them before wrapping it"
            )
        try:
            check_is_fitted(self.estimator)
        except NotFittedError as err:
            raise ValueError(f"{why} but the estimator is not fitted: {err}") from None
        except TypeError:
            pass  # not a scikit-learn estimator: trust it
        return self.estimator

    def _predictions(self, model, X_raw, X, y, rows, posterior):
        """``model``'s predictions on ``rows`` and its posterior there (:meth:`_posterior`, which
        ``posterior`` names the score needing it for, or None)."""
        y_pred = np.asarray(model.predict(_take_rows(X_raw, X, rows)))
        if y_pred.shape != (rows.size,):
            raise ValueError(
                f"estimator.predict returned shape {y_pred.shape}, expected {(rows.size,)}"
            )
        _refuse_continuous(model, y_pred)
        return y_pred, self._posterior(model, _take_rows(X_raw, X, rows), y[rows], posterior)

    def _cross_fit(self, X_raw, X, y, rows, cv, seed, routed, posterior):
        """The classifier refitted on ``rows``, and the predictions the score and the selection read.

        Each row of ``rows`` is predicted by the clone fitted on the other folds (out of fold, as
        ``sklearn.model_selection.cross_val_predict``); any other row (the calibration and report
        rows of a certified target) by the classifier fitted on all of ``rows``, which never saw it.
        Sets :attr:`cv_folds_` and :attr:`cv_predictions_`.
        """
        n = X.shape[0]
        splitter = (
            StratifiedKFold(cv, shuffle=True, random_state=seed)
            if isinstance(cv, numbers.Integral)
            else cv
        )
        try:
            folds = [
                (rows[np.asarray(train)], rows[np.asarray(test)])
                for train, test in splitter.split(X[rows], y[rows])
            ]
        except ValueError as err:
            raise ValueError(
                f"cv={cv!r}: cannot cut the {rows.size} rows the classifier learns from (n_samples = "
                f"{n}) into folds ({err}); lower cv, or pass cv=None (a held-out split)"
            ) from None
        tested = (
            np.sort(np.concatenate([test for _, test in folds]))
            if folds
            else np.array([], dtype=np.intp)
        )
        if tested.size != rows.size or not np.array_equal(tested, rows):
            raise ValueError(
                f"cv={cv!r} must put each of the {rows.size} rows in exactly one test fold (as KFold "
                "does) so that each gets one out-of-fold prediction; its folds test "
                f"{tested.size} rows ({np.unique(tested).size} distinct)"
            )
        final = clone(self.estimator).fit(
            _take_rows(X_raw, X, rows), y[rows], **_rows_of_params(routed, n, rows)
        )
        where, predicted, targets = [], [], []
        for k, (train, test) in enumerate(folds):
            model = self._fit_fold(X_raw, X, y, (k, len(folds), train), routed)
            y_pred, fit_target = self._predictions(model, X_raw, X, y, test, posterior)
            where.append(test), predicted.append(y_pred), targets.append(fit_target)
        others = np.setdiff1d(np.arange(n), rows)
        if others.size:
            y_pred, fit_target = self._predictions(final, X_raw, X, y, others, posterior)
            where.append(others), predicted.append(y_pred), targets.append(fit_target)
        order = np.argsort(np.concatenate(where), kind="stable")
        y_pred = np.concatenate(predicted)[order]
        self.cv_folds_, self.cv_predictions_ = folds, y_pred
        return final, y_pred, _stacked_posteriors(targets, order)

    def _fit_fold(self, X_raw, X, y, fold, routed):
        """A clone fitted on one fold's training rows; its failure names the fold and its classes.

        A fold whose training rows lack classes (a splitter without stratification, or a class of
        a few rows) fails inside the classifier with a message naming no fold.
        """
        k, n_folds, train = fold
        try:
            return clone(self.estimator).fit(
                _take_rows(X_raw, X, train), y[train], **_rows_of_params(routed, X.shape[0], train)
            )
        except ValueError as err:
            held = np.unique(y[train]).tolist()
            missing = np.setdiff1d(np.unique(y), y[train]).tolist()
            lacks = f", lacking {missing}" if missing else ""
            raise ValueError(
                f"cv={self.cv!r}: fitting {type(self.estimator).__name__} on fold {k + 1} of "
                f"{n_folds} failed; its {train.size} training rows hold the classes {held}{lacks}: "
                f"{err}. Use a stratified splitter (e.g. StratifiedKFold), fewer folds, or cv=None"
            ) from err

    def _losses_of_rest(self, y, rest, y_pred, where):
        """The predictions on the rows after the classifier's part as indices of :attr:`classes_` (which it sets),
        and their losses.

        Everything after works on these rows, indexed by the parts of ``split_rows``, exactly like
        ``select`` on its table.
        """
        y_rest = y[rest]
        self.classes_ = self._classes(y, y_pred)
        self._check_reject_label(self.classes_)
        loss = self._losses(y_rest, y_pred)
        self._warn(nothing_to_learn(loss, where), labels_never_predicted(y_rest, y_pred))
        return self._class_index(y_pred), loss

    def _fit_score_and_selection(self, X, rest, parts, classes, loss, target, spec, seed, outputs):
        """The candidate scores learned on the rows after the classifier's part, the chosen one's selection.

        Every candidate is learned by :func:`rejectopt.fitting.learn_score` on the fit and
        validation rows alone, and ``"auto"`` keeps the one of least validation AuRC. The
        calibration rows, where the selection function (and a certified target's bound) is
        fitted, play no part in the choice: given the choice, they are as independent of the
        score as with a fixed score, so the guarantee of a certified target holds unchanged.
        Returns the fit and the chosen score's inputs on those rows (features, or probabilities).
        """
        true_class, proba = outputs if outputs is not None else (None, None)
        candidates = self._candidates(spec, proba is not None, true_class is not None, seed)
        learned, inputs = {}, {}
        for name, score in candidates.items():
            baseline = isinstance(score, ConfidenceScore)
            inputs[name] = proba if baseline else X[rest]
            learned[name] = learn_score(
                inputs[name],
                classes,
                loss,
                parts,
                score=score,
                n_classes=len(self.classes_),
                C_grid=self._C_grid(),
                seed=seed,
                n_jobs=self._n_jobs(),
                fit_target=true_class if _needs_posterior(name, score) else None,
            )
        if spec[2] == AUTO:
            # the first candidate (MCP, else SELE) is kept unless beaten beyond noise
            chosen, aurcs = choose_score(learned, loss, parts["validation"], seed=seed)
        else:  # forced: the first candidate; MCP, when there, only to compare with
            chosen, aurcs = next(iter(learned)), {k: float(v.aurc) for k, v in learned.items()}
            self._warn(
                loses_to_confidence(
                    chosen,
                    aurcs,
                    parts["validation"].size,
                    lambda name: f"uncertainty_score={name!r}",
                    _RISK_UNITS[self.loss],
                )
            )
        self.chosen_score_, self.candidate_aurc_ = chosen, aurcs
        try:
            fitted = fit_selection(
                learned[chosen],
                loss,
                target,
                parts,
                loss_bound=self._loss_bound(target.kind, loss),
            )
        except InfeasibleTargetError as err:
            error = InfeasibleTargetError(
                f"cannot meet {_named(target)} on the {parts['calibration'].size} "
                f"calibration rows: {err}"
            )
            for name in (
                "best_bound",
                "rows_needed",
                "confidence",
                "n_calibration",
            ):  # a certified target's numbers
                if hasattr(err, name):
                    setattr(error, name, getattr(err, name))
            raise error from None
        return fitted, inputs[chosen]

    def _candidates(self, spec, has_proba, has_true_class, seed):
        """``name -> unfitted score`` to learn: the one forced (then MCP to compare), or ``"auto"``'s.

        ``"auto"`` tries the baselines of the class probabilities first (the incumbent MCP, then
        the others), then the registry's learned scores that work on any features, SELE (the
        paper's, the incumbent without probabilities) first; TCP only with the true class's
        probability.
        """
        info, instance, choice = spec
        n_classes = len(self.classes_)
        if choice == AUTO:
            names = baseline_names("proba") if has_proba else []
            learned = [
                n
                for n in score_names(learned=True, general=True)
                if has_true_class or not get_score(n).needs_posteriors
            ]
            names += sorted(learned, key=lambda n: n != "sele")
        elif choice is not None:
            return {choice: ConfidenceScore(choice, "proba")}
        else:
            name = info.name if info is not None else type(instance).__name__
            names = [name] + (["mcp"] if has_proba and name != "mcp" else [])
        out = {}
        for name in names:
            if name in baseline_names("proba") and has_proba:
                out[name] = ConfidenceScore(name, "proba")
            elif info is None and instance is not None and name == type(instance).__name__:
                out[name] = self._score_template(instance, n_classes, seed)
            else:
                out[name] = get_score(name).make(
                    0.0, n_classes=n_classes, random_state=seed, n_jobs=self._n_jobs()
                )
        return out

    def _report(self, X, classes, loss, uncertainty, target):
        """:attr:`report_` on the held-out report rows, and the warnings on what they show."""
        point = operating_point(
            loss, uncertainty, self.selection_, loss_bound=self._loss_bound("risk", loss)
        )
        decided = decide(
            self.uncertainty_score_,
            self.selection_,
            X,
            classes,
            seed=self.random_seed_,
            tie_breaking=self.tie_breaking,
        ).accept
        self.report_ = {
            "coverage_expected": point.coverage,
            "coverage_reached": float(decided.mean()),
            "selective_risk": None if math.isnan(point.selective_risk) else point.selective_risk,
            "risk_unit": _RISK_UNITS[self.loss],
            "n_rows": int(loss.size),
        }
        if target.min_coverage is not None:  # a release gate: its theorem, as select states it
            self.report_["guarantee"] = gate_statement(
                self.selection_.certificate, _RISK_UNITS[self.loss]
            )
        ties = int(np.sum(uncertainty == self.selection_.threshold))
        self._warn(
            missed_coverage(
                target,
                _named,
                loss.size,
                float(decided.mean()),
                wilson_interval(float(decided.sum()), loss.size),
                draws=(ties, self.selection_.accept_prob, self.tie_breaking),
            ),
            missed_risk(
                target,
                _named,
                loss.size,
                point.selective_risk,
                point.selective_risk_ci,
                point.coverage,
                float(np.mean(loss)),
                _RISK_UNITS[self.loss],
            ),
        )

    @staticmethod
    def _warn(*messages):
        """Warn each message of :mod:`rejectopt._diagnostics` that is not None, at the line calling :meth:`fit`.

        Called by the steps of :meth:`fit`, two calls below its caller.
        """
        for message in messages:
            if message is not None:
                warnings.warn(message, UserWarning, stacklevel=4)

    def _prefit(self):
        """Whether the estimator is used as fitted: ``prefit=True``, or a ``FrozenEstimator`` (which never refits)."""
        return bool(self.prefit) or isinstance(self.estimator, FrozenEstimator)

    def _route_fit_params(self, fit_params):
        """The estimator's fit parameters: routed by scikit-learn's metadata routing, or ``sample_weight`` only."""
        if get_config()["enable_metadata_routing"]:
            return dict(process_routing(self, "fit", **fit_params).estimator.fit)
        unknown = sorted(set(fit_params) - {"sample_weight"})
        if unknown:
            raise ValueError(
                f"SelectiveClassifier.fit got {unknown}: with metadata routing off, only sample_weight "
                "is passed to the estimator's fit; enable routing with "
                "sklearn.set_config(enable_metadata_routing=True) and request them on the estimator "
                "(estimator.set_fit_request(...))"
            )
        if fit_params.get("sample_weight") is None:
            return {}
        if not self._prefit() and not has_fit_parameter(self.estimator, "sample_weight"):
            raise ValueError(
                f"sample_weight was given but {type(self.estimator).__name__}.fit does not accept "
                "sample_weight; the uncertainty score and the selection function do not use weights "
                "either (see SelectiveClassifier's Notes), so they would be ignored: drop them, or "
                "wrap a classifier that takes them"
            )
        return {"sample_weight": fit_params["sample_weight"]}

    def get_metadata_routing(self):
        """Metadata routing of this estimator: ``fit`` parameters go to the estimator's ``fit``.

        :meth:`score` consumes ``sample_weight`` itself (``set_score_request``).

        Returns
        -------
        sklearn.utils.metadata_routing.MetadataRouter
        """
        return (
            MetadataRouter(owner=type(self).__name__)
            .add_self_request(self)
            .add(
                estimator=self.estimator,
                method_mapping=MethodMapping().add(caller="fit", callee="fit"),
            )
        )

    def _check_reject_label(self, classes):
        """The label of a rejection among ``classes`` (``reject_label`` or its default), refused if
        it is one of them: a rejection would read as that class."""
        classes = np.asarray(classes).tolist()
        label = _default_reject_label(classes) if self.reject_label is None else self.reject_label
        if not any(_same_label(value, label) for value in classes):
            return label
        if self.reject_label is not None:
            raise ValueError(
                f"reject_label={label!r} is one of the classes {classes}; choose another "
                f"reject_label, e.g. reject_label={_free_label(label, classes)!r}"
            )
        kind = "text" if isinstance(label, str) else "numeric"
        raise ValueError(
            f"reject_label=None (the default) labels a rejection {label!r} for {kind} classes, and "
            f"{label!r} is one of the classes {classes}; pass a label that is no class, e.g. "
            f"reject_label={_free_label(label, classes)!r}"
        )

    def _classes(self, y, y_pred):
        labels = [np.unique(y), np.unique(y_pred)]
        if hasattr(self.estimator_, "classes_"):
            labels.append(np.asarray(self.estimator_.classes_))
        kinds = {part.dtype.kind for part in labels if part.size}
        try:
            if kinds <= set("biuf") or kinds <= set(
                "US"
            ):  # else numpy would compare 0 with '0' as equal
                return np.unique(np.concatenate(labels))
        except (TypeError, ValueError):
            pass
        # labels of types that do not compare (0 and 'a'): y's first, then the classifier's own, so
        # that each predicted label has a place (an unplaced one would break the score's classes)
        known = np.unique(y).tolist()
        seen = set(known)
        extra = [
            v
            for part in labels[1:]
            for v in np.asarray(part).tolist()
            if not (v in seen or seen.add(v))
        ]
        return np.array(known + extra, dtype=object)

    # ----------------------------------------------------------------------------------------
    # Predict
    # ----------------------------------------------------------------------------------------
    def _decide(self, X):
        """Predictions of the classifier and the guarded decisions of :func:`rejectopt.model.decide` for ``X``."""
        check_is_fitted(self, ["selection_", "uncertainty_score_"])
        X_raw = X
        _check_numeric_columns(X)
        X = validate_data(self, X, dtype=np.float64, reset=False, ensure_all_finite=False)
        self._refuse_non_finite(X)
        extreme, first = out_of_range(X, *feature_bounds(self.uncertainty_score_))
        if (
            first is not None
        ):  # rejected by decide; the classifier never sees them (it may overflow, or fail)
            i, j = first
            where = out_of_range_message(X[i, j], f"at row {i}, {self._column(j)}", stated=False)
            warnings.warn(
                f"{int(extreme.sum())} row(s) with a value out of range (first: {where}): rejected",
                stacklevel=3,
            )
            safe = np.flatnonzero(~extreme)
            y_safe = (
                np.asarray(self.estimator_.predict(_take_rows(X_raw, X, safe)))
                if safe.size
                else self.classes_[:0]
            )
            y_pred = np.empty(X.shape[0], dtype=np.result_type(y_safe.dtype, self.classes_.dtype))
            y_pred[safe], y_pred[extreme] = y_safe, self.classes_[0]
        else:
            y_pred = np.asarray(self.estimator_.predict(X_raw))
        classes = self._class_index(y_pred)
        decisions = decide(
            self.uncertainty_score_,
            self.selection_,
            self._score_inputs(X_raw, X, extreme),
            classes,
            unseen=classes == len(self.classes_),
            seed=self.random_seed_,
            tie_breaking=self.tie_breaking,
        )
        return y_pred, decisions

    def _score_inputs(self, X_raw, X, extreme):
        """What the score reads of ``X``: the features, or for a baseline the classifier's probabilities.

        A row out of range gets infinite probabilities, so that :func:`rejectopt.model.decide`
        rejects it as out of range, as it does the features; the classifier never sees it.
        """
        if not isinstance(self.uncertainty_score_, ConfidenceScore):
            return X
        safe = np.flatnonzero(~extreme)
        if not safe.size:
            return np.full((X.shape[0], 1), np.inf)
        values = np.asarray(
            self.estimator_.predict_proba(_take_rows(X_raw, X, safe)), dtype=np.float64
        )
        proba = np.full((X.shape[0], values.shape[1]), np.inf)
        proba[safe] = values
        return proba

    def _column(self, j):
        names = getattr(self, "feature_names_in_", None)
        return f"column {j} ({names[j]!r})" if names is not None else f"column {j}"

    def _refuse_non_finite(self, X):
        """NaN or an infinite value: a ValueError naming the first one's row and column (``apply`` refuses them too)."""
        bad = ~np.isfinite(X)
        if bad.any():
            i, j = np.argwhere(bad)[0]
            raise ValueError(
                f"X: value {value_text(X[i, j])} at row {i}, {self._column(j)} is not a finite number: "
                f"NaN or infinite values cannot be decided ({int(bad.any(axis=1).sum())} row(s) in all); "
                "apply refuses them too"
            )

    def predict(self, X):
        """Predicted labels, ``reject_label`` where the prediction is rejected.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
            The classifier's predictions, :attr:`reject_label_` on the rejected rows: of their
            dtype kind (numbers, text) when the label is of the same kind, which the default
            ``reject_label=None`` ensures, else object.

            .. versionchanged:: 0.8.0
               Text classes get ``"reject"`` by default, in an array of text, not ``-1`` in an
               object array.
        """
        y_pred, decisions = self._decide(X)
        label = self.reject_label_
        reject = np.asarray(label)
        numeric = y_pred.dtype.kind in "biuf" and reject.dtype.kind in "biuf"
        text = y_pred.dtype.kind in "US" and reject.dtype.kind == y_pred.dtype.kind
        dtype = np.result_type(y_pred.dtype, reject.dtype) if numeric or text else object
        labels = y_pred.astype(dtype, copy=True)
        labels[~decisions.accept] = label
        return labels

    @property
    def reject_label_(self):
        """The label :meth:`predict` gives a rejected input: ``reject_label``, or its default for
        :attr:`classes_` (``-1`` for numbers, ``"reject"`` for text)."""
        check_is_fitted(self, "classes_")
        return self._check_reject_label(self.classes_)

    def accept(self, X):
        """Whether the classifier's prediction on each row of ``X`` is accepted (ndarray of bool)."""
        return self._decide(X)[1].accept

    def predict_uncertainty(self, X):
        """Uncertainty ``s(x)`` of the classifier's prediction on each row of ``X`` (larger = more uncertain)."""
        return self._decide(X)[1].uncertainty

    def acceptance_probability(self, X):
        """Probability ``c(x)`` of accepting each prediction on ``X``: 1, ``selection_.accept_prob`` or 0 (eq. 25)."""
        return self._decide(X)[1].acceptance_probability

    @available_if(_estimator_has("predict_proba"))
    def predict_proba(self, X):
        """Class probabilities of the wrapped classifier, one column per class of :attr:`classes_`.

        The classifier's own posterior, whether or not the prediction is accepted (:meth:`accept`,
        :meth:`predict_uncertainty` give the reject option). A class of :attr:`classes_` that the
        classifier does not know (a label of ``y`` absent from its training part) gets probability 0.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
        """
        return self._own_columns(self._delegate("predict_proba", X), 0.0, "predict_proba")

    @available_if(_estimator_has("predict_log_proba"))
    def predict_log_proba(self, X):
        """Log class probabilities of the wrapped classifier (-inf for a class it does not know).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
        """
        return self._own_columns(
            self._delegate("predict_log_proba", X), -np.inf, "predict_log_proba"
        )

    @available_if(_estimator_has("decision_function"))
    def decision_function(self, X):
        """Decision function of the wrapped classifier, whether or not its prediction is accepted.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,) or (n_samples, n_classes)
            As the classifier returns it; refused when its classes differ from :attr:`classes_`
            (its columns would have no counterpart for the other classes).
        """
        return self._own_columns(self._delegate("decision_function", X), None, "decision_function")

    def _delegate(self, method, X):
        """The wrapped classifier's ``method`` on ``X``, after the checks :meth:`predict` makes."""
        check_is_fitted(self, ["selection_", "uncertainty_score_"])
        _check_numeric_columns(X)
        self._refuse_non_finite(
            validate_data(self, X, dtype=np.float64, reset=False, ensure_all_finite=False)
        )
        return np.asarray(getattr(self.estimator_, method)(X))

    def _own_columns(self, values, fill, method):
        """Put the classifier's columns (its ``classes_``) at their places in :attr:`classes_`."""
        theirs = getattr(self.estimator_, "classes_", None)
        n_classes = len(self.classes_)
        if theirs is None:
            if method == "decision_function" or (values.ndim == 2 and values.shape[1] == n_classes):
                return values
            raise ValueError(
                f"{method}: {type(self.estimator_).__name__} returns {values.shape[-1]} columns for the "
                f"{n_classes} classes {self.classes_.tolist()} and has no classes_ naming them"
            )
        theirs = np.asarray(theirs)
        if theirs.tolist() == self.classes_.tolist():
            return values
        if fill is None:
            raise ValueError(
                f"{method}: the classifier's classes {theirs.tolist()} differ from classes_ "
                f"{self.classes_.tolist()} (labels of y it never saw at fit, or labels it predicts that "
                f"y lacks), and its scores have no value for the others; use predict_proba"
            )
        out = np.full((values.shape[0], n_classes), fill, dtype=np.float64)
        out[:, self._class_index(theirs)] = values
        return out

    def score(self, X, y, sample_weight=None):
        """Selective accuracy: the (weighted) accuracy of the accepted predictions.

        It rises as coverage falls, so it does not rank targets: ``GridSearchCV`` over ``value``
        with this default scoring picks the lowest coverage; use
        :func:`rejectopt.metrics.selective_scorer` as ``scoring=``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,) or None

        Returns
        -------
        float
            NaN when no prediction is accepted (the selective accuracy is undefined).
        """
        y_pred, decisions = self._decide(X)
        accept = decisions.accept
        y = column_or_1d(y, warn=True)
        check_consistent_length(y_pred, y)
        weight = (
            np.ones(len(y))
            if sample_weight is None
            else column_or_1d(sample_weight).astype(np.float64)
        )
        check_consistent_length(y, weight)
        accepted_weight = float(weight[accept].sum())
        if accepted_weight <= 0:
            return float("nan")
        return float(
            np.dot(weight[accept], np.asarray(y_pred[accept] == y[accept], dtype=np.float64))
            / accepted_weight
        )


def _rows_of_params(params, n_samples, rows):
    """Fit parameters cut to ``rows``: those holding one value per sample (as scikit-learn's splitters do)."""
    out = {}
    for key, value in params.items():
        if (
            value is not None
            and not isinstance(value, (str, bytes))
            and hasattr(value, "__len__")
            and len(value) == n_samples
        ):
            out[key] = _safe_indexing(value, rows)
        else:
            out[key] = value
    if out.get("sample_weight") is not None and len(params["sample_weight"]) != n_samples:
        raise ValueError(
            f"sample_weight has {len(params['sample_weight'])} values for {n_samples} samples"
        )
    return out


def _refuse_continuous(model, y_pred):
    """Refuse continuous predictions: a regressor's outputs are no labels to accept or reject.

    Each distinct output would become a class of ``classes_`` (hundreds of floats), and the score
    would learn one weight vector per output value; scikit-learn's ``type_of_target`` tells them.
    """
    if y_pred.dtype.kind not in "fc" or type_of_target(y_pred) != "continuous":
        return
    name = type(model).__name__
    kind = "a regressor" if is_regressor(model) else "not a classifier's labels"
    first = y_pred[np.flatnonzero(y_pred != np.round(y_pred))[0]]
    raise ValueError(
        f"{name}.predict returns continuous values (e.g. {first!r}, {np.unique(y_pred).size} distinct): "
        f"{kind}; SelectiveClassifier wraps a classifier whose predictions are class labels. Wrap a "
        "classifier, or round the outputs to labels with a classifier of your own"
    )


def _default_reject_label(classes):
    """``reject_label=None``: ``"reject"`` if a class is text, else ``-1``, a label of the classes'
    type, so that :meth:`SelectiveClassifier.predict` keeps their dtype kind."""
    return "reject" if any(isinstance(value, str) for value in classes) else -1


def _free_label(label, classes):
    """A label of ``label``'s type that is no class, for the advice of a refused ``reject_label``."""
    if isinstance(label, str):
        words = ("reject", "abstain", "rejected", *(f"reject_{i}" for i in range(len(classes) + 1)))
        return next(word for word in words if word not in classes)
    numbers = [value for value in classes if isinstance(value, (int, float)) and np.isfinite(value)]
    return int(np.floor(min(numbers))) - 1 if numbers else -1


def _same_label(label, reject_label):
    try:
        return bool(label == reject_label)
    except (TypeError, ValueError):
        return False


def _needs_posterior(name, score):
    """Whether candidate ``name`` learns from the true class's probability (TCP, a plugin so registered)."""
    if name in SCORES and not isinstance(score, ConfidenceScore):
        return get_score(name).needs_posteriors
    return isinstance(score, TCP)


def _stacked_posteriors(parts, order):
    """The posteriors of the folds' rows, in row order; None when a part has none.

    A fold's classifier that never saw a class has one column fewer: the columns are padded with
    zeros, which changes none of the baselines (a probability of 0 is never the largest, nor
    second, and adds nothing to the entropy or DOCTOR's sum).
    """
    if any(part is None for part in parts):
        return None
    true_class = None if any(t is None for t, _ in parts) else np.concatenate([t for t, _ in parts])
    width = max(p.shape[1] for _, p in parts)
    proba = np.concatenate([np.pad(p, ((0, 0), (0, width - p.shape[1]))) for _, p in parts])
    return (None if true_class is None else true_class[order]), proba[order]


def _learns_from_posterior(info, template):
    if info is not None:
        return info.learns_from == "true_class_posterior"
    return isinstance(template, TCP)
