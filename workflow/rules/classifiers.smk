# Train a classifier on Trn1 and select its C on Val1 (Section 5.2): one job per (dataset, classifier)
# trains every split (145 jobs of ~1 s start-up each became 29 in the offline run), each split
# seeded on its own and written to its own file as soon as it is done.

from rejectopt.classifiers import get_classifier

BENCHMARKS += [
    f"results/benchmarks/train_classifier/{d}/{c}.tsv"
    for d in DATASETS
    for c in classifiers_of(d)
]


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
        mem_mb=heavy(4000, 16000),
        runtime=heavy(60 * len(SPLITS), 240 * len(SPLITS)),
    params:
        split_files=lambda w: {
            k: classifier_file(w.dataset, w.classifier, k) for k in SPLITS
        },
        C_grid=config["C_classifier"],
        seed=config["seed"],
    script:
        "../scripts/train_classifier.py"
