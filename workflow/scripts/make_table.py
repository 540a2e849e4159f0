"""Rule make_table: one results table (csv/md/tex): mean +- std of test AuRC, ranks, Friedman, Nemenyi."""

import pandas as pd

from _logging import log_to

from rejectopt._io import write_text
from rejectopt.report import aurc_table, render_table, table_statistics

log_to(snakemake.log[0])
spec = snakemake.params.spec
table = aurc_table(pd.read_csv(snakemake.input[0]), spec)
stats = table_statistics(table, spec.methods)
flat = table.copy()
flat.columns = ["_".join(filter(None, col)) for col in flat.columns]
write_text(flat.reset_index().to_csv(index=False), snakemake.output.csv)
write_text(render_table(table, spec, stats, fmt="md"), snakemake.output.md)
write_text(render_table(table, spec, stats, fmt="tex"), snakemake.output.tex)
