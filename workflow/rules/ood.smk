# Reject option with out-of-distribution inputs (Franc, Prusa & Paplham): the last ~30 % of the
# classes of the multi-class datasets held out as OOD, single scores (MCP, SELE, kNN distance,
# Mahalanobis) and double scores tuned on Val, R^S at TPR / FPR on Tst
# (rejectopt.pipeline.experiments.ood.run_split); one job writes the table (rejectopt.pipeline.report.ood), one per
# dataset its figures, and one Table 1 of the paper computed (rejectopt.pipeline.report.ood.ood_table1_file).
# Only the datasets this run covers and config ood.datasets lists; the same splits as the tables.

from rejectopt.classifiers import get_classifier
from rejectopt.pipeline.experiments import ood as ood_experiment

# the settings check every value, the classifiers included (a classification one each)
OOD = ood_experiment.settings(config)
OOD_DATASETS = ood_experiment.covered_datasets(OOD, DATASETS, TASK, list(PLAN.custom))
# at planning time, from the registry's (or the config's declared) class counts: a dataset with too
# few classes to hold some out is refused before any job
for _name in OOD_DATASETS:
    try:
        ood_experiment.held_out_classes(
            list(range(PLAN.n_classes[_name])), OOD["held_out_fraction"]
        )
    except ValueError as err:
        raise ValueError(
            f"config ood.datasets: {_name!r} has {PLAN.n_classes[_name]} classes: {err}"
        ) from None

if OOD_DATASETS:
    BENCHMARKS += [f"results/benchmarks/ood_split/{d}.tsv" for d in OOD_DATASETS]
    TARGETS += [f"results/tables/ood.{ext}" for ext in ("csv", "md", "tex")]
    TARGETS += [
        f"results/figures/ood/{d}_{fig}.png"
        for d in OOD_DATASETS
        for fig in ("roc", "rc_at_fpr")
    ]
TARGETS += ["results/tables/ood_table1.md"]


# One job per dataset runs every split (a split costs no more than a few job start-ups,
# rejectopt.pipeline.resources.JOB_STARTUP_CPU_S), each split written as soon as it is done.
use rule experiment_split from experiment_template as ood_split with:
    input:
        data="results/data/{dataset}/data.npz",
        splits="results/data/{dataset}/splits.npz",
    output:
        csv=[f"results/ood/{{dataset}}/split_{k}.csv" for k in SPLITS],
        curves=[f"results/ood/{{dataset}}/split_{k}.npz" for k in SPLITS],
    log:
        "logs/ood_split/{dataset}.log",
    benchmark:
        "results/benchmarks/ood_split/{dataset}.tsv"
    threads: lambda w: max(get_classifier(c).threads for c in OOD["classifiers"])
    resources:
        mem_mb=declared("ood_split", "mem_mb"),
        runtime=declared("ood_split", "runtime", splits=len(SPLITS)),
    params:
        # the keyword arguments of the library call (rejectopt.pipeline.experiments.ood.run_rule;
        # splits: the job's loop)
        splits=SPLITS,
        # the config block but datasets, which only selects the jobs: leaving it out keeps them
        # when the list changes
        settings={k: OOD[k] for k in ood_experiment.DEFAULTS if k != "datasets"},
        C_classifier=config["C_classifier"],
        C_score=config["C_score"],
        sele_chunk_size=config.get("sele_chunk_size", 500),
        seed=config["seed"],


rule ood_table:
    input:
        [f"results/ood/{d}/split_{k}.csv" for d in OOD_DATASETS for k in SPLITS],
    output:
        csv=report(
            "results/tables/ood.csv",
            caption="../report/ood.rst",
            category="Out-of-distribution inputs",
            labels={"table": "OOD benchmark (every cell)"},
        ),
        md=report(
            "results/tables/ood.md",
            caption="../report/ood.rst",
            category="Out-of-distribution inputs",
            labels={"table": "OOD benchmark, ranks, Friedman, Nemenyi"},
        ),
        tex="results/tables/ood.tex",
    log:
        "logs/ood_table.log",
    conda:
        "../../envs/rejectopt.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    script:
        "../scripts/ood_table.py"


rule ood_figures:
    input:
        lambda w: [f"results/ood/{w.dataset}/split_{k}.npz" for k in SPLITS],
    output:
        roc=report(
            "results/figures/ood/{dataset}_roc.png",
            caption="../report/ood_roc.rst",
            category="Out-of-distribution inputs",
            labels={"figure": "ROC, {dataset}"},
        ),
        rc=report(
            "results/figures/ood/{dataset}_rc_at_fpr.png",
            caption="../report/ood_rc.rst",
            category="Out-of-distribution inputs",
            labels={"figure": "RC at FPR, {dataset}"},
        ),
        copies=figure_copies("results/figures/ood/{dataset}_roc.png")
        + figure_copies("results/figures/ood/{dataset}_rc_at_fpr.png"),
    log:
        "logs/ood_figures/{dataset}.log",
    conda:
        "../../envs/rejectopt.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=5,
    params:
        figure_formats=FIGURE_FORMATS,
    script:
        "../scripts/ood_figures.py"


rule ood_table1:
    output:
        report(
            "results/tables/ood_table1.md",
            caption="../report/ood_table1.rst",
            category="Out-of-distribution inputs",
            labels={"table": "Table 1 (synthetic example)"},
        ),
    log:
        "logs/ood_table1.log",
    conda:
        "../../envs/rejectopt.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    script:
        "../scripts/ood_table1.py"
