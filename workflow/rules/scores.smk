# Learn an uncertainty score on Trn2 and select its C on Val2 by AuRC (Section 5.1).

BENCHMARKS += [
    f"results/benchmarks/learn_score/{d}/{c}/{s}/split_{k}.tsv"
    for d in DATASETS
    for (c, s, k) in score_files(d)
]


rule learn_score:
    input:
        data="results/data/{dataset}/data.npz",
        splits="results/data/{dataset}/splits.npz",
        classifier="results/classifiers/{dataset}/{classifier}/split_{split}.npz",
    output:
        "results/scores/{dataset}/{classifier}/{score}/split_{split}.npz",
    log:
        "logs/learn_score/{dataset}/{classifier}/{score}/split_{split}.log",
    benchmark:
        "results/benchmarks/learn_score/{dataset}/{classifier}/{score}/split_{split}.tsv"
    conda:
        "../../envs/rejectopt.yaml"
    # the score learners run single-threaded (SELE limits BLAS to one thread: small products).
    threads: 1
    resources:
        mem_mb=heavy(4000, 16000),
        runtime=heavy(60, 240),
    params:
        task=lambda w: TASK[w.dataset],
        C_grid=config["C_score"],
        seed=config["seed"],
        chunk_size=config["sele_chunk_size"],
        plugins=config.get("plugins") or [],
    script:
        "../scripts/learn_score.py"
