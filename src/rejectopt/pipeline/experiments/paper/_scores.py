"""Internal: the scores stage of the paper's experiment (:mod:`rejectopt.pipeline.experiments.paper`).

Every learned score of a (dataset, classifier) fitted on Trn2 of each split, its C chosen by Val2
AuRC, its Tst uncertainties saved in one file per (dataset, classifier) (:func:`run_scores`),
under the array names of :func:`score_key`.
"""

from __future__ import annotations

import logging
import time
from typing import Any

import numpy as np

# The learners load on first use (the package's lazy attributes), so that a job that only reads
# the registries, a table or a figure job, does not import scikit-learn.
from .... import scores as _scores  # the module: run_scores has a parameter named scores
from ...._checks import derive_seed
from ...._io import npz_checksum, save_npz
from ....datasets import load_prepared
from ....metrics import task_loss
from ....scores import get_score
from ....splits import load_split
from ._classifiers import load_classifier_file

__all__ = ["SCORE_ERROR", "SCORE_FIELDS", "learn_score", "run_scores", "score_key"]

log = logging.getLogger(__name__)


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
    rejectopt.exceptions.ScoreError
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
        random_state=derive_seed(seed, dataset, classifier, score, split),
    )
    trn2, val2, tst = parts["trn2"], parts["val2"], parts["tst"]
    start = time.perf_counter()
    best, val_aurc = _scores.select_C(
        learner,
        X[trn2],
        y_pred[trn2],
        target[trn2],
        X[val2],
        y_pred[val2],
        loss[val2],
        C_grid=tuple(C_grid),
    )
    log.info(
        "%s %s/%s split %d: C=%g chosen on Val2 (AuRC %s) in %.1f s",
        dataset,
        classifier,
        score,
        split,
        best.C,
        {c: round(a, 4) for c, a in val_aurc.items()},
        time.perf_counter() - start,
    )
    uncertainty = _scores._registry.call_score(
        best, "predict", X[tst], y_pred[tst], n_rows=tst.size
    )
    constant = _scores._registry.constant_score_message(
        uncertainty, best, f"Tst of {dataset} split {split} ({classifier})"
    )
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
    A score whose own code fails (:class:`rejectopt.exceptions.ScoreError`) fails alone: the others
    are written, its message is logged and recorded as ``score_key(score, split, SCORE_ERROR)``,
    and :func:`tst_outcomes` raises it, so no table silently lacks it. Any other error (data,
    split files) fails the job.
    """
    X, y = load_prepared(data_path)
    data_id = npz_checksum(data_path)
    arrays: dict[str, Any] = {}
    chosen: dict[tuple, dict[str, Any]] = {}
    provenance = {"data_sha256": data_id, "classifier": classifier}
    for split, clf_path in sorted(classifier_files.items()):
        parts = load_split(splits_path, split, data_sha256=data_id)
        with load_classifier_file(clf_path, data_id, split) as clf:
            provenance[f"classifier_sha256/split_{int(split)}"] = clf.sha256
            y_pred = clf["y_pred"]
            proba = clf["proba"] if "proba" in clf.files else None
        for score in scores:
            try:
                result = learn_score(
                    X,
                    y,
                    parts,
                    y_pred,
                    proba,
                    task,
                    score,
                    C_grid,
                    seed,
                    split,
                    chunk_size=chunk_size,
                    dataset=dataset,
                    classifier=classifier,
                )
            except _scores.ScoreError as err:  # this score's own defect: the other scores go on
                message = f"{dataset} {classifier} split {split}: {err}"
                log.error("%s", message)
                arrays[score_key(score, split, SCORE_ERROR)] = np.array(message)
                chosen[(score, split)] = {"error": message}
                continue
            arrays.update({score_key(score, split, f): result[f] for f in SCORE_FIELDS})
            chosen[(score, split)] = {
                "C": float(result["C"]),
                "val_aurc": dict(zip(result["C_grid"].tolist(), result["val_aurc"].tolist())),
            }
    save_npz(out_path, provenance=provenance, **arrays)
    return chosen
