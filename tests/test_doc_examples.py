"""Every documented example runs, and prints what its page says it prints.

Each ```python, ```bash, ```sh and ```console block of README.md, docs/index.md and
docs/guide/*.md is one test case, named by its page and its number among the page's fenced
blocks (``docs/guide/metrics.md#3``, counted from 1). A page's blocks run in order in one
scratch folder, as a reader runs them: its Python blocks share one interpreter (a later block
uses an earlier one's variables), its shell blocks read the files the Python blocks wrote.
Shell blocks run as written, as after README's first line, which installs into ``.venv`` and
never activates it: the scratch folder's ``.venv/bin`` holds ``python``, ``rejectopt``,
``snakemake`` and ``pytest`` of this environment, and a bare ``python``, ``python3``,
``rejectopt``, ``snakemake`` or ``pytest`` fails, as it does for that reader (command not found,
or an interpreter without rejectopt); ``pip`` is refused too, so an install command that is not
marked fails instead of changing the environment. ``workflow/resources/demo_mirror`` is the
repository's, as from the repository's root. Running one block runs the page's earlier blocks
first.

A comment right before a block's fence marks it (several may be joined by ``;``):

- ``<!-- doc-test: skip (why) -->``: not run; the reason is required.
- ``<!-- doc-test: needs REJECTOPT_DATA_MIRROR -->``: run with ``/path/to/mirror`` replaced by
  the variable's folder (``/path/to/faces``: REJECTOPT_FACES_MIRROR), skipped naming the
  variable when it is unset (a failure with ``CI=true``; tests/support.py).
- ``<!-- doc-test: slow -->``: longer than about 10 seconds; the page's later blocks, which may
  build on it, are slow too.
- ``<!-- doc-test: snakefile -->``: the block is a Snakefile (``/path/to/rejectopt``: this
  repository); it is written to ``Snakefile`` and run by ``.venv/bin/snakemake --cores 2``.

A Python block whose first line is ``# name.py`` and a YAML block whose first line is
``# name.yaml`` are also written to that file, as the reader would save them.

What a page says a block prints is checked, read from the page itself, so updating the page is
updating the test:

- a Python expression's value shown in a comment, on its line (``aurc(loss, msp)  # 0.248``) or
  on the comment lines right below it (a table): each number to the digits shown, text exactly;
  a comment that starts with a word is prose and not read;
- "`select` prints `...`" in the text after a block: the quoted line is in the block's output,
  numbers to the digits shown;
- the other numbers of the prose (a risk without rejection, what ``apply`` accepted): the
  functions of :data:`CHECKS`, keyed by the page and a line of the block.
"""

from __future__ import annotations

import ast
import io
import json
import os
import re
import select
import shutil
import subprocess
import sys
import tokenize
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import pytest
from support import REPO, mirror_folder

PAGES = (
    "README.md",
    "docs/index.md",
    *sorted(str(p.relative_to(REPO)) for p in (REPO / "docs" / "guide").glob("*.md")),
)
RUNNABLE = ("python", "bash", "sh", "console")
#: The folders a reader substitutes, and the variable that names each in a test.
PLACEHOLDERS = {
    "/path/to/mirror": "REJECTOPT_DATA_MIRROR",
    "/path/to/faces": "REJECTOPT_FACES_MIRROR",
}
#: A clone of the repository, as a page's Snakefile names it.
CLONE = "/path/to/rejectopt"
#: A block's marks that no comment can carry: tests/test_house.py requires README's set-up commands
#: right below its title.
UNMARKABLE = {
    (
        "README.md",
        1,
    ): "skip (the set-up commands: line 1 installs and runs the demo, whose pipeline run "
    "tests/test_pipeline.py checks on two of its datasets; line 2 installs and runs this test suite)",
}
#: Seconds one block may take.
TIMEOUT = 1200

FENCE = re.compile(r"^(`{3,}|~{3,})\s*([^\s`]*)")
MARK = re.compile(r"^<!--\s*doc-test:(.*?)-->\s*$")
NUMBER = r"(?<![\w.])[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?(?![\w.]*\w)"
TOKEN = re.compile(rf"{NUMBER}|\w+|\S")
VALUE = re.compile(rf"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"|{NUMBER}|\b(?:True|False|None)\b")
STARTS_A_VALUE = re.compile(r"^\s*(?:[-+]?\d|[\"'(\[{]|True\b|False\b|None\b)")


# --------------------------------------------------------------------------- the pages' blocks
@dataclass
class Block:
    page: str
    number: int  # among the page's fenced blocks, from 1
    line: int  # of the opening fence
    lang: str
    code: str
    after: str  # the page's text after the block, to the next block or heading
    skip: str | None = None
    needs: list[str] = field(default_factory=list)
    slow: bool = False
    snakefile: bool = False

    @property
    def id(self):
        return f"{self.page}#{self.number}"

    @property
    def file_name(self):
        """The file the block is written to (its first line ``# name.py`` / ``# name.yaml``), if any."""
        m = re.match(r"#\s*([\w.-]+\.(?:py|ya?ml))\b", self.code)
        return m.group(1) if m and self.lang in ("python", "yaml") else None


def _directives(text):
    """The ``;``-separated directives of a mark (a reason in parentheses may hold ``;``)."""
    parts, depth, current = [], 0, ""
    for char in text:
        depth += (char == "(") - (char == ")")
        if char == ";" and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += char
    return [part.strip() for part in [*parts, current] if part.strip()]


def parse_page(page):
    """The page's fenced blocks, with their marks; and the problems of its marks."""
    lines = (REPO / page).read_text(encoding="utf-8").splitlines()
    blocks, problems, marks, i = [], [], [], 0
    while i < len(lines):
        mark = MARK.match(lines[i].strip())
        if "doc-test" in lines[i] and lines[i].lstrip().startswith("<!--") and not mark:
            problems.append(f"{page}:{i + 1}: a doc-test mark is one line, <!-- doc-test: ... -->")
        if mark:
            marks.append((i + 1, mark.group(1).strip()))
            i += 1
            continue
        fence = FENCE.match(lines[i])
        if not fence:
            if marks and lines[i].strip():
                problems.append(
                    f"{page}:{marks[0][0]}: a doc-test mark not right before a code block"
                )
            marks = [] if lines[i].strip() else marks
            i += 1
            continue
        end = next(
            (j for j in range(i + 1, len(lines)) if lines[j].strip().startswith(fence.group(1))),
            len(lines),
        )
        after = []
        for text in lines[end + 1 :]:
            if FENCE.match(text) or text.startswith("#"):
                break
            after.append(text)
        block = Block(
            page,
            len(blocks) + 1,
            i + 1,
            fence.group(2).lower(),
            "\n".join(lines[i + 1 : end]) + "\n",
            "\n".join(after),
        )
        directives = [d for _, text in marks for d in _directives(text)]
        if (page, block.number) in UNMARKABLE:
            directives.append(UNMARKABLE[page, block.number])
        for directive in directives:
            skip = re.fullmatch(r"skip(?:\s*\((.*)\))?", directive, flags=re.S)
            needs = re.fullmatch(r"needs\s+(\w+)", directive)
            if skip:
                block.skip = (skip.group(1) or "").strip()
                if not block.skip:
                    problems.append(
                        f"{page}:{block.line}: 'skip' without its reason: <!-- doc-test: skip (why) -->"
                    )
            elif needs and needs.group(1) in PLACEHOLDERS.values():
                block.needs.append(needs.group(1))
            elif directive == "slow":
                block.slow = True
            elif directive == "snakefile":
                block.snakefile = True
            else:
                problems.append(f"{page}:{block.line}: unknown doc-test mark {directive!r}")
        if marks and block.lang not in RUNNABLE and not block.snakefile:
            problems.append(
                f"{page}:{block.line}: a doc-test mark on a {block.lang or 'plain'} block, which never runs"
            )
        for placeholder, variable in PLACEHOLDERS.items():
            if placeholder in block.code and variable not in block.needs and block.skip is None:
                problems.append(
                    f"{page}:{block.line}: {placeholder} without <!-- doc-test: needs {variable} -->"
                )
        blocks.append(block)
        marks, i = [], end + 1
    if marks:
        problems.append(f"{page}:{marks[0][0]}: a doc-test mark at the end of the page")
    slow = False
    for block in blocks:  # a block after a slow one may build on it
        slow = block.slow = slow or (block.slow and block.skip is None)
    return blocks, problems


PARSED = {page: parse_page(page) for page in PAGES}
BLOCKS = [block for page in PAGES for block in PARSED[page][0]]


def runs(block):
    return block.lang in RUNNABLE or block.snakefile


def _param(block):
    marks = [pytest.mark.mirror(*block.needs)] if block.needs else []
    if block.slow:
        marks.append(pytest.mark.slow)
    if block.snakefile:
        marks.append(pytest.mark.pipeline)
    return pytest.param(block, id=block.id, marks=marks)


# --------------------------------------------------------------------------- what the page says
def _agrees(shown, actual):
    """``actual`` rounds to the number ``shown`` at the digits shown."""
    try:
        actual = float(actual)
    except (TypeError, ValueError):
        return False
    mantissa, _, exponent = shown.lower().partition("e")
    decimals = len(mantissa.partition(".")[2])
    half = 0.5 * 10.0 ** (int(exponent or 0) - decimals)
    return abs(actual - float(shown)) <= half * (1 + 1e-9) + 1e-12


def _same_tokens(shown, actual):
    """Token lists equal, numbers to the digits shown."""
    if len(shown) != len(actual):
        return False
    return all(
        s == a or (re.fullmatch(NUMBER, s) and re.fullmatch(NUMBER, a) and _agrees(s, a))
        for s, a in zip(shown, actual)
    )


def contains_line(output, expected):
    """``expected`` (whitespace free) occurs in ``output``, numbers to the digits it shows."""
    want, have = TOKEN.findall(expected), TOKEN.findall(output)
    return any(
        _same_tokens(want, have[k : k + len(want)]) for k in range(len(have) - len(want) + 1)
    )


def shown_values(code):
    """``{last line of an expression statement: the text its comments show}`` of a Python block:
    its trailing comment when it starts with a value, else the comment lines right below it."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return {}
    comments = {
        tok.start[0]: (tok.string.lstrip("#"), tok.line[: tok.start[1]].strip() == "")
        for tok in tokenize.generate_tokens(io.StringIO(code).readline)
        if tok.type == tokenize.COMMENT
    }
    shown = {}
    for node in tree.body:
        if not isinstance(node, ast.Expr):
            continue
        end = node.end_lineno
        trailing = comments.get(end)
        if trailing and not trailing[1]:
            if STARTS_A_VALUE.match(trailing[0]):
                shown[end] = ("inline", trailing[0].strip())
            continue
        below, row = [], end + 1
        while row in comments and comments[row][1]:
            below.append(
                comments[row][0][1:] if comments[row][0].startswith(" ") else comments[row][0]
            )
            row += 1
        if below:
            shown[end] = ("below", "\n".join(below))
    return shown


def check_shown_value(block, value, where, shown):
    """The value an expression printed against what the page shows for it."""
    how, text = shown
    if value["text"] is not None and value["kind"] == "table":
        got = value["text"].splitlines()
        want = [line for line in text.splitlines() if line.strip()]
        assert len(got) == len(want) and all(
            _same_tokens(TOKEN.findall(w), TOKEN.findall(g)) for w, g in zip(want, got)
        ), (
            f"{block.id}, line {where}: the page shows\n{text}\nbut the expression gives\n{value['text']}"
        )
        return
    if how == "below" and not STARTS_A_VALUE.match(text):
        return  # prose below an expression
    if value["atoms"] is None:
        pytest.fail(
            f"{block.id}, line {where}: the page shows {text!r} for a value that cannot be compared: "
            f"{value['text'][:300]}"
        )
    shown_atoms = [m.group(0) for m in VALUE.finditer(text)]
    atoms = value["atoms"]
    ok = len(shown_atoms) >= len(atoms)
    for s, a in zip(shown_atoms, atoms):
        if s[0] in "'\"":
            ok = ok and ast.literal_eval(s) == a
        elif s in ("True", "False", "None"):
            ok = ok and s == a
        else:
            ok = ok and _agrees(s, a)
    assert ok, (
        f"{block.id}, line {where}: the page shows {text!r}, the expression gives {value['text'][:500]}"
    )


def check_prints(block, output):
    """Each "`cmd` prints `...`" of the text after the block is in the block's output."""
    checked = 0
    for quoted in re.findall(r"`[\w ./-]+` prints (?:e\.g\. )?`([^`]+)`", block.after):
        quoted = " ".join(quoted.split())
        assert contains_line(output, quoted), (
            f"{block.id}: the page says it prints {quoted!r}; it printed:\n{output[-4000:]}"
        )
        checked += 1
    return checked


# --------------------------------------------------------------------------- the prose's other numbers
def _paragraph_number(block, pattern):
    """The number the text after ``block`` gives in ``pattern`` (a regex with one group)."""
    m = re.search(pattern, " ".join(block.after.split()))
    assert m, f"{block.id}: the text after the block no longer says {pattern!r}; update CHECKS"
    return m.group(1)


def _select_report(folder):
    return json.loads((folder / "report.json").read_text())


def _says(block, pattern, actual):
    """The text after ``block`` gives ``actual`` in ``pattern``, to the digits it shows."""
    shown = _paragraph_number(block, pattern)
    assert _agrees(shown.replace(",", ""), actual), (
        f"{block.id}: the page says {shown} in {pattern!r}, the run gives {actual}"
    )


def check_readme_select(run, block):
    report = _select_report(run.workdir / "selection")
    _says(block, r"on the ([\d,]+) rows it held out", report["rows"]["report"])
    _says(block, r"rejecting the ([\d.]+) %", 100 * (1 - report["report"]["coverage"]))
    _says(block, r"leaves ([\d.]+) % errors", report["report"]["selective_risk"])
    _says(
        block,
        r"against ([\d.]+) % on the same rows without rejection",
        report["risk_full_coverage_report"],
    )


def check_selective_select(run, block):
    report = _select_report(run.workdir / "results/demo/selection")
    _says(block, r"about ([\d.]+) % errors among", report["report"]["selective_risk"])
    _says(block, r"among the accepted ([\d.]+) %", 100 * report["report"]["coverage"])
    _says(block, r"against ([\d.]+) % without rejection", report["risk_full_coverage_report"])
    # apply's decisions on the new rows, scored with their labels (the page's own split)
    with np.load(run.workdir / "results/demo/sattelite.npz") as data:
        y = data["y"]
    new = np.random.default_rng(0).permutation(len(y))[4000:]
    decisions = pd.read_csv(run.workdir / "results/demo/decisions.csv")
    accept, wrong = decisions["accept"].to_numpy() == 1, decisions["y_pred"].to_numpy() != y[new]
    _says(block, r"On ([\d,]+) rows it never saw", len(new))
    _says(block, r"`apply` accepted ([\d.]+) %", 100 * accept.mean())
    _says(block, r"with a selective risk of ([\d.]+) %", 100 * wrong[accept].mean())
    _says(block, r"\(([\d.]+) % on all of them", 100 * wrong.mean())


def check_ood_select(run, block):
    _says(
        block,
        r"\(([\d.]+) % errors on the ID report rows without rejection\)",
        _select_report(run.workdir / "results/demo/selection_ood")["risk_full_coverage_report"],
    )
    new = pd.read_csv(run.workdir / "results/demo/new_ood.csv")
    decisions = pd.read_csv(run.workdir / "results/demo/decisions_ood.csv")
    accept, ood = decisions["accept"].to_numpy() == 1, new["is_ood"].to_numpy() == 1
    wrong = new["y_pred"].to_numpy() != new["y"].to_numpy()
    _says(block, r"On the ([\d,]+) rows it never saw", len(new))
    _says(block, r"accepted ([\d.]+) % of the ID", 100 * accept[~ood].mean())
    _says(block, r"and ([\d.]+) % of the OOD rows", 100 * accept[ood].mean())
    _says(
        block,
        r"with ([\d.]+) % errors among the accepted ID rows",
        100 * wrong[accept & ~ood].mean(),
    )
    _says(block, r"accepted ID rows against ([\d.]+) %", 100 * wrong[~ood].mean())


#: (page, a line of the block) -> a check of the numbers the text after the block states.
CHECKS = {
    (
        "README.md",
        ".venv/bin/rejectopt select --data val.csv --target coverage=0.8 --out selection/",
    ): check_readme_select,
    (
        "docs/guide/selective.md",
        ".venv/bin/rejectopt select --data results/demo/val.csv",
    ): check_selective_select,
    (
        "docs/guide/ood.md",
        ".venv/bin/rejectopt select --data results/demo/val_ood.csv",
    ): check_ood_select,
}


def _check_of(block):
    found = [
        check for (page, line), check in CHECKS.items() if page == block.page and line in block.code
    ]
    return found[0] if found else None


# --------------------------------------------------------------------------- running a page
#: The interpreter a page's Python blocks share: one request a line on stdin, each answer a JSON
#: line on the file descriptor argv[1] (the blocks' own output may go anywhere else).
WORKER = r'''
import ast, contextlib, io, json, linecache, numbers, os, sys, traceback

answers = os.fdopen(int(sys.argv[1]), "w")
namespace = {"__name__": "__main__", "__builtins__": __builtins__}


def atoms(value):
    """The numbers and strings of a value, in order; None for what they cannot describe."""
    np = sys.modules.get("numpy")
    if isinstance(value, str):
        return [value]
    if isinstance(value, bool) or value is None:
        return [str(value)]
    if np is not None and isinstance(value, np.ndarray):
        return None if value.size > 10000 else [x for v in value.ravel().tolist() for x in atoms(v)]
    if isinstance(value, numbers.Number) or (np is not None and isinstance(value, np.generic)):
        try:
            return [float(value)]
        except (TypeError, ValueError):
            return None
    if isinstance(value, (tuple, list)):
        out = [atoms(v) for v in value]
        return None if any(o is None for o in out) else [x for o in out for x in o]
    return None


for request in sys.stdin:
    request = json.loads(request)
    code, name = request["code"], request["name"]
    linecache.cache[name] = (len(code), None, code.splitlines(True), name)
    output, values, error = io.StringIO(), [], None
    try:
        with contextlib.redirect_stdout(output), contextlib.redirect_stderr(output):
            for node in ast.parse(code, name).body:
                if isinstance(node, ast.Expr):
                    value = eval(compile(ast.Expression(node.value), name, "eval"), namespace)
                    if value is None:
                        continue
                    table = type(value).__module__.startswith("pandas")
                    if table:  # as a notebook shows it: every column, however wide
                        with sys.modules["pandas"].option_context("display.width", 10000, "display.max_columns", None):
                            text = str(value)
                    values.append({"line": node.end_lineno, "kind": "table" if table else "value",
                                   "atoms": None if table else atoms(value),
                                   "text": text if table else repr(value)[:3000]})
                else:
                    exec(compile(ast.Module([node], type_ignores=[]), name, "exec"), namespace)
    except BaseException:
        error = traceback.format_exc()
    answers.write(json.dumps({"output": output.getvalue(), "values": values, "error": error}) + "\n")
    answers.flush()
'''


#: The commands of README's ``.venv/bin``, as this environment runs them.
VENV_COMMANDS = {
    "python": "",
    "python3": "",
    "rejectopt": "-m rejectopt",
    "snakemake": "-m snakemake",
    "pytest": "-m pytest",
}


def _refusal(message):
    return f"#!/bin/sh\necho 'doc test: {message}' >&2\nexit 127\n"


def _shims(venv_bin, path_bin):
    """``venv_bin``: README's ``.venv/bin`` with ``python``, ``rejectopt``, ... of this
    environment; ``path_bin``, first on PATH: the same names bare, which fail as for a reader
    who never activated ``.venv``; and in both a ``pip`` that refuses."""
    for folder in (venv_bin, path_bin):
        folder.mkdir(parents=True, exist_ok=True)
    for name, module in VENV_COMMANDS.items():
        (venv_bin / name).write_text(f'#!/bin/sh\nexec "{sys.executable}" {module} "$@"\n')
        (path_bin / name).write_text(
            _refusal(
                f"{name}: not the command README line 1 installs, which never activates .venv; "
                f"write .venv/bin/{name}"
            )
        )
    for name in ("pip", "pip3"):
        for folder in (venv_bin, path_bin):
            (folder / name).write_text(
                _refusal(
                    "pip would change the test environment; mark the block "
                    "<!-- doc-test: skip (why) -->"
                )
            )
    for path in [*venv_bin.iterdir(), *path_bin.iterdir()]:
        path.chmod(0o755)


class PageRun:
    """One page's scratch folder and interpreter, and what its blocks did."""

    def __init__(self, page, workdir):
        self.page, self.workdir = page, workdir
        self.bin = workdir / ".venv" / "bin"  # the README's `.venv/bin/...`
        bare = workdir.parent / f"{workdir.name}-bare"  # outside the page's folder
        _shims(self.bin, bare)
        (workdir / "workflow" / "resources").mkdir(parents=True)
        (workdir / "workflow" / "resources" / "demo_mirror").symlink_to(
            REPO / "workflow" / "resources" / "demo_mirror"
        )
        self.env = {
            **os.environ,
            "PATH": f"{bare}{os.pathsep}{os.environ.get('PATH', '')}",
            "MPLBACKEND": "Agg",
        }
        self.done: dict[int, dict | None] = {}  # block number -> result; None: not run (skipped)
        self.worker = None

    # the Python interpreter -------------------------------------------------------------------
    def _python(self, block, code):
        if self.worker is None:
            read, write = os.pipe()
            self.worker = subprocess.Popen(
                [sys.executable, "-c", WORKER, str(write)],
                stdin=subprocess.PIPE,
                text=True,
                cwd=self.workdir,
                env=self.env,
                pass_fds=(write,),
                stdout=open(self.workdir / ".python.log", "ab"),
                stderr=subprocess.STDOUT,
            )
            os.close(write)
            self.answers = os.fdopen(read, "r")
        self.worker.stdin.write(json.dumps({"code": code, "name": block.id}) + "\n")
        self.worker.stdin.flush()
        ready, _, _ = select.select([self.answers], [], [], TIMEOUT)
        line = self.answers.readline() if ready else ""
        if not line:
            self.close()
            pytest.fail(
                f"{block.id}: the page's interpreter {'timed out' if not ready else 'died'}"
            )
        return json.loads(line)

    def close(self):
        if self.worker is not None:
            self.worker.stdin.close()
            try:
                self.worker.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.worker.kill()
                self.worker.wait()
            self.answers.close()
            self.worker = None

    # one block --------------------------------------------------------------------------------
    def _code(self, block):
        code = block.code.replace(CLONE, str(REPO))
        for placeholder, variable in PLACEHOLDERS.items():
            if variable in block.needs:
                code = code.replace(placeholder, str(mirror_folder(variable)))
        return code

    def _shell(self, block, code):
        if block.lang == "console":
            code = "\n".join(line[2:] for line in code.splitlines() if line.startswith("$ ")) + "\n"
        script = self.workdir.parent / f"{self.workdir.name}-block{block.number}.sh"
        script.write_text(code)
        try:
            run = subprocess.run(
                ["bash", "-eo", "pipefail", str(script)],
                cwd=self.workdir,
                env=self.env,
                capture_output=True,
                text=True,
                timeout=TIMEOUT,
            )
        except subprocess.TimeoutExpired:
            pytest.fail(f"{block.id}: still running after {TIMEOUT} s")
        output = run.stdout + run.stderr
        return {
            "output": output,
            "values": [],
            "error": None
            if run.returncode == 0
            else f"exit status {run.returncode}:\n{output[-6000:]}",
        }

    def _snakefile(self, block, code):
        (self.workdir / "Snakefile").write_text(code)
        return self._shell(block, ".venv/bin/snakemake --cores 2\n")

    def run(self, block):
        """Run ``block`` (and the page's earlier blocks first); its result."""
        for earlier in PARSED[self.page][0]:
            if earlier.number >= block.number:
                break
            if earlier.number not in self.done:
                self._execute(earlier)
            if self.done[earlier.number] is not None and self.done[earlier.number]["error"]:
                pytest.fail(
                    f"{block.id}: the page's block {earlier.number} (line {earlier.line}) failed first"
                )
        if block.number not in self.done:
            self._execute(block)
        return self.done[block.number]

    def _execute(self, block):
        self.done[block.number] = None
        if block.skip is not None or any(mirror_folder(v) is None for v in block.needs):
            return  # a prerequisite that cannot run here; the test of the block itself says why
        code = self._code(block)
        if block.file_name:
            (self.workdir / block.file_name).write_text(code)
        if block.snakefile:
            result = self._snakefile(block, code)
        elif block.lang == "python":
            result = self._python(block, code)
        elif block.lang in RUNNABLE:
            result = self._shell(block, code)
        else:
            result = {"output": "", "values": [], "error": None}
        self.done[block.number] = result


@pytest.fixture(scope="module")
def page_runs(tmp_path_factory):
    runs = {}

    def get(page):
        if page not in runs:
            runs[page] = PageRun(page, tmp_path_factory.mktemp(re.sub(r"\W", "_", page)))
        return runs[page]

    yield get
    for run in runs.values():
        run.close()


# --------------------------------------------------------------------------- the tests
def test_every_mark_is_understood_and_every_skip_has_its_reason():
    problems = [p for page in PAGES for p in PARSED[page][1]]
    assert not problems, "\n".join(problems)
    assert sum(runs(b) and b.skip is None for b in BLOCKS) >= 25, "the pages lost their examples"


def test_a_shown_number_holds_to_its_digits():
    assert _agrees("7.89", 7.8949) and not _agrees("7.89", 7.8951) and not _agrees("7.89", 7.9)
    assert _agrees("-0.018", -0.0184) and _agrees("1500", 1500) and not _agrees("1500", 1501)
    assert _agrees("1.2e-3", 0.00124) and not _agrees("1.2e-3", 0.0013)
    output = "wrote x\nreport rows: coverage 0.7851 [0.7231, 0.8363], selective risk 3.185 [1.368, 7.238] %\n"
    assert contains_line(output, "coverage 0.785 [0.723, 0.8363], selective risk 3.185")
    assert not contains_line(output, "coverage 0.785 [0.723, 0.8363], selective risk 3.17")
    assert not contains_line(
        output, "coverage 0.785 [0.723, 0.8363] selective risk 3.185"
    )  # a comma lost
    assert shown_values("x = 1\nf(x)  # 0.25 (prose)\ng(x)  # prose\nh(x)\n#  a  b\n# 0  1\n") == {
        2: ("inline", "0.25 (prose)"),
        4: ("below", " a  b\n0  1"),
    }


#: The pages of a reader's first hour: every command they show, in a block (run or not) or in the
#: text, is written as it runs after README's first line, which never activates ``.venv``.
FIRST_HOUR = (
    "README.md",
    "docs/guide/getting_started.md",
    "docs/guide/guarantees.md",
    "docs/guide/troubleshooting.md",
)
#: A command of README's ``.venv/bin`` written bare, at the start of a command (``python3 -m venv``
#: makes the venv, with the system's Python).
BARE_COMMAND = re.compile(
    r"(?:^|&&|\|\||[;|(])\s*((?:python3?|rejectopt|snakemake|pytest|pip3?)\b(?!\s+-m\s+venv\b)[^\n]*)",
    re.M,
)


def bare_commands_in_text(text):
    """The bare commands of ``text``'s inline code (a span with a space: a command, not a name)."""
    spans = (" ".join(span.split()) for span in re.findall(r"`([^`]+)`", text))
    return [m.group(1) for span in spans if " " in span for m in BARE_COMMAND.finditer(span)]


def bare_commands(page):
    """The commands of ``page``'s shell blocks and text that call ``python``, ``rejectopt``, ...
    without ``.venv/bin/``."""
    text = (REPO / page).read_text(encoding="utf-8")
    in_blocks = [
        m.group(1)
        for block in PARSED[page][0]
        if block.lang in RUNNABLE
        for m in BARE_COMMAND.finditer(block.code)
    ]
    prose = re.sub(r"^(`{3,}|~{3,}).*?^\1", "", text, flags=re.M | re.S)
    return in_blocks + bare_commands_in_text(prose)


def test_the_first_hour_pages_write_every_command_as_it_runs_after_readme_line_1():
    assert bare_commands_in_text(
        "`python -m rejectopt select\n--help`, `a && pytest -q`, `python3 -m venv .venv`, `pytest`"
    ) == ["python -m rejectopt select --help", "pytest -q"]
    for page in FIRST_HOUR:
        assert bare_commands(page) == [], page


def test_a_shell_block_runs_as_written(tmp_path):
    """The doc test's shell is a reader's after README's first line: ``.venv/bin/rejectopt`` runs,
    a bare ``rejectopt`` (or ``python``, ``snakemake``, ...) fails as on their machine."""
    run = PageRun("README.md", tmp_path / "page")
    block = Block("README.md", 0, 0, "bash", "", "")
    for name in VENV_COMMANDS:
        bare = run._shell(block, f"{name} --version\n")
        assert bare["error"] is not None and f"write .venv/bin/{name}" in bare["output"], bare
    venv = run._shell(
        block, ".venv/bin/rejectopt --version\n.venv/bin/python -c 'import rejectopt'\n"
    )
    assert venv["error"] is None and "rejectopt" in venv["output"], venv


#: README's quickstart: the example a newcomer runs first.
QUICKSTART = next(
    b for b in PARSED["README.md"][0] if b.lang == "python" and "SelectiveClassifier(" in b.code
)


def quickstart_report(monkeypatch, threads, perturbation=0.0, seed=0):
    """The quickstart's ``report_``, run with BLAS and OpenMP on ``threads`` threads and its
    features multiplied by ``1 + perturbation * N(0, 1)``."""
    # scikit-learn and threadpoolctl: heavy, for the quickstart's tests only
    import sklearn.datasets
    from threadpoolctl import threadpool_limits

    load = sklearn.datasets.load_digits

    def perturbed(**kwargs):
        X, y = load(**kwargs)
        noise = np.random.default_rng(seed).standard_normal(X.shape)
        return X * (1 + perturbation * noise), y

    namespace = {"__name__": "quickstart"}
    with monkeypatch.context() as patch, threadpool_limits(limits=threads):
        patch.setattr(sklearn.datasets, "load_digits", perturbed)
        exec(compile(QUICKSTART.code, QUICKSTART.id, "exec"), namespace)
    return namespace["clf"].report_


def test_the_quickstart_reports_the_same_on_one_and_two_threads(monkeypatch):
    """The thread count changes the order of BLAS's sums, so a fit's last bits: the quickstart's
    report must not move with it (docs/guide/troubleshooting.md). One and two threads give the
    same bits on some machines and not on others, so the fit must also ignore features perturbed
    by 1e-12 and 1e-10 relative, well above a summation order's rounding: LogisticRegression on
    the raw digits, stopped by lbfgs's tolerance after hundreds of steps, moved a held-out row
    across the threshold at 1e-12. Exact equality: the report counts rows."""
    one = quickstart_report(monkeypatch, threads=1)
    assert quickstart_report(monkeypatch, threads=2) == one
    for seed, perturbation in ((0, 1e-12), (1, 1e-12), (2, 1e-10)):
        assert quickstart_report(monkeypatch, 1, perturbation, seed) == one, (seed, perturbation)


def test_getting_started_shows_the_readme_quickstart():
    """The getting-started page repeats the quickstart (importing from rejectopt.estimator): the
    same statements, so the test above covers both."""
    [block] = [
        b
        for b in PARSED["docs/guide/getting_started.md"][0]
        if b.lang == "python" and "SelectiveClassifier(" in b.code
    ]

    def statements(code):
        return [
            ast.dump(node) for node in ast.parse(code).body if not isinstance(node, ast.ImportFrom)
        ]

    assert statements(block.code) == statements(QUICKSTART.code)


def test_every_check_names_one_block():
    for (page, line), check in CHECKS.items():
        matching = [b.number for b in PARSED[page][0] if line in b.code]
        assert len(matching) == 1, (
            f"CHECKS[{page!r}, {line!r}] ({check.__name__}) matches blocks {matching}"
        )


@pytest.mark.parametrize("block", [_param(b) for b in BLOCKS if runs(b)])
def test_documented_example_runs(block, page_runs):
    if block.skip is not None:
        pytest.skip(f"marked in the page: {block.skip}")
    run = page_runs(block.page)
    result = run.run(block)
    assert result["error"] is None, (
        f"{block.id} (line {block.line}) failed:\n{result['error'][-6000:]}\nits output:\n{result['output'][-3000:]}"
    )
    if block.lang == "python" and not block.snakefile:
        shown = shown_values(block.code)
        for value in result["values"]:
            if value["line"] in shown:
                check_shown_value(block, value, block.line + value["line"], shown[value["line"]])
        missing = sorted(set(shown) - {v["line"] for v in result["values"]})
        assert not [m for m in missing if shown[m][0] == "inline"], (
            f"{block.id}: lines {missing} show a value but gave None"
        )
    check_prints(block, result["output"])
    check = _check_of(block)
    if check is not None:
        check(run, block)


#: Sphinx, with PyTorch out of reach, as for a reader who installed the `docs` extra alone.
SPHINX_WITHOUT_TORCH = r"""
import importlib.abc, sys

class NoTorch(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name.split(".")[0] == "torch":
            raise ImportError("no torch here")

sys.meta_path.insert(0, NoTorch())
from sphinx.cmd.build import main
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.slow  # builds the site
def test_the_site_builds_without_torch(tmp_path):
    """Getting started's build command with the `docs` extra alone: the gallery runs every example
    but the deep-network one, whose page shows its code without output. The copy keeps the
    gallery's generated pages out of the checkout, where tests/test_docs.py builds with torch."""
    shutil.copytree(
        REPO / "docs",
        tmp_path / "docs",
        ignore=shutil.ignore_patterns("_build", "auto_examples", "api"),
    )
    shutil.copytree(REPO / "examples", tmp_path / "examples")
    for name in ("workflow", "config.yaml", "Snakefile", "src"):  # what the examples read
        (tmp_path / name).symlink_to(REPO / name)
    run = subprocess.run(
        [
            sys.executable,
            "-c",
            SPHINX_WITHOUT_TORCH,
            "-W",
            "--keep-going",
            "-q",
            "-b",
            "html",
            "-d",
            str(tmp_path / "doctrees"),
            "docs",
            str(tmp_path / "html"),
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={**os.environ, "MPLBACKEND": "Agg"},
        timeout=TIMEOUT,
    )
    assert run.returncode == 0, f"sphinx-build without torch failed:\n{run.stderr[-6000:]}"
    gallery = tmp_path / "html" / "auto_examples"
    assert "sphx-glr-script-out" not in (gallery / "plot_deep_network.html").read_text(
        encoding="utf-8"
    )
    assert "sphx-glr-script-out" in (gallery / "plot_sele_rc_curve.html").read_text(
        encoding="utf-8"
    )
