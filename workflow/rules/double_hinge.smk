# SVM with a reject option via the double-hinge loss (Grandvalet et al. 2008): on the binary
# datasets the run covers (config double_hinge.datasets) plus breast cancer (scikit-learn's, split
# with the config's default ratios and seed), per reject cost d the double-hinge SVM with the
# Gaussian kernel (Nystrom rank double_hinge.rbf_rank, width and C on Val1) and with the linear
# kernel against LR + SELE with a cost-based rule, the plain SVM with a |f| threshold and LR with
# Chow's rule on Tst (rejectopt.pipeline.experiments.double_hinge.run_split); one collecting job writes the
# table (mean +- std, ranks, Wilcoxon) and one figure per dataset (rejectopt.pipeline.report.double_hinge).

from rejectopt.pipeline.experiments import double_hinge as dh_experiment

DOUBLE_HINGE = dh_experiment.settings(config)
DH_DATASETS = dh_experiment.covered_datasets(DOUBLE_HINGE, DATASETS, list(PLAN.custom))
for _name in DH_DATASETS:
    if _name != dh_experiment.BREAST_CANCER and TASK[_name] != "classification":
        raise ValueError(
            f"config double_hinge.datasets: {_name!r} is an {TASK[_name]} dataset"
        )


# Granularity by cost, as for the classifiers (rejectopt.pipeline.resources.splits_per_job): a dataset
# whose splits together cost more than config split_job_cpu_s (codrna at its real size) gets one
# job per split, rule double_hinge_one_split; the others run every split in one double_hinge_split
# job (also every dataset of a one-split run). Each split is seeded on its own, so its files are
# the same either way.
DH_SPLIT_DATASETS = [
    d
    for d in DH_DATASETS
    if splits_per_job(
        None,
        *dataset_shape(d),
        len(SPLITS),
        stage="double_hinge_split",
        threshold=config["split_job_cpu_s"],
    )
    < len(SPLITS)
]

if DH_DATASETS:
    BENCHMARKS += [
        f"results/benchmarks/double_hinge_split/{d}.tsv"
        for d in DH_DATASETS
        if d not in DH_SPLIT_DATASETS
    ] + [
        f"results/benchmarks/double_hinge_split/{d}/split_{k}.tsv"
        for d in DH_SPLIT_DATASETS
        for k in SPLITS
    ]
    TARGETS += [f"results/tables/double_hinge.{ext}" for ext in ("csv", "md", "tex")]
    TARGETS += ["results/tables/timing_double_hinge.md"]
    TARGETS += [f"results/figures/double_hinge/{d}.png" for d in DH_DATASETS]


# The rule_config keywords of both split rules (rejectopt.pipeline.experiments._contract.rule_config):
# the config block but datasets, which only selects the jobs (leaving it out keeps them when the
# list changes), and the top-level keys the experiment reads.
DH_PARAMS = dict(
    settings={k: DOUBLE_HINGE[k] for k in dh_experiment.DEFAULTS if k != "datasets"},
    split_ratios=config["split_ratios"]["default"],
    C_classifier=config["C_classifier"],
    C_score=config["C_score"],
    sele_chunk_size=config.get("sele_chunk_size", 500),
    seed=config["seed"],
)


# One job per dataset runs every split (a job's start-up, rejectopt.pipeline.resources.JOB_STARTUP_CPU_S, costs
# more than a small dataset's split), each split written as soon as it is done; a costly dataset's
# split job (double_hinge_one_split) wins over it.
ruleorder: double_hinge_one_split > double_hinge_split


use rule experiment_split from experiment_template as double_hinge_split with:
    input:
        # the pipeline's prepared data and splits, and its LR classifier files where the run trains
        # LR on the dataset (the job reads LR's outputs instead of training it again); none for
        # breast cancer (built in the job)
        unpack(lambda w: double_hinge_inputs(w.dataset)),
    output:
        csv=[f"results/double_hinge/{{dataset}}/split_{k}.csv" for k in SPLITS],
        curves=[f"results/double_hinge/{{dataset}}/split_{k}.npz" for k in SPLITS],
        # fit times apart: every other output is byte-identical from run to run
        timing=[
            f"results/double_hinge/{{dataset}}/timing_split_{k}.csv" for k in SPLITS
        ],
    log:
        "logs/double_hinge_split/{dataset}.log",
    benchmark:
        "results/benchmarks/double_hinge_split/{dataset}.tsv"
    wildcard_constraints:
        dataset="|".join(DH_DATASETS) or "none",
    resources:
        # by the dataset's size, also for breast cancer (not in the run's plan)
        mem_mb=declared("double_hinge_split", "mem_mb"),
        runtime=declared("double_hinge_split", "runtime", splits=len(SPLITS)),
    params:
        **DH_PARAMS,
        # the keyword arguments of the library call (rejectopt.pipeline.experiments.double_hinge
        # .run_rule; splits: the job's loop)
        splits=SPLITS,


# the same rule on one split: its own files, log and benchmark, and the one split as its loop
use rule double_hinge_split as double_hinge_one_split with:
    input:
        unpack(lambda w: double_hinge_inputs(w.dataset, splits=[int(w.split)])),
    output:
        csv="results/double_hinge/{dataset}/split_{split}.csv",
        curves="results/double_hinge/{dataset}/split_{split}.npz",
        timing="results/double_hinge/{dataset}/timing_split_{split}.csv",
    log:
        "logs/double_hinge_split/{dataset}/split_{split}.log",
    benchmark:
        "results/benchmarks/double_hinge_split/{dataset}/split_{split}.tsv"
    wildcard_constraints:
        dataset="|".join(DH_SPLIT_DATASETS) or "none",
        split=r"\d+",
    resources:
        mem_mb=declared("double_hinge_split", "mem_mb"),
        runtime=declared("double_hinge_split", "runtime"),
    params:
        splits=lambda w: [int(w.split)],


rule double_hinge_report:
    input:
        csv=[
            f"results/double_hinge/{d}/split_{k}.csv"
            for d in DH_DATASETS
            for k in SPLITS
        ],
        curves=[
            f"results/double_hinge/{d}/split_{k}.npz"
            for d in DH_DATASETS
            for k in SPLITS
        ],
        timing=[
            f"results/double_hinge/{d}/timing_split_{k}.csv"
            for d in DH_DATASETS
            for k in SPLITS
        ],
    output:
        csv=report(
            "results/tables/double_hinge.csv",
            caption="../report/double_hinge.rst",
            category="SVM with a double-hinge reject option",
            labels={"table": "Double hinge vs post-hoc rejection (every cell)"},
        ),
        md=report(
            "results/tables/double_hinge.md",
            caption="../report/double_hinge.rst",
            category="SVM with a double-hinge reject option",
            labels={"table": "Double hinge: cost risks, ranks, Wilcoxon"},
        ),
        tex="results/tables/double_hinge.tex",
        timing="results/tables/timing_double_hinge.md",
        figures=[
            report(
                f"results/figures/double_hinge/{d}.png",
                caption="../report/double_hinge_figure.rst",
                category="SVM with a double-hinge reject option",
                labels={"figure": f"RC plane and cost risk, {d}"},
            )
            for d in DH_DATASETS
        ],
        figure_copies=[
            path
            for d in DH_DATASETS
            for path in figure_copies(f"results/figures/double_hinge/{d}.png")
        ],
    log:
        "logs/double_hinge_report.log",
    conda:
        "../../envs/rejectopt.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        datasets=DH_DATASETS,
        figure_formats=FIGURE_FORMATS,
    script:
        "../scripts/double_hinge_report.py"
