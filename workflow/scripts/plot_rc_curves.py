"""Rule plot_rc_curves: every score's Tst RC curve of one (dataset, classifier), mean over splits."""

from _logging import log_to

from rejectopt.pipeline import save_figure
from rejectopt.pipeline.experiments.paper import tst_outcomes
from rejectopt.pipeline.report import classifier_label, rc_curves_figure

log_to(snakemake.log[0])
outcomes = tst_outcomes(
    snakemake.params.task,
    snakemake.input.data,
    snakemake.input.splits,
    snakemake.params.classifier_files,
    snakemake.params.score_files,
)
curves = {}
for loss, _, scores in outcomes.values():
    for score, (uncertainty, _) in scores.items():
        curves.setdefault(score, []).append((loss, uncertainty))
dataset, classifier = snakemake.wildcards.dataset, snakemake.wildcards.classifier
risk = "0/1 loss x 100" if snakemake.params.task == "classification" else "absolute error"
save_figure(
    rc_curves_figure(curves, f"{dataset}, {classifier_label(classifier)}", risk),
    snakemake.output.png,
    snakemake.params.figure_formats,
)
