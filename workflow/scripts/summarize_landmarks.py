"""Rule summarize_landmarks: the 300-W rows of the summary (per-landmark AuRC, R@100) and a note
(rejectopt.pipeline.report.landmarks.landmarks_summary_files; the rule's params are its keyword arguments)."""

from _logging import log_to

from rejectopt.pipeline.report.landmarks import landmarks_summary_files

log_to(snakemake.log[0])
landmarks_summary_files(
    snakemake.input.results,
    snakemake.input.curves,
    snakemake.output.summary,
    snakemake.output.note,
    **dict(snakemake.params.items()),
)
