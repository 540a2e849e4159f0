"""Rule ood_table1: Table 1 of Franc, Prusa & Paplham computed beside the paper's
(rejectopt.pipeline.report.ood.ood_table1_file)."""

from _logging import log_to

from rejectopt.pipeline.report.ood import ood_table1_file

log_to(snakemake.log[0])
ood_table1_file(snakemake.output[0])
