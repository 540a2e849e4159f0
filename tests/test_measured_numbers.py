"""No measured timing in the library's docstrings and comments: a measured number belongs in a
benchmark record (``benchmarks/*records*``), which the docstring names.

A timing in prose goes stale as soon as the code, the machine or a dependency changes, and
nothing re-measures it; a record says how and when it was measured and can be re-run.
"""

import ast
import io
import re
import tokenize
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "rejectopt"

#: A time measurement: a number followed by a unit of time, or a speed-up in words.
TIMING = re.compile(
    r"\b\d+(?:[.,]\d+)?(?:\s?-\s?\d+(?:[.,]\d+)?)?\s?"
    r"(?:ms|s|sec|secs|seconds?|CPU-s|CPU-hours?|CPU hours?|minutes?)\b"
    r"|\btimes (?:faster|slower)\b|\d+\s?x (?:faster|slower)\b|\ba (?:third|half) of the time\b",
    re.IGNORECASE,
)

#: Settings, not measurements: (path relative to src/rejectopt, text on the line).
SETTINGS = {
    # the download's retry policy: retries, backoff, timeout and deadline are configuration
    ("datasets/_fetch.py", "3 retries, 5 s backoff, 60 s timeout, 7200 s deadline"),
}


def _prose(text: str) -> list[tuple[int, str]]:
    """(line number, text) of every comment line and docstring line of a module's source."""
    lines = []
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type == tokenize.COMMENT:
            lines.append((token.start[0], token.string))
    for node in ast.walk(ast.parse(text)):
        # docstrings, and the string statements that document an attribute or a block
        if (
            isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            source = text.splitlines()[node.lineno - 1 : node.end_lineno]
            lines.extend(enumerate(source, start=node.lineno))
    return lines


def _timings(path: Path) -> list[str]:
    relative = path.relative_to(SRC).as_posix()
    found = []
    for number, line in _prose(path.read_text(encoding="utf-8")):
        if not TIMING.search(line):
            continue
        if any(relative == file and setting in line for file, setting in SETTINGS):
            continue
        found.append(f"src/rejectopt/{relative}:{number}: {line.strip()}")
    return found


def test_no_measured_timing_in_docstrings_or_comments():
    found = [hit for path in sorted(SRC.rglob("*.py")) for hit in _timings(path)]
    assert not found, (
        "measured timings in docstrings or comments (move the numbers to a benchmark record, "
        "e.g. benchmarks/measured_records.csv, and name it):\n" + "\n".join(found)
    )


@pytest.mark.parametrize(
    "line",
    [
        "# scipy.stats: about 0.6 s to import",
        '"""Took 1,430 rounds (7.5 s) on pendigit."""',
        "#: 32-row blocks took 4.4 CPU-s",
        "# a 1-D gather is several times faster",
        "# a table job starts in a third of the time",
        "# every round costs 2-20 ms",
    ],
)
def test_the_pattern_catches_a_timing(line):
    assert TIMING.search(line)


@pytest.mark.parametrize(
    "line",
    [
        "# heavy to import (benchmarks/import_costs_records.csv)",
        "# 16 x 16 patches of 68 landmarks, 5 splits",
        '"""The (0, 1) check and the 1-D check."""',
    ],
)
def test_the_pattern_passes_what_is_no_timing(line):
    assert not TIMING.search(line)


def test_an_allowed_setting_is_still_in_its_file():
    """An allowlist entry whose text is gone hides nothing and must go too."""
    for file, setting in SETTINGS:
        assert setting in (SRC / file).read_text(encoding="utf-8"), (file, setting)


def test_readmes_demo_time_is_a_quiet_runs_record():
    """README's first line promises "about N minutes on 2 cores": the newest demo record, a quiet
    run of that command (``benchmarks/bench_end_to_end.py --mode demo --cores 2``), took at most
    N minutes of Snakemake's wall time."""
    import csv

    repo = SRC.parents[1]
    readme = (repo / "README.md").read_text(encoding="utf-8")
    minutes = int(re.search(r"about (\d+) minutes on 2 cores\s*\(a quiet run's record", readme)[1])
    lines = (repo / "benchmarks" / "end_to_end_records.csv").read_text().splitlines()
    rows = [r for r in csv.DictReader(lines[1:]) if r["mode"] == "demo" and r["cores"] == "2"]
    assert rows, "no demo record: run benchmarks/bench_end_to_end.py --mode demo --cores 2"
    assert float(rows[-1]["snakemake_wall_s"]) <= 60 * minutes
