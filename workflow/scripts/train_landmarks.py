"""Rule train_landmarks: the landmark experiment on one split.

The best of the split's shape predictors (rule train_predictor) on Val1, SELE / REG on its HOG
features and the learning curve. SELE's n_jobs (``score_jobs``, also the BLAS thread limit) is a
fixed parameter, as the results depend on it; the job's threads only set how many worker processes
run the independent pieces.
"""

import json

from threadpoolctl import threadpool_limits

from _logging import log_to

from rejectopt.landmarks import load_split_inputs, run_landmark_split, save_landmark_result
from rejectopt._io import write_csv

log_to(snakemake.log[0])
params = snakemake.params
faces, detections, split_indices, seed = load_split_inputs(
    params.faces, snakemake.input.detections, snakemake.input.splits, int(snakemake.wildcards.split), params.seed
)
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
