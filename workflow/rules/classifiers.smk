# Train a classifier on Trn1 and select its C on Val1 (Section 5.2).

from rejectopt.classifiers import get_classifier

BENCHMARKS += [
    f"results/benchmarks/train_classifier/{d}/{c}/split_{k}.tsv"
    for d in DATASETS
    for (c, k) in classifier_files(d)
]


rule train_classifier:
    input:
        data="results/data/{dataset}/data.npz",
        splits="results/data/{dataset}/splits.npz",
    output:
        "results/classifiers/{dataset}/{classifier}/split_{split}.npz",
    log:
        "logs/train_classifier/{dataset}/{classifier}/split_{split}.log",
    benchmark:
        "results/benchmarks/train_classifier/{dataset}/{classifier}/split_{split}.tsv"
    conda:
        "../../envs/rejectopt.yaml"
    # As registered: LR, the SVMs and XGBoost use one core (XGBoost on 2 threads of a shared core ran
    # 16x slower: pendigit 167 s against 10 s, issue 18); SVOR's Newton systems two.
    threads: lambda w: get_classifier(w.classifier).threads
    resources:
        mem_mb=heavy(4000, 16000),
        runtime=heavy(60, 240),
    params:
        C_grid=config["C_classifier"],
        seed=config["seed"],
    script:
        "../scripts/train_classifier.py"
