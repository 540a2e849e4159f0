# Raw files (downloaded or copied from data_mirror, checksummed), prepared arrays, splits.
# A custom dataset (config custom_datasets) is read from its own file instead of raw files.


rule download_raw:
    output:
        f"{RAW_DIR}/{{dataset}}/{{filename}}",
    log:
        "logs/download_raw/{dataset}/{filename}.log",
    conda:
        "../../envs/rejectopt.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=60,
    # No params: where the bytes come from (data_mirror, download_base) is read from the config
    # by the script. A raw file's content is pinned by its sha256, so a verified file is kept
    # when the source changes (e.g. a run without data_mirror after one with it) instead of
    # Snakemake deleting it and fetching it again.
    script:
        "../scripts/download_raw.py"


rule prepare_dataset:
    input:
        prepare_inputs,
    output:
        "results/data/{dataset}/data.npz",
    log:
        "logs/prepare_dataset/{dataset}.log",
    conda:
        "../../envs/rejectopt.yaml"
    threads: 1
    resources:
        mem_mb=declared("prepare_dataset", "mem_mb"),
        runtime=declared("prepare_dataset", "runtime"),
    params:
        raw_dir=RAW_DIR,
        custom=lambda w: PLAN.custom.get(w.dataset),
    script:
        "../scripts/prepare_dataset.py"


rule make_splits:
    input:
        "results/data/{dataset}/data.npz",
    output:
        "results/data/{dataset}/splits.npz",
    log:
        "logs/make_splits/{dataset}.log",
    conda:
        "../../envs/rejectopt.yaml"
    threads: 1
    resources:
        mem_mb=declared("make_splits", "mem_mb"),
        runtime=declared("make_splits", "runtime"),
    params:
        ratios=lambda w: split_ratios(w.dataset),
        n_splits=config["n_splits"],
        seed=config["seed"],
    script:
        "../scripts/make_splits.py"
