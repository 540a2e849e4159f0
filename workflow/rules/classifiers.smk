# Train a classifier on Trn1 and select its C on Val1 (Section 5.2).


rule train_classifier:
    input:
        data="results/data/{dataset}/data.npz",
        splits="results/data/{dataset}/splits.npz",
    output:
        "results/classifiers/{dataset}/{classifier}/split_{split}.npz",
    params:
        C_grid=config["C_classifier"],
        seed=config["seed"],
    conda:
        "../../envs/rejectopt.yaml"
    threads: 2
    resources:
        mem_mb=lambda w: 16000 if w.dataset in ("msd", "covtype", "codrna") else 4000,
        runtime=lambda w: 240 if w.dataset in ("msd", "covtype", "codrna") else 60,
    log:
        "logs/train_classifier/{dataset}/{classifier}/split_{split}.log",
    benchmark:
        "results/benchmarks/train_classifier/{dataset}/{classifier}/split_{split}.tsv"
    script:
        "../scripts/train_classifier.py"
