"""The OOD experiment's tables: mean +- std, ranks, Friedman, Nemenyi (:mod:`rejectopt.pipeline.experiments.ood`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ....stats import average_ranks, friedman_test, nemenyi_cd, rank_methods, significant_pairs
from ... import tables as result_tables
from ._setup import RANK_METRICS

# --------------------------------------------------------------------------------------------
# The table: mean +- std per (dataset, method), ranks, Friedman, Nemenyi
# --------------------------------------------------------------------------------------------
_MEAN_STD = ("risk_seed", "risk_fixed", "fpr_bound_tst", "fpr_at_tpr", "auroc", "oscr", "id_error")
_COUNTS = ("feasible_val_seed", "feasible_tst_seed", "feasible_val_fixed", "feasible_tst_fixed")


def ood_table(results: pd.DataFrame) -> pd.DataFrame:
    """Mean and std over the splits per (classifier, dataset, method) of the per-split rows.

    Parameters
    ----------
    results : pandas.DataFrame
        Every split's rows (:data:`SPLIT_COLUMNS`).

    Returns
    -------
    pandas.DataFrame
        One row per (classifier, dataset, method), first-appearance order: ``n_splits``,
        ``{metric}_mean`` / ``_std`` (R^S over the feasible splits, FPR bound, FPR@TPR, AUROC,
        OSCR, ID error), ``unable_seed`` / ``unable_fixed`` (splits with R^S undefined), the
        counts ``feasible_{val,tst}_{seed,fixed}``.

    Raises
    ------
    ValueError
        ``results`` lacks a column (named) or has no rows.
    """
    needed = ("classifier", "dataset", "method", "kind", "held_out", "split", *_MEAN_STD, *_COUNTS)
    missing = [c for c in needed if c not in results]
    if missing:
        raise ValueError(f"results lack the columns {missing}")
    if results.empty:
        raise ValueError("results has no rows")
    keys = ["classifier", "dataset", "method"]
    grouped = results.groupby(keys, sort=False)
    bounds = {c: (c, "first") for c in ("tpr_min", "fpr_max") if c in results}
    table = grouped.agg(
        kind=("kind", "first"),
        held_out=("held_out", "first"),
        **bounds,
        n_splits=("split", "nunique"),
        **{f"{c}_{s}": (c, s) for c in _MEAN_STD for s in ("mean", "std")},
        unable_seed=("risk_seed", lambda v: int(v.isna().sum())),
        unable_fixed=("risk_fixed", lambda v: int(v.isna().sum())),
        **{c: (c, lambda v: int(v.astype(bool).sum())) for c in _COUNTS},
    )
    return table.reset_index()


@dataclass(frozen=True)
class OODStatistics:
    """Ranks of one classifier's methods over the datasets (by one metric).

    Parameters
    ----------
    metric : str
        ``risk_seed``, ``risk_fixed`` (smaller is better), ``auroc`` or ``oscr`` (larger).
    ranks : DataFrame
        Datasets x methods, 1 = best, unable = worst (ties averaged).
    average_ranks : Series
        The methods' average ranks over the datasets.
    friedman_pvalue, iman_davenport_pvalue : float
        NaN with fewer than 2 datasets.
    cd_005, cd_010 : float
        Nemenyi critical differences at alpha 0.05 and 0.10 (NaN with fewer than 2 datasets).
    """

    metric: str
    ranks: pd.DataFrame
    average_ranks: pd.Series
    friedman_pvalue: float
    iman_davenport_pvalue: float
    cd_005: float
    cd_010: float

    @property
    def n_datasets(self) -> int:
        return int(self.ranks.shape[0])

    def significant_pairs(self, alpha: float = 0.05) -> list[tuple[str, str]]:
        """Pairs (better, worse) whose average ranks differ by more than the CD at ``alpha``
        (:func:`rejectopt.stats.significant_pairs`; none with fewer than 2 datasets)."""
        return significant_pairs(self.average_ranks, self.cd_005 if alpha == 0.05 else self.cd_010)


def _rankable(table: pd.DataFrame, classifier: str, metric: str) -> pd.DataFrame:
    """Datasets x methods matrix for :mod:`rejectopt.stats` (smaller = better, all finite)."""
    rows = table[table["classifier"] == classifier]
    methods = list(dict.fromkeys(rows["method"]))
    datasets = list(dict.fromkeys(rows["dataset"]))
    wide = rows.pivot(index="dataset", columns="method", values=f"{metric}_mean").loc[
        datasets, methods
    ]
    higher_is_better = metric in ("auroc", "oscr")
    values = -wide if higher_is_better else wide.copy()
    if metric.startswith("risk_"):
        unable = rows.pivot(index="dataset", columns="method", values=f"unable_{metric[5:]}").loc[
            datasets, methods
        ]
        values = values.mask(unable > 0)
    finite = values.to_numpy(dtype=float)
    worst = np.nanmax(finite) + 1.0 if np.isfinite(finite).any() else 1.0
    return values.astype(float).fillna(worst)


def ood_statistics(
    table: pd.DataFrame, classifier: str, metric: str = "risk_seed"
) -> OODStatistics:
    """Per-dataset ranks of the methods, average ranks, Friedman test, Nemenyi CD (Demsar 2006).

    Ranks are on the mean over the splits (unable on any split of a dataset: worst there, having
    no number), by :mod:`rejectopt.stats`.

    Parameters
    ----------
    table : pandas.DataFrame
        :func:`ood_table`.
    classifier : str
        Whose methods are ranked.
    metric : str, default "risk_seed"
        One of :data:`RANK_METRICS`.

    Returns
    -------
    OODStatistics
    """
    matrix = _rankable(table, classifier, metric)
    n, k = matrix.shape
    if n >= 2:
        result = friedman_test(matrix)
        p, p_id = float(result.pvalue), float(result.iman_davenport_pvalue)
        cd05, cd10 = nemenyi_cd(k, n, alpha=0.05), nemenyi_cd(k, n, alpha=0.10)
    else:
        p = p_id = cd05 = cd10 = float("nan")
    return OODStatistics(metric, rank_methods(matrix), average_ranks(matrix), p, p_id, cd05, cd10)


def aggregate(rows: pd.DataFrame, settings: dict | None = None) -> dict[str, pd.DataFrame]:
    """Every split's rows to the experiment's tables, as numbers.

    Parameters
    ----------
    rows : pandas.DataFrame
        Every split's rows of every dataset.
    settings : dict, optional
        Unused: the rows hold every setting (the contract's signature).

    Returns
    -------
    dict of str to pandas.DataFrame
        ``ood`` (:func:`ood_table`); ``ranks``: average rank per (classifier, metric of
        :data:`RANK_METRICS`, method); ``rank_tests``: per (classifier, metric) the datasets'
        count, Friedman / Iman-Davenport p-values, Nemenyi's CD at 0.05 and 0.10.
    """
    table = ood_table(rows)
    ranks, tests = [], []
    for classifier in dict.fromkeys(table["classifier"]):
        for metric in RANK_METRICS:
            s = ood_statistics(table, classifier, metric)
            ranks += [
                {"classifier": classifier, "metric": metric, "method": m, "average_rank": float(r)}
                for m, r in s.average_ranks.items()
            ]
            tests.append(
                {
                    "classifier": classifier,
                    "metric": metric,
                    "n_datasets": s.n_datasets,
                    "friedman_pvalue": s.friedman_pvalue,
                    "iman_davenport_pvalue": s.iman_davenport_pvalue,
                    "nemenyi_cd_005": s.cd_005,
                    "nemenyi_cd_010": s.cd_010,
                }
            )
    return {
        "ood": table,
        "ranks": pd.DataFrame(ranks).set_index(["classifier", "metric", "method"]),
        "rank_tests": pd.DataFrame(tests).set_index(["classifier", "metric"]),
    }


def table_file(csv_paths: Sequence, csv_out, expect=None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Every split's rows to :func:`ood_table`, written to ``csv_out`` (CSV, atomically): the
    pipeline's :func:`~rejectopt.pipeline.tables.table_file`.

    Parameters
    ----------
    csv_paths : sequence of path-like
        The splits' rows (:func:`run_dataset_files`).
    csv_out : path-like
        The table written.
    expect : callable, optional
        ``path -> mapping``: what each split's record must say (the pipeline's:
        :func:`rejectopt.pipeline.tables.split_file_role`).

    Returns
    -------
    rows : pandas.DataFrame
        The splits' rows, concatenated.
    table : pandas.DataFrame
        :func:`ood_table` of them.

    Raises
    ------
    rejectopt.exceptions.IntermediateFileError
        A split's CSV without its content record, changed since it was written, or recorded
        as another dataset's or split's.
    """
    return result_tables.table_file(csv_paths, csv_out, ood_table, expect)
