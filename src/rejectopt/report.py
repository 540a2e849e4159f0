"""The paper's tables (3a, 3b, 4), figures, comparison with the published numbers, timing.

Everything is computed from one tidy table, ``results/summary.csv`` (columns
:data:`rejectopt.experiment.SUMMARY_COLUMNS`); stored numbers are raw, formatting
happens only here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ._io import atomic_path
from .stats import average_ranks, cd_diagram, friedman_test, nemenyi_cd

__all__ = [
    "TableSpec",
    "TABLES",
    "LANDMARKS_SPEC",
    "CD_ALPHA",
    "write_csv",
    "write_text",
    "aurc_table",
    "table_statistics",
    "render_table",
    "relative_improvement",
    "improvement_figure",
    "paper_comparison",
    "comparison_markdown",
    "timing_table",
    "environment_markdown",
]

#: Significance level of the Nemenyi test in the CD diagrams, as in the paper's Fig. 1 and 3a.
CD_ALPHA = 0.10


@dataclass(frozen=True)
class TableSpec:
    """One results table of the paper: a classifier, its baseline and the learned scores."""

    name: str
    task: str
    classifier: str
    methods: tuple[str, ...]
    title: str
    extension: bool = False

    @property
    def baseline(self) -> str:
        return self.methods[0]


TABLES = {
    "table3a": TableSpec("table3a", "classification", "lr", ("mcp", "sele", "reg", "tcp"), "Table 3a: logistic regression"),
    "table3b": TableSpec("table3b", "classification", "svm", ("margin", "sele", "reg"), "Table 3b: linear SVM"),
    "table4": TableSpec("table4", "ordinal", "svor", ("margin", "sele", "reg"), "Table 4: SVOR (ordinal regression)"),
    "table3c": TableSpec(
        "table3c", "classification", "xgb", ("mcp", "sele", "reg", "tcp"),
        "Table 3c: gradient-boosted trees (XGBoost; extension, not in the paper)", extension=True,
    ),
}

#: The landmark experiment (Section 5.2.3, Fig. 4): not one of TABLES (no table rule), but ranked in
#: the paper comparison whenever the summary holds its rows.
LANDMARKS_SPEC = TableSpec(
    "landmarks", "landmarks", "dlib", ("face_score", "sele", "reg"), "Section 5.2.3: DLIB landmarks on 300-W (Fig. 4)"
)

_LABELS = {"mcp": "MCP", "margin": "Margin", "sele": "SELE", "reg": "REG", "tcp": "TCP", "face_score": "Face score"}


def write_text(text: str, path) -> None:
    """Write ``text`` to ``path`` atomically."""
    with atomic_path(path) as tmp:
        Path(tmp).write_text(text)


def write_csv(frame: pd.DataFrame, path) -> None:
    """Write ``frame`` to ``path`` as CSV (no index), atomically."""
    with atomic_path(path) as tmp:
        frame.to_csv(tmp, index=False)


def aurc_table(summary: pd.DataFrame, spec: TableSpec) -> pd.DataFrame:
    """Mean and std over splits of test AuRC per (dataset, method), and of R@100.

    Returns a frame indexed by dataset with columns ``(method, 'mean'|'std')``
    for each method of ``spec`` and ``('risk_full', ...)``; ``n_splits`` counts
    the splits behind each row.
    """
    rows = summary[(summary["classifier"] == spec.classifier) & summary["score"].isin(spec.methods)]
    if rows.empty:
        raise ValueError(f"summary has no rows for classifier {spec.classifier!r} ({spec.name})")
    stats = rows.groupby(["dataset", "score"])["aurc"].agg(["mean", "std"]).unstack("score")
    stats = stats.swaplevel(axis=1)[[m for m in spec.methods if m in set(rows["score"])]]
    stats.columns = pd.MultiIndex.from_tuples(stats.columns)
    per_split = rows.drop_duplicates(["dataset", "split"])
    risk = per_split.groupby("dataset")["risk_full"].agg(["mean", "std"])
    for col in ("mean", "std"):
        stats[("risk_full", col)] = risk[col]
    stats[("n_splits", "")] = per_split.groupby("dataset")["split"].nunique()
    return stats


def _mean_matrix(table: pd.DataFrame, methods) -> pd.DataFrame:
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
    means = _mean_matrix(table, methods).dropna()
    n, k = means.shape
    ranks = average_ranks(means)
    if n >= 2 and k >= 2:
        result = friedman_test(means)
        p, p_id = float(result.pvalue), float(result.iman_davenport_pvalue)
        cd05, cd10 = nemenyi_cd(k, n, alpha=0.05), nemenyi_cd(k, n, alpha=0.10)
    else:
        p = p_id = cd05 = cd10 = float("nan")
    return TableStatistics(ranks, n, p, p_id, cd05, cd10)


def _fmt(value: float, digits: int = 2) -> str:
    return "n/a" if value is None or not np.isfinite(value) else f"{value:.{digits}f}"


def render_table(table: pd.DataFrame, spec: TableSpec, stats: TableStatistics, fmt: str = "md") -> str:
    """Render a results table as Markdown (``fmt='md'``) or LaTeX (``fmt='tex'``).

    Cells are ``mean ± std`` of test AuRC over the splits; the best mean per
    row is bold; the last rows give average ranks, the Friedman p-value and the
    Nemenyi critical differences.
    """
    methods = [m for m in spec.methods if (m, "mean") in table.columns]
    bold = (lambda s: f"**{s}**") if fmt == "md" else (lambda s: f"\\textbf{{{s}}}")
    pm = " ± " if fmt == "md" else " $\\pm$ "
    header = ["dataset"] + [_LABELS.get(m, m) for m in methods] + ["R@100", "splits"]
    body = []
    for dataset, row in table.iterrows():
        means = np.array([row[(m, "mean")] for m in methods])
        best = np.nanmin(means)
        cells = [dataset]
        for m, mean in zip(methods, means):
            cell = f"{_fmt(mean)}{pm}{_fmt(row[(m, 'std')])}"
            cells.append(bold(cell) if np.isclose(mean, best) else cell)
        cells.append(f"{_fmt(row[('risk_full', 'mean')])}{pm}{_fmt(row[('risk_full', 'std')])}")
        cells.append(str(int(row[("n_splits", "")])))
        body.append(cells)
    body.append(["avg. rank"] + [_fmt(stats.average_ranks.get(m, np.nan)) for m in methods] + ["", ""])
    notes = [
        f"Test AuRC (mean ± std over splits) on {stats.n_datasets} datasets; best per row in bold.",
        f"Friedman test p = {_fmt(stats.friedman_pvalue, 4)} (Iman-Davenport p = {_fmt(stats.iman_davenport_pvalue, 4)}); "
        f"Nemenyi CD = {_fmt(stats.cd_005)} (alpha = 0.05), {_fmt(stats.cd_010)} (alpha = 0.10).",
    ]
    if spec.extension:
        notes.append("This table is an extension of the paper, not a reproduction of it.")
    if fmt == "md":
        lines = [f"### {spec.title}", "", "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        lines += ["| " + " | ".join(cells) + " |" for cells in body]
        return "\n".join(lines + [""] + notes) + "\n"
    cols = "l" + "r" * (len(header) - 1)
    lines = [f"% {spec.title}", f"\\begin{{tabular}}{{{cols}}}", "\\hline", " & ".join(header) + " \\\\", "\\hline"]
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
               yerr=gains[(m, "std")].fillna(0), capsize=2, label=_LABELS.get(m, m))
    ax.axhline(0, color="black", linewidth=0.8)
    ax.set_xticks(x, datasets, rotation=45, ha="right")
    ax.set_ylabel(f"improvement over {_LABELS.get(spec.baseline, spec.baseline)} [%]")
    ax.set_title(f"{spec.title}\nAuRC improvement over {_LABELS.get(spec.baseline, spec.baseline)}, mean ± std over splits",
                 fontsize=10)
    ax.legend()
    return fig


def cd_figure(stats: TableStatistics, spec: TableSpec):
    """Critical-difference diagram of a table's average ranks (Nemenyi, alpha = :data:`CD_ALPHA`)."""
    ranks = stats.average_ranks.rename(lambda m: _LABELS.get(m, m))
    if stats.n_datasets < 2:
        return _message_figure(f"{spec.title}: a CD diagram needs at least 2 datasets, this run has {stats.n_datasets}.")
    cd = nemenyi_cd(len(ranks), stats.n_datasets, alpha=CD_ALPHA)
    title = f"{spec.title}\nN = {stats.n_datasets} datasets, Nemenyi CD = {_fmt(cd)} (alpha = {CD_ALPHA})"
    return cd_diagram(ranks, cd, title=title)


def _message_figure(message: str):
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6.0, 1.5))
    fig.text(0.5, 0.5, message, ha="center", va="center", wrap=True)
    return fig


def paper_comparison(summary: pd.DataFrame, reference: pd.DataFrame) -> pd.DataFrame:
    """Every published cell beside ours: AuRC per method and R@100 (``risk_full``).

    A cell agrees when ``|ours - paper| <= 2 paper std`` or within 10% of the
    paper's value. Cells of datasets we did not run have empty ``ours_*``.
    """
    aurc = summary.groupby(["task", "dataset", "classifier", "score"])["aurc"].agg(["mean", "std", "count"]).reset_index()
    aurc["metric"] = "aurc"
    per_split = summary.drop_duplicates(["dataset", "classifier", "split"])
    risk = per_split.groupby(["task", "dataset", "classifier"])["risk_full"].agg(["mean", "std", "count"]).reset_index()
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
    merged["agrees"] = (within_std | within_rel).where(merged["ours_mean"].notna())
    return merged[keys + ["paper_mean", "paper_std", "ours_mean", "ours_std", "ours_splits", "diff",
                          "diff_in_paper_std", "rel_diff", "agrees"]]


def _ranking_line(means: pd.DataFrame) -> str:
    ranks = average_ranks(means).sort_values()
    return ", ".join(f"{_LABELS.get(m, m)} {r:.2f}" for m, r in ranks.items())


def _conclusions(comparison: pd.DataFrame, spec: TableSpec) -> list[str]:
    """Ranking and significance, ours vs the paper's numbers on the same datasets."""
    cells = comparison[(comparison["classifier"] == spec.classifier) & (comparison["metric"] == "aurc")]
    cells = cells[cells["score"].isin(spec.methods)]
    ran = cells.dropna(subset=["ours_mean"])
    if ran.empty:
        return [f"- {spec.title}: not run."]
    methods = [m for m in spec.methods if m in set(ran["score"])]
    ours = ran.pivot(index="dataset", columns="score", values="ours_mean").reindex(columns=methods).dropna()
    paper_same = ran.pivot(index="dataset", columns="score", values="paper_mean").reindex(columns=methods).loc[ours.index]
    paper_all = cells.pivot(index="dataset", columns="score", values="paper_mean").reindex(columns=methods).dropna()
    lines = [f"- {spec.title} ({len(ours)} of {len(paper_all)} datasets run):"]
    lines.append(f"  - average ranks, ours: {_ranking_line(ours)}")
    lines.append(f"  - average ranks, paper on the same datasets: {_ranking_line(paper_same)}")
    lines.append(f"  - average ranks, paper on all its datasets: {_ranking_line(paper_all)}")
    best_ours = average_ranks(ours).idxmin()
    best_paper = average_ranks(paper_all).idxmin()
    lines.append(f"  - best method: ours {_LABELS.get(best_ours)}, paper {_LABELS.get(best_paper)} -> "
                 f"{'same' if best_ours == best_paper else 'DIFFERENT'}")
    if len(ours) >= 2:
        p_ours = friedman_test(ours).pvalue
        p_paper = friedman_test(paper_same).pvalue
        lines.append(
            f"  - Friedman rejects equivalence at 0.05: ours {'yes' if p_ours <= 0.05 else 'no'} (p = {p_ours:.4f}), "
            f"paper's numbers on the same datasets {'yes' if p_paper <= 0.05 else 'no'} (p = {p_paper:.4f})"
        )
        lines.append("  - Nemenyi pairs significantly different at alpha = 0.10: ours "
                     f"{_significant_pairs(ours)}; paper (same datasets) {_significant_pairs(paper_same)}")
    return lines


def _significant_pairs(means: pd.DataFrame) -> str:
    ranks = average_ranks(means)
    cd = nemenyi_cd(means.shape[1], means.shape[0], alpha=0.10)
    pairs = [
        f"{_LABELS.get(a)} < {_LABELS.get(b)}"
        for a in ranks.index
        for b in ranks.index
        if ranks[b] - ranks[a] > cd
    ]
    return ", ".join(pairs) if pairs else "none"


def comparison_markdown(comparison: pd.DataFrame, specs, datasets_run, datasets_missing) -> str:
    """The paper-comparison report: agreement counts, conclusions, every cell."""
    counted = comparison[comparison["ours_mean"].notna()]
    n_agree = int(counted["agrees"].sum())
    lines = ["# Our numbers beside the paper's (Franc, Prusa & Voracek, JMLR 2023)", ""]
    lines.append(f"Datasets run: {', '.join(datasets_run) or 'none'}.")
    lines.append(f"Datasets of the paper not run here: {', '.join(datasets_missing) or 'none'}.")
    lines.append("")
    lines.append(
        f"**{n_agree} of {len(counted)} cells agree** (|ours - paper| <= 2 paper std, or within 10% of the paper's value)."
    )
    for (task, clf), group in counted.groupby(["task", "classifier"]):
        lines.append(f"- {task} / {clf}: {int(group['agrees'].sum())} of {len(group)} cells agree")
    lines += ["", "## Rankings and significance", ""]
    if LANDMARKS_SPEC not in specs and (counted["task"] == "landmarks").any():
        specs = [*specs, LANDMARKS_SPEC]
    for spec in specs:
        lines += _conclusions(comparison, spec)
    lines += ["", "## Every cell", "", "A cell that disagrees is marked **no**; `diff/std` is the difference in units of the paper's std.", ""]
    header = ["task", "dataset", "classifier", "score", "metric", "paper", "ours", "diff", "diff/std", "agrees"]
    lines += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for _, r in comparison.iterrows():
        ours = "not run" if pd.isna(r["ours_mean"]) else f"{r['ours_mean']:.2f} ± {_fmt(r['ours_std'])}"
        agrees = "" if pd.isna(r["agrees"]) else ("yes" if r["agrees"] else "**no**")
        paper = f"{r['paper_mean']:.2f}" + ("" if pd.isna(r["paper_std"]) else f" ± {r['paper_std']:.2f}")
        lines.append("| " + " | ".join([
            r["task"], r["dataset"], r["classifier"], r["score"], r["metric"], paper, ours,
            "" if pd.isna(r["diff"]) else f"{r['diff']:+.2f}", _fmt(r["diff_in_paper_std"], 1), agrees,
        ]) + " |")
    return "\n".join(lines) + "\n"


def timing_table(benchmark_files) -> tuple[pd.DataFrame, str]:
    """Wall time per rule and dataset from Snakemake ``benchmark:`` files.

    ``benchmark_files`` are paths ``.../benchmarks/<rule>/<dataset>/.../<file>.tsv``.
    Returns the tidy frame (rule, dataset, jobs, total_s, mean_s, max_s,
    max_rss_mb) and its Markdown rendering.
    """
    records = []
    for path in map(Path, benchmark_files):
        bench = pd.read_csv(path, sep="\t")
        parts = path.parts[path.parts.index("benchmarks") + 1:]
        rule, dataset = parts[0], parts[1]
        records.append({"rule": rule, "dataset": dataset, "s": float(bench["s"].iloc[0]),
                        "max_rss": float(pd.to_numeric(bench["max_rss"], errors="coerce").iloc[0])})
    frame = pd.DataFrame(records, columns=["rule", "dataset", "s", "max_rss"])
    table = frame.groupby(["rule", "dataset"]).agg(
        jobs=("s", "size"), total_s=("s", "sum"), mean_s=("s", "mean"), max_s=("s", "max"), max_rss_mb=("max_rss", "max")
    ).reset_index()
    lines = ["# Wall time of the training rules (Snakemake `benchmark:` files)", ""]
    for rule, group in table.groupby("rule"):
        lines.append(f"- {rule}: {int(group['jobs'].sum())} jobs, {group['total_s'].sum():.1f} s in total")
    lines += ["", "| rule | dataset | jobs | total [s] | mean [s] | max [s] | max RSS [MB] |", "|---|---|---|---|---|---|---|"]
    for _, r in table.iterrows():
        lines.append(f"| {r['rule']} | {r['dataset']} | {r['jobs']} | {r['total_s']:.1f} | {r['mean_s']:.1f} | "
                     f"{r['max_s']:.1f} | {_fmt(r['max_rss_mb'], 0)} |")
    return table, "\n".join(lines) + "\n"


_ENVIRONMENT_PACKAGES = (
    "rejectopt", "numpy", "scipy", "pandas", "scikit-learn", "xgboost", "scikit-posthocs", "matplotlib",
    "snakemake", "snakemake-executor-plugin-slurm", "dlib-bin", "scikit-image",
)


def _installed_version(package: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(package)
    except PackageNotFoundError:
        return "not installed"


def environment_markdown(config: dict, datasets: dict) -> str:
    """Package versions, dataset checksums and the run's configuration, as Markdown.

    ``datasets`` maps a dataset name to ``{"n", "d", "k", "xy_sha256",
    "raw": {file name: sha256}}``.
    """
    import platform

    import yaml

    lines = ["# Environment of this run", "", f"Python {platform.python_version()} on {platform.platform()}", ""]
    lines += ["| package | version |", "|---|---|"]
    lines += [f"| {p} | {_installed_version(p)} |" for p in _ENVIRONMENT_PACKAGES]
    lines += ["", "## Datasets", "", "| dataset | n | d | K | fingerprint of X, y (sha256) | raw files (sha256) |",
              "|---|---|---|---|---|---|"]
    for name, info in sorted(datasets.items()):
        raw = "<br>".join(f"{f}: `{h}`" for f, h in sorted(info["raw"].items()))
        lines.append(f"| {name} | {info['n']} | {info['d']} | {info['k']} | `{info['xy_sha256']}` | {raw} |")
    lines += ["", "## Configuration", "", "```yaml", yaml.safe_dump(config, sort_keys=True).rstrip(), "```"]
    return "\n".join(lines) + "\n"
