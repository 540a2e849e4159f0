"""Rule ood_table: the OOD table (csv/md/tex) with ranks, Friedman and Nemenyi
(rejectopt.pipeline.report.ood.ood_table_files; the numbers are rejectopt.pipeline.experiments.ood's)."""

from _logging import log_to

from rejectopt.pipeline.report.ood import ood_table_files
from rejectopt.pipeline.tables import split_file_role

log_to(snakemake.log[0])
# each split's rows must be recorded as the dataset and split its input path names
ood_table_files(
    snakemake.input,
    snakemake.output.csv,
    snakemake.output.md,
    snakemake.output.tex,
    expect=split_file_role,
)
