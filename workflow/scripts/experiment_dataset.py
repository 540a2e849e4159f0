"""Rule experiment_dataset: one user experiment's rows and curves of every split of one dataset."""

from _logging import log_to

from rejectopt.pipeline import load_experiments, run_dataset

log_to(snakemake.log[0])
name, dataset = snakemake.wildcards.experiment, snakemake.wildcards.dataset
experiment = load_experiments(snakemake.config["experiments"])[name]
files = dict(
    enumerate(zip(snakemake.output.rows, snakemake.output.curves))
)  # split -> (rows, curves)
run_dataset(
    experiment,
    snakemake.config,
    dataset,
    snakemake.params.task,
    snakemake.input.data,
    snakemake.input.splits,
    files,
    snakemake.params.staged,
)
