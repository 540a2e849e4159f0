# Evaluate every score on Tst: one summary per dataset, then one for the run.

SUMMARIES += [f"results/datasets/{d}/summary.csv" for d in DATASETS]
#: Config summary_metrics (checked by plan_run), as the summary rules' param when set.
SUMMARY_METRICS_PARAM = (
    {"summary_metrics": list(config["summary_metrics"])}
    if config.get("summary_metrics")
    else {}
)
BENCHMARKS += [f"results/benchmarks/summarize_dataset/{d}.tsv" for d in DATASETS]


# The paper's per-dataset step, through the one experiment rule template
# (rejectopt.pipeline.experiments.paper.run_rule): every split's test rows from the staged
# classifier and score files.
use rule experiment_split from experiment_template as summarize_dataset with:
    input:
        data="results/data/{dataset}/data.npz",
        splits="results/data/{dataset}/splits.npz",
        classifiers=lambda w: list(classifier_files(w.dataset).values()),
        scores=lambda w: sorted(set(score_files(w.dataset).values())),
    output:
        summary="results/datasets/{dataset}/summary.csv",
    log:
        "logs/summarize_dataset/{dataset}.log",
    benchmark:
        "results/benchmarks/summarize_dataset/{dataset}.tsv"
    threads: 1
    resources:
        mem_mb=declared("summarize_dataset", "mem_mb"),
        runtime=declared("summarize_dataset", "runtime", splits=len(SPLITS)),
    # summarize_dataset's arguments (rejectopt.pipeline.experiments.paper.run_rule);
    # summary_metrics passed only when the config names some: a new param changes the params
    # Snakemake records, which would rerun every summary of a run that does not use the key
    params:
        **SUMMARY_METRICS_PARAM,
        task=lambda w: TASK[w.dataset],
        classifier_files=lambda w: classifier_files(w.dataset),
        score_files=lambda w: score_files(w.dataset),
        aurc_convention=config.get("aurc_convention", "paper"),
        table_intervals=config.get("table_intervals", False),
        seed=config.get("seed", 0),


rule collect_summary:
    input:
        lambda w: SUMMARIES,
    output:
        "results/summary.csv",
    log:
        "logs/collect_summary.log",
    conda:
        "../../envs/rejectopt.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        **SUMMARY_METRICS_PARAM,  # the added columns it checks; none by default, as above
    script:
        "../scripts/collect_summary.py"
