"""Rule paper_comparison: every cell of ours beside the paper's published number."""

import pandas as pd

from _logging import log_to

from rejectopt.report import TABLES, comparison_markdown, paper_comparison, write_csv, write_text

log_to(snakemake.log[0])
reference = pd.read_csv(snakemake.input.reference)
comparison = paper_comparison(pd.read_csv(snakemake.input.summary), reference)
write_csv(comparison, snakemake.output.csv)
run = list(snakemake.params.datasets_run)
missing = sorted(set(reference["dataset"]) - set(run))
specs = [TABLES[t] for t in snakemake.params.tables]
write_text(comparison_markdown(comparison, specs, run, missing), snakemake.output.md)
