"""Internal: the Tst evaluation of the paper's experiment (:mod:`rejectopt.pipeline.experiments.paper`).

The Tst losses and every score's uncertainties read from the staged classifier and score files
(:func:`tst_outcomes`), and a dataset's summary of test AuRC, the other registered metrics and
the full-coverage risk (:func:`summarize_dataset`, :data:`SUMMARY_COLUMNS`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from ...._checks import derive_seed
from ...._io import load_npz, npz_checksum, save_csv
from ....classifiers import get_classifier
from ....datasets import load_prepared
from ....metrics import FAILURE_METRICS, METRICS, TASK_LOSS, aurc, risk_full, task_loss
from ....scores import ScoreError
from ....splits import load_split
from ...tables import (
    INTERVAL_RESAMPLES,
    SUMMARY_FAILURE_METRICS,
    check_summary_metrics,
    dataset_summary_role,
)
from ._aurc_intervals import aurc_resamples, interval_columns
from ._classifiers import load_classifier_file
from ._scores import SCORE_ERROR, score_key

__all__ = [
    "BASE_SUMMARY_COLUMNS",
    "EXTRA_METRICS",
    "SUMMARY_COLUMNS",
    "SUMMARY_FAILURE_METRICS",
    "run_rule",
    "summarize_dataset",
    "tst_outcomes",
]

#: Metrics of :data:`rejectopt.metrics.METRICS` stored beside ``aurc`` (raw loss units), in registry order.
EXTRA_METRICS = [name for name in METRICS if name != "aurc"]

#: The columns every summary row holds, whatever the experiment (the landmark experiment's rows,
#: :mod:`rejectopt.pipeline.experiments.landmarks`, hold only these).
BASE_SUMMARY_COLUMNS = [
    "task",
    "dataset",
    "split",
    "classifier",
    "score",
    "C_classifier",
    "C_score",
    "aurc",
    "risk_full",
    "n_test",
]

#: Columns of ``results/datasets/{dataset}/summary.csv`` (a contract; new metrics are appended).
SUMMARY_COLUMNS = [*BASE_SUMMARY_COLUMNS, *EXTRA_METRICS]


def tst_outcomes(
    task: str, data_path, splits_path, classifier_files: dict, score_files: dict
) -> dict:
    """Tst losses and every score's uncertainties, per (classifier, split).

    Parameters
    ----------
    task : str
        ``"classification"`` or ``"ordinal"``.
    data_path, splits_path : path-like
        The prepared data and its splits file.
    classifier_files : dict
        ``(classifier, split) -> path`` of :func:`run_classifier` outputs.
    score_files : dict
        ``(classifier, score, split) -> path`` of the :func:`run_scores` file holding that score and split.

    Returns
    -------
    dict
        ``(classifier, split) -> (loss, C_classifier, {score: (uncertainty, C_score)})``, keys
        sorted; the baseline first (``C_score`` NaN), then the learned scores sorted.

    Raises
    ------
    rejectopt.exceptions.ScoreError
        A score that failed when it was learned (its recorded message).
    """
    _, y = load_prepared(data_path)
    data_id = npz_checksum(data_path)
    outcomes = {}
    for (classifier, split), clf_path in sorted(classifier_files.items()):
        tst = load_split(splits_path, split, data_sha256=data_id)["tst"]
        with load_classifier_file(clf_path, data_id, split) as clf:
            clf_id = clf.sha256
            loss = task_loss(task, y[tst], clf["y_pred"][tst])
            baseline = get_classifier(classifier).baseline
            scores = {baseline: (clf["baseline"][tst], np.nan)}
            C_classifier = float(clf["C"])
        held: dict = {}  # path -> the scores of this (classifier, split) it holds; each file opened once
        for (clf_name, score, score_split), score_path in sorted(score_files.items()):
            if (clf_name, score_split) == (classifier, split):
                held.setdefault(score_path, []).append(score)
        for score_path, names in held.items():
            with load_npz(
                score_path,
                expect={"data_sha256": data_id, f"classifier_sha256/split_{int(split)}": clf_id},
            ) as sc:
                for score in names:
                    if score_key(score, split, SCORE_ERROR) in sc.files:
                        raise ScoreError(
                            f"{score_path}: score {score!r} failed when it was learned, so it "
                            f"has no results: {sc[score_key(score, split, SCORE_ERROR)]}; "
                            f"fix the score's file (or drop {score!r} from the config's "
                            "scores) and rerun"
                        )
                    scores[score] = (
                        sc[score_key(score, split, "uncertainty")],
                        float(sc[score_key(score, split, "C")]),
                    )
        scores = {name: scores[name] for name in [baseline, *sorted(set(scores) - {baseline})]}
        outcomes[(classifier, split)] = (loss, C_classifier, scores)
    return outcomes


def _tst_labels(data_path, splits_path, classifier_files: dict) -> dict:
    """``(classifier, split) -> (y_true, y_pred)`` on Tst: the inputs of the label metrics of
    config ``summary_metrics`` (read only when it names one, so other runs open no file more)."""
    _, y = load_prepared(data_path)
    data_id = npz_checksum(data_path)
    labels = {}
    for (classifier, split), clf_path in sorted(classifier_files.items()):
        tst = load_split(splits_path, split, data_sha256=data_id)["tst"]
        with load_classifier_file(clf_path, data_id, split) as clf:
            labels[(classifier, split)] = (y[tst], clf["y_pred"][tst])
    return labels


def _failure_values(names, loss, uncertainty, labels) -> dict:
    """The ``summary_metrics`` columns of one row: a loss metric reads the failures ``loss > 0``,
    a label metric ``(y_true, y_pred)``."""
    values = {}
    for name in names:
        metric = FAILURE_METRICS[name]
        inputs = (*labels, uncertainty) if "y_true" in metric.inputs else (loss > 0, uncertainty)
        values[name] = metric.function(*inputs)
    return values


def summarize_dataset(
    dataset: str,
    task: str,
    data_path,
    splits_path,
    classifier_files: dict,
    score_files: dict,
    aurc_convention: str = "paper",
    *,
    intervals: bool = False,
    seed: int = 0,
    summary_metrics=(),
) -> pd.DataFrame:
    """Test AuRC, the other registered metrics and the full-coverage risk of every (split, classifier, score).

    With ``intervals`` (config ``table_intervals``) the rows also get
    :data:`rejectopt.pipeline.tables.INTERVAL_COLUMNS`: percentile bootstrap intervals
    (:data:`~rejectopt.pipeline.tables.INTERVAL_LEVEL`, :data:`~rejectopt.pipeline.tables.INTERVAL_RESAMPLES`
    resamples) of the split's test AuRC (``aurc_low`` / ``aurc_high``) and of its mean over the
    dataset's splits (``aurc_mean_low`` / ``aurc_mean_high``), from one set of resamples
    (:func:`~rejectopt.pipeline.experiments.paper._aurc_intervals.aurc_resamples`). They are the
    test rows' sampling uncertainty given the trained classifiers and scores; the ``std`` over
    splits also holds the variation from training on other rows.

    Parameters
    ----------
    dataset : str
        The dataset's name (a column).
    task, data_path, splits_path, classifier_files, score_files
        As in :func:`tst_outcomes`.
    aurc_convention : str, default="paper"
        Whose AuRC fills ``aurc`` (:func:`_summary_aurc`); the other columns keep their
        registered definitions.
    intervals : bool, default False
        Add the interval columns (``aurc_convention`` must be ``"paper"``: they are intervals of
        eq. (27)).
    seed : int, default 0
        The run's seed (config ``seed``); the resamples' seed is derived from it and ``dataset``,
        so every classifier and score of the dataset is resampled alike.
    summary_metrics : sequence of str, default ()
        Config ``summary_metrics``: names of :data:`SUMMARY_FAILURE_METRICS` appended as columns
        after :data:`SUMMARY_COLUMNS`, in this order. A metric of the loss reads the failures
        ``loss > 0`` (a misclassification, or an ordinal prediction off the true class): a
        failure detector needs a binary failure, and the task losses are graded (0/100, the
        absolute error). A metric of the labels (``aurc_ba``, ``augrc_ba``) reads the Tst labels
        and the classifier's predictions.

    Returns
    -------
    pandas.DataFrame
        With :data:`SUMMARY_COLUMNS`, then ``summary_metrics``, then
        :data:`~rejectopt.pipeline.tables.INTERVAL_COLUMNS`; baselines
        are rows with score ``mcp`` / ``margin`` and an empty ``C_score``.

    Raises
    ------
    ValueError
        ``intervals`` under another ``aurc_convention``, a split with too few Tst rows, a
        ``summary_metrics`` name outside :data:`SUMMARY_FAILURE_METRICS`, or a test split
        without an error or without a success (the failure detector's AUROC or FPR need both).
    """
    failure_columns = check_summary_metrics(summary_metrics)
    if intervals and aurc_convention != "paper":
        raise ValueError(
            f"{dataset}: config table_intervals are intervals of eq. (27) AuRC, but aurc_convention is "
            f"{aurc_convention!r}; set aurc_convention: paper or table_intervals: false"
        )
    outcomes = tst_outcomes(task, data_path, splits_path, classifier_files, score_files)
    needs_labels = any("y_true" in FAILURE_METRICS[name].inputs for name in failure_columns)
    labels = _tst_labels(data_path, splits_path, classifier_files) if needs_labels else {}
    rows = []
    for (classifier, split), (loss, C_classifier, scores) in outcomes.items():
        for score, (uncertainty, C_score) in scores.items():
            rows.append(
                {
                    "task": task,
                    "dataset": dataset,
                    "split": split,
                    "classifier": classifier,
                    "score": score,
                    "C_classifier": C_classifier,
                    "C_score": C_score,
                    "aurc": _summary_aurc(dataset, task, loss, uncertainty, aurc_convention),
                    "risk_full": risk_full(loss),
                    "n_test": len(loss),
                    **{name: METRICS[name].function(loss, uncertainty) for name in EXTRA_METRICS},
                    **_failure_values(
                        failure_columns,
                        np.asarray(loss),
                        uncertainty,
                        labels.get((classifier, split), ()),
                    ),
                }
            )
    summary = pd.DataFrame(rows, columns=[*SUMMARY_COLUMNS, *failure_columns])
    if not intervals:
        return summary
    data_id = npz_checksum(data_path)
    tst = {
        split: load_split(splits_path, split, data_sha256=data_id)["tst"] for _, split in outcomes
    }
    samples = [
        (tst[split], loss, uncertainty)
        for (_, split), (loss, _, scores) in outcomes.items()
        for uncertainty, _ in scores.values()
    ]  # the order of the summary's rows
    values = aurc_resamples(
        samples, INTERVAL_RESAMPLES, derive_seed(seed, dataset, "table_intervals")
    )
    return pd.concat([summary, interval_columns(summary, values)], axis=1)


def _summary_aurc(dataset: str, task: str, loss, uncertainty, convention: str = "paper") -> float:
    """The summary's AuRC under ``convention`` (config ``aurc_convention``; :data:`rejectopt.metrics.CONVENTIONS`).

    ``paper`` is eq. (27) on the task loss; the libraries' conventions get 0/1 errors (the 0/100
    loss / 100; the ordinal MAE as is), scaled back. MAPIE's takes 0/1 losses only, so it fails
    on ordinal datasets (naming the dataset).

    Parameters
    ----------
    dataset, task : str
        The dataset (named in errors) and its task (:data:`rejectopt.metrics.TASK_LOSS`).
    loss, uncertainty : array-like of shape (n,)
        The Tst losses of the task and the score's uncertainties.
    convention : str, default="paper"
        A name of :data:`rejectopt.metrics.CONVENTIONS`.

    Returns
    -------
    float
        The AuRC in the task's loss units (percent for classification).
    """
    if convention == "paper":
        return aurc(loss, uncertainty)
    scale = 100.0 if TASK_LOSS[task] == "zero_one" else 1.0
    try:
        return scale * aurc(np.asarray(loss) / scale, uncertainty, convention=convention)
    except ValueError as err:
        raise ValueError(f"{dataset} ({task}), config aurc_convention: {err}") from None


def run_rule(
    inputs: Mapping[str, Any],
    outputs: Mapping[str, Any],
    wildcards: Mapping[str, str],
    threads: int,
    params: Mapping[str, Any],
) -> pd.DataFrame:
    """Rule ``summarize_dataset``: :func:`summarize_dataset` on the job's files, saved with its record.

    The paper's entry of :func:`rejectopt.pipeline.experiments._rules.run_rule`, as every other
    experiment's per-dataset rule; the rule's params are :func:`summarize_dataset`'s arguments
    (``classifier_files`` and ``score_files`` by (classifier[, score], split)). Its staged inputs,
    the classifiers and scores, come from the rules ``train_classifier`` and ``learn_score``.

    Parameters
    ----------
    inputs, outputs, wildcards, params : mapping
        The job's named inputs (``data``, ``splits``), outputs (``summary``), wildcards
        (``dataset``) and params (Snakemake's, as dicts).
    threads : int
        The job's threads (one: the summary reads files and sums losses).

    Returns
    -------
    pandas.DataFrame
        The summary, as written (its content record beside it, checked by ``collect_summary``).
    """
    summary = summarize_dataset(
        wildcards["dataset"],
        params["task"],
        inputs["data"],
        inputs["splits"],
        params["classifier_files"],
        params["score_files"],
        params["aurc_convention"],
        intervals=params["table_intervals"],
        seed=params["seed"],
        # the rule passes summary_metrics only when the config names some (see evaluation.smk)
        summary_metrics=params.get("summary_metrics", ()),
    )
    # its record names the dataset: collect_summary refuses it copied over another dataset's
    save_csv(summary, outputs["summary"], provenance=dataset_summary_role(wildcards["dataset"]))
    return summary
