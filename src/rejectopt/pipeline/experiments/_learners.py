"""Training a classifier, then learning a score on it: the step the experiments share.

The paper's protocol (Section 5.2): the classifier on Trn1 with its C chosen by the Val1 error,
the score on Trn2 with its C chosen by the Val2 AuRC. The pipeline's staged rules run it once
per (dataset, classifier) and keep the files (:mod:`rejectopt.pipeline.experiments.paper`); an experiment
whose protocol differs (classes held out of Trn1, a Val2 selection function) runs it here.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

# The learners load on first use (the packages' lazy attributes), so that a job that only reads
# the registries, a table or a figure job, does not import scikit-learn.
from ... import classifiers, scores
from ...classifiers import get_classifier
from ...metrics import task_loss
from ...scores import get_score

__all__ = ["ClassifierThenScore", "fit_classifier_then_score"]


@dataclass
class ClassifierThenScore:
    """A classifier trained on Trn1 and a score learned on its Trn2 losses.

    ``y_pred``, ``baseline``, ``proba`` and ``loss`` have one entry per example of the dataset;
    only the ``rows`` passed to :func:`fit_classifier_then_score` are filled (the others are 0).
    ``times`` holds ``(wall_s, cpu_s)`` of the two fits, under ``"classifier"`` and ``"score"``.

    Parameters
    ----------
    model : object
        The fitted classifier.
    C : float
        Its C, chosen by the Val1 error.
    y_pred : numpy.ndarray of int64
        Its predictions.
    baseline : numpy.ndarray
        Its own uncertainty (the paper's baseline score).
    proba : numpy.ndarray or None
        Its posteriors, ``(n, n_classes)``, where it has them.
    loss : numpy.ndarray
        ``100 [y != y_pred]``; NaN for the ignored examples.
    score : object
        The learned score, fitted with its best C.
    C_score : float
        That C, chosen by the Val2 AuRC.
    times : dict
        ``(wall_s, cpu_s)`` of each fit.
    """

    model: Any
    C: float
    y_pred: np.ndarray
    baseline: np.ndarray
    proba: np.ndarray | None
    loss: np.ndarray
    score: Any
    C_score: float
    times: dict


def fit_classifier_then_score(
    kind: str,
    X,
    y,
    parts: dict,
    rows,
    *,
    n_classes: int,
    C_classifier: Sequence[float],
    C_score: Sequence[float],
    classifier_seed: int,
    score_seed: int,
    score: str = "sele",
    chunk_size: int = 500,
    threads: int = 1,
    ignore=None,
) -> ClassifierThenScore:
    """Train ``kind`` on Trn1 (C by Val1 error), predict ``rows``, learn ``score`` on Trn2 (C by Val2 AuRC).

    Parameters
    ----------
    kind : str
        A registered classification classifier.
    X : numpy.ndarray of shape (n, d)
        The features of every example.
    y : numpy.ndarray of shape (n,)
        The classes 0..n_classes-1.
    parts : dict
        Row indices ``trn1``, ``val1``, ``trn2``, ``val2``.
    rows : array of int
        The examples to predict (they must include Trn2 and Val2), in the order given.
    n_classes : int
        The number of classes.
    C_classifier, C_score : sequence of float
        The C grids of the classifier and of the score (the score's first C builds it).
    classifier_seed, score_seed : int
        Their random states.
    score : str, default "sele"
        A registered learned score.
    chunk_size : int, default 500
        The score's training chunk size.
    threads : int, default 1
        The classifier's ``n_jobs``.
    ignore : array of bool or None
        Examples whose loss is undefined (an OOD example has no ID label): NaN in ``loss``,
        never used by the score.

    Returns
    -------
    ClassifierThenScore
        The two fitted models, their outputs on ``rows`` and the fits' times.

    Raises
    ------
    ValueError
        ``kind`` is not a classification classifier.
    """
    info = get_classifier(kind)
    if info.task != "classification":
        raise ValueError(
            f"{kind!r} is an {info.task} classifier; this step needs a classification one"
        )
    trn1, val1, trn2, val2 = (parts[p] for p in ("trn1", "val1", "trn2", "val2"))
    wall, cpu = time.perf_counter(), time.process_time()
    model, C, _ = classifiers._training.train_classifier(
        kind,
        X[trn1],
        y[trn1],
        X[val1],
        y[val1],
        C_grid=tuple(C_classifier) if info.uses_C else None,
        n_classes=n_classes,
        random_state=classifier_seed,
        n_jobs=threads,
    )
    times = {"classifier": (time.perf_counter() - wall, time.process_time() - cpu)}
    out = classifiers._training.classifier_outputs(kind, model, X[rows], n_classes=n_classes)
    y_pred, baseline = np.zeros(y.size, dtype=np.int64), np.zeros(y.size)
    y_pred[rows], baseline[rows] = out["y_pred"], out["baseline"]
    proba = None
    if out.get("proba") is not None:
        proba = np.zeros((y.size, n_classes))
        proba[rows] = out["proba"]
    loss = task_loss("classification", y, y_pred).astype(float)
    if ignore is not None:
        loss[np.asarray(ignore, dtype=bool)] = np.nan
    learner_info = get_score(score)
    learner = learner_info.make(
        C_score[0], n_classes=n_classes, chunk_size=chunk_size, random_state=score_seed
    )
    target = learner_info.target(np.nan_to_num(loss), y, proba)
    wall, cpu = time.perf_counter(), time.process_time()
    best, _ = scores.select_C(
        learner,
        X[trn2],
        y_pred[trn2],
        target[trn2],
        X[val2],
        y_pred[val2],
        loss[val2],
        C_grid=tuple(C_score),
    )
    times["score"] = (time.perf_counter() - wall, time.process_time() - cpu)
    return ClassifierThenScore(
        model, float(C), y_pred, baseline, proba, loss, best, float(best.C), times
    )
