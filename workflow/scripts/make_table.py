"""Rules make_table / make_metric_table: one results table (csv/md/tex) under one metric.

Mean +- std over splits per dataset and method, average ranks, Friedman, Nemenyi;
for the metrics besides AuRC also the table's CD diagram.
"""

import pandas as pd

from _logging import log_to

from rejectopt._io import save_figure, write_text
from rejectopt.report import aurc_table, cd_figure, render_table, table_statistics

log_to(snakemake.log[0])
spec, metric = snakemake.params.spec, snakemake.params.metric
table = aurc_table(pd.read_csv(snakemake.input[0]), spec, metric)
stats = table_statistics(table, spec.methods)
flat = table.copy()
flat.columns = ["_".join(filter(None, col)) for col in flat.columns]
write_text(flat.reset_index().to_csv(index=False), snakemake.output.csv)
write_text(render_table(table, spec, stats, fmt="md", metric=metric), snakemake.output.md)
write_text(render_table(table, spec, stats, fmt="tex", metric=metric), snakemake.output.tex)
if "cd" in snakemake.output.keys():
    save_figure(cd_figure(stats, spec, metric), snakemake.output.cd)
