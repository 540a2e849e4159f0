"""Internal: the numbers of the results tables; not part of the public API (see
:mod:`rejectopt.pipeline.experiments` for the experiment contract).

What each table holds (:class:`TableSpec`, one per classifier, read off the registries and the
config), its mean and std per dataset (:func:`metric_table`), the ranks and tests of Demsar (2006)
(:func:`table_statistics`) and the improvements of the paper's Figures 2 and 3b
(:func:`relative_improvement`). The experiments aggregate their rows with it and
:mod:`rejectopt.pipeline.report` renders it; neither holds a copy. Both read the intermediate CSV
files they share (an experiment's rows, the summaries) with :func:`load_csv`, which refuses a file
edited since it was written.
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from .._io import load_csv_bytes, write_csv
from ..classifiers import CLASSIFIERS
from ..metrics import FAILURE_METRICS
from ..stats import average_ranks, friedman_test, nemenyi_cd

__all__ = [
    "INTERVAL_COLUMNS",
    "INTERVAL_LEVEL",
    "INTERVAL_RESAMPLES",
    "RUN_SUMMARY",
    "SUMMARY_FAILURE_METRICS",
    "check_summary_metrics",
    "TableSpec",
    "TableStatistics",
    "dataset_summary_role",
    "friedman_min_pvalue",
    "higher_is_better",
    "landmarks_spec",
    "load_csv",
    "load_split_rows",
    "mean_matrix",
    "oriented_means",
    "metric_table",
    "relative_improvement",
    "split_file_role",
    "table_file",
    "table_specs",
    "table_statistics",
]

#: Confidence level of the AuRC intervals of config ``table_intervals``.
INTERVAL_LEVEL = 0.95

#: Bootstrap resamples of the test rows behind those intervals (1,000: the 2.5 and 97.5 %
#: percentiles rest on 25 resamples each side; the Monte Carlo error is small beside the interval).
INTERVAL_RESAMPLES = 1000


def load_csv(path, *, expect: Mapping | None = None, **read_csv) -> pd.DataFrame:
    """An intermediate CSV written by :func:`rejectopt._io.save_csv`, read only if it is as written.

    A number edited by hand, a row deleted, a file truncated by a full disk: each would otherwise be
    averaged into the tables without a word; here it is refused, naming the file and how to make it
    again (``snakemake --forcerun <file>``).

    Parameters
    ----------
    path : path-like
    expect : mapping, optional
        Provenance the file must have been made from (:func:`rejectopt._io.load_csv_bytes`).
    **read_csv
        Keywords of :func:`pandas.read_csv` (e.g. ``index_col``).

    Returns
    -------
    pandas.DataFrame

    Raises
    ------
    rejectopt.exceptions.IntermediateFileError
        The file has no content record beside it, or its bytes differ from it.
    """
    return pd.read_csv(io.BytesIO(load_csv_bytes(path, expect=expect)), **read_csv)


def load_split_rows(paths, expect: Callable | None = None, **role) -> pd.DataFrame:
    """Every split's rows (:func:`load_csv`, concatenated), each file's record checked for its role.

    Parameters
    ----------
    paths : iterable of path-like
        The splits' CSV files.
    expect : callable, optional
        ``path -> mapping``: what each file's record must say (the pipeline's:
        :func:`split_file_role`, the dataset and split its path names).
    **role
        What every file's record must say too (e.g. ``experiment="guarantees"``).

    Returns
    -------
    pandas.DataFrame
    """
    frames = [load_csv(p, expect={**role, **(expect(p) if expect else {})}) for p in paths]
    return pd.concat(frames, ignore_index=True)


def table_file(
    csv_paths: Sequence,
    csv_out,
    table: Callable[[pd.DataFrame], pd.DataFrame],
    expect: Callable | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Every split's rows to ``table(rows)``, written to ``csv_out`` (CSV, atomically).

    Parameters
    ----------
    csv_paths : sequence of path-like
        The splits' rows (an experiment's ``run_dataset_files``).
    csv_out : path-like
        The table written.
    table : callable
        ``rows -> table``: the experiment's main table.
    expect : callable, optional
        ``path -> mapping``: what each split's record must say (:func:`load_split_rows`).

    Returns
    -------
    rows : pandas.DataFrame
        The splits' rows, concatenated.
    table : pandas.DataFrame
        ``table`` of them, as written.

    Raises
    ------
    rejectopt.exceptions.IntermediateFileError
        A split's CSV without its content record, changed since it was written, or recorded
        as another dataset's or split's.
    """
    rows = load_split_rows(csv_paths, expect)  # refused if edited or copied
    made = table(rows)
    write_csv(made, csv_out)
    return rows, made


#: What the record of ``results/summary.csv`` says it is (collect_summary writes it, the table rules
#: expect it); a dataset's summary says ``{"summary": "dataset", "dataset": <its name>}``.
RUN_SUMMARY = {"summary": "run"}


def dataset_summary_role(dataset: str) -> dict:
    """What the record of ``results/datasets/<dataset>/summary.csv`` says it is: that dataset's summary.

    Its rule writes it so and ``collect_summary`` expects it of the file its input path names, so
    that one dataset's summary copied with its record over another's is refused, naming both.

    Parameters
    ----------
    dataset : str
        The dataset's name.

    Returns
    -------
    dict
        ``{"summary": "dataset", "dataset": dataset}``.
    """
    return {"summary": "dataset", "dataset": dataset}


#: A per-split file of the pipeline: ``<dataset>/split_<k>.csv`` (or ``.npz``, or ``timing_split_<k>.csv``).
_SPLIT_FILE = re.compile(r"(?:timing_)?split_(\d+)\.(?:csv|npz)")


def split_file_role(path) -> dict:
    """The dataset and split that the pipeline's path of a per-split file names: what its record must say.

    Every experiment's rule writes split ``k`` of a dataset to ``<dataset>/split_<k>.csv`` (its
    curves to ``.npz``, double hinge's timing to ``timing_split_<k>.csv``), and writes the same
    dataset and split in the file's record; the rule that reads the file expects them from the
    path it asked for, so a file copied with its record over another split's or dataset's is
    refused. A path of another form names no role (an empty dict: nothing expected).

    Parameters
    ----------
    path : path-like
        A per-split file, e.g. ``results/ood/sattelite/split_0.npz``.

    Returns
    -------
    dict
        ``{"dataset": <its folder's name>, "split": k}``, or empty.

    Examples
    --------
    >>> split_file_role("results/experiments/guarantees/abalone/split_1.csv")
    {'dataset': 'abalone', 'split': 1}
    >>> split_file_role("rows.csv")
    {}
    """
    path = Path(path)
    found = _SPLIT_FILE.fullmatch(path.name)
    if found is None or not path.parent.name:
        return {}
    return {"dataset": path.parent.name, "split": int(found.group(1))}


#: The summary's columns with config ``table_intervals`` (written by
#: :func:`rejectopt.pipeline.experiments.paper.summarize_dataset`, appended after its other columns):
#: ``aurc_low`` / ``aurc_high``, the split's interval, and ``aurc_mean_low`` / ``aurc_mean_high``,
#: the interval of the mean over the dataset's splits, the same on each split's row of a
#: (dataset, classifier, score).
INTERVAL_COLUMNS = ["aurc_low", "aurc_high", "aurc_mean_low", "aurc_mean_high"]


@dataclass(frozen=True)
class TableSpec:
    """One results table: a classifier, its baseline and the learned scores configured for it.

    Parameters
    ----------
    name : str
        The table's name (``table3a``), the stem of its files.
    task : str
        The task of its datasets (``classification``, ``ordinal``, ``landmarks``).
    classifier : str
        Registered name of the classifier.
    methods : tuple of str
        The baseline score, then the learned scores: the table's columns.
    title : str
        Printed above the table and in the figures.
    extension : bool, default False
        True for a table that is not in the paper.
    """

    name: str
    task: str
    classifier: str
    methods: tuple[str, ...]
    title: str
    extension: bool = False

    @property
    def baseline(self) -> str:
        return self.methods[0]


def table_specs(scores: dict, classifiers=None) -> dict[str, TableSpec]:
    """One table per classifier: its registered baseline, then the scores of ``scores[classifier]``.

    Parameters
    ----------
    scores : dict
        The config's ``scores:`` mapping, classifier -> learned score names
        (the order of the table's columns).
    classifiers : iterable of str or None
        The classifiers to make tables for; None = every registered one.

    Returns
    -------
    dict
        Table name (the classifier's registered ``table``, e.g. ``table3a``) ->
        :class:`TableSpec`, in registry order.
    """
    wanted = set(CLASSIFIERS.names() if classifiers is None else classifiers)
    specs = {}
    for name, info in CLASSIFIERS.items():
        if name not in wanted:
            continue
        methods = (info.baseline, *scores.get(name, ()))
        specs[info.table] = TableSpec(
            info.table, info.task, name, methods, info.title, info.extension
        )
    return specs


def landmarks_spec(scores) -> TableSpec:
    """The landmark experiment (Section 5.2.3, Fig. 4): the face score, then ``scores``; no table rule.

    Parameters
    ----------
    scores : iterable of str
        The learned scores of the experiment (``face_score`` among them is dropped: it leads).

    Returns
    -------
    TableSpec
        Named ``landmarks``, classifier ``dlib``.
    """
    return TableSpec(
        "landmarks",
        "landmarks",
        "dlib",
        ("face_score", *[s for s in scores if s != "face_score"]),
        "Section 5.2.3: DLIB landmarks on 300-W (Fig. 4)",
    )


def metric_table(
    summary: pd.DataFrame, spec: TableSpec, metric: str = "aurc", intervals: bool = False
) -> pd.DataFrame:
    """Mean and std over splits of a test metric (default AuRC) per (dataset, method), and of R@100.

    ``metric`` is a column of the summary, one per registered metric
    (:data:`rejectopt.metrics.METRICS`). Returns a frame indexed by dataset with
    columns ``(method, 'mean'|'std')`` for each method of ``spec`` and
    ``('risk_full', ...)``; ``n_splits`` counts the splits behind each row.

    With ``intervals`` (config ``table_intervals``; AuRC only) each method also gets
    ``(method, 'low'|'high')`` after its std: the summary's ``aurc_mean_low`` /
    ``aurc_mean_high``, a percentile bootstrap interval of the mean over splits of test AuRC
    (:data:`INTERVAL_LEVEL`; how it is resampled: ``summarize_dataset`` of
    :mod:`rejectopt.pipeline.experiments.paper`). It is computed from the resampled test rows, not from the
    split values: the mean of the per-split bounds is no interval of the mean, and the split
    values alone cannot give one.

    Parameters
    ----------
    summary : pandas.DataFrame
        The tidy results summary (``results/summary.csv``).
    spec : TableSpec
        The table: its classifier and methods.
    metric : str, default "aurc"
        The metric column averaged.
    intervals : bool, default False
        Add each method's ``(method, 'low'|'high')`` interval columns (``metric`` must be
        ``"aurc"``).

    Returns
    -------
    pandas.DataFrame
        Indexed by dataset, columns ``(method, 'mean'|'std')`` (then ``'low'|'high'`` with
        ``intervals``), ``('risk_full', ...)`` and ``('n_splits', '')``.

    Raises
    ------
    ValueError
        When ``summary`` has no column ``metric`` or no row of the table's classifier, or lacks
        a method's row for a split that another method of the same dataset has (the gaps are
        named); with
        ``intervals``, when the metric is not AuRC or the summary lacks finite interval columns
        or holds two intervals for one (dataset, method).
    """
    if metric not in summary.columns:
        raise ValueError(
            f"summary has no column {metric!r} (columns: {', '.join(summary.columns)})"
        )
    rows = summary[(summary["classifier"] == spec.classifier) & summary["score"].isin(spec.methods)]
    if rows.empty:
        raise ValueError(f"summary has no rows for classifier {spec.classifier!r} ({spec.name})")
    _check_complete(rows, spec)
    stats = rows.groupby(["dataset", "score"])[metric].agg(["mean", "std"]).unstack("score")
    stats = stats.swaplevel(axis=1)[[m for m in spec.methods if m in set(rows["score"])]]
    stats.columns = pd.MultiIndex.from_tuples(stats.columns)
    if intervals:
        stats = _with_intervals(stats, rows, metric, spec)
    per_split = rows.drop_duplicates(["dataset", "split"])
    risk = per_split.groupby("dataset")["risk_full"].agg(["mean", "std"])
    for col in ("mean", "std"):
        stats[("risk_full", col)] = risk[col]
    stats[("n_splits", "")] = per_split.groupby("dataset")["split"].nunique()
    return stats


def _check_complete(rows: pd.DataFrame, spec: TableSpec) -> None:
    """Every method of ``spec`` has a row for every split of every dataset the table covers.

    The pipeline's summaries hold one row per (dataset, split, classifier, score); a gap means the
    summary was damaged (truncated, a score's rows deleted): a mean over fewer splits, or a
    missing column, would otherwise reach the table with no word on the cause.
    """
    gaps = []
    for dataset, group in rows.groupby("dataset", sort=False):
        splits = set(group["split"])
        for method in spec.methods:
            missing = splits - set(group.loc[group["score"] == method, "split"])
            if missing:
                gaps.append(f"{dataset} {method} split(s) {', '.join(map(str, sorted(missing)))}")
    if gaps:
        shown = "; ".join(gaps[:5]) + (f"; and {len(gaps) - 5} more" if len(gaps) > 5 else "")
        raise ValueError(
            f"summary lacks rows of classifier {spec.classifier!r} ({spec.name}): {shown}; the summary is incomplete "
            "(truncated, or a score's rows deleted): make it again from the dataset summaries (in the pipeline: "
            "`snakemake --forcerun results/summary.csv` and the run's usual options)"
        )


def _with_intervals(
    stats: pd.DataFrame, rows: pd.DataFrame, metric: str, spec: TableSpec
) -> pd.DataFrame:
    """``stats`` with ``(method, 'low'|'high')`` after each method's std: the summary's interval of the mean."""
    if metric != "aurc":
        raise ValueError(
            f"{spec.name}: the table intervals (config table_intervals) are of AuRC, not {metric!r}"
        )
    bounds = ["aurc_mean_low", "aurc_mean_high"]
    missing = [c for c in bounds if c not in rows.columns]
    if missing or rows[bounds].isna().to_numpy().any():
        raise ValueError(
            f"{spec.name}: the summary has no {' / '.join(bounds)} for every row, so it was written "
            "with config table_intervals off; rerun the pipeline with table_intervals: true, which "
            "writes the dataset summaries again with the intervals"
        )
    spread = rows.groupby(["dataset", "score"])[bounds].agg(["min", "max"])
    for column in bounds:
        if not (spread[(column, "min")] == spread[(column, "max")]).all():
            raise ValueError(
                f"{spec.name}: the summary holds two values of {column} for one (dataset, score): "
                "its rows come from different runs; write it again from one run"
            )
    for column, name in zip(bounds, ("low", "high")):
        values = spread[(column, "min")].unstack("score")
        for method in stats.columns.get_level_values(0).unique():
            stats[(method, name)] = values[method]
    order = [
        (m, c)
        for m in stats.columns.get_level_values(0).unique()
        for c in ("mean", "std", "low", "high")
    ]
    return stats[order]


def mean_matrix(table: pd.DataFrame, methods) -> pd.DataFrame:
    """Datasets x methods matrix of the mean metric of :func:`metric_table`.

    Parameters
    ----------
    table : pandas.DataFrame
        :func:`metric_table`.
    methods : iterable of str
        The columns kept, in this order.

    Returns
    -------
    pandas.DataFrame
        Indexed by dataset, one column per method.
    """
    return pd.DataFrame({m: table[(m, "mean")] for m in methods})


@dataclass(frozen=True)
class TableStatistics:
    """Average ranks, Friedman test and Nemenyi critical differences of one table.

    Parameters
    ----------
    average_ranks : pandas.Series
        Average rank of each method over the datasets (1 = best).
    n_datasets : int
        Datasets with a mean for every method.
    friedman_pvalue, iman_davenport_pvalue : float
        p-values of the Friedman test and of its Iman-Davenport F form (NaN below 2 datasets).
    cd_005, cd_010 : float
        Nemenyi critical differences at alpha = 0.05 and 0.10 (NaN below 2 datasets).
    min_friedman_pvalue : float, default NaN
        :func:`friedman_min_pvalue` of the table's datasets and methods: the smallest p-value its
        Friedman test can give, whatever the numbers (NaN below 2 datasets).
    """

    average_ranks: pd.Series
    n_datasets: int
    friedman_pvalue: float
    iman_davenport_pvalue: float
    cd_005: float
    cd_010: float
    min_friedman_pvalue: float = float("nan")

    @property
    def tests_have_power(self) -> bool:
        """Whether the Friedman test could reject equivalence at alpha = 0.05 with this many
        datasets and methods (False below 2 datasets): when it cannot, neither its p-value nor the
        Nemenyi test that follows it says anything about the methods."""
        return bool(self.min_friedman_pvalue <= 0.05)


def friedman_min_pvalue(n_datasets: int, n_methods: int) -> float:
    """The smallest p-value the Friedman test (chi-square form, Demsar 2006 eq. 1) can give.

    Its statistic is largest when every dataset ranks the methods alike: then the average ranks
    are 1, ..., k and chi2_F = 12 N / (k (k + 1)) sum_j j^2 - 3 N (k + 1) = N (k - 1). With
    N = 2 datasets and k = 4 methods that is 6 on 3 degrees of freedom, p = 0.112: the test
    cannot reject at 0.05 or 0.10, whatever the results.

    Parameters
    ----------
    n_datasets : int
        N, the datasets (at least 2).
    n_methods : int
        k, the methods compared (at least 2).

    Returns
    -------
    float
        ``chi2.sf(N (k - 1), k - 1)``.
    """
    from scipy.stats import chi2  # scipy.stats: loaded by the table jobs only

    if n_datasets < 2 or n_methods < 2:
        raise ValueError(
            f"the Friedman test needs at least 2 datasets and 2 methods, got {n_datasets} and {n_methods}"
        )
    return float(chi2.sf(n_datasets * (n_methods - 1), n_methods - 1))


def table_statistics(table: pd.DataFrame, methods, metric: str = "aurc") -> TableStatistics:
    """Rank methods per dataset by a mean test metric and test their equivalence (Demsar 2006).

    Parameters
    ----------
    table : pandas.DataFrame
        :func:`metric_table` of the metric.
    methods : iterable of str
        The methods compared (columns of ``table``); datasets missing one are left out.
    metric : str, default "aurc"
        The table's metric: rank 1 is its best value (:func:`oriented_means`), the largest for
        a :func:`higher_is_better` metric.

        .. versionadded:: 0.8.0

    Returns
    -------
    TableStatistics
        The tests are NaN with fewer than 2 datasets or methods.
    """
    means = oriented_means(table, methods, metric).dropna()
    n, k = means.shape
    ranks = average_ranks(means)
    if n >= 2 and k >= 2:
        result = friedman_test(means)
        p, p_id = float(result.pvalue), float(result.iman_davenport_pvalue)
        cd05, cd10 = nemenyi_cd(k, n, alpha=0.05), nemenyi_cd(k, n, alpha=0.10)
        p_min = friedman_min_pvalue(n, k)
    else:
        p = p_id = cd05 = cd10 = p_min = float("nan")
    return TableStatistics(ranks, n, p, p_id, cd05, cd10, p_min)


def relative_improvement(summary: pd.DataFrame, spec: TableSpec) -> pd.DataFrame:
    """``100 (AuRC_baseline - AuRC_method) / AuRC_baseline`` per split; mean and std per dataset.

    As the paper's Figures 2 and 3b. Returns a frame indexed by dataset with
    columns ``(method, 'mean'|'std')`` for each learned score.

    Parameters
    ----------
    summary : pandas.DataFrame
        The tidy results summary.
    spec : TableSpec
        The table: its classifier, baseline (``methods[0]``) and learned scores.

    Returns
    -------
    pandas.DataFrame
        Improvement in percent (positive = smaller AuRC than the baseline).
    """
    rows = summary[summary["classifier"] == spec.classifier]
    wide = rows.pivot_table(index=["dataset", "split"], columns="score", values="aurc")
    base = wide[spec.baseline]
    learned = [m for m in spec.methods[1:] if m in wide.columns]
    gains = pd.DataFrame({m: 100.0 * (base - wide[m]) / base for m in learned})
    return gains.groupby("dataset").agg(["mean", "std"])


#: The :data:`rejectopt.metrics.FAILURE_METRICS` config ``summary_metrics`` may add as summary
#: columns: those of the loss and the score, and those of the labels and the score (the
#: balanced-accuracy areas), the inputs a test split has for every classifier. The calibration
#: metrics are left out: they read the classifier's class probabilities, not the score, so every
#: score of a classifier would get the same value and a table of them would rank nothing.
SUMMARY_FAILURE_METRICS = [
    name for name, metric in FAILURE_METRICS.items() if "probabilities" not in metric.inputs
]


def check_summary_metrics(names) -> list[str]:
    """Config ``summary_metrics`` as a list, refused (ValueError naming the key) beyond
    :data:`SUMMARY_FAILURE_METRICS`: a calibration metric does not depend on the score.

    Parameters
    ----------
    names : list of str or None
        The config key's value (None or empty: no column beyond the default ones).

    Returns
    -------
    list of str
        The names, in the config's order.
    """
    names = list(names or [])
    for name in names:
        if name in SUMMARY_FAILURE_METRICS:
            continue
        if name in FAILURE_METRICS:
            reason = (
                "it measures the classifier's class probabilities, not the score, so every "
                "score of a classifier would get the same value"
            )
        else:
            reason = "it is not a failure metric of the loss or the labels and the score"
        raise ValueError(
            f"config summary_metrics: {name!r} cannot be a summary column: {reason}; the "
            f"allowed names are {', '.join(SUMMARY_FAILURE_METRICS)}"
        )
    return names


def higher_is_better(metric: str) -> bool:
    """Whether a larger value of a summary column ``metric`` is better.

    The registered areas (:data:`rejectopt.metrics.METRICS`) are lower-is-better; a failure
    detector's AUROC or AUPR (:data:`rejectopt.metrics.FAILURE_METRICS`) is higher-is-better, so
    the ranks, the bold cells and the Nemenyi pairs of its table turn round.

    Parameters
    ----------
    metric : str
        A summary column: a registered metric's name.

    Returns
    -------
    bool
        ``FAILURE_METRICS[metric].higher_is_better``; False for every other name.
    """
    return metric in FAILURE_METRICS and FAILURE_METRICS[metric].higher_is_better


def oriented_means(table: pd.DataFrame, methods, metric: str = "aurc") -> pd.DataFrame:
    """:func:`mean_matrix` signed so that lower is better: negated for a
    :func:`higher_is_better` metric, as is for the rest.

    The ranks (:func:`rejectopt.stats.average_ranks`: 1 = the smallest value), the Friedman test
    and the Nemenyi pairs read this matrix; the Friedman statistic depends on the ranks' spread
    only, so it is the same either way, while the ranks turn round.

    Parameters
    ----------
    table : pandas.DataFrame
        :func:`metric_table` of ``metric``.
    methods : iterable of str
        The columns kept, in this order.
    metric : str, default "aurc"
        The table's metric.

    Returns
    -------
    pandas.DataFrame
        Indexed by dataset, one column per method.
    """
    means = mean_matrix(table, methods)
    return -means if higher_is_better(metric) else means


def __getattr__(name: str):
    """A name the module had before 0.3.0 gets its new one (``from ... import aurc_table``)."""
    if name == "aurc_table":
        # an ImportError, not an AttributeError: ``from m import x`` would replace the latter's text
        raise ImportError(
            "rejectopt.pipeline.tables has no aurc_table: rejectopt 0.3.0 renamed it metric_table"
        )
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
