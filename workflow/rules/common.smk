# Setup done once: plugins, config validation, the run's plan, wildcard constraints, shared helpers.
# Method and dataset names are read off the library's registries (rejectopt.pipeline.config.plan_run);
# each later stage appends its own final outputs to TARGETS (rule all), its per-dataset summaries
# to SUMMARIES and its benchmark records to BENCHMARKS.

import functools
import hashlib
import logging
import os
import warnings
from pathlib import Path

import yaml

import rejectopt
from rejectopt.datasets import get_spec, peek_custom
from rejectopt.pipeline.config import (
    blas_environment,
    coerce_numbers,
    load_plugins,
    plan_run,
    plugins_of,
    validate_config,
)
from rejectopt.pipeline.experiments import double_hinge as dh_experiment
from rejectopt.classifiers import get_classifier
from rejectopt.datasets import REGISTRY as DATASET_REGISTRY
from rejectopt.pipeline.resources import job_resources, splits_per_job
from rejectopt.pipeline import load_experiments

# The same numbers on every x86-64 CPU with AVX2: the jobs (child processes, SLURM jobs) inherit
# the pinned OpenBLAS kernels (rejectopt.pipeline.config.blas_environment).
os.environ.update(blas_environment())

#: The workflow's own folder (the one holding the Snakefile), read from this file's location, not
#: from the main Snakefile: imported as a Snakemake ``module`` from a user's Snakefile, the main
#: Snakefile is the user's, and the schemas and resources are still here.
REPO = Path(workflow.current_basedir.get_path_or_uri(secret_free=True)).parents[1]

# The jobs import this workflow's own library: its src/ goes first on their PYTHONPATH (inherited
# by local jobs and SLURM jobs alike). A conda environment of envs/rejectopt.yaml holds the
# dependencies but not rejectopt itself, which pip could not install from a relative path there.
SRC = REPO / "src"
if os.environ.get("PYTHONPATH", "").split(os.pathsep)[0] != str(SRC):
    os.environ.update(
        PYTHONPATH=os.pathsep.join(
            p for p in (str(SRC), os.environ.get("PYTHONPATH")) if p
        )
    )
if Path(rejectopt.__file__).resolve().parent != (SRC / "rejectopt").resolve():
    logging.getLogger("rejectopt").warning(
        "Snakemake plans with the rejectopt installed at %s, its jobs run the workflow's own %s: "
        "install this clone (pip install -e %s) so that both are the same code",
        Path(rejectopt.__file__).parent,
        SRC / "rejectopt",
        REPO,
    )

# The locks behind README lines 1 and 2 (requirements/lock.sh), named on the environment page with
# their sha256; the digests are the environment rule's params, so a refreshed lock reruns that page.
LOCKS = [REPO / "requirements" / name for name in ("pipeline.txt", "test.txt")]
LOCK_SHA256 = [
    hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else None
    for path in LOCKS
]

# Plugins first: their scores must be registered before the names in the config are checked.
config.update(coerce_numbers(dict(config)))
load_plugins(config.get("plugins") or [])
validate_config(
    config, yaml.safe_load((REPO / "workflow/schemas/config.schema.yaml").read_text())
)
PLAN = plan_run(config)
# With the config: a misspelt experiment_settings NAME, or a settings() that raises, is refused here.
USER_EXPERIMENTS = load_experiments(config.get("experiments") or [], config=config)

MIRROR = config.get("data_mirror")
DATASETS = PLAN.datasets
if PLAN.skipped:
    logging.getLogger("rejectopt").warning(
        "data_mirror %s does not hold %s: skipped (they need the official download; "
        "run without data_mirror to fetch them)",
        MIRROR,
        ", ".join(PLAN.skipped),
    )

SPLITS = list(range(config["n_splits"]))
TASK = PLAN.task
RAW_DIR = config.get("raw_dir", "results/raw")
#: Every figure is written in these formats (config figure_formats): the PNG the report shows and,
#: beside it with the same stem, each further one (PDF by default: vector graphics for papers).
FIGURE_FORMATS = config.get("figure_formats", ["png", "pdf"])

TARGETS = []
SUMMARIES = []
# Each rule's benchmark: record is results/benchmarks/<rule>/...tsv, so the run writes nothing outside
# results/, logs/ and .snakemake/ (benchmarks/ holds the repository's own scripts). BENCHMARKS: the
# records the timing table reads.
BENCHMARKS = []


wildcard_constraints:
    dataset="|".join(DATASETS),
    classifier="|".join(PLAN.classifiers_run()) or "none",
    score="|".join(PLAN.scores_run()) or "none",
    split=r"\d+",
    experiment="|".join(USER_EXPERIMENTS) or "none",


#: The size of scikit-learn's breast cancer set (569 x 30, 2 classes), run by the double-hinge
#: experiment beside the run's datasets.
BREAST_CANCER_SHAPE = (569, 30, 2)


@functools.cache
def dataset_shape(dataset):
    """(n, d, K) that sizes a dataset's jobs (rejectopt.pipeline.resources): Table 2's for the paper's
    datasets; for a custom one its rows and features read off its file's header and its declared
    n_classes (10 when undeclared: declare it to size the jobs of a many-class dataset).
    """
    if dataset in PLAN.custom:
        custom = PLAN.custom[dataset]
        shape = peek_custom(custom)  # the file's header only, as the plan read it
        return (
            PLAN.n_examples.get(dataset, shape["n"]),
            shape["d"],
            getattr(custom, "n_classes", None) or 10,
        )
    if dataset in DATASET_REGISTRY:
        spec = DATASET_REGISTRY[dataset]
        return spec.n_examples, spec.n_features, spec.n_classes
    return BREAST_CANCER_SHAPE


def declared(rule_name, resource, splits=1):
    """A resource callable: the ``resource`` (mem_mb or runtime) a job of rule ``rule_name``
    declares for its wildcards' dataset (and classifier), covering ``splits`` splits
    (rejectopt.pipeline.resources)."""

    def value(wildcards):
        dataset, classifier = job_pair(wildcards)
        threads = (
            get_classifier(classifier).threads if rule_name == "train_classifier" else 1
        )
        return job_resources(
            rule_name,
            *dataset_shape(dataset),
            classifier=classifier,
            splits=splits,
            threads=threads,
        )[resource]

    return value


def job_pair(wildcards):
    """(dataset, classifier or None) of a job's wildcards; a per-split job names them as ``pair``."""
    if hasattr(wildcards, "pair"):
        dataset, classifier = wildcards.pair.split("/")
        return dataset, classifier
    return wildcards.dataset, getattr(wildcards, "classifier", None)


def split_pairs():
    """The "dataset/classifier" pairs trained with one job per split: those whose splits together
    cost more than config split_job_cpu_s by the dataset's size (rejectopt.pipeline.resources); none in a
    run of one split, where one job covers one split anyway."""
    return [
        f"{d}/{c}"
        for d in DATASETS
        for c in classifiers_of(d)
        if splits_per_job(
            c, *dataset_shape(d), len(SPLITS), threshold=config["split_job_cpu_s"]
        )
        < len(SPLITS)
    ]


def split_ratios(dataset):
    return config["split_ratios"].get(dataset, config["split_ratios"]["default"])


def classifiers_of(dataset):
    return PLAN.classifiers_of(dataset)


def scores_of(classifier):
    return PLAN.scores_of(classifier)


def classifier_file(dataset, classifier, split):
    return f"results/classifiers/{dataset}/{classifier}/split_{split}.npz"


def learned_scores_file(dataset, classifier):
    """The file learn_score writes: every score of a (dataset, classifier), on every split."""
    return f"results/scores/{dataset}/{classifier}.npz"


def classifier_files(dataset):
    return {
        (c, k): classifier_file(dataset, c, k)
        for c in classifiers_of(dataset)
        for k in SPLITS
    }


def score_files(dataset):
    return {
        (c, s, k): learned_scores_file(dataset, c)
        for c in classifiers_of(dataset)
        for s in scores_of(c)
        for k in SPLITS
    }


def staged_files(dataset):
    """``split -> {role: path}`` of the staged files a user's experiment reads (rejectopt.pipeline.experiments)."""
    return {
        k: {
            **{
                f"classifier/{c}": classifier_file(dataset, c, k)
                for c in classifiers_of(dataset)
            },
            **{
                f"scores/{c}": learned_scores_file(dataset, c)
                for c in classifiers_of(dataset)
                if scores_of(c)
            },
        }
        for k in SPLITS
    }


def double_hinge_inputs(dataset, splits=None):
    """The double-hinge jobs' inputs: data, splits and, where staged, LR's classifier files of
    ``splits`` (default: all of the run's)."""
    if dataset == dh_experiment.BREAST_CANCER:
        return {}
    inputs = {
        "data": f"results/data/{dataset}/data.npz",
        "splits": f"results/data/{dataset}/splits.npz",
    }
    if dataset in DATASETS and "lr" in classifiers_of(dataset):
        inputs["lr"] = [
            classifier_file(dataset, "lr", k)
            for k in (SPLITS if splits is None else splits)
        ]
    return inputs


def figure_copies(png):
    """A figure's files in the further figure_formats, beside its PNG path (or pattern) ``png``."""
    return [png[: -len(".png")] + f".{fmt}" for fmt in FIGURE_FORMATS if fmt != "png"]


def table_path(table, metric, ext):
    """A results table under one metric: AuRC's keeps the paper's name, the others add the metric."""
    if metric == "aurc":
        return f"results/tables/{table}.{ext}"
    return f"results/tables/{table}_{metric}.{ext}"


def prepare_inputs(wildcards):
    """The verified raw files of a paper dataset, or the file of a custom dataset."""
    if wildcards.dataset in PLAN.custom:
        return [str(PLAN.custom[wildcards.dataset].path)]
    return [
        f"{RAW_DIR}/{wildcards.dataset}/{f.name}"
        for f in get_spec(wildcards.dataset).files
    ]


def landmarks_mode(enabled, faces_mirror, mirror, custom_only=False):
    """How the 300-W landmark experiment runs: 'mirror', 'download' or None (not run).

    A run of custom datasets only downloads nothing: the official 300-W archive is fetched only
    by a run that downloads the paper's datasets too."""
    if not enabled:
        return None
    if faces_mirror is not None:
        return "mirror"
    if custom_only:
        logging.getLogger("rejectopt").warning(
            "the run's datasets are all custom_datasets: the 300-W landmark experiment is skipped "
            "(set faces_mirror=<folder with the offline faces> to run it, or landmarks='{enabled: false}' "
            "to silence this)"
        )
        return None
    if mirror is not None:
        logging.getLogger("rejectopt").warning(
            "data_mirror is set but faces_mirror is not: the 300-W landmark experiment is skipped "
            "(set faces_mirror=<folder with the 300-W faces in afw/, helen_testset/, helen_trainset/>, or run "
            "without data_mirror to download the official archive)"
        )
        return None
    return "download"


def predictor_cost(options):
    """Relative training time of a shape-predictor option set (dlib's defaults where unset)."""
    return (
        options.get("oversampling_amount", 20)
        * options.get("cascade_depth", 10)
        * options.get("num_trees_per_cascade_level", 500)
        * options.get("tree_depth", 4)
    )


def train_predictor_priority(wildcards):
    """Rule train_predictor (landmarks.smk): 1 + the option set's cost relative to the grid's
    costliest, so that the longest trainings start first."""
    grid = LANDMARKS["predictor_options_grid"]
    return 1 + predictor_cost(grid[int(wildcards.option)]) / max(
        map(predictor_cost, grid)
    )


# Every experiment's per-dataset rule (experiment_dataset, ood_split, double_hinge_split,
# double_hinge_one_split, train_landmarks) is the template of experiment_rule.smk under its own
# name.
module experiment_template:
    snakefile:
        "experiment_rule.smk"
    config:
        config
