"""What ``select`` reports: ``report.json``, ``report.md``, the RC figure and the summary line."""

from __future__ import annotations

import json
import math
import platform

import numpy as np
import scipy
import sklearn

from .. import __version__
from .._params import format_level
from ..metrics import aurc
from ..model import gate_statement
from ..ood import auroc
from ..selective import empirical_risk_coverage, operating_point
from ..targets import CertifiedSelection, OODTarget, parse_target

__all__ = [
    "LOSS_BOUND_SOURCES",
    "guarantee_statements",
    "json_bytes",
    "metrics_lines",
    "ood_report_dict",
    "ood_report_markdown",
    "ood_summary_line",
    "report_dict",
    "report_markdown",
    "risk_unit",
    "summary_line",
    "versions",
]


def versions():
    """Versions of rejectopt, Python and the numerical libraries (recorded in the outputs)."""
    return {
        "rejectopt": __version__,
        "python": platform.python_version(),
        "numpy": np.__version__,
        "scipy": scipy.__version__,
        "scikit-learn": sklearn.__version__,
    }


def risk_unit(loss_name):
    """The unit every printed risk carries: ``%`` for the 0/100 loss, ``MAE`` for the ordinal loss, else the column's.

    Risk is in the loss's units while coverage is a fraction: a printed risk without its unit
    is read on the wrong scale (0.02 taken for 2 %).
    """
    if loss_name == "zero_one":
        return "%"
    if loss_name == "mae":
        return "MAE"
    return f"(units of {loss_name})"


def _none_if_nan(value):
    return None if math.isnan(value) else value


def _point_dict(point):
    return {
        "coverage": point.coverage,
        "coverage_ci": list(point.coverage_ci),
        "coverage_ci_method": point.coverage_ci_method,
        "selective_risk": _none_if_nan(point.selective_risk),
        "selective_risk_ci": [_none_if_nan(v) for v in point.selective_risk_ci],
        "selective_risk_ci_method": point.selective_risk_ci_method,
        "n_accepted_expected": point.n_accepted_expected,
    }


def _fit_entries(fit, score_name, loss_name, C_grid, split, loss_bound, loss_bound_source):
    """The entries of ``report.json`` on what was fitted, in the file's order (both kinds of target).

    ``C`` is null for a baseline, which learns nothing.
    """
    return {
        "loss": loss_name,
        "loss_bound": float(loss_bound),
        "loss_bound_source": loss_bound_source,
        "risk_unit": risk_unit(loss_name),
        "score": score_name,
        "C": None if math.isnan(fit.C) else fit.C,
        "C_grid": [float(c) for c in C_grid],
        "validation_aurc": {str(k): v for k, v in fit.validation_aurc.items()},
        "selection": fit.selection.to_dict(),
        "certificate": fit.selection.certificate
        if isinstance(fit.selection, CertifiedSelection)
        else None,
        "audit": audit_dict(fit.selection),
        "split": split,
    }


def audit_dict(selection):
    """``report.json``'s ``"audit"``: what the certified fit tested, in order, and why it stopped.

    None for a plug-in target (no trail). ``rows`` lists the tests in the order
    the procedure made them (:meth:`rejectopt.targets.AuditTrail.to_records`); ``stop_step`` is
    the last rejected test, whose cut is the selection.
    """
    audit = getattr(selection, "audit", None)
    if audit is None:
        return None
    stop = audit.stop
    return {
        "method": audit.method,
        "delta": audit.delta,
        "level_spent": audit.spent,
        "n_tested": audit.n_tested,
        "n_tests": len(audit),
        "stop_step": None if stop is None else stop.step,
        "reason": audit.reason,
        "summary": audit.summary(),
        "rows": audit.to_records(),
    }


def audit_lines(report):
    """``report.md``'s sentence on the audit trail of a certified fit; nothing without one."""
    audit = report.get("audit")
    if not audit:
        return []
    return [
        f"**Audit trail** (`report.json`'s `audit`, one row per test in the order made): "
        f"{audit['summary']}",
        "",
    ]


def _rows(parts, total):
    """Rows per part of the split, as ``report.json`` counts them."""
    return {
        "total": int(total),
        "train_fit": int(parts["fit"].size),
        "train_validation": int(parts["validation"].size),
        "calibration": int(parts["calibration"].size),
        "report": int(parts["report"].size),
    }


def report_dict(
    fit,
    loss,
    target,
    *,
    score_name,
    loss_name,
    C_grid,
    split,
    versions,
    loss_bound,
    loss_bound_source="definition",
):
    """The content of ``report.json`` for a :class:`rejectopt.fitting.SelectiveFit` on ``loss``.

    ``loss_bound``: the largest loss a prediction can have (100 for the 0/100 loss), the
    scale of the selective risk's interval (:func:`rejectopt.stats.selective_risk_interval`);
    ``loss_bound_source`` says where it came from, a key of :data:`LOSS_BOUND_SOURCES` (a
    certified risk's B is never ``"data"``).
    """
    parts, s, selection = fit.parts, fit.uncertainty, fit.selection
    cal, rep = parts["calibration"], parts["report"]
    loss_rep, s_rep = loss[rep], s[rep]
    calibration_risk, calibration_coverage = empirical_risk_coverage(loss[cal], s[cal], selection)
    return {
        "target": target.to_dict(),
        **_fit_entries(fit, score_name, loss_name, C_grid, split, loss_bound, loss_bound_source),
        "rows": _rows(parts, s.size),
        "calibration": {
            "coverage": calibration_coverage,
            "selective_risk": _none_if_nan(calibration_risk),
        },
        "report": _point_dict(operating_point(loss_rep, s_rep, selection, loss_bound=loss_bound)),
        "aurc_report": {
            "learned_score": aurc(loss_rep, s_rep),
            "random_order": float(loss_rep.mean()),
            "oracle": aurc(loss_rep, loss_rep),
        },
        "risk_full_coverage_report": float(loss_rep.mean()),
        "versions": versions,
    }


def metrics_lines(report):
    """``report.md``'s table of ``--metrics``; nothing without it (the report as before)."""
    if "metrics" not in report:
        return []
    lines = [
        "Metrics of the learned score on the report rows "
        f"(areas in {report['risk_unit']}; the others of the failures, the labels or the "
        "probabilities):",
        "",
        "| metric | learned score | better |",
        "|---|---|---|",
    ]
    for entry in report["metrics"].values():
        better = "higher" if entry["higher_is_better"] else "lower"
        lines.append(f"| {entry['label']} | {fmt(entry['learned_score'])} | {better} |")
    return [*lines, ""]


def fmt(value, digits=4):
    return "n/a" if value is None else f"{value:.{digits}g}"


#: Where a certified risk's bound B came from, as ``report.json``'s ``loss_bound_source`` names it.
LOSS_BOUND_SOURCES = {
    "option": "--loss-bound",
    "definition": "the loss's definition",
    "labels": "the span of the labels and predictions in the file, K - 1 when every class occurs",
    "data": "the largest loss in the file",
}


def guarantee_statements(report):
    """What a certified target guarantees, one entry per statement that holds with probability >= its level.

    Every sentence the report and the printed line begin with "with probability at least" is one
    entry here, and each is a theorem of the Guarantees page: a risk target's risk bound
    (Learn-then-Test) and, alone, its coverage bound (one-sided DKW, valid for a threshold chosen
    from the data); a coverage target's coverage bound (order statistics); a TPR-FPR target's two
    bounds at once (a union bound at delta / 2 each); a release gate's risk bound and coverage
    floor at once (a union bound, the gate theorem). Two bounds each at level ``1 - delta`` are
    not a joint statement at ``1 - delta``: only the TPR-FPR and the gate entries join their bounds.

    Parameters
    ----------
    report : dict
        ``report.json``'s content (its ``target``, ``certificate`` and ``risk_unit``).

    Returns
    -------
    list of dict
        ``{"level": 1 - delta, "bounds": [(quantity, relation, value), ...]}`` with quantity
        ``"risk"``, ``"coverage"``, ``"fpr"`` or ``"tpr"`` and relation ``"<="`` or ``">="``;
        all bounds of one entry hold at once. Empty for a plug-in target.
    """
    certificate = report.get("certificate")
    if certificate is None:
        return []
    level, kind = certificate["confidence"], report["target"]["kind"]
    if kind == "tpr-fpr":
        return [
            {
                "level": level,
                "bounds": [
                    ("fpr", "<=", certificate["bound"]),
                    ("tpr", ">=", certificate["coverage_bound"]),
                ],
            }
        ]
    if kind == "risk" and is_gate(report):
        return [
            {
                "level": level,
                "bounds": [
                    ("risk", "<=", certificate["risk_bound"]),
                    ("coverage", ">=", certificate["coverage_bound"]),
                ],
            }
        ]
    if kind == "risk":
        return [
            {"level": level, "bounds": [("risk", "<=", certificate["risk_bound"])]},
            {"level": level, "bounds": [("coverage", ">=", certificate["coverage_bound"])]},
        ]
    return [{"level": level, "bounds": [("coverage", ">=", certificate["coverage_bound"])]}]


def is_gate(report):
    """Whether ``report`` is a release gate's: a certified risk with a coverage floor (``min_coverage``)."""
    return "min_coverage" in report["target"] and report.get("certificate") is not None


def _pointwise_risk(report):
    """A coverage target's risk bound: pointwise (as if its threshold were fixed in advance), not guaranteed."""
    certificate = report.get("certificate")
    if (
        certificate is None
        or report["target"]["kind"] != "coverage"
        or certificate["risk_bound"] is None
    ):
        return None
    return certificate["risk_bound"]


def _bound_text(quantity, relation, value, unit, *, long):
    """``risk <= 5 %`` (``long``: the population's selective risk is at most 5 %)."""
    if not long:
        name = quantity.upper() if quantity in ("fpr", "tpr") else quantity
        return f"{name} {relation} {fmt(value)}" + (f" {unit}" if quantity == "risk" else "")
    name = {"risk": "selective risk", "coverage": "coverage", "fpr": "FPR", "tpr": "TPR"}[quantity]
    return f"its {name} is {'at most' if relation == '<=' else 'at least'} {fmt(value)}" + (
        f" {unit}" if quantity == "risk" else ""
    )


def _loss_bound_text(report):
    """``losses at most B = 10 (--loss-bound)``: the B a certified risk rests on, and whence it came."""
    source = LOSS_BOUND_SOURCES.get(report.get("loss_bound_source"), "")
    return f"losses at most B = {report['loss_bound']:g}" + (f" ({source})" if source else "")


def guarantee_lines(report):
    """``report.md``'s paragraph on what is guaranteed: a certified target's bounds, or that a plug-in one has none.

    Each statement of :func:`guarantee_statements` is one sentence with its own level; a coverage
    target's risk bound is named as pointwise, outside the guarantee.
    """
    certificate, unit = report.get("certificate"), report["risk_unit"]
    statements = guarantee_statements(report)
    if certificate is None:
        text = (
            "Plug-in target: met on the calibration rows, not guaranteed for new rows (the report rows above "
            "show what new rows get). Pass --confidence (e.g. 0.95) to certify a risk, coverage or TPR-FPR target."
        )
    else:
        draw = f"over the draw of the {certificate['n_calibration']} calibration rows"
        why = {"risk": " (the target)", "coverage": " (lower confidence bound)"}
        sentences = [gate_statement(certificate, unit)] if is_gate(report) else []
        for k, statement in enumerate([] if sentences else statements):
            quantity = statement["bounds"][0][0]
            bounds = " and ".join(
                _bound_text(*bound, unit, long=True) for bound in statement["bounds"]
            )
            bounds = bounds.replace("its ", "the population's ", 1)
            if report["target"]["kind"] == "risk" and quantity == "coverage":
                why_here = (
                    " (one-sided DKW lower bound, valid for a threshold chosen from the data)"
                )
            else:
                why_here = why.get(quantity, " (both at once: a union bound, delta / 2 each)")
            sentences.append(
                f"{'Separately, with' if k else 'With'} probability at least {format_level(statement['level'])} "
                f"{'over the same draw' if k else draw}, {bounds}{why_here}."
            )
        if len(statements) > 1:
            sentences.append(
                f"Each statement holds alone at its level; both at once are not guaranteed at "
                f"{statements[0]['level']:.4g}."
            )
        risk = _pointwise_risk(report)
        if risk is not None:
            sentences.append(
                f"Not part of the guarantee: the accepted calibration rows give the selective risk an "
                f"upper confidence bound of {fmt(risk)} {unit} at level {certificate['confidence']:.4g}, "
                "pointwise (as if the threshold had been fixed in advance)."
            )
        if report["target"]["kind"] == "risk":
            sentences.append(f"The risk bound rests on {_loss_bound_text(report)}.")
        text = (
            f"**Guarantee** (certified target, method {certificate['method']}): "
            + " ".join(sentences)
            + " The guarantee is marginal over calibration samples drawn i.i.d. (exchangeable) from the population "
            "the new rows come from; it is not conditional on this sample, and does not hold under a shift of the "
            "population."
        )
    lines = [text, ""]
    if report.get("thresholds_csv"):
        level = certificate["confidence"] if certificate is not None else 0.95
        lines += [
            f"Per threshold of the calibration rows (rows accepted, empirical risk, {level:.4g} upper bound of "
            f"the risk, p-value of the target; pointwise, as if each threshold were fixed in advance): "
            f"[{report['thresholds_csv']}]({report['thresholds_csv']}).",
            "",
        ]
    return lines


def _certified_at(target):
    """`` certified at confidence 0.9`` for a certified target's dict (`` with coverage >= 0.5``
    before it for a release gate), else nothing."""
    floor = f" with coverage >= {target['min_coverage']:g}" if "min_coverage" in target else ""
    return (
        f"{floor} certified at confidence {target['confidence']:g}"
        if "confidence" in target
        else ""
    )


def _score_text(report):
    """``SELE with C = 10 (chosen by validation AuRC)``, or a baseline; and ``score_choice``, which
    ``select`` adds: ``--score`` as given and each candidate's validation AuRC."""
    name = report["score"].upper()
    text = (
        f"{name}, the network's own confidence (nothing learned)"
        if report["C"] is None
        else f"{name} with C = {report['C']:g} (chosen by validation AuRC)"
    )
    choice = report.get("score_choice")
    if choice is None or len(choice["validation_aurc"]) < 2:
        return text
    aurcs = ", ".join(f"{n} {fmt(v)}" for n, v in choice["validation_aurc"].items())
    how = "chosen by --score auto" if choice["option"] == "auto" else "forced by --score"
    return f"{text}; {how}, of the validation AuRCs {aurcs} ({report['risk_unit']})"


def report_markdown(report):
    """The human-readable ``report.md``."""
    point, rows, aurcs = report["report"], report["rows"], report["aurc_report"]
    sel, unit = report["selection"], report["risk_unit"]
    lines = [
        "# Selective prediction report",
        "",
        f"Target: **{report['target']['kind']} = {report['target']['value']:g}**"
        f"{_certified_at(report['target'])}"
        f" (loss: {report['loss']}); "
        f"score: {_score_text(report)}.",
        "",
        f"Selection function (randomized Bayes rule, eq. 25): accept if uncertainty < {sel['threshold']}, "
        f"accept with probability {sel['accept_prob']:.4g} if equal, reject otherwise.",
        "",
        "| rows | fit | validation | calibration | report | total |",
        "|---|---|---|---|---|---|",
        f"| | {rows['train_fit']} | {rows['train_validation']} | {rows['calibration']} | {rows['report']} | "
        f"{rows['total']} |",
        "",
        "Achieved on the held-out report rows (not used for fitting or calibration):",
        "",
        "| quantity | value | 95 % interval | method |",
        "|---|---|---|---|",
        f"| coverage | {fmt(point['coverage'])} | [{fmt(point['coverage_ci'][0])}, {fmt(point['coverage_ci'][1])}] "
        f"| {point['coverage_ci_method']} |",
        f"| selective risk ({unit}) | {fmt(point['selective_risk'])} | [{fmt(point['selective_risk_ci'][0])}, "
        f"{fmt(point['selective_risk_ci'][1])}] | {point['selective_risk_ci_method']} |",
        f"| risk at full coverage ({unit}) | {fmt(report['risk_full_coverage_report'])} | | |",
        "",
        f"On the calibration rows: coverage {fmt(report['calibration']['coverage'])}, selective risk "
        f"{fmt(report['calibration']['selective_risk'])} {unit}.",
        "",
        f"AuRC on the report rows (lower is better, {unit}): "
        f"learned score {fmt(aurcs['learned_score'])}, random order {fmt(aurcs['random_order'])}, "
        f"oracle {fmt(aurcs['oracle'])}.",
        "",
        *guarantee_lines(report),
        *audit_lines(report),
        *metrics_lines(report),
        "![RC curve](rc_curve.png)",
        "",
    ]
    return "\n".join(lines)


def summary_line(report):
    """The line ``select`` prints: coverage and selective risk on the report rows with their intervals."""
    point = report["report"]
    return (
        f"report rows: coverage {fmt(point['coverage'])} [{fmt(point['coverage_ci'][0])}, "
        f"{fmt(point['coverage_ci'][1])}], selective risk {fmt(point['selective_risk'])} "
        f"[{fmt(point['selective_risk_ci'][0])}, {fmt(point['selective_risk_ci'][1])}] {report['risk_unit']}"
        f"{_certified_text(report)}"
    )


def _certified_text(report):
    """``; certified with probability >= C: risk <= R %; ...`` for a certified target, else nothing.

    One clause per statement of :func:`guarantee_statements`, each with its own level.
    """
    statements = guarantee_statements(report)
    if not statements:
        return ""
    unit = report["risk_unit"]
    clauses = [
        f"with probability >= {statement['level']:g}: "
        + " and ".join(_bound_text(*bound, unit, long=False) for bound in statement["bounds"])
        + (" (both at once)" if len(statement["bounds"]) > 1 else "")
        for statement in statements
    ]
    text = "; certified for the population " + "; separately, ".join(clauses)
    if len(statements) > 1:
        text += " (each alone, not both at once)"
    risk = _pointwise_risk(report)
    if risk is not None:
        text += f" (risk <= {fmt(risk)} {unit} is a pointwise bound, not certified)"
    return text


def json_bytes(obj):
    return (json.dumps(obj, indent=2, allow_nan=False) + "\n").encode()


# --------------------------------------------------------------------------------------------
# Targets with out-of-distribution rows (tpr=T,fpr=F and precision=P,recall=R)
# --------------------------------------------------------------------------------------------
#: Rates reported for an OOD target, in the order of the report.
OOD_RATES = ("tpr", "fpr", "precision", "recall")
_RATE_LABELS = {
    "tpr": "TPR (share of ID rows accepted)",
    "fpr": "FPR (share of OOD rows accepted)",
    "precision": "precision (share of ID among the accepted)",
    "recall": "recall (= TPR)",
}


def is_ood_report(report):
    """Whether ``report`` is that of an OOD target (``tpr-fpr`` or ``precision-recall``)."""
    return report["target"]["kind"] in OODTarget.KINDS


def _ood_point_dict(point):
    """``report.json``'s entry of a :class:`rejectopt.selective.OODOperatingPoint`; null for an undefined value."""

    def interval(values):
        return [_none_if_nan(v) for v in values]

    return {
        "coverage": point.coverage,
        "coverage_ci": list(point.coverage_ci),
        "coverage_ci_method": point.coverage_ci_method,
        "tpr": point.tpr,
        "tpr_ci": list(point.tpr_ci),
        "fpr": point.fpr,
        "fpr_ci": list(point.fpr_ci),
        "precision": _none_if_nan(point.precision),
        "precision_ci": interval(point.precision_ci),
        "recall": point.recall,
        "recall_ci": list(point.recall_ci),
        "rates_ci_method": point.rates_ci_method,
        "selective_risk": _none_if_nan(point.selective_risk),
        "selective_risk_ci": interval(point.selective_risk_ci),
        "selective_risk_ci_method": point.selective_risk_ci_method,
        "n_accepted_expected": point.n_accepted_expected,
        "n_id_accepted_expected": point.n_id_accepted_expected,
        "n_ood_accepted_expected": point.n_ood_accepted_expected,
    }


def _nan_if_none(value):
    return float("nan") if value is None else value


def _feasibility(target, point):
    """Per bound: met by the point estimates; and, with intervals, not contradicted by them."""
    rates = {name: _nan_if_none(point[name]) for name in target.names}
    met = target.met(rates)
    out = {"met": {**met, "all": all(met.values())}}
    if f"{target.names[0]}_ci" in point:
        upper = {name: _nan_if_none(point[f"{name}_ci"][1]) for name in target.names}
        lower = {name: _nan_if_none(point[f"{name}_ci"][0]) for name in target.names}
        # a lower bound is contradicted when the interval lies below it, an upper bound when it lies above
        within = target.met(
            {name: lower[name] if name == "fpr" else upper[name] for name in target.names}
        )
        out["met_within_ci"] = {**within, "all": all(within.values())}
    return out


def ood_report_dict(
    fit,
    loss,
    is_ood,
    target,
    *,
    score_name,
    loss_name,
    C_grid,
    split,
    versions,
    ood_column,
    loss_bound,
    loss_bound_source="definition",
):
    """The content of ``report.json`` for an OOD target (:class:`rejectopt.targets.OODTarget`).

    On the calibration rows (where the selection function was fitted) and on the held-out
    report rows: expected TPR, FPR, precision, recall (= TPR), coverage of all rows and
    selective risk of the accepted ID rows, on the report rows with 95 % intervals; whether
    the bounds are met (``feasibility``); what the calibration rows allow
    (``attainable_calibration``, :meth:`rejectopt.targets.OODTarget.attainable`).
    """
    parts, s, selection = fit.parts, fit.uncertainty, fit.selection
    cal, rep = parts["calibration"], parts["report"]
    ood_cal, ood_rep = is_ood[cal], is_ood[rep]
    calibration = _ood_point_dict(
        operating_point(loss[cal], s[cal], selection, loss_bound=loss_bound, is_ood=ood_cal)
    )
    calibration = {k: v for k, v in calibration.items() if not k.endswith(("_ci", "_ci_method"))}
    point = _ood_point_dict(
        operating_point(loss[rep], s[rep], selection, loss_bound=loss_bound, is_ood=ood_rep)
    )
    loss_id, s_id = loss[rep][~ood_rep], s[rep][~ood_rep]
    on_report = _feasibility(target, point)
    return {
        "target": target.to_dict(),
        "ood_column": ood_column,
        **_fit_entries(fit, score_name, loss_name, C_grid, split, loss_bound, loss_bound_source),
        "rows": {
            **_rows(parts, s.size),
            "ood": {
                "total": int(is_ood.sum()),
                "calibration": int(ood_cal.sum()),
                "report": int(ood_rep.sum()),
            },
        },
        "calibration": calibration,
        "attainable_calibration": target.attainable(ood_cal, s[cal]),
        "report": point,
        "feasibility": {
            "calibration": _feasibility(target, calibration)["met"],
            "report": on_report["met"],
            "report_within_ci": on_report["met_within_ci"],
        },
        "aurc_report": {
            "learned_score": aurc(loss_id, s_id),
            "random_order": float(loss_id.mean()),
            "oracle": aurc(loss_id, loss_id),
        },
        "auroc_report": auroc(ood_rep, s[rep]),
        "risk_full_coverage_report": float(loss_id.mean()),
        "versions": versions,
    }


def _interval(point, name):
    low, high = point[f"{name}_ci"]
    return f"[{fmt(low)}, {fmt(high)}]"


def _yes(flag):
    return "yes" if flag else "**no**"


#: The text of each bound of an OOD target in ``report.md``.
_BOUND_TEXT = {
    "tpr": "TPR >= {:g}",
    "fpr": "FPR <= {:g}",
    "precision": "precision >= {:g}",
    "recall": "recall >= {:g}",
}


def _ood_intro_lines(report, target):
    """``report.md`` of an OOD target: the title, the target, the selection function and the rows."""
    rows, sel = report["rows"], report["selection"]
    model = (
        "bounded TPR-FPR model (Theorem 3)"
        if target.kind == "tpr-fpr"
        else "bounded precision-recall model (Theorem 5)"
    )
    bounds = " and ".join(_BOUND_TEXT[n].format(v) for n, v in target.as_dict().items())
    ood = rows["ood"]
    return [
        "# Selective prediction report (with out-of-distribution rows)",
        "",
        f"Target: **{target}** ({model} of Franc, Prusa & Paplham: the smallest selective risk of the accepted "
        f"in-distribution (ID) rows subject to "
        f"{bounds}); OOD rows marked by column "
        f"`{report['ood_column']}`. Loss: {report['loss']}; score: "
        + (
            f"{report['score'].upper()} with C = {report['C']:g} "
            "(learned from the ID rows, chosen by validation AuRC)."
            if report["C"] is not None
            and len(report.get("score_choice", {}).get("validation_aurc", ())) < 2
            else f"{_score_text(report)}."
        ),
        "",
        f"Selection function (randomized threshold rule): accept if uncertainty < {sel['threshold']}, "
        f"accept with probability {sel['accept_prob']:.4g} if equal, reject otherwise.",
        "",
        "| rows | fit | validation | calibration | report | total |",
        "|---|---|---|---|---|---|",
        f"| ID | {rows['train_fit']} | {rows['train_validation']} | {rows['calibration'] - ood['calibration']} | "
        f"{rows['report'] - ood['report']} | {rows['total'] - ood['total']} |",
        f"| OOD | 0 | 0 | {ood['calibration']} | {ood['report']} | {ood['total']} |",
        "",
    ]


def _ood_report_rows_lines(report):
    """``report.md`` of an OOD target: the rates, coverage and risk achieved on the report rows."""
    point = report["report"]
    lines = [
        "Achieved on the held-out report rows (not used for fitting or calibration):",
        "",
        "| quantity | value | 95 % interval | method |",
        "|---|---|---|---|",
    ]
    for name in OOD_RATES:
        lines.append(
            f"| {_RATE_LABELS[name]} | {fmt(point[name])} | {_interval(point, name)} | "
            f"{point['rates_ci_method']} |"
        )
    return lines + [
        f"| coverage (share of all rows accepted) | {fmt(point['coverage'])} | {_interval(point, 'coverage')} | "
        f"{point['coverage_ci_method']} |",
        f"| selective risk of the accepted ID rows ({report['risk_unit']}) | {fmt(point['selective_risk'])} | "
        f"{_interval(point, 'selective_risk')} | {point['selective_risk_ci_method']} |",
        f"| risk of the ID rows at full coverage ({report['risk_unit']}) | {fmt(report['risk_full_coverage_report'])} "
        "| | |",
        "",
    ]


def _ood_feasibility_lines(report, target):
    """``report.md`` of an OOD target: each bound met or not, what the calibration rows allow, the AUROC and AuRC."""
    point, cal, aurcs = report["report"], report["calibration"], report["aurc_report"]
    feasibility = report["feasibility"]
    lines = [
        "Feasibility (each bound on the calibration rows, where the rule was fitted, and on the report rows):",
        "",
        "| bound | calibration | met | report | met | met within the 95 % interval |",
        "|---|---|---|---|---|---|",
    ]
    for name, value in target.as_dict().items():
        lines.append(
            f"| {_BOUND_TEXT[name].format(value)} | {fmt(cal[name])} | "
            f"{_yes(feasibility['calibration'][name])} "
            f"| {fmt(point[name])} | {_yes(feasibility['report'][name])} | "
            f"{_yes(feasibility['report_within_ci'][name])} |"
        )
    return lines + [
        "",
        f"On the calibration rows {target.describe_attainable(report['attainable_calibration'])}; coverage "
        f"{fmt(cal['coverage'])}, selective risk of the accepted ID rows {fmt(cal['selective_risk'])} "
        f"{report['risk_unit']}.",
        "",
        f"Separation of ID and OOD report rows by the score: AUROC {fmt(report['auroc_report'])} (0.5 = none). "
        f"AuRC on the ID report rows (lower is better, {report['risk_unit']}): learned score "
        f"{fmt(aurcs['learned_score'])}, random order "
        f"{fmt(aurcs['random_order'])}, oracle {fmt(aurcs['oracle'])}.",
        "",
    ]


def ood_report_markdown(report):
    """The human-readable ``report.md`` of an OOD target.

    Parameters
    ----------
    report : dict
        The content of ``report.json`` for an OOD target (:func:`ood_report_dict`).

    Returns
    -------
    str
    """
    target = parse_target(report["target"])
    lines = [
        *_ood_intro_lines(report, target),
        *_ood_report_rows_lines(report),
        *_ood_feasibility_lines(report, target),
        *guarantee_lines(report),
        *audit_lines(report),
        "![ROC and RC curves](rc_curve.png)",
        "",
    ]
    return "\n".join(lines)


def ood_summary_line(report):
    """The line ``select`` prints for an OOD target: its rates, coverage and selective risk on the report rows."""
    target = parse_target(report["target"])
    point = report["report"]
    names = ("tpr", "fpr") if target.kind == "tpr-fpr" else ("precision", "recall")
    rates = ", ".join(
        f"{name if name in ('precision', 'recall') else name.upper()} {fmt(point[name])} "
        f"{_interval(point, name)}"
        for name in names
    )
    met = report["feasibility"]["report"]["all"]
    within = report["feasibility"]["report_within_ci"]["all"]
    verdict = "met" if met else ("not met, within sampling error" if within else "NOT met")
    return (
        f"report rows: {rates}, coverage {fmt(point['coverage'])} {_interval(point, 'coverage')}, selective risk "
        f"of accepted ID rows {fmt(point['selective_risk'])} {_interval(point, 'selective_risk')} "
        f"{report['risk_unit']}; target "
        f"{target} {verdict}{_certified_text(report)}"
    )
