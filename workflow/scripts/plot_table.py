"""Rule plot_table: a table's CD diagram (Nemenyi) and improvement-over-baseline figure."""

from _logging import log_to

from rejectopt.pipeline import save_figure
from rejectopt.pipeline.report import cd_figure, improvement_figure, read_summary
from rejectopt.pipeline.tables import metric_table, relative_improvement, table_statistics

log_to(snakemake.log[0])
spec = snakemake.params.spec
summary = read_summary(snakemake.input[0], recorded=True)  # refused if edited since written
stats = table_statistics(metric_table(summary, spec), spec.methods)
formats = snakemake.params.figure_formats
save_figure(cd_figure(stats, spec), snakemake.output.cd, formats)
save_figure(
    improvement_figure(relative_improvement(summary, spec), spec),
    snakemake.output.improvement,
    formats,
)
