# Train a classifier on Trn1 and select its C on Val1 (Section 5.2). Granularity by cost
# (rejectopt.pipeline.resources): a cheap (dataset, classifier) pair trains every split in one job, so it pays
# a job's start-up (rejectopt.pipeline.resources.JOB_STARTUP_CPU_S) once (145 jobs became 29 in the offline
# run); a pair whose splits together cost more than config split_job_cpu_s by its dataset's size
# (covtype's XGBoost, msd's SVOR, ...) gets one job per split, so that cores or cluster nodes run
# them side by side. Each split is seeded on its own, so its file is the same either way. Rerun one
# pair with its files as targets and --forcerun train_classifier train_classifier_split.

SPLIT_PAIRS = split_pairs()

BENCHMARKS += [
    f"results/benchmarks/train_classifier/{d}/{c}.tsv"
    for d in DATASETS
    for c in classifiers_of(d)
    if f"{d}/{c}" not in SPLIT_PAIRS
] + [
    f"results/benchmarks/train_classifier/{p}/split_{k}.tsv"
    for p in SPLIT_PAIRS
    for k in SPLITS
]


# A split job of a costly pair wins over the all-splits job of rule train_classifier.
ruleorder: train_classifier_split > train_classifier


rule train_classifier:
    input:
        data="results/data/{dataset}/data.npz",
        splits="results/data/{dataset}/splits.npz",
    output:
        [classifier_file("{dataset}", "{classifier}", k) for k in SPLITS],
    log:
        "logs/train_classifier/{dataset}/{classifier}.log",
    benchmark:
        "results/benchmarks/train_classifier/{dataset}/{classifier}.tsv"
    conda:
        "../../envs/rejectopt.yaml"
    # As registered: LR, the SVMs and XGBoost use one core (XGBoost on 2 threads of a shared core ran
    # 16x slower: pendigit 167 s against 10 s); SVOR's Newton systems two.
    threads: lambda w: get_classifier(w.classifier).threads
    resources:
        mem_mb=declared("train_classifier", "mem_mb"),
        runtime=declared("train_classifier", "runtime", splits=len(SPLITS)),
    params:
        dataset=lambda w: w.dataset,
        classifier=lambda w: w.classifier,
        split_files=lambda w: {
            k: classifier_file(w.dataset, w.classifier, k) for k in SPLITS
        },
        C_grid=config["C_classifier"],
        seed=config["seed"],
    script:
        "../scripts/train_classifier.py"


rule train_classifier_split:
    input:
        data=lambda w: f"results/data/{job_pair(w)[0]}/data.npz",
        splits=lambda w: f"results/data/{job_pair(w)[0]}/splits.npz",
    output:
        "results/classifiers/{pair}/split_{split}.npz",
    log:
        "logs/train_classifier/{pair}/split_{split}.log",
    benchmark:
        "results/benchmarks/train_classifier/{pair}/split_{split}.tsv"
    wildcard_constraints:
        pair="|".join(SPLIT_PAIRS) or "none",
    conda:
        "../../envs/rejectopt.yaml"
    threads: lambda w: get_classifier(job_pair(w)[1]).threads
    resources:
        mem_mb=declared("train_classifier", "mem_mb"),
        runtime=declared("train_classifier", "runtime"),
    params:
        dataset=lambda w: job_pair(w)[0],
        classifier=lambda w: job_pair(w)[1],
        split_files=lambda w: {
            int(w.split): f"results/classifiers/{w.pair}/split_{w.split}.npz"
        },
        C_grid=config["C_classifier"],
        seed=config["seed"],
    script:
        "../scripts/train_classifier.py"
