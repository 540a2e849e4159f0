# Raw files (downloaded or copied from data_mirror, checksummed), prepared arrays, splits.


rule download_raw:
    output:
        f"{RAW_DIR}/{{dataset}}/{{filename}}",
    params:
        mirror=MIRROR,
    conda:
        "../../envs/rejectopt.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=60,
    log:
        "logs/download_raw/{dataset}/{filename}.log",
    script:
        "../scripts/download_raw.py"


rule prepare_dataset:
    input:
        raw_files,
    output:
        "results/data/{dataset}/data.npz",
    params:
        raw_dir=RAW_DIR,
    conda:
        "../../envs/rejectopt.yaml"
    threads: 1
    resources:
        mem_mb=lambda w: 12000 if w.dataset in ("msd", "covtype", "codrna") else 3000,
        runtime=30,
    log:
        "logs/prepare_dataset/{dataset}.log",
    script:
        "../scripts/prepare_dataset.py"


rule make_splits:
    input:
        "results/data/{dataset}/data.npz",
    output:
        "results/data/{dataset}/splits.npz",
    params:
        ratios=lambda w: split_ratios(w.dataset),
        n_splits=config["n_splits"],
        seed=config["seed"],
    conda:
        "../../envs/rejectopt.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    log:
        "logs/make_splits/{dataset}.log",
    script:
        "../scripts/make_splits.py"
