"""Settings, the faces and a split's inputs of the landmark experiment (the package's)."""

from __future__ import annotations

import copy

import numpy as np
import pandas as pd

from ...._checks import check_ratios, derive_seed
from ...._io import load_npz
from ....datasets._faces300w import ARCHIVE_SUBSETS, ARCHIVE_TOP_FOLDER, MIRROR_SUBSETS, list_faces
from ....scores import score_names
from ....scores._tuning import SCORE_C_GRID
from ....splits import load_split
from ..paper import BASE_SUMMARY_COLUMNS

# The score registry is read here, on import: it imports no scikit-learn (the learners load on first
# use), so the jobs that only detect faces, train shape predictors or make splits still do without it.


#: The experiment's name in the experiment contract (the 300-W landmark experiment).
NAME = "landmarks"

#: The dataset's name in the results (``results/datasets/300w/summary.csv``) and in the seeds.
DATASET = "300w"

#: Trn1 / Val1 / Trn2 / Val2 / Tst for the 1,537 offline faces (538 / 77 / 461 / 154 / 307, stratified by subset).
#: See :func:`run_landmark_split` for the reasons.
DEFAULT_RATIOS = (0.35, 0.05, 0.30, 0.10, 0.20)

#: Shape-predictor options tried on Val1 (dlib's defaults except nu / oversampling, kept tiny:
#: one training of ~540 faces takes about twice as long at oversampling 10 as at 5; measured:
#: benchmarks/measured_records.csv, topic landmarks_training).
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
#: training was barely faster than one 1-thread training for more CPU, and two 1-thread trainings
#: side by side took about as long as one (benchmarks/measured_records.csv, topic landmarks_threads).
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
