"""Rule paper_comparison: every cell of ours beside the paper's published number."""

import pandas as pd
from _logging import log_to

from rejectopt.pipeline import write_csv, write_text
from rejectopt.pipeline.report import comparison_markdown, paper_comparison, read_summary
from rejectopt.pipeline.tables import RUN_SUMMARY

log_to(snakemake.log[0])
reference = pd.read_csv(snakemake.input.reference)
# refused if edited since collect_summary wrote it, or if it is not the run summary
summary = read_summary(snakemake.input.summary, recorded=True, expect=RUN_SUMMARY)
run = list(snakemake.params.datasets_run)
convention = snakemake.params.convention
comparison = paper_comparison(summary[summary["dataset"].isin(run)], reference, convention)
write_csv(comparison, snakemake.output.csv)
missing = sorted(set(reference["dataset"]) - set(run))
write_text(
    comparison_markdown(comparison, list(snakemake.params.specs), run, missing, convention),
    snakemake.output.md,
)
