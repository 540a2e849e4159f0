# Learn the uncertainty scores on Trn2 and select their C on Val2 by AuRC (Section 5.1): one job per
# (dataset, classifier) learns every score of the classifier on every split (most scores fit in less
# than a job's start-up, rejectopt.pipeline.resources.JOB_STARTUP_CPU_S), each (score, split) seeded on its own.

BENCHMARKS += [
    f"results/benchmarks/learn_score/{d}/{c}.tsv"
    for d in DATASETS
    for c in classifiers_of(d)
]


rule learn_score:
    input:
        data="results/data/{dataset}/data.npz",
        splits="results/data/{dataset}/splits.npz",
        classifiers=lambda w: [
            classifier_file(w.dataset, w.classifier, k) for k in SPLITS
        ],
        # the files of the plugins' scores it learns: an edited plugin reruns the job
        plugins=lambda w: PLAN.code_files_of(w.classifier),
    output:
        "results/scores/{dataset}/{classifier}.npz",
    log:
        "logs/learn_score/{dataset}/{classifier}.log",
    benchmark:
        "results/benchmarks/learn_score/{dataset}/{classifier}.tsv"
    conda:
        "../../envs/rejectopt.yaml"
    # the score learners run single-threaded (SELE limits BLAS to one thread: small products).
    threads: 1
    resources:
        mem_mb=declared("learn_score", "mem_mb"),
        runtime=declared("learn_score", "runtime", splits=len(SPLITS)),
    params:
        task=lambda w: TASK[w.dataset],
        scores=lambda w: scores_of(w.classifier),
        classifier_files=lambda w: {
            k: classifier_file(w.dataset, w.classifier, k) for k in SPLITS
        },
        C_grid=config["C_score"],
        seed=config["seed"],
        chunk_size=config["sele_chunk_size"],
        # only the plugins of this classifier and its scores: another classifier's new plugin
        # score changes no param here, so its learn_score jobs do not rerun
        plugins=lambda w: plugins_of(
            config.get("plugins"), [w.classifier, *scores_of(w.classifier)]
        ),
    script:
        "../scripts/learn_score.py"
