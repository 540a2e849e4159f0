"""Internal: the pipeline's steps of the paper's experiment; not part of the public API (see
:mod:`rejectopt.pipeline.experiments` for the experiment contract).

The paper's experiment (Section 5.2, Tables 3a / 3b / 4; Table 3c, our XGBoost extension), as
file-in / file-out steps, one per staged rule, unaware of the workflow manager, outputs written
atomically: classifiers on Trn1 / Val1 (:func:`run_classifiers`), scores on Trn2 / Val2
(:func:`run_scores`), Tst evaluation (:func:`summarize_dataset`). Other experiments reuse the
staged files where their protocol is the same.

Contract: :func:`settings`, :func:`run_split`, :func:`aggregate` (:mod:`rejectopt.pipeline.tables`).
Rendering is :mod:`rejectopt.pipeline.report`'s.
"""

from __future__ import annotations

import logging
import time

import numpy as np
import pandas as pd

# The learners load on first use (the packages' lazy attributes), so that a job that only reads
# the registries, a table or a figure job, does not import scikit-learn.
from ... import classifiers
from ... import scores as _scores  # the module: run_scores has a parameter named scores
from ..._io import load_npz, npz_checksum, save_npz
from ...classifiers import CLASSIFIERS, get_classifier
from ...datasets import load_prepared
from ...metrics import CONVENTIONS, METRICS, TASK_LOSS, aurc, risk_full, task_loss
from ...scores import get_score
from ...splits import _derive_seed, load_split
from ..tables import INTERVAL_COLUMNS, INTERVAL_LEVEL, INTERVAL_RESAMPLES, metric_table, table_specs
from ._contract import SplitInputs, SplitResult

__all__ = [
    "NAME",
    "BASE_SUMMARY_COLUMNS",
    "SUMMARY_COLUMNS",
    "aggregate",
    "run_split",
    "settings",
    "run_classifier",
    "run_classifiers",
    "load_classifier_file",
    "SCORE_ERROR",
    "SCORE_FIELDS",
    "learn_score",
    "run_scores",
    "score_key",
    "summarize_dataset",
    "tst_outcomes",
]

log = logging.getLogger(__name__)

#: The experiment's name in the experiment contract (the paper's Tables 3 and 4).
NAME = "paper"

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

#: Largest resampled values of the AuRC intervals held at once (a few 16 MB arrays).
_INTERVAL_BLOCK_ELEMENTS = 1 << 21


def run_classifier(
    data_path, splits_path, split: int, kind: str, C_grid, seed: int, out_path, dataset: str = "", threads: int = 1
) -> dict:
    """Train ``kind`` on Trn1 of one split, pick C by Val1 error and save its outputs on every example.

    A classifier with ``uses_C=False`` (XGBoost) ignores ``C_grid``: it searches
    ``rejectopt.classifiers._xgb.XGB_GRID`` and ``C`` is the chosen grid index.

    Parameters
    ----------
    split : int
        The split trained.
    out_path : path-like
        The ``.npz`` written: ``y_pred`` and ``baseline`` (the registered baseline uncertainty:
        MCP for LR and XGBoost, margin for SVM / SVOR) on every example, ``proba`` (if
        posteriors), ``C``, ``C_grid`` and ``val_error``.
    data_path, splits_path, kind, C_grid, seed, dataset, threads
        As in :func:`run_classifiers`.

    Returns
    -------
    dict
        ``{"C", "val_error"}``: the chosen C and the Val1 error of each C.
    """
    return run_classifiers(data_path, splits_path, {split: out_path}, kind, C_grid, seed, dataset=dataset,
                           threads=threads)[split]


def run_classifiers(
    data_path, splits_path, split_files: dict, kind: str, C_grid, seed: int, dataset: str = "", threads: int = 1
) -> dict:
    """:func:`run_classifier` on every split of ``split_files`` (``split -> out_path``), the data read once.

    One job per (dataset, classifier): a job's start-up (:data:`rejectopt.pipeline.resources.JOB_STARTUP_CPU_S`)
    often costs more than one split's fit. Each split has its own seed, so its file (written
    atomically when done) does not depend on the job's other splits.

    Parameters
    ----------
    data_path, splits_path : path-like
        The prepared data and its splits file.
    split_files : dict
        ``split -> out_path``.
    kind : str
        A registered classifier.
    C_grid : sequence of float
        The C values tried.
    seed : int
        The run's master seed (each fit's derives from it, the dataset, ``kind``, the split).
    dataset : str, default ""
        The dataset's name (seeds and log lines).
    threads : int, default 1
        The classifier's ``n_jobs``.

    Returns
    -------
    dict
        ``split -> {"C", "val_error"}``.
    """
    info = get_classifier(kind)
    X, y = load_prepared(data_path)
    data_id = npz_checksum(data_path)
    n_classes = int(y.max()) + 1
    chosen = {}
    for split, out_path in sorted(split_files.items()):
        parts = load_split(splits_path, split, data_sha256=data_id)
        start = time.perf_counter()
        model, best_C, val_errors = classifiers._selection.train_classifier(
            kind,
            X[parts["trn1"]],
            y[parts["trn1"]],
            X[parts["val1"]],
            y[parts["val1"]],
            C_grid=tuple(C_grid) if info.uses_C else None,
            n_classes=n_classes,
            random_state=_derive_seed(seed, dataset, "classifier", kind, split),
            n_jobs=threads,
        )
        outputs = classifiers._selection.classifier_outputs(kind, model, X, n_classes=n_classes)
        log.info(
            "%s %s split %d: C=%g chosen on Val1 (errors %s) in %.1f s",
            dataset, kind, split, best_C, {c: round(e, 4) for c, e in val_errors.items()},
            time.perf_counter() - start,
        )
        arrays = {
            "y_pred": np.asarray(outputs["y_pred"], dtype=np.int64),
            "baseline": np.asarray(outputs["baseline"], dtype=float),
            "C": np.float64(best_C),
            "C_grid": np.asarray(list(val_errors), dtype=float),
            "val_error": np.asarray(list(val_errors.values()), dtype=float),
        }
        if outputs.get("proba") is not None:
            arrays["proba"] = np.asarray(outputs["proba"], dtype=float)
        provenance = {"data_sha256": data_id, "splits_sha256": npz_checksum(splits_path), "split": int(split),
                      "classifier": kind}
        save_npz(out_path, provenance=provenance, **arrays)
        chosen[split] = {"C": best_C, "val_error": val_errors}
    return chosen


def learn_score(
    X,
    y,
    parts: dict,
    y_pred,
    proba,
    task: str,
    score: str,
    C_grid,
    seed: int,
    split: int,
    chunk_size: int = 500,
    dataset: str = "",
    classifier: str = "",
) -> dict:
    """Learn the registered ``score`` on Trn2, pick C by Val2 AuRC, return its uncertainty on Tst.

    The learner (:func:`rejectopt.scores.make_score`, seeded by ``(seed, dataset, classifier, score,
    split)``) is fitted to what it declares it learns from: the loss or the true class's posterior (TCP).

    Parameters
    ----------
    X : numpy.ndarray of shape (n, d)
        The features of every example.
    y : numpy.ndarray of shape (n,)
        The labels.
    parts : dict
        Row indices ``trn2``, ``val2``, ``tst`` (:func:`rejectopt.splits.load_split`).
    y_pred : numpy.ndarray of shape (n,)
        The classifier's predictions on every example.
    proba : numpy.ndarray of shape (n, n_classes) or None
        Its posteriors, where it has them (a TCP score needs them).
    task : str
        ``"classification"`` or ``"ordinal"``: the loss (:func:`rejectopt.metrics.task_loss`).
    score : str
        A registered learned score.
    C_grid : sequence of float
        The C values tried.
    seed : int
        The run's master seed.
    split : int
        The split's number (seed, log lines).
    chunk_size : int, default 500
        The score's training chunk size.
    dataset, classifier : str, default ""
        Names for the seed and the log lines.

    Returns
    -------
    dict
        :data:`SCORE_FIELDS`: ``uncertainty`` (Tst indices, in order), ``C``, ``C_grid``, ``val_aurc``.

    Raises
    ------
    rejectopt.scores.ScoreError
        The score's own code fails or gives a non-finite Val2 / Tst uncertainty; names the
        score and its file.
    """
    info = get_score(score)
    loss = task_loss(task, y, y_pred)
    target = info.target(loss, y, proba)
    learner = info.make(
        C_grid[0],
        n_classes=int(y.max()) + 1,
        chunk_size=chunk_size,
        random_state=_derive_seed(seed, dataset, classifier, score, split),
    )
    trn2, val2, tst = parts["trn2"], parts["val2"], parts["tst"]
    start = time.perf_counter()
    best, val_aurc = _scores.select_C(
        learner,
        X[trn2], y_pred[trn2], target[trn2],
        X[val2], y_pred[val2], loss[val2],
        C_grid=tuple(C_grid),
    )
    log.info(
        "%s %s/%s split %d: C=%g chosen on Val2 (AuRC %s) in %.1f s",
        dataset, classifier, score, split, best.C, {c: round(a, 4) for c, a in val_aurc.items()},
        time.perf_counter() - start,
    )
    uncertainty = _scores._registry.call_score(best, "predict", X[tst], y_pred[tst], n_rows=tst.size)
    constant = _scores._registry.constant_score_message(uncertainty, best, f"Tst of {dataset} split {split} ({classifier})")
    if constant:
        log.warning("%s", constant)
    return {
        "uncertainty": uncertainty,
        "C": np.float64(best.C),
        "C_grid": np.asarray(list(val_aurc), dtype=float),
        "val_aurc": np.asarray(list(val_aurc.values()), dtype=float),
    }


#: The arrays of one (score, split) in a scores file (:func:`run_scores`).
SCORE_FIELDS = ("uncertainty", "C", "C_grid", "val_aurc")
#: The one array of a (score, split) that failed, in place of :data:`SCORE_FIELDS`: its message.
SCORE_ERROR = "error"


def score_key(score: str, split: int, field: str) -> str:
    """Name of one array in a scores file: ``"{score}/split_{split}/{field}"`` (``field`` of :data:`SCORE_FIELDS`).

    Parameters
    ----------
    score : str
        The learned score.
    split : int
        The split's number.
    field : str
        One of :data:`SCORE_FIELDS`, or :data:`SCORE_ERROR`.

    Returns
    -------
    str
        The array's name.
    """
    return f"{score}/split_{int(split)}/{field}"


def run_scores(
    data_path,
    splits_path,
    classifier_files: dict,
    task: str,
    scores,
    C_grid,
    seed: int,
    out_path,
    chunk_size: int = 500,
    dataset: str = "",
    classifier: str = "",
) -> dict:
    """:func:`learn_score` for every score of ``scores`` on every split of one (dataset, classifier); one file.

    One job per (dataset, classifier): a score costs far less than a job's start-up
    (:data:`rejectopt.pipeline.resources.JOB_STARTUP_CPU_S`). Each (score, split) is seeded on its own,
    independent of the file's other entries.

    Parameters
    ----------
    data_path, splits_path : path-like
        The prepared data and its splits file.
    classifier_files : dict
        ``split -> path`` of :func:`run_classifier` outputs.
    task : str
        ``"classification"`` or ``"ordinal"``.
    scores : sequence of str
        Registered learned scores.
    C_grid : sequence of float
        The C values tried for each score.
    seed : int
        The run's master seed.
    out_path : path-like
        The ``.npz`` written.
    chunk_size : int, default 500
        The scores' training chunk size.
    dataset, classifier : str, default ""
        Names for the seeds, the file's provenance and the log lines.

    Returns
    -------
    dict
        ``(score, split) -> {"C", "val_aurc"}``, or ``{"error": message}`` for a failed score;
        the file at ``out_path`` holds the arrays :func:`score_key` ``(score, split, field)``.

    Notes
    -----
    A score whose own code fails (:class:`rejectopt.scores.ScoreError`) fails alone: the others
    are written, its message is logged and recorded as ``score_key(score, split, SCORE_ERROR)``,
    and :func:`tst_outcomes` raises it, so no table silently lacks it. Any other error (data,
    split files) fails the job.
    """
    X, y = load_prepared(data_path)
    data_id = npz_checksum(data_path)
    arrays, chosen, provenance = {}, {}, {"data_sha256": data_id, "classifier": classifier}
    for split, clf_path in sorted(classifier_files.items()):
        parts = load_split(splits_path, split, data_sha256=data_id)
        with load_classifier_file(clf_path, data_id, split) as clf:
            provenance[f"classifier_sha256/split_{int(split)}"] = clf.sha256
            y_pred = clf["y_pred"]
            proba = clf["proba"] if "proba" in clf.files else None
        for score in scores:
            try:
                result = learn_score(X, y, parts, y_pred, proba, task, score, C_grid, seed, split,
                                     chunk_size=chunk_size, dataset=dataset, classifier=classifier)
            except _scores.ScoreError as err:  # this score's own defect: the other scores go on
                message = f"{dataset} {classifier} split {split}: {err}"
                log.error("%s", message)
                arrays[score_key(score, split, SCORE_ERROR)] = np.array(message)
                chosen[(score, split)] = {"error": message}
                continue
            arrays.update({score_key(score, split, f): result[f] for f in SCORE_FIELDS})
            chosen[(score, split)] = {"C": float(result["C"]),
                                      "val_aurc": dict(zip(result["C_grid"].tolist(), result["val_aurc"].tolist()))}
    save_npz(out_path, provenance=provenance, **arrays)
    return chosen


def load_classifier_file(path, data_sha256: str | None = None, split: int | None = None):
    """A :func:`run_classifier` output, verified unchanged and, where given, made from the data and
    for the split (:func:`rejectopt._io.load_npz`).

    Parameters
    ----------
    path : path-like
        The classifier file.
    data_sha256 : str, optional
        The checksum of the data at hand (:func:`rejectopt._io.npz_checksum`).
    split : int, optional
        The split the file must be for.

    Returns
    -------
    rejectopt._io.NpzArrays
        ``y_pred``, ``baseline``, ``C``, ``C_grid``, ``val_error`` and, where the classifier has
        posteriors, ``proba``.

    Raises
    ------
    rejectopt._io.IntermediateFileError
        Naming the file: corrupt, edited, without a content record, or made from other data or
        for another split.
    """
    return load_npz(path, expect={"data_sha256": data_sha256, "split": None if split is None else int(split)})


def tst_outcomes(task: str, data_path, splits_path, classifier_files: dict, score_files: dict) -> dict:
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
    rejectopt.scores.ScoreError
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
        held = {}  # path -> the scores of this (classifier, split) it holds; each file opened once
        for (clf_name, score, score_split), score_path in sorted(score_files.items()):
            if (clf_name, score_split) == (classifier, split):
                held.setdefault(score_path, []).append(score)
        for score_path, names in held.items():
            with load_npz(score_path, expect={"data_sha256": data_id, f"classifier_sha256/split_{int(split)}": clf_id}) as sc:
                for score in names:
                    if score_key(score, split, SCORE_ERROR) in sc.files:
                        raise _scores.ScoreError(f"{score_path}: score {score!r} failed when it was learned, so it "
                                                 f"has no results: {sc[score_key(score, split, SCORE_ERROR)]}; "
                                                 f"fix the score's file (or drop {score!r} from the config's "
                                                 "scores) and rerun")
                    scores[score] = (sc[score_key(score, split, "uncertainty")], float(sc[score_key(score, split, "C")]))
        scores = {name: scores[name] for name in [baseline, *sorted(set(scores) - {baseline})]}
        outcomes[(classifier, split)] = (loss, C_classifier, scores)
    return outcomes


def summarize_dataset(dataset: str, task: str, data_path, splits_path, classifier_files: dict, score_files: dict,
                      aurc_convention: str = "paper", *, intervals: bool = False, seed: int = 0) -> pd.DataFrame:
    """Test AuRC, the other registered metrics and the full-coverage risk of every (split, classifier, score).

    With ``intervals`` (config ``table_intervals``) the rows also get
    :data:`rejectopt.pipeline.tables.INTERVAL_COLUMNS`: percentile bootstrap intervals
    (:data:`~rejectopt.pipeline.tables.INTERVAL_LEVEL`, :data:`~rejectopt.pipeline.tables.INTERVAL_RESAMPLES`
    resamples) of the split's test AuRC (``aurc_low`` / ``aurc_high``) and of its mean over the
    dataset's splits (``aurc_mean_low`` / ``aurc_mean_high``), from one set of resamples
    (:func:`_aurc_resamples`). They are the test rows' sampling uncertainty given the trained
    classifiers and scores; the ``std`` over splits also holds the variation from training on
    other rows.

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

    Returns
    -------
    pandas.DataFrame
        With :data:`SUMMARY_COLUMNS` (then :data:`~rejectopt.pipeline.tables.INTERVAL_COLUMNS`); baselines
        are rows with score ``mcp`` / ``margin`` and an empty ``C_score``.

    Raises
    ------
    ValueError
        ``intervals`` under another ``aurc_convention``, or a split with too few Tst rows.
    """
    if intervals and aurc_convention != "paper":
        raise ValueError(f"{dataset}: config table_intervals are intervals of eq. (27) AuRC, but aurc_convention is "
                         f"{aurc_convention!r}; set aurc_convention: paper or table_intervals: false")
    outcomes = tst_outcomes(task, data_path, splits_path, classifier_files, score_files)
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
                }
            )
    summary = pd.DataFrame(rows, columns=SUMMARY_COLUMNS)
    if not intervals:
        return summary
    data_id = npz_checksum(data_path)
    tst = {split: load_split(splits_path, split, data_sha256=data_id)["tst"] for _, split in outcomes}
    samples = [(tst[split], loss, uncertainty) for (_, split), (loss, _, scores) in outcomes.items()
               for uncertainty, _ in scores.values()]  # the order of the summary's rows
    values = _aurc_resamples(samples, INTERVAL_RESAMPLES, _derive_seed(seed, dataset, "table_intervals"))
    return pd.concat([summary, _interval_columns(summary, values)], axis=1)


def _aurc_resamples(samples, n_resamples: int, seed: int) -> np.ndarray:
    """Eq. (27) AuRC of each sample under ``n_resamples`` resamples of the union of their test rows.

    ``samples`` lists ``(rows, loss, uncertainty)``: the dataset rows of a split's Tst part and
    that split's losses and uncertainties on them, in the same order. Each resample draws the
    union U of the listed rows ``|U|`` times with replacement, and every sample weighs its rows by
    their multiplicities in that draw (a row in two splits' Tst parts counts in both, as often).
    Resampling the dataset's rows once for all splits, not each split on its own, keeps the
    dependence of the splits' AuRC: random splits share test rows (20 % Tst parts share a fifth
    of their rows pairwise), and a mean over independently resampled splits would understate its
    spread. A split's rows then occur ``|Tst|`` times on average, not exactly.

    Parameters
    ----------
    samples : list of (array of int, array, array)
        Dataset rows, losses and uncertainties of each sample.
    n_resamples : int
        Resamples, >= 1.
    seed : int
        Seed of ``numpy.random.default_rng``.

    Returns
    -------
    numpy.ndarray of shape (len(samples), n_resamples)
        The resampled AuRC (ties broken by the sample's order, as :func:`rejectopt.metrics.aurc`).

    Raises
    ------
    ValueError
        A resample that draws none of a sample's rows (a Tst part of a handful of rows).
    """
    union = np.unique(np.concatenate([rows for rows, _, _ in samples]))
    positions = [np.searchsorted(union, rows) for rows, _, _ in samples]
    sorted_by_u = [np.argsort(uncertainty, kind="stable") for _, _, uncertainty in samples]
    losses = [np.asarray(loss, dtype=float)[order] for (_, loss, _), order in zip(samples, sorted_by_u)]
    n = union.size
    rng = np.random.default_rng(seed)
    values = np.empty((len(samples), n_resamples))
    block = max(1, _INTERVAL_BLOCK_ELEMENTS // n)
    for start in range(0, n_resamples, block):
        rows = min(block, n_resamples - start)
        draws = rng.integers(0, n, size=(rows, n), dtype=np.intp) + (np.arange(rows, dtype=np.intp) * n)[:, None]
        counts = np.bincount(draws.ravel(), minlength=rows * n).reshape(rows, n)
        for i, (where, order, loss) in enumerate(zip(positions, sorted_by_u, losses)):
            values[i, start:start + rows] = _weighted_aurc(loss, counts[:, where[order]])
    return values


def _weighted_aurc(loss_sorted, counts) -> np.ndarray:
    """Eq. (27) of each row of multiplicities ``counts`` over examples sorted by uncertainty.

    On the ``m`` drawn examples in that order, ``sum_k L(k) / k = sum_i l_i (H(m) - H(i - 1))``
    (harmonic numbers H; example i's loss is in every ``L(k)`` from ``k = i`` on). Example j (loss
    ``l``, ``c`` copies after ``N`` drawn examples) holds positions ``N + 1 .. N + c`` and adds
    ``l (c H(m) - (G(N + c) - G(N)))`` with ``G(x) = sum_{t < x} H(t)``, so one running count (no
    running loss sum) and the examples of nonzero loss give the area; divided by ``m = sum c``.
    """
    after = np.cumsum(counts, axis=1)  # integers: exact indices into H and G
    total = after[:, -1]
    if not np.all(total > 0):
        raise ValueError("a bootstrap resample of the Tst rows drew none of a split's rows: its Tst part is too "
                         "small for an interval; set config table_intervals: false or use more data")
    harmonic = np.concatenate([[0.0], np.cumsum(1.0 / np.arange(1, int(total.max()) + 1))])
    partial = np.concatenate([[0.0], np.cumsum(harmonic[:-1])])  # G(0 .. max m)
    lossy = np.flatnonzero(loss_sorted)
    loss, copies, ends = loss_sorted[lossy], counts[:, lossy], after[:, lossy]
    spans = partial[ends]
    spans -= partial[ends - copies]  # G(N + c) - G(N), in place: the arrays are (resamples, examples)
    return (harmonic[total] * (copies @ loss) - spans @ loss) / total


def _interval_columns(summary: pd.DataFrame, values: np.ndarray) -> pd.DataFrame:
    """:data:`~rejectopt.pipeline.tables.INTERVAL_COLUMNS` of the summary's rows from their resampled AuRC.

    The interval of the mean over splits is the percentile interval of the per-resample means
    (resample b's AuRC averaged over the splits of a classifier and score): the bootstrap
    distribution of the table's cell itself. Averaging the splits' bounds instead would give an
    interval too wide for the mean (bounds do not average: the mean's spread shrinks with the
    splits, up to their dependence).
    """
    alpha = 1.0 - INTERVAL_LEVEL
    quantiles = [alpha / 2, 1.0 - alpha / 2]
    split_low, split_high = np.quantile(values, quantiles, axis=1)
    mean_low, mean_high = np.empty(len(summary)), np.empty(len(summary))
    for _, index in summary.groupby(["classifier", "score"], sort=False).indices.items():
        low, high = np.quantile(values[index].mean(axis=0), quantiles)
        mean_low[index], mean_high[index] = low, high
    return pd.DataFrame(dict(zip(INTERVAL_COLUMNS, (split_low, split_high, mean_low, mean_high))), index=summary.index)


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


# --------------------------------------------------------------------------------------------
# The experiment contract
# --------------------------------------------------------------------------------------------
def settings(config: dict) -> dict:
    """The paper experiment's settings from the pipeline config: classifiers, scores, C grids, seed.

    Parameters
    ----------
    config : dict
        The pipeline's validated config.

    Returns
    -------
    dict
        ``classifiers`` (of every task, registry order), ``scores`` (per classifier, in its table's
        column order), ``C_classifier``, ``C_score``, ``sele_chunk_size``, ``seed``, ``aurc_convention``.

    Raises
    ------
    ValueError
        A classifier not registered, or an unknown ``aurc_convention``; the key is named.
    """
    wanted = [name for task in config.get("classifiers", {}).values() for name in task]
    unknown = [name for name in wanted if name not in CLASSIFIERS]
    if unknown:
        raise ValueError(f"config classifiers: {', '.join(map(repr, unknown))} "
                         f"not registered (registered: {', '.join(CLASSIFIERS.names())})")
    return {
        "classifiers": [name for name in CLASSIFIERS.names() if name in wanted],
        "scores": {name: list(config.get("scores", {}).get(name, ())) for name in wanted},
        "C_classifier": list(config.get("C_classifier", classifiers._selection.C_GRID)),
        "C_score": list(config.get("C_score", ())),
        "sele_chunk_size": int(config.get("sele_chunk_size", 500)),
        "seed": int(config.get("seed", 0)),
        "aurc_convention": _aurc_convention(config),
    }


def _aurc_convention(config: dict) -> str:
    convention = config.get("aurc_convention", "paper")
    if convention not in CONVENTIONS:
        raise ValueError(f"config aurc_convention: {convention!r} is not a convention; "
                         f"choose one of {', '.join(map(repr, CONVENTIONS))}")
    return convention


def run_split(inputs: SplitInputs, settings: dict) -> SplitResult:
    """The Tst rows of one split (:data:`SUMMARY_COLUMNS`) from its staged classifier and score files.

    Parameters
    ----------
    inputs : rejectopt.pipeline.experiments.SplitInputs
        The split; ``staged`` gives ``classifier/<name>`` (:func:`run_classifiers`) and
        ``scores/<name>`` (:func:`run_scores`) per classifier.
    settings : dict
        :func:`settings`.

    Returns
    -------
    rejectopt.pipeline.experiments.SplitResult
        The split's rows (:func:`summarize_dataset`), no curves.
    """
    classifier_files, score_files = {}, {}
    for name in settings["classifiers"]:
        classifier_files[(name, inputs.split)] = inputs.staged_file(f"classifier/{name}")
        for score in settings["scores"].get(name, ()):
            score_files[(name, score, inputs.split)] = inputs.staged_file(f"scores/{name}")
    rows = summarize_dataset(inputs.dataset, inputs.task, inputs.data_path, inputs.splits_path,
                             classifier_files, score_files, settings.get("aurc_convention", "paper"))
    return SplitResult(rows)


def aggregate(rows: pd.DataFrame, settings: dict) -> dict[str, pd.DataFrame]:
    """Every split's rows to one :func:`rejectopt.pipeline.tables.metric_table` per classifier, keyed by name (``table3a``).

    Parameters
    ----------
    rows : pandas.DataFrame
        Every split's rows (:data:`SUMMARY_COLUMNS`).
    settings : dict
        :func:`settings`.

    Returns
    -------
    dict of str to pandas.DataFrame
        A table for each configured classifier that has rows.
    """
    specs = table_specs(settings["scores"], settings["classifiers"])
    present = set(rows["classifier"])
    return {name: metric_table(rows, spec) for name, spec in specs.items() if spec.classifier in present}
