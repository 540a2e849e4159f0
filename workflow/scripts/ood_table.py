"""Rule ood_table: the OOD table (csv/md/tex) with ranks, Friedman and Nemenyi
(rejectopt.pipeline.report.ood.ood_table_files; the numbers are rejectopt.pipeline.experiments.ood's)."""

from _logging import log_to

from rejectopt.pipeline.report.ood import ood_table_files

log_to(snakemake.log[0])
ood_table_files(snakemake.input, snakemake.output.csv, snakemake.output.md, snakemake.output.tex)
