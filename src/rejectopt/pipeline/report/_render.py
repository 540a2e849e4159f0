"""Internal (the pipeline's report): the paper's results tables rendered, mean +- std of test
AuRC per dataset, ranks, Friedman, Nemenyi.

The numbers are :mod:`rejectopt.pipeline.tables`' (``metric_table``, ``table_statistics``), imported from
there, not re-exported.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...stats import average_ranks, nemenyi_cd
from ...stats import significant_pairs as _pairs
from ..tables import (
    INTERVAL_LEVEL,
    INTERVAL_RESAMPLES,
    TableSpec,
    TableStatistics,
    higher_is_better,
    load_csv,
)
from ._format import (
    ALIKE_NOTE,
    best_cells,
    count,
    format_number,
    power_caveat,
    printed_alike,
    table_section,
)
from ._specs import label, metric_label

__all__ = ["read_summary", "render_table", "significant_pairs"]

#: Columns of a summary that every row must hold as a finite number (the tables' means, ranks and
#: tests are undefined on a NaN); further metric columns are checked where the caller names them.
SUMMARY_NUMBERS = ("aurc", "risk_full")


def read_summary(
    path, extra_metrics=(), *, recorded: bool = False, expect: dict | None = None
) -> pd.DataFrame:
    """A results summary (``summary.csv``), its :data:`SUMMARY_NUMBERS` and ``extra_metrics`` checked to be finite.

    The pipeline's summaries are written with their content record
    (:func:`rejectopt._io.save_csv`); with ``recorded`` the file is read only if it still matches
    it, so a summary truncated mid-row or missing a score's rows is refused, naming the file and
    ``snakemake --forcerun``, instead of surfacing as a missing column of a table.

    Parameters
    ----------
    path : path-like
        The CSV file.
    extra_metrics : iterable of str, default ()
        Further metric columns that must be finite where present.
    recorded : bool, default False
        The file must carry its content record and match it (the pipeline's rules read so).
    expect : mapping, optional
        With ``recorded``: what the record must say the file is
        (:func:`rejectopt.pipeline.tables.dataset_summary_role`, or
        :data:`rejectopt.pipeline.tables.RUN_SUMMARY`), so that a summary copied with its record over another
        is refused, naming both.

    Returns
    -------
    pandas.DataFrame
        The summary as read.

    Raises
    ------
    ValueError
        Naming the file, the line (the header is line 1), the row's dataset, classifier, score
        and split, and the value, for the first bad row; a column of ``extra_metrics`` missing
        from the file is not checked (the landmark summary holds the base columns only).
    rejectopt.exceptions.IntermediateFileError
        With ``recorded``: the file has no content record, changed since it was written, or is
        recorded as another than ``expect``.
    """
    summary = load_csv(path, expect=expect) if recorded else pd.read_csv(path)
    for column in (*SUMMARY_NUMBERS, *extra_metrics):
        if column not in summary.columns:
            continue
        values = pd.to_numeric(summary[column], errors="coerce").to_numpy(dtype=float)
        bad = np.flatnonzero(~np.isfinite(values))
        if bad.size:
            i = int(bad[0])
            row = summary.iloc[i]
            what = ", ".join(
                f"{key} {row[key]}"
                for key in ("dataset", "classifier", "score", "split")
                if key in summary.columns
            )
            value = summary[column].iloc[i]
            shown = repr(value) if isinstance(value, str) else f"{value}"
            raise ValueError(
                f"{path} line {i + 2} ({what}): {column} is {shown}, not a finite number "
                f"({bad.size} row(s) in all); the summary was damaged or edited: delete it and rerun the "
                "pipeline, which writes it again from the dataset summaries"
            )
    return summary


def significant_pairs(means: pd.DataFrame, alpha: float = 0.10) -> str:
    """Pairs of methods whose average ranks differ by more than Nemenyi's CD, e.g. ``SELE < REG``."""
    cd = nemenyi_cd(means.shape[1], means.shape[0], alpha=alpha)
    pairs = [f"{label(a)} < {label(b)}" for a, b in _pairs(average_ranks(means), cd)]
    return ", ".join(pairs) if pairs else "none"


def render_table(
    table: pd.DataFrame,
    spec: TableSpec,
    stats: TableStatistics,
    fmt: str = "md",
    metric: str = "aurc",
) -> str:
    """Render a results table as Markdown (``fmt='md'``) or LaTeX (``fmt='tex'``).

    Cells are ``mean ± std`` of test AuRC over the splits; the best mean per
    row as printed is bold (:func:`rejectopt.pipeline.report._format.best_cells`: every tied best, none
    when all print alike); the last rows give average ranks, the Friedman p-value and the
    Nemenyi critical differences. A table with interval columns
    (:func:`rejectopt.pipeline.tables.metric_table` with ``intervals``) has ``mean ± std [low, high]``
    cells and a note saying what the interval is.

    Parameters
    ----------
    table : pandas.DataFrame
        :func:`rejectopt.pipeline.tables.metric_table` of the metric.
    spec : TableSpec
        The table (title, methods, extension flag).
    stats : TableStatistics
        :func:`rejectopt.pipeline.tables.table_statistics` of ``table``.
    fmt : {"md", "tex"}, default "md"
        Markdown or a LaTeX tabular.
    metric : str, default "aurc"
        The metric of ``table``, named in the title and the notes.

    Returns
    -------
    str
        The rendered table with its notes.
    """
    methods = [m for m in spec.methods if (m, "mean") in table.columns]
    bold = (lambda s: f"**{s}**") if fmt == "md" else (lambda s: f"\\textbf{{{s}}}")
    pm = " ± " if fmt == "md" else " $\\pm$ "
    header = ["dataset"] + [label(m) for m in methods] + ["R@100", "splits"]
    body = []
    alike = False
    for dataset, row in table.iterrows():
        means = np.array([row[(m, "mean")] for m in methods])
        means = -means if higher_is_better(metric) else means  # bold the best, whichever way
        alike = alike or printed_alike(means)
        cells = [dataset]
        for m, strong in zip(methods, best_cells(means)):
            cell = f"{format_number(row[(m, 'mean')])}{pm}{format_number(row[(m, 'std')])}"
            if (m, "low") in table.columns:
                cell += f" [{format_number(row[(m, 'low')])}, {format_number(row[(m, 'high')])}]"
            cells.append(bold(cell) if strong else cell)
        cells.append(
            f"{format_number(row[('risk_full', 'mean')])}{pm}{format_number(row[('risk_full', 'std')])}"
        )
        cells.append(str(int(row[("n_splits", "")])))
        body.append(cells)
    ranks = (
        ["avg. rank"]
        + [format_number(stats.average_ranks.get(m, np.nan)) for m in methods]
        + ["", ""]
    )
    notes = [
        f"Test {metric_label(metric)} (mean ± std over splits) on "
        f"{count(stats.n_datasets, 'dataset')}; best per row in bold"
        + (" (higher is better)." if higher_is_better(metric) else "."),
        f"Friedman test p = {format_number(stats.friedman_pvalue, 4)} "
        f"(Iman-Davenport p = {format_number(stats.iman_davenport_pvalue, 4)}); "
        f"Nemenyi CD = {format_number(stats.cd_005)} (alpha = 0.05), {format_number(stats.cd_010)} (alpha = 0.10).",
    ]
    if any((m, "low") in table.columns for m in methods):
        notes.insert(
            1,
            f"[low, high]: {INTERVAL_LEVEL:.0%} percentile bootstrap interval of the mean over splits, "
            f"{INTERVAL_RESAMPLES} resamples of the test rows (shared by the splits' test parts), given the "
            "trained classifiers and scores; the std also holds the splits' training variation.",
        )
    if alike:
        notes.append(ALIKE_NOTE)
    caveat = power_caveat(stats.n_datasets, len(methods), stats.min_friedman_pvalue)
    if caveat:
        notes.append(caveat)
    if spec.extension:
        notes.append("This table is an extension of the paper, not a reproduction of it.")
    title = spec.title if metric == "aurc" else f"{spec.title} ({metric_label(metric)})"
    return "\n".join(table_section(title, header, body, notes, fmt, _latex_cell, footer=[ranks]))


def _latex_cell(cell: str) -> str:
    """A cell of :func:`render_table` as LaTeX: its underscores (a dataset's name) escaped."""
    return cell.replace("_", "\\_")
