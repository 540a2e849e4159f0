"""Rule collect_summary: concatenate the per-dataset summaries into results/summary.csv."""

import pandas as pd

from _logging import log_to

from rejectopt._io import write_csv

log_to(snakemake.log[0])
write_csv(pd.concat([pd.read_csv(path) for path in snakemake.input], ignore_index=True), snakemake.output[0])
