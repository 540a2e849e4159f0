"""Rule experiment_tables: one user experiment's tables from every split's rows."""

from _logging import log_to

from rejectopt.pipeline import aggregate_files, load_experiments
from rejectopt.pipeline.tables import split_file_role

log_to(snakemake.log[0])
experiment = load_experiments(snakemake.config["experiments"])[snakemake.wildcards.experiment]
# each split's rows must be recorded as this experiment's, of the dataset and split its input path names
aggregate_files(
    experiment,
    snakemake.config,
    snakemake.input.rows,
    snakemake.output[0],
    expect=lambda path: {"experiment": experiment.NAME, **split_file_role(path)},
)
