"""The SLURM profile (workflow/profiles/slurm) on a real SLURM cluster.

Needs the single-node cluster of ``workflow/ci/start_slurm.sh``; ``.ci/run`` starts it and
sets ``REJECTOPT_SLURM=1``. Without that variable these tests are skipped (with a reason),
never silently passed. Every Snakemake run is bounded by ``timeout -s KILL``: a Snakemake
waiting for a SLURM status that never comes ignores SIGTERM.
"""

import difflib
import os
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from support import DEMO_MIRROR, REPO, snakemake_command

STATE = Path(os.environ.get("REJECTOPT_SLURM_STATE", "/tmp/rejectopt-slurm"))
#: Every rule of the CI configuration runs once (sattelite's LR: the classifier, scores, OOD, tables and
#: figures rules; the double hinge's breast cancer), 21 SLURM jobs: each job is a Snakemake process
#: on the cluster's 2 cores, so more of the same rules (abalone's SVOR, sattelite's SVM and XGBoost,
#: 40 jobs) doubled the run's time without reaching another rule.
CONFIG = ["datasets=[sattelite]", "n_splits=1", "classifiers={classification: [lr]}"]
SLURM_PROFILES = [
    "--workflow-profile",
    str(REPO / "workflow/profiles/slurm"),
    # CI-only: squeue status checks (this cluster has no accounting, so no sacct).
    "--profile",
    str(REPO / "workflow/ci/slurm-profile"),
]
SUBMITTED = re.compile(r"Job (\d+) has been submitted with SLURM jobid (\d+) ")

pytestmark = [pytest.mark.slurm, pytest.mark.slow]

if os.environ.get("REJECTOPT_SLURM") != "1":
    # One skip for the module, with the way to run it; never a silent pass.
    pytest.skip(
        "needs a SLURM cluster: run `bash workflow/ci/start_slurm.sh` and set REJECTOPT_SLURM=1 (.ci/run does both)",
        allow_module_level=True,
    )


def bounded_snakemake(workdir, *args, limit):
    """Run the workflow in ``workdir``, killed after ``limit`` s; return (returncode, output, seconds).

    The output goes to a file beside ``workdir`` (no pipes a killed run could leave open).
    SLURM jobs still queued or running afterwards (a killed run) are cancelled.
    """
    out = workdir.parent / f"{workdir.name}.snakemake.txt"
    cmd = ["timeout", "-s", "KILL", str(limit), *snakemake_command(workdir, *args)]
    start = time.monotonic()
    try:
        with open(out, "w") as fh:
            returncode = subprocess.run(
                cmd, stdout=fh, stderr=subprocess.STDOUT, timeout=limit + 60
            ).returncode
    finally:
        text = out.read_text() if out.exists() else ""
        ids = sorted({slurm_id for _, slurm_id in SUBMITTED.findall(text)}, key=int)
        if ids:
            subprocess.run(["scancel", *ids], capture_output=True, timeout=60)
    return returncode, text, time.monotonic() - start


def check_finished(returncode, output, limit):
    assert returncode != 137, f"snakemake hung and was killed after {limit} s:\n{output[-5000:]}"
    assert returncode == 0, output[-5000:]


@pytest.fixture(scope="module")
def cluster():
    """The cluster answers (REJECTOPT_SLURM=1 promises one: failing here is an error, not a skip)."""
    run = subprocess.run(
        ["sinfo", "-h", "-N", "-o", "%N %t"], capture_output=True, text=True, timeout=60
    )
    assert run.returncode == 0 and run.stdout.strip(), (
        f"REJECTOPT_SLURM=1 but sinfo fails: {run.stderr}"
    )
    return run.stdout


@pytest.fixture(scope="module")
def slurm_run(cluster, tmp_path_factory):
    """The CI configuration through SLURM."""
    workdir = tmp_path_factory.mktemp("slurm") / "run"
    limit = 900
    returncode, output, seconds = bounded_snakemake(
        workdir,
        *SLURM_PROFILES,
        "--config",
        f"data_mirror={DEMO_MIRROR}",
        *CONFIG,
        limit=limit,
    )
    check_finished(returncode, output, limit)
    print(f"SLURM run: {seconds:.0f} s")
    return workdir, output


@pytest.fixture(scope="module")
def local_run(tmp_path_factory):
    """The same configuration on this machine, 2 cores."""
    workdir = tmp_path_factory.mktemp("local") / "run"
    limit = 900
    returncode, output, seconds = bounded_snakemake(
        workdir,
        "--workflow-profile",
        "none",
        "--cores",
        "2",
        "--config",
        f"data_mirror={DEMO_MIRROR}",
        *CONFIG,
        limit=limit,
    )
    check_finished(returncode, output, limit)
    print(f"local run: {seconds:.0f} s")
    return workdir


def job_stats(output):
    """{rule: count} from Snakemake's 'Job stats' table."""
    table = output.split("Job stats:", 1)[1].split("\n\n", 1)[0]
    return {
        line.split()[0]: int(line.split()[1])
        for line in table.splitlines()
        if len(line.split()) == 2 and line.split()[1].isdigit()
    }


def test_every_job_ran_as_a_slurm_job(slurm_run):
    workdir, output = slurm_run
    submitted = SUBMITTED.findall(output)
    stats = job_stats(output)
    # every job but the target rule `all` (local) was submitted, each once (no retry needed)
    assert len({job for job, _ in submitted}) == stats["total"] - stats["all"], output[-3000:]
    slurm_ids = {slurm_id for _, slurm_id in submitted}
    assert len(slurm_ids) == len(submitted)
    logs = {p.stem: p for p in (workdir / ".snakemake/slurm_logs").rglob("*.log")}
    assert slurm_ids <= set(logs), f"no SLURM log for jobs {sorted(slurm_ids - set(logs))}"
    for slurm_id in slurm_ids:
        # the batch job ran the rule in a job step (srun) and finished it
        text = logs[slurm_id].read_text()
        assert "--executor slurm-jobstep" in text and "Finished jobid: 0 (Rule: " in text, text[
            -2000:
        ]
    # ... and slurmctld itself ran them to completion with exit status 0
    ctld_log = (STATE / "log/slurmctld.log").read_text()
    for slurm_id in slurm_ids:
        assert f"_job_complete: JobId={slurm_id} WEXITSTATUS 0" in ctld_log, slurm_id


def outputs_to_compare(workdir):
    """Every file the run wrote under results/ but the wall-clock timing records (benchmarks/, timing*).

    The environment page's ``BLAS:`` line is left out: it states the BLAS library and kernels of the
    process that wrote the page, which on a cluster is a node's, not the workstation's. The rest of
    the page (packages, lock, datasets, configuration) must be equal."""
    results = workdir / "results"
    found = {}
    for p in sorted(results.rglob("*")):
        if (
            not p.is_file()
            or "benchmarks" in p.relative_to(results).parts
            or p.name.startswith("timing")
        ):
            continue
        data = p.read_bytes()
        if p.name == "environment.md":
            data = b"\n".join(line for line in data.split(b"\n") if not line.startswith(b"BLAS: "))
        found[str(p.relative_to(workdir))] = data
    return found


def test_slurm_outputs_equal_a_local_run_bit_for_bit(slurm_run, local_run):
    on_slurm, local = outputs_to_compare(slurm_run[0]), outputs_to_compare(local_run)
    for name in [
        "results/summary.csv",
        "results/datasets/sattelite/summary.csv",
        "results/tables/table3a.csv",
        "results/tables/ood.csv",
        "results/tables/paper_comparison.csv",
    ]:
        assert name in local, name
    assert sorted(on_slurm) == sorted(local)
    differing = [name for name in local if on_slurm[name] != local[name]]
    # a text file's differing lines, so that a failure shows what differs, not only where
    shown = [
        "".join(
            difflib.unified_diff(
                local[name].decode(errors="replace").splitlines(keepends=True),
                on_slurm[name].decode(errors="replace").splitlines(keepends=True),
                f"local/{name}",
                f"slurm/{name}",
            )
        )[:3000]
        for name in differing
        if name.endswith((".md", ".csv", ".json", ".txt"))
    ]
    assert not differing, f"SLURM and local outputs differ: {differing}\n" + "\n".join(shown)


def test_a_failing_slurm_job_fails_the_run_with_its_slurm_status(cluster, tmp_path):
    """A corrupted raw file in the mirror: download_raw fails its checksum inside the SLURM job."""
    mirror = tmp_path / "mirror"
    shutil.copytree(DEMO_MIRROR, mirror)
    raw = mirror / "abalone" / "abalone.data.xz"
    raw.write_bytes(raw.read_bytes()[:-100] + b"corrupted" * 10)
    workdir = tmp_path / "run"
    limit = 300
    returncode, output, seconds = bounded_snakemake(
        workdir,
        *SLURM_PROFILES,
        "--config",
        f"data_mirror={mirror}",
        "datasets=[abalone]",
        "n_splits=1",
        limit=limit,
    )
    assert returncode != 137, (
        f"snakemake hung on a failed SLURM job and was killed after {limit} s:\n{output[-5000:]}"
    )
    assert returncode != 0, output[-5000:]
    failed = re.findall(r"SLURM-job '(\d+)' failed, SLURM status is: 'FAILED'", output)
    assert failed, output[-5000:]
    assert "Error in rule download_raw" in output
    # the failed job's SLURM log (shown by the profile's show-failed-logs) has the job step's exit code
    assert re.search(r"srun: error: .*Exited with exit code [1-9]", output), output[-5000:]
    submitted = {slurm_id for _, slurm_id in SUBMITTED.findall(output)}
    assert set(failed) <= submitted
    ctld_log = (STATE / "log/slurmctld.log").read_text()
    for slurm_id in failed:
        assert re.search(rf"_job_complete: JobId={slurm_id} WEXITSTATUS [1-9]", ctld_log), slurm_id
    assert seconds < limit
