"""The package's structure: imports point down its layers, and an import waits inside a function only
for a heavy or optional dependency, saying which. The tests' structure: no test module imports another."""

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest
from support import MAX_PUBLIC_NAMES

REPO = Path(__file__).resolve().parents[1]
SRC = REPO / "src" / "rejectopt"


def function_level_imports():
    """``(file, line, module, source)`` of every import inside a function of the package.

    The source is the statement's lines, after a comment-only line just above it: the comment saying
    why the import waits sits on its line or, where the line would be too long, above it."""
    found = {}
    for path in sorted(SRC.rglob("*.py")):
        lines = path.read_text().splitlines()
        for node in ast.walk(ast.parse("\n".join(lines))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for sub in ast.walk(node):
                    if isinstance(sub, ast.ImportFrom):
                        module = "." * sub.level + (sub.module or "")
                    elif isinstance(sub, ast.Import):
                        module = sub.names[0].name
                    else:
                        continue
                    above = lines[sub.lineno - 2].strip() if sub.lineno > 1 else ""
                    text = "\n".join(lines[sub.lineno - 1 : sub.end_lineno])
                    if above.startswith("#"):
                        text = above + "\n" + text
                    found[(path.relative_to(REPO), sub.lineno)] = (module, text)
    return [(path, line, module, text) for (path, line), (module, text) in sorted(found.items())]


def test_the_import_contracts_hold():
    """pyproject.toml's import-linter contracts: the layers, and no cycle between sibling modules."""
    lint = Path(sys.executable).with_name("lint-imports")
    run = subprocess.run([str(lint)], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    assert "Contracts: 4 kept, 0 broken." in run.stdout
    # the three strata, in this order, each its own layer
    assert "Three strata: the shell over the pipeline over the library KEPT" in run.stdout


def test_no_module_of_the_package_is_imported_inside_a_function():
    """A function-level import of our own module hides a cycle or a layer crossing from the reader."""
    own = [
        f"{path}:{line} {module}"
        for path, line, module, _ in function_level_imports()
        if module.startswith(".") or module.startswith("rejectopt")
    ]
    assert own == []


def test_every_function_level_import_says_why_it_waits():
    """Only a heavy or optional dependency waits for first use, with a comment naming it."""
    silent = [
        f"{path}:{line} {text.strip()}"
        for path, line, module, text in function_level_imports()
        if "#" not in text
    ]
    assert silent == []


def test_no_test_module_imports_another():
    """What test modules share lives in helper modules (tests/support.py, ...) and conftest.py's fixtures:
    a test module imported by another ties the two (moving a helper breaks the other), and a fixture
    imported by name is built again in each module."""
    tests = REPO / "tests"
    found = []
    for path in sorted(tests.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            else:
                continue
            found += [
                f"{path.name}:{node.lineno} {name}"
                for name in names
                if name.split(".")[0].startswith("test_") or name.split(".")[0] == "conftest"
            ]
    assert found == []


# --- the package's names: one home for the exceptions, dir() as __all__, the public names -------


#: Exceptions of the strata above the library, which stay there: the library never raises them and
#: may not import them (the import contracts), so ``rejectopt.exceptions`` cannot re-export them.
STRATUM_EXCEPTIONS = {
    "rejectopt.pipeline.config.ConfigError",  # the pipeline's configuration checks, before any job
    "rejectopt.pipeline.config.PluginError",  # a ConfigError: a plugin module the pipeline loads
    "rejectopt.cli._errors.InputError",  # the shell's: main() turns it into one line and status 2
}
#: Signals between rejectopt.datasets' private modules, caught where they are raised: no caller of
#: the library meets them (a caller sees the DownloadError or UnpackLimitError they become); and
#: _registry's os._exit at a user module's import, which the pipeline's loaders turn into their error.
INTERNAL_SIGNALS = {
    "rejectopt.datasets._stream.OverLimit",
    "rejectopt.datasets._stream.ReadFailed",
    "rejectopt._registry.ExitAtImport",
}


def package_modules():
    """``{name: module}`` of every module of the package, imported."""
    import importlib
    import pkgutil

    import rejectopt

    names = ["rejectopt"] + [
        info.name for info in pkgutil.walk_packages(rejectopt.__path__, "rejectopt.")
    ]
    return {name: importlib.import_module(name) for name in names}


def api_modules():
    """``API_MODULES`` of docs/conf.py, read from its source (importing it writes the API pages)."""
    tree = ast.parse((REPO / "docs" / "conf.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if any(
            isinstance(t, ast.Name) and t.id == "API_MODULES" for t in getattr(node, "targets", [])
        ):
            return list(ast.literal_eval(node.value))
    raise AssertionError("docs/conf.py assigns no API_MODULES")


def is_public(name):
    return not any(part.startswith("_") for part in name.split("."))


def in_pipeline_or_shell(name):
    return any(
        name == top or name.startswith(top + ".") for top in ("rejectopt.pipeline", "rejectopt.cli")
    )


def test_one_module_holds_every_exception_of_the_library():
    """As ``sklearn.exceptions``: every exception a caller of the library can meet is defined in
    ``rejectopt.exceptions`` (its old modules import it from there, so their paths still work), and
    is listed once, there, not again in another public module's ``__all__``."""
    import inspect

    from rejectopt import exceptions

    defined = {}
    for module in package_modules().values():
        for obj in vars(module).values():
            if (
                isinstance(obj, type)
                and issubclass(obj, BaseException)
                and obj.__module__.startswith("rejectopt")
            ):
                defined[f"{obj.__module__}.{obj.__qualname__}"] = obj
    assert STRATUM_EXCEPTIONS | INTERNAL_SIGNALS <= set(defined)
    library = {
        key: cls
        for key, cls in defined.items()
        if key not in STRATUM_EXCEPTIONS | INTERNAL_SIGNALS and not cls.__name__.startswith("_")
    }
    assert sorted(library) == sorted(f"rejectopt.exceptions.{name}" for name in exceptions.__all__)
    assert all(getattr(exceptions, cls.__name__) is cls for cls in library.values())
    listed_again = [
        f"{name}.{member}"
        for name, module in package_modules().items()
        if is_public(name) and name != "rejectopt.exceptions"
        for member in getattr(module, "__all__", [])
        if inspect.isclass(getattr(module, member)) and getattr(module, member) in library.values()
    ]
    assert listed_again == []


def test_dir_of_every_package_is_its_all():
    """``dir(package)`` shows its public names, all of them (lazy_loader's own ``__dir__`` lists only
    what it loads lazily), and every one of them resolves."""
    wrong = {}
    for name, module in package_modules().items():
        if not hasattr(module, "__path__"):
            continue
        if sorted(dir(module)) != sorted(module.__all__):
            wrong[name] = sorted(set(dir(module)) ^ set(module.__all__))
        missing = [member for member in module.__all__ if not hasattr(module, member)]
        if missing:
            wrong[f"{name} (unresolved)"] = missing
    assert wrong == {}


def test_every_public_name_is_in_the_api_reference_or_the_pipeline():
    """A name importable from a module without an underscore in its path is in the API reference,
    or in the pipeline's package; the shell (rejectopt.cli) offers only its entry point. The
    library's public names are at most MAX_PUBLIC_NAMES."""
    import inspect

    import rejectopt
    import rejectopt.cli

    modules = package_modules()
    reference = api_modules()
    library = {
        name: module
        for name, module in modules.items()
        if is_public(name) and not in_pipeline_or_shell(name)
    }
    assert [name for name, module in library.items() if not hasattr(module, "__all__")] == []
    # rejectopt itself lists its submodules and re-exports two classes of the reference's modules
    assert sorted(set(library) - set(reference)) == ["rejectopt"]
    from_reference = {
        id(getattr(modules[name], member)) for name in reference for member in modules[name].__all__
    }
    assert [
        member
        for member in rejectopt.__all__
        if not inspect.ismodule(getattr(rejectopt, member))
        and id(getattr(rejectopt, member)) not in from_reference
    ] == []
    assert rejectopt.cli.__all__ == ["main"]
    names = {
        member
        for module in library.values()
        for member in module.__all__
        if not inspect.ismodule(getattr(module, member))
    }
    counts = {name: len(module.__all__) for name, module in library.items()}
    assert len(names) <= MAX_PUBLIC_NAMES, (
        f"{len(names)} public names, over {MAX_PUBLIC_NAMES}; per module: {counts}"
    )


def test_the_command_line_words_errors_with_the_library_s_one_line():
    """One function puts an error's message on one line, the library's (``model.one_line``): the
    command line's messages and the model file's errors read alike."""
    from rejectopt.cli._errors import one_line
    from rejectopt.model import one_line as library_one_line

    assert one_line is library_one_line
    assert one_line(ValueError("bad value\n   in row 3")) == "bad value in row 3"
    assert one_line(KeyError()) == "KeyError"  # an error without a message is named, not blank


def test_the_workflow_reaches_the_library_through_public_modules_only():
    """The pipeline package is the workflow's door: no rule or script imports a module, or a name, whose
    name starts with an underscore (those move without notice; rejectopt.pipeline re-exports what they need)."""
    assert (SRC / "pipeline" / "__init__.py").is_file()
    private = []
    for path in sorted((REPO / "workflow").rglob("*")):
        if path.suffix not in (".py", ".smk"):
            continue
        for line_no, line in enumerate(path.read_text().splitlines(), 1):
            match = re.match(
                r"\s*(?:from\s+(rejectopt[\w.]*)\s+import\s+(.*)|import\s+(rejectopt[\w.]*))", line
            )
            if not match:
                continue
            module = match.group(1) or match.group(3)
            names = [
                n.strip().split(" as ")[0]
                for n in (match.group(2) or "").strip("()").split(",")
                if n.strip()
            ]
            if any(part.startswith("_") for part in module.split(".")) or any(
                n.startswith("_") for n in names
            ):
                private.append(f"{path.relative_to(REPO)}:{line_no} {line.strip()}")
    assert private == []


def test_the_old_home_of_a_built_in_experiment_is_named_with_its_new_one():
    from rejectopt.pipeline import load_experiments

    with pytest.raises(ImportError, match=r"write 'rejectopt\.pipeline\.experiments\.guarantees'"):
        load_experiments(["rejectopt.experiments.guarantees"])


def _unit(module):
    """The unit a private name stays inside: a module directly in the package is its own unit
    (``rejectopt.model``); a module of a subpackage belongs to that subpackage (``rejectopt.metrics``,
    ``rejectopt.pipeline.report``)."""
    package = module.rpartition(".")[0]
    return module if package == "rejectopt" else package


def private_imports_across_units():
    """``file:line name (from module)`` of every ``_``-prefixed name one unit imports from another.

    The name imported is what counts: ``from ..metrics._confusion import selective_outcome`` takes a
    public name; ``from ..model import _one_line`` and ``from ..metrics import _confusion`` do not.
    A package's private module is shared with the package's own subpackages (``from .. import
    _contract`` in an experiment's subpackage): they are inside the package it is private to."""
    found = []
    for path in sorted(SRC.rglob("*.py")):
        parts = path.relative_to(SRC.parent).with_suffix("").parts
        is_package = parts[-1] == "__init__"
        module = ".".join(parts[:-1] if is_package else parts)
        package = module if is_package else module.rpartition(".")[0]
        importer = module if is_package else _unit(module)
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.ImportFrom):
                continue
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            if not source.startswith("rejectopt"):
                continue
            source_is_package = (SRC.parent / source.replace(".", "/") / "__init__.py").exists()
            exporter = source if source_is_package else _unit(source)
            if exporter == importer:
                continue
            for alias in node.names:
                name = alias.name
                home = SRC.parent / source.replace(".", "/") / name
                if (
                    source_is_package
                    and module.startswith(source + ".")
                    and (home.with_suffix(".py").exists() or (home / "__init__.py").exists())
                ):
                    continue
                if name.startswith("_") and not (name.startswith("__") and name.endswith("__")):
                    found.append(f"{path.relative_to(REPO)}:{node.lineno} {name} (from {source})")
    return found


def test_no_unit_imports_a_private_name_of_another():
    """A ``_`` name is a unit's own: another unit that needs it needs a public name in its home,
    so that the home can change the private one without breaking a reader it cannot see."""
    found = private_imports_across_units()
    assert not found, "private names imported across units:\n" + "\n".join(found)


def test_the_open_unit_and_1d_checks_are_written_once():
    """Every (0, 1) and 1-D check calls rejectopt._checks.check_open_unit / check_1d: the message
    written anywhere else (a string or an f-string's text, docstrings aside) is a second definition,
    whose wording and handling of text, bools and NaN would drift from the first."""
    pattern = re.compile(r"must (?:lie |be )?in (?:the open interval )?\(0, ?1\)|must be 1-D")
    found = []
    for path in sorted(SRC.rglob("*.py")):
        if path.name == "_checks.py":
            continue
        tree = ast.parse(path.read_text())
        docstrings = {
            id(node.body[0].value)
            for node in ast.walk(tree)
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
            and node.body
            and isinstance(node.body[0], ast.Expr)
            and isinstance(node.body[0].value, ast.Constant)
        }
        for node in ast.walk(tree):
            if isinstance(node, ast.JoinedStr):
                text = "".join(v.value for v in node.values if isinstance(v, ast.Constant))
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                if id(node) in docstrings:
                    continue
                text = node.value
            else:
                continue
            if pattern.search(text):
                found.append(f"{path.relative_to(REPO)}:{node.lineno} {text.strip()[:60]!r}")
    assert sorted(set(found)) == []
