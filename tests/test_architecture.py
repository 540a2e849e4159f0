"""The package's structure: imports point down its layers, and an import waits inside a function only
for a heavy or optional dependency, saying which. The tests' structure: no test module imports another."""

import ast
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SRC = REPO / "src" / "rejectopt"


def function_level_imports():
    """``(file, line, module, source line)`` of every import inside a function of the package."""
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
                    found[(path.relative_to(REPO), sub.lineno)] = (module, lines[sub.lineno - 1])
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
    own = [f"{path}:{line} {module}" for path, line, module, _ in function_level_imports()
           if module.startswith(".") or module.startswith("rejectopt")]
    assert own == []


def test_every_function_level_import_says_why_it_waits():
    """Only a heavy or optional dependency waits for first use, with a comment naming it."""
    silent = [f"{path}:{line} {text.strip()}" for path, line, module, text in function_level_imports()
              if "#" not in text]
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
            found += [f"{path.name}:{node.lineno} {name}" for name in names
                      if name.split(".")[0].startswith("test_") or name.split(".")[0] == "conftest"]
    assert found == []
