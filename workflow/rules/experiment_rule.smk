# The one rule of every experiment's per-dataset step, a template: each experiment's rule is this
# one under its own name (use rule experiment_split from experiment_template as <name> with:), with
# its inputs, outputs, log, benchmark, threads, resources and params. The one script hands the
# job to rejectopt.pipeline.run_rule, which picks the experiment by the rule's name
# (rejectopt.pipeline.experiments._rules); a module of its own, so that the template is no rule
# of the workflow.


rule experiment_split:
    conda:
        "../../envs/rejectopt.yaml"
    threads: 1
    script:
        "../scripts/experiment_dataset.py"
