"""Rule landmark_figures: RC curves (Fig. 4a), learning curve (Fig. 4b), most / least certain faces (Fig. 5)
(rejectopt.pipeline.report.landmarks.landmark_figure_files; the rule's params are its keyword arguments)."""

from _logging import log_to

from rejectopt.pipeline.report.landmarks import landmark_figure_files

log_to(snakemake.log[0])
landmark_figure_files(
    snakemake.input.summary,
    snakemake.input.results,
    snakemake.input.curves,
    {name: snakemake.output[name] for name in ("rc", "learning_curve", "faces")},
    **dict(snakemake.params.items()),
)
