"""The double-hinge experiment's tables: mean +- std, ranks by cost risk, Wilcoxon tests."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ....stats import average_ranks, friedman_test, nemenyi_cd, rank_methods
from ... import tables as result_tables
from ._setup import METHODS, REFERENCE

# --------------------------------------------------------------------------------------------
# The tables: mean +- std, ranks by cost risk, Wilcoxon signed-rank tests
# --------------------------------------------------------------------------------------------
_MEAN_STD = ("cost_risk", "coverage", "selective_risk", "error_full")


def table_order(results: pd.DataFrame) -> tuple[list[str], list[float], list[str]]:
    """Datasets (first seen first), reject costs (ascending), methods (:data:`METHODS` first, then
    others sorted) of per-split rows or :func:`double_hinge_table`.

    Parameters
    ----------
    results : pandas.DataFrame
        Rows with the columns ``dataset``, ``reject_cost`` and ``method``.

    Returns
    -------
    datasets : list of str
    reject_costs : list of float
    methods : list of str
    """
    datasets = list(dict.fromkeys(results["dataset"]))
    costs = sorted(dict.fromkeys(results["reject_cost"].astype(float)))
    methods = [m for m in METHODS if m in set(results["method"])] + sorted(
        set(results["method"]) - set(METHODS)
    )
    return datasets, costs, methods


def double_hinge_table(results: pd.DataFrame) -> pd.DataFrame:
    """Mean and std over the splits per (dataset, reject cost, method) of the per-split rows.

    Parameters
    ----------
    results : pandas.DataFrame
        Per-split rows (:data:`SPLIT_COLUMNS`; at least ``dataset, split, reject_cost, method``,
        the four metrics, ``C``, ``gamma``).

    Returns
    -------
    DataFrame
        ``dataset, reject_cost, method, n_splits``, ``{metric}_mean`` / ``_std`` for cost risk,
        coverage, selective risk (over splits accepting something), full-coverage error;
        ``n_empty`` (splits accepting nothing); ``C``, ``gamma`` (chosen values, space-separated
        per split; ``gamma`` absolute, NaN without an RBF).

    Raises
    ------
    ValueError
        If ``results`` lacks a column or has no rows.
    """
    needed = ("dataset", "split", "reject_cost", "method", *_MEAN_STD, "C", "gamma")
    missing = [c for c in needed if c not in results]
    if missing:
        raise ValueError(f"results lack the columns {missing}")
    if results.empty:
        raise ValueError("results has no rows")
    datasets, costs, methods = table_order(results)
    frame = results.sort_values("split", kind="stable")
    table = (
        frame.groupby(["dataset", "reject_cost", "method"])
        .agg(
            n_splits=("split", "nunique"),
            **{f"{c}_{s}": (c, s) for c in _MEAN_STD for s in ("mean", "std")},
            n_empty=("coverage", lambda v: int((v == 0).sum())),
            C=("C", lambda v: " ".join(f"{c:g}" for c in v)),
            gamma=(
                "gamma",
                lambda v: " ".join(f"{g:.4g}" for g in v) if v.notna().any() else np.nan,
            ),
        )
        .reset_index()
    )
    order = table.assign(
        _d=table["dataset"].map(datasets.index), _m=table["method"].map(methods.index)
    )
    return table.loc[order.sort_values(["_d", "reject_cost", "_m"]).index].reset_index(drop=True)


@dataclass(frozen=True)
class RankResult:
    """Ranks of the methods by mean cost risk over the (dataset, reject cost) cells.

    A dataset's cells share its splits, so the tests treat them as independent only nominally.

    Parameters
    ----------
    ranks : pandas.DataFrame
        Cells x methods (1 = best, ties averaged).
    average_ranks : pandas.Series
        Per method, its average rank over the cells.
    friedman_pvalue, iman_davenport_pvalue : float
        Friedman's test and its Iman-Davenport correction (NaN with fewer than 2 cells).
    cd_005 : float
        Nemenyi's critical difference at alpha 0.05 (NaN with fewer than 2 cells).
    wins : pandas.Series
        Per method, the cells where it has the best rank (ties count for each), named
        ``best_cells``.
    """

    ranks: pd.DataFrame
    average_ranks: pd.Series
    friedman_pvalue: float
    iman_davenport_pvalue: float
    cd_005: float
    wins: pd.Series


def cost_risk_ranks(table: pd.DataFrame) -> RankResult:
    """Rank the methods per (dataset, d) cell by mean cost risk (:mod:`rejectopt.stats`).

    Parameters
    ----------
    table : pandas.DataFrame
        :func:`double_hinge_table`'s output.

    Returns
    -------
    RankResult
    """
    datasets, costs, methods = table_order(table)
    wide = table.pivot(index=["dataset", "reject_cost"], columns="method", values="cost_risk_mean")
    cells = [(d, c) for d in datasets for c in costs if (d, c) in wide.index]
    wide = wide.loc[cells, methods]
    wide.index = [f"{d}, d={c:g}" for d, c in cells]
    ranks = rank_methods(wide)
    if len(cells) >= 2:
        res = friedman_test(wide)
        p, p_id, cd = (
            float(res.pvalue),
            float(res.iman_davenport_pvalue),
            nemenyi_cd(len(methods), len(cells)),
        )
    else:
        p = p_id = cd = float("nan")
    wins = (ranks == ranks.min(axis=1).to_numpy()[:, None]).sum(axis=0).rename("best_cells")
    return RankResult(ranks, average_ranks(wide), p, p_id, cd, wins)


def wilcoxon_tests(
    results: pd.DataFrame, reference: str = REFERENCE, metric: str = "cost_risk"
) -> pd.DataFrame:
    """Paired Wilcoxon signed-rank tests of ``reference`` against each other method.

    Pairs: the (dataset, split) cells of one cost, or (dataset, split, cost) of all (``reject_cost``
    ``"all"``); :func:`scipy.stats.wilcoxon` (two-sided, zeros dropped, ``method="auto"``).

    Parameters
    ----------
    results : pandas.DataFrame
        Per-split rows (at least ``dataset, split, reject_cost, method`` and ``metric``).
    reference : str, default=REFERENCE
        The method tested against each other one.
    metric : str, default="cost_risk"
        The column compared.

    Returns
    -------
    DataFrame
        ``reject_cost, method, n_pairs, n_nonzero, reference_better, reference_worse,
        median_difference`` (reference minus method), ``statistic``, ``pvalue`` (NaN without pairs;
        1 when every difference is zero).

    Raises
    ------
    ValueError
        If ``results`` holds no row of ``reference``.
    """
    # scipy.stats: heavy to import (benchmarks/import_costs_records.csv); tables only
    from scipy.stats import wilcoxon

    _, costs, methods = table_order(results)
    if reference not in methods:
        raise ValueError(f"results hold no rows of the reference method {reference!r}")
    groups = [(f"{c:g}", results[results["reject_cost"].astype(float) == c]) for c in costs] + [
        ("all", results)
    ]
    rows = []
    for label, frame in groups:
        wide = frame.pivot(
            index=["dataset", "split", "reject_cost"], columns="method", values=metric
        )
        for method in methods:
            if method == reference:
                continue
            pair = wide[[reference, method]].dropna()
            x, y = pair[reference].to_numpy(float), pair[method].to_numpy(float)
            diff = x - y
            stat = p = float("nan")
            if diff.size and not np.any(diff):
                stat, p = 0.0, 1.0  # no evidence either way (scipy: 1 for few pairs, NaN for many)
            elif diff.size:
                with (
                    warnings.catch_warnings()
                ):  # e.g. one non-zero difference: zero variance of the normal approximation
                    warnings.simplefilter("ignore", RuntimeWarning)
                    res = wilcoxon(x, y)
                stat, p = float(res.statistic), float(res.pvalue)
            rows.append(
                {
                    "reject_cost": label,
                    "method": method,
                    "n_pairs": int(diff.size),
                    "n_nonzero": int(np.count_nonzero(diff)),
                    "reference_better": int((diff < 0).sum()),
                    "reference_worse": int((diff > 0).sum()),
                    "median_difference": float(np.median(diff)) if diff.size else float("nan"),
                    "statistic": stat,
                    "pvalue": p,
                }
            )
    return pd.DataFrame(rows)


def aggregate(rows: pd.DataFrame, settings: dict | None = None) -> dict[str, pd.DataFrame]:
    """Every split's rows to the experiment's tables, as numbers.

    Parameters
    ----------
    rows : pandas.DataFrame
        Every split's rows.
    settings : dict, optional
        Unused: the rows hold every setting (the contract's signature).

    Returns
    -------
    dict of str to pandas.DataFrame
        ``double_hinge`` (:func:`double_hinge_table`); ``ranks``: average rank and best cells per
        method (:func:`cost_risk_ranks`); ``rank_tests``: one row, the cells' count, Friedman /
        Iman-Davenport p-values, Nemenyi's CD at 0.05; ``wilcoxon`` (:func:`wilcoxon_tests`).
    """
    table = double_hinge_table(rows)
    ranks = cost_risk_ranks(table)
    rank_frame = pd.DataFrame({"average_rank": ranks.average_ranks, "best_cells": ranks.wins})
    rank_frame.index.name = "method"
    rank_tests = pd.DataFrame(
        [
            {
                "n_cells": len(ranks.ranks),
                "friedman_pvalue": ranks.friedman_pvalue,
                "iman_davenport_pvalue": ranks.iman_davenport_pvalue,
                "nemenyi_cd_005": ranks.cd_005,
            }
        ]
    )
    return {
        "double_hinge": table,
        "ranks": rank_frame,
        "rank_tests": rank_tests,
        "wilcoxon": wilcoxon_tests(rows),
    }


def table_file(csv_paths: Sequence, csv_out, expect=None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Every split's rows to :func:`double_hinge_table`, written to ``csv_out`` (CSV, atomically):
    the pipeline's :func:`~rejectopt.pipeline.tables.table_file`.

    Parameters
    ----------
    csv_paths : sequence of path-like
        The per-split CSVs (:data:`SPLIT_COLUMNS`).
    csv_out : path-like
        Where the table goes.
    expect : callable, optional
        ``path -> mapping``: what each split's record must say (the pipeline's:
        :func:`rejectopt.pipeline.tables.split_file_role`).

    Returns
    -------
    rows : pandas.DataFrame
        The per-split rows, concatenated.
    table : pandas.DataFrame
        :func:`double_hinge_table` of them, as written.

    Raises
    ------
    rejectopt.exceptions.IntermediateFileError
        A split's CSV without its content record, changed since it was written, or recorded
        as another dataset's or split's.
    """
    return result_tables.table_file(csv_paths, csv_out, double_hinge_table, expect)
