"""Internal: the pipeline's landmark experiment; not part of the public API (see
:mod:`rejectopt.pipeline.experiments` for the experiment contract).

Facial landmarks with a reject option on 300-W (Section 5.2.3, Fig. 4-5 of [1]).

``h(x)`` is DLIB's 68-point shape predictor (regression-tree ensemble [3]) in the box of DLIB's
HOG face detector; the loss is ``l(y, y') = 100 / iod(y) * sum_i ||l_i - l'_i||``
(:func:`rejectopt.landmarks.landmark_loss`); the baseline uncertainty is the negated
face-detector score; the learned ones (:data:`LEARNED_SCORES`: SELE, REG) are linear on
``psi(x)`` in R^2448, 36 HOG values around each predicted landmark
(:func:`rejectopt.landmarks.face_features`). Faces: ``list_faces`` of :mod:`rejectopt.datasets`
(offline copy or official archive [2]).

One split (:func:`run_landmark_split`): shape predictor trained on Trn1, options chosen on Val1
(each option set its own job, :func:`train_candidate_predictor`); SELE and REG learned on Trn2,
C chosen on Val2; Tst losses, uncertainties and a learning curve (Fig. 4b).

Contract (:mod:`rejectopt.pipeline.experiments`): :data:`NAME`, :func:`settings`, :func:`run_split`,
:func:`aggregate`. The jobs call :func:`face_splits_file`, :func:`train_predictor_file`,
:func:`run_split_files` and :func:`summary_file`; rendering (Fig. 4a, 4b, 5) is
:mod:`rejectopt.pipeline.report.landmarks`'s.

References
----------
.. [1] V. Franc, D. Prusa, V. Voracek. Optimal Strategies for Reject Option
   Classifiers. JMLR 24(11):1-49, 2023.
.. [2] C. Sagonas, E. Antonakos, G. Tzimiropoulos, S. Zafeiriou, M. Pantic.
   300 faces in-the-wild challenge: database and results. Image and Vision
   Computing 47:3-18, 2016.
.. [3] V. Kazemi, J. Sullivan. One millisecond face alignment with an ensemble
   of regression trees. CVPR 2014.
"""

from __future__ import annotations

import copy
import functools
import json
import logging
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..._checks import check_ratios, derive_seed
from ..._io import load_npz, save_csv, save_npz, write_text
from ...datasets._faces300w import ARCHIVE_SUBSETS, ARCHIVE_TOP_FOLDER, MIRROR_SUBSETS, list_faces
from ...landmarks import face_features, landmark_loss, per_landmark
from ...landmarks._faces import load_images, load_truths
from ...landmarks._parallel import map_in_processes
from ...landmarks._predictor import (
    load_predictor,
    predict_landmarks,
    pretrained_predictor_path,
    train_shape_predictor,
)
from ...metrics import aurc
from ...scores import make_score, score_names, select_C
from ...scores._baselines import face_score as face_score_uncertainty
from ...scores._selection import SCORE_C_GRID
from ...splits import load_split, make_splits, save_splits
from ..tables import landmarks_spec, load_csv, metric_table
from ._contract import SplitInputs, SplitResult
from .paper import BASE_SUMMARY_COLUMNS

# The score registry is read here, on import: it imports no scikit-learn (the learners load on first
# use), so the jobs that only detect faces, train shape predictors or make splits still do without it.

__all__ = [
    "NAME",
    "DATASET",
    "DEFAULTS",
    "DEFAULT_RATIOS",
    "DEFAULT_OPTIONS_GRID",
    "DEFAULT_LEARNING_CURVE_SIZES",
    "LEARNED_SCORES",
    "METHODS",
    "SCORE_JOBS",
    "STAGED_DETECTIONS",
    "SUMMARY_COLUMNS",
    "TRAINER_THREADS",
    "LandmarkSplitResult",
    "settings",
    "select_faces",
    "split_seed",
    "load_detections",
    "load_split_inputs",
    "choose_predictor_options",
    "train_candidate_predictor",
    "run_landmark_split",
    "run_split",
    "face_splits_file",
    "train_predictor_file",
    "run_split_files",
    "save_landmark_result",
    "load_landmark_result",
    "landmark_summary",
    "learning_curve_table",
    "aggregate",
    "summary_file",
]

logger = logging.getLogger(__name__)

#: The experiment's name in the experiment contract (the 300-W landmark experiment).
NAME = "landmarks"

#: The dataset's name in the results (``results/datasets/300w/summary.csv``) and in the seeds.
DATASET = "300w"

#: Trn1 / Val1 / Trn2 / Val2 / Tst for the 1,537 offline faces (538 / 77 / 461 / 154 / 307, stratified by subset).
#: See :func:`run_landmark_split` for the reasons.
DEFAULT_RATIOS = (0.35, 0.05, 0.30, 0.10, 0.20)

#: Shape-predictor options tried on Val1 (dlib's defaults except nu / oversampling, kept tiny:
#: one training takes ~20 s (oversampling 5) to ~40 s (10) for ~540 faces on 2 cores).
DEFAULT_OPTIONS_GRID = (
    {
        "cascade_depth": 10,
        "tree_depth": 4,
        "nu": 0.1,
        "num_trees_per_cascade_level": 500,
        "oversampling_amount": 5,
    },
    {
        "cascade_depth": 10,
        "tree_depth": 4,
        "nu": 0.1,
        "num_trees_per_cascade_level": 500,
        "oversampling_amount": 10,
    },
)

#: Sizes m of the Trn2 prefixes of the learning curve (Fig. 4b of [1]); sizes above the size of Trn2 are dropped
#: and the full Trn2 is always added.
DEFAULT_LEARNING_CURVE_SIZES = (50, 100, 200, 300)

#: The config block ``landmarks:``, its keys and defaults; :func:`settings` fills the missing ones.
DEFAULTS = {
    "enabled": True,
    "split_ratios": list(DEFAULT_RATIOS),
    "predictor_options_grid": [dict(options) for options in DEFAULT_OPTIONS_GRID],
    "learning_curve_sizes": list(DEFAULT_LEARNING_CURVE_SIZES),
    "with_coordinates": False,
    "pretrained": False,
    "max_faces": None,
}

#: dlib's trainer threads. Fixed, not the job's cores: the model depends on dlib's thread count (it
#: sums the residuals per thread block). 1, with the grid's jobs side by side: on 2 cores one 2-thread
#: training took 40 s (57 CPU-s), one 1-thread 44 s (45 CPU-s), two 1-thread side by side 42 s and 46 s.
TRAINER_THREADS = 1

#: SELE's ``n_jobs`` (and the BLAS thread limit of the job), fixed for the same reason: SELE's sums
#: may depend on it. Parallelism comes from the jobs and their worker processes instead (results
#: independent of ``--cores``).
SCORE_JOBS = 2

#: The role of the staged detections (``rejectopt.landmarks._detect.load_or_detect_faces``) in
#: :attr:`SplitInputs.staged <rejectopt.pipeline.experiments.SplitInputs>`; the trained option grid, where
#: given, is ``predictor/<k>`` (the model) and ``val1_error/<k>`` (:func:`train_predictor_file`'s JSON).
STAGED_DETECTIONS = "detections"

#: The scores learned on the HOG features of each face: the registered scores that learn from the
#: loss (Section 5.2.3 compares SELE and REG with the face detector's score, the baseline).
LEARNED_SCORES = tuple(score_names(learns_from="loss", general=True))
#: The uncertainties reported: the baseline, then :data:`LEARNED_SCORES`.
METHODS = ("face_score", *LEARNED_SCORES)
_RESULT_ARRAYS = ("tst_index", "loss", "pred", *(f"uncertainty_{m}" for m in METHODS))
_RESULT_JSON = ("aurc", "C", "val_aurc", "predictor_options", "val1_error", "mean_error")

#: Columns of the experiment's rows (``results/datasets/300w/summary.csv``): those of the paper's
#: summaries (:data:`rejectopt.pipeline.experiments.paper.BASE_SUMMARY_COLUMNS`), without its extra metrics.
SUMMARY_COLUMNS = list(BASE_SUMMARY_COLUMNS)


# --------------------------------------------------------------------------------------------
# Settings, the faces, a split's inputs
# --------------------------------------------------------------------------------------------
def settings(config: dict) -> dict:
    """The experiment's settings from the whole pipeline config.

    Parameters
    ----------
    config : dict
        The whole pipeline config; reads ``landmarks``, ``C_score``, ``seed``, ``faces_mirror``
        and ``raw_dir``.

    Returns
    -------
    dict
        ``config["landmarks"]`` completed by :data:`DEFAULTS`; ``C_grid`` (``C_score``, default
        ``(0, 1, 10, 100, 1000)``, Section 5.1); ``seed``; ``archive_dir``; ``faces``, the keywords of
        :func:`select_faces` (``faces_mirror`` with ``MIRROR_SUBSETS`` where set, else the archive
        under ``raw_dir`` with ``ARCHIVE_SUBSETS``, both of ``rejectopt.datasets._faces300w``);
        ``trainer_threads`` and ``score_jobs`` (:data:`TRAINER_THREADS`, :data:`SCORE_JOBS`).

    Raises
    ------
    ValueError
        On an unknown key of the block or a bad value (the key is named).
    """
    block = dict(config.get("landmarks") or {})
    unknown = sorted(set(block) - set(DEFAULTS))
    if unknown:
        raise ValueError(f"config landmarks: unknown keys {unknown}; allowed: {sorted(DEFAULTS)}")
    out = {**copy.deepcopy(DEFAULTS), **block}
    for key in ("enabled", "with_coordinates", "pretrained"):
        if not isinstance(out[key], bool):
            raise ValueError(f"config landmarks.{key} must be true or false, got {out[key]!r}")
    try:
        check_ratios(out["split_ratios"])
    except ValueError as error:
        raise ValueError(f"config landmarks.split_ratios: {error}") from None
    grid = out["predictor_options_grid"]
    if not grid or not all(isinstance(options, dict) for options in grid):
        raise ValueError(
            f"config landmarks.predictor_options_grid must be a non-empty list of option "
            f"mappings, got {grid!r}"
        )
    sizes = out["learning_curve_sizes"]
    if any(isinstance(m, bool) or not isinstance(m, int) or m < 2 for m in sizes):
        raise ValueError(
            f"config landmarks.learning_curve_sizes must be integers >= 2, got {sizes!r}"
        )
    faces = out["max_faces"]
    if faces is not None and (isinstance(faces, bool) or not isinstance(faces, int) or faces < 1):
        raise ValueError(
            f"config landmarks.max_faces must be a positive integer or null, got {faces!r}"
        )
    out["C_grid"] = config.get("C_score", list(SCORE_C_GRID))
    out["seed"] = int(config.get("seed", 0))
    mirror = config.get("faces_mirror")
    out["archive_dir"] = f"{config.get('raw_dir', 'results/raw')}/{DATASET}/extracted"
    out["faces"] = {
        "folder": mirror if mirror is not None else f"{out['archive_dir']}/{ARCHIVE_TOP_FOLDER}",
        "subsets": list(MIRROR_SUBSETS if mirror is not None else ARCHIVE_SUBSETS),
        "max_faces": out["max_faces"],
    }
    out["trainer_threads"], out["score_jobs"] = TRAINER_THREADS, SCORE_JOBS
    return out


def select_faces(folder, subsets=MIRROR_SUBSETS, max_faces=None) -> pd.DataFrame:
    """``rejectopt.datasets._faces300w.list_faces``, optionally thinned (smoke tests).

    Parameters
    ----------
    folder : path-like
        The faces' root folder.
    subsets : sequence of str, default=MIRROR_SUBSETS
        Its sub-folders to read.
    max_faces : int, optional
        Keep at most this many faces, evenly spaced in the sorted list so every subset keeps its
        share (deterministic); None keeps all.

    Returns
    -------
    pandas.DataFrame
        Columns ``name, subset, image, pts``, index 0..n-1.
    """
    faces = list_faces(folder, subsets)
    if max_faces is not None and int(max_faces) < len(faces):
        keep = np.unique(np.linspace(0, len(faces) - 1, int(max_faces)).round().astype(int))
        faces = faces.iloc[keep].reset_index(drop=True)
    return faces


def split_seed(master_seed: int, split: int) -> int:
    """The seed of split ``split`` (dlib's trainer, SELE's chunks, the learning-curve permutation).

    Parameters
    ----------
    master_seed : int
        The run's ``seed``.
    split : int
        The split's number.

    Returns
    -------
    int
        :func:`rejectopt._checks.derive_seed` of the seed, :data:`DATASET`, ``"landmarks"`` and the split.
    """
    return derive_seed(master_seed, DATASET, "landmarks", split)


def load_detections(path, faces_df: pd.DataFrame) -> dict:
    """The detections at ``path`` (``rejectopt.landmarks._detect.load_or_detect_faces``), checked against ``faces_df``.

    Parameters
    ----------
    path : path-like
        The detections' ``.npz`` (read by :func:`rejectopt._io.load_npz`).
    faces_df : pandas.DataFrame
        The face list the detections must follow, name by name.

    Returns
    -------
    dict
        The file's arrays by name.

    Raises
    ------
    ValueError
        The detections' names are not the face list's (the file is named).
    """
    with load_npz(path) as data:
        detections = {key: data[key] for key in data.files}
    if detections["name"].tolist() != faces_df["name"].tolist():
        raise ValueError(f"{path} does not match the face list; rerun detect_faces")
    return detections


def load_split_inputs(
    faces: dict, detections_path, splits_path, split: int, master_seed: int
) -> tuple:
    """The inputs of split ``split`` (rules train_predictor and train_landmarks).

    Parameters
    ----------
    faces : dict
        The keywords of :func:`select_faces` (``settings(config)["faces"]``).
    detections_path : path-like
        The staged detections (:func:`load_detections`).
    splits_path : path-like
        The splits file (:func:`face_splits_file`).
    split : int
        The split's number.
    master_seed : int
        The run's ``seed``.

    Returns
    -------
    tuple
        ``(faces_df, detections, split_indices, seed)``: ``select_faces(**faces)``, the detections
        checked against it, the split's row indices, its seed (:func:`split_seed`).
    """
    faces_df = select_faces(**faces)
    detections = load_detections(detections_path, faces_df)
    return faces_df, detections, load_split(splits_path, split), split_seed(master_seed, split)


# --------------------------------------------------------------------------------------------
# One split: the shape predictor on Trn1 / Val1, the scores on Trn2 / Val2, Tst
# --------------------------------------------------------------------------------------------
def _validated_predictor(
    images_trn,
    boxes_trn,
    truths_trn,
    images_val,
    boxes_val,
    truths_val,
    options: dict,
    threads: int,
    seed: int,
    path,
) -> tuple[Path, float]:
    """Train one shape predictor on Trn1, save it at ``path``; return it and its mean per-landmark Val1 loss."""
    path, predictor = train_shape_predictor(
        images_trn, boxes_trn, truths_trn, options, threads, seed, path=path, return_predictor=True
    )
    pred = predict_landmarks(predictor, images_val, boxes_val)
    return path, float(per_landmark(landmark_loss(truths_val, pred)).mean())


def _train_grid_cell(
    images_trn,
    boxes_trn,
    truths_trn,
    images_val,
    boxes_val,
    truths_val,
    threads,
    seed,
    work_dir,
    cell,
):
    """:func:`_validated_predictor` of the grid cell ``cell = (index, options)``, saved in ``work_dir``."""
    k, options = cell
    return _validated_predictor(
        images_trn,
        boxes_trn,
        truths_trn,
        images_val,
        boxes_val,
        truths_val,
        options,
        threads,
        seed,
        Path(work_dir) / f"shape_predictor_{k}.dat",
    )


def _best_predictor(options_grid, candidates: dict) -> tuple[Path, dict, dict]:
    """Log the Val1 error of each option set and pick the smallest (ties: the earlier options).

    ``candidates`` is ``{grid index: (model path, Val1 error)}``, one per entry of
    ``options_grid``. Returns ``(model_path, best_options, {grid index: Val1 error})``.
    """
    if len(candidates) != len(options_grid):
        raise ValueError(
            f"{len(candidates)} candidate predictors for {len(options_grid)} option sets"
        )
    errors = {k: float(error) for k, (_, error) in candidates.items()}
    for k, options in enumerate(options_grid):
        logger.info("options %d %s: Val1 mean per-landmark loss %.3f", k, options, errors[k])
    best = min(errors, key=lambda k: (errors[k], k))
    return Path(candidates[best][0]), dict(options_grid[best]), errors


def choose_predictor_options(
    images_trn,
    boxes_trn,
    truths_trn,
    images_val,
    boxes_val,
    truths_val,
    options_grid,
    threads: int,
    seed: int,
    work_dir,
    workers: int = 1,
) -> tuple[Path, dict, dict]:
    """Train one shape predictor per option set on Trn1; keep the smallest mean per-landmark Val1
    loss (ties: the earlier options).

    Parameters
    ----------
    images_trn, boxes_trn, truths_trn : sequence of ndarray, array-like of shape (n, 4), (n, 68, 2)
        The Trn1 faces: images, detector boxes, ground-truth landmarks.
    images_val, boxes_val, truths_val : sequence of ndarray, array-like of shape (m, 4), (m, 68, 2)
        The Val1 faces.
    options_grid : sequence of dict
        The option sets tried (``rejectopt.landmarks._predictor.train_shape_predictor``'s ``options``).
    threads : int
        dlib's ``num_threads`` (the model depends on it: residuals are summed per thread block).
    seed : int
        dlib's ``random_seed``.
    work_dir : path-like
        Where the models are saved (``shape_predictor_<k>.dat``).
    workers : int, default=1
        Option sets trained at once, in separate processes (the models do not depend on it).

    Returns
    -------
    tuple
        ``(model_path, best_options, {grid index: Val1 error})``, the error the mean per-landmark loss.
    """
    train = functools.partial(
        _train_grid_cell,
        images_trn,
        boxes_trn,
        truths_trn,
        images_val,
        boxes_val,
        truths_val,
        threads,
        seed,
        Path(work_dir),
    )
    trained = map_in_processes(train, list(enumerate(options_grid)), workers)
    return _best_predictor(options_grid, dict(enumerate(trained)))


def _predictor_data(
    faces_df: pd.DataFrame, detections: dict, split_indices: dict
) -> tuple[Any, Any, Any, Any, Any, Any]:
    """Images, detector boxes and ground truths of Trn1 and of Val1."""
    boxes = np.asarray(detections["box"], dtype=np.float64)
    data = []
    for part in ("trn1", "val1"):
        rows = np.asarray(split_indices[part], dtype=np.int64)
        subset = faces_df.iloc[rows]
        data += [load_images(subset["image"]), boxes[rows], load_truths(subset)]
    trn_images, trn_boxes, trn_truths, val_images, val_boxes, val_truths = data
    return trn_images, trn_boxes, trn_truths, val_images, val_boxes, val_truths


def train_candidate_predictor(
    faces_df: pd.DataFrame,
    detections: dict,
    split_indices: dict,
    options: dict,
    threads: int = 1,
    seed: int = 0,
    path=None,
) -> tuple[Path, float]:
    """One cell of the option grid of :func:`run_landmark_split`: train on Trn1, measure on Val1.

    Exactly :func:`choose_predictor_options`'s model for ``options``, so the pipeline can train
    the cells as separate jobs and pass them as ``candidates``.

    Parameters
    ----------
    faces_df : pandas.DataFrame
        The face list (:func:`select_faces`).
    detections : dict
        Its detections (``box``, :func:`load_detections`).
    split_indices : dict
        Row indices of ``faces_df`` per part; ``trn1`` and ``val1`` are read.
    options : dict
        One option set of the grid (``rejectopt.landmarks._predictor.train_shape_predictor``).
    threads : int, default=1
        dlib's ``num_threads`` (the model depends on it).
    seed : int, default=0
        dlib's ``random_seed``.
    path : path-like, optional
        Where the model is saved; default a new temporary file.

    Returns
    -------
    (pathlib.Path, float)
        The saved model and its mean per-landmark loss on Val1.
    """
    images_trn, boxes_trn, truths_trn, images_val, boxes_val, truths_val = _predictor_data(
        faces_df, detections, split_indices
    )
    path, error = _validated_predictor(
        images_trn,
        boxes_trn,
        truths_trn,
        images_val,
        boxes_val,
        truths_val,
        dict(options),
        threads,
        seed,
        path,
    )
    logger.info("options %s: Val1 mean per-landmark loss %.3f", dict(options), error)
    return path, error


def _learn_scores(X_trn, loss_trn, X_val, loss_val, C_grid, threads, seed):
    """The scores of :data:`LEARNED_SCORES` on (Trn2, Val2) with C by Val2 AuRC.

    Returns ``{name: (estimator, val_aurc)}``; learners come from the score
    registry (:func:`rejectopt.scores.make_score`).
    """
    return {
        name: select_C(
            make_score(name, C_grid[0], random_state=seed, n_jobs=threads),
            X_trn,
            None,
            loss_trn,
            X_val,
            None,
            loss_val,
            C_grid=C_grid,
        )
        for name in LEARNED_SCORES
    }


def _fit_scores(X_trn, loss_trn, X_val, loss_val, X_tst, C_grid, threads, seed, head):
    """Learned scores on the Trn2 faces ``head`` (None: all): ``{name: (C, {C: Val2 AuRC}, Tst uncertainty)}``."""
    if head is not None:
        X_trn, loss_trn = X_trn[head], loss_trn[head]
    fitted = _learn_scores(X_trn, loss_trn, X_val, loss_val, C_grid, threads, seed)
    return {
        name: (float(estimator.C), val, estimator.predict(X_tst, None))
        for name, (estimator, val) in fitted.items()
    }


def _learning_curve_sizes(sizes, n_trn2: int) -> list[int]:
    return sorted({int(m) for m in sizes if 0 < int(m) < n_trn2} | {n_trn2})


def run_landmark_split(
    faces_df: pd.DataFrame,
    detections: dict,
    split_indices: dict,
    options_grid=DEFAULT_OPTIONS_GRID,
    C_grid=None,
    threads: int = 1,
    seed: int = 0,
    learning_curve_sizes=DEFAULT_LEARNING_CURVE_SIZES,
    with_coordinates: bool = False,
    pretrained: bool = False,
    work_dir=None,
    workers: int = 1,
    candidates=None,
) -> dict:
    """The landmark experiment of Section 5.2.3 / Fig. 4 of [1] on one split.

    1. Train DLIB's shape predictor per option set on Trn1, keep the smallest mean Val1 loss
       (``pretrained=True``: DLIB's 300-W model, whose test errors are optimistic as it was
       trained on these faces).
    2. Predict on Trn2, Val2, Tst in the detector boxes; losses and features psi(x).
    3. SELE and REG (structured mode: one weight vector + bias) on Trn2, C by Val2 AuRC;
       baseline: the negated face-detector score.
    4. Learning curve (Fig. 4b): step 3 on the first m faces of a seeded permutation of Trn2
       (Trn2 is sorted by subset, so a plain prefix would be one subset).

    Split proportions: the paper splits 5,807 faces 3,484 / 1,161 / 1,162 (30/10/30/10/20 %).
    The offline copy has 1,537, so :data:`DEFAULT_RATIOS` (35/5/30/10/20 %) moves Val1's share
    to Trn1: Val1 only compares a tiny grid by a mean error (77 faces are plenty), while the
    predictor's error, hence the loss distribution to rank, depends on the training size; Trn2
    keeps 461 faces for 2,449 weights (the regulariser does the rest), Val2 / Tst enough for
    stable AuRCs (dominated by the few large losses).

    Parameters
    ----------
    faces_df : pandas.DataFrame
        From :func:`select_faces`.
    detections : dict
        From ``rejectopt.landmarks._detect.load_or_detect_faces`` (``box``, ``score``).
    split_indices : dict
        Row indices of ``faces_df`` per part ``trn1, val1, trn2, val2, tst``.
    options_grid : sequence of dict, default=DEFAULT_OPTIONS_GRID
        The shape-predictor option sets tried on Val1.
    C_grid : sequence of float, default=None
        None: the grid of Section 5.1, ``(0, 1, 10, 100, 1000)``.
    threads : int, default=1
        Threads of dlib's trainer and SELE's ``n_jobs``; fixed by the pipeline, not the job's
        cores, because the model depends on it (see :data:`TRAINER_THREADS`) and SELE's sums may.
    seed : int, default=0
        Seed of dlib's trainer, SELE's chunks and the learning-curve permutation.
    learning_curve_sizes : sequence of int, default=DEFAULT_LEARNING_CURVE_SIZES
        Trn2 prefix sizes m of the learning curve (the full Trn2 is always a point).
    with_coordinates : bool, default=False
        Passed to :func:`~rejectopt.landmarks.face_features`.
    pretrained : bool, default=False
        Use ``rejectopt.landmarks._predictor.pretrained_predictor_path`` (demo mode).
    work_dir : path-like, optional
        Where the trained predictors are saved (default: a temporary folder, removed at the end).
    workers : int, default=1
        Processes for the grid's trainings and the learning-curve fits; results do not depend on it.
    candidates : sequence of (path, float), optional
        The grid already trained, one ``(model, Val1 error)`` per option set
        (:func:`train_candidate_predictor`); step 1 then only picks. Ignored if ``pretrained``.

    Returns
    -------
    dict
        ``tst_index``, ``loss`` (Tst losses, sum scale; :func:`~rejectopt.landmarks.per_landmark`
        for Fig. 4), ``pred`` (n_tst, 68, 2), ``uncertainty_<method>`` (n_tst,), ``aurc``
        {method: Tst AuRC, per-landmark}, ``risk_full`` (per-landmark), ``C`` {sele, reg},
        ``val_aurc`` {method: {C: Val2 AuRC}} (sum scale), ``predictor_options``, ``val1_error``
        {grid index: mean per-landmark loss}, ``learning_curve`` (DataFrame m, method, C,
        test_aurc), ``mean_error`` {part: mean per-landmark loss}.
    """
    C_grid = SCORE_C_GRID if C_grid is None else C_grid
    parts = {
        part: np.asarray(split_indices[part], dtype=np.int64)
        for part in ("trn1", "val1", "trn2", "val2", "tst")
    }
    boxes = np.asarray(detections["box"], dtype=np.float64)
    face_score = np.asarray(detections["score"], dtype=np.float64)
    rng = np.random.default_rng(seed)
    with tempfile.TemporaryDirectory(prefix="landmarks_") as scratch:
        work_dir = Path(work_dir) if work_dir is not None else Path(scratch)
        work_dir.mkdir(parents=True, exist_ok=True)
        val1_error: dict
        if pretrained:
            model, options, val1_error = pretrained_predictor_path(), {"pretrained": True}, {}
        elif candidates is not None:
            model, options, val1_error = _best_predictor(options_grid, dict(enumerate(candidates)))
        else:
            model, options, val1_error = choose_predictor_options(
                *_predictor_data(faces_df, detections, parts),
                options_grid,
                threads,
                seed,
                work_dir,
                workers=workers,
            )
        predictor = load_predictor(model)  # loaded once for the three parts
        data, preds = {}, {}
        for part in ("trn2", "val2", "tst"):
            rows = faces_df.iloc[parts[part]]
            images = load_images(rows["image"])
            pred = preds[part] = predict_landmarks(predictor, images, boxes[parts[part]])
            loss = landmark_loss(load_truths(rows), pred)
            data[part] = (face_features(images, pred, with_coordinates=with_coordinates), loss)
            logger.info(
                "%s: %d faces, mean per-landmark loss %.3f",
                part,
                len(rows),
                per_landmark(loss).mean(),
            )
        del predictor, images
    (X_trn, loss_trn), (X_val, loss_val), (X_tst, loss_tst) = (
        data["trn2"],
        data["val2"],
        data["tst"],
    )

    # The full-Trn2 scores and the learning curve (Fig. 4b): the same fit on the first m faces of a
    # seeded permutation of Trn2, C chosen on Val2 each time; the fits are independent (workers).
    order = rng.permutation(len(loss_trn))
    sizes = _learning_curve_sizes(learning_curve_sizes, len(loss_trn))
    heads = [None] + [order[:m] for m in sizes if m != len(loss_trn)]
    fit = functools.partial(
        _fit_scores, X_trn, loss_trn, X_val, loss_val, X_tst, C_grid, threads, seed
    )
    fits = list(map_in_processes(fit, heads, workers))
    learned, partial = fits[0], dict(zip([m for m in sizes if m != len(loss_trn)], fits[1:]))

    uncertainty = {"face_score": face_score_uncertainty(face_score[parts["tst"]])}
    for name, (_, _, u) in learned.items():
        uncertainty[name] = u
    test_aurc = {name: float(aurc(per_landmark(loss_tst), u)) for name, u in uncertainty.items()}
    logger.info("test AuRC (per landmark): %s", {k: round(v, 3) for k, v in test_aurc.items()})

    curve = []
    for m in sizes:
        fitted = learned if m == len(loss_trn) else partial[m]
        for name, (C, _, u) in fitted.items():
            curve.append(
                {
                    "m": m,
                    "method": name,
                    "C": C,
                    "test_aurc": float(aurc(per_landmark(loss_tst), u)),
                }
            )
        curve.append(
            {"m": m, "method": "face_score", "C": np.nan, "test_aurc": test_aurc["face_score"]}
        )
        logger.info(
            "learning curve m=%d: %s",
            m,
            {row["method"]: round(row["test_aurc"], 3) for row in curve[-3:]},
        )
    return {
        "tst_index": parts["tst"],
        "loss": loss_tst,
        "pred": preds["tst"],
        **{f"uncertainty_{name}": u for name, u in uncertainty.items()},
        "aurc": test_aurc,
        "risk_full": float(per_landmark(loss_tst).mean()),
        "C": {name: C for name, (C, _, _) in learned.items()},
        "val_aurc": {
            name: {float(C): float(v) for C, v in val.items()}
            for name, (_, val, _) in learned.items()
        },
        "predictor_options": options,
        "val1_error": val1_error,
        "mean_error": {part: float(per_landmark(loss).mean()) for part, (_, loss) in data.items()},
        "learning_curve": pd.DataFrame(curve, columns=["m", "method", "C", "test_aurc"]),
    }


@dataclass
class LandmarkSplitResult(SplitResult):
    """Output of :func:`run_split`: the contract's rows and the whole :func:`run_landmark_split` result.

    Parameters
    ----------
    rows : pandas.DataFrame
        :func:`landmark_summary` of the split.
    curves : dict of str to numpy.ndarray, optional
        Unused by this experiment (empty).
    result : dict, optional
        The :func:`run_landmark_split` result.
    """

    result: dict = field(default_factory=dict)


def _staged_candidates(inputs: SplitInputs, n_options: int) -> list | None:
    """The trained option grid of :attr:`SplitInputs.staged <rejectopt.pipeline.experiments.SplitInputs>`
    as ``[(model, Val1 error), ...]``, None where the rule gives none."""
    if "predictor/0" not in inputs.staged:
        return None
    candidates = []
    for k in range(n_options):
        with open(inputs.staged_file(f"val1_error/{k}")) as handle:
            candidates.append(
                (inputs.staged_file(f"predictor/{k}"), json.load(handle)["val1_error"])
            )
    return candidates


def run_split(inputs: SplitInputs, settings: dict, workers: int = 1) -> LandmarkSplitResult:
    """:func:`run_landmark_split` on one split, from the staged files of ``inputs``.

    Parameters
    ----------
    inputs : rejectopt.pipeline.experiments.SplitInputs
        ``staged``: the detections (:data:`STAGED_DETECTIONS`) and, where the grid was trained as
        separate jobs, ``predictor/<k>`` and ``val1_error/<k>`` (else it is trained here);
        ``parts``; ``seed``, the run's (:func:`split_seed` derives the split's).
    settings : dict
        :func:`settings` of the config (``faces`` as the rule gives them).
    workers : int, default=1
        Worker processes (results do not depend on it).

    Returns
    -------
    LandmarkSplitResult
        The split's rows and the whole result.
    """
    faces_df = select_faces(**settings["faces"])
    detections = load_detections(inputs.staged_file(STAGED_DETECTIONS), faces_df)
    grid = [dict(options) for options in settings["predictor_options_grid"]]
    candidates = None if settings["pretrained"] else _staged_candidates(inputs, len(grid))
    result = run_landmark_split(
        faces_df,
        detections,
        inputs.parts,
        options_grid=grid,
        C_grid=settings["C_grid"],
        threads=settings["score_jobs"],
        seed=split_seed(inputs.seed, inputs.split),
        learning_curve_sizes=settings["learning_curve_sizes"],
        with_coordinates=settings["with_coordinates"],
        pretrained=settings["pretrained"],
        workers=workers,
        candidates=candidates,
    )
    return LandmarkSplitResult(landmark_summary({inputs.split: result}), result=result)


# --------------------------------------------------------------------------------------------
# The pipeline's jobs: files in, files out
# --------------------------------------------------------------------------------------------
def _settings_of(faces: dict, seed: int, **block) -> dict:
    """:func:`settings` of a rule's params: the ``landmarks:`` keys of ``block`` and the faces as given."""
    C_grid = block.pop("C_grid", None)
    config = {"landmarks": {"max_faces": faces.get("max_faces"), **block}, "seed": seed}
    if C_grid is not None:
        config["C_score"] = C_grid
    chosen = settings(config)
    chosen["faces"] = dict(faces)
    return chosen


def face_splits_file(out_path, *, faces: dict, ratios, n_splits: int, seed: int) -> dict:
    """``n_splits`` Trn1 / Val1 / Trn2 / Val2 / Tst splits of the faces, stratified by subset and
    seeded (:func:`rejectopt.splits.make_splits`), written to ``out_path`` (rule make_face_splits).

    Parameters
    ----------
    out_path : path-like
        The splits file (``.npz``, :func:`rejectopt.splits.save_splits`).
    faces : dict
        The keywords of :func:`select_faces`.
    ratios : sequence of 5 float
        The parts' shares.
    n_splits : int
        Number of splits.
    seed : int
        The run's ``seed``.

    Returns
    -------
    dict
        ``{"<part>_<k>": row indices}``, as written.
    """
    faces_df = select_faces(**faces)
    subsets = faces_df["subset"].to_numpy()
    splits = make_splits(subsets, ratios=ratios, n_splits=n_splits, seed=seed, dataset=DATASET)
    save_splits(
        out_path, splits, y=subsets, ratios=ratios
    )  # checked: every face once, stratified by subset
    return splits


def train_predictor_file(
    detections_path,
    splits_path,
    split: int,
    option: int,
    model_out,
    error_out,
    *,
    faces: dict,
    options_grid,
    trainer_threads: int,
    seed: int,
) -> float:
    """One cell of the option grid on one split (rule train_predictor, :func:`train_candidate_predictor`).

    Parameters
    ----------
    detections_path, splits_path : path-like
        The staged detections and splits (:func:`load_split_inputs`).
    split : int
        The split's number.
    option : int
        The index of the option set in ``options_grid``.
    model_out, error_out : path-like
        The model (``.dat``) and its Val1 error (JSON: ``option``, ``options``, ``val1_error``) written.
    faces : dict
        The keywords of :func:`select_faces`.
    options_grid : sequence of dict
        The option grid.
    trainer_threads : int
        dlib's ``num_threads`` (:data:`TRAINER_THREADS`).
    seed : int
        The run's ``seed`` (:func:`split_seed` derives the split's).

    Returns
    -------
    float
        The mean per-landmark Val1 loss of the model.
    """
    faces_df, detections, split_indices, split_seed_ = load_split_inputs(
        faces, detections_path, splits_path, int(split), seed
    )
    options = dict(options_grid[int(option)])
    _, error = train_candidate_predictor(
        faces_df,
        detections,
        split_indices,
        options,
        threads=trainer_threads,
        seed=split_seed_,
        path=model_out,
    )
    write_text(
        json.dumps({"option": int(option), "options": options, "val1_error": error}, sort_keys=True)
        + "\n",
        error_out,
    )
    return error


def run_split_files(
    detections_path,
    splits_path,
    split: int,
    result_out,
    curve_out,
    *,
    faces: dict,
    seed: int,
    options_grid,
    C_grid,
    learning_curve_sizes,
    with_coordinates: bool,
    pretrained: bool,
    score_jobs: int,
    models: Sequence = (),
    errors: Sequence = (),
    workers: int = 1,
) -> LandmarkSplitResult:
    """:func:`run_split` on split ``split``, file in / file out (rule train_landmarks; keywords: its params).

    Parameters
    ----------
    detections_path, splits_path : path-like
        The staged detections and splits.
    split : int
        The split's number.
    result_out, curve_out : path-like
        The result (:func:`save_landmark_result`) and its learning curve (CSV) written.
    faces : dict
        The keywords of :func:`select_faces`.
    seed : int
        The run's ``seed``.
    options_grid : sequence of dict
        The option grid.
    C_grid : sequence of float
        The scores' C values, chosen on Val2.
    learning_curve_sizes : sequence of int
        The learning curve's Trn2 sizes.
    with_coordinates : bool
        Append the landmark coordinates to psi(x).
    pretrained : bool
        DLIB's pretrained model instead of the grid (demo mode).
    score_jobs : int
        SELE's ``n_jobs`` (:data:`SCORE_JOBS`).
    models, errors : sequence of path-like, default=()
        The grid's trained models and JSON files (:func:`train_predictor_file`); none in demo mode.
    workers : int, default=1
        Worker processes.

    Returns
    -------
    LandmarkSplitResult
        As :func:`run_split`.
    """
    chosen = _settings_of(
        faces,
        seed,
        predictor_options_grid=list(options_grid),
        C_grid=C_grid,
        learning_curve_sizes=list(learning_curve_sizes),
        with_coordinates=with_coordinates,
        pretrained=pretrained,
    )
    chosen["score_jobs"] = score_jobs
    staged = {STAGED_DETECTIONS: detections_path}
    for k, (model, error) in enumerate(zip(models, errors)):
        staged[f"predictor/{k}"], staged[f"val1_error/{k}"] = model, error
    inputs = SplitInputs(DATASET, int(split), NAME, int(seed), None, splits_path, staged)
    out = run_split(inputs, chosen, workers=workers)
    save_csv(out.result["learning_curve"], curve_out)
    save_landmark_result(result_out, out.result)
    return out


def save_landmark_result(path, result: dict) -> None:
    """Write a :func:`run_landmark_split` result to ``.npz`` atomically (dicts as JSON, no pickle).

    Parameters
    ----------
    path : path-like
        The ``.npz`` written (:func:`rejectopt._io.save_npz`).
    result : dict
        A :func:`run_landmark_split` result; its learning curve is not saved here.

    Returns
    -------
    None
    """
    arrays: dict[str, Any] = {key: np.asarray(result[key]) for key in _RESULT_ARRAYS}
    for key in _RESULT_JSON:
        arrays[key] = np.array(json.dumps(result[key], sort_keys=True))
    arrays["risk_full"] = np.array(float(result["risk_full"]))
    save_npz(path, **arrays)


def load_landmark_result(path) -> dict:
    """Inverse of :func:`save_landmark_result` (without the learning curve, saved as CSV beside it).

    Parameters
    ----------
    path : path-like
        A file of :func:`save_landmark_result` (checked by :func:`rejectopt._io.load_npz`).

    Returns
    -------
    dict
        The result's arrays, its JSON entries as dicts and ``risk_full`` as a float.
    """
    with load_npz(path) as data:
        result = {key: data[key] for key in _RESULT_ARRAYS}
        for key in _RESULT_JSON:
            result[key] = json.loads(str(data[key]))
        result["risk_full"] = float(data["risk_full"])
    return result


# --------------------------------------------------------------------------------------------
# Rows and tables
# --------------------------------------------------------------------------------------------
def landmark_summary(results: dict) -> pd.DataFrame:
    """Tidy rows for ``{split: result}``.

    ``aurc`` and ``risk_full`` are per landmark (loss / 68, Fig. 4 of [1]); ``C_classifier`` is
    the chosen ``oversampling_amount`` (NaN for the pretrained model); ``C_score`` the Val2 C
    (NaN for the face score).

    Parameters
    ----------
    results : dict
        ``{split: result}``, results of :func:`run_landmark_split` (or :func:`load_landmark_result`).

    Returns
    -------
    pandas.DataFrame
        One row per split and method of :data:`METHODS`, columns :data:`SUMMARY_COLUMNS`.
    """
    rows = []
    for split, result in sorted(results.items()):
        options = result["predictor_options"]
        oversampling = (
            np.nan
            if options.get("pretrained")
            else float(options.get("oversampling_amount", np.nan))
        )
        for method in METHODS:
            rows.append(
                {
                    "task": "landmarks",
                    "dataset": "300w",
                    "split": int(split),
                    "classifier": "dlib",
                    "score": method,
                    "C_classifier": oversampling,
                    "C_score": float(result["C"].get(method, np.nan)),
                    "aurc": float(result["aurc"][method]),
                    "risk_full": float(result["risk_full"]),
                    "n_test": int(len(result["loss"])),
                }
            )
    return pd.DataFrame(rows, columns=SUMMARY_COLUMNS)


def learning_curve_table(curves: dict) -> pd.DataFrame:
    """Mean, std and count over splits of test AuRC per (method, m) from ``{split: curve DataFrame}``.

    Parameters
    ----------
    curves : dict
        ``{split: learning curve}``, each a DataFrame with ``m, method, C, test_aurc`` (the
        ``learning_curve`` of :func:`run_landmark_split`).

    Returns
    -------
    pandas.DataFrame
        Columns ``method, m, mean, std, count``.
    """
    frame = pd.concat(
        [curve.assign(split=int(k)) for k, curve in curves.items()], ignore_index=True
    )
    return frame.groupby(["method", "m"])["test_aurc"].agg(["mean", "std", "count"]).reset_index()


def aggregate(rows: pd.DataFrame, settings: dict | None = None) -> dict[str, pd.DataFrame]:
    """Every split's rows to the experiment's table: mean and std over the splits of each method's
    Tst AuRC (per landmark) and of R@100 (:func:`rejectopt.pipeline.tables.metric_table`, ``landmarks_spec``).

    Parameters
    ----------
    rows : pandas.DataFrame
        Every split's rows (:func:`landmark_summary`).
    settings : dict, optional
        Unused: the rows hold every setting (the contract passes it).

    Returns
    -------
    dict of str to pandas.DataFrame
        ``{"landmarks": table}``.
    """
    return {"landmarks": metric_table(rows, landmarks_spec(LEARNED_SCORES))}


def summary_file(
    result_paths: Sequence, curve_paths: Sequence, splits: Sequence, summary_out
) -> tuple[dict, dict, pd.DataFrame]:
    """Read every split's result and learning curve; write their rows (:func:`landmark_summary`)
    (rule summarize_landmarks).

    Parameters
    ----------
    result_paths, curve_paths : sequence of path-like
        One result file and one learning-curve CSV per split.
    splits : sequence of int
        The splits' numbers, in the same order.
    summary_out : path-like
        The rows' CSV written.

    Returns
    -------
    tuple
        ``(results, curves, summary)``: ``{split: result}``, ``{split: curve}``, the rows.

    Raises
    ------
    rejectopt.exceptions.IntermediateFileError
        A split's CSV without its content record, or changed since it was written.
    """
    results = {k: load_landmark_result(path) for k, path in zip(splits, result_paths)}
    curves = {k: load_csv(path) for k, path in zip(splits, curve_paths)}
    summary = landmark_summary(results)
    save_csv(summary, summary_out)  # a dataset summary: collect_summary verifies it
    return results, curves, summary
