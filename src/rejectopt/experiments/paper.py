"""The paper's experiment (Section 5.2, Tables 3a / 3b / 4, and Table 3c, our XGBoost extension).

Its steps are file-in / file-out functions, one per staged rule of the pipeline: train a
classifier on Trn1 and select it on Val1 (:func:`run_classifiers`), learn every uncertainty score
on Trn2 and select it on Val2 (:func:`run_scores`), evaluate every score on Tst
(:func:`summarize_dataset`). They know nothing of the workflow manager that calls them; every
output is written atomically. The staged files are the inputs other experiments reuse where
their protocol is the same.

The experiment contract (:mod:`rejectopt.experiments`): :func:`settings`; :func:`run_split`, the
Tst rows of one split from its staged classifier and score files; :func:`aggregate`, one table of
mean and std per dataset for each classifier (:func:`table_specs`, :func:`aurc_table`), whose
statistics are :func:`table_statistics`. Rendering is :mod:`rejectopt.report`'s.
"""

from __future__ import annotations

import logging
import time

import numpy as np
import pandas as pd

from dataclasses import dataclass

# The learners load on first use (the packages' lazy attributes), so that a job that only reads
# the registries, a table or a figure job, does not import scikit-learn.
from .. import classifiers
from .. import scores as _scores  # the module: run_scores has a parameter named scores
from .._io import load_npz, npz_checksum, save_npz
from ..classifiers import CLASSIFIERS, get_classifier
from ..datasets import load_prepared
from ..metrics import CONVENTIONS, METRICS, TASK_LOSS, aurc, risk_full, task_loss
from ..scores import get_score
from ..splits import derive_seed, load_split
from ..stats import average_ranks, friedman_test, nemenyi_cd
from ._contract import SplitInputs, SplitResult

__all__ = [
    "NAME",
    "BASE_SUMMARY_COLUMNS",
    "SUMMARY_COLUMNS",
    "TableSpec",
    "TableStatistics",
    "aggregate",
    "aurc_table",
    "landmarks_spec",
    "mean_matrix",
    "relative_improvement",
    "run_split",
    "settings",
    "table_specs",
    "table_statistics",
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
#: :mod:`rejectopt.experiments.landmarks`, hold only these).
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


def run_classifier(
    data_path, splits_path, split: int, kind: str, C_grid, seed: int, out_path, dataset: str = "", threads: int = 1
) -> dict:
    """Train ``kind`` on Trn1 of one split, pick C by Val1 error and save its outputs on every example.

    The output ``.npz`` holds ``y_pred`` and ``baseline`` (the classifier's
    registered baseline uncertainty: MCP for LR and XGBoost, margin for SVM /
    SVOR) for all examples of the dataset, ``proba`` (classifiers with
    posteriors), the chosen ``C`` and the validation error of each C of the grid
    (``C_grid``, ``val_error``). A classifier registered with ``uses_C=False``
    (XGBoost) ignores ``C_grid``: it searches its own grid
    (:data:`rejectopt.classifiers.XGB_GRID`) and ``C`` holds the chosen grid index.

    Parameters
    ----------
    data_path, splits_path : path-like
        The prepared data and its splits file.
    split : int
        The split trained.
    kind : str
        A registered classifier.
    C_grid : sequence of float
        The C values tried.
    seed : int
        The run's master seed (the fit's seed is derived from it, the dataset, ``kind`` and ``split``).
    out_path : path-like
        The ``.npz`` written.
    dataset : str, default ""
        The dataset's name (seeds and log lines).
    threads : int, default 1
        The classifier's ``n_jobs``.

    Returns
    -------
    dict
        ``{"C", "val_error"}``: the chosen C and the Val1 error of each C.

    Examples
    --------
    Two features of iris (so that the classifier errs), two splits:

    >>> import tempfile
    >>> from pathlib import Path
    >>> from sklearn.datasets import load_iris
    >>> from rejectopt._io import save_npz
    >>> from rejectopt.splits import make_splits, save_splits
    >>> X, y = load_iris(return_X_y=True)
    >>> X = X[:, :2]
    >>> tmp = tempfile.TemporaryDirectory()
    >>> data_path, splits_path = Path(tmp.name, "data.npz"), Path(tmp.name, "splits.npz")
    >>> save_npz(data_path, X=X, y=y)
    >>> save_splits(splits_path, make_splits(y, n_splits=2, dataset="iris"), y=y)
    >>> chosen = run_classifier(data_path, splits_path, 1, "lr", [0.1, 10.0], 0, Path(tmp.name, "lr_1.npz"),
    ...                         dataset="iris")
    >>> chosen["C"], {C: round(error, 4) for C, error in chosen["val_error"].items()}
    (0.1, {0.1: 0.2667, 10.0: 0.3333})
    >>> tmp.cleanup()
    """
    return run_classifiers(data_path, splits_path, {split: out_path}, kind, C_grid, seed, dataset=dataset,
                           threads=threads)[split]


def run_classifiers(
    data_path, splits_path, split_files: dict, kind: str, C_grid, seed: int, dataset: str = "", threads: int = 1
) -> dict:
    """:func:`run_classifier` on every split of ``split_files`` (``split -> out_path``), the data read once.

    One job per (dataset, classifier) in the pipeline (a job that fits a model spends about
    2.8 CPU-s starting and importing scikit-learn, often more than one split's fit). Each split keeps its own seed, so
    its file does not depend on which other splits the job trains; each file is
    written atomically as soon as its split is done.

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
        The run's master seed.
    dataset : str, default ""
        The dataset's name (seeds and log lines).
    threads : int, default 1
        The classifier's ``n_jobs``.

    Returns
    -------
    dict
        ``split -> {"C", "val_error"}``.

    Examples
    --------
    Two features of iris (so that the classifier errs), two splits:

    >>> import tempfile
    >>> from pathlib import Path
    >>> from sklearn.datasets import load_iris
    >>> from rejectopt._io import save_npz
    >>> from rejectopt.splits import make_splits, save_splits
    >>> X, y = load_iris(return_X_y=True)
    >>> X = X[:, :2]
    >>> tmp = tempfile.TemporaryDirectory()
    >>> data_path, splits_path = Path(tmp.name, "data.npz"), Path(tmp.name, "splits.npz")
    >>> save_npz(data_path, X=X, y=y)
    >>> save_splits(splits_path, make_splits(y, n_splits=2, dataset="iris"), y=y)
    >>> files = {k: Path(tmp.name, f"lr_{k}.npz") for k in (0, 1)}
    >>> chosen = run_classifiers(data_path, splits_path, files, "lr", [0.1, 10.0], 0, dataset="iris")
    >>> {k: round(c["val_error"][c["C"]], 4) for k, c in chosen.items()}
    {0: 0.3333, 1: 0.2667}
    >>> sorted(load_classifier_file(files[0]).files)
    ['C', 'C_grid', 'baseline', 'proba', 'val_error', 'y_pred']
    >>> tmp.cleanup()
    """
    info = get_classifier(kind)
    X, y = load_prepared(data_path)
    data_id = npz_checksum(data_path)
    n_classes = int(y.max()) + 1
    chosen = {}
    for split, out_path in sorted(split_files.items()):
        parts = load_split(splits_path, split, data_sha256=data_id)
        start = time.perf_counter()
        model, best_C, val_errors = classifiers.train_classifier(
            kind,
            X[parts["trn1"]],
            y[parts["trn1"]],
            X[parts["val1"]],
            y[parts["val1"]],
            C_grid=tuple(C_grid) if info.uses_C else None,
            n_classes=n_classes,
            random_state=derive_seed(seed, dataset, "classifier", kind, split),
            n_jobs=threads,
        )
        outputs = classifiers.classifier_outputs(kind, model, X, n_classes=n_classes)
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

    The learner is made by :meth:`rejectopt.scores.ScoreInfo.make` (only the
    keywords its ``__init__`` accepts among ``n_classes``, ``chunk_size`` and
    ``random_state``, seeded by ``(seed, dataset, classifier, score, split)``) and
    fitted to what it declares it learns from: the loss, or the true class's
    posterior (TCP).

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
        :data:`SCORE_FIELDS`: ``uncertainty`` (on the Tst indices, in their order),
        the chosen ``C`` and the Val2 AuRC of each C (``C_grid``, ``val_aurc``).

    Raises
    ------
    rejectopt.scores.ScoreError
        The score's own code fails (raises, exits) or gives a non-finite uncertainty on a
        Val2 or Tst row; the message names the score and the file that defines it.

    Examples
    --------
    Two features of iris (so that the classifier errs), two splits:

    >>> import tempfile
    >>> from pathlib import Path
    >>> from sklearn.datasets import load_iris
    >>> from rejectopt._io import save_npz
    >>> from rejectopt.splits import make_splits, save_splits
    >>> X, y = load_iris(return_X_y=True)
    >>> X = X[:, :2]
    >>> tmp = tempfile.TemporaryDirectory()
    >>> data_path, splits_path = Path(tmp.name, "data.npz"), Path(tmp.name, "splits.npz")
    >>> save_npz(data_path, X=X, y=y)
    >>> save_splits(splits_path, make_splits(y, n_splits=2, dataset="iris"), y=y)
    >>> classifier_files = {k: Path(tmp.name, f"lr_{k}.npz") for k in (0, 1)}
    >>> _ = run_classifiers(data_path, splits_path, classifier_files, "lr", [0.1, 10.0], 0, dataset="iris")
    >>> from rejectopt.splits import load_split
    >>> with load_classifier_file(classifier_files[0]) as clf:
    ...     y_pred, proba = clf["y_pred"], clf["proba"]
    >>> result = learn_score(X, y, load_split(splits_path, 0), y_pred, proba, "classification", "sele",
    ...                      [1.0, 10.0], 0, 0, dataset="iris", classifier="lr")
    >>> float(result["C"]), result["val_aurc"].round(3), result["uncertainty"].shape
    (1.0, array([6.777, 7.29 ]), (30,))
    >>> tmp.cleanup()
    """
    info = get_score(score)
    loss = task_loss(task, y, y_pred)
    target = info.target(loss, y, proba)
    learner = info.make(
        C_grid[0],
        n_classes=int(y.max()) + 1,
        chunk_size=chunk_size,
        random_state=derive_seed(seed, dataset, classifier, score, split),
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
    uncertainty = _scores.call_score(best, "predict", X[tst], y_pred[tst], n_rows=tst.size)
    constant = _scores.constant_score_message(uncertainty, best, f"Tst of {dataset} split {split} ({classifier})")
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

    Examples
    --------
    >>> score_key("sele", 1, "uncertainty")
    'sele/split_1/uncertainty'
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

    One job per (dataset, classifier) instead of one per (score, split): learning a
    score takes a median 0.1 s, starting a Python process with the library about
    1 s. Each (score, split) is seeded on its own, so its result does not
    depend on which other scores or splits the file holds.

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
    A score whose own code fails (:class:`rejectopt.scores.ScoreError`: a plugin that raises,
    exits or returns a non-finite uncertainty) fails alone: the other scores of the job are
    learned and written, and the failed one is recorded in the file as
    ``score_key(score, split, SCORE_ERROR)``, its message, and logged as an error. Reading its
    results (:func:`tst_outcomes`) then raises that message, so no table is made without it
    unnoticed. Any other error (the data, the split files) fails the job as before.

    Examples
    --------
    Two features of iris (so that the classifier errs), two splits:

    >>> import tempfile
    >>> from pathlib import Path
    >>> from sklearn.datasets import load_iris
    >>> from rejectopt._io import save_npz
    >>> from rejectopt.splits import make_splits, save_splits
    >>> X, y = load_iris(return_X_y=True)
    >>> X = X[:, :2]
    >>> tmp = tempfile.TemporaryDirectory()
    >>> data_path, splits_path = Path(tmp.name, "data.npz"), Path(tmp.name, "splits.npz")
    >>> save_npz(data_path, X=X, y=y)
    >>> save_splits(splits_path, make_splits(y, n_splits=2, dataset="iris"), y=y)
    >>> classifier_files = {k: Path(tmp.name, f"lr_{k}.npz") for k in (0, 1)}
    >>> _ = run_classifiers(data_path, splits_path, classifier_files, "lr", [0.1, 10.0], 0, dataset="iris")
    >>> chosen = run_scores(data_path, splits_path, classifier_files, "classification", ["sele", "reg"],
    ...                     [1.0, 10.0], 0, Path(tmp.name, "scores.npz"), dataset="iris", classifier="lr")
    >>> {key: c["C"] for key, c in chosen.items()}
    {('sele', 0): 1.0, ('reg', 0): 10.0, ('sele', 1): 10.0, ('reg', 1): 10.0}
    >>> from rejectopt._io import load_npz
    >>> load_npz(Path(tmp.name, "scores.npz"))[score_key("sele", 1, "uncertainty")].shape
    (30,)
    >>> tmp.cleanup()
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
    """A :func:`run_classifier` output, verified (:func:`rejectopt._io.load_npz`): unchanged since it
    was written and, where given, made from the data ``data_sha256`` identifies, for ``split``.

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

    Examples
    --------
    Two features of iris (so that the classifier errs), two splits:

    >>> import tempfile
    >>> from pathlib import Path
    >>> from sklearn.datasets import load_iris
    >>> from rejectopt._io import save_npz
    >>> from rejectopt.splits import make_splits, save_splits
    >>> X, y = load_iris(return_X_y=True)
    >>> X = X[:, :2]
    >>> tmp = tempfile.TemporaryDirectory()
    >>> data_path, splits_path = Path(tmp.name, "data.npz"), Path(tmp.name, "splits.npz")
    >>> save_npz(data_path, X=X, y=y)
    >>> save_splits(splits_path, make_splits(y, n_splits=2, dataset="iris"), y=y)
    >>> classifier_files = {k: Path(tmp.name, f"lr_{k}.npz") for k in (0, 1)}
    >>> _ = run_classifiers(data_path, splits_path, classifier_files, "lr", [0.1, 10.0], 0, dataset="iris")
    >>> with load_classifier_file(classifier_files[1], split=1) as clf:
    ...     float(clf["C"]), clf["y_pred"].shape
    (0.1, (150,))
    >>> load_classifier_file(classifier_files[1], split=0)
    Traceback (most recent call last):
    ...
    rejectopt._io.IntermediateFileError: .../lr_1.npz: made from split 1, but this step's is 0: the file is stale ...
    >>> tmp.cleanup()
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
        ``(classifier, split) -> (loss, C_classifier, {score: (uncertainty, C_score)})``
        in sorted key order; the classifier's registered baseline comes first
        (``C_score`` NaN), then the learned scores in sorted order.

    Raises
    ------
    rejectopt.scores.ScoreError
        A score that failed when it was learned (its recorded message).

    Examples
    --------
    Two features of iris (so that the classifier errs), two splits:

    >>> import tempfile
    >>> from pathlib import Path
    >>> from sklearn.datasets import load_iris
    >>> from rejectopt._io import save_npz
    >>> from rejectopt.splits import make_splits, save_splits
    >>> X, y = load_iris(return_X_y=True)
    >>> X = X[:, :2]
    >>> tmp = tempfile.TemporaryDirectory()
    >>> data_path, splits_path = Path(tmp.name, "data.npz"), Path(tmp.name, "splits.npz")
    >>> save_npz(data_path, X=X, y=y)
    >>> save_splits(splits_path, make_splits(y, n_splits=2, dataset="iris"), y=y)
    >>> classifier_files = {k: Path(tmp.name, f"lr_{k}.npz") for k in (0, 1)}
    >>> _ = run_classifiers(data_path, splits_path, classifier_files, "lr", [0.1, 10.0], 0, dataset="iris")
    >>> scores_path = Path(tmp.name, "scores.npz")
    >>> _ = run_scores(data_path, splits_path, classifier_files, "classification", ["sele", "reg"],
    ...                [1.0, 10.0], 0, scores_path, dataset="iris", classifier="lr")
    >>> score_files = {("lr", score, k): scores_path for score in ("sele", "reg") for k in (0, 1)}
    >>> outcomes = tst_outcomes("classification", data_path, splits_path,
    ...                         {("lr", k): path for k, path in classifier_files.items()}, score_files)
    >>> loss, C_classifier, scores = outcomes[("lr", 1)]
    >>> round(float(loss.mean()), 2), C_classifier, {name: C for name, (_, C) in scores.items()}
    (23.33, 0.1, {'mcp': nan, 'reg': 10.0, 'sele': 10.0})
    >>> tmp.cleanup()
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
                      aurc_convention: str = "paper") -> pd.DataFrame:
    """Test AuRC, the other registered metrics and the full-coverage risk of every (split, classifier, score).

    Parameters
    ----------
    dataset : str
        The dataset's name (a column).
    task : str
        ``"classification"`` or ``"ordinal"``.
    data_path, splits_path : path-like
        The prepared data and its splits file.
    classifier_files : dict
        ``(classifier, split) -> path`` of :func:`run_classifier` outputs.
    score_files : dict
        ``(classifier, score, split) -> path`` of the :func:`run_scores` file holding that score and split.
    aurc_convention : str, default="paper"
        Whose AuRC fills the ``aurc`` column (:data:`rejectopt.metrics.CONVENTIONS`; the 0/100
        classification loss is passed as 0/1 errors and the result scaled back to percent); the
        other columns keep their registered definitions.

    Returns
    -------
    pandas.DataFrame
        With :data:`SUMMARY_COLUMNS`; baselines are rows with score ``mcp`` / ``margin`` and an
        empty ``C_score``.

    Examples
    --------
    Two features of iris (so that the classifier errs), two splits:

    >>> import tempfile
    >>> from pathlib import Path
    >>> from sklearn.datasets import load_iris
    >>> from rejectopt._io import save_npz
    >>> from rejectopt.splits import make_splits, save_splits
    >>> X, y = load_iris(return_X_y=True)
    >>> X = X[:, :2]
    >>> tmp = tempfile.TemporaryDirectory()
    >>> data_path, splits_path = Path(tmp.name, "data.npz"), Path(tmp.name, "splits.npz")
    >>> save_npz(data_path, X=X, y=y)
    >>> save_splits(splits_path, make_splits(y, n_splits=2, dataset="iris"), y=y)
    >>> classifier_files = {k: Path(tmp.name, f"lr_{k}.npz") for k in (0, 1)}
    >>> _ = run_classifiers(data_path, splits_path, classifier_files, "lr", [0.1, 10.0], 0, dataset="iris")
    >>> scores_path = Path(tmp.name, "scores.npz")
    >>> _ = run_scores(data_path, splits_path, classifier_files, "classification", ["sele", "reg"],
    ...                [1.0, 10.0], 0, scores_path, dataset="iris", classifier="lr")
    >>> score_files = {("lr", score, k): scores_path for score in ("sele", "reg") for k in (0, 1)}
    >>> summary = summarize_dataset("iris", "classification", data_path, splits_path,
    ...                             {("lr", k): path for k, path in classifier_files.items()}, score_files)
    >>> summary[["split", "score", "C_score", "aurc", "risk_full", "n_test"]].round(2)
       split score  C_score   aurc  risk_full  n_test
    0      0   mcp      NaN   4.54      13.33      30
    1      0   reg     10.0   5.63      13.33      30
    2      0  sele      1.0   5.48      13.33      30
    3      1   mcp      NaN  10.39      23.33      30
    4      1   reg     10.0  12.81      23.33      30
    5      1  sele     10.0  14.10      23.33      30
    >>> tmp.cleanup()
    """
    rows = []
    for (classifier, split), (loss, C_classifier, scores) in tst_outcomes(
        task, data_path, splits_path, classifier_files, score_files
    ).items():
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
    return pd.DataFrame(rows, columns=SUMMARY_COLUMNS)


def _summary_aurc(dataset: str, task: str, loss, uncertainty, convention: str = "paper") -> float:
    """The summary's AuRC under ``convention`` (config ``aurc_convention``; :data:`rejectopt.metrics.CONVENTIONS`).

    ``paper`` is eq. (27) on the task loss. The libraries' conventions take the 0/1 errors the
    libraries expect (the 0/100 classification loss divided by 100; the ordinal MAE as it is),
    and the result is scaled back to the summary's loss units. MAPIE's convention takes 0/1
    losses only, so it fails on ordinal datasets with a message naming the dataset.

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

    ``classifiers`` are the config's classifiers of every task, in registry order; ``scores``
    maps each to its learned scores (the order of its table's columns).

    Parameters
    ----------
    config : dict
        The whole pipeline config.

    Returns
    -------
    dict
        ``classifiers``, ``scores``, ``C_classifier``, ``C_score``, ``sele_chunk_size``, ``seed``
        and ``aurc_convention``.

    Raises
    ------
    ValueError
        A classifier not registered, or an unknown ``aurc_convention``; the key is named.

    Examples
    --------
    >>> config = {"classifiers": {"classification": ["lr"]}, "scores": {"lr": ["sele", "reg"]},
    ...           "C_classifier": [0.1, 10.0], "C_score": [1.0, 10.0]}
    >>> settings(config)
    {'classifiers': ['lr'], 'scores': {'lr': ['sele', 'reg']}, 'C_classifier': [0.1, 10.0], 'C_score': [1.0, 10.0], 'sele_chunk_size': 500, 'seed': 0, 'aurc_convention': 'paper'}
    >>> settings({"classifiers": {"classification": ["lr", "rf"]}})
    Traceback (most recent call last):
    ...
    ValueError: config classifiers: 'rf' not registered (registered: lr, svm, svor, xgb)
    """
    wanted = [name for task in config.get("classifiers", {}).values() for name in task]
    unknown = [name for name in wanted if name not in CLASSIFIERS]
    if unknown:
        raise ValueError(f"config classifiers: {', '.join(map(repr, unknown))} "
                         f"not registered (registered: {', '.join(CLASSIFIERS.names())})")
    return {
        "classifiers": [name for name in CLASSIFIERS.names() if name in wanted],
        "scores": {name: list(config.get("scores", {}).get(name, ())) for name in wanted},
        "C_classifier": list(config.get("C_classifier", classifiers.C_GRID)),
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

    ``inputs.staged`` gives ``classifier/<name>`` (the :func:`run_classifiers` file of this split)
    and ``scores/<name>`` (the :func:`run_scores` file) for each classifier of ``settings``.

    Parameters
    ----------
    inputs : rejectopt.experiments.SplitInputs
        The split, with its staged files.
    settings : dict
        :func:`settings`.

    Returns
    -------
    rejectopt.experiments.SplitResult
        The split's rows (:func:`summarize_dataset`), no curves.

    Examples
    --------
    Two features of iris (so that the classifier errs), two splits:

    >>> import tempfile
    >>> from pathlib import Path
    >>> from sklearn.datasets import load_iris
    >>> from rejectopt._io import save_npz
    >>> from rejectopt.splits import make_splits, save_splits
    >>> X, y = load_iris(return_X_y=True)
    >>> X = X[:, :2]
    >>> tmp = tempfile.TemporaryDirectory()
    >>> data_path, splits_path = Path(tmp.name, "data.npz"), Path(tmp.name, "splits.npz")
    >>> save_npz(data_path, X=X, y=y)
    >>> save_splits(splits_path, make_splits(y, n_splits=2, dataset="iris"), y=y)
    >>> classifier_files = {k: Path(tmp.name, f"lr_{k}.npz") for k in (0, 1)}
    >>> _ = run_classifiers(data_path, splits_path, classifier_files, "lr", [0.1, 10.0], 0, dataset="iris")
    >>> scores_path = Path(tmp.name, "scores.npz")
    >>> _ = run_scores(data_path, splits_path, classifier_files, "classification", ["sele", "reg"],
    ...                [1.0, 10.0], 0, scores_path, dataset="iris", classifier="lr")
    >>> score_files = {("lr", score, k): scores_path for score in ("sele", "reg") for k in (0, 1)}
    >>> from rejectopt.experiments import split_inputs
    >>> staged = {1: {"classifier/lr": classifier_files[1], "scores/lr": scores_path}}
    >>> inputs = split_inputs("iris", "classification", 0, data_path, splits_path, [1], staged)
    >>> config = {"classifiers": {"classification": ["lr"]}, "scores": {"lr": ["sele", "reg"]},
    ...           "C_classifier": [0.1, 10.0], "C_score": [1.0, 10.0]}
    >>> run_split(inputs[1], settings(config)).rows[["split", "score", "aurc", "risk_full"]].round(2)
       split score   aurc  risk_full
    0      1   mcp  10.39      23.33
    1      1   reg  12.81      23.33
    2      1  sele  14.10      23.33
    >>> tmp.cleanup()
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
    """Every split's rows to one table per classifier (:func:`aurc_table`), keyed by its name (``table3a``).

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

    Examples
    --------
    Two features of iris (so that the classifier errs), two splits:

    >>> import tempfile
    >>> from pathlib import Path
    >>> from sklearn.datasets import load_iris
    >>> from rejectopt._io import save_npz
    >>> from rejectopt.splits import make_splits, save_splits
    >>> X, y = load_iris(return_X_y=True)
    >>> X = X[:, :2]
    >>> tmp = tempfile.TemporaryDirectory()
    >>> data_path, splits_path = Path(tmp.name, "data.npz"), Path(tmp.name, "splits.npz")
    >>> save_npz(data_path, X=X, y=y)
    >>> save_splits(splits_path, make_splits(y, n_splits=2, dataset="iris"), y=y)
    >>> classifier_files = {k: Path(tmp.name, f"lr_{k}.npz") for k in (0, 1)}
    >>> _ = run_classifiers(data_path, splits_path, classifier_files, "lr", [0.1, 10.0], 0, dataset="iris")
    >>> scores_path = Path(tmp.name, "scores.npz")
    >>> _ = run_scores(data_path, splits_path, classifier_files, "classification", ["sele", "reg"],
    ...                [1.0, 10.0], 0, scores_path, dataset="iris", classifier="lr")
    >>> score_files = {("lr", score, k): scores_path for score in ("sele", "reg") for k in (0, 1)}
    >>> summary = summarize_dataset("iris", "classification", data_path, splits_path,
    ...                             {("lr", k): path for k, path in classifier_files.items()}, score_files)
    >>> config = {"classifiers": {"classification": ["lr"]}, "scores": {"lr": ["sele", "reg"]},
    ...           "C_classifier": [0.1, 10.0], "C_score": [1.0, 10.0]}
    >>> tables = aggregate(summary, settings(config))
    >>> list(tables)
    ['table3a']
    >>> tables["table3a"][[("sele", "mean"), ("n_splits", "")]].round(2)
             sele n_splits
             mean         
    dataset               
    iris     9.79        2
    >>> tmp.cleanup()
    """
    specs = table_specs(settings["scores"], settings["classifiers"])
    present = set(rows["classifier"])
    return {name: aurc_table(rows, spec) for name, spec in specs.items() if spec.classifier in present}


# --------------------------------------------------------------------------------------------
# The results tables as numbers: what each holds, mean and std per dataset, ranks and tests
# --------------------------------------------------------------------------------------------
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

    Examples
    --------
    >>> spec = table_specs({"lr": ("sele", "reg")}, classifiers=["lr"])["table3a"]
    >>> spec
    TableSpec(name='table3a', task='classification', classifier='lr', methods=('mcp', 'sele', 'reg'), title='Table 3a: logistic regression', extension=False)
    >>> spec.baseline
    'mcp'
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

    Examples
    --------
    >>> specs = table_specs({"lr": ("sele",), "svm": ("sele",)}, classifiers=["lr", "svm"])
    >>> {name: spec.methods for name, spec in specs.items()}
    {'table3a': ('mcp', 'sele'), 'table3b': ('margin', 'sele')}
    """
    wanted = set(CLASSIFIERS.names() if classifiers is None else classifiers)
    specs = {}
    for name, info in CLASSIFIERS.items():
        if name not in wanted:
            continue
        methods = (info.baseline, *scores.get(name, ()))
        specs[info.table] = TableSpec(info.table, info.task, name, methods, info.title, info.extension)
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

    Examples
    --------
    >>> landmarks_spec(["sele", "reg", "face_score"]).methods
    ('face_score', 'sele', 'reg')
    """
    return TableSpec("landmarks", "landmarks", "dlib", ("face_score", *[s for s in scores if s != "face_score"]),
                     "Section 5.2.3: DLIB landmarks on 300-W (Fig. 4)")


def aurc_table(summary: pd.DataFrame, spec: TableSpec, metric: str = "aurc") -> pd.DataFrame:
    """Mean and std over splits of a test metric (default AuRC) per (dataset, method), and of R@100.

    ``metric`` is a column of the summary, one per registered metric
    (:data:`rejectopt.metrics.METRICS`). Returns a frame indexed by dataset with
    columns ``(method, 'mean'|'std')`` for each method of ``spec`` and
    ``('risk_full', ...)``; ``n_splits`` counts the splits behind each row.

    Parameters
    ----------
    summary : pandas.DataFrame
        The tidy results summary (``results/summary.csv``).
    spec : TableSpec
        The table: its classifier and methods.
    metric : str, default "aurc"
        The metric column averaged.

    Returns
    -------
    pandas.DataFrame
        Indexed by dataset, columns ``(method, 'mean'|'std')``, ``('risk_full', ...)`` and
        ``('n_splits', '')``.

    Raises
    ------
    ValueError
        When ``summary`` has no column ``metric`` or no row of the table's classifier.

    Examples
    --------
    A summary of three datasets, two splits and the three methods of Table 3a:

    >>> import pandas as pd
    >>> spec = table_specs({"lr": ("sele", "reg")}, classifiers=["lr"])["table3a"]
    >>> aurc = {"a": (12.0, 8.0, 9.0), "b": (20.0, 15.0, 18.0), "c": (5.0, 4.5, 4.0)}
    >>> summary = pd.DataFrame([
    ...     {"task": "classification", "dataset": d, "split": s, "classifier": "lr", "score": m,
    ...      "aurc": v + s, "augrc": (v + s) / 2, "risk_full": 30.0 + s}
    ...     for d, values in aurc.items() for s in (0, 1) for m, v in zip(spec.methods, values)])
    >>> aurc_table(summary, spec).round(2)
              mcp        sele         reg       risk_full       n_splits
             mean   std  mean   std  mean   std      mean   std         
    dataset                                                             
    a        12.5  0.71   8.5  0.71   9.5  0.71      30.5  0.71        2
    b        20.5  0.71  15.5  0.71  18.5  0.71      30.5  0.71        2
    c         5.5  0.71   5.0  0.71   4.5  0.71      30.5  0.71        2
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


def mean_matrix(table: pd.DataFrame, methods) -> pd.DataFrame:
    """Datasets x methods matrix of the mean metric of :func:`aurc_table`.

    Parameters
    ----------
    table : pandas.DataFrame
        :func:`aurc_table`.
    methods : iterable of str
        The columns kept, in this order.

    Returns
    -------
    pandas.DataFrame
        Indexed by dataset, one column per method.

    Examples
    --------
    >>> import pandas as pd
    >>> spec = table_specs({"lr": ("sele",)}, classifiers=["lr"])["table3a"]
    >>> summary = pd.DataFrame([
    ...     {"task": "classification", "dataset": d, "split": s, "classifier": "lr", "score": m,
    ...      "aurc": v + s, "risk_full": 30.0}
    ...     for d, values in {"a": (12.0, 8.0), "b": (5.0, 6.0)}.items() for s in (0, 1)
    ...     for m, v in zip(spec.methods, values)])
    >>> mean_matrix(aurc_table(summary, spec), spec.methods)
              mcp  sele
    dataset            
    a        12.5   8.5
    b         5.5   6.5
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

    Examples
    --------
    A summary of three datasets, two splits and the three methods of Table 3a:

    >>> import pandas as pd
    >>> spec = table_specs({"lr": ("sele", "reg")}, classifiers=["lr"])["table3a"]
    >>> aurc = {"a": (12.0, 8.0, 9.0), "b": (20.0, 15.0, 18.0), "c": (5.0, 4.5, 4.0)}
    >>> summary = pd.DataFrame([
    ...     {"task": "classification", "dataset": d, "split": s, "classifier": "lr", "score": m,
    ...      "aurc": v + s, "augrc": (v + s) / 2, "risk_full": 30.0 + s}
    ...     for d, values in aurc.items() for s in (0, 1) for m, v in zip(spec.methods, values)])
    >>> stats = table_statistics(aurc_table(summary, spec), spec.methods)
    >>> stats.n_datasets, round(stats.cd_010, 4)
    (3, 1.6757)
    """

    average_ranks: pd.Series
    n_datasets: int
    friedman_pvalue: float
    iman_davenport_pvalue: float
    cd_005: float
    cd_010: float


def table_statistics(table: pd.DataFrame, methods) -> TableStatistics:
    """Rank methods per dataset by mean test AuRC and test their equivalence (Demsar 2006).

    Parameters
    ----------
    table : pandas.DataFrame
        :func:`aurc_table` of the metric.
    methods : iterable of str
        The methods compared (columns of ``table``); datasets missing one are left out.

    Returns
    -------
    TableStatistics
        The tests are NaN with fewer than 2 datasets or methods.

    Examples
    --------
    A summary of three datasets, two splits and the three methods of Table 3a:

    >>> import pandas as pd
    >>> spec = table_specs({"lr": ("sele", "reg")}, classifiers=["lr"])["table3a"]
    >>> aurc = {"a": (12.0, 8.0, 9.0), "b": (20.0, 15.0, 18.0), "c": (5.0, 4.5, 4.0)}
    >>> summary = pd.DataFrame([
    ...     {"task": "classification", "dataset": d, "split": s, "classifier": "lr", "score": m,
    ...      "aurc": v + s, "augrc": (v + s) / 2, "risk_full": 30.0 + s}
    ...     for d, values in aurc.items() for s in (0, 1) for m, v in zip(spec.methods, values)])
    >>> stats = table_statistics(aurc_table(summary, spec), spec.methods)
    >>> stats.average_ranks.round(4).to_dict()
    {'mcp': 3.0, 'sele': 1.3333, 'reg': 1.6667}
    >>> round(stats.friedman_pvalue, 4), round(stats.iman_davenport_pvalue, 4), round(stats.cd_005, 4)
    (0.097, 0.0494, 1.9136)
    """
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

    Examples
    --------
    A summary of three datasets, two splits and the three methods of Table 3a:

    >>> import pandas as pd
    >>> spec = table_specs({"lr": ("sele", "reg")}, classifiers=["lr"])["table3a"]
    >>> aurc = {"a": (12.0, 8.0, 9.0), "b": (20.0, 15.0, 18.0), "c": (5.0, 4.5, 4.0)}
    >>> summary = pd.DataFrame([
    ...     {"task": "classification", "dataset": d, "split": s, "classifier": "lr", "score": m,
    ...      "aurc": v + s, "augrc": (v + s) / 2, "risk_full": 30.0 + s}
    ...     for d, values in aurc.items() for s in (0, 1) for m, v in zip(spec.methods, values)])
    >>> relative_improvement(summary, spec).round(2)
              sele          reg      
              mean   std   mean   std
    dataset                          
    a        32.05  1.81  24.04  1.36
    b        24.40  0.84   9.76  0.34
    c         9.17  1.18  18.33  2.36
    """
    rows = summary[summary["classifier"] == spec.classifier]
    wide = rows.pivot_table(index=["dataset", "split"], columns="score", values="aurc")
    base = wide[spec.baseline]
    learned = [m for m in spec.methods[1:] if m in wide.columns]
    gains = pd.DataFrame({m: 100.0 * (base - wide[m]) / base for m in learned})
    return gains.groupby("dataset").agg(["mean", "std"])
