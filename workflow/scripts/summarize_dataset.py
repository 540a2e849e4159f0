"""Rule summarize_dataset: test AuRC / R@100 of every (split, classifier, score) of a dataset."""

from _logging import log_to

from rejectopt.pipeline import save_csv
from rejectopt.pipeline.experiments.paper import summarize_dataset

log_to(snakemake.log[0])
summary = summarize_dataset(
    snakemake.wildcards.dataset,
    snakemake.params.task,
    snakemake.input.data,
    snakemake.input.splits,
    snakemake.params.classifier_files,
    snakemake.params.score_files,
    snakemake.params.aurc_convention,
    intervals=snakemake.params.table_intervals,
    seed=snakemake.params.seed,
)
save_csv(summary, snakemake.output[0])  # with its content record, verified by collect_summary
