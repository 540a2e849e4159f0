"""Internal: per-group certificates, one threshold and one guarantee per group of the rows.

A certified target (:class:`~rejectopt.targets.Target` with a confidence) guarantees the
*average* over the population: a class, a language or a site can be worse than the target while
the average meets it. Given a group label per calibration row, :func:`fit_certified_groups` fits
the target on each group's rows alone, so each group gets its own threshold and a certificate for
its own population.

Why a group's fit certifies its group: if the calibration rows are i.i.d. draws of (input, loss,
group) from the population the classifier will meet, then, given the column of group labels, the
rows of group ``g`` are ``n_g`` i.i.d. draws from the population of group ``g`` (the inputs of
that group), independent of the other groups' rows. Every certified fit holds for any fixed
number of i.i.d. rows, so the fit on group ``g``'s rows holds for group ``g``'s population at
its level, given the labels, hence also averaged over them.

Simultaneous certificates: given the labels the groups' fits are independent (each reads its own
rows only, with a fixed seed), so if each fails with probability at most ``d`` the chance that
none fails is at least ``(1 - d)^G``. Each group is fitted at ``d = 1 - (1 - delta)^(1 / G)``
(Sidak's level, a little above Bonferroni's ``delta / G``), and all ``G`` certificates hold
together with probability at least ``1 - delta``.

A group whose own fit is refused (:class:`~rejectopt.exceptions.InfeasibleTargetError`: too few
rows for the target, including fewer than its ``rows_needed``) falls back to the *pooled*
threshold, fitted on all rows at the same level; its record says that this certificate holds
for the pooled population only, not for the group. A coverage target never falls back: a group
with too few rows for its order statistic accepts every input, which meets any coverage.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._checks import as_loss_and_uncertainty, check_1d
from .._params import format_level
from ..selective import InfeasibleTargetError
from . import _parameters
from ._selection import CertifiedSelection
from ._tails import RISK_TAILS

__all__ = ["GroupCertificate", "GroupSelection", "fit_certified_groups"]


@dataclass(frozen=True)
class GroupCertificate:
    """One group's threshold and what it guarantees (an entry of :class:`GroupSelection`).

    Parameters
    ----------
    label : hashable
        The group's label, as the group column holds it.
    n_rows : int
        The group's calibration rows.
    threshold, accept_prob : float
        The selection applied to the group: its own, or the pooled one where it fell back.
    certificate : CertifiedSelection or None
        The group's own certified selection; None where it fell back.
    fallback : bool
        True where the group's own fit was refused and the pooled threshold applies: its
        guarantee then holds for the pooled population only, not for this group.
    statement : str
        What holds, for which population, at which confidence.
    reason : str
        Why the group fell back (its own fit's refusal); empty otherwise.
    """

    label: Any
    n_rows: int
    threshold: float
    accept_prob: float
    certificate: CertifiedSelection | None
    fallback: bool
    statement: str
    reason: str = ""


@dataclass(frozen=True)
class GroupSelection:
    """Per-group certified selections: what :func:`fit_certified_groups` returns.

    Parameters
    ----------
    target : Target
        The certified target every group is fitted for.
    confidence : float
        ``1 - delta`` as asked: each group's own (``simultaneous`` False) or all groups' together.
    group_confidence : float
        The level each fit ran at: ``confidence``, or ``(1 - delta)^(1 / G)`` simultaneously.
    simultaneous : bool
        Whether the groups' own certificates hold together.
    groups : tuple
        One record per group, in sorted label order (first appearance where labels do not
        sort), ``selection[label]`` one of them. Each has ``label``, ``n_rows``, ``threshold``
        and ``accept_prob`` (what applies to the group), ``certificate`` (the group's own
        :class:`CertifiedSelection`, None where it fell back), ``fallback`` (True: the pooled
        threshold applies, and its guarantee holds for the pooled population only),
        ``statement`` (what holds, for which population, at which level) and ``reason`` (the
        refusal that made it fall back).
    pooled : CertifiedSelection or None
        The fit on all rows at ``group_confidence``, the fallbacks' threshold; None where it
        was refused (then no group fell back).

    Examples
    --------
    >>> from rejectopt.targets import Target, fit_certified_groups
    >>> u = np.tile(np.linspace(0, 1, 300), 2)
    >>> groups = np.repeat(["a", "b"], 300)
    >>> selection = fit_certified_groups(u * 0, u, groups, Target("coverage", 0.5, confidence=0.9))
    >>> selection.labels, round(selection["a"].threshold, 3), selection["a"].fallback
    (['a', 'b'], 0.538, False)
    >>> selection.to_records()[0]["holds_for"]
    'group'
    """

    target: Any
    confidence: float
    group_confidence: float
    simultaneous: bool
    groups: tuple[GroupCertificate, ...]
    pooled: CertifiedSelection | None

    @property
    def labels(self) -> list[Any]:
        """The group labels, in the order of :attr:`groups`."""
        return [group.label for group in self.groups]

    def __getitem__(self, label: Any) -> GroupCertificate:
        for group in self.groups:
            if group.label == label and _kind(group.label) == _kind(label):
                return group
        raise KeyError(f"no group {label!r}; the groups are {self.labels!r}")

    def accept(self, uncertainty: Any, groups: Any) -> np.ndarray:
        """Which new inputs are accepted, each by its group's threshold.

        Parameters
        ----------
        uncertainty : array_like of shape (m,)
            The inputs' uncertainty scores.
        groups : array_like of shape (m,)
            Their group labels, each one of :attr:`labels`.

        Returns
        -------
        numpy.ndarray of bool
            True where the input is accepted (certified selections are deterministic).

        Raises
        ------
        ValueError
            A label the calibration rows did not hold (no certificate covers it), a label that
            is missing or of another kind, or lengths that differ.
        """
        labels = _as_labels(groups, "groups")
        s = np.asarray(check_1d(uncertainty, "uncertainty"), dtype=float)
        if len(labels) != s.size:
            raise ValueError(
                f"length mismatch: uncertainty and groups must have the same length, got "
                f"{s.size} and {len(labels)}"
            )
        known = {_key(group.label): group for group in self.groups}
        unknown = sorted({repr(v) for v in labels if _key(v) not in known})
        if unknown:
            raise ValueError(
                f"groups {', '.join(unknown[:5])} had no calibration rows, so no threshold is "
                f"certified for them (the groups are {self.labels!r}): calibrate with rows of "
                "these groups, or apply the pooled selection (.pooled) knowing that its guarantee "
                "holds for the pooled population only"
            )
        accepted = np.zeros(s.size, dtype=bool)
        keys = [_key(v) for v in labels]
        for key, group in known.items():
            rows = np.array([k == key for k in keys], dtype=bool)
            selection = CertifiedSelection(group.threshold, group.accept_prob)
            accepted[rows] = selection.acceptance_probability(s[rows]) >= 1.0
        return accepted

    def to_records(self) -> list[dict[str, Any]]:
        """One JSON-able dict per group, for ``report.json``.

        Each: ``group``, ``n_rows``, ``threshold`` and ``accept_prob`` (an infinite threshold
        as ``"inf"``), ``fallback``, ``holds_for`` (``"group"`` or ``"pooled"``), ``confidence``
        (the level of that certificate alone), ``simultaneous``, ``certificate`` (the group's
        own, or the pooled one where it fell back), ``statement`` and ``reason``.
        """
        records = []
        for group in self.groups:
            applied = group.certificate if group.certificate is not None else self.pooled
            assert applied is not None  # a fallback exists only beside a pooled fit
            records.append(
                {
                    "group": _json_label(group.label),
                    "n_rows": int(group.n_rows),
                    **applied.to_dict(),
                    "fallback": bool(group.fallback),
                    "holds_for": "pooled" if group.fallback else "group",
                    "confidence": float(self.group_confidence),
                    "simultaneous": bool(self.simultaneous and not group.fallback),
                    "certificate": applied.certificate,
                    "statement": group.statement,
                    "reason": group.reason,
                }
            )
        return records


def fit_certified_groups(
    loss: Any,
    uncertainty: Any,
    groups: Any,
    target: Any,
    *,
    simultaneous: bool = False,
    loss_bound: Any = None,
    method: str | None = None,
    tail: str = RISK_TAILS[0],
) -> GroupSelection:
    """A certified threshold per group: each group's target met by that group's population.

    .. versionadded:: 0.9.0

    The calibration rows must be i.i.d. draws of (input, loss, group) from the population to be
    served; then, given the group column, each group's rows are an i.i.d. sample of that group's
    population, and its fit certifies the target for that population at ``confidence``.
    With ``simultaneous=True`` every group is fitted at ``(1 - delta)^(1 / G)``: given the
    labels the fits are independent, so all groups' own certificates hold together at
    ``1 - delta`` (Sidak; Bonferroni's ``delta / G`` is a little smaller).

    A group whose own fit is refused (too few rows for the target) takes the pooled threshold,
    fitted on all rows at the same level; its record says that guarantee holds for the pooled
    population only. The pooled certificate is a statement of its own (at ``group_confidence``):
    with it, a simultaneous family holds at ``1 - delta - (1 - group_confidence)``.

    Parameters
    ----------
    loss, uncertainty : array_like of shape (n,)
        Calibration losses and uncertainty scores.
    groups : array_like of shape (n,)
        A hashable label per row (class, language, site), all of one kind (text, integers,
        reals or bools), none missing (None, NaN).
    target : Target
        A certified target: risk, coverage, or a release gate (``min_coverage``).
    simultaneous : bool, default False
        False: each group's certificate holds at ``confidence`` on its own. True: all of them
        hold together at ``confidence``.
    loss_bound, method, tail
        As :meth:`Target.fit <rejectopt.targets.Target.fit>`.

    Returns
    -------
    GroupSelection

    Raises
    ------
    InfeasibleTargetError
        A group's own fit and the pooled fit are both refused.
    ValueError
        No confidence on the target, a missing or mixed-kind label, or lengths that differ.

    Examples
    --------
    >>> from rejectopt.targets import Target, fit_certified_groups
    >>> rng = np.random.default_rng(0)
    >>> u = rng.random(1200)
    >>> site = np.repeat(["north", "south", "tiny"], [600, 590, 10])
    >>> loss = np.where(rng.random(1200) < np.where(site == "south", 0.6, 0.2) * u, 100, 0)
    >>> fitted = fit_certified_groups(loss, u, site, Target("risk", 10, confidence=0.9))
    >>> [(g.label, g.fallback, round(g.threshold, 2)) for g in fitted.groups]
    [('north', False, 0.36), ('south', False, 0.14), ('tiny', True, 0.36)]
    >>> fitted.accept([0.3, 0.3], ["north", "south"]).tolist()
    [True, False]
    """
    loss, s = as_loss_and_uncertainty(loss, uncertainty, exact_order=False)
    labels = _as_labels(groups, "groups")
    if len(labels) != loss.size:
        raise ValueError(
            f"length mismatch: groups must hold one label per calibration row, got {len(labels)} "
            f"labels for {loss.size} rows"
        )
    confidence = _check_target(target)
    (simultaneous,) = _parameters.check("fit_certified_groups", simultaneous=simultaneous)
    rows = _group_rows(labels)
    level = confidence if not simultaneous else confidence ** (1.0 / len(rows))
    at_level = dataclasses.replace(target, confidence=level)
    options = {"loss_bound": loss_bound, "method": method, "tail": tail}
    try:
        pooled: CertifiedSelection | None = at_level.fit(loss, s, **options)
        pooled_refusal = ""
    except InfeasibleTargetError as error:
        pooled, pooled_refusal = None, str(error)
    fitted = []
    for label, index in rows:
        try:
            own = at_level.fit(loss[index], s[index], **options)
        except InfeasibleTargetError as error:
            if pooled is None:
                raise _both_refused(label, index.size, str(error), pooled_refusal) from None
            fitted.append(_fallback(label, index.size, pooled, target, str(error)))
        else:
            fitted.append(_own(label, index.size, own, target, confidence, bool(simultaneous)))
    return GroupSelection(target, confidence, level, bool(simultaneous), tuple(fitted), pooled)


# --------------------------------------------------------------------------------------------
# The group column
# --------------------------------------------------------------------------------------------
def _kind(label: Any) -> str:
    """The kind of a label: labels of two kinds (1 and "1", 1 and 1.0) are refused together."""
    if isinstance(label, (bool, np.bool_)):
        return "bool"
    if isinstance(label, numbers.Integral):
        return "integer"
    if isinstance(label, numbers.Real):
        return "real"
    if isinstance(label, str):
        return "text"
    return type(label).__name__


def _key(label: Any) -> tuple[str, Any]:
    """A label with its kind, so that ``True`` and ``1`` never meet in one dict."""
    return (_kind(label), label)


def _is_missing(label: Any) -> bool:
    """None, NaN, or pandas' missing markers (read by name: pandas is not imported here)."""
    if label is None:
        return True
    if isinstance(label, numbers.Real) and not isinstance(label, numbers.Integral):
        return math.isnan(float(label))
    return type(label).__name__ in ("NAType", "NaTType")


def _as_labels(groups: Any, name: str) -> list[Any]:
    """The group column as a list of plain labels, checked: 1-D, hashable, none missing, one kind."""
    if isinstance(groups, (str, bytes)):
        raise ValueError(
            f"{name} must be a column of labels (one per row), got the text {groups!r}"
        )
    # a list of rows (lists or arrays) is a table, refused as one; a tuple may be one label
    rows = isinstance(groups, (list, tuple)) and any(
        isinstance(v, (list, np.ndarray)) for v in groups
    )
    if rows or not isinstance(groups, (list, tuple)):
        check_1d(np.asarray(groups, dtype=object), name)
    values = [v.item() if isinstance(v, np.generic) else v for v in groups]
    for index, value in enumerate(values):
        if _is_missing(value):
            raise ValueError(
                f"{name} has a missing label ({value!r}) at row {index}: every row needs its "
                "group; drop the row or give it a label of its own (e.g. 'unknown')"
            )
        try:
            hash(value)
        except TypeError:
            raise ValueError(
                f"{name} must hold hashable labels, got {type(value).__name__} {value!r} at row "
                f"{index}: give each row one label (text or a number)"
            ) from None
    kinds = {_kind(v): v for v in values}
    if len(kinds) > 1:
        shown = ", ".join(f"{kind} ({example!r})" for kind, example in sorted(kinds.items()))
        raise ValueError(
            f"{name} mixes label kinds: {shown}; give every label one kind (e.g. all text, "
            f"{name}.astype(str)), so that 1 and '1' are not two groups by accident"
        )
    return values


def _group_rows(labels: list[Any]) -> list[tuple[Any, np.ndarray]]:
    """Each distinct label and its row indices, labels sorted (first appearance if they do not sort)."""
    index: dict[Any, list[int]] = {}
    first: dict[Any, Any] = {}
    for row, label in enumerate(labels):
        key = _key(label)
        index.setdefault(key, []).append(row)
        first.setdefault(key, label)
    keys = list(index)
    try:
        keys.sort(key=lambda key: key[1])
    except TypeError:
        pass
    return [(first[key], np.asarray(index[key])) for key in keys]


def _json_label(label: Any) -> Any:
    """The label as JSON holds it: text, numbers and bools as they are, anything else as text."""
    return label if isinstance(label, (str, int, float, bool)) else str(label)


# --------------------------------------------------------------------------------------------
# The target and the statements
# --------------------------------------------------------------------------------------------
def _check_target(target: Any) -> float:
    """The target's confidence; refuses a target without one or of a kind with no group form."""
    kind = getattr(target, "kind", None)
    # a Target is a dataclass: each level's copy is dataclasses.replace(target, confidence=...)
    replaceable = dataclasses.is_dataclass(target) and not isinstance(target, type)
    if kind not in ("risk", "coverage") or not replaceable:
        raise ValueError(
            f"fit_certified_groups needs a certified Target('risk', ...) or Target('coverage', "
            f"...), got {target!r}"
        )
    if target.confidence is None:
        raise ValueError(
            f"target {target} has no confidence, so there is nothing to certify per group: give "
            f"it one, e.g. Target({kind!r}, {target.value:g}, confidence=0.9)"
        )
    return float(target.confidence)


def _claim(target: Any) -> str:
    """What the target promises, in words."""
    if target.kind == "coverage":
        return f"coverage >= {target.value:g}"
    claim = f"selective risk <= {target.value:g}"
    if target.min_coverage is not None:
        claim += f" and coverage >= {target.min_coverage:g}"
    return claim


def _own(
    label: Any,
    n: int,
    selection: CertifiedSelection,
    target: Any,
    confidence: float,
    simultaneous: bool,
) -> GroupCertificate:
    """A group with its own certificate."""
    together = " together with every other group's own certificate" if simultaneous else ""
    statement = (
        f"group {label!r}: {_claim(target)} on the population of group {label!r}{together}, "
        f"with probability >= {format_level(confidence)} over its {n} calibration rows"
    )
    return GroupCertificate(
        label, n, selection.threshold, selection.accept_prob, selection, False, statement
    )


def _fallback(
    label: Any, n: int, pooled: CertifiedSelection, target: Any, refusal: str
) -> GroupCertificate:
    """A group whose own fit was refused: the pooled threshold, and what it does not promise."""
    statement = (
        f"group {label!r}: its {n} rows cannot certify {_claim(target)} at confidence "
        f"{format_level(pooled.confidence)} on their own, so the pooled threshold applies: "
        f"{_claim(target)} holds for the pooled population of all groups with probability >= "
        f"{format_level(pooled.confidence)}, NOT for group {label!r}"
    )
    return GroupCertificate(
        label, n, pooled.threshold, pooled.accept_prob, None, True, statement, refusal
    )


def _both_refused(label: Any, n: int, refusal: str, pooled_refusal: str) -> InfeasibleTargetError:
    """Group ``label`` and the pooled rows both refused: nothing to fall back on."""
    return InfeasibleTargetError(
        f"group {label!r} ({n} rows) cannot be certified on its own ({refusal}), and the pooled "
        f"fit on all rows, its fallback, is refused too ({pooled_refusal}); merge the group with "
        "another, drop its rows, or ask a looser target or a lower confidence"
    )
