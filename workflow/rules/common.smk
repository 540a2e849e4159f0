# Setup done once: config validation, the datasets this run covers, input functions.

import logging
from pathlib import Path

from snakemake.utils import validate

from rejectopt.datasets import available_in_mirror, get_spec
from rejectopt.report import TABLES
from rejectopt.splits import check_ratios


validate(config, "../schemas/config.schema.yaml")

#: The repository root, so that its resources resolve from any --directory.
REPO = Path(workflow.main_snakefile).parent

for _name, _ratios in config["split_ratios"].items():
    try:
        check_ratios(_ratios)
    except ValueError as err:
        raise ValueError(f"config split_ratios.{_name}: {err}") from None

MIRROR = config.get("data_mirror")
if MIRROR is not None and not Path(MIRROR).is_dir():
    raise ValueError(
        f"config data_mirror={MIRROR!r} is not a folder; point it at a folder laid out as "
        "<mirror>/<dataset>/<file>[.xz|.gz] or set it to null to download"
    )


def _datasets_to_run():
    """Configured datasets; with a mirror, those the mirror holds (the rest are listed, loudly)."""
    wanted = list(config["datasets"])
    if MIRROR is None:
        return wanted, []
    present = [d for d in wanted if available_in_mirror(d, MIRROR)]
    absent = [d for d in wanted if d not in present]
    return present, absent


DATASETS, NOT_IN_MIRROR = _datasets_to_run()
if NOT_IN_MIRROR:
    logging.getLogger("rejectopt").warning(
        "data_mirror %s does not hold %s: skipped (they need the official download; "
        "run without data_mirror to fetch them)",
        MIRROR,
        ", ".join(NOT_IN_MIRROR),
    )
if not DATASETS:
    raise ValueError(f"none of the configured datasets {config['datasets']} is available in data_mirror={MIRROR!r}")

SPLITS = list(range(config["n_splits"]))
TASK = {d: get_spec(d).task for d in DATASETS}
RAW_DIR = config.get("raw_dir", "results/raw")


wildcard_constraints:
    dataset="|".join(DATASETS),
    classifier="lr|svm|svor|xgb",
    score="sele|reg|tcp",
    split=r"\d+",


def split_ratios(dataset):
    return config["split_ratios"].get(dataset, config["split_ratios"]["default"])


def classifiers_of(dataset):
    return config["classifiers"].get(TASK[dataset], [])


def scores_of(classifier):
    return config["scores"].get(classifier, [])


def raw_files(wildcards):
    return [f"{RAW_DIR}/{wildcards.dataset}/{f.name}" for f in get_spec(wildcards.dataset).files]


def classifier_file(dataset, classifier, split):
    return f"results/classifiers/{dataset}/{classifier}/split_{split}.npz"


def score_file(dataset, classifier, score, split):
    return f"results/scores/{dataset}/{classifier}/{score}/split_{split}.npz"


def classifier_files(dataset):
    return {(c, k): classifier_file(dataset, c, k) for c in classifiers_of(dataset) for k in SPLITS}


def score_files(dataset):
    return {
        (c, s, k): score_file(dataset, c, s, k)
        for c in classifiers_of(dataset)
        for s in scores_of(c)
        for k in SPLITS
    }


def dataset_summaries():
    return [f"results/datasets/{d}/summary.csv" for d in DATASETS]


def all_outputs():
    return [
        "results/summary.csv",
        *table_outputs(),
        "results/tables/paper_comparison.md",
        "results/tables/timing.md",
        "results/tables/environment.md",
        *landmark_outputs(),  # workflow/rules/landmarks.smk
    ]


def benchmark_files():
    """Benchmark records of every training job of this run."""
    files = []
    for d in DATASETS:
        files += [
            f"results/benchmarks/train_classifier/{d}/{c}/split_{k}.tsv"
            for (c, k) in classifier_files(d)
        ]
        files += [
            f"results/benchmarks/learn_score/{d}/{c}/{s}/split_{k}.tsv"
            for (c, s, k) in score_files(d)
        ]
    return files + landmark_benchmark_files()  # workflow/rules/landmarks.smk


def table_outputs():
    """The tables whose classifier this run trains."""
    classifiers = {c for d in DATASETS for c in classifiers_of(d)}
    return [
        f"results/tables/{name}.{ext}"
        for name, spec in TABLES.items()
        if spec.classifier in classifiers
        for ext in ("csv", "md", "tex")
    ]
