"""Rule timing: wall time per rule and dataset from the benchmark: records."""

from _logging import log_to

from rejectopt._io import write_csv, write_text
from rejectopt.report import timing_table

log_to(snakemake.log[0])
table, markdown = timing_table(snakemake.input)
write_csv(table, snakemake.output.csv)
write_text(markdown, snakemake.output.md)
