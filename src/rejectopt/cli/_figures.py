"""The command line's figures: ``select``'s RC curve, its ROC and RC curves for an OOD target, and
the files each figure is written to (``--figure-format``).

They draw what :class:`rejectopt.fitting.SelectiveFit` and the ``report.json`` content hold; the
numbers are computed in the library (:func:`rejectopt.selective.operating_point`, with
``is_ood`` for the OOD rows). The drawing of an RC curve is the pipeline report's
(:func:`rejectopt.pipeline.report.rc_figure`), so a curve looks the same in both.
"""

from __future__ import annotations

from ..metrics import rc_curve
from ..ood import roc_curve
from ..pipeline.report import rc_figure
from ..pipeline.report._figures import figure_bytes, figure_paths
from ..selective import operating_point
from ..targets import parse_target

__all__ = ["figure_files", "figure_names", "ood_select_figure", "select_figure"]


def figure_names(png, args):
    """A figure's file names: ``png`` and its copy in each further --figure-format (the PNG first).

    Parameters
    ----------
    png : str
        The PNG's file name.
    args : argparse.Namespace
        The command's options (``figure_format``).

    Returns
    -------
    list of str
    """
    return [path.name for path in figure_paths(png, args.figure_format or ["png"])]


def figure_files(png, figure, args):
    """``{name: bytes}`` of a figure in every format of :func:`figure_names` (PDF and SVG without a date).

    Parameters
    ----------
    png : str
        The PNG's file name.
    figure : matplotlib.figure.Figure
        The figure.
    args : argparse.Namespace
        The command's options (``figure_format``).

    Returns
    -------
    dict of str to bytes
    """
    return {name: figure_bytes(figure, name.rsplit(".", 1)[1]) for name in figure_names(png, args)}


def _unit(report):
    """The loss's unit on an axis: ``zero_one, %`` for the 0/100 loss, the loss's name otherwise."""
    return f"{report['loss']}{', %' if report['loss'] == 'zero_one' else ''}"


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
    target = report["target"]
    return rc_figure(
        loss_rep,
        s_rep,
        score_label=score_label,
        point=operating_point(loss_rep, s_rep, fit.selection, loss_bound=report["loss_bound"]),
        point_label=f"chosen point ({target['kind']}={target['value']:g})",
        risk_label=_unit(report),
        title=f"report rows (n={report['rows']['report']})",
    )


def _bar(value, ci):
    """An error bar's lower and upper lengths from a value and its interval (never negative)."""
    return [[max(0.0, value - ci[0])], [max(0.0, ci[1] - value)]]


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
    fig = Figure(figsize=(10.0, 4.0), dpi=110)
    roc, rc = fig.add_subplot(1, 2, 1), fig.add_subplot(1, 2, 2)
    _draw_roc(roc, ood_rep, s_rep, report, score_label)
    _draw_id_rc(rc, loss[rep][~ood_rep], s_rep[~ood_rep], report, score_label)
    fig.tight_layout()
    return fig


def _draw_roc(roc, ood_rep, s_rep, report, score_label):
    """The report rows' ROC curve on the axes ``roc``, with the chosen point and the target's bounds."""
    point, target = report["report"], parse_target(report["target"])
    fpr, tpr, _ = roc_curve(ood_rep, s_rep)
    roc.plot(fpr, tpr, label=f"{score_label} score (AUROC {report['auroc_report']:.3g})")
    roc.plot([0, 1], [0, 1], color="0.7", lw=1, label="random order")
    roc.errorbar(
        [point["fpr"]],
        [point["tpr"]],
        xerr=_bar(point["fpr"], point["fpr_ci"]),
        yerr=_bar(point["tpr"], point["tpr_ci"]),
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


def _draw_id_rc(rc, loss_id, s_id, report, score_label):
    """The ID report rows' RC curve on the axes ``rc``, with the chosen point (when it accepts an ID row)."""
    point = report["report"]
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
            xerr=_bar(point["tpr"], point["tpr_ci"]),
            yerr=_bar(point["selective_risk"], point["selective_risk_ci"]),
            fmt="o",
            color="C3",
            capsize=3,
            label="chosen point",
        )
    rc.set_xlabel("coverage of the ID rows (= TPR)")
    rc.set_ylabel(f"selective risk of the accepted ID rows ({_unit(report)})")
    rc.set_xlim(0, 1)
    rc.set_title("ID report rows: risk-coverage curve", fontsize=10)
    rc.legend(fontsize=8, loc="lower right")
