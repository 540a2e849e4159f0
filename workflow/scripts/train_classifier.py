"""Rules train_classifier / train_classifier_split: on the job's splits of one (dataset,
classifier), fit on Trn1, select C on Val1, save outputs."""

from _logging import log_to
from threadpoolctl import threadpool_limits

from rejectopt.pipeline.experiments.paper import run_classifiers

log_to(snakemake.log[0])
with threadpool_limits(limits=snakemake.threads):
    run_classifiers(
        snakemake.input.data,
        snakemake.input.splits,
        snakemake.params.split_files,
        kind=snakemake.params.classifier,
        C_grid=snakemake.params.C_grid,
        seed=snakemake.params.seed,
        dataset=snakemake.params.dataset,
        threads=snakemake.threads,
    )
