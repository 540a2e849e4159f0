"""Internal (the pipeline's report): figures of the results: improvement over the baseline
(Fig. 2 / 3b) and CD diagrams."""

from __future__ import annotations

import io
import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..._io import atomic_path
from ...metrics import aurc, rc_curve
from ...stats import cliques, nemenyi_cd
from ..tables import TableSpec, TableStatistics
from ._format import format_number
from ._specs import label, metric_label

__all__ = [
    "CD_ALPHA",
    "FIGURE_FORMATS",
    "cd_diagram",
    "figure_bytes",
    "figure_paths",
    "improvement_figure",
    "cd_figure",
    "message_figure",
    "rc_figure",
    "rc_curves_figure",
    "mean_rc_curve",
    "save_figure",
]

#: Significance level of the Nemenyi test in the CD diagrams, as in the paper's Fig. 1 and 3a.
CD_ALPHA = 0.10

#: The formats a figure can be written in (config figure_formats): PNG (150 dpi) for the HTML report,
#: PDF and SVG as vector graphics for papers.
FIGURE_FORMATS = ("png", "pdf", "svg")


def figure_paths(path, formats=("png",)) -> list[Path]:
    """``path`` (a ``.png``) and, beside it with the same stem, its copy in each further format.

    Parameters
    ----------
    path : path-like
        The figure's PNG path, as a rule declares it.
    formats : sequence of str, default ("png",)
        Among :data:`FIGURE_FORMATS`; PNG is always written (the report shows it).

    Returns
    -------
    list of pathlib.Path
        The PNG path first, then one path per further format, in the order given.
    """
    path = Path(path)
    if path.suffix != ".png":
        raise ValueError(
            f"{path}: a figure's path must end in .png (its other formats go beside it)"
        )
    unknown = sorted(set(formats) - set(FIGURE_FORMATS))
    if unknown:
        raise ValueError(
            f"figure format(s) {unknown} unknown; config figure_formats takes {list(FIGURE_FORMATS)}"
        )
    return [path] + [path.with_suffix(f".{fmt}") for fmt in dict.fromkeys(formats) if fmt != "png"]


def figure_bytes(figure, fmt: str = "png", dpi=None) -> bytes:
    """``figure`` as the bytes of a ``fmt`` file (one of :data:`FIGURE_FORMATS`).

    PDF and SVG are vector: lines and text stay lines and text at any zoom. They carry no creation
    date, so the same figure gives the same bytes on every run, and the PDF embeds its fonts as
    TrueType (Type 42), which journals' checks accept where Type 3 fonts are refused.

    Parameters
    ----------
    figure : matplotlib.figure.Figure
        The figure.
    fmt : {"png", "pdf", "svg"}, default "png"
        The file format.
    dpi : float or None, default None
        Resolution of the PNG (and of any raster part of the others); None: matplotlib's
        ``savefig.dpi`` (by default the figure's own).

    Returns
    -------
    bytes
        The file's content.
    """
    import matplotlib  # matplotlib: heavy, only the figure jobs need it

    if fmt not in FIGURE_FORMATS:
        raise ValueError(f"figure format {fmt!r} unknown; one of {list(FIGURE_FORMATS)}")
    metadata = {"pdf": {"CreationDate": None}, "svg": {"Date": None}, "png": None}[fmt]
    buffer = io.BytesIO()
    with matplotlib.rc_context({"pdf.fonttype": 42, "svg.hashsalt": "rejectopt"}):
        figure.savefig(buffer, format=fmt, dpi=dpi, metadata=metadata)
    return buffer.getvalue()


def save_figure(figure, path, formats=("png",), dpi: int = 150) -> None:
    """Write ``figure`` to ``path`` (PNG, ``dpi``) and beside it in every further format, atomically.

    Each file is :func:`figure_bytes` of its format: PDF and SVG are vector graphics with no creation
    date (the same bytes on every run).

    Parameters
    ----------
    figure : matplotlib.figure.Figure
        The figure.
    path : path-like
        The PNG path; the other formats replace its suffix (:func:`figure_paths`).
    formats : sequence of str, default ("png",)
        The formats to write (config figure_formats).
    dpi : int, default 150
        Resolution of the PNG.
    """
    for target in figure_paths(path, formats):
        with atomic_path(target) as tmp:
            tmp.write_bytes(figure_bytes(figure, target.suffix[1:], dpi))


# --------------------------------------------------------------------------------------------
# Critical-difference diagram
# --------------------------------------------------------------------------------------------
_LINE_STEP = 0.28  # inches between two method lines
_BAR_STEP = 0.12  # inches between two clique bars
_FONT_SIZE = 10


def _label_width_inches(labels: list[str]) -> float:
    return 0.3 + 0.08 * max(len(label) for label in labels)


def _wrap_to_width(text: str, width_inches: float, fontsize: float) -> str:
    """``text`` with each line wider than ``width_inches`` (as rendered at ``fontsize``) broken at spaces.

    The CD diagram's width follows its method labels, not its title: a long table title or the
    no-power line would otherwise run past both edges of the figure and be cut. Lines that fit are
    left as they are, so a title that fits gives the same figure as before.
    """
    # matplotlib: heavy, only the figure jobs need it
    from matplotlib.font_manager import FontProperties
    from matplotlib.textpath import TextToPath  # matplotlib, as above

    measure, font = TextToPath(), FontProperties(size=fontsize)

    def fits(line: str) -> bool:
        return (
            measure.get_text_width_height_descent(line, font, ismath=False)[0]
            <= 72.0 * width_inches
        )

    lines = []
    for line in text.split("\n"):
        current = ""
        for word in line.split(" "):
            candidate = f"{current} {word}" if current else word
            if current and not fits(candidate):
                lines.append(current)
                current = word
            else:
                current = candidate
        lines.append(current)
    return "\n".join(lines)


def cd_diagram(
    avg_ranks: pd.Series,
    cd: float,
    ax: Any = None,
    title: str | None = None,
) -> Any:
    """Demsar-style critical-difference diagram (Demsar 2006, Fig. 1; the paper's Figs. 1, 3a).

    A horizontal axis of average ranks 1..k (best on the left), each method's name on a line
    going to its average rank (better half on the left, worse half on the right), thick bars
    joining groups not significantly different (``rejectopt.stats.cliques``) and the CD interval drawn
    above the axis.

    Parameters
    ----------
    avg_ranks : pandas.Series
        Average rank per method (index = method names).
    cd : float
        Critical difference, e.g. from :func:`nemenyi_cd`.
    ax : matplotlib.axes.Axes, optional
        Axes to draw into; by default a new :class:`matplotlib.figure.Figure` is created
        (no pyplot, no backend selection).
    title : str, optional
        Title written above the diagram.

    Returns
    -------
    matplotlib.figure.Figure
        The figure of ``ax`` (or the new one), sized to fit the labels.
    """
    ranks = pd.Series(avg_ranks, dtype=float).sort_values(kind="stable")
    if ranks.size < 2:
        raise ValueError(f"need at least 2 methods, got {ranks.size}")
    groups = cliques(ranks, cd)
    k = ranks.size
    labels = [f"{name} ({rank:.2f})" for name, rank in ranks.items()]
    n_left = (k + 1) // 2
    left = list(zip(labels[:n_left], ranks.to_numpy()[:n_left]))
    right = list(zip(labels[n_left:], ranks.to_numpy()[n_left:]))[::-1]  # worst first

    # geometry in inches: x maps ranks via scale, y goes down from the axis at 0
    text_width = _label_width_inches(labels)
    axis_width = max(2.5, 0.9 * (k - 1))
    width = axis_width + 2 * text_width
    bars_depth = 0.15 + _BAR_STEP * len(groups)
    lines_depth = bars_depth + _LINE_STEP * (max(len(left), len(right)) + 0.5)
    if title:
        title = _wrap_to_width(title, width - 0.2, _FONT_SIZE + 1)
    n_title = title.count("\n") + 1 if title else 0
    # 0.15 inch for each of the first two title lines (they reach into the margin above the CD label),
    # a full line (1.2 x the font size) for each further one, which would otherwise cover the label
    top = 0.95 + 0.15 * min(n_title, 2) + 1.2 * (_FONT_SIZE + 1) / 72 * max(n_title - 2, 0)
    scale = axis_width / (k - 1)

    def x_of(rank: float) -> float:
        return text_width + (rank - 1.0) * scale

    if ax is None:
        from matplotlib.figure import Figure  # matplotlib: heavy, only the figure jobs need it

        fig = Figure(figsize=(width, top + lines_depth))
        ax = fig.add_axes((0.0, 0.0, 1.0, 1.0))
    fig = ax.figure
    ax.set_xlim(0.0, width)
    ax.set_ylim(-lines_depth, top)
    ax.set_axis_off()

    line_kw = dict(color="black", linewidth=1.0, solid_capstyle="butt")
    # rank axis with ticks and labels
    ax.plot([x_of(1), x_of(k)], [0, 0], **line_kw)
    for tick in np.arange(1.0, k + 0.01, 0.5):
        height = 0.1 if float(tick).is_integer() else 0.05
        ax.plot([x_of(tick), x_of(tick)], [0, height], **line_kw)
        if float(tick).is_integer():
            ax.text(x_of(tick), 0.14, f"{int(tick)}", ha="center", va="bottom", fontsize=_FONT_SIZE)

    # CD interval above the axis
    cd_y = 0.6
    ax.plot([x_of(1), x_of(1 + cd)], [cd_y, cd_y], **line_kw)
    for end in (1, 1 + cd):
        ax.plot([x_of(end), x_of(end)], [cd_y - 0.05, cd_y + 0.05], **line_kw)
    ax.text(
        x_of(1 + cd / 2),
        cd_y + 0.07,
        f"CD = {cd:.2f}",
        ha="center",
        va="bottom",
        fontsize=_FONT_SIZE,
    )

    # method lines and labels
    for side, items in (("left", left), ("right", right)):
        for i, (name, rank) in enumerate(items):
            y = -(bars_depth + _LINE_STEP * (i + 0.5))
            x_end = x_of(1) - 0.15 if side == "left" else x_of(k) + 0.15
            ax.plot([x_of(rank), x_of(rank), x_end], [0, y, y], **line_kw)
            ax.text(
                x_end - 0.05 if side == "left" else x_end + 0.05,
                y,
                name,
                ha="right" if side == "left" else "left",
                va="center",
                fontsize=_FONT_SIZE,
            )

    # thick bars joining methods that are not significantly different
    for i, group in enumerate(groups):
        y = -(0.1 + _BAR_STEP * (i + 0.5))
        low, high = ranks[group[0]], ranks[group[-1]]
        ax.plot(
            [x_of(low) - 0.04, x_of(high) + 0.04],
            [y, y],
            color="black",
            linewidth=3.0,
            solid_capstyle="butt",
        )

    if title:
        ax.text(width / 2, top - 0.05, title, ha="center", va="top", fontsize=_FONT_SIZE + 1)
    return fig


def improvement_figure(gains: pd.DataFrame, spec: TableSpec):
    """Grouped bar chart of the relative improvement over the baseline (Fig. 2 / 3b).

    Parameters
    ----------
    gains : pandas.DataFrame
        :func:`rejectopt.pipeline.tables.relative_improvement`: indexed by dataset, columns ``(method, 'mean'|'std')``
        in percent.
    spec : TableSpec
        The table (its title and baseline).

    Returns
    -------
    matplotlib.figure.Figure
        One group of bars per dataset, one bar (mean, std as error bar) per method.
    """
    from matplotlib.figure import Figure  # matplotlib: heavy, only the figure jobs need it

    methods = list(dict.fromkeys(gains.columns.get_level_values(0)))
    datasets = list(gains.index)
    fig = Figure(figsize=(max(6.0, 0.8 * len(datasets) + 2), 4.0), layout="constrained")
    ax = fig.add_subplot()
    width = 0.8 / max(len(methods), 1)
    x = np.arange(len(datasets))
    for i, m in enumerate(methods):
        ax.bar(
            x + (i - (len(methods) - 1) / 2) * width,
            gains[(m, "mean")],
            width,
            yerr=gains[(m, "std")].fillna(0),
            capsize=2,
            label=label(m),
        )
    ax.axhline(0, color="black", linewidth=0.8)
    ax.set_xticks(x, datasets, rotation=45, ha="right")
    ax.set_ylabel(f"improvement over {label(spec.baseline)} [%]")
    ax.set_title(
        f"{spec.title}\nAuRC improvement over {label(spec.baseline)}, mean ± std over splits",
        fontsize=10,
    )
    ax.legend()
    return fig


def cd_figure(stats: TableStatistics, spec: TableSpec, metric: str = "aurc"):
    """Critical-difference diagram of a table's average ranks (Nemenyi, alpha = :data:`CD_ALPHA`).

    Parameters
    ----------
    stats : TableStatistics
        The table's average ranks and number of datasets (:func:`rejectopt.pipeline.tables.table_statistics`).
    spec : TableSpec
        The table (its title).
    metric : str, default "aurc"
        The metric the ranks are of; named in the title unless it is AuRC.

    Returns
    -------
    matplotlib.figure.Figure
        :func:`cd_diagram`, or a :func:`message_figure` saying why when there are fewer than
        2 datasets.
    """
    ranks = stats.average_ranks.rename(lambda m: label(m))
    name = spec.title if metric == "aurc" else f"{spec.title} ({metric_label(metric)})"
    if stats.n_datasets < 2:
        return message_figure(
            f"{name}: a CD diagram needs at least 2 datasets, this run has {stats.n_datasets}."
        )
    cd = nemenyi_cd(len(ranks), stats.n_datasets, alpha=CD_ALPHA)
    title = f"{name}\nN = {stats.n_datasets} datasets, Nemenyi CD = {format_number(cd)} (alpha = {CD_ALPHA})"
    if (
        not stats.tests_have_power
    ):  # N too small for the Friedman test to reject (rejectopt.pipeline.tables)
        title += (
            f"\nno power: with N = {stats.n_datasets} the Friedman test cannot reject "
            f"(smallest possible p {stats.min_friedman_pvalue:.3f} > 0.05)"
        )
    return cd_diagram(ranks, cd, title=title)


def message_figure(message: str):
    """A figure holding only a sentence: what a figure job draws when there is nothing to plot.

    Parameters
    ----------
    message : str
        The sentence, centred and wrapped.

    Returns
    -------
    matplotlib.figure.Figure
        Without axes.
    """
    from matplotlib.figure import Figure  # matplotlib: heavy, only the figure jobs need it

    fig = Figure(figsize=(6.0, 1.5))
    fig.text(0.5, 0.5, message, ha="center", va="center", wrap=True)
    return fig


def rc_figure(
    loss,
    uncertainty,
    *,
    score_label="score",
    point=None,
    point_label="chosen point",
    risk_label="loss",
    title=None,
):
    """Risk-coverage curve of ``uncertainty`` on ``loss``, with the oracle and random order.

    Parameters
    ----------
    loss, uncertainty : array-like of shape (n,)
        Per-example losses and uncertainty scores (larger = reject first).
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
        One axes: coverage against selective risk.
    """
    from matplotlib.figure import Figure  # matplotlib: heavy, only the figure jobs need it

    loss = np.asarray(loss, dtype=float)
    fig = Figure(figsize=(5.5, 4.0), dpi=110)
    ax = fig.add_subplot()
    learned, oracle, random_order = aurc(loss, uncertainty), aurc(loss, loss), float(loss.mean())
    ax.plot(*rc_curve(loss, uncertainty), label=f"{score_label} score (AuRC {learned:.3g})")
    ax.plot(*rc_curve(loss, loss), color="0.6", lw=1, label=f"oracle (AuRC {oracle:.3g})")
    ax.axhline(
        random_order, color="0.3", ls="--", lw=1, label=f"random order (AuRC {random_order:.3g})"
    )
    if point is not None and not math.isnan(point.selective_risk):
        (cov_low, cov_high), (risk_low, risk_high) = point.coverage_ci, point.selective_risk_ci
        ax.errorbar(
            [point.coverage],
            [point.selective_risk],
            xerr=[[max(0.0, point.coverage - cov_low)], [max(0.0, cov_high - point.coverage)]],
            yerr=[
                [max(0.0, point.selective_risk - risk_low)],
                [max(0.0, risk_high - point.selective_risk)],
            ],
            fmt="o",
            color="C3",
            capsize=3,
            label=point_label,
        )
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

    Parameters
    ----------
    samples : list of (array_like, array_like)
        ``(loss, uncertainty)`` of each split.
    grid : array_like of float, default ``RC_GRID``
        Coverages in (0, 1] (default 0.01, 0.02, ..., 1).

    Returns
    -------
    mean, std : numpy.ndarray
        Mean and (population) standard deviation over the splits at each coverage of ``grid``.
    """
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
        First line of the axes title.
    risk_label : str
        The loss in the y label.

    Returns
    -------
    matplotlib.figure.Figure
        One axes: coverage against selective risk.
    """
    from matplotlib.figure import Figure  # matplotlib: heavy, only the figure jobs need it

    fig = Figure(figsize=(6.0, 4.2), layout="constrained")
    ax = fig.add_subplot()
    for k, (score, samples) in enumerate(curves.items()):
        mean, std = mean_rc_curve(samples)
        ax.plot(RC_GRID, mean, color=f"C{k}", label=label(score))
        ax.fill_between(RC_GRID, mean - std, mean + std, color=f"C{k}", alpha=0.2, linewidth=0)
    first = next(iter(curves.values()))
    oracle, _ = mean_rc_curve([(loss, loss) for loss, _ in first])
    ax.plot(RC_GRID, oracle, color="0.5", lw=1, ls=":", label="oracle")
    ax.axhline(
        float(np.mean([np.mean(loss) for loss, _ in first])),
        color="0.3",
        lw=1,
        ls="--",
        label="random order",
    )
    ax.set_xlabel("coverage")
    ax.set_ylabel(f"selective risk ({risk_label})")
    ax.set_xlim(0, 1)
    ax.set_ylim(bottom=0)
    ax.set_title(f"{title}\nTst, mean ± std over {len(first)} split(s)", fontsize=10)
    ax.legend(fontsize=8, loc="upper left")
    return fig
