"""Rule rankings: each table's average ranks under every registered metric, and where they disagree."""

from _logging import log_to

from rejectopt.pipeline import write_text
from rejectopt.pipeline.report import rankings_markdown, read_summary
from rejectopt.pipeline.tables import RUN_SUMMARY

log_to(snakemake.log[0])
# refused if edited since collect_summary wrote it, or if it is not the run summary
summary = read_summary(snakemake.input[0], recorded=True, expect=RUN_SUMMARY)
write_text(
    rankings_markdown(summary, snakemake.params.specs, snakemake.params.metrics),
    snakemake.output[0],
)
