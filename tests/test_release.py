"""The release: one version everywhere (package, CLI, citation, changelog), the program's name as
invoked, the licence and citation files, and sdist and wheel that build, pass ``twine check``, carry
the licence and install and import in a fresh environment."""

import email
import re
import subprocess
import sys
import sysconfig
import tarfile
import zipfile
from pathlib import Path

import pytest
import yaml
from support import REPO

import rejectopt
from rejectopt.cli import main
from rejectopt.cli._main import _invoked_as

try:
    import tomllib
except (
    ModuleNotFoundError
):  # Python 3.10 (CI's minimum-versions stage): pytest's own dependency tomli
    import tomli as tomllib

VERSION = rejectopt.__version__
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
# What a user's `pip install rejectopt` must not pull: the pipeline's tools and the dropped statistics package.
NOT_CORE = (
    "snakemake",
    "snakemake-executor-plugin-slurm",
    "xgboost",
    "xgboost-cpu",
    "openpyxl",
    "scikit-posthocs",
    "torch",
    "pygments",
)


def run(*args, **kwargs):
    return subprocess.run(
        [str(a) for a in args], capture_output=True, text=True, timeout=120, **kwargs
    )


def requirement_name(text):
    return re.match(r"[A-Za-z0-9._-]+", text).group(0).lower().replace("_", "-")


# ---------------------------------------------------------------- one version
def test_version_is_written_once_and_read_by_the_build():
    assert re.fullmatch(r"\d+\.\d+\.\d+", VERSION)
    assert "version" not in PYPROJECT["project"] and PYPROJECT["project"]["dynamic"] == ["version"]
    assert PYPROJECT["tool"]["setuptools"]["dynamic"]["version"] == {
        "attr": "rejectopt.__version__"
    }


def test_citation_and_changelog_name_this_release():
    cff = yaml.safe_load((REPO / "CITATION.cff").read_text(encoding="utf-8"))
    assert cff["cff-version"] == "1.2.0" and cff["type"] == "software" and cff["license"] == "MIT"
    assert cff["version"] == VERSION
    paper = cff["preferred-citation"]
    assert paper["title"] == "Optimal Strategies for Reject Option Classifiers"
    assert [a["family-names"] for a in paper["authors"]] == ["Franc", "Prusa", "Voracek"]
    assert (
        paper["journal"],
        paper["volume"],
        paper["issue"],
        paper["start"],
        paper["end"],
        paper["year"],
    ) == ("Journal of Machine Learning Research", 24, "11", 1, 49, 2023)
    assert sorted(ref["title"] for ref in cff["references"]) == [
        "Reject option models comprising out-of-distribution detection",
        "Support Vector Machines with a Reject Option",
    ]
    # The newest changelog entry is this release, with the citation's date; no "Unreleased" section.
    changelog = (REPO / "CHANGELOG.md").read_text(encoding="utf-8")
    headings = re.findall(r"^## (.+)$", changelog, flags=re.MULTILINE)
    assert headings[0] == f"{VERSION} ({cff['date-released']})", headings
    assert "unreleased" not in changelog.lower()
    # The README's BibTeX entry of the software
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert re.findall(r"^  version = \{(.+)\},$", readme, flags=re.MULTILINE) == [VERSION]


def test_licence_is_mit_with_its_holder():
    text = (REPO / "LICENSE").read_text(encoding="utf-8")
    assert (
        text.startswith("MIT License\n") and "Copyright (c) 2026 the rejectopt developers" in text
    )
    assert PYPROJECT["project"]["license"] == "MIT" and PYPROJECT["project"]["license-files"] == [
        "LICENSE"
    ]
    # `license = "MIT"` as one SPDX string is accepted from setuptools 77 on.
    assert PYPROJECT["build-system"]["requires"] == ["setuptools>=77.0.1"]
    # The build below runs without isolation (offline), with the environment's setuptools: the test extra
    # brings the same floor, as a fresh venv's bundled setuptools (65.5 on Python 3.11) is older.
    test_extra = PYPROJECT["project"]["optional-dependencies"]["test"]
    assert [r for r in test_extra if requirement_name(r) == "setuptools"] == PYPROJECT[
        "build-system"
    ]["requires"]


def test_core_dependencies_leave_the_pipeline_to_its_extras():
    core = {requirement_name(r) for r in PYPROJECT["project"]["dependencies"]}
    assert core == {
        "numpy",
        "scipy",
        "pandas",
        "scikit-learn",
        "matplotlib",
        "lazy-loader",
        "pyyaml",
        "threadpoolctl",
    }
    extras = PYPROJECT["project"]["optional-dependencies"]
    pipeline = {requirement_name(r) for r in extras["pipeline"]}
    # pygments: `snakemake --report` refuses to write the report without it.
    assert {
        "snakemake",
        "snakemake-executor-plugin-slurm",
        "openpyxl",
        "pygments",
        "xgboost-cpu",
    } <= pipeline
    assert {requirement_name(r) for r in extras["xgboost"]} == {"xgboost-cpu", "xgboost"}
    assert not any(
        "posthocs" in r
        for deps in [PYPROJECT["project"]["dependencies"], *extras.values()]
        for r in deps
    )


def test_classifiers_list_the_tested_pythons():
    classifiers = PYPROJECT["project"]["classifiers"]
    pythons = sorted(
        c.rsplit(" :: ", 1)[1]
        for c in classifiers
        if re.fullmatch(r"Programming Language :: Python :: 3\.\d+", c)
    )
    assert pythons == ["3.10", "3.11", "3.12", "3.13"]
    assert PYPROJECT["project"]["requires-python"] == ">=3.10"
    assert (
        "License :: OSI Approved :: MIT License" not in classifiers
    )  # PEP 639: the licence expression says it


# ---------------------------------------------------------------- the program's name
def test_console_script_names_itself_rejectopt():
    script = Path(sysconfig.get_path("scripts")) / "rejectopt"
    result = run(script, "select", "--data", "x.csv")
    assert result.returncode == 2 and result.stderr.startswith("usage: rejectopt select [-h]"), (
        result.stderr
    )
    assert (
        "rejectopt select: error: the following arguments are required: --target, --out"
        in result.stderr
    )


def test_module_names_itself_python_m_rejectopt():
    result = run(sys.executable, "-m", "rejectopt", "--version")
    assert result.returncode == 0 and result.stdout == f"python -m rejectopt {VERSION}\n", result


def test_program_name_follows_the_invocation(capsys):
    assert _invoked_as("/home/me/.venv/bin/rejectopt") == "rejectopt"
    assert (
        _invoked_as("/home/me/.venv/lib/python3.12/site-packages/rejectopt/__main__.py")
        == "python -m rejectopt"
    )
    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0 and capsys.readouterr().out == f"rejectopt {VERSION}\n"
    with pytest.raises(SystemExit) as exit_:
        main(["--help"], prog="python -m rejectopt")
    assert exit_.value.code == 0 and capsys.readouterr().out.startswith(
        "usage: python -m rejectopt [-h]"
    )
    with pytest.raises(SystemExit) as exit_:
        main(["nonsense"])
    err = capsys.readouterr().err
    # argparse names the argument "command" from Python 3.11 on, "{select,apply}" (its metavar) on 3.10
    assert (
        exit_.value.code == 2
        and "\nrejectopt: error: argument " in err
        and "invalid choice: 'nonsense'" in err
    )


# ---------------------------------------------------------------- sdist and wheel
@pytest.fixture(scope="module")
def dist(tmp_path_factory):
    """The sdist built from this checkout and the wheel built from the sdist (so the sdist is complete),
    without build isolation: offline, with this environment's setuptools (the test extra's floor)."""
    out = tmp_path_factory.mktemp("dist")
    result = run(sys.executable, "-m", "build", "--no-isolation", "--outdir", out, REPO)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    (sdist,) = out.glob("rejectopt-*.tar.gz")
    (wheel,) = out.glob("rejectopt-*.whl")
    return sdist, wheel


@pytest.mark.slow
def test_sdist_and_wheel_pass_twine_check_and_carry_the_licence(dist):
    sdist, wheel = dist
    assert (
        sdist.name == f"rejectopt-{VERSION}.tar.gz"
        and wheel.name == f"rejectopt-{VERSION}-py3-none-any.whl"
    )
    result = run(sys.executable, "-m", "twine", "check", "--strict", sdist, wheel)
    assert result.returncode == 0 and result.stdout.count("PASSED") == 2, (
        result.stdout + result.stderr
    )
    with tarfile.open(sdist) as tar:
        names = tar.getnames()
        licence = tar.extractfile(f"rejectopt-{VERSION}/LICENSE").read().decode()
    assert "Copyright (c) 2026 the rejectopt developers" in licence
    assert {
        f"rejectopt-{VERSION}/{name}"
        for name in ("CITATION.cff", "CHANGELOG.md", "src/rejectopt/py.typed")
    } <= set(names), "sdist lacks the citation, changelog or py.typed"
    with zipfile.ZipFile(wheel) as whl:
        names = set(whl.namelist())
        dist_info = f"rejectopt-{VERSION}.dist-info"
        assert whl.read(f"{dist_info}/licenses/LICENSE").decode() == licence
        metadata = email.message_from_bytes(whl.read(f"{dist_info}/METADATA"))
    assert "rejectopt/py.typed" in names and "rejectopt/__main__.py" in names
    assert metadata["Version"] == VERSION and metadata["License-Expression"] == "MIT"
    assert metadata.get_all("License-File") == ["LICENSE"]
    unconditional = {
        requirement_name(r) for r in metadata.get_all("Requires-Dist") if "extra ==" not in r
    }
    assert unconditional == {
        "numpy",
        "scipy",
        "pandas",
        "scikit-learn",
        "matplotlib",
        "lazy-loader",
        "pyyaml",
        "threadpoolctl",
    }
    assert not unconditional & set(NOT_CORE)


@pytest.mark.slow
def test_sdist_is_the_library_without_tests_or_pipeline(dist):
    """The sdist carries the package's source and the files a user reads, nothing else: not the tests
    (setuptools adds tests/test*.py by default, which cannot run without conftest.py, support.py and
    tests/data), nor the pipeline, docs, examples or benchmarks, which are used from a git clone."""
    sdist, _ = dist
    with tarfile.open(sdist) as tar:
        files = {m.name.split("/", 1)[1] for m in tar.getmembers() if m.isfile()}
    assert not {f for f in files if f.startswith("tests/")}, "the sdist carries tests"
    assert not {
        f
        for f in files
        if f.split("/")[0] in ("workflow", "docs", "examples", "benchmarks", "envs")
    }
    build_metadata = {f for f in files if f.startswith("src/rejectopt.egg-info/")}
    assert "src/rejectopt.egg-info/PKG-INFO" in build_metadata
    package = {
        p.relative_to(REPO).as_posix()
        for p in (REPO / "src" / "rejectopt").rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }
    assert files - build_metadata == package | {
        "PKG-INFO",
        "setup.cfg",
        "pyproject.toml",
        "MANIFEST.in",
        "README.md",
        "LICENSE",
        "CITATION.cff",
        "CHANGELOG.md",
    }


@pytest.mark.slow
def test_wheel_installs_and_runs_in_a_fresh_environment(dist, tmp_path):
    _, wheel = dist
    venv = tmp_path / "venv"
    assert run(sys.executable, "-m", "venv", "--without-pip", venv).returncode == 0
    python = venv / "bin" / "python"
    # The wheel alone (no index: offline); the core dependencies come from this environment's
    # site-packages, added after the fresh one's, whose rejectopt then comes first.
    result = run(
        sys.executable, "-m", "pip", "--python", python, "install", "--no-deps", "--no-index", wheel
    )
    assert result.returncode == 0, result.stdout + result.stderr
    fresh_site = Path(
        run(python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))").stdout.strip()
    )
    (fresh_site / "outer_env.pth").write_text(
        sysconfig.get_path("purelib") + "\n", encoding="utf-8"
    )
    probe = (
        "import rejectopt; from rejectopt import SelectiveClassifier; import rejectopt.stats, rejectopt.metrics; "
        "print(rejectopt.__version__, rejectopt.__file__, SelectiveClassifier.__name__)"
    )
    result = run(python, "-c", probe, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    version, location, name = result.stdout.split()
    assert version == VERSION and name == "SelectiveClassifier"
    assert Path(location).is_relative_to(fresh_site), (
        f"imported {location}, not the installed wheel"
    )
    result = run(venv / "bin" / "rejectopt", "--version", cwd=tmp_path)
    assert result.returncode == 0 and result.stdout == f"rejectopt {VERSION}\n", result
