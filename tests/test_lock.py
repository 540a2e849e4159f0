"""The lock behind README lines 1 and 2 (requirements/pipeline.txt, requirements/test.txt, written by
requirements/lock.sh): it pins, with hashes, a version of every requirement pyproject.toml declares, the
two files agree, the CHANGELOG records the day it was resolved at, and the library's reader of it tells
an environment that is the lock's from one that is not.

Offline: resolving again needs PyPI, so `bash requirements/lock.sh DAY` giving the same files for the
same day is checked by hand when it runs (docs/guide/reproducing.md), not here.
"""

import importlib.metadata
import re
import subprocess
import sys

import pytest
from packaging.markers import Marker, default_environment
from packaging.requirements import Requirement
from support import REPO, TEST_LOCK

from rejectopt.pipeline.report import environment_markdown
from rejectopt.pipeline.report._lock import lock_differences, lock_pins, lock_sha256

PIPELINE_LOCK = REPO / "requirements" / "pipeline.txt"
LOCK_SCRIPT = REPO / "requirements" / "lock.sh"
#: The Pythons the locks serve (the pipeline extra's Snakemake 9 needs 3.11) and platforms users run on.
ENVIRONMENTS = [
    {
        **default_environment(),
        "python_version": v,
        "python_full_version": v + ".0",
        "sys_platform": platform,
        "platform_system": system,
        "os_name": os_name,
        "platform_machine": machine,
    }
    for v in ("3.11", "3.12", "3.13")
    for platform, system, os_name, machine in (
        ("linux", "Linux", "posix", "x86_64"),
        ("darwin", "Darwin", "posix", "arm64"),
        ("win32", "Windows", "nt", "AMD64"),
    )
]


def _project():
    tomllib = pytest.importorskip(
        "tomllib", reason="Python 3.10 has no tomllib; CI's main Python runs this"
    )
    return tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))


def _requirements(*extras):
    project = _project()
    texts = [*project["project"]["dependencies"], *project["build-system"]["requires"]]
    for extra in extras:
        texts += project["project"]["optional-dependencies"][extra]
    return [Requirement(text) for text in texts]


def _pinned(lock, environment):
    return {
        name: version
        for name, version, marker in lock_pins(lock)
        if marker is None or Marker(marker).evaluate(environment)
    }


def _lock_day(lock):
    header = lock.read_text(encoding="utf-8").splitlines()[1]
    match = re.fullmatch(r"#    bash requirements/lock\.sh (\d{4}-\d{2}-\d{2})", header)
    assert match, f"{lock.name}: its header does not name the refresh command: {header!r}"
    return match.group(1)


@pytest.mark.parametrize(
    "lock, extras",
    [(PIPELINE_LOCK, ("pipeline",)), (TEST_LOCK, ("pipeline", "test"))],
    ids=["pipeline", "test"],
)
def test_the_lock_pins_every_requirement_within_pyprojects_range(lock, extras):
    """On each supported Python and platform, every requirement README's line installs (core, its
    extras, the build backend) has exactly one pinned version, inside pyproject.toml's range: a
    changed range without a refreshed lock fails here."""
    for environment in ENVIRONMENTS:
        pinned = _pinned(lock, environment)
        for requirement in _requirements(*extras):
            if requirement.marker is not None and not requirement.marker.evaluate(environment):
                continue
            name = re.sub(r"[-_.]+", "-", requirement.name).lower()
            where = f"{lock.name} on Python {environment['python_version']} / {environment['sys_platform']}"
            assert name in pinned, (
                f"{where}: {requirement} is not pinned; rerun `bash requirements/lock.sh`"
            )
            assert pinned[name] in requirement.specifier, (
                f"{where}: {name}=={pinned[name]} is outside {requirement}"
            )


def test_both_locks_pin_the_same_releases_from_the_same_day():
    test = {(name, marker): version for name, version, marker in lock_pins(TEST_LOCK)}
    pipeline = {(name, marker): version for name, version, marker in lock_pins(PIPELINE_LOCK)}
    assert set(pipeline) <= set(test)
    assert {key: test[key] for key in pipeline} == pipeline
    assert _lock_day(PIPELINE_LOCK) == _lock_day(TEST_LOCK)


def test_one_release_per_package_on_every_python():
    """The same numbers on 3.11, 3.12 and 3.13 (--fork-strategy fewest): a package that needs two
    versions may differ only where one Python cannot install the other (backports, old Pythons)."""
    versions = {}
    for name, version, _ in lock_pins(TEST_LOCK):
        versions.setdefault(name, set()).add(version)
    numerical = (
        "numpy",
        "scipy",
        "pandas",
        "scikit-learn",
        "xgboost-cpu",
        "matplotlib",
        "snakemake",
    )
    assert {name: versions[name] for name in numerical if len(versions[name]) != 1} == {}


@pytest.mark.parametrize("lock", [PIPELINE_LOCK, TEST_LOCK], ids=["pipeline", "test"])
def test_every_pin_has_hashes_and_nothing_installs_from_a_path(lock):
    text = lock.read_text(encoding="utf-8")
    entries = re.split(r"\n(?=[A-Za-z0-9])", text.split("\n", 2)[2])
    assert len(entries) == len(lock_pins(lock))
    unhashed = [entry.split()[0] for entry in entries if "--hash=sha256:" not in entry]
    assert unhashed == []
    assert not re.search(r"^(-e|--editable|file:|\.|/)", text, re.M)


def test_the_changelog_records_the_locks_day():
    """Each refresh is a CHANGELOG line (requirements/lock.sh prints it): the day the lock was resolved at."""
    day = _lock_day(TEST_LOCK)
    changelog = (REPO / "CHANGELOG.md").read_text(encoding="utf-8")
    assert f"releases published before {day}" in changelog


def test_the_readme_installs_from_the_locks():
    block = (
        (REPO / "README.md").read_text(encoding="utf-8").split("```bash\n", 1)[1].splitlines()[:2]
    )
    assert "pip install --require-hashes -r requirements/pipeline.txt" in block[0]
    assert "pip install --require-hashes -r requirements/test.txt" in block[1]
    assert all("pip install --no-deps --no-build-isolation -e ." in line for line in block)


# ---------------------------------------------------------------- the library's reader
def test_lock_differences_names_each_installed_package_off_the_lock(tmp_path):
    """Known answer from this environment's own versions: a package at the lock's version (one of its
    markers' versions) is no difference, one at another version is, one not installed is not."""
    pytest_version = importlib.metadata.version("pytest")
    packaging_version = importlib.metadata.version("packaging")
    lock = tmp_path / "lock.txt"
    lock.write_text(
        "# a lock\n"
        f"pytest==0.0.1 ; python_version < '3'\npytest=={pytest_version} ; python_version >= '3' \\\n"
        "    --hash=sha256:00\n"
        "packaging==0.0.1 \\\n    --hash=sha256:00\n"
        "no-such-distribution-anywhere==1.0\n"
    )
    assert lock_differences(lock) == [f"packaging {packaging_version} (lock: 0.0.1)"]
    assert [pin[:2] for pin in lock_pins(lock)] == [
        ("pytest", "0.0.1"),
        ("pytest", pytest_version),
        ("packaging", "0.0.1"),
        ("no-such-distribution-anywhere", "1.0"),
    ]


def test_a_file_without_pins_is_refused_by_name(tmp_path):
    empty = tmp_path / "empty.txt"
    empty.write_text("# nothing here\n")
    with pytest.raises(
        ValueError, match=r"empty\.txt: no 'name==version' line; a lock is written by"
    ):
        lock_pins(empty)


def test_the_environment_page_names_each_lock_by_its_sha256(tmp_path):
    lock = tmp_path / "requirements" / "pipeline.txt"
    lock.parent.mkdir()
    lock.write_text(f"packaging==0.0.1\npytest=={importlib.metadata.version('pytest')}\n")
    page = environment_markdown({"seed": 0}, {}, [lock, tmp_path / "requirements" / "test.txt"])
    section = page.split("## Lock\n", 1)[1].split("\n## ", 1)[0]
    assert f"| requirements/pipeline.txt | `{lock_sha256(lock)}` | packaging " in section
    assert "(lock: 0.0.1) |" in section
    assert f"| test.txt | no such file: {tmp_path / 'requirements' / 'test.txt'} | |" in section
    assert "## Lock" not in environment_markdown({"seed": 0}, {})


def test_the_environment_page_names_the_blas_kernels(monkeypatch):
    """numpy is loaded here, so its BLAS is listed; the pin, or its absence, is stated."""
    import threadpoolctl

    blas = [info for info in threadpoolctl.threadpool_info() if info["user_api"] == "blas"]
    monkeypatch.setenv("OPENBLAS_CORETYPE", "Haswell")
    line = next(
        line for line in environment_markdown({}, {}).splitlines() if line.startswith("BLAS: ")
    )
    assert line.endswith("; OPENBLAS_CORETYPE=Haswell")
    assert all(f"{info['internal_api']} {info.get('version')} (" in line for info in blas)
    monkeypatch.delenv("OPENBLAS_CORETYPE")
    assert "OpenBLAS's kernels not pinned" in environment_markdown({}, {})


# ---------------------------------------------------------------- the refresh command
def test_the_refresh_command_refuses_a_day_that_is_not_one(tmp_path):
    run = subprocess.run(
        ["bash", str(LOCK_SCRIPT), "2026-13-45"], capture_output=True, text=True, timeout=60
    )
    assert run.returncode == 2
    assert (
        "'2026-13-45' is not a day as YYYY-MM-DD (usage: bash requirements/lock.sh [YYYY-MM-DD])"
        in run.stderr
    )


def test_the_jobs_environment_is_what_the_refresh_command_writes():
    """envs/rejectopt.yaml is requirements/lock_inputs.py's output for the checked-in lock, byte for
    byte: an edit by hand, or a lock refreshed without it, fails here."""
    pytest.importorskip("tomllib", reason="Python 3.10 has no tomllib; CI's main Python runs this")
    run = subprocess.run(
        [
            sys.executable,
            str(REPO / "requirements" / "lock_inputs.py"),
            "conda-env",
            str(TEST_LOCK),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=REPO,
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout == (REPO / "envs" / "rejectopt.yaml").read_text(encoding="utf-8")


def test_the_changelog_line_names_the_numerical_packages_that_moved(tmp_path):
    old, new = tmp_path / "old.txt", tmp_path / "new.txt"
    old.write_text("numpy==2.3.5\nscipy==1.17.1\nidna==3.10\ngone==1.0\n")
    new.write_text("numpy==2.4.6\nscipy==1.17.1\nidna==3.21\n")
    run = subprocess.run(
        [
            sys.executable,
            str(REPO / "requirements" / "lock_inputs.py"),
            "changes",
            str(old),
            str(new),
            "2026-12-06",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=REPO,
    )
    assert run.returncode == 0, run.stderr
    assert run.stderr.splitlines()[-1] == (
        "- The lock (`requirements/`) moved to the releases published before "
        "2026-12-06: numpy 2.3.5 -> 2.4.6 (1 other package(s) moved, 1 left)."
    )


def test_the_changelog_line_counts_a_package_new_to_the_lock_as_added(tmp_path):
    """A requirement added to pyproject.toml brings packages that were not in the lock: they are
    named as added, not counted among the packages that moved to newer releases."""
    old, new = tmp_path / "old.txt", tmp_path / "new.txt"
    old.write_text("numpy==2.4.6\nidna==3.10\n")
    new.write_text("numpy==2.4.6\nidna==3.10\nruff==0.17.6\nmypy==2.4.1\n")
    run = subprocess.run(
        [
            sys.executable,
            str(REPO / "requirements" / "lock_inputs.py"),
            "changes",
            str(old),
            str(new),
            "2026-12-06",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=REPO,
    )
    assert run.returncode == 0, run.stderr
    assert run.stderr.splitlines()[-1] == (
        "- The lock (`requirements/`) moved to the releases published before "
        "2026-12-06 (2 added: mypy, ruff)."
    )
