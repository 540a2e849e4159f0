"""Rule rankings: each table's average ranks under every registered metric, and where they disagree."""

from _logging import log_to

from rejectopt.pipeline import write_text
from rejectopt.pipeline.report import rankings_markdown, read_summary

log_to(snakemake.log[0])
summary = read_summary(snakemake.input[0], recorded=True)  # refused if edited since written
write_text(
    rankings_markdown(summary, snakemake.params.specs, snakemake.params.metrics),
    snakemake.output[0],
)
