"""Rule learn_score: every score of one (dataset, classifier) on every split, C by Val2 AuRC; one file."""

import sys

from _logging import log_to
from threadpoolctl import threadpool_limits

from rejectopt.pipeline.config import load_plugins
from rejectopt.pipeline.experiments.paper import run_scores

log_to(snakemake.log[0])
load_plugins(snakemake.params.plugins)  # a plugin score must be registered in this process too
with threadpool_limits(limits=snakemake.threads):
    chosen = run_scores(
        snakemake.input.data,
        snakemake.input.splits,
        snakemake.params.classifier_files,
        task=snakemake.params.task,
        scores=snakemake.params.scores,
        C_grid=snakemake.params.C_grid,
        seed=snakemake.params.seed,
        out_path=snakemake.output[0],
        chunk_size=snakemake.params.chunk_size,
        dataset=snakemake.wildcards.dataset,
        classifier=snakemake.wildcards.classifier,
    )
# a failed score is recorded in the file (the others' results are kept) and said on the console
for result in chosen.values():
    if "error" in result:
        print(
            f"learn_score: {result['error']} (recorded in {snakemake.output[0]})", file=sys.stderr
        )
