"""Internal: the pipeline's rendering of the double-hinge experiment; not part of the public API
(see :mod:`rejectopt.pipeline.experiments` for the experiment contract).

Its table as Markdown / LaTeX, the solver times, one figure per dataset.

The numbers are :mod:`rejectopt.pipeline.experiments.double_hinge`'s
(:func:`~rejectopt.pipeline.experiments.double_hinge.double_hinge_table`,
:func:`~rejectopt.pipeline.experiments.double_hinge.cost_risk_ranks`,
:func:`~rejectopt.pipeline.experiments.double_hinge.wilcoxon_tests`);
the number formats :mod:`rejectopt.pipeline.report._format`'s.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from ..._io import load_npz, write_text
from ..experiments.double_hinge import (
    DOUBLE_HINGE_METHODS,
    METHODS,
    REFERENCE,
    TIMING_COLUMNS,
    cost_risk_ranks,
    table_file,
    table_order,
    wilcoxon_tests,
)
from ..tables import friedman_min_pvalue, load_split_rows
from ._figures import save_figure
from ._format import (
    ALIKE_NOTE,
    best_cells,
    format_number,
    mean_std_cell,
    power_caveat,
    printed_alike,
    table_section,
)

__all__ = [
    "double_hinge_figure",
    "double_hinge_report_files",
    "method_label",
    "render_double_hinge_table",
    "render_double_hinge_timing",
]

_LABELS = {
    "double_hinge_rbf": "DH-SVM (RBF)",
    "double_hinge": "DH-SVM (linear)",
    "lr_sele": "LR + SELE",
    "svm_threshold": "SVM + |f| threshold",
    "lr_chow": "LR + Chow",
}


def method_label(method: str) -> str:
    """Display label of a method of :data:`~rejectopt.pipeline.experiments.double_hinge.METHODS`
    (``double_hinge_rbf`` -> ``DH-SVM (RBF)``).

    Parameters
    ----------
    method : str
        A method's name.

    Returns
    -------
    str
        Its label in the tables and figures; an unknown name is its own label.
    """
    return _LABELS.get(method, method)


def render_double_hinge_table(table: pd.DataFrame, results: pd.DataFrame, fmt: str = "md") -> str:
    r"""The experiment's report as Markdown (``fmt='md'``) or LaTeX (``fmt='tex'``).

    ``table`` is :func:`~rejectopt.pipeline.experiments.double_hinge.double_hinge_table` of the per-split
    ``results``. Sections: the cost risk per (dataset, d) and method (mean ± std over splits, best
    in bold), coverage and selective risk, average ranks by cost risk
    (:func:`~rejectopt.pipeline.experiments.double_hinge.cost_risk_ranks`), the Wilcoxon tests of the RBF
    double-hinge SVM against each method (:func:`~rejectopt.pipeline.experiments.double_hinge.wilcoxon_tests`),
    the chosen ``C`` (and RBF width) and the fit times.

    Parameters
    ----------
    table : pandas.DataFrame
        :func:`~rejectopt.pipeline.experiments.double_hinge.double_hinge_table` of ``results``.
    results : pandas.DataFrame
        The per-split rows (:data:`~rejectopt.pipeline.experiments.double_hinge.SPLIT_COLUMNS`).
    fmt : {"md", "tex"}, default="md"
        Markdown or LaTeX.

    Returns
    -------
    str
        The report's sections, each a title, a table and its notes.

    Raises
    ------
    ValueError
        On an unknown ``fmt``.
    """
    if fmt not in ("md", "tex"):
        raise ValueError(f"fmt must be 'md' or 'tex', got {fmt!r}")
    datasets, costs, methods = table_order(table)
    cells = _table_cells(table, datasets, costs, methods)
    sections = [
        _cost_risk_section(cells, methods, int(table["n_splits"].max())),
        _coverage_section(cells, methods),
        _ranks_section(table, methods),
        _wilcoxon_section(results, costs, methods),
        _model_selection_section(table, datasets, methods),
    ]
    out: list[str] = []
    for title, header, body, notes in sections:
        out.extend(table_section(title, header, body, notes, fmt, _latex_cell, escape_pipes=True))
    return "\n".join(out).rstrip() + "\n"


#: Mean ± std in a cell; cells are built as Markdown, :func:`_latex_cell` turns them into LaTeX.
_PM = " ± "

#: One section of the report: title, header, body rows, notes (:func:`rejectopt.pipeline.report._format.table_section`).
_Section = tuple[str, list[str], list[list[str]], list[str]]


def _bold(cell: str) -> str:
    return f"**{cell}**"


def _latex_cell(cell: str) -> str:
    """A Markdown cell as LaTeX: special characters escaped, **bold** -> \\textbf{}."""
    strong = cell.startswith("**") and cell.endswith("**")
    cell = cell[2:-2] if strong else cell
    cell = (
        cell.replace("_", "\\_")
        .replace("%", "\\%")
        .replace("|f|", "$|f|$")
        .replace("R^S", "$R^S$")
        .replace("±", "$\\pm$")
    )
    return f"\\textbf{{{cell}}}" if strong else cell


def _table_cells(table: pd.DataFrame, datasets: list, costs: list, methods: list) -> list[tuple]:
    """(dataset label on its first row, d, the methods' rows) of every (dataset, d) cell of the table."""
    idx = table.set_index(["dataset", "reject_cost", "method"])
    return [
        (dataset if i == 0 else "", c, idx.loc[(dataset, c)].loc[methods])
        for dataset in datasets
        for i, c in enumerate(costs)
        if (dataset, c, methods[0]) in idx.index
    ]


def _cost_risk_section(cells_of: list[tuple], methods: list, n_splits: int) -> _Section:
    """The cost risk per (dataset, d) and method, the best of each row in bold."""
    body = []
    alike = False
    for first, c, block in cells_of:
        means = block["cost_risk_mean"].to_numpy(dtype=float)
        alike = alike or printed_alike(means)
        cells = [first, f"{c:g}", format_number(100 * c, 1)]
        for (_, r), strong in zip(block.iterrows(), best_cells(means)):
            cell = mean_std_cell(
                r["cost_risk_mean"], r["cost_risk_std"], 2, _PM, int(r["n_splits"])
            )
            cells.append(_bold(cell) if strong else cell)
        body.append(cells)
    return (
        f"Cost risk on Tst (%), {n_splits} split(s)",
        ["dataset", "d", "reject all"] + _labels(methods),
        body,
        [
            "Cost risk = 100 (errors + d x rejections) / n on Tst (errors only on accepted examples), mean ± std over "
            "splits; best per row in bold. 'reject all' = 100 d. DH-SVM (RBF): double-hinge SVM with the Gaussian "
            "kernel (Nyström approximation), width and C by Val1 cost risk; DH-SVM (linear): the same with the linear "
            "kernel, C by Val1 cost risk (biased at small d: its best line is not Chow's rule even where the log-odds "
            "is linear); LR + SELE: cost-based selection (reject cost 100 d) fitted on Val2; "
            "SVM + |f| threshold: the plain SVM, threshold minimising the Val2 cost risk; "
            "LR + Chow: reject iff max posterior < 1 - d."
        ]
        + ([ALIKE_NOTE] if alike else []),
    )


def _coverage_section(cells_of: list[tuple], methods: list) -> _Section:
    """Coverage and selective risk per (dataset, d) and method."""
    body = []
    for first, c, block in cells_of:
        cells = [first, f"{c:g}"]
        for _, r in block.iterrows():
            ns = int(r["n_splits"])
            risk = mean_std_cell(
                r["selective_risk_mean"], r["selective_risk_std"], 2, _PM, ns - int(r["n_empty"])
            )
            if r["n_empty"]:
                risk += f" ({int(r['n_empty'])}/{ns} empty)"
            cells.append(
                f"{mean_std_cell(r['coverage_mean'], r['coverage_std'], 3, _PM, ns)} / {risk}"
            )
        body.append(cells)
    return (
        "Coverage / selective risk R^S (%) on Tst",
        ["dataset", "d"] + _labels(methods),
        body,
        [
            "Coverage = share of Tst accepted; R^S = error (%) on the accepted examples, over the splits accepting "
            "something ('empty': splits rejecting every Tst example)."
        ],
    )


def _ranks_section(table: pd.DataFrame, methods: list) -> _Section:
    """Average ranks by cost risk over the (dataset, d) cells, Friedman and Nemenyi."""
    ranks = cost_risk_ranks(table)
    body = [
        [method_label(m), format_number(ranks.average_ranks[m]), str(int(ranks.wins[m]))]
        for m in methods
    ]
    return (
        f"Average ranks by cost risk over {len(ranks.ranks)} (dataset, d) cells",
        ["method", "average rank", "best in cells"],
        body,
        [
            "Ranked per (dataset, d) cell on the mean cost risk over splits (1 = best, ties averaged); 'best in cells' "
            "counts ties for the best.",
            f"Friedman p = {format_number(ranks.friedman_pvalue, 4)} "
            f"(Iman-Davenport p = {format_number(ranks.iman_davenport_pvalue, 4)}), "
            f"Nemenyi CD (alpha 0.05) = {format_number(ranks.cd_005)}; "
            "the cells of a dataset share its splits, so these tests are indicative.",
            *_caveat(len(ranks.ranks), len(methods)),
        ],
    )


def _wilcoxon_section(results: pd.DataFrame, costs: list, methods: list) -> _Section:
    """The paired Wilcoxon tests of the reference method against each other method, per d and over all d."""
    tests = wilcoxon_tests(results)
    others = [m for m in methods if m != REFERENCE]
    ref = method_label(REFERENCE)
    body = []
    for label in [f"{c:g}" for c in costs] + ["all"]:
        rows = tests[tests["reject_cost"] == label].set_index("method")
        cells = [label, str(int(rows["n_pairs"].iloc[0]))]
        for m in others:
            r = rows.loc[m]
            cells.append(
                f"p = {format_number(r['pvalue'], 4)} ({int(r['reference_better'])}/"
                f"{int(r['reference_worse'])}, median {r['median_difference']:+.2f})"
            )
        body.append(cells)
    return (
        f"Paired Wilcoxon signed-rank tests of the {ref}'s cost risk",
        ["d", "pairs"] + [f"{ref} vs {method_label(m)}" for m in others],
        body,
        [
            "scipy.stats.wilcoxon (two-sided, zero differences dropped) over the (dataset, split) pairs of each d and "
            f"the (dataset, split, d) pairs of all d. In brackets: pairs where the {ref} is better / worse, and the "
            f"median of {ref} minus the other method (percentage points; negative = {ref} better)."
        ],
    )


def _model_selection_section(table: pd.DataFrame, datasets: list, methods: list) -> _Section:
    """The C (and RBF width) each double-hinge SVM chose, per dataset and d."""
    body = []
    for dataset in datasets:
        for method in [m for m in DOUBLE_HINGE_METHODS if m in methods]:
            dh = table[(table["dataset"] == dataset) & (table["method"] == method)]
            if method == "double_hinge_rbf":
                chosen = "; ".join(
                    f"{c:g}: C {C}, gamma {g}"
                    for c, C, g in zip(dh["reject_cost"], dh["C"], dh["gamma"])
                )
            else:
                chosen = "; ".join(f"{c:g}: C {C}" for c, C in zip(dh["reject_cost"], dh["C"]))
            body.append(
                [
                    dataset,
                    method_label(method),
                    chosen,
                    str(int(dh["n_splits"].max())) if len(dh) else "0",
                ]
            )
    return (
        "Model selection",
        ["dataset", "model", "chosen per d (per split)", "splits"],
        body,
        [
            "Each DH-SVM fits one model per grid point and per d on Trn1 (interior point method, certified duality "
            "gap) and keeps the one with the smallest Val1 cost risk (RBF: width gamma, absolute, and C; linear: C); "
            "the solver times are in timing_double_hinge.md."
        ],
    )


def _labels(methods: list) -> list[str]:
    return [method_label(m) for m in methods]


def render_double_hinge_timing(timing: pd.DataFrame) -> str:
    """Markdown table of the fit times (:data:`~rejectopt.pipeline.experiments.double_hinge.TIMING_COLUMNS`
    rows of every split) per dataset.

    Each DH-SVM (RBF, linear): the fits of its whole grid for every ``d``, summed, mean over splits;
    plain SVM: its grid once per split (every ``d`` shares it), mean over splits. CPU time counts
    every thread.

    Parameters
    ----------
    timing : pandas.DataFrame
        The timing rows of every split (:data:`~rejectopt.pipeline.experiments.double_hinge.TIMING_COLUMNS`).

    Returns
    -------
    str
        A Markdown section: one row per dataset, then a note.

    Raises
    ------
    ValueError
        If ``timing`` lacks a column.
    """
    missing = [c for c in TIMING_COLUMNS if c not in timing]
    if missing:
        raise ValueError(f"timing lacks the columns {missing}")
    out = [
        "### Solver time per split",
        "",
        "| dataset | DH-SVM (RBF) fits CPU s | DH-SVM (RBF) fits wall s | DH-SVM (linear) fits CPU s | "
        "DH-SVM (linear) fits wall s | plain SVM CPU s | splits |",
        "|---|---|---|---|---|---|---|",
    ]

    def mean_of(frame: pd.DataFrame, column: str) -> str:
        return format_number(float(frame[column].mean()) if len(frame) else np.nan, 1)

    for dataset in dict.fromkeys(timing["dataset"]):
        rows = timing[timing["dataset"] == dataset]
        cells = []
        for method in DOUBLE_HINGE_METHODS:
            dh = rows[rows["method"] == method].groupby("split")[["fit_cpu_s", "fit_wall_s"]].sum()
            cells += [mean_of(dh, "fit_cpu_s"), mean_of(dh, "fit_wall_s")]
        svm = rows[rows["method"] == "svm_threshold"].groupby("split")[["fit_cpu_s"]].first()
        out.append(
            f"| {dataset} | {' | '.join(cells)} | {mean_of(svm, 'fit_cpu_s')} | {rows['split'].nunique()} |"
        )
    out += [
        "",
        "Each DH-SVM fits one model per grid point and per d; its times are summed over both, then "
        "averaged over the splits. The plain SVM fits its grid once per split. Wall-clock records: they vary "
        "from run to run, unlike every other output of the experiment.",
    ]
    return "\n".join(out) + "\n"


# --------------------------------------------------------------------------------------------
# Figure: the methods' (coverage, R^S) points on the LR + SELE RC curve
# --------------------------------------------------------------------------------------------
_GRID = np.linspace(0.0, 1.0, 401)


def _mean_curve(curves: list[dict], name: str) -> tuple[np.ndarray, np.ndarray]:
    """Mean over the splits of the RC curves interpolated on :data:`_GRID` (coverage >= every split's first point)."""
    low = max(float(c[f"{name}_cov"][0]) for c in curves)
    grid = _GRID[_GRID >= low]
    risks = [np.interp(grid, c[f"{name}_cov"], c[f"{name}_risk"]) for c in curves]
    return grid, np.mean(risks, axis=0)


def double_hinge_figure(curves: list[dict], rows: pd.DataFrame, dataset: str = ""):
    """Left: RC curves on Tst (LR + SELE, plain SVM by ``|f|``; mean over splits) with every method's
    mean (coverage, R^S) point per d; right: mean cost risk against d with the reject-all line.

    Parameters
    ----------
    curves : list of dict
        One split's curves each (the ``curves`` of
        :class:`~rejectopt.pipeline.experiments.double_hinge.DoubleHingeSplitResult`): ``lr_sele_cov``,
        ``lr_sele_risk``, ``svm_cov``, ``svm_risk``.
    rows : pandas.DataFrame
        The same splits' rows (:data:`~rejectopt.pipeline.experiments.double_hinge.SPLIT_COLUMNS`).
    dataset : str, optional
        The dataset's name, in the titles.

    Returns
    -------
    matplotlib.figure.Figure
        The two panels.
    """
    from matplotlib.figure import Figure  # matplotlib: heavy, only the figure jobs need it

    fig = Figure(figsize=(11.0, 4.6), layout="constrained")
    ax, bx = fig.add_subplot(1, 2, 1), fig.add_subplot(1, 2, 2)
    cov, risk = _mean_curve(curves, "lr_sele")
    ax.plot(cov, risk, "-", color="C1", linewidth=1.4, label="LR + SELE RC curve")
    cov, risk = _mean_curve(curves, "svm")
    ax.plot(cov, risk, ":", color="C2", linewidth=1.2, label="SVM |f| RC curve")
    mean = (
        rows.groupby(["method", "reject_cost"])
        .agg(
            coverage=("coverage", "mean"),
            selective_risk=("selective_risk", "mean"),
            cost_risk=("cost_risk", "mean"),
        )
        .reset_index()
    )
    styles = {
        "double_hinge_rbf": ("D", "C4", 8),
        "double_hinge": ("o", "C0", 8),
        "lr_sele": ("x", "C1", 7),
        "svm_threshold": ("^", "C2", 6),
        "lr_chow": ("s", "C3", 5),
    }
    for method in [m for m in METHODS if m in set(mean["method"])]:
        pts = mean[mean["method"] == method]
        marker, color, size = styles[method]
        ax.plot(
            pts["coverage"],
            pts["selective_risk"],
            marker,
            color=color,
            markersize=size,
            linestyle="none",
            markerfacecolor=color if method in DOUBLE_HINGE_METHODS else "none",
            label=method_label(method),
        )
        if method == REFERENCE:
            for _, p in pts.iterrows():
                if np.isfinite(p["selective_risk"]):
                    ax.annotate(
                        f"d={p['reject_cost']:g}",
                        (p["coverage"], p["selective_risk"]),
                        fontsize=7,
                        xytext=(4, 4),
                        textcoords="offset points",
                        color=color,
                    )
        bx.plot(
            pts["reject_cost"],
            pts["cost_risk"],
            marker + "-",
            color=color,
            markersize=size,
            markerfacecolor=color if method in DOUBLE_HINGE_METHODS else "none",
            label=method_label(method),
        )
    costs = np.sort(mean["reject_cost"].unique())
    bx.plot(costs, 100 * costs, "--", color="grey", linewidth=0.8, label="reject all (100 d)")
    bx.set_ylim(0, 1.25 * float(mean["cost_risk"].max()))
    # zoom on the coverages the methods reach (the RC curves are noisy at small coverage)
    low = max(0.0, float(np.nanmin(mean["coverage"])) - 0.1)
    shown = [
        float(np.nanmax(mean["selective_risk"])) if mean["selective_risk"].notna().any() else 0.0
    ]
    for name in ("lr_sele", "svm"):
        c, r = _mean_curve(curves, name)
        shown.append(float(r[c >= low].max()) if np.any(c >= low) else 0.0)
    n = int(rows["split"].nunique())
    ax.set_xlim(low, 1.01)
    ax.set_ylim(0, 1.1 * max(shown) + 1e-9)
    ax.set_xlabel("coverage")
    ax.set_ylabel("selective risk $R^S$ [%]")
    ax.set_title(f"{dataset}: Tst, mean of {n} split(s); points: each method at each d", fontsize=9)
    ax.legend(fontsize=7)
    bx.set_xlabel("reject cost d")
    bx.set_ylabel("cost risk [%]")
    bx.set_title(f"{dataset}: cost risk (errors + d rejections) / n on Tst", fontsize=9)
    bx.legend(fontsize=7)
    return fig


def _caveat(n_cells: int, n_methods: int) -> list[str]:
    """The power caveat of the cost-risk ranks (report._format.power_caveat), as a list of 0 or 1 notes."""
    if n_cells < 2 or n_methods < 2:
        return []
    caveat = power_caveat(n_cells, n_methods, friedman_min_pvalue(n_cells, n_methods))
    return [caveat.replace(" datasets ", " (dataset, d) cells ")] if caveat else []


def double_hinge_report_files(
    csv_paths: Sequence,
    curve_paths: Sequence,
    csv_out,
    md_out,
    tex_out,
    figures: dict | None = None,
    timing_paths: Sequence = (),
    timing_out=None,
    figure_formats=("png",),
    expect: Callable | None = None,
) -> pd.DataFrame:
    """Per-split CSVs and curve NPZs -> the table (CSV, Markdown, LaTeX) and one figure per dataset;
    the per-split timing CSVs ``timing_paths`` -> :func:`render_double_hinge_timing` at ``timing_out``.

    The table's numbers go to ``csv_out`` through :func:`rejectopt.pipeline.experiments.double_hinge.table_file`.
    ``figures`` maps a dataset to its PNG path; the curve files of a dataset are those of
    ``curve_paths`` under a folder named after it (``results/double_hinge/{dataset}/split_{k}.npz``).
    They are read with :func:`rejectopt._io.load_npz`, which refuses a file edited or truncated
    since it was written.

    Parameters
    ----------
    csv_paths : sequence of path-like
        The per-split CSVs.
    curve_paths : sequence of path-like
        The per-split curve files (written by :func:`rejectopt._io.save_npz`).
    csv_out, md_out, tex_out : path-like
        Where the table goes as CSV, Markdown and LaTeX.
    figures : dict, optional
        Dataset -> PNG path of its figure (:func:`double_hinge_figure`).
    timing_paths : sequence of path-like, optional
        The per-split timing CSVs.
    timing_out : path-like, optional
        Where :func:`render_double_hinge_timing` goes (None: not written).
    figure_formats : sequence of str, default ("png",)
        Config figure_formats: each figure is also written beside its PNG in these
        (:func:`rejectopt.pipeline.report._figures.save_figure`).
    expect : callable, optional
        ``path -> mapping``: what the record of each per-split file (rows, curves, timing) must
        say (the pipeline's: :func:`rejectopt.pipeline.tables.split_file_role`).

    Returns
    -------
    pandas.DataFrame
        The table, as written to ``csv_out``.

    Raises
    ------
    ValueError
        If a dataset of ``figures`` has no curve file.
    rejectopt.exceptions.IntermediateFileError
        A per-split file without its content record, changed since it was written, or recorded
        as another dataset's or split's.
    """
    role = expect or (lambda path: {})
    results, table = table_file(csv_paths, csv_out, expect)
    write_text(render_double_hinge_table(table, results, "md"), md_out)
    write_text(render_double_hinge_table(table, results, "tex"), tex_out)
    if timing_out is not None:
        timing = load_split_rows(timing_paths, expect, table="timing")
        write_text(render_double_hinge_timing(timing), timing_out)
    for dataset, png in (figures or {}).items():
        curves = []
        for path in curve_paths:
            if Path(path).parent.name == dataset:
                # verified: unchanged since run_split's job wrote it, and that split's
                with load_npz(path, expect=role(path)) as data:
                    curves.append({k: data[k] for k in data.files})
        if not curves:
            raise ValueError(
                f"no curve file of dataset {dataset!r} among {list(map(str, curve_paths))}"
            )
        save_figure(
            double_hinge_figure(curves, results[results["dataset"] == dataset], dataset),
            png,
            figure_formats,
        )
    return table
