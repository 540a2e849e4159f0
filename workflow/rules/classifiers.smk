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
    # liblinear and scikit-learn's LR solvers use one core; SVOR's Newton systems and XGBoost use two.
    threads: lambda w: 2 if w.classifier in ("svor", "xgb") else 1
    resources:
        mem_mb=lambda w: 16000 if w.dataset in ("msd", "covtype", "codrna") else 4000,
        runtime=lambda w: 240 if w.dataset in ("msd", "covtype", "codrna") else 60,
    log:
        "logs/train_classifier/{dataset}/{classifier}/split_{split}.log",
    benchmark:
        "results/benchmarks/train_classifier/{dataset}/{classifier}/split_{split}.tsv"
    script:
        "../scripts/train_classifier.py"
