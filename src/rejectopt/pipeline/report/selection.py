"""Internal: the figures of the CLI's ``python -m rejectopt select``; not part of the public API.

The RC curve of the held-out report rows, and for a target with out-of-distribution rows their
ROC and RC curves, each with the chosen operating point.

They draw what :class:`rejectopt.fitting.SelectiveFit` and the ``report.json`` content hold; the
numbers are computed in the library (:func:`rejectopt.selective.operating_point`, with
``is_ood`` for the OOD rows).
"""

from __future__ import annotations

from ...metrics import rc_curve
from ...ood import roc_curve
from ...selective import operating_point
from ...targets import parse_target
from ._figures import rc_figure

__all__ = ["ood_select_figure", "select_figure"]


def select_figure(fit, loss, report, score_label):
    """RC curve of the report rows with the chosen operating point (:func:`rc_figure`).

    Parameters
    ----------
    fit : rejectopt.fitting.SelectiveFit
        The fitted score and selection function, with the row split.
    loss : numpy.ndarray of shape (n,)
        The classifier's losses on every row.
    report : dict
        The content of ``report.json`` (``target``, ``loss``, ``rows``).
    score_label : str
        Display label of the score.

    Returns
    -------
    matplotlib.figure.Figure
        The report rows' RC curve, the oracle, the random order and the chosen point.
    """
    rep = fit.parts["report"]
    loss_rep, s_rep = loss[rep], fit.uncertainty[rep]
    unit = f"{report['loss']}{', %' if report['loss'] == 'zero_one' else ''}"
    target = report["target"]
    return rc_figure(
        loss_rep,
        s_rep,
        score_label=score_label,
        point=operating_point(loss_rep, s_rep, fit.selection, loss_bound=report["loss_bound"]),
        point_label=f"chosen point ({target['kind']}={target['value']:g})",
        risk_label=unit,
        title=f"report rows (n={report['rows']['report']})",
    )


def ood_select_figure(fit, loss, is_ood, report, score_label):
    """ROC curve (TPR vs FPR) of the report rows and RC curve of their ID rows, each with the chosen point.

    Parameters
    ----------
    fit : rejectopt.fitting.SelectiveFit
        The fitted score and selection function (an OOD target), with the row split.
    loss : numpy.ndarray of shape (n,)
        The classifier's losses (NaN on OOD rows).
    is_ood : numpy.ndarray of bool, shape (n,)
        True on the out-of-distribution rows.
    report : dict
        The content of ``report.json`` for an OOD target.
    score_label : str
        Display label of the score.

    Returns
    -------
    matplotlib.figure.Figure
        Two axes: the ROC curve and the ID rows' RC curve.
    """
    from matplotlib.figure import Figure  # matplotlib: heavy, only select draws figures

    rep = fit.parts["report"]
    ood_rep, s_rep = is_ood[rep], fit.uncertainty[rep]
    point, target = report["report"], parse_target(report["target"])
    fig = Figure(figsize=(10.0, 4.0), dpi=110)
    roc, rc = fig.add_subplot(1, 2, 1), fig.add_subplot(1, 2, 2)
    fpr, tpr, _ = roc_curve(ood_rep, s_rep)
    roc.plot(fpr, tpr, label=f"{score_label} score (AUROC {report['auroc_report']:.3g})")
    roc.plot([0, 1], [0, 1], color="0.7", lw=1, label="random order")

    def bar(value, ci):
        return [[max(0.0, value - ci[0])], [max(0.0, ci[1] - value)]]

    roc.errorbar(
        [point["fpr"]],
        [point["tpr"]],
        xerr=bar(point["fpr"], point["fpr_ci"]),
        yerr=bar(point["tpr"], point["tpr_ci"]),
        fmt="o",
        color="C3",
        capsize=3,
        label=f"chosen point ({target})",
    )
    bounds = target.as_dict()
    if "tpr" in bounds:
        roc.axhline(bounds["tpr"], color="0.4", ls=":", lw=1)
        roc.axvline(bounds["fpr"], color="0.4", ls=":", lw=1)
    else:
        roc.axhline(bounds["recall"], color="0.4", ls=":", lw=1)
    roc.set_xlabel("FPR (share of OOD rows accepted)")
    roc.set_ylabel("TPR (share of ID rows accepted)")
    roc.set_xlim(0, 1)
    roc.set_ylim(0, 1.01)
    roc.set_title(
        f"report rows: {report['rows']['report'] - report['rows']['ood']['report']} ID, "
        f"{report['rows']['ood']['report']} OOD",
        fontsize=10,
    )
    roc.legend(fontsize=8, loc="lower right")
    loss_id, s_id = loss[rep][~ood_rep], s_rep[~ood_rep]
    rc.plot(
        *rc_curve(loss_id, s_id),
        label=f"{score_label} score (AuRC {report['aurc_report']['learned_score']:.3g})",
    )
    rc.axhline(
        report["risk_full_coverage_report"], color="0.3", ls="--", lw=1, label="random order"
    )
    if point["selective_risk"] is not None:
        rc.errorbar(
            [point["tpr"]],
            [point["selective_risk"]],
            xerr=bar(point["tpr"], point["tpr_ci"]),
            yerr=bar(point["selective_risk"], point["selective_risk_ci"]),
            fmt="o",
            color="C3",
            capsize=3,
            label="chosen point",
        )
    unit = f"{report['loss']}{', %' if report['loss'] == 'zero_one' else ''}"
    rc.set_xlabel("coverage of the ID rows (= TPR)")
    rc.set_ylabel(f"selective risk of the accepted ID rows ({unit})")
    rc.set_xlim(0, 1)
    rc.set_title("ID report rows: risk-coverage curve", fontsize=10)
    rc.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    return fig
