"""Rule experiment_tables: one user experiment's tables from every split's rows."""

from _logging import log_to

from rejectopt.pipeline import aggregate_files, load_experiments

log_to(snakemake.log[0])
experiment = load_experiments(snakemake.config["experiments"])[snakemake.wildcards.experiment]
aggregate_files(experiment, snakemake.config, snakemake.input.rows, snakemake.output[0])
