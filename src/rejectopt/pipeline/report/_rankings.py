"""Internal (the pipeline's report): average ranks of each table's methods under every
registered metric, side by side."""

from __future__ import annotations

import pandas as pd

from ..tables import (
    TableSpec,
    higher_is_better,
    metric_table,
    oriented_means,
    table_statistics,
)
from ._format import count, format_number, power_caveat
from ._render import significant_pairs
from ._specs import label, metric_label

__all__ = ["metric_rankings", "rankings_markdown"]


def metric_rankings(summary: pd.DataFrame, spec: TableSpec, metrics) -> dict:
    """``metric -> (TableStatistics, mean matrix)`` of one table under each metric.

    Parameters
    ----------
    summary : pandas.DataFrame
        The tidy results summary (``results/summary.csv``), one column per metric.
    spec : TableSpec
        The table: its classifier and methods.
    metrics : iterable of str
        Metric columns of ``summary`` (:data:`rejectopt.metrics.METRICS`).

    Returns
    -------
    dict
        ``metric -> (TableStatistics, pandas.DataFrame)``: the ranks and tests of
        :func:`rejectopt.pipeline.tables.table_statistics`, and the datasets x methods matrix of mean test values,
        signed so that lower is better (:func:`rejectopt.pipeline.tables.oriented_means`).
    """
    out = {}
    for metric in metrics:
        table = metric_table(summary, spec, metric)
        methods = [m for m in spec.methods if (m, "mean") in table.columns]
        out[metric] = (
            table_statistics(table, methods, metric),
            oriented_means(table, methods, metric).dropna(),
        )
    return out


def _directions(metrics) -> str:
    """The header's word on which way each metric is better (a failure AUROC's is up)."""
    higher = [metric_label(m) for m in metrics if higher_is_better(m)]
    if not higher:
        return "every metric: lower is better"
    return f"higher is better for {', '.join(higher)}, lower for the rest"


def _verdicts(stats, means) -> dict:
    ranks = stats.average_ranks.sort_values(kind="stable")
    best = ranks.index[0] if len(ranks) else None
    return {
        "best": best,
        "order": ", ".join(label(m) for m in ranks.index),
        "friedman": stats.n_datasets >= 2 and stats.friedman_pvalue <= 0.05,
        "pairs": significant_pairs(means)
        if means.shape[0] >= 2 and means.shape[1] >= 2
        else "none",
    }


def rankings_markdown(summary: pd.DataFrame, specs, metrics) -> str:
    """Per table, the average ranks under each metric and a sentence where a conclusion differs from AuRC's.

    A conclusion is the best-ranked method (and, when that agrees, the whole rank
    order), whether Friedman rejects equivalence at 0.05, and the Nemenyi pairs
    significantly different at alpha = 0.10.

    Parameters
    ----------
    summary : pandas.DataFrame
        The tidy results summary, one column per metric.
    specs : iterable of TableSpec
        The tables, one section each.
    metrics : iterable of str
        Metric columns of ``summary``; ``"aurc"`` among them is the reference of the sentences.

    Returns
    -------
    str
        The Markdown report.
    """
    metrics = list(metrics)
    lines = [
        "# Average ranks under each metric",
        "",
        "Ranks of the methods by mean test value per dataset (1 = best; "
        + _directions(metrics)
        + ").",
        "",
    ]
    for spec in specs:
        ranked = metric_rankings(summary, spec, metrics)
        methods = [m for m in spec.methods if m in ranked[metrics[0]][0].average_ranks.index]
        lines += [f"## {spec.title}", ""]
        lines.append("| method | " + " | ".join(metric_label(m) for m in metrics) + " |")
        lines.append("|---|" + "---|" * len(metrics))
        for method in methods:
            cells = [
                format_number(ranked[m][0].average_ranks.get(method, float("nan"))) for m in metrics
            ]
            lines.append(f"| {label(method)} | " + " | ".join(cells) + " |")
        lines.append(
            "| Friedman p | "
            + " | ".join(format_number(ranked[m][0].friedman_pvalue, 4) for m in metrics)
            + " |"
        )
        lines.append(
            "| Nemenyi pairs (alpha 0.10) | "
            + " | ".join(_verdicts(*ranked[m])["pairs"] for m in metrics)
            + " |"
        )
        lines.append("")
        reference = _verdicts(*ranked["aurc"]) if "aurc" in ranked else None
        sentences = []
        for metric in metrics:
            if reference is None or metric == "aurc":
                continue
            verdict = _verdicts(*ranked[metric])
            name = metric_label(metric)
            if verdict["best"] != reference["best"]:
                sentences.append(
                    f"Under {name} the best-ranked method is {label(verdict['best'])}, "
                    f"under AuRC {label(reference['best'])}."
                )
            elif verdict["order"] != reference["order"]:
                sentences.append(
                    f"Under {name} the same method ranks first, but the order is {verdict['order']} "
                    f"(AuRC: {reference['order']})."
                )
            if verdict["friedman"] != reference["friedman"]:
                sentences.append(
                    f"Friedman {'rejects' if verdict['friedman'] else 'does not reject'} equivalence at "
                    f"0.05 under {name}, {'rejects' if reference['friedman'] else 'does not'} under AuRC."
                )
            if verdict["pairs"] != reference["pairs"]:
                sentences.append(
                    f"Nemenyi (alpha 0.10) separates {verdict['pairs']} under {name}, "
                    f"{reference['pairs']} under AuRC."
                )
        first = ranked[metrics[0]][0]
        n = first.n_datasets
        lines.append(
            " ".join(sentences)
            if sentences
            else "Every metric agrees with AuRC on the best method, Friedman's verdict and the "
            f"Nemenyi pairs ({count(n, 'dataset')})."
        )
        caveat = power_caveat(n, len(methods), first.min_friedman_pvalue)
        if caveat:
            lines += ["", caveat]
        lines.append("")
    return "\n".join(lines)
