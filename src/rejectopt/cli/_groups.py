"""``select --group-column``: a certified threshold per group, and what each group's certificate says.

The fit is the library's (:func:`rejectopt.targets.fit_certified_groups`) on the calibration
rows; this module reads and checks the group column, turns the library's refusals into the
command line's messages, and writes the groups' part of ``report.json`` and ``report.md``.

Every "with probability at least" sentence of the groups' section is an entry of
:func:`group_statements`, and each is the Guarantees page's per-group theorem: a group's own
certificate holds for that group's population at its level; with ``--simultaneous`` all own
certificates hold together at the confidence asked; a group that fell back to the pooled
threshold gets the pooled certificate, which holds for the pooled population only.
"""

from __future__ import annotations

import logging
import math
import numbers

import numpy as np

from .._model_fields import check_groups, group_key
from .._params import format_level
from ..selective import InfeasibleTargetError, empirical_risk_coverage
from ..targets import CertifiedSelection, Target, fit_certified_groups
from ._columns import row_label
from ._errors import InputError, one_line
from ._report import fmt

__all__ = [
    "check_group_options",
    "check_group_role",
    "fit_groups",
    "group_labels",
    "group_lines",
    "group_decisions",
    "group_markdown",
    "group_records",
    "group_statements",
    "group_summary",
]

log = logging.getLogger(__name__)

#: The option that names the group column, for the messages.
GROUP_OPTION = "--group-column"


def check_group_options(args, target):
    """The group column's name, or None; refuses what has no per-group certificate.

    A per-group certificate is a certified fit of each group's rows, so it needs a certified
    risk, coverage or release-gate target (``--confidence``); ``--simultaneous`` needs groups.
    """
    column = getattr(args, "group_column", None)
    if column is None:
        if getattr(args, "simultaneous", False):
            raise InputError(
                "--simultaneous makes the per-group certificates hold together: it needs "
                "--group-column COL, the column holding each row's group"
            )
        return None
    certified = isinstance(target, Target) and target.confidence is not None
    if not certified or target.kind not in ("risk", "coverage"):
        raise InputError(
            f"{GROUP_OPTION} {column!r} fits a certified threshold per group, and --target "
            f"{target} is not certified: give a risk or coverage target with --confidence "
            "(e.g. --target risk=5 --confidence 0.9), or leave out --group-column"
        )
    if not str(column).strip():
        raise InputError(f"{GROUP_OPTION} is empty: name the column holding each row's group")
    return column


def check_group_role(column, roles):
    """InputError when the group column is also the label, loss, prediction or OOD column.

    ``roles`` maps a column name to its role (None names are ignored).
    """
    if column is not None and column in roles:
        raise InputError(
            f"{GROUP_OPTION} {column!r} is the {roles[column]} column: the group labels need a "
            f"column of their own; name another column with {GROUP_OPTION} (to group by the "
            f"{roles[column]}, copy it into a column of its own)"
        )


def _is_missing(value):
    if value is None:
        return True
    if isinstance(value, str):
        return not value.strip()
    if isinstance(value, numbers.Real) and not isinstance(value, numbers.Integral):
        return math.isnan(float(value))
    return False


def group_labels(raw, column, source, is_csv, option=GROUP_OPTION):
    """The group column as a list of plain labels (numpy scalars unwrapped, text stripped).

    A missing label (empty cell, NaN, empty text) is refused naming its row: a row without a
    group belongs to no certificate. ``option`` names the column's source in the message.
    """
    labels = []
    for i, value in enumerate(np.asarray(raw, dtype=object)):
        value = value.item() if isinstance(value, np.generic) else value
        if _is_missing(value):
            raise InputError(
                f"{source}: {option} {column!r} has no label at {row_label(i, is_csv)}: "
                "every row needs its group; fill it in (e.g. 'unknown') or drop the row"
            )
        labels.append(value.strip() if isinstance(value, str) else value)
    return labels


def fit_groups(fit, table, target, loss_bound, column, simultaneous):
    """The per-group certified selections, fitted on the calibration rows alone."""
    cal = fit.parts["calibration"]
    try:
        return fit_certified_groups(
            table.loss[cal],
            fit.uncertainty[cal],
            [table.groups[i] for i in cal],
            target,
            simultaneous=bool(simultaneous),
            loss_bound=loss_bound,
        )
    except (InfeasibleTargetError, ValueError) as err:
        raise InputError(
            f"{GROUP_OPTION} {column!r}: cannot certify --target {target} per group on the "
            f"{cal.size} calibration rows: {one_line(err)}"
        ) from None


def group_records(selection, fit, table, column):
    """``report.json``'s ``groups``: the library's records, with each group's report rows."""
    rep = fit.parts["report"]
    labels = [table.groups[i] for i in rep]
    known = {(type(label), label) for label in selection.labels}
    unseen = sorted({repr(label) for label in labels if (type(label), label) not in known})
    if unseen:
        log.warning(
            "%s %s: groups %s have report rows but no calibration rows, so no certificate covers "
            "them; they are left out of the per-group table",
            GROUP_OPTION,
            column,
            ", ".join(unseen[:10]),
        )
    records = selection.to_records()
    for group, record in zip(selection.groups, records):
        rows = rep[[label == group.label and type(label) is type(group.label) for label in labels]]
        risk, coverage = (math.nan, math.nan)
        if rows.size:
            applied = CertifiedSelection(group.threshold, group.accept_prob)
            risk, coverage = empirical_risk_coverage(
                table.loss[rows], fit.uncertainty[rows], applied
            )
        record.update(
            {
                "report_rows": int(rows.size),
                "report_coverage": None if math.isnan(coverage) else float(coverage),
                "report_selective_risk": None if math.isnan(risk) else float(risk),
            }
        )
    return {
        "column": column,
        "simultaneous": bool(selection.simultaneous),
        "confidence": float(selection.confidence),
        "group_confidence": float(selection.group_confidence),
        "n_calibration": int(fit.parts["calibration"].size),
        "records": records,
    }


def _claims(target):
    """The target's bounds as ``(quantity, relation, value)``: what each certificate promises."""
    if target["kind"] == "coverage":
        return [("coverage", ">=", float(target["value"]))]
    claims = [("risk", "<=", float(target["value"]))]
    if "min_coverage" in target:
        claims.append(("coverage", ">=", float(target["min_coverage"])))
    return claims


def group_statements(report):
    """What the per-group certificates guarantee, one entry per "with probability at least" sentence.

    Each entry is ``{"level": 1 - delta, "bounds": [(quantity, relation, value, population)]}``
    with ``population`` a group's label, or None for the pooled population; all bounds of one
    entry hold at once. Without ``--simultaneous``: one entry per group with its own
    certificate, at the confidence asked. With it: one entry for all own certificates together.
    One entry for the pooled certificate, where a group fell back (at the level each group's
    fit ran at).
    """
    groups = report.get("groups")
    if not groups:
        return []
    claims = _claims(report["target"])
    own = [r for r in groups["records"] if not r["fallback"]]
    statements = []
    if groups["simultaneous"] and own:
        bounds = [(*claim, r["group"]) for r in own for claim in claims]
        statements.append({"level": groups["confidence"], "bounds": bounds})
    elif own:
        statements += [
            {"level": groups["confidence"], "bounds": [(*claim, r["group"]) for claim in claims]}
            for r in own
        ]
    if any(r["fallback"] for r in groups["records"]):
        bounds = [(*claim, None) for claim in claims]
        statements.append({"level": groups["group_confidence"], "bounds": bounds})
    return statements


def _claim_text(bounds, unit):
    words = {"risk": "selective risk", "coverage": "coverage"}
    return " and ".join(
        f"{words[q]} is {'at most' if rel == '<=' else 'at least'} {value:g}"
        + (f" {unit}" if q == "risk" else "")
        for q, rel, value, _ in bounds
    )


def group_lines(report):
    """The sentences of the groups' section, one per entry of :func:`group_statements`."""
    groups, unit = report["groups"], report["risk_unit"]
    records = {repr(r["group"]): r for r in groups["records"]}
    lines = []
    for statement in group_statements(report):
        level = format_level(statement["level"])
        populations = list(dict.fromkeys(b[3] for b in statement["bounds"]))
        if populations == [None]:
            fallen = ", ".join(repr(r["group"]) for r in groups["records"] if r["fallback"])
            lines.append(
                f"Groups {fallen} cannot certify the target on their own rows, so the pooled "
                f"threshold applies to them: with probability at least {level} over the draw of "
                f"all {groups['n_calibration']} calibration rows, the pooled population's (all "
                f"groups together) {_claim_text(statement['bounds'][: len(_claims(report['target']))], unit)}. "
                f"This holds for the pooled population only, NOT for groups {fallen}."
            )
        elif len(populations) == 1:
            record = records[repr(populations[0])]
            lines.append(
                f"Group {populations[0]!r}: with probability at least {level} over the draw of its "
                f"{record['n_rows']} calibration rows, the {_claim_text(statement['bounds'], unit)} "
                f"on the population of group {populations[0]!r} (its own certificate, for this "
                "group alone)."
            )
        else:
            names = ", ".join(repr(p) for p in populations)
            per = _claim_text(statement["bounds"][: len(_claims(report["target"]))], unit)
            lines.append(
                f"With probability at least {level} over the draw of the "
                f"{groups['n_calibration']} calibration rows, for every one of groups {names} at "
                f"once, the {per} on that group's population (all own certificates together: "
                f"each group fitted at level {format_level(groups['group_confidence'])}, Sidak)."
            )
    return lines


def group_markdown(report):
    """``report.md``'s groups section: one table row per group, then the guarantees."""
    groups, unit = report["groups"], report["risk_unit"]
    lines = [
        "",
        f"## Per-group certificates ({GROUP_OPTION} {groups['column']})",
        "",
        "Each group's threshold is fitted on its own calibration rows; coverage and selective "
        "risk are achieved with it on the group's held-out report rows. model.json records each "
        "group's threshold (`groups`), and `apply` decides each row by its group's.",
        "",
        f"| group | calibration rows | threshold | certificate | report rows | coverage | "
        f"selective risk ({unit}) |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in groups["records"]:
        threshold = r["threshold"] if isinstance(r["threshold"], str) else fmt(r["threshold"], 6)
        lines.append(
            f"| {r['group']} | {r['n_rows']} | {threshold} | "
            f"{'pooled (fallback)' if r['fallback'] else 'own'} | {r['report_rows']} | "
            f"{fmt(r['report_coverage'])} | {fmt(r['report_selective_risk'])} |"
        )
    lines.append("")
    lines += group_lines(report)
    lines.append("")
    return "\n".join(lines)


def group_summary(report):
    """The line ``select`` prints after its summary: how many groups hold their own certificate."""
    records = report["groups"]["records"]
    fallen = sum(r["fallback"] for r in records)
    together = " (together)" if report["groups"]["simultaneous"] and fallen < len(records) else ""
    return (
        f"per group ({GROUP_OPTION} {report['groups']['column']}): {len(records) - fallen} of "
        f"{len(records)} groups certified on their own rows{together}, {fallen} on the pooled "
        "threshold (its guarantee holds for the pooled population only); see report.md"
    )


def group_decisions(entry, table, uncertainty, forced):
    """``apply``'s acceptance probability and decision of each row by its group's threshold.

    ``entry`` is ``model.json``'s ``groups``; ``forced`` marks the rows rejected whatever their
    group (unseen class, out-of-range value, overflow). A label ``select`` never saw is refused
    naming it: no certificate covers its group, and the pooled threshold's guarantee is not the
    group's (rows of it can be dropped, or the model selected again with rows of that group).
    Certified selections are deterministic: a row is accepted where its probability is 1.
    """
    selections = check_groups(entry)
    if table.groups is None:
        raise InputError(
            f"{table.source}: the model decides each row by its group, and no group column was "
            f"read: read the table with group_column={entry['column']!r} (model.json groups.column)"
        )
    keys = [group_key(label) for label in table.groups]
    unknown = [i for i, key in enumerate(keys) if key not in selections]
    if unknown:
        first = unknown[0]
        raise InputError(
            f"{table.source}: the group column {entry['column']!r} (model.json groups.column) holds "
            f"{table.groups[first]!r} at {table.where(first)} ({len(unknown)} row(s) in all), a "
            f"group that select saw no row of, so no certificate covers it (the groups are "
            f"{[g['label'] for g in entry['groups']]}): drop these rows, or select again with "
            "rows of that group"
        )
    probability = np.zeros(len(keys))
    for key, selection in selections.items():
        rows = np.array([k == key for k in keys], dtype=bool)
        probability[rows] = selection.acceptance_probability(uncertainty[rows])
    probability[forced] = 0.0
    return probability, probability >= 1.0
