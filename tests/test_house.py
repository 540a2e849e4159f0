"""The house rules that keep the project light to read, checked in the fast tier (no Sphinx).

The README is a quickstart of at most 10 KB that opens with the two set-up commands; the docs own
every longer text and never include the README's; the public API (the reference's modules,
``API_MODULES`` in docs/conf.py) has numpydoc's Parameters, Returns and Examples on each name, and
the library's part of it (all but the pipeline's experiment contract) at most 175 names; the
pipeline's internal modules keep Parameters and Returns without a mandatory example; a docstring's
Examples block is at most 15 lines and the package's doctests at most 1,000 lines. CI and the
pre-commit hooks run the same formatter, linter and type checker, with the lock's releases.
"""

from __future__ import annotations

import ast
import doctest
import importlib
import inspect
import re
from pathlib import Path

import pytest
import yaml
from support import MAX_PUBLIC_NAMES

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "rejectopt"

#: The two set-up commands README.md opens with: CI (.ci/run) and a hook read them there.
README_COMMANDS = (
    "python3 -m venv .venv && .venv/bin/pip install --require-hashes -r requirements/pipeline.txt && "
    ".venv/bin/pip install --no-deps --no-build-isolation -e . && .venv/bin/snakemake --cores 2 "
    "--config data_mirror=workflow/resources/demo_mirror datasets='[shuttle,sattelite,abalone]'",
    "python3 -m venv .venv && .venv/bin/pip install --require-hashes -r requirements/test.txt && "
    ".venv/bin/pip install --no-deps --no-build-isolation -e . && .venv/bin/pytest -n auto --dist loadfile",
)
README_MAX_BYTES = 10_240
MAX_EXAMPLE_LINES = 15
MAX_DOCTEST_LINES = 1_000

#: The pipeline's own modules: not in the API reference; numpydoc's Parameters / Returns checks
#: still cover every name of their ``__all__``, an Examples block is not required.
INTERNAL_MODULES = [
    "rejectopt.pipeline.experiments.paper",
    "rejectopt.pipeline.experiments.ood",
    "rejectopt.pipeline.experiments.double_hinge",
    "rejectopt.pipeline.experiments.landmarks",
    "rejectopt.pipeline.experiments.guarantees",
    "rejectopt.pipeline.tables",
    "rejectopt.pipeline.report",
    "rejectopt.pipeline.report.ood",
    "rejectopt.pipeline.report.double_hinge",
    "rejectopt.pipeline.report.landmarks",
    "rejectopt.cli._figures",
    "rejectopt.pipeline.report.guarantees",
    "rejectopt.pipeline.config",
    "rejectopt.pipeline.resources",
    "rejectopt.cli",
]
PUBLIC_CHECKS = {"GL08", "PR01", "RT01", "EX01"}  # as docs/conf.py's numpydoc_validation_checks
INTERNAL_CHECKS = {"GL08", "PR01", "RT01"}


def _api_modules() -> list[str]:
    """``API_MODULES`` read from docs/conf.py's source, without importing it (that runs Sphinx's
    set-up and writes the API pages)."""
    tree = ast.parse((ROOT / "docs" / "conf.py").read_text(encoding="utf-8"))
    for node in tree.body:
        targets = [node.target] if isinstance(node, ast.AnnAssign) else getattr(node, "targets", [])
        if any(isinstance(t, ast.Name) and t.id == "API_MODULES" for t in targets):
            return list(ast.literal_eval(node.value))
    raise AssertionError("docs/conf.py assigns no API_MODULES")


API_MODULES = _api_modules()


# --- the everyday checks -----------------------------------------------------------------------


def _ci_style_commands() -> list[str]:
    """The ruff and mypy commands .ci/run runs, as written there (a continued line without its ``\\``)."""
    text = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    return re.findall(r"^(\.venv/bin/(?:ruff|mypy)\b.*?)\s*\\?$", text, re.M)


def test_pre_commit_runs_cis_style_and_type_checks():
    """The hooks are CI's three commands, run with README line 2's environment (the lock's ruff and
    mypy): local hooks that fetch nothing, so a commit is checked offline as CI checks it."""
    config = yaml.safe_load((ROOT / ".pre-commit-config.yaml").read_text(encoding="utf-8"))
    assert [repo["repo"] for repo in config["repos"]] == ["local"]
    hooks = config["repos"][0]["hooks"]
    assert [hook["language"] for hook in hooks] == ["system"] * len(hooks)
    assert [hook["pass_filenames"] for hook in hooks] == [False] * len(hooks)
    ci = _ci_style_commands()
    assert ci == [
        ".venv/bin/ruff format --check src workflow/scripts tests",
        ".venv/bin/ruff check src workflow/scripts tests",
        ".venv/bin/mypy",
    ]
    assert [hook["entry"] for hook in hooks] == ci
    for hook in hooks:
        for path in ("src/rejectopt/model.py", "pyproject.toml"):
            assert re.search(hook["files"], path), f"{hook['id']} does not run on {path}"
    assert not re.search(hooks[0]["files"], "docs/conf.py")


def test_the_developer_docs_show_the_checks():
    page = (ROOT / "docs" / "guide" / "getting_started.md").read_text(encoding="utf-8")
    assert all(command in page for command in _ci_style_commands())
    assert "pre-commit install" in page


# --- README and docs ---------------------------------------------------------------------------


def test_readme_is_a_quickstart_of_at_most_10_kb():
    size = (ROOT / "README.md").stat().st_size
    assert size <= README_MAX_BYTES, (
        f"README.md is {size} bytes, {size - README_MAX_BYTES} over {README_MAX_BYTES}"
    )


def test_readme_opens_with_the_two_set_up_commands():
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    first_block = lines.index("```bash")
    assert all(not line.strip() or line.startswith("#") for line in lines[:first_block]), (
        "only the title may precede the set-up commands"
    )
    assert tuple(lines[first_block + 1 : first_block + 3]) == README_COMMANDS
    assert lines[first_block + 3] == "```"


def test_readme_names_no_commit():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert not re.search(r"\bcommit [0-9a-f]{7,40}\b", text)


def test_no_docs_page_includes_readme_text():
    including = [
        str(page.relative_to(ROOT))
        for page in (ROOT / "docs").rglob("*")
        if page.suffix in (".md", ".rst")
        and page.relative_to(ROOT / "docs").parts[0] not in ("_build", "api", "auto_examples")
        and re.search(r"(include|literalinclude)\S*\s+\S*README", page.read_text(encoding="utf-8"))
    ]
    assert not including, f"docs pages including README text: {including}"


# --- the public API ----------------------------------------------------------------------------

#: The library's modules of the reference: the MAX_PUBLIC_NAMES names are the library's. The experiment contract
#: (``rejectopt.pipeline.experiments``) is documented there too, but is the pipeline's.
LIBRARY_API_MODULES = [
    module for module in API_MODULES if not module.startswith("rejectopt.pipeline")
]


def _public_names() -> set[str]:
    return {
        name for module in LIBRARY_API_MODULES for name in importlib.import_module(module).__all__
    }


def test_public_api_has_at_most_175_names():
    counts = {
        module: len(importlib.import_module(module).__all__) for module in LIBRARY_API_MODULES
    }
    names = _public_names()
    assert len(names) <= MAX_PUBLIC_NAMES, (
        f"{len(names)} public names, {len(names) - MAX_PUBLIC_NAMES} over {MAX_PUBLIC_NAMES}; per module: {counts}"
    )


def test_internal_modules_are_not_in_the_api_reference():
    assert not set(API_MODULES) & set(INTERNAL_MODULES)


def _numpydoc_errors(module_name: str, checks: set[str]) -> list[str]:
    """numpydoc's errors of the given codes for every class and function of a module's
    ``__all__`` (constants are documented by their ``#:`` comment, not validated; methods are
    validated through their class, as in docs/conf.py)."""
    from numpydoc.validate import validate  # the test extra's numpydoc; imported only here

    module = importlib.import_module(module_name)
    errors = []
    for member in module.__all__:
        obj = getattr(module, member)
        if inspect.ismodule(obj) or not (isinstance(obj, type) or callable(obj)):
            continue
        result = validate(f"{module_name}.{member}")
        errors += [
            f"{module_name}.{member}: {code} {message}"
            for code, message in result["errors"]
            if code in checks
        ]
    return errors


@pytest.mark.parametrize("module_name", API_MODULES)
def test_public_names_have_parameters_returns_and_an_example(module_name):
    errors = _numpydoc_errors(module_name, PUBLIC_CHECKS)
    assert not errors, f"{len(errors)} numpydoc errors:\n" + "\n".join(errors)


@pytest.mark.parametrize("module_name", INTERNAL_MODULES)
def test_internal_names_have_parameters_and_returns(module_name):
    errors = _numpydoc_errors(module_name, INTERNAL_CHECKS)
    assert not errors, f"{len(errors)} numpydoc errors:\n" + "\n".join(errors)


# --- docstring examples ------------------------------------------------------------------------


def _docstrings():
    """(file:line, cleaned docstring) of every module, class and function of the package."""
    for path in sorted(SRC.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                text = ast.get_docstring(node, clean=True)
                if text:
                    yield f"{path.relative_to(ROOT)}:{getattr(node, 'lineno', 1)}", text


def _examples_block(text: str) -> list[str]:
    """The lines of a numpydoc docstring's Examples section (up to the next section or the end),
    without the heading and the blank lines around it."""
    lines = text.splitlines()
    for i in range(len(lines) - 1):
        if lines[i].strip() == "Examples" and re.fullmatch(r"-{3,}", lines[i + 1].strip()):
            block = lines[i + 2 :]
            for j in range(len(block) - 1):
                if (
                    block[j].strip()
                    and re.fullmatch(r"-{3,}", block[j + 1].strip())
                    and not block[j].startswith(" ")
                ):
                    block = block[:j]
                    break
            while block and not block[0].strip():
                block.pop(0)
            while block and not block[-1].strip():
                block.pop()
            return block
    return []


def test_every_examples_block_has_at_most_15_lines():
    long = [
        (where, n)
        for where, text in _docstrings()
        if (n := len(_examples_block(text))) > MAX_EXAMPLE_LINES
    ]
    assert not long, f"{len(long)} Examples blocks over {MAX_EXAMPLE_LINES} lines:\n" + "\n".join(
        f"{where}: {n} lines" for where, n in sorted(long, key=lambda item: -item[1])
    )


def test_the_package_has_at_most_1000_doctest_lines():
    parser = doctest.DocTestParser()
    per_file: dict[str, int] = {}
    for where, text in _docstrings():
        # the `>>>` lines and their `...` continuations, as doctest reads them
        n = sum(example.source.count("\n") for example in parser.get_examples(text))
        per_file[where.split(":")[0]] = per_file.get(where.split(":")[0], 0) + n
    total = sum(per_file.values())
    largest = sorted(per_file.items(), key=lambda item: -item[1])[:10]
    assert total <= MAX_DOCTEST_LINES, (
        f"{total} doctest lines, {total - MAX_DOCTEST_LINES} over {MAX_DOCTEST_LINES}; largest: {largest}"
    )
