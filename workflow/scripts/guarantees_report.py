"""Rule guarantees_report: the guarantees experiment's tables as Markdown and its figure."""

from pathlib import Path

from _logging import log_to

from rejectopt.pipeline.report.guarantees import render

log_to(snakemake.log[0])
render(snakemake.input.tables, Path(snakemake.output.markdown).parent, snakemake.params.formats)
