# A user's experiments (config key experiments): each one module of the contract of
# rejectopt.pipeline.experiments, run on every dataset of the run from the staged data, classifiers and
# scores; one job per dataset writes each split's rows (.csv) and curves (.npz, empty when
# run_split returns none), one job per experiment its tables.
# The module's file is an input, so editing it reruns what depends on it.
# experiment_dataset is the template of experiment_rule.smk, as are OOD's, double hinge's and
# landmarks' rules.

TARGETS += [f"results/experiments/{name}/tables" for name in USER_EXPERIMENTS]
BENCHMARKS += [
    f"results/benchmarks/experiment_dataset/{name}/{d}.tsv"
    for name in USER_EXPERIMENTS
    for d in DATASETS
]


use rule experiment_split from experiment_template as experiment_dataset with:
    input:
        module=lambda w: USER_EXPERIMENTS[w.experiment].__file__,
        data="results/data/{dataset}/data.npz",
        splits="results/data/{dataset}/splits.npz",
        classifiers=lambda w: list(classifier_files(w.dataset).values()),
        scores=lambda w: sorted(set(score_files(w.dataset).values())),
    output:
        rows=expand(
            "results/experiments/{{experiment}}/{{dataset}}/split_{split}.csv",
            split=SPLITS,
        ),
        curves=expand(
            "results/experiments/{{experiment}}/{{dataset}}/split_{split}.npz",
            split=SPLITS,
        ),
    log:
        "logs/experiment_dataset/{experiment}/{dataset}.log",
    benchmark:
        "results/benchmarks/experiment_dataset/{experiment}/{dataset}.tsv"
    resources:
        mem_mb=3000,
        runtime=60,
    params:
        task=lambda w: TASK[w.dataset],
        staged=lambda w: staged_files(w.dataset),


rule experiment_tables:
    input:
        module=lambda w: USER_EXPERIMENTS[w.experiment].__file__,
        rows=expand(
            "results/experiments/{{experiment}}/{dataset}/split_{split}.csv",
            dataset=DATASETS,
            split=SPLITS,
        ),
    output:
        directory("results/experiments/{experiment}/tables"),
    log:
        "logs/experiment_tables/{experiment}.log",
    conda:
        "../../envs/rejectopt.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    script:
        "../scripts/experiment_tables.py"


# The guarantees experiment (rejectopt.pipeline.experiments.guarantees, listed under experiments by default):
# its tables as Markdown and its figure, beside the tables (the contract's aggregate returns numbers).
GUARANTEES = USER_EXPERIMENTS.get("guarantees")
if getattr(GUARANTEES, "__name__", "") == "rejectopt.pipeline.experiments.guarantees":
    TARGETS += ["results/experiments/guarantees/guarantees.md"]

    rule guarantees_report:
        input:
            module=GUARANTEES.__file__,
            tables="results/experiments/guarantees/tables",
        # in report.html: the experiment runs by default, so its table and figure are the run's too
        output:
            markdown=report(
                "results/experiments/guarantees/guarantees.md",
                caption="../report/guarantees.rst",
                category="Guarantees",
                labels={"item": "plug-in vs certified targets (tables)"},
            ),
            figures=[
                report(
                    "results/experiments/guarantees/guarantees.png",
                    caption="../report/guarantees_figure.rst",
                    category="Guarantees",
                    labels={"item": "violation rates and coverage costs (figure)"},
                ),
                *figure_copies("results/experiments/guarantees/guarantees.png"),
            ],
        log:
            "logs/guarantees_report.log",
        conda:
            "../../envs/rejectopt.yaml"
        threads: 1
        resources:
            mem_mb=1000,
            runtime=5,
        params:
            formats=["png", *(f for f in FIGURE_FORMATS if f != "png")],
        script:
            "../scripts/guarantees_report.py"
