"""Internal: what a fitted selective classifier warns about, in one wording for the estimator and the CLI.

Each function takes facts of a fit and returns its message, or None when there is nothing to
say. :meth:`rejectopt.SelectiveClassifier.fit` warns the messages (``UserWarning``); the command
line's ``select`` and ``validate`` log them (``log.warning``). A message names the target as its
reader wrote it: ``named(target)`` is ``target='risk', value=2`` for the estimator and
``--target risk=2`` for the command line. Risks are in the loss's ``unit``: ``%`` for the 0/100
loss, ``MAE`` for the absolute error, else the loss column's.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np

__all__ = [
    "labels_never_predicted",
    "loses_to_confidence",
    "missed_bounds",
    "missed_coverage",
    "missed_risk",
    "nothing_to_learn",
    "risk_in_percent",
    "tied_C",
    "worse_than_random",
]


def risk_in_percent(target: Any, loss: str, named: Callable[[Any], str]) -> str | None:
    """A risk target below 1 on the 0/100 loss: most likely a fraction meant, 100 times stricter than it.

    Parameters
    ----------
    target : Target
        The target asked for.
    loss : str
        The loss's name (``"zero_one"`` is the 0/100 loss).
    named : callable
        How the reader names a target.

    Returns
    -------
    str or None
        The message, or None.
    """
    if target.kind != "risk" or loss != "zero_one" or not target.value < 1:
        return None
    value = target.value
    return (
        f"{named(target)}: the risk of the 0/100 loss is in percent (an error costs 100), so this asks for at "
        f"most {value:g} % errors among the accepted predictions; if you meant the fraction {value:g} "
        f"({100 * value:g} %), ask for {named(replace(target, value=100 * value))}"
    )


def nothing_to_learn(loss: Any, rows: str) -> str | None:
    """Every loss is 0: the score has nothing to learn from.

    Parameters
    ----------
    loss : array_like
        The losses the score learns from.
    rows : str
        Which rows they are, after "predictions" (``of the rows after the classifier's part``).

    Returns
    -------
    str or None
        The message, or None.
    """
    loss = np.asarray(loss)
    if loss.size == 0 or loss.any():
        return None
    return (
        f"every loss is 0 (all {loss.size} predictions {rows} are correct): there is nothing to learn, the "
        "uncertainty score is constant and the rows are accepted at random with one probability"
    )


def labels_never_predicted(y: Any, y_pred: Any) -> str | None:
    """No label of ``y`` is ever predicted: every prediction is an error, the labels are likely encoded apart.

    Parameters
    ----------
    y, y_pred : array_like
        The true and the predicted labels.

    Returns
    -------
    str or None
        The message, or None.
    """
    y, y_pred = np.asarray(y), np.asarray(y_pred)
    try:
        overlap = bool(np.isin(y_pred, y).any())
    except TypeError:
        overlap = bool(set(y_pred.tolist()) & set(y.tolist()))
    if y.size == 0 or overlap:
        return None
    labels, predicted = np.unique(y.astype(str)), np.unique(y_pred.astype(str))
    return (
        f"no label of y ({', '.join(labels[:5])}{', ...' if labels.size > 5 else ''}) is ever predicted by the "
        f"classifier ({', '.join(predicted[:5])}{', ...' if predicted.size > 5 else ''}): every prediction counts "
        "as an error (label encodings differ?)"
    )


def missed_risk(
    target: Any,
    named: Callable[[Any], str],
    n_rows: int,
    risk: float | None,
    interval: Any,
    coverage: float,
    full_risk: float,
    unit: str,
) -> str | None:
    """The report rows' selective risk lies above a risk target beyond its 95 % interval.

    The calibration rows meet a plug-in target by construction; held-out rows that miss it
    beyond sampling error mean that the calibration rows were too few for so small a risk,
    which new rows will miss too.

    Parameters
    ----------
    target : Target
        The target asked for.
    named : callable
        How the reader names a target.
    n_rows : int
        Held-out report rows.
    risk : float or None
        Their selective risk; None or NaN when nothing is accepted.
    interval : tuple of float
        Its 95 % interval (either end None or NaN when nothing is accepted).
    coverage : float
        Their coverage.
    full_risk : float
        Their risk when every row is accepted.
    unit : str
        The risk's unit.

    Returns
    -------
    str or None
        The message, or None.
    """
    low, high = interval
    if (
        target.kind != "risk"
        or risk is None
        or low is None
        or math.isnan(low)
        or not low > target.value
    ):
        return None
    return (
        f"the {n_rows} held-out report rows miss {named(target)}: their selective risk {risk:.4g} {unit} (95 % "
        f"interval [{low:.4g}, {high:.4g}]) at coverage {coverage:.4g} lies above {target.value:g} {unit} beyond "
        f"its interval, against {full_risk:.4g} {unit} when every row is accepted; the threshold fitted on the "
        "calibration rows does not hold on new rows: ask for a larger risk, or give more rows"
    )


def missed_coverage(
    target: Any,
    named: Callable[[Any], str],
    n_rows: int,
    coverage: float,
    interval: Any,
    *,
    draws: tuple | None = None,
) -> str | None:
    """The report rows' coverage lies off a coverage target beyond its 95 % interval (a certified one: below it).

    A certified coverage is a lower bound: only falling short of it is a miss.

    Parameters
    ----------
    target : Target
        The target asked for.
    named : callable
        How the reader names a target.
    n_rows : int
        Held-out report rows.
    coverage : float
        Their coverage.
    interval : tuple of float
        Its 95 % interval.
    draws : tuple or None, default None
        None: ``coverage`` is the expected one (``select``), and any miss is reported.
        ``(tied, accept_prob, tie_breaking)``: ``coverage`` is the one reached once the rows
        tied at the threshold are drawn (:class:`~rejectopt.SelectiveClassifier`), and only a
        miss the draws explain is reported: ``tied`` rows accepted with probability
        ``accept_prob`` in (0, 1) each. Without a draw, the coverage reached is the expected
        one, which the estimator's ``report_`` shows beside the target.

    Returns
    -------
    str or None
        The message, or None.
    """
    low, high = interval
    certified = target.confidence is not None
    if target.kind != "coverage" or not (
        high < target.value if certified else not low <= target.value <= high
    ):
        return None
    if draws is not None and not (draws[0] > 0 and 0.0 < draws[1] < 1.0):
        return None
    message = (
        f"the {n_rows} held-out report rows miss {named(target)}: their coverage {coverage:.4g} lies "
        f"{'below' if certified else 'outside'} {target.value:g} beyond its 95 % interval "
        f"[{low:.4g}, {high:.4g}]"
    )
    if draws is None:
        return message
    tied, accept_prob, tie_breaking = draws
    return (
        f"{message}: {tied} of them tie at the threshold and are accepted with probability {accept_prob:.3g} "
        f"each, drawn by tie_breaking={tie_breaking!r}; expect a coverage off the target on new rows too (a "
        "score with fewer ties, or more rows, brings it closer)"
    )


def missed_bounds(
    target: Any, named: Callable[[Any], str], n_rows: int, missed: list[str]
) -> str | None:
    """The report rows miss bounds of an OOD target beyond their 95 % intervals.

    Parameters
    ----------
    target : OODTarget
        The target asked for.
    named : callable
        How the reader names a target.
    n_rows : int
        Held-out report rows.
    missed : list of str
        The bounds missed (``tpr``, ``fpr``, ``precision``, ``recall``).

    Returns
    -------
    str or None
        The message, or None.
    """
    if not missed:
        return None
    return (
        f"the {n_rows} held-out report rows miss {named(target)}: {' and '.join(missed)} beyond the 95 % "
        "interval"
    )


def worse_than_random(learned: float | None, random_order: float, unit: str) -> str | None:
    """The learned score orders the report rows worse than a random order (a larger AuRC).

    Parameters
    ----------
    learned, random_order : float
        AuRC of the learned score (None: undefined) and of a random order.
    unit : str
        The risk's unit.

    Returns
    -------
    str or None
        The message, or None.
    """
    if learned is None or not learned > random_order:
        return None
    return (
        f"the learned score orders the report rows worse than random: AuRC {learned:.4g} {unit} against "
        f"{random_order:.4g} {unit} for a random order (lower is better); the score did not learn which "
        "predictions err: give more rows or other features"
    )


def tied_C(aurcs: Any, C_grid: Any, C: float, grid: str, unit: str) -> str | None:
    """Every C of the grid ties at the validation AuRC: the tie-break, not the rows, chose C.

    Parameters
    ----------
    aurcs : sequence of float
        The validation AuRC of each C.
    C_grid : sequence of float
        The grid.
    C : float
        The C chosen.
    grid : str
        How the reader names the grid (``--C``, ``C_grid``).
    unit : str
        The risk's unit.

    Returns
    -------
    str or None
        The message, or None.
    """
    values = list(aurcs)
    if len(values) < 2 or np.ptp(values) > 1e-12 * max(1.0, abs(values[0])):
        return None
    return (
        f"all {len(values)} values of {grid} ({','.join(f'{float(c):g}' for c in C_grid)}) tie at "
        f"validation AuRC {values[0]:.4g} {unit}: C = {C:g} was chosen by the tie-break (the largest, most "
        "regularised); the validation rows cannot tell them apart"
    )


def loses_to_confidence(
    score: str, aurcs: dict, n_rows: int, named: Callable[[str], str], unit: str
) -> str | None:
    """A learned score forced whose validation AuRC is worse than the classifier's own confidence's.

    Parameters
    ----------
    score : str
        The score forced (a key of ``aurcs``).
    aurcs : dict of str -> float
        Validation AuRC by score; ``"mcp"`` is the classifier's confidence (out of fold, or the
        network's MSP). Without it there is nothing to compare with.
    n_rows : int
        The validation rows.
    named : callable
        How the reader names a score: ``uncertainty_score='sele'`` or ``--score sele``.
    unit : str
        The risk's unit.

    Returns
    -------
    str or None
    """
    if "mcp" not in aurcs or score == "mcp" or not aurcs[score] > aurcs["mcp"]:
        return None
    return (
        f"{named(score)}: its AuRC on the {n_rows} validation rows, {aurcs[score]:.4g} {unit}, is "
        f"worse than that of the classifier's own confidence (MCP, 1 - the largest class "
        f"probability), {aurcs['mcp']:.4g} {unit}: the learned score ranks the "
        f"errors worse than the classifier does; {named('auto')} (the default) weighs both"
    )
