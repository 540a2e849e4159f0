"""Internal: the tidy per-group table of a selective classifier (selective risk, coverage, areas)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ._bands import loss_kind, mean_interval
from ._losses import _as_loss_and_uncertainty
from ._parameters import check as _check_parameters
from ._risk_coverage import _group_areas, _group_labels

#: The label of the row over all groups in :func:`selective_report`.
OVERALL = "(all)"


def _acceptance(selection, uncertainty, raw_uncertainty):
    """Acceptance probability of each row under ``selection`` (see :func:`selective_report`)."""
    if selection is None:
        return np.ones(uncertainty.size)
    selection = getattr(selection, "selection_", selection)  # a fitted SelectiveClassifier
    if hasattr(selection, "acceptance_probability"):
        if _beyond_float(raw_uncertainty):
            raise ValueError(
                "uncertainty holds integers beyond 2**53, which a selection function's float "
                "threshold cannot tell apart; pass a threshold (an integer) as selection, or the "
                "scores' ranks (scipy.stats.rankdata) with a selection function fitted on ranks"
            )
        return np.asarray(selection.acceptance_probability(raw_uncertainty), dtype=float)
    if isinstance(selection, (int, float, np.integer, np.floating)) and not isinstance(
        selection, bool
    ):
        if math.isnan(float(selection)):
            raise ValueError("selection: a threshold must not be NaN")
        return _at_or_below(raw_uncertainty, selection).astype(float)
    raise ValueError(
        "selection must be None (accept every row), a threshold (accept uncertainty <= it), a "
        "rejectopt.selective.SelectionFunction or a fitted SelectiveClassifier; got "
        f"{type(selection).__name__}"
    )


def _beyond_float(raw):
    """Whether ``raw`` holds integers that float64 cannot all tell apart (beyond 2**53)."""
    values = np.asarray(raw)
    if values.dtype.kind in "iu" and values.size:
        return int(values.max()) > 2**53 or int(values.min()) < -(2**53)
    if values.dtype == object:
        return any(isinstance(v, (int, np.integer)) and abs(int(v)) > 2**53 for v in values.ravel())
    return False


def _at_or_below(raw, threshold):
    """``raw <= threshold``, exact for integer scores beyond 2**53 (a float cast would merge them).

    For integers ``x <= t`` iff ``x <= floor(t)``, an exact integer comparison; values the
    losses' validation already accepted otherwise compare as float64, as the metrics do.
    """
    values = np.asarray(raw)
    # as a Python int or float: their comparisons with each other are exact (numpy scalars' are not)
    threshold = int(threshold) if isinstance(threshold, (int, np.integer)) else float(threshold)
    if values.dtype == object:  # Python ints (beyond int64 too) and floats
        return np.array([v <= threshold for v in values.tolist()], dtype=bool)
    if values.dtype.kind in "iu":
        if isinstance(threshold, int):
            bound = threshold
        elif math.isinf(threshold):
            return np.full(values.shape, threshold > 0)
        else:
            bound = math.floor(threshold)  # exact: a finite float is a dyadic rational
        info = np.iinfo(values.dtype)
        if bound >= info.max or bound < info.min:
            return np.full(values.shape, bound >= info.max)
        return values <= values.dtype.type(bound)
    return values.astype(np.float64) <= float(threshold)


def selective_report(
    loss, uncertainty, groups=None, selection=None, *, confidence=None, loss_bound=None
):
    """Tidy table of a selective classifier per group and overall: n, coverage, selective risk, AuRC, AUGRC.

    One row per group (labels sorted) and a last row ``"(all)"`` over every row (so no group
    may be labelled ``"(all)"``: ValueError, rename it). ``coverage`` and ``selective_risk``
    are those of ``selection`` on the group's rows (eqs. 5-6 of [1]:
    accepted share, and accepted loss over accepted mass, randomised ties counted by their
    acceptance probability); ``aurc`` and ``augrc`` those of the group's own risk-coverage
    curve (:func:`aurc`, :func:`augrc`, paper convention), which do not depend on ``selection``.
    The column ``worst`` marks the group(s) whose selective risk is the highest at this
    selection (the worst-group selective risk is ``report.loc[report.worst, "selective_risk"]``);
    selective classification can widen the gaps between groups even as it lowers the overall
    risk, so read this column beside the overall row. Every group's numbers come from one sort
    of the rows by (group, uncertainty): the time of a few AuRCs and O(n) memory for any number
    of groups.

    Parameters
    ----------
    loss, uncertainty : array-like of shape (n,)
        Losses and uncertainty scores, as in :func:`aurc`.
    groups : array-like of shape (n,), optional
        A label per row, all of one kind (numbers, strings, booleans or one sortable type);
        None: the overall row only. A list, an array and a Series of the same labels give the
        same groups.

        .. versionchanged:: 0.4.0
           A group labelled ``"(all)"``, the name of the overall row, is refused.

        .. versionchanged:: 0.7.0
           A list's NaN and a list mixing kinds (``[1, "1"]``, ``[1, "a"]``) are refused, as in
           an array or a Series; numpy had read them as strings (a group ``"nan"``, one ``"1"``).
    selection : None, float, SelectionFunction or fitted SelectiveClassifier, optional
        Which rows are accepted: None accepts every row (coverage 1: the classifier without
        rejection); a number accepts ``uncertainty <= it`` (compared exactly with integer
        scores, even beyond 2**53, where float64 would merge neighbours); a
        :class:`rejectopt.selective.SelectionFunction` (or an estimator's ``selection_``)
        accepts with its acceptance probabilities, on ``uncertainty`` as given.
    confidence : float in (0, 1), optional
        Add ``risk_low`` / ``risk_high``: an interval of each selective risk (Clopper-Pearson
        for losses in {0, ``loss_bound``}, else empirical Bernstein; :func:`risk_coverage_band`).
    loss_bound : float, optional
        With ``confidence``: the largest loss the loss's definition allows (1, or 100 for the
        0/100 loss; read from the losses when they hold both 0 and 1, or 0 and 100).

    Returns
    -------
    pandas.DataFrame
        Columns ``group``, ``n``, ``coverage``, ``selective_risk`` (NaN when nothing is
        accepted), [``risk_low``, ``risk_high``], ``aurc``, ``augrc``, ``worst``.

    Raises
    ------
    ValueError
        Invalid losses or uncertainties (as :func:`aurc`); ``groups`` not one label per row, a
        missing label (None, NaN, NA), labels of several kinds (e.g. ``1`` and ``"1"``), or a
        label ``"(all)"``; a NaN threshold or an unknown kind of
        ``selection``; a selection function's float threshold on integer scores beyond 2**53
        (pass an integer threshold, or ranks); ``confidence`` outside (0, 1) or a needed
        ``loss_bound`` missing or below the largest loss.
    TypeError
        ``groups`` given as a string or an iterator instead of an array-like.

    Examples
    --------
    >>> loss = [0, 100, 0, 0, 100, 100]
    >>> uncertainty = [0.1, 0.8, 0.2, 0.3, 0.9, 0.4]
    >>> report = selective_report(loss, uncertainty, ["a", "a", "a", "b", "b", "b"], selection=0.5)
    >>> report[["group", "n", "coverage", "selective_risk", "worst"]]
       group  n  coverage  selective_risk  worst
    0      a  3  0.666667             0.0  False
    1      b  3  0.666667            50.0   True
    2  (all)  6  0.666667            25.0  False
    """
    _check_parameters("selective_report", optional=("confidence",), confidence=confidence)
    loss, scores = _as_loss_and_uncertainty(loss, uncertainty)
    accept = _acceptance(selection, scores, uncertainty if selection is not None else None)
    if groups is None:
        labels, inverse = [], None
    else:
        labels, inverse = _group_labels(groups, loss.size)
        if any(isinstance(label, str) and label == OVERALL for label in labels):
            raise ValueError(
                f"groups: the label {OVERALL!r} is the name of the report's overall row; rename "
                f"that group (e.g. groups = np.where(groups == {OVERALL!r}, 'all rows', groups))"
            )
    if confidence is not None:
        confidence = float(confidence)
        bound, binary = loss_kind(loss, loss_bound, "selective_report")
    total_aurc, total_augrc, group_aurc, group_augrc = _group_areas(
        loss, scores, inverse, len(labels)
    )
    # every group's sums by one bincount each; the overall row's as before, over all rows
    accepted, accepted_loss, accepted_square = (np.empty(0),) * 3
    sizes = np.empty(0, dtype=np.int64)
    if labels:
        sizes = np.bincount(inverse, minlength=len(labels))
        accepted = np.bincount(inverse, weights=accept, minlength=len(labels))
        accepted_loss = np.bincount(inverse, weights=accept * loss, minlength=len(labels))
        if confidence is not None:
            accepted_square = np.bincount(inverse, weights=accept * loss**2, minlength=len(labels))
    accepted = np.append(accepted, float(accept.sum()))
    accepted_loss = np.append(accepted_loss, float(accept @ loss))
    sizes = np.append(sizes, loss.size)
    with np.errstate(invalid="ignore", divide="ignore"):
        risk = np.where(accepted > 0, accepted_loss / accepted, np.nan)
    columns = {
        "group": labels + [OVERALL],
        "n": sizes.astype(np.int64),
        "coverage": accepted / sizes,
        "selective_risk": risk,
    }
    if confidence is not None:
        accepted_square = np.append(accepted_square, float(accept @ loss**2))
        low, high = np.full(sizes.size, np.nan), np.full(sizes.size, np.nan)
        some = accepted > 0
        if some.any():
            low[some], high[some] = mean_interval(
                accepted_loss[some],
                accepted_square[some],
                accepted[some],
                bound,
                binary,
                1.0 - confidence,
            )
        columns["risk_low"], columns["risk_high"] = low, high
    columns["aurc"] = np.append(group_aurc, total_aurc)
    columns["augrc"] = np.append(group_augrc, total_augrc)
    report = pd.DataFrame(columns)
    risks = report["selective_risk"].iloc[:-1]
    report["worst"] = False
    if labels and risks.notna().any():
        report.loc[report.index[:-1][risks.to_numpy() == risks.max()], "worst"] = True
    return report
