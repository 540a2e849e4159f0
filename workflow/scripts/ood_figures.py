"""Rule ood_figures: ROC and RC-at-FPR curves of one dataset, mean over the splits
(rejectopt.pipeline.report.ood.ood_figure_files)."""

from _logging import log_to

from rejectopt.pipeline.report.ood import ood_figure_files
from rejectopt.pipeline.tables import split_file_role

log_to(snakemake.log[0])
ood_figure_files(
    snakemake.input,
    snakemake.output.roc,
    snakemake.output.rc,
    dataset=snakemake.wildcards.dataset,
    formats=snakemake.params.figure_formats,
    expect=split_file_role,  # each split's curves recorded as the dataset and split its path names
)
