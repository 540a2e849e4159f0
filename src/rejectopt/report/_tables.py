"""The paper's results tables: mean +- std of test AuRC per dataset, ranks, Friedman, Nemenyi."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..stats import average_ranks, friedman_test, nemenyi_cd
from ._format import format_number
from ._specs import TableSpec, label, metric_label

__all__ = [
    "TableStatistics", "aurc_table", "format_number", "mean_matrix", "relative_improvement", "render_table",
    "significant_pairs", "table_statistics",
]


def aurc_table(summary: pd.DataFrame, spec: TableSpec, metric: str = "aurc") -> pd.DataFrame:
    """Mean and std over splits of a test metric (default AuRC) per (dataset, method), and of R@100.

    ``metric`` is a column of the summary, one per registered metric
    (:data:`rejectopt.metrics.METRICS`). Returns a frame indexed by dataset with
    columns ``(method, 'mean'|'std')`` for each method of ``spec`` and
    ``('risk_full', ...)``; ``n_splits`` counts the splits behind each row.
    """
    if metric not in summary.columns:
        raise ValueError(f"summary has no column {metric!r} (columns: {', '.join(summary.columns)})")
    rows = summary[(summary["classifier"] == spec.classifier) & summary["score"].isin(spec.methods)]
    if rows.empty:
        raise ValueError(f"summary has no rows for classifier {spec.classifier!r} ({spec.name})")
    stats = rows.groupby(["dataset", "score"])[metric].agg(["mean", "std"]).unstack("score")
    stats = stats.swaplevel(axis=1)[[m for m in spec.methods if m in set(rows["score"])]]
    stats.columns = pd.MultiIndex.from_tuples(stats.columns)
    per_split = rows.drop_duplicates(["dataset", "split"])
    risk = per_split.groupby("dataset")["risk_full"].agg(["mean", "std"])
    for col in ("mean", "std"):
        stats[("risk_full", col)] = risk[col]
    stats[("n_splits", "")] = per_split.groupby("dataset")["split"].nunique()
    return stats


def significant_pairs(means: pd.DataFrame, alpha: float = 0.10) -> str:
    """Pairs of methods whose average ranks differ by more than Nemenyi's CD, e.g. ``SELE < REG``."""
    ranks = average_ranks(means)
    cd = nemenyi_cd(means.shape[1], means.shape[0], alpha=alpha)
    pairs = [f"{label(a)} < {label(b)}" for a in ranks.index for b in ranks.index if ranks[b] - ranks[a] > cd]
    return ", ".join(pairs) if pairs else "none"


def mean_matrix(table: pd.DataFrame, methods) -> pd.DataFrame:
    return pd.DataFrame({m: table[(m, "mean")] for m in methods})


@dataclass(frozen=True)
class TableStatistics:
    """Average ranks, Friedman test and Nemenyi critical differences of one table."""

    average_ranks: pd.Series
    n_datasets: int
    friedman_pvalue: float
    iman_davenport_pvalue: float
    cd_005: float
    cd_010: float


def table_statistics(table: pd.DataFrame, methods) -> TableStatistics:
    """Rank methods per dataset by mean test AuRC and test their equivalence (Demsar 2006)."""
    means = mean_matrix(table, methods).dropna()
    n, k = means.shape
    ranks = average_ranks(means)
    if n >= 2 and k >= 2:
        result = friedman_test(means)
        p, p_id = float(result.pvalue), float(result.iman_davenport_pvalue)
        cd05, cd10 = nemenyi_cd(k, n, alpha=0.05), nemenyi_cd(k, n, alpha=0.10)
    else:
        p = p_id = cd05 = cd10 = float("nan")
    return TableStatistics(ranks, n, p, p_id, cd05, cd10)


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


def relative_improvement(summary: pd.DataFrame, spec: TableSpec) -> pd.DataFrame:
    """``100 (AuRC_baseline - AuRC_method) / AuRC_baseline`` per split; mean and std per dataset.

    As the paper's Figures 2 and 3b. Returns a frame indexed by dataset with
    columns ``(method, 'mean'|'std')`` for each learned score.
    """
    rows = summary[summary["classifier"] == spec.classifier]
    wide = rows.pivot_table(index=["dataset", "split"], columns="score", values="aurc")
    base = wide[spec.baseline]
    learned = [m for m in spec.methods[1:] if m in wide.columns]
    gains = pd.DataFrame({m: 100.0 * (base - wide[m]) / base for m in learned})
    return gains.groupby("dataset").agg(["mean", "std"])


