"""Rule collect_summary: concatenate the per-dataset summaries into results/summary.csv."""

from pathlib import Path

import pandas as pd
from _logging import log_to

from rejectopt.pipeline import save_csv
from rejectopt.pipeline.experiments.paper import EXTRA_METRICS
from rejectopt.pipeline.report import read_summary
from rejectopt.pipeline.tables import RUN_SUMMARY, dataset_summary_role

log_to(snakemake.log[0])
# every dataset's metrics are checked here, so a NaN is named by its own file and row
# and each must be as its rule wrote it (its content record): an edited row is refused, naming the file,
# and so is another dataset's summary copied over it (results/datasets/<dataset>/summary.csv names it)
# config summary_metrics: their columns are checked too (the rule's params name them)
metrics = [*EXTRA_METRICS, *snakemake.params.get("summary_metrics", [])]
frames = [
    read_summary(path, metrics, recorded=True, expect=dataset_summary_role(Path(path).parent.name))
    for path in snakemake.input
]
save_csv(
    pd.concat(frames, ignore_index=True), snakemake.output[0], provenance=RUN_SUMMARY
)  # the table rules verify it in turn
