"""Rule experiment_dataset: one user experiment's rows of every split of one dataset."""

from _logging import log_to

from rejectopt.experiments._contract import load_experiments, run_dataset

log_to(snakemake.log[0])
name, dataset = snakemake.wildcards.experiment, snakemake.wildcards.dataset
experiment = load_experiments(snakemake.config["experiments"])[name]
run_dataset(experiment, snakemake.config, dataset, snakemake.params.task, snakemake.input.data,
            snakemake.input.splits, dict(enumerate(snakemake.output)), snakemake.params.staged)
