"""The landmark experiment's jobs: files in, files out."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from ...._io import load_npz, save_csv, save_npz, write_text
from ....splits import make_splits, save_splits
from ...tables import dataset_summary_role, load_csv
from .._contract import SplitInputs
from .._rules import as_list
from ._setup import (
    _RESULT_ARRAYS,
    _RESULT_JSON,
    DATASET,
    NAME,
    STAGED_DETECTIONS,
    load_split_inputs,
    select_faces,
    settings,
)
from ._split import LandmarkSplitResult, run_split, train_candidate_predictor
from ._tables import landmark_summary


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
    # their records name the split: the readers refuse one split's file copied over another's
    role = split_role(split)
    save_csv(out.result["learning_curve"], curve_out, provenance=role)
    save_landmark_result(result_out, out.result, provenance=role)
    return out


def split_role(split: int) -> dict:
    """What the record of split ``split``'s result and learning curve says they are, and their readers expect.

    Parameters
    ----------
    split : int
        The split's number.

    Returns
    -------
    dict
        ``{"dataset": "300w", "split": split}``.
    """
    return {"dataset": DATASET, "split": int(split)}


def save_landmark_result(path, result: dict, provenance: Mapping | None = None) -> None:
    """Write a :func:`run_landmark_split` result to ``.npz`` atomically (dicts as JSON, no pickle).

    Parameters
    ----------
    path : path-like
        The ``.npz`` written (:func:`rejectopt._io.save_npz`).
    result : dict
        A :func:`run_landmark_split` result; its learning curve is not saved here.
    provenance : mapping, optional
        Recorded with the arrays (:func:`split_role`: the split it is of).

    Returns
    -------
    None
    """
    arrays: dict[str, Any] = {key: np.asarray(result[key]) for key in _RESULT_ARRAYS}
    for key in _RESULT_JSON:
        arrays[key] = np.array(json.dumps(result[key], sort_keys=True))
    arrays["risk_full"] = np.array(float(result["risk_full"]))
    save_npz(path, provenance=provenance, **arrays)


def load_landmark_result(path, expect: Mapping | None = None) -> dict:
    """Inverse of :func:`save_landmark_result` (without the learning curve, saved as CSV beside it).

    Parameters
    ----------
    path : path-like
        A file of :func:`save_landmark_result` (checked by :func:`rejectopt._io.load_npz`).
    expect : mapping, optional
        What its record must say it is (:func:`split_role`).

    Returns
    -------
    dict
        The result's arrays, its JSON entries as dicts and ``risk_full`` as a float.
    """
    with load_npz(path, expect=expect) as data:
        result = {key: data[key] for key in _RESULT_ARRAYS}
        for key in _RESULT_JSON:
            result[key] = json.loads(str(data[key]))
        result["risk_full"] = float(data["risk_full"])
    return result


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
    results = {
        k: load_landmark_result(path, split_role(k)) for k, path in zip(splits, result_paths)
    }
    curves = {k: load_csv(path, expect=split_role(k)) for k, path in zip(splits, curve_paths)}
    summary = landmark_summary(results)
    # a dataset summary: collect_summary verifies it, and that it is this dataset's
    save_csv(summary, summary_out, provenance=dataset_summary_role(DATASET))
    return results, curves, summary


def run_rule(
    inputs: Mapping[str, Any],
    outputs: Mapping[str, Any],
    wildcards: Mapping[str, str],
    threads: int,
    params: Mapping[str, Any],
) -> LandmarkSplitResult:
    """Rule ``train_landmarks``: :func:`run_split_files` on the job's split.

    The experiment's entry of :func:`rejectopt.pipeline.experiments._rules.run_rule`: the rule's
    params are :func:`run_split_files`' keywords. SELE's ``n_jobs`` (``score_jobs``, also the BLAS
    thread limit) is a fixed param, as the results depend on it; the job's threads only set how
    many worker processes run the independent pieces.

    Parameters
    ----------
    inputs, outputs, wildcards, params : mapping
        The job's named inputs, outputs, wildcards and params (Snakemake's, as dicts).
    threads : int
        The job's threads: the worker processes.

    Returns
    -------
    LandmarkSplitResult
        The split's result, as written.
    """
    keywords = dict(params)
    with threadpool_limits(limits=keywords["score_jobs"]):
        return run_split_files(
            inputs["detections"],
            inputs["splits"],
            int(wildcards["split"]),
            outputs["result"],
            outputs["curve"],
            models=as_list(inputs["models"]),
            errors=as_list(inputs["errors"]),
            workers=threads,
            **keywords,
        )
