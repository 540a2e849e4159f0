"""Every experiment's per-dataset rule (the template of workflow/rules/experiment_rule.smk:
experiment_dataset, summarize_dataset, ood_split, double_hinge_split, double_hinge_one_split,
train_landmarks): the job's splits through the experiment the rule runs
(rejectopt.pipeline.run_rule, by the rule's name)."""

from _logging import log_to

from rejectopt.pipeline import run_rule

log_to(snakemake.log[0])
run_rule(
    snakemake.rule,
    dict(snakemake.input.items()),
    dict(snakemake.output.items()),
    dict(snakemake.wildcards.items()),
    snakemake.threads,
    dict(snakemake.params.items()),
    snakemake.config,
)
