"""Rule train_landmarks: the landmark experiment on one split
(rejectopt.pipeline.experiments.landmarks.run_split_files).

The best of the split's shape predictors (rule train_predictor) on Val1, SELE / REG on its HOG
features and the learning curve. The rule's params are the library call's keyword arguments. SELE's
n_jobs (``score_jobs``, also the BLAS thread limit) is a fixed parameter, as the results depend on it;
the job's threads only set how many worker processes run the independent pieces.
"""

from _logging import log_to
from threadpoolctl import threadpool_limits

from rejectopt.pipeline.experiments.landmarks import run_split_files

log_to(snakemake.log[0])
params = dict(snakemake.params.items())
with threadpool_limits(limits=params["score_jobs"]):
    run_split_files(
        snakemake.input.detections,
        snakemake.input.splits,
        int(snakemake.wildcards.split),
        snakemake.output.result,
        snakemake.output.curve,
        models=list(snakemake.input.models),
        errors=list(snakemake.input.errors),
        workers=snakemake.threads,
        **params,
    )
