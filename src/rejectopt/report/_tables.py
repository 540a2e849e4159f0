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
    "TableStatistics", "aurc_table", "format_number", "mean_matrix", "relative_improvement", "render_table",
    "significant_pairs", "table_statistics",
]


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


