"""Rule double_hinge_report: the table (csv/md/tex) and one figure per dataset
(rejectopt.pipeline.report.double_hinge.double_hinge_report_files)."""

from _logging import log_to

from rejectopt.pipeline.report.double_hinge import double_hinge_report_files
from rejectopt.pipeline.tables import split_file_role

log_to(snakemake.log[0])
double_hinge_report_files(
    snakemake.input.csv,
    snakemake.input.curves,
    snakemake.output.csv,
    snakemake.output.md,
    snakemake.output.tex,
    figures=dict(zip(snakemake.params.datasets, snakemake.output.figures)),
    timing_paths=snakemake.input.timing,
    timing_out=snakemake.output.timing,
    figure_formats=snakemake.params.figure_formats,
    # each split's files must be recorded as the dataset and split their input paths name
    expect=split_file_role,
)
