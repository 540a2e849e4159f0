"""The paper's results tables rendered: mean +- std of test AuRC per dataset, ranks, Friedman, Nemenyi.

The numbers are :mod:`rejectopt.experiments.paper`'s; they are re-exported here for the report's callers.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..experiments.paper import (
    TableSpec,
    TableStatistics,
    aurc_table,
    mean_matrix,
    relative_improvement,
    table_statistics,
)
from ..stats import average_ranks, nemenyi_cd, significant_pairs as _pairs
from ._format import format_number
from ._specs import label, metric_label

__all__ = [
    "TableStatistics", "aurc_table", "format_number", "mean_matrix", "read_summary", "relative_improvement",
    "render_table", "significant_pairs", "table_statistics",
]

#: Columns of a summary that every row must hold as a finite number (the tables' means, ranks and
#: tests are undefined on a NaN); further metric columns are checked where the caller names them.
SUMMARY_NUMBERS = ("aurc", "risk_full")


def read_summary(path, extra_metrics=()) -> pd.DataFrame:
    """A results summary (``summary.csv``), its :data:`SUMMARY_NUMBERS` and ``extra_metrics`` checked to be finite.

    Parameters
    ----------
    path : path-like
        The CSV file.
    extra_metrics : iterable of str, default ()
        Further metric columns that must be finite where present.

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

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = Path(tmp, "summary.csv")
    ...     _ = path.write_text("dataset,classifier,score,split,aurc,risk_full\\n"
    ...                         "iris,lr,sele,0,4.5,10.0\\niris,lr,mcp,0,,10.0\\n")
    ...     try:
    ...         read_summary(path)
    ...     except ValueError as error:
    ...         print(str(error).replace(tmp, "TMP"))
    TMP/summary.csv line 3 (dataset iris, classifier lr, score mcp, split 0): aurc is nan, not a finite number (1 row(s) in all); the summary was damaged or edited: delete it and rerun the pipeline, which writes it again from the dataset summaries
    """
    summary = pd.read_csv(path)
    for column in (*SUMMARY_NUMBERS, *extra_metrics):
        if column not in summary.columns:
            continue
        values = pd.to_numeric(summary[column], errors="coerce").to_numpy(dtype=float)
        bad = np.flatnonzero(~np.isfinite(values))
        if bad.size:
            i = int(bad[0])
            row = summary.iloc[i]
            what = ", ".join(f"{key} {row[key]}" for key in ("dataset", "classifier", "score", "split")
                             if key in summary.columns)
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


def render_table(table: pd.DataFrame, spec: TableSpec, stats: TableStatistics, fmt: str = "md",
                 metric: str = "aurc") -> str:
    """Render a results table as Markdown (``fmt='md'``) or LaTeX (``fmt='tex'``).

    Cells are ``mean ± std`` of test AuRC over the splits; the best mean per
    row is bold; the last rows give average ranks, the Friedman p-value and the
    Nemenyi critical differences.

    Parameters
    ----------
    table : pandas.DataFrame
        :func:`aurc_table` of the metric.
    spec : TableSpec
        The table (title, methods, extension flag).
    stats : TableStatistics
        :func:`table_statistics` of ``table``.
    fmt : {"md", "tex"}, default "md"
        Markdown or a LaTeX tabular.
    metric : str, default "aurc"
        The metric of ``table``, named in the title and the notes.

    Returns
    -------
    str
        The rendered table with its notes.

    Examples
    --------
    A summary of three datasets, two splits and the three methods of Table 3a:

    >>> import pandas as pd
    >>> from rejectopt.report import table_specs
    >>> spec = table_specs({"lr": ("sele", "reg")}, classifiers=["lr"])["table3a"]
    >>> aurc = {"a": (12.0, 8.0, 9.0), "b": (20.0, 15.0, 18.0), "c": (5.0, 4.5, 4.0)}
    >>> summary = pd.DataFrame([
    ...     {"task": "classification", "dataset": d, "split": s, "classifier": "lr", "score": m,
    ...      "aurc": v + s, "augrc": (v + s) / 2, "risk_full": 30.0 + s}
    ...     for d, values in aurc.items() for s in (0, 1) for m, v in zip(spec.methods, values)])
    >>> from rejectopt.report import aurc_table, table_statistics
    >>> table = aurc_table(summary, spec)
    >>> stats = table_statistics(table, spec.methods)
    >>> print(render_table(table, spec, stats))
    ### Table 3a: logistic regression
    <BLANKLINE>
    | dataset | MCP | SELE | REG | R@100 | splits |
    |---|---|---|---|---|---|
    | a | 12.50 ± 0.71 | **8.50 ± 0.71** | 9.50 ± 0.71 | 30.50 ± 0.71 | 2 |
    | b | 20.50 ± 0.71 | **15.50 ± 0.71** | 18.50 ± 0.71 | 30.50 ± 0.71 | 2 |
    | c | 5.50 ± 0.71 | 5.00 ± 0.71 | **4.50 ± 0.71** | 30.50 ± 0.71 | 2 |
    | avg. rank | 3.00 | 1.33 | 1.67 |  |  |
    <BLANKLINE>
    Test AuRC (mean ± std over splits) on 3 datasets; best per row in bold.
    Friedman test p = 0.0970 (Iman-Davenport p = 0.0494); Nemenyi CD = 1.91 (alpha = 0.05), 1.68 (alpha = 0.10).
    <BLANKLINE>
    """
    methods = [m for m in spec.methods if (m, "mean") in table.columns]
    bold = (lambda s: f"**{s}**") if fmt == "md" else (lambda s: f"\\textbf{{{s}}}")
    pm = " ± " if fmt == "md" else " $\\pm$ "
    header = ["dataset"] + [label(m) for m in methods] + ["R@100", "splits"]
    body = []
    for dataset, row in table.iterrows():
        means = np.array([row[(m, "mean")] for m in methods])
        best = np.nanmin(means)
        cells = [dataset]
        for m, mean in zip(methods, means):
            cell = f"{format_number(mean)}{pm}{format_number(row[(m, 'std')])}"
            cells.append(bold(cell) if np.isclose(mean, best) else cell)
        cells.append(f"{format_number(row[('risk_full', 'mean')])}{pm}{format_number(row[('risk_full', 'std')])}")
        cells.append(str(int(row[("n_splits", "")])))
        body.append(cells)
    body.append(["avg. rank"] + [format_number(stats.average_ranks.get(m, np.nan)) for m in methods] + ["", ""])
    notes = [
        f"Test {metric_label(metric)} (mean ± std over splits) on {stats.n_datasets} datasets; best per row in bold.",
        f"Friedman test p = {format_number(stats.friedman_pvalue, 4)} (Iman-Davenport p = {format_number(stats.iman_davenport_pvalue, 4)}); "
        f"Nemenyi CD = {format_number(stats.cd_005)} (alpha = 0.05), {format_number(stats.cd_010)} (alpha = 0.10).",
    ]
    if spec.extension:
        notes.append("This table is an extension of the paper, not a reproduction of it.")
    title = spec.title if metric == "aurc" else f"{spec.title} ({metric_label(metric)})"
    if fmt == "md":
        lines = [f"### {title}", "", "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        lines += ["| " + " | ".join(cells) + " |" for cells in body]
        return "\n".join(lines + [""] + notes) + "\n"
    cols = "l" + "r" * (len(header) - 1)
    lines = [f"% {title}", f"\\begin{{tabular}}{{{cols}}}", "\\hline", " & ".join(header) + " \\\\", "\\hline"]
    lines += [" & ".join(c.replace("_", "\\_") for c in cells) + " \\\\" for cells in body[:-1]]
    lines += ["\\hline", " & ".join(body[-1]) + " \\\\", "\\hline", "\\end{tabular}"]
    return "\n".join(lines + [f"% {n}" for n in notes]) + "\n"


