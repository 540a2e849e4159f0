"""Internal: the pipeline's rendering of the guarantees experiment (:mod:`rejectopt.pipeline.experiments.guarantees`).

Its pooled tables as Markdown and one figure: per target, the violation rates of the plug-in and
certified targets at each delta, and the coverage certification costs.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from ..._io import atomic_path
from ..experiments.guarantees import NAME
from ..tables import load_csv
from ._figures import figure_paths, save_figure

__all__ = ["render"]


def _markdown(table: pd.DataFrame, digits: int = 3) -> str:
    """A pipe table of ``table`` (its index as leading columns), numbers rounded to ``digits``."""
    frame = table.reset_index()

    def cell(value):
        if isinstance(value, (float, np.floating)):
            return (
                ""
                if math.isnan(value)
                else f"{value:.{digits}f}".rstrip("0").rstrip(".")
                if value % 1
                else f"{value:.0f}"
            )
        return str(value)

    lines = ["| " + " | ".join(map(str, frame.columns)) + " |", "|" + "---|" * frame.shape[1]]
    lines += [
        "| " + " | ".join(cell(v) for v in row) + " |" for row in frame.itertuples(index=False)
    ]
    return "\n".join(lines) + "\n"


def render(tables_dir, out_dir, formats=("png",)) -> list[Path]:
    """The tables of :func:`rejectopt.pipeline.experiments.guarantees.aggregate` (read from
    ``tables_dir``) as Markdown and one figure.

    Writes ``guarantees.md`` (the summary, then every cell) and ``guarantees.<fmt>`` for each of
    ``formats``: per target, the violation rate of each cell for the plug-in and the certified
    target at each delta (a dashed line at delta), and below, the mean coverage certification costs.

    Parameters
    ----------
    tables_dir : path-like
        The experiment's tables (``cells.csv``, ``summary.csv``).
    out_dir : path-like
        Where the files go (made if missing).
    formats : sequence of str, default ("png",)
        The figure's formats (config ``figure_formats``), written by :func:`save_figure` so a
        rerun gives the same bytes.

    Returns
    -------
    list of pathlib.Path
        The files written.

    Raises
    ------
    rejectopt.exceptions.IntermediateFileError
        A table without its content record (:func:`rejectopt._io.save_csv`), changed since
        the experiment's ``experiment_tables`` job wrote it (a number edited, a row deleted), or
        recorded as another experiment's or table's: the file and ``snakemake --forcerun`` are
        named, before a number of it reaches ``guarantees.md``.
    """
    from matplotlib.figure import Figure  # matplotlib: only the figure needs it

    tables_dir, out_dir = Path(tables_dir), Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    cells, summary = (
        load_csv(
            tables_dir / f"{name}.csv", expect={"experiment": NAME, "table": name}, index_col=index
        )
        for name, index in (("cells", [0, 1, 2, 3, 4, 5]), ("summary", [0, 1, 2]))
    )
    text = (
        "# Guarantees: plug-in vs certified targets\n\n"
        "Violation rate: share of calibration draws whose population selective risk exceeds the target "
        "(risk) or whose population coverage falls below it (coverage); coverage cost: plug-in minus "
        "certified mean coverage.\n\n## Summary\n\n"
        + _markdown(summary)
        + "\n## Every cell\n\n"
        + _markdown(cells)
    )
    written = [out_dir / "guarantees.md"]
    with atomic_path(written[0]) as tmp:
        Path(tmp).write_text(text)
    frame = cells.reset_index()
    panels = list(dict.fromkeys(zip(frame["target"], frame["level"])))
    deltas = sorted(frame["delta"].unique(), reverse=True)
    fig = Figure(figsize=(3.2 * max(len(panels), 1), 5.6), layout="constrained")
    axes = fig.subplots(2, max(len(panels), 1), squeeze=False)
    rng = np.random.default_rng(0)
    for j, (kind, level) in enumerate(panels):
        part = frame[(frame["target"] == kind) & (frame["level"] == level)]
        top, bottom = axes[0, j], axes[1, j]
        plugin = part[part["delta"] == deltas[0]]["plugin_violation_rate"]
        top.scatter(rng.uniform(-0.15, 0.15, plugin.size), plugin, s=8, alpha=0.6, color="tab:red")
        labels = ["plug-in"]
        for i, delta in enumerate(deltas, start=1):
            rates = part[part["delta"] == delta]
            top.scatter(
                i + rng.uniform(-0.15, 0.15, len(rates)),
                rates["certified_violation_rate"],
                s=8,
                alpha=0.6,
                color="tab:blue",
            )
            top.hlines(delta, i - 0.3, i + 0.3, colors="black", linestyles="--")
            bottom.scatter(
                i + rng.uniform(-0.15, 0.15, len(rates)),
                rates["coverage_cost"],
                s=8,
                alpha=0.6,
                color="tab:blue",
            )
            labels.append(f"certified\ndelta {delta:g}")
        top.set_xticks(range(len(labels)), labels, fontsize="small")
        top.set_title(f"{kind} = {level}", fontsize="medium")
        bottom.set_xticks(range(1, len(labels)), labels[1:], fontsize="small")
        bottom.set_xlim(0.5, len(labels) - 0.5)
        bottom.axhline(0.0, color="grey", linewidth=0.8)
        if j == 0:
            top.set_ylabel("violation rate")
            bottom.set_ylabel("coverage cost (plug-in - certified)")
    save_figure(fig, out_dir / "guarantees.png", formats)
    return written + figure_paths(out_dir / "guarantees.png", formats)
