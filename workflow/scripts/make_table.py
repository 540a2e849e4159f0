"""Rule make_<table>: one of the paper's tables (csv/md/tex), its CD diagram and improvement figure."""

import pandas as pd

from _logging import log_to

from rejectopt.report import (
    TABLES,
    aurc_table,
    cd_figure,
    improvement_figure,
    relative_improvement,
    render_table,
    table_statistics,
    write_text,
)
from rejectopt._io import atomic_path

log_to(snakemake.log[0])
spec = TABLES[snakemake.params.table]
summary = pd.read_csv(snakemake.input[0])
table = aurc_table(summary, spec)
stats = table_statistics(table, spec.methods)
flat = table.copy()
flat.columns = ["_".join(filter(None, col)) for col in flat.columns]
write_text(flat.reset_index().to_csv(index=False), snakemake.output.csv)
write_text(render_table(table, spec, stats, fmt="md"), snakemake.output.md)
write_text(render_table(table, spec, stats, fmt="tex"), snakemake.output.tex)
for figure, path in [
    (cd_figure(stats, spec), snakemake.output.cd),
    (improvement_figure(relative_improvement(summary, spec), spec), snakemake.output.improvement),
]:
    with atomic_path(path) as tmp:
        figure.savefig(tmp, format="png", dpi=150)
