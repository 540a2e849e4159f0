"""Rule collect_summary: concatenate the per-dataset summaries into results/summary.csv."""

import pandas as pd
from _logging import log_to

from rejectopt.pipeline import save_csv
from rejectopt.pipeline.experiments.paper import EXTRA_METRICS
from rejectopt.pipeline.report import read_summary

log_to(snakemake.log[0])
# every dataset's metrics are checked here, so a NaN is named by its own file and row
# and each must be as its rule wrote it (its content record): an edited row is refused, naming the file
frames = [read_summary(path, EXTRA_METRICS, recorded=True) for path in snakemake.input]
save_csv(
    pd.concat(frames, ignore_index=True), snakemake.output[0]
)  # the table rules verify it in turn
