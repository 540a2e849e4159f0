"""One split of the landmark experiment: the shape predictor, the scores, Tst."""

from __future__ import annotations

import functools
import json
import logging
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ....landmarks import face_features, landmark_loss, per_landmark
from ....landmarks._faces import load_images, load_truths
from ....landmarks._parallel import map_in_processes
from ....landmarks._predictor import (
    load_predictor,
    predict_landmarks,
    pretrained_predictor_path,
    train_shape_predictor,
)
from ....metrics import aurc
from ....scores import make_score, select_C
from ....scores._baselines import face_score as face_score_uncertainty
from ....scores._tuning import SCORE_C_GRID
from .._contract import SplitInputs, SplitResult
from ._setup import (
    DEFAULT_LEARNING_CURVE_SIZES,
    DEFAULT_OPTIONS_GRID,
    LEARNED_SCORES,
    STAGED_DETECTIONS,
    load_detections,
    select_faces,
    split_seed,
)
from ._tables import landmark_summary

logger = logging.getLogger(__package__)  # the package's logger, as before the split


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


def _predict_parts(
    faces_df: pd.DataFrame,
    detections: dict,
    parts: dict,
    options_grid,
    jobs: tuple[int, int, int],
    work_dir,
    candidates,
    *,
    pretrained: bool,
    with_coordinates: bool,
) -> tuple[dict, dict, dict, dict]:
    """Step 1 and the predictions of step 2: the shape predictor (pretrained, the best of the
    staged candidates, or trained on Trn1 and chosen on Val1), then on Trn2 / Val2 / Tst the
    predicted landmarks, their losses and the HOG features. ``jobs`` is ``(threads, workers,
    seed)``; returns the options, the Val1 errors, ``part -> (features, loss)`` and the predictions.
    """
    threads, workers, seed = jobs
    boxes = np.asarray(detections["box"], dtype=np.float64)
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
    return options, val1_error, data, preds


def _learning_curve_rows(
    sizes, learned: dict, partial: dict, n_trn: int, loss_tst, test_aurc: dict
) -> list[dict]:
    """Fig. 4b's rows: per training size ``m``, each learned score's C and test AuRC, then the
    face score's (which learns nothing)."""
    curve = []
    for m in sizes:
        fitted = learned if m == n_trn else partial[m]
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
    return curve


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
    face_score = np.asarray(detections["score"], dtype=np.float64)
    rng = np.random.default_rng(seed)
    options, val1_error, data, preds = _predict_parts(
        faces_df,
        detections,
        parts,
        options_grid,
        (threads, workers, seed),
        work_dir,
        candidates,
        pretrained=pretrained,
        with_coordinates=with_coordinates,
    )
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

    curve = _learning_curve_rows(sizes, learned, partial, len(loss_trn), loss_tst, test_aurc)
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
