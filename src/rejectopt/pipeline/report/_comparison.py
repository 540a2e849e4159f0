"""Internal (the pipeline's report): our numbers beside the paper's published ones: agreement per
cell, rankings, significance."""

from __future__ import annotations

import pandas as pd

from ...stats import average_ranks, friedman_test
from ..tables import TableSpec, landmarks_spec
from ._format import format_number
from ._render import significant_pairs
from ._specs import label

__all__ = ["paper_comparison", "comparison_markdown"]


def paper_comparison(
    summary: pd.DataFrame, reference: pd.DataFrame, convention: str = "paper"
) -> pd.DataFrame:
    """Every published cell beside ours: AuRC per method and R@100 (``risk_full``).

    A cell agrees when ``|ours - paper| <= 2 paper std`` or within 10% of the
    paper's value. Cells of datasets we did not run have empty ``ours_*``. The paper's AuRC is
    its eq. (27): a summary whose ``aurc`` column is under another convention (config
    ``aurc_convention``) measures something else, so its AuRC cells are listed but left out of
    the agreement (``agrees`` empty); R@100 is the same under every convention.

    Parameters
    ----------
    summary : pandas.DataFrame
        The tidy results summary (``results/summary.csv``).
    reference : pandas.DataFrame
        The published cells: ``task``, ``dataset``, ``classifier``, ``score``, ``metric``
        (``aurc`` or ``risk_full``), ``mean`` and ``std``.
    convention : str, default "paper"
        The AuRC convention of ``summary``'s ``aurc`` column (:data:`rejectopt.metrics.CONVENTIONS`).

    Returns
    -------
    pandas.DataFrame
        One row per published cell: its keys, ``paper_mean``, ``paper_std``, ``ours_mean``,
        ``ours_std``, ``ours_splits``, ``diff``, ``diff_in_paper_std``, ``rel_diff`` and
        ``agrees`` (empty where we did not run the dataset).
    """
    aurc = (
        summary.groupby(["task", "dataset", "classifier", "score"])["aurc"]
        .agg(["mean", "std", "count"])
        .reset_index()
    )
    aurc["metric"] = "aurc"
    per_split = summary.drop_duplicates(["dataset", "classifier", "split"])
    risk = (
        per_split.groupby(["task", "dataset", "classifier"])["risk_full"]
        .agg(["mean", "std", "count"])
        .reset_index()
    )
    risk["score"], risk["metric"] = "none", "risk_full"
    ours = pd.concat([aurc, risk], ignore_index=True).rename(
        columns={"mean": "ours_mean", "std": "ours_std", "count": "ours_splits"}
    )
    keys = ["task", "dataset", "classifier", "score", "metric"]
    ref = reference.rename(columns={"mean": "paper_mean", "std": "paper_std"})
    merged = ref.merge(ours, on=keys, how="left")
    diff = merged["ours_mean"] - merged["paper_mean"]
    merged["diff"] = diff
    merged["diff_in_paper_std"] = diff / merged["paper_std"].where(merged["paper_std"] > 0)
    merged["rel_diff"] = diff / merged["paper_mean"]
    within_std = merged["diff_in_paper_std"].abs() <= 2
    within_rel = merged["rel_diff"].abs() <= 0.10
    # the landmark experiment's AuRC is always eq. (27): aurc_convention sets the summaries' column only
    under_convention = (merged["metric"] == "aurc") & (merged["task"] != "landmarks")
    comparable = merged["ours_mean"].notna() & (~under_convention | (convention == "paper"))
    merged["agrees"] = (within_std | within_rel).where(comparable)
    return merged[
        keys
        + [
            "paper_mean",
            "paper_std",
            "ours_mean",
            "ours_std",
            "ours_splits",
            "diff",
            "diff_in_paper_std",
            "rel_diff",
            "agrees",
        ]
    ]


def _ranking_line(means: pd.DataFrame) -> str:
    ranks = average_ranks(means).sort_values()
    return ", ".join(f"{label(m)} {r:.2f}" for m, r in ranks.items())


def _conclusions(comparison: pd.DataFrame, spec: TableSpec) -> list[str]:
    """Ranking and significance, ours vs the paper's numbers on the same datasets."""
    cells = comparison[
        (comparison["classifier"] == spec.classifier) & (comparison["metric"] == "aurc")
    ]
    cells = cells[cells["score"].isin(spec.methods)]
    ran = cells.dropna(subset=["ours_mean"])
    if ran.empty:
        return [f"- {spec.title}: not run."]
    methods = [m for m in spec.methods if m in set(ran["score"])]
    ours = (
        ran.pivot(index="dataset", columns="score", values="ours_mean")
        .reindex(columns=methods)
        .dropna()
    )
    paper_same = (
        ran.pivot(index="dataset", columns="score", values="paper_mean")
        .reindex(columns=methods)
        .loc[ours.index]
    )
    paper_all = (
        cells.pivot(index="dataset", columns="score", values="paper_mean")
        .reindex(columns=methods)
        .dropna()
    )
    lines = [f"- {spec.title} ({len(ours)} of {len(paper_all)} datasets run):"]
    if len(methods) < 2:  # a run with a single method of this table (e.g. ``scores: {lr: []}``)
        lines.append(f"  - only {', '.join(map(label, methods))} was run: no ranking to compare")
        return lines
    lines.append(f"  - average ranks, ours: {_ranking_line(ours)}")
    lines.append(f"  - average ranks, paper on the same datasets: {_ranking_line(paper_same)}")
    lines.append(f"  - average ranks, paper on all its datasets: {_ranking_line(paper_all)}")
    best_ours = average_ranks(ours).idxmin()
    best_paper = average_ranks(paper_all).idxmin()
    lines.append(
        f"  - best method: ours {label(best_ours)}, paper {label(best_paper)} -> "
        f"{'same' if best_ours == best_paper else 'DIFFERENT'}"
    )
    if len(ours) >= 2:
        p_ours = friedman_test(ours).pvalue
        p_paper = friedman_test(paper_same).pvalue
        lines.append(
            f"  - Friedman rejects equivalence at 0.05: ours {'yes' if p_ours <= 0.05 else 'no'} (p = {p_ours:.4f}), "
            f"paper's numbers on the same datasets {'yes' if p_paper <= 0.05 else 'no'} (p = {p_paper:.4f})"
        )
        lines.append(
            "  - Nemenyi pairs significantly different at alpha = 0.10: ours "
            f"{significant_pairs(ours)}; paper (same datasets) {significant_pairs(paper_same)}"
        )
    return lines


def _every_cell(comparison: pd.DataFrame) -> list[str]:
    """The report's last section: every cell of the comparison as a Markdown table."""
    lines: list[str] = []
    lines += [
        "",
        "## Every cell",
        "",
        "A cell that disagrees is marked **no**; `diff/std` is the difference in units of the paper's std.",
        "",
    ]
    header = [
        "task",
        "dataset",
        "classifier",
        "score",
        "metric",
        "paper",
        "ours",
        "diff",
        "diff/std",
        "agrees",
    ]
    lines += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for _, r in comparison.iterrows():
        ours = (
            "not run"
            if pd.isna(r["ours_mean"])
            else f"{r['ours_mean']:.2f} ± {format_number(r['ours_std'])}"
        )
        agrees = "" if pd.isna(r["agrees"]) else ("yes" if r["agrees"] else "**no**")
        paper = f"{r['paper_mean']:.2f}" + (
            "" if pd.isna(r["paper_std"]) else f" ± {r['paper_std']:.2f}"
        )
        lines.append(
            "| "
            + " | ".join(
                [
                    r["task"],
                    r["dataset"],
                    r["classifier"],
                    r["score"],
                    r["metric"],
                    paper,
                    ours,
                    "" if pd.isna(r["diff"]) else f"{r['diff']:+.2f}",
                    format_number(r["diff_in_paper_std"], 1),
                    agrees,
                ]
            )
            + " |"
        )
    return lines


def comparison_markdown(
    comparison: pd.DataFrame, specs, datasets_run, datasets_missing, convention: str = "paper"
) -> str:
    """The paper-comparison report: agreement counts, conclusions, every cell.

    Parameters
    ----------
    comparison : pandas.DataFrame
        The cells of :func:`paper_comparison`.
    specs : iterable of TableSpec
        The tables whose rankings and significance are compared; the landmark experiment is
        added when ``comparison`` holds landmark cells.
    datasets_run, datasets_missing : iterable of str
        The paper's datasets this run covers, and those it does not.
    convention : str, default "paper"
        The AuRC convention of the run (config ``aurc_convention``), as given to :func:`paper_comparison`.

    Returns
    -------
    str
        The Markdown report.
    """
    counted = comparison[comparison["agrees"].notna()]
    n_agree = int(counted["agrees"].astype(bool).sum())
    lines = ["# Our numbers beside the paper's (Franc, Prusa & Voracek, JMLR 2023)", ""]
    lines.append(f"Datasets run: {', '.join(datasets_run) or 'none'}.")
    lines.append(f"Datasets of the paper not run here: {', '.join(datasets_missing) or 'none'}.")
    if convention == "paper":
        lines.append("AuRC convention of this run: paper (eq. (27)), the paper's own.")
    else:
        lines.append(
            f"AuRC convention of this run: {convention} (config aurc_convention), not the paper's eq. (27): "
            "its AuRC cells are listed below but not counted, and the rankings below compare our "
            f"{convention} AuRC with the paper's eq. (27) AuRC. Run with aurc_convention=paper to compare AuRC."
        )
    lines.append("")
    what = "cells agree" if convention == "paper" else "cells (R@100 only) agree"
    lines.append(
        f"**{n_agree} of {len(counted)} {what}** (|ours - paper| <= 2 paper std, or within 10% of the paper's value)."
    )
    for (task, clf), group in counted.groupby(["task", "classifier"]):
        lines.append(
            f"- {task} / {clf}: {int(group['agrees'].astype(bool).sum())} of {len(group)} cells agree"
        )
    lines += ["", "## Rankings and significance", ""]
    if (
        not any(spec.task == "landmarks" for spec in specs)
        and (counted["task"] == "landmarks").any()
    ):
        specs = [
            *specs,
            landmarks_spec(counted.loc[counted["task"] == "landmarks", "score"].unique()),
        ]
    for spec in specs:
        lines += _conclusions(comparison, spec)
    lines += _every_cell(comparison)
    return "\n".join(lines) + "\n"
