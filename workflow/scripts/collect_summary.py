"""Rule collect_summary: concatenate the per-dataset summaries into results/summary.csv."""

import pandas as pd

from _logging import log_to

from rejectopt.pipeline import write_csv
from rejectopt.pipeline.experiments.paper import EXTRA_METRICS
from rejectopt.pipeline.report import read_summary

log_to(snakemake.log[0])
# every dataset's metrics are checked here, so a NaN is named by its own file and row
frames = [read_summary(path, EXTRA_METRICS) for path in snakemake.input]
write_csv(pd.concat(frames, ignore_index=True), snakemake.output[0])
