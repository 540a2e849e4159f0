"""README line 1's demo, rebuilt: under the lock its results have the sha256 recorded in
tests/data/demo_baseline/sha256.txt, so a run next month or next year can tell an environment change
from a code change (``sha256sum -c`` on that file after README line 1 says the same)."""

import hashlib
import re
import shlex

import pandas as pd
import pytest
from support import DEMO_MIRROR, REPO, assert_summary_close, lock_differences, snakemake

pytestmark = pytest.mark.pipeline

RECORD = REPO / "tests" / "data" / "demo_baseline"


def readme_demo_arguments():
    """The Snakemake arguments of README line 1, as written there (its mirror made absolute, since the
    test runs in a folder of its own)."""
    line = (REPO / "README.md").read_text(encoding="utf-8").split("```bash\n", 1)[1].splitlines()[0]
    command = line.rsplit("&& .venv/bin/snakemake ", 1)[1]
    return [
        re.sub(r"^data_mirror=.*", f"data_mirror={DEMO_MIRROR}", word)
        for word in shlex.split(command)
    ]


def recorded_sha256():
    """{path relative to the run's folder: sha256} of the record."""
    pairs = [
        line.split("  ", 1) for line in (RECORD / "sha256.txt").read_text().splitlines() if line
    ]
    return {path: digest for digest, path in pairs}


def test_the_record_covers_the_summary_and_every_table_of_the_paper():
    recorded = recorded_sha256()
    assert "results/summary.csv" in recorded
    for name in ("table3a", "table3b", "table3c", "table4"):
        assert {f"results/tables/{name}.{ext}" for ext in ("csv", "md", "tex")} <= set(recorded), (
            name
        )
    assert all(re.fullmatch(r"[0-9a-f]{64}", digest) for digest in recorded.values())
    # What depends on the machine or the day is not recorded: timings, the environment page.
    assert not [path for path in recorded if "timing" in path or "environment" in path]


def test_the_demo_arguments_are_read_from_the_readme():
    assert readme_demo_arguments() == [
        "--cores",
        "2",
        "--config",
        f"data_mirror={DEMO_MIRROR}",
        "datasets=[shuttle,sattelite,abalone]",
    ]


def test_the_tolerance_outside_the_lock_passes_rounding_and_catches_a_broken_score():
    """The recorded summary against itself moved as another environment moves it (every AuRC by 5 % of
    its risk_full, above the largest move measured) passes; SELE broken to a random order (its AuRC set to
    risk_full, the random order's) fails, naming the cells."""
    recorded = pd.read_csv(RECORD / "summary.csv")
    moved = recorded.assign(aurc=recorded["aurc"] + 0.05 * recorded["risk_full"])
    assert_summary_close(moved, recorded)
    broken = recorded.copy()
    sele = broken["score"] == "sele"
    broken.loc[sele, "aurc"] = broken.loc[sele, "risk_full"]
    with pytest.raises(AssertionError, match="AuRCs moved by more than 10% of risk_full"):
        assert_summary_close(broken, recorded)


@pytest.mark.slow
def test_readme_demo_reproduces_its_recorded_results(tmp_path):
    """Under the lock, every recorded file of the demo is byte-identical (its sha256); in another
    environment the per-split AuRCs agree within ``support.AURC_TOLERANCE_OUTSIDE_LOCK``, since a fit's
    last bits may then differ. The record was made on x86-64 with the OpenBLAS kernels the workflow
    pins (``rejectopt.pipeline.config.blas_environment``)."""
    run = snakemake(tmp_path, *readme_demo_arguments(), timeout=3600)
    assert run.returncode == 0, run.stderr[-5000:]
    if lock_differences():
        assert_summary_close(
            pd.read_csv(tmp_path / "results/summary.csv"), pd.read_csv(RECORD / "summary.csv")
        )
        return
    found = {
        path: hashlib.sha256((tmp_path / path).read_bytes()).hexdigest()
        for path in recorded_sha256()
    }
    assert found == recorded_sha256()
