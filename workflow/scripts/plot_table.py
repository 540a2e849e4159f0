"""Rule plot_table: a table's CD diagram (Nemenyi) and improvement-over-baseline figure."""

from _logging import log_to

from rejectopt.pipeline import save_figure
from rejectopt.pipeline.report import cd_figure, improvement_figure, read_summary
from rejectopt.pipeline.tables import (
    RUN_SUMMARY,
    metric_table,
    relative_improvement,
    table_statistics,
)

log_to(snakemake.log[0])
spec = snakemake.params.spec
# refused if edited since collect_summary wrote it, or if it is not the run summary
summary = read_summary(snakemake.input[0], recorded=True, expect=RUN_SUMMARY)
stats = table_statistics(metric_table(summary, spec), spec.methods)
formats = snakemake.params.figure_formats
save_figure(cd_figure(stats, spec), snakemake.output.cd, formats)
save_figure(
    improvement_figure(relative_improvement(summary, spec), spec),
    snakemake.output.improvement,
    formats,
)
