"""What ``select`` reports: ``report.json``, ``report.md``, the RC figure and the summary line."""

from __future__ import annotations

import io
import json
import math
import platform

import numpy as np

from .. import __version__
from ..metrics import aurc
from ..selective import empirical_risk_coverage, operating_point

__all__ = ["figure_png", "json_bytes", "report_dict", "report_markdown", "summary_line", "versions"]


def versions():
    """Versions of rejectopt, Python and the numerical libraries (recorded in the outputs)."""
    import scipy
    import sklearn

    return {"rejectopt": __version__, "python": platform.python_version(), "numpy": np.__version__,
            "scipy": scipy.__version__, "scikit-learn": sklearn.__version__}


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


def report_dict(fit, loss, target, *, score_name, loss_name, C_grid, split, versions):
    """The content of ``report.json`` for a :class:`rejectopt.selective.SelectiveFit` on ``loss``."""
    parts, s, selection = fit.parts, fit.uncertainty, fit.selection
    cal, rep = parts["calibration"], parts["report"]
    loss_rep, s_rep = loss[rep], s[rep]
    calibration_risk, calibration_coverage = empirical_risk_coverage(loss[cal], s[cal], selection)
    return {
        "target": {"kind": target.kind, "value": target.value},
        "loss": loss_name,
        "score": score_name,
        "C": fit.C,
        "C_grid": [float(c) for c in C_grid],
        "validation_aurc": {str(k): v for k, v in fit.validation_aurc.items()},
        "selection": selection.to_dict(),
        "split": split,
        "rows": {"total": int(s.size), "train_fit": int(parts["fit"].size),
                 "train_validation": int(parts["validation"].size), "calibration": int(cal.size),
                 "report": int(rep.size)},
        "calibration": {"coverage": calibration_coverage, "selective_risk": _none_if_nan(calibration_risk)},
        "report": _point_dict(operating_point(loss_rep, s_rep, selection)),
        "aurc_report": {"learned_score": aurc(loss_rep, s_rep), "random_order": float(loss_rep.mean()),
                        "oracle": aurc(loss_rep, loss_rep)},
        "risk_full_coverage_report": float(loss_rep.mean()),
        "versions": versions,
    }


def report_figure(fit, loss, report, score_label):
    """RC curve of the report rows with the chosen operating point (:func:`rejectopt.report.rc_figure`)."""
    from ..report import rc_figure  # lazy: rejectopt.report imports the classifiers, apply does not need them

    rep = fit.parts["report"]
    loss_rep, s_rep = loss[rep], fit.uncertainty[rep]
    unit = f"{report['loss']}{', %' if report['loss'] == 'zero_one' else ''}"
    target = report["target"]
    return rc_figure(loss_rep, s_rep, score_label=score_label, point=operating_point(loss_rep, s_rep, fit.selection),
                     point_label=f"chosen point ({target['kind']}={target['value']:g})", risk_label=unit,
                     title=f"report rows (n={report['rows']['report']})")


def fmt(value, digits=4):
    return "n/a" if value is None else f"{value:.{digits}g}"


def report_markdown(report):
    """The human-readable ``report.md``."""
    point, rows, aurcs = report["report"], report["rows"], report["aurc_report"]
    sel = report["selection"]
    lines = [
        "# Selective prediction report",
        "",
        f"Target: **{report['target']['kind']} = {report['target']['value']:g}** (loss: {report['loss']}); "
        f"score: {report['score'].upper()} with C = {report['C']:g} (chosen by validation AuRC).",
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
        f"| selective risk | {fmt(point['selective_risk'])} | [{fmt(point['selective_risk_ci'][0])}, "
        f"{fmt(point['selective_risk_ci'][1])}] | {point['selective_risk_ci_method']} |",
        f"| risk at full coverage | {fmt(report['risk_full_coverage_report'])} | | |",
        "",
        f"On the calibration rows: coverage {fmt(report['calibration']['coverage'])}, selective risk "
        f"{fmt(report['calibration']['selective_risk'])}.",
        "",
        "AuRC on the report rows (lower is better): "
        f"learned score {fmt(aurcs['learned_score'])}, random order {fmt(aurcs['random_order'])}, "
        f"oracle {fmt(aurcs['oracle'])}.",
        "",
        "![RC curve](rc_curve.png)",
        "",
    ]
    return "\n".join(lines)


def summary_line(report):
    """The line ``select`` prints: coverage and selective risk on the report rows with their intervals."""
    point = report["report"]
    return (f"report rows: coverage {fmt(point['coverage'])} [{fmt(point['coverage_ci'][0])}, "
            f"{fmt(point['coverage_ci'][1])}], selective risk {fmt(point['selective_risk'])} "
            f"[{fmt(point['selective_risk_ci'][0])}, {fmt(point['selective_risk_ci'][1])}]")


def json_bytes(obj):
    return (json.dumps(obj, indent=2, allow_nan=False) + "\n").encode()


def figure_png(fig):
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    return buffer.getvalue()
