"""Learning a selective classifier from a classifier's predictions and losses.

:func:`fit_selective` learns a whole selective classifier -- a registered score with C chosen
by validation AuRC (Section 5.1 of Franc, Prusa & Voracek, 2023), then the selection function
for a :class:`~rejectopt.targets.Target` or :class:`~rejectopt.targets.OODTarget` -- on the rows
of :func:`split_rows`. ``python -m rejectopt select`` and
:class:`rejectopt.SelectiveClassifier` are both built on it.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
from sklearn.base import clone

from ._checks import as_ood_mask, check_open_unit
from .metrics import aurc
from .scores import get_score, select_C
from .scores._registry import call_score, constant_score_message
from .scores._tuning import SCORE_C_GRID
from .selective import SelectionFunction
from .targets import OODTarget, Target

# learn_score, fit_selection and LearnedScore, fit_selective's two halves, serve the estimator
# and the command line's choice of score; fit_selective stays the one public route
__all__ = ["SelectiveFit", "choose_score", "fit_selective", "split_rows"]


def split_rows(
    n: int,
    calibration_fraction: float = 0.3,
    report_fraction: float = 0.2,
    validation_fraction: float = 0.3,
    seed: int = 0,
    min_rows: int = 10,
) -> dict[str, np.ndarray]:
    """Seeded split of ``range(n)`` into train (``fit`` + ``validation``), ``calibration`` and ``report`` rows.

    Part sizes are ``round(fraction * n)``; the validation rows are the train rows' last share
    in the permutation. Each part holds sorted row indices.

    Parameters
    ----------
    n : int
    calibration_fraction : float, default=0.3
        Share of the rows that fits the selection function.
    report_fraction : float, default=0.2
        Share held out to report what the selective classifier achieves.
    validation_fraction : float, default=0.3
        Share of the train rows (the rest) that chooses C.
    seed : int, default=0
        Seed of the permutation (``numpy.random.default_rng``).
    min_rows : int, default=10
        Fewest rows a part may hold.

    Returns
    -------
    dict of str to ndarray of int
        Disjoint parts covering ``range(n)``.

    Raises
    ------
    ValueError
        A fraction outside (0, 1), calibration + report fractions >= 1, a negative seed,
        or a part with fewer than ``min_rows`` rows.

    Examples
    --------
    >>> split_rows(10, seed=1, min_rows=1)
    {'fit': array([4, 7, 8]), 'validation': array([0, 1]), 'calibration': array([2, 5, 9]), 'report': array([3, 6])}
    """
    fractions = {
        "calibration_fraction": calibration_fraction,
        "report_fraction": report_fraction,
        "validation_fraction": validation_fraction,
    }
    for name, value in fractions.items():
        check_open_unit(value, name)
    if calibration_fraction + report_fraction >= 1.0:
        raise ValueError(
            f"calibration_fraction + report_fraction = {calibration_fraction + report_fraction:g} "
            "leaves no rows to train the score: the sum must be below 1"
        )
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    n_calibration = int(round(calibration_fraction * n))
    n_report = int(round(report_fraction * n))
    n_train = n - n_calibration - n_report
    n_validation = int(round(validation_fraction * n_train))
    sizes = {
        "fit": n_train - n_validation,
        "validation": n_validation,
        "calibration": n_calibration,
        "report": n_report,
    }
    if any(v < min_rows for v in sizes.values()):
        raise ValueError(
            f"too few rows ({n}) for the split {sizes}: every part needs at least {min_rows} rows"
        )
    order = np.random.default_rng(seed).permutation(n)
    bounds = np.cumsum([0] + list(sizes.values()))
    return {name: np.sort(order[bounds[k] : bounds[k + 1]]) for k, name in enumerate(sizes)}


def split_ood_rows(
    is_ood: Any,
    calibration_fraction: float = 0.3,
    report_fraction: float = 0.2,
    validation_fraction: float = 0.3,
    seed: int = 0,
    min_rows: int = 10,
) -> dict[str, np.ndarray]:
    """:func:`split_rows` for a sample mixing in-distribution (ID) and OOD rows (``is_ood`` True).

    OOD rows have no meaningful loss to train a score on: the ID rows alone are split by
    :func:`split_rows` (same fractions and seed), the OOD rows only between ``calibration`` and
    ``report`` in the proportion ``calibration_fraction : report_fraction`` (0.3 : 0.2 = 60 % :
    40 %), by their own seeded permutation. Indices, sorted, refer to the whole sample.

    Parameters
    ----------
    is_ood : array_like of bool of shape (n,)
        True for an OOD row.
    calibration_fraction, report_fraction, validation_fraction : float
        As in :func:`split_rows` (defaults 0.3, 0.2, 0.3).
    seed : int, default=0
        Seed of both permutations.
    min_rows : int, default=10
        Fewest ID rows of a part, and OOD rows of ``calibration`` and ``report``.

    Returns
    -------
    dict of str to ndarray of int
        As :func:`split_rows`.

    Raises
    ------
    ValueError
        No ID or no OOD rows, a part below ``min_rows``, or :func:`split_rows`'s errors.
    """
    is_ood = as_ood_mask(is_ood)
    id_rows, ood_rows = np.flatnonzero(~is_ood), np.flatnonzero(is_ood)
    if id_rows.size == 0:
        raise ValueError("no ID rows: every row is marked OOD")
    if ood_rows.size == 0:
        raise ValueError("no OOD rows: no row is marked OOD")
    try:
        id_parts = split_rows(
            id_rows.size,
            calibration_fraction,
            report_fraction,
            validation_fraction,
            seed,
            min_rows=min_rows,
        )
    except ValueError as err:
        if str(err).startswith("too few rows"):
            raise ValueError(f"ID rows: {err}") from None
        raise
    n_calibration = int(
        round(ood_rows.size * calibration_fraction / (calibration_fraction + report_fraction))
    )
    sizes = {"calibration": n_calibration, "report": ood_rows.size - n_calibration}
    if min(sizes.values()) < min_rows:
        raise ValueError(
            f"too few OOD rows ({ood_rows.size}) for the split {sizes}: the calibration and the report "
            f"part each need at least {min_rows} OOD rows"
        )
    order = ood_rows[np.random.default_rng([seed, 1]).permutation(ood_rows.size)]
    ood_parts = {"calibration": order[:n_calibration], "report": order[n_calibration:]}
    parts = {name: id_rows[rows] for name, rows in id_parts.items()}
    for name, rows in ood_parts.items():
        parts[name] = np.sort(np.concatenate([parts[name], rows]))
    return parts


@dataclass(frozen=True)
class SelectiveFit:
    """Result of :func:`fit_selective`; the parameters are kept as attributes of the same names.

    Parameters
    ----------
    score : object
        The fitted score learner, refitted on the fit + validation rows with ``C``.
    C : float
        Chosen by the validation AuRC.
    validation_aurc : dict of float -> float
        ``C -> AuRC`` on the validation rows.
    selection : SelectionFunction
        Fitted on the calibration rows.
    uncertainty : ndarray of shape (n,)
        The score on every row.
    parts : dict of ndarray
        The row split (:func:`split_rows`).

    Examples
    --------
    See :func:`fit_selective`, which returns it.
    """

    score: Any
    C: float
    validation_aurc: dict
    selection: SelectionFunction
    uncertainty: np.ndarray
    parts: dict


def _score_learner(score, n_classes, seed, n_jobs, fit_target):
    """``(template, learner_with)``: the score learner unfitted, and a function of C making one."""
    if not isinstance(score, str):

        def with_C(C):
            return clone(score).set_params(C=C)

        return score, with_C
    info = get_score(score)
    if info.learns_from != "loss" and fit_target is None:
        raise ValueError(
            f"score {score!r} learns from {info.learns_from}, not from the loss: pass fit_target"
        )
    context = {"n_classes": n_classes, "random_state": seed, "n_jobs": n_jobs}

    def make(C):
        return info.make(C, **context)

    return make(0.0), make


def fit_selective(
    X: Any,
    y_pred: Any,
    loss: Any,
    target: Target | OODTarget,
    parts: dict,
    *,
    score: Any = "sele",
    n_classes: int | None = None,
    C_grid: Any = None,
    seed: int = 0,
    n_jobs: int = 1,
    is_ood: Any = None,
    fit_target: Any = None,
    loss_bound: Any = None,
) -> SelectiveFit:
    """Learn an uncertainty score and a selection function from a classifier's predictions and losses.

    The score is fitted on ``parts["fit"]`` per C of ``C_grid``; the C of least validation
    AuRC is refitted on both parts (Section 5.1). The selection function is fitted on
    ``parts["calibration"]``; ``parts["report"]`` is unused. With an :class:`OODTarget`, the
    score learns from ID rows only (OOD losses may be NaN) and :meth:`OODTarget.fit` uses all
    calibration rows; the uncertainty covers every row. A learner with ``precompute_features``
    (the class-shared scores on a network's logits) has its features computed once, for every
    row, and reads them in every fit and prediction.

    Parameters
    ----------
    X : ndarray of shape (n, d)
        Features the score reads.
    y_pred : ndarray of shape (n,) of int
        Predicted class indices 0..K-1.
    loss : ndarray of shape (n,)
        The classifier's losses (OOD rows' may be NaN).
    target : Target or OODTarget
        The rejection model and its parameter.
    parts : dict of ndarray
        Of :func:`split_rows` (for an :class:`OODTarget`, OOD rows out of ``fit`` and
        ``validation``).
    score : str or score instance, default="sele"
        A registered learned score's name (made with ``n_classes``, ``seed`` and ``n_jobs``
        where it takes them), or an unfitted instance with ``get_params`` / ``set_params``,
        used as it is but for its ``C``.
    n_classes : int or None
        Number of predicted classes K; None: ``max(y_pred) + 1`` on the training rows.
    C_grid : sequence of float or None
        None: the grid of Section 5.1, ``(0, 1, 10, 100, 1000)``.
    seed, n_jobs : int
        Passed to the score learner when it accepts ``random_state`` / ``n_jobs``.
    is_ood : array_like of bool, shape (n,), or None
        Needed with an :class:`OODTarget` (and only then): True for OOD rows.

        .. versionchanged:: 0.4.0
           Values other than booleans, 0 and 1 are refused.
    fit_target : ndarray of shape (n,) or None
        What the score fits when not the loss: the true class's posterior (TCP, eq. 35). C is
        still chosen by the AuRC of the loss.
    loss_bound : float or None
        A certified :class:`Target` only: the largest loss by the loss's definition, as
        :meth:`Target.fit` takes it (None: the 0/100 loss).

    Returns
    -------
    SelectiveFit

    Raises
    ------
    InfeasibleTargetError
        The target cannot be met on the calibration rows.
    ScoreError
        The score's ``fit`` / ``predict`` fails or gives a non-finite uncertainty (names its file).
    ValueError
        A registered score that does not learn from the loss without ``fit_target``, or
        ``is_ood`` missing with an OOD target (given with another target).

    Examples
    --------
    >>> from sklearn.datasets import load_digits
    >>> from sklearn.naive_bayes import GaussianNB
    >>> from rejectopt.targets import Target
    >>> X, y = load_digits(return_X_y=True)
    >>> y_pred = GaussianNB().fit(X[::2], y[::2]).predict(X[1::2])  # one half trains the classifier
    >>> loss = 100.0 * (y_pred != y[1::2])  # the 0/100 loss on the other half
    >>> fit = fit_selective(X[1::2], y_pred, loss, Target("coverage", 0.8), split_rows(len(loss)))
    >>> type(fit.score).__name__, fit.C
    ('SELE', 1.0)
    """
    ood_target = isinstance(target, OODTarget)
    if ood_target and is_ood is None:
        raise ValueError(f"target {target} needs is_ood, the mask of the OOD rows")
    if not ood_target and is_ood is not None:
        raise ValueError(
            f"is_ood is used only with a TPR-FPR or precision-recall target, not {target}"
        )
    learned = learn_score(
        X,
        y_pred,
        loss,
        parts,
        score=score,
        n_classes=n_classes,
        C_grid=C_grid,
        seed=seed,
        n_jobs=n_jobs,
        is_ood=is_ood,
        fit_target=fit_target,
    )
    return fit_selection(learned, loss, target, parts, is_ood=is_ood, loss_bound=loss_bound)


@dataclass(frozen=True)
class LearnedScore:
    """A score learned on the fit and validation rows, before any selection function (:func:`learn_score`).

    Parameters
    ----------
    score : object
        The fitted score (a baseline's :class:`~rejectopt.scores._confidence.ConfidenceScore`
        learns nothing).
    C : float
        Chosen by the validation AuRC; NaN for a baseline.
    validation_aurc : dict of float -> float
        ``C -> AuRC`` on the validation rows; empty for a baseline.
    aurc : float
        The score's AuRC on the validation rows: the least of ``validation_aurc`` (each C
        fitted on the fit rows alone), or the baseline's own. What ``"auto"`` compares.
    uncertainty : ndarray of shape (n,)
        The score on every row.
    """

    score: Any
    C: float
    validation_aurc: dict
    aurc: float
    uncertainty: np.ndarray


def learn_score(
    X: Any,
    y_pred: Any,
    loss: Any,
    parts: dict,
    *,
    score: Any = "sele",
    n_classes: int | None = None,
    C_grid: Any = None,
    seed: int = 0,
    n_jobs: int = 1,
    is_ood: Any = None,
    fit_target: Any = None,
) -> LearnedScore:
    """The score of :func:`fit_selective`, learned on ``parts["fit"]`` and ``parts["validation"]`` only.

    The calibration and report rows are not read (their uncertainty is predicted): a choice
    made from :attr:`LearnedScore.aurc` leaves the selection function's rows untouched.
    Parameters as :func:`fit_selective`'s; ``score`` may also be an unfitted
    :class:`~rejectopt.scores._confidence.ConfidenceScore`, whose ``X`` is the classifier's
    outputs.

    Returns
    -------
    LearnedScore
    """
    fit_rows, val_rows = parts["fit"], parts["validation"]
    if is_ood is not None:
        is_ood = np.asarray(is_ood, dtype=bool)
        if is_ood.shape != (len(loss),):
            raise ValueError(f"is_ood has shape {is_ood.shape}, the loss {np.shape(loss)}")
        fit_rows, val_rows = fit_rows[~is_ood[fit_rows]], val_rows[~is_ood[val_rows]]
    train_rows = np.concatenate([fit_rows, val_rows])
    if getattr(score, "learned", True) is False:  # a baseline: nothing to fit, no C to choose
        baseline = type(score)(**{**score.get_params(), "n_classes": n_classes})
        learner = call_score(baseline, "fit", X[train_rows], y_pred[train_rows], None)
        s = call_score(learner, "predict", X, y_pred, n_rows=len(loss))
        return LearnedScore(learner, float("nan"), {}, aurc(loss[val_rows], s[val_rows]), s)
    C_grid = SCORE_C_GRID if C_grid is None else C_grid
    template, learner_with = _score_learner(score, n_classes, seed, n_jobs, fit_target)
    precompute = getattr(template, "precompute_features", None)
    if callable(precompute):
        # e.g. a network's logits -> their class-agnostic features, once for every row: the C
        # grid, the refit and the prediction below read them, not the logits
        X = precompute(X)
    fit_target = loss if fit_target is None else np.asarray(fit_target, dtype=float)
    best, val_aurc = select_C(
        template,
        X[fit_rows],
        y_pred[fit_rows],
        fit_target[fit_rows],
        X[val_rows],
        y_pred[val_rows],
        loss[val_rows],
        C_grid=C_grid,
    )
    learner = call_score(
        learner_with(best.C), "fit", X[train_rows], y_pred[train_rows], fit_target[train_rows]
    )
    s = call_score(learner, "predict", X, y_pred, n_rows=len(loss))
    constant = constant_score_message(s, learner, "the sample")
    if constant and np.ptp(fit_target[train_rows]) > 0:  # a constant target has its own warning
        warnings.warn(constant, stacklevel=3)
    validation = {float(c): float(v) for c, v in val_aurc.items()}
    return LearnedScore(learner, float(best.C), validation, min(validation.values()), s)


def fit_selection(
    learned: LearnedScore,
    loss: Any,
    target: Target | OODTarget,
    parts: dict,
    *,
    is_ood: Any = None,
    loss_bound: Any = None,
) -> SelectiveFit:
    """The selection function of a learned score, fitted on ``parts["calibration"]`` alone.

    Parameters
    ----------
    learned : LearnedScore
        Of :func:`learn_score` (on rows disjoint from the calibration rows).
    loss, target, parts, is_ood, loss_bound
        As :func:`fit_selective`.

    Returns
    -------
    SelectiveFit
    """
    cal, s = parts["calibration"], learned.uncertainty
    if isinstance(target, OODTarget):
        selection = target.fit(loss[cal], np.asarray(is_ood, dtype=bool)[cal], s[cal])
    else:
        selection = target.fit(loss[cal], s[cal], loss_bound=loss_bound)
    return SelectiveFit(
        score=learned.score,
        C=learned.C,
        validation_aurc=learned.validation_aurc,
        selection=selection,
        uncertainty=s,
        parts=parts,
    )


#: Bootstrap resamples of the validation rows with which :func:`choose_score` tests a challenger.
CHOICE_RESAMPLES = 200
#: Share of those resamples in which a challenger must have the lesser AuRC to replace the
#: classifier's own confidence.
CHOICE_LEVEL = 0.95


def _resampled_aurc(loss, uncertainty, draws):
    """The AuRC (eq. 27, ties by position) of each resample ``draws[b]`` of the rows."""
    s, losses = uncertainty[draws], loss[draws]
    order = np.argsort(s, axis=1, kind="stable")
    accepted = np.cumsum(np.take_along_axis(losses, order, axis=1), axis=1)
    return (accepted / np.arange(1, draws.shape[1] + 1)).mean(axis=1)


def choose_score(
    candidates: dict, loss: Any = None, rows: Any = None, *, seed: int = 0
) -> tuple[str, dict]:
    """The candidate of least validation AuRC, and every candidate's: what ``"auto"`` picks.

    The first candidate is the incumbent: the callers list the classifier's own confidence (MCP)
    first, else SELE, the paper's score. With ``loss`` and the validation ``rows``, a challenger
    of lesser AuRC replaces it only if it also has the lesser AuRC in :data:`CHOICE_LEVEL` of :data:`CHOICE_RESAMPLES`
    paired bootstrap resamples of those rows (seeded): a few hundred validation rows may hold a
    handful of errors, a lesser AuRC on them can rest on one or two rows, and a score chosen so
    can reach a far lower coverage than the classifier's confidence on new rows (breast cancer
    with a scaled logistic regression at a 1 % risk: about 0.1 against 0.97). Ties go to the earlier
    candidate. Deterministic: the AuRCs are of seeded fits, the resamples seeded.

    Parameters
    ----------
    candidates : dict of str -> LearnedScore
        Each learned on the same fit and validation rows (:func:`learn_score`).
    loss : ndarray of shape (n,) or None, default=None
        The losses of all rows; None: the least AuRC, untested.
    rows : ndarray of int or None, default=None
        The validation rows (those the AuRCs are measured on).
    seed : int, default=0
        Seed of the resamples.

    Returns
    -------
    chosen : str
    aurcs : dict of str -> float
        ``name -> validation AuRC``, in the candidates' order.

    Examples
    --------
    >>> import numpy as np
    >>> from rejectopt.fitting import LearnedScore
    >>> one = LearnedScore(None, 1.0, {1.0: 20.0}, 20.0, np.zeros(1))
    >>> other = LearnedScore(None, float("nan"), {}, 12.5, np.zeros(1))
    >>> choose_score({"sele": one, "mcp": other})
    ('mcp', {'sele': 20.0, 'mcp': 12.5})
    """
    if not candidates:
        raise ValueError("no candidate score to choose from")
    aurcs = {name: float(fit.aurc) for name, fit in candidates.items()}
    names = list(aurcs)
    best = names[min(range(len(names)), key=lambda k: (aurcs[names[k]], k))]
    incumbent = names[0]
    if loss is None or rows is None or best == incumbent or len(rows) < 2:
        return best, aurcs
    rows = np.asarray(rows)
    loss = np.asarray(loss, dtype=np.float64)
    draws = rows[np.random.default_rng(seed).integers(0, rows.size, (CHOICE_RESAMPLES, rows.size))]
    wins = _resampled_aurc(loss, candidates[best].uncertainty, draws) < _resampled_aurc(
        loss, candidates[incumbent].uncertainty, draws
    )
    return (best if wins.mean() >= CHOICE_LEVEL else incumbent), aurcs
