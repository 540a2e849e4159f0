"""Rule make_table: one results table (csv/md/tex) under every metric, AuRC first.

Mean +- std over splits per dataset and method, average ranks, Friedman, Nemenyi;
for the metrics besides AuRC also the table's CD diagram.
"""

from _logging import log_to

from rejectopt.pipeline import save_figure, write_text
from rejectopt.pipeline.report import cd_figure, read_summary, render_table
from rejectopt.pipeline.tables import RUN_SUMMARY, metric_table, table_statistics

log_to(snakemake.log[0])
spec, cd_paths = snakemake.params.spec, snakemake.params.cd
# refused if edited since collect_summary wrote it; a NaN AuRC is named by its line, not met in the ranks
summary = read_summary(snakemake.input[0], recorded=True, expect=RUN_SUMMARY)
outputs = zip(
    snakemake.params.metrics, snakemake.output.csv, snakemake.output.md, snakemake.output.tex
)
for metric, csv, md, tex in outputs:
    table = metric_table(
        summary, spec, metric, intervals=snakemake.params.intervals and metric == "aurc"
    )
    stats = table_statistics(table, spec.methods, metric)
    flat = table.copy()
    flat.columns = ["_".join(filter(None, col)) for col in flat.columns]
    write_text(flat.reset_index().to_csv(index=False), csv)
    write_text(render_table(table, spec, stats, fmt="md", metric=metric), md)
    write_text(render_table(table, spec, stats, fmt="tex", metric=metric), tex)
    if metric in cd_paths:
        save_figure(
            cd_figure(stats, spec, metric), cd_paths[metric], snakemake.params.figure_formats
        )
