"""Figures of the results: improvement over the baseline (Fig. 2 / 3b) and CD diagrams."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..stats import cd_diagram, nemenyi_cd
from ._specs import TableSpec, label, metric_label
from ._tables import TableStatistics, format_number

__all__ = ["CD_ALPHA", "improvement_figure", "cd_figure", "message_figure", "rc_figure", "rc_curves_figure", "mean_rc_curve"]

#: Significance level of the Nemenyi test in the CD diagrams, as in the paper's Fig. 1 and 3a.
CD_ALPHA = 0.10


def improvement_figure(gains: pd.DataFrame, spec: TableSpec):
    """Grouped bar chart of the relative improvement over the baseline (Fig. 2 / 3b)."""
    from matplotlib.figure import Figure

    methods = list(dict.fromkeys(gains.columns.get_level_values(0)))
    datasets = list(gains.index)
    fig = Figure(figsize=(max(6.0, 0.8 * len(datasets) + 2), 4.0), layout="constrained")
    ax = fig.add_subplot()
    width = 0.8 / max(len(methods), 1)
    x = np.arange(len(datasets))
    for i, m in enumerate(methods):
        ax.bar(x + (i - (len(methods) - 1) / 2) * width, gains[(m, "mean")], width,
               yerr=gains[(m, "std")].fillna(0), capsize=2, label=label(m))
    ax.axhline(0, color="black", linewidth=0.8)
    ax.set_xticks(x, datasets, rotation=45, ha="right")
    ax.set_ylabel(f"improvement over {label(spec.baseline)} [%]")
    ax.set_title(f"{spec.title}\nAuRC improvement over {label(spec.baseline)}, mean ± std over splits",
                 fontsize=10)
    ax.legend()
    return fig


def cd_figure(stats: TableStatistics, spec: TableSpec, metric: str = "aurc"):
    """Critical-difference diagram of a table's average ranks (Nemenyi, alpha = :data:`CD_ALPHA`)."""
    ranks = stats.average_ranks.rename(lambda m: label(m))
    name = spec.title if metric == "aurc" else f"{spec.title} ({metric_label(metric)})"
    if stats.n_datasets < 2:
        return message_figure(f"{name}: a CD diagram needs at least 2 datasets, this run has {stats.n_datasets}.")
    cd = nemenyi_cd(len(ranks), stats.n_datasets, alpha=CD_ALPHA)
    title = f"{name}\nN = {stats.n_datasets} datasets, Nemenyi CD = {format_number(cd)} (alpha = {CD_ALPHA})"
    return cd_diagram(ranks, cd, title=title)


def message_figure(message: str):
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6.0, 1.5))
    fig.text(0.5, 0.5, message, ha="center", va="center", wrap=True)
    return fig


def rc_figure(loss, uncertainty, *, score_label="score", point=None, point_label="chosen point",
              risk_label="loss", title=None):
    """Risk-coverage curve of ``uncertainty`` on ``loss``, with the oracle and random order.

    Parameters
    ----------
    loss, uncertainty : array-like of shape (n,)
    score_label : str
        Legend label of the score (its AuRC is appended).
    point : rejectopt.selective.OperatingPoint or None
        An operating point (coverage, selective risk) drawn with its intervals as error
        bars; skipped when its selective risk is undefined (NaN: nothing accepted).
    point_label, risk_label, title : str
        Legend label of the point, the loss in the y label, the axes title.

    Returns
    -------
    matplotlib.figure.Figure
    """
    import math

    from matplotlib.figure import Figure

    from ..metrics import aurc, rc_curve

    loss = np.asarray(loss, dtype=float)
    fig = Figure(figsize=(5.5, 4.0), dpi=110)
    ax = fig.add_subplot()
    learned, oracle, random_order = aurc(loss, uncertainty), aurc(loss, loss), float(loss.mean())
    ax.plot(*rc_curve(loss, uncertainty), label=f"{score_label} score (AuRC {learned:.3g})")
    ax.plot(*rc_curve(loss, loss), color="0.6", lw=1, label=f"oracle (AuRC {oracle:.3g})")
    ax.axhline(random_order, color="0.3", ls="--", lw=1, label=f"random order (AuRC {random_order:.3g})")
    if point is not None and not math.isnan(point.selective_risk):
        (cov_low, cov_high), (risk_low, risk_high) = point.coverage_ci, point.selective_risk_ci
        ax.errorbar([point.coverage], [point.selective_risk],
                    xerr=[[max(0.0, point.coverage - cov_low)], [max(0.0, cov_high - point.coverage)]],
                    yerr=[[max(0.0, point.selective_risk - risk_low)], [max(0.0, risk_high - point.selective_risk)]],
                    fmt="o", color="C3", capsize=3, label=point_label)
    ax.set_xlabel("coverage")
    ax.set_ylabel(f"selective risk ({risk_label})")
    ax.set_xlim(0, 1)
    if title:
        ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8, loc="upper left")
    fig.tight_layout()
    return fig


#: Coverages at which the per-split RC curves are averaged (``rc_curves_figure``).
RC_GRID = np.linspace(0.01, 1.0, 100)


def mean_rc_curve(samples, grid=RC_GRID):
    """Mean and std over splits of the selective risk at the coverages ``grid``.

    ``samples`` is a list of ``(loss, uncertainty)`` pairs, one per split; each
    split's RC curve (:func:`rejectopt.metrics.rc_curve`, points ``(i/n, L(i)/i)``)
    is read at ``grid`` by linear interpolation, so splits of different sizes
    average on the same coverages.
    """
    from ..metrics import rc_curve

    risks = np.array([np.interp(grid, *rc_curve(loss, u)) for loss, u in samples])
    return risks.mean(axis=0), risks.std(axis=0)


def rc_curves_figure(curves: dict, title: str, risk_label: str = "loss"):
    """Every score's Tst RC curve (mean over splits with a +- std band), the oracle and the random order.

    Parameters
    ----------
    curves : dict
        Score name -> list of ``(loss, uncertainty)`` per split (every score
        of one classifier shares the losses of a split).
    title : str
    risk_label : str
        The loss in the y label.
    """
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6.0, 4.2), layout="constrained")
    ax = fig.add_subplot()
    for k, (score, samples) in enumerate(curves.items()):
        mean, std = mean_rc_curve(samples)
        ax.plot(RC_GRID, mean, color=f"C{k}", label=label(score))
        ax.fill_between(RC_GRID, mean - std, mean + std, color=f"C{k}", alpha=0.2, linewidth=0)
    first = next(iter(curves.values()))
    oracle, _ = mean_rc_curve([(loss, loss) for loss, _ in first])
    ax.plot(RC_GRID, oracle, color="0.5", lw=1, ls=":", label="oracle")
    ax.axhline(float(np.mean([np.mean(loss) for loss, _ in first])), color="0.3", lw=1, ls="--", label="random order")
    ax.set_xlabel("coverage")
    ax.set_ylabel(f"selective risk ({risk_label})")
    ax.set_xlim(0, 1)
    ax.set_ylim(bottom=0)
    ax.set_title(f"{title}\nTst, mean ± std over {len(first)} split(s)", fontsize=10)
    ax.legend(fontsize=8, loc="upper left")
    return fig

