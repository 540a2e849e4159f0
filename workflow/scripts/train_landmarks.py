"""Rules train_predictor and train_landmarks: the landmark experiment on one split.

train_predictor: one shape predictor of the option grid, trained on Trn1, with its Val1 error.
train_landmarks: the best of them, SELE / REG on its HOG features and the learning curve.
dlib's trainer threads (``trainer_threads``) and SELE's n_jobs (``score_jobs``, also the BLAS thread
limit) are fixed parameters, as the results depend on them; the job's threads only set how many
worker processes run the independent pieces.
"""

import json

import numpy as np
from threadpoolctl import threadpool_limits

from _logging import log_to

from rejectopt.landmarks import run_landmark_split, save_landmark_result, select_faces, train_candidate_predictor
from rejectopt._io import write_csv, write_text
from rejectopt.splits import derive_seed, load_split

log_to(snakemake.log[0])
split = int(snakemake.wildcards.split)
params = snakemake.params
faces = select_faces(**params.faces)
with np.load(snakemake.input.detections, allow_pickle=False) as data:
    detections = {key: data[key] for key in data.files}
if detections["name"].tolist() != faces["name"].tolist():
    raise ValueError(f"{snakemake.input.detections} does not match the face list; rerun detect_faces")
seed = derive_seed(params.seed, "300w", "landmarks", split)
split_indices = load_split(snakemake.input.splits, split)

if snakemake.rule == "train_predictor":
    option = int(snakemake.wildcards.option)
    options = dict(params.options_grid[option])
    _, error = train_candidate_predictor(faces, detections, split_indices, options,
                                         threads=params.trainer_threads, seed=seed, path=snakemake.output.model)
    write_text(json.dumps({"option": option, "options": options, "val1_error": error}, sort_keys=True) + "\n",
               snakemake.output.error)
else:
    candidates = None
    if not params.pretrained:
        candidates = []
        for model, path in zip(snakemake.input.models, snakemake.input.errors):
            with open(path) as handle:
                candidates.append((model, json.load(handle)["val1_error"]))
    with threadpool_limits(limits=params.score_jobs):
        result = run_landmark_split(
            faces,
            detections,
            split_indices,
            options_grid=[dict(options) for options in params.options_grid],
            C_grid=params.C_grid,
            threads=params.score_jobs,
            seed=seed,
            learning_curve_sizes=params.learning_curve_sizes,
            with_coordinates=params.with_coordinates,
            pretrained=params.pretrained,
            workers=snakemake.threads,
            candidates=candidates,
        )
    write_csv(result["learning_curve"], snakemake.output.curve)
    save_landmark_result(snakemake.output.result, result)
