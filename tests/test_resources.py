"""Declared job resources and the job granularity (rejectopt.pipeline.resources), and the rules that use them."""

import csv
import math
import re
import subprocess
import sys
from pathlib import Path

import pytest

from rejectopt.datasets import REGISTRY
from rejectopt.pipeline.resources import (
    JOB_STARTUP_CPU_S,
    MEMORY_FLOOR_MB,
    MEMORY_MARGIN,
    RUNTIME_FLOOR_MIN,
    RUNTIME_MARGIN,
    SPLIT_JOB_CPU_S,
    STAGES,
    job_resources,
    splits_per_job,
    work_size,
)

REPO = Path(__file__).resolve().parents[1]
#: The stand-in measurements of benchmarks/bench_scale.py the cost models were fitted to.
RECORDS = REPO / "benchmarks" / "bench_scale_records.csv"


def test_declaration_is_the_fitted_cost_with_the_stated_margins():
    cost = STAGES["train_classifier/xgb"]
    n, d, k = 581_012, 54, 7
    rss = cost.m0 + cost.m1 * n * d / 1e6 + cost.m2 * n * k / 1e6
    cpu = cost.c0 + cost.a * (n * d * k / 1e6) ** cost.b
    got = job_resources("train_classifier", n, d, k, classifier="xgb", splits=5, threads=1)
    assert got["mem_mb"] == math.ceil((MEMORY_MARGIN * rss + MEMORY_FLOOR_MB) / 100) * 100
    assert got["runtime"] == max(RUNTIME_FLOOR_MIN, math.ceil(RUNTIME_MARGIN * cpu * 5 / 60))


def test_runtime_grows_with_splits_and_shrinks_with_threads_memory_does_not():
    one = job_resources("train_classifier", 499_671, 90, 41, classifier="svor", splits=1)
    five = job_resources("train_classifier", 499_671, 90, 41, classifier="svor", splits=5)
    two_threads = job_resources(
        "train_classifier", 499_671, 90, 41, classifier="svor", splits=5, threads=2
    )
    assert five["mem_mb"] == one["mem_mb"] == two_threads["mem_mb"]
    assert five["runtime"] > one["runtime"] and two_threads["runtime"] < five["runtime"]


def test_a_plugin_classifier_is_declared_as_the_costliest_registered_one():
    plugin = job_resources("train_classifier", 100_000, 50, 10, classifier="my_forest", splits=5)
    registered = [
        job_resources("train_classifier", 100_000, 50, 10, classifier=c, splits=5)
        for c in ("lr", "svm", "svor", "xgb")
    ]
    assert plugin["runtime"] >= max(r["runtime"] for r in registered) * 0.99


def test_unknown_rule_and_bad_size_are_named():
    with pytest.raises(KeyError, match="no cost model for rule 'train_forest'"):
        job_resources("train_forest", 10, 2, 2)
    with pytest.raises(ValueError, match=r"job_resources\('learn_score'\).*n=0"):
        job_resources("learn_score", 0, 2, 2, classifier="lr")


def test_only_costly_pairs_get_one_job_per_split():
    """The threshold compares the fitted CPU-s of all splits with SPLIT_JOB_CPU_S, from the registry's sizes."""
    for spec in REGISTRY.values():
        for classifier in ("lr", "svm", "xgb") if spec.task == "classification" else ("svor",):
            cpu = STAGES[f"train_classifier/{classifier}"].cpu_s(
                spec.n_examples, spec.n_features, spec.n_classes
            )
            expected = 1 if 5 * cpu > SPLIT_JOB_CPU_S else 5
            assert (
                splits_per_job(classifier, spec.n_examples, spec.n_features, spec.n_classes, 5)
                == expected
            )
    covtype, letter = REGISTRY["covtype"], REGISTRY["letter"]
    assert splits_per_job("xgb", covtype.n_examples, covtype.n_features, covtype.n_classes, 5) == 1
    assert splits_per_job("lr", letter.n_examples, letter.n_features, letter.n_classes, 5) == 5


def test_double_hinge_jobs_are_split_by_the_same_rule_and_the_threshold_is_the_configs():
    """codrna's double-hinge splits together are priced above the threshold (one job per split), the
    other binary datasets' below; threshold 0 splits every job, a negative one is refused."""
    cost = STAGES["double_hinge_split"]
    for name in ("codrna", "ijcnn", "marketing", "phishing"):
        spec = REGISTRY[name]
        expected = (
            1
            if 5 * cost.cpu_s(spec.n_examples, spec.n_features, spec.n_classes) > SPLIT_JOB_CPU_S
            else 5
        )
        got = splits_per_job(
            None, spec.n_examples, spec.n_features, spec.n_classes, 5, stage="double_hinge_split"
        )
        assert got == expected, name
        assert (got == 1) == (name == "codrna"), name
    letter = REGISTRY["letter"]
    shape = (letter.n_examples, letter.n_features, letter.n_classes)
    assert (
        splits_per_job("lr", *shape, 5) == 5 and splits_per_job("lr", *shape, 5, threshold=0) == 1
    )
    with pytest.raises(ValueError, match="threshold must be >= 0 CPU seconds, got -1"):
        splits_per_job("lr", *shape, 5, threshold=-1)


def _records():
    with open(RECORDS) as handle:
        return list(csv.DictReader(handle))


def test_every_measured_stand_in_job_fits_its_declaration_not_far_above():
    """Peak RSS and wall time of every recorded stand-in job against job_resources at its n, d, K."""
    rows = _records()
    assert {r["dataset"] for r in rows} >= {
        "covtype",
        "codrna",
        "msd",
        "sensorless",
        "facebook",
        "superconduct",
        "ijcnn",
    }
    for r in rows:
        classifier = (
            r["job"].split("/")[1] if r["rule"] in ("train_classifier", "learn_score") else None
        )
        threads = int(r["threads"])
        got = job_resources(
            r["rule"],
            int(r["n"]),
            int(r["d"]),
            int(r["k"]),
            classifier=classifier,
            splits=1,
            threads=threads,
        )
        where = f"{r['rule']}/{r['job']} at {r['fraction']}"
        assert float(r["rss_mb"]) <= got["mem_mb"], where
        assert float(r["cpu_s"]) / threads <= 60 * got["runtime"], where
        # not far above: within the margins plus the floor, and never more than 3x the measured peak + 500 MB
        assert got["mem_mb"] <= 3 * float(r["rss_mb"]) + 500, where


@pytest.mark.pipeline
def test_the_pipeline_declares_the_library_resources_and_splits_costly_pairs(tmp_path):
    """A dry run of covtype + letter: covtype's costly pairs get one job per split, letter's one job
    each, and the jobs declare job_resources' values."""
    cmd = [
        sys.executable,
        "-m",
        "snakemake",
        "--snakefile",
        str(REPO / "Snakefile"),
        "--directory",
        str(tmp_path),
        "-n",
        "--config",
        "datasets=[covtype,letter]",
        "landmarks={enabled: false}",
        "ood={datasets: []}",
        "double_hinge={datasets: []}",
    ]
    run = subprocess.run(cmd, check=False, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    plan = run.stdout + run.stderr
    counts = {
        line.split()[0]: int(line.split()[1])
        for line in plan.splitlines()
        if len(line.split()) == 2 and line.split()[1].isdigit()
    }
    cov = REGISTRY["covtype"]
    split_pairs = [
        c
        for c in ("lr", "svm", "xgb")
        if splits_per_job(c, cov.n_examples, cov.n_features, cov.n_classes, 5) == 1
    ]
    assert "xgb" in split_pairs
    assert counts["train_classifier_split"] == 5 * len(split_pairs)
    assert counts["train_classifier"] == 3 + 3 - len(split_pairs)
    block = re.search(
        r"rule train_classifier_split:.*?wildcards: pair=covtype/xgb, split=\d+\n\s*resources: ([^\n]*)",
        plan,
        re.DOTALL,
    )
    assert block, plan[-3000:]
    declared = dict(item.split("=", 1) for item in block.group(1).split(", "))
    expected = job_resources(
        "train_classifier", cov.n_examples, cov.n_features, cov.n_classes, classifier="xgb"
    )
    assert (
        int(declared["mem_mb"]) == expected["mem_mb"]
        and int(declared["runtime"]) == expected["runtime"]
    )


def test_cost_model_known_answer_at_covtypes_size():
    """LR's training at covtype's size (581,012 x 54, 7 classes), and the work sizes it grows with."""
    cost = STAGES["train_classifier/lr"]
    assert (round(cost.cpu_s(581_012, 54, 7), 2), round(cost.rss_mb(581_012, 54, 7), 1)) == (
        8.69,
        622.7,
    )
    assert (
        work_size("n", 1000, 20, 3),
        work_size("nd", 1000, 20, 3),
        work_size("ndk", 1000, 20, 3),
    ) == (0.001, 0.02, 0.06)
    with pytest.raises(
        ValueError, match=r"StageCost.size must be one of \['n', 'nd', 'ndk'\], got 'dk'"
    ):
        work_size("dk", 1000, 20, 3)
    assert (splits_per_job("xgb", 581_012, 54, 7, 5), splits_per_job("lr", 581_012, 54, 7, 5)) == (
        1,
        5,
    )


def test_the_job_start_up_is_the_measured_one_and_prices_the_split_threshold():
    """JOB_STARTUP_CPU_S covers the cheapest recorded training job of every classifier (start-up, a
    small fit and all), within the 1 CPU-s Snakemake's sampler misses of a job that short; 4 extra
    start-ups are 4 % of SPLIT_JOB_CPU_S."""
    cheapest = {}
    for r in _records():
        if r["rule"] == "train_classifier":
            key = r["job"].split("/")[1]
            cheapest[key] = min(cheapest.get(key, math.inf), float(r["cpu_s"]))
    assert set(cheapest) == {"lr", "svm", "svor", "xgb"}
    assert max(cheapest.values()) <= JOB_STARTUP_CPU_S <= max(cheapest.values()) + 1
    assert 4 * JOB_STARTUP_CPU_S == pytest.approx(0.04 * SPLIT_JOB_CPU_S)
