# Raw files (downloaded or copied from data_mirror, checksummed), prepared arrays, splits.
# A custom dataset (config custom_datasets) is read from its own file instead of raw files.

from rejectopt.datasets import get_spec


def prepare_inputs(wildcards):
    """The verified raw files of a paper dataset, or the file of a custom dataset."""
    if wildcards.dataset in PLAN.custom:
        return [str(PLAN.custom[wildcards.dataset].path)]
    return [f"{RAW_DIR}/{wildcards.dataset}/{f.name}" for f in get_spec(wildcards.dataset).files]


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
        prepare_inputs,
    output:
        "results/data/{dataset}/data.npz",
    params:
        raw_dir=RAW_DIR,
        custom=lambda w: PLAN.custom.get(w.dataset),
    conda:
        "../../envs/rejectopt.yaml"
    threads: 1
    resources:
        mem_mb=heavy(3000, 12000),
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
