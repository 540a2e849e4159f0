"""Internal: the tidy per-group table of a selective classifier (selective risk, coverage, areas)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ._bands import check_confidence, loss_kind, mean_interval
from ._losses import _as_loss_and_uncertainty
from ._risk_coverage import _group_labels, augrc, aurc

#: The label of the row over all groups in :func:`selective_report`.
OVERALL = "(all)"


def _acceptance(selection, uncertainty, raw_uncertainty):
    """Acceptance probability of each row under ``selection`` (see :func:`selective_report`)."""
    if selection is None:
        return np.ones(uncertainty.size)
    selection = getattr(selection, "selection_", selection)  # a fitted SelectiveClassifier
    if hasattr(selection, "acceptance_probability"):
        return np.asarray(selection.acceptance_probability(raw_uncertainty), dtype=float)
    if isinstance(selection, (int, float, np.integer, np.floating)) and not isinstance(selection, bool):
        threshold = float(selection)
        if math.isnan(threshold):
            raise ValueError("selection: a threshold must not be NaN")
        return (np.asarray(raw_uncertainty, dtype=float) <= threshold).astype(float)
    raise ValueError("selection must be None (accept every row), a threshold (accept uncertainty <= it), a "
                     "rejectopt.selective.SelectionFunction or a fitted SelectiveClassifier; got "
                     f"{type(selection).__name__}")


def selective_report(loss, uncertainty, groups=None, selection=None, *, confidence=None, loss_bound=None):
    """Tidy table of a selective classifier per group and overall: n, coverage, selective risk, AuRC, AUGRC.

    One row per group (labels sorted) and a last row ``"(all)"`` over every row. ``coverage``
    and ``selective_risk`` are those of ``selection`` on the group's rows (eqs. 5-6 of [1]:
    accepted share, and accepted loss over accepted mass, randomised ties counted by their
    acceptance probability); ``aurc`` and ``augrc`` those of the group's own risk-coverage
    curve (:func:`aurc`, :func:`augrc`, paper convention), which do not depend on ``selection``.
    The column ``worst`` marks the group(s) whose selective risk is the highest at this
    selection (the worst-group selective risk is ``report.loc[report.worst, "selective_risk"]``);
    selective classification can widen the gaps between groups even as it lowers the overall
    risk, so read this column beside the overall row.

    Parameters
    ----------
    loss, uncertainty : array-like of shape (n,)
        Losses and uncertainty scores, as in :func:`aurc`.
    groups : array-like of shape (n,), optional
        A label per row (any sortable type); None: the overall row only.
    selection : None, float, SelectionFunction or fitted SelectiveClassifier, optional
        Which rows are accepted: None accepts every row (coverage 1: the classifier without
        rejection); a number accepts ``uncertainty <= it``; a
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
    loss, scores = _as_loss_and_uncertainty(loss, uncertainty)
    accept = _acceptance(selection, scores, uncertainty if selection is not None else None)
    if groups is None:
        labels, inverse = [], np.zeros(loss.size, dtype=np.intp)
    else:
        labels, inverse = _group_labels(groups, loss.size)
    if confidence is not None:
        confidence = check_confidence(confidence)
        bound, binary = loss_kind(loss, loss_bound)
    rows = [(label, inverse == g) for g, label in enumerate(labels)] + [(OVERALL, np.ones(loss.size, dtype=bool))]
    records = []
    for label, mask in rows:
        accepted = float(accept[mask].sum())
        record = {"group": label, "n": int(mask.sum()), "coverage": accepted / mask.sum(),
                  "selective_risk": float(accept[mask] @ loss[mask]) / accepted if accepted > 0 else math.nan}
        if confidence is not None:
            low, high = (math.nan, math.nan)
            if accepted > 0:
                low, high = mean_interval(np.array(accept[mask] @ loss[mask]), np.array(accept[mask] @ loss[mask] ** 2),
                                          np.array(accepted), bound, binary, 1.0 - confidence)
            record["risk_low"], record["risk_high"] = float(low), float(high)
        record["aurc"] = aurc(loss[mask], scores[mask])
        record["augrc"] = augrc(loss[mask], scores[mask])
        records.append(record)
    report = pd.DataFrame.from_records(records)
    risks = report["selective_risk"].iloc[:-1]
    report["worst"] = False
    if labels and risks.notna().any():
        report.loc[report.index[:-1][risks.to_numpy() == risks.max()], "worst"] = True
    return report
