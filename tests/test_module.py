"""The workflow imported as a Snakemake ``module`` from a user's own Snakefile in another folder."""

import subprocess
import sys

import pandas as pd
import pytest
from support import AURC_TOLERANCE_OUTSIDE_LOCK, DEMO_MIRROR, REPO, lock_differences

#: A user's Snakefile: the workflow's config.yaml, narrowed to one dataset of the demo mirror, one
#: split, logistic regression and REG with the C the CI configuration chooses (C_classifier = 100 on
#: Val1, C_score = 1 on Val2), and no side or contract experiment.
USER_SNAKEFILE = f"""\
from pathlib import Path

REJECTOPT = Path({str(REPO)!r})


configfile: REJECTOPT / "config.yaml"


config.update(
    data_mirror={str(DEMO_MIRROR)!r},
    datasets=["sattelite"],
    n_splits=1,
    classifiers={{"classification": ["lr"], "ordinal": []}},
    scores={{"lr": ["reg"]}},
    C_classifier=[100],
    C_score=[1],
    landmarks={{**config["landmarks"], "enabled": False}},
    ood={{**config["ood"], "datasets": []}},
    double_hinge={{**config["double_hinge"], "datasets": []}},
    experiments=[],
)


module rejectopt:
    snakefile:
        str(REJECTOPT / "Snakefile")
    config:
        config


use rule * from rejectopt as rejectopt_*


rule all:
    default_target: True
    input:
        rules.rejectopt_all.input,
"""


@pytest.mark.slow
def test_the_workflow_runs_as_a_module_of_a_users_snakefile(tmp_path):
    """The user's folder holds neither the schemas, the resources nor the scripts: they are found
    beside the workflow's own Snakefile. Its Table 3a equals the recorded one of the same
    configuration run directly (tests/data/pipeline_baseline, checked against a direct run by
    tests/test_pipeline.py): split 0 of sattelite, LR trained with C = 100, REG learned with C = 1.
    Exactly under the lock; in another environment within ``support.AURC_TOLERANCE_OUTSIDE_LOCK``."""
    (tmp_path / "Snakefile").write_text(USER_SNAKEFILE)
    run = subprocess.run(
        [sys.executable, "-m", "snakemake", "--cores", "2"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, (run.stdout + run.stderr)[-5000:]
    table = pd.read_csv(tmp_path / "results/tables/table3a.csv")
    recorded = pd.read_csv(REPO / "tests/data/pipeline_baseline/table3a.csv")
    columns = ["dataset", "mcp_mean", "reg_mean", "risk_full_mean", "n_splits"]
    assert list(table.dropna(axis=1, how="all").columns) == columns
    if lock_differences():
        allowed = AURC_TOLERANCE_OUTSIDE_LOCK * recorded["risk_full_mean"]
        for column in ("mcp_mean", "reg_mean"):
            assert ((table[column] - recorded[column]).abs() <= allowed).all(), column
    else:
        pd.testing.assert_frame_equal(table[columns], recorded[columns])
    assert (tmp_path / "results/tables/paper_comparison.md").is_file()
    assert not (tmp_path / "workflow").exists()  # nothing of the workflow's own was copied there
