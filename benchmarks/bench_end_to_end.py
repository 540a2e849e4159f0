"""End to end: the offline reproduction from raw files to tables in a fresh directory.

Run: ``python benchmarks/bench_end_to_end.py [--mode tabular|full|demo] [--cores 2] [--mirror DIR]
[--faces DIR] [--keep DIR] [--snakemake-args ...]``.

``tabular``: every dataset of ``--mirror`` (default ``$REJECTOPT_DATA_MIRROR``),
5 splits, LR / SVM / SVOR / XGBoost, all scores, tables, OOD and double-hinge experiments; no
landmarks (``benchmarks/bench_landmarks.py`` measures those alone). ``full``: the whole offline
reproduction in one Snakemake run, the tabular part and the 300-W landmark experiment on the offline
faces (``--faces``, default ``$REJECTOPT_FACES_MIRROR``), so that the two share the cores as a user's
run does. ``demo``: the README's first command (the embedded demo mirror, its 3 datasets). Goals
on 2 cores: full under 15 min of wall time, tabular under 10 min, demo under 3 min.

Prints
------
* wall time, CPU time of the whole run (every process Snakemake started), Snakemake's own
  process CPU (polled with psutil) and its share of the run;
* per rule: jobs, summed wall and CPU seconds (the ``benchmark:`` records; rules without one show
  ``-``);
* the fixed cost of the jobs: per rule script, the CPU of a Python process that only starts the
  way Snakemake starts a script job (its preamble), does the script's imports and those its
  library call does on first use (:data:`FIRST_USE`; median of 3), times the rule's job count;
  its share of the run's CPU (goal: under 10 %).
"""

import argparse
import ast
import csv
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import psutil

REPO = Path(__file__).resolve().parents[1]
SCRIPTS = REPO / "workflow" / "scripts"


def children_cpu():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_snakemake(workdir, args):
    """Run Snakemake; return (returncode, wall s, its own CPU s, output)."""
    cmd = [
        sys.executable,
        "-m",
        "snakemake",
        "--snakefile",
        str(REPO / "Snakefile"),
        "--directory",
        str(workdir),
        *args,
    ]
    log = open(Path(workdir) / "snakemake.out", "w")
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
    handle, own = psutil.Process(proc.pid), 0.0
    while proc.poll() is None:
        try:
            times = handle.cpu_times()
            own = times.user + times.system
        except psutil.Error:
            pass
        time.sleep(0.5)
    wall = time.perf_counter() - start
    log.close()
    return proc.returncode, wall, own, (Path(workdir) / "snakemake.out").read_text()


def job_counts(output):
    """{rule: jobs} from Snakemake's 'Job stats' table."""
    table = output.split("Job stats:", 1)[1].split("\n\n", 1)[0]
    return {
        line.split()[0]: int(line.split()[1])
        for line in table.splitlines()
        if len(line.split()) == 2 and line.split()[1].isdigit() and line.split()[0] != "total"
    }


def benchmark_totals(workdir):
    """{rule: (records, wall s, cpu s)} from results/benchmarks/<rule>/**.tsv."""
    totals = defaultdict(lambda: [0, 0.0, 0.0])
    for path in (Path(workdir) / "results" / "benchmarks").rglob("*.tsv"):
        rule = path.relative_to(Path(workdir) / "results" / "benchmarks").parts[0]
        with open(path) as handle:
            for row in csv.DictReader(handle, delimiter="\t"):
                totals[rule][0] += 1
                totals[rule][1] += float(row["s"])
                totals[rule][2] += (
                    float(row["cpu_time"]) if row.get("cpu_time", "NA") != "NA" else 0.0
                )
    return totals


def rule_scripts():
    """{rule: script path} from the ``script:`` directives of workflow/rules/*.smk."""
    found = {}
    for smk in (REPO / "workflow" / "rules").glob("*.smk"):
        for block in re.split(r"\n(?=rule )", smk.read_text()):
            name = re.match(r"rule (\w+):", block)
            script = re.search(r'script:\s*\n\s*"\.\./scripts/(\w+\.py)"', block)
            if name and script:
                found[name.group(1)] = SCRIPTS / script.group(1)
    return found


#: What a rule's library call imports on first use, beyond its script's own imports: the registered
#: classes (scikit-learn, SciPy's solvers; every one of them, an upper bound for a job that fits one
#: model), XGBoost, scipy.stats (tests, intervals) and matplotlib (figures). Without these the
#: registries' lazy loading would hide the cost from the probe instead of saving it.
_CLASSES = (
    "from rejectopt.classifiers import CLASSIFIERS; from rejectopt.scores import SCORES; "
    "[i.cls for i in [*CLASSIFIERS.values(), *SCORES.values()]]"
)
_FIGURES, _STATS = "import matplotlib.figure", "import scipy.stats"
FIRST_USE = {
    "train_classifier": [_CLASSES, "import xgboost"],
    "learn_score": [_CLASSES],
    "ood_split": [_CLASSES, "import xgboost", _STATS],
    "double_hinge_split": [_CLASSES, "from rejectopt.classifiers import DoubleHingeSVM"],
    "plot_rc_curves": [_FIGURES],
    "make_table": [_STATS, _FIGURES],
    "plot_table": [_STATS, _FIGURES],
    "rankings": [_STATS],
    "paper_comparison": [_STATS],
    "ood_table": [_STATS],
    "ood_figures": [_FIGURES],
    "double_hinge_report": [_STATS, _FIGURES],
}


def import_cost(script, rule, repeats=3):
    """Median CPU s of a Python process doing only the imports of a ``rule`` job running ``script``."""
    tree = ast.parse(script.read_text())
    lines = [
        ast.unparse(node) for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom))
    ]
    preamble = (
        f"import sys; sys.path.insert(0, {str(SCRIPTS)!r}); import pickle; "
        "from snakemake.logging import logger; "
        "from snakemake.iocontainers import Snakemake; from snakemake.shell import shell\n"
    )
    code = preamble + "\n".join([*lines, *FIRST_USE.get(rule, [])])
    costs = []
    for _ in range(repeats):
        before = children_cpu()
        subprocess.run([sys.executable, "-c", code], check=True)
        costs.append(children_cpu() - before)
    return statistics.median(costs)


def main(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--mode", choices=["tabular", "full", "demo"], default="tabular")
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--mirror", default=os.environ.get("REJECTOPT_DATA_MIRROR"))
    parser.add_argument(
        "--faces",
        default=os.environ.get("REJECTOPT_FACES_MIRROR"),
        help="the offline 300-W faces (--mode full)",
    )
    parser.add_argument(
        "--keep", help="run in this (new) folder and keep it; default: a temporary one"
    )
    parser.add_argument(
        "--snakemake-args",
        nargs=argparse.REMAINDER,
        default=[],
        help="passed on to snakemake (last), e.g. --snakemake-args --config n_splits=1",
    )
    args = parser.parse_args(argv)
    if args.mode in ("tabular", "full") and args.mirror is None:
        parser.error(
            f"--mode {args.mode} needs --mirror or REJECTOPT_DATA_MIRROR (a folder of the official raw files)"
        )
    if args.mode == "full" and args.faces is None:
        parser.error(
            "--mode full needs --faces or REJECTOPT_FACES_MIRROR (the offline 300-W faces)"
        )

    if args.mode == "tabular":
        config = ["--config", f"data_mirror={args.mirror}"]
    elif args.mode == "full":
        config = ["--config", f"data_mirror={args.mirror}", f"faces_mirror={args.faces}"]
    else:
        # the README's first command: the embedded demo mirror, its three datasets
        config = [
            "--config",
            f"data_mirror={REPO / 'workflow' / 'resources' / 'demo_mirror'}",
            "datasets=[shuttle,sattelite,abalone]",
        ]
    workdir = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix=f"bench_{args.mode}_"))
    if args.keep and workdir.exists() and any(workdir.iterdir()):
        parser.error(f"--keep {workdir}: the folder is not empty; the benchmark needs a fresh one")
    workdir.mkdir(parents=True, exist_ok=True)
    try:
        before = children_cpu()
        code, wall, own, output = run_snakemake(
            workdir, ["--cores", str(args.cores), *config, *args.snakemake_args]
        )
        total_cpu = children_cpu() - before
        if code != 0:
            print(output[-5000:])
            print(f"snakemake failed (exit {code}); log in {workdir / 'snakemake.out'}")
            return 1
        counts, records = job_counts(output), benchmark_totals(workdir)
        scripts = rule_scripts()
        print(f"mode {args.mode}, {args.cores} cores, {sum(counts.values())} jobs in {workdir}")
        print(
            f"wall {wall:.0f} s ({wall / 60:.1f} min); CPU of the run {total_cpu:.0f} s; "
            f"Snakemake's own process {own:.0f} s ({100 * own / total_cpu:.1f} %)"
        )
        print(
            f"\n{'rule':<22}{'jobs':>6}{'wall s':>10}{'cpu s':>10}{'fixed s/job':>13}{'fixed s':>10}"
        )
        fixed_total = 0.0
        for rule in sorted(counts, key=lambda r: -records.get(r, [0, 0, 0])[2]):
            n, w, c = records.get(rule, (0, None, None))
            per_job = import_cost(scripts[rule], rule) if rule in scripts else 0.0
            fixed_total += per_job * counts[rule]
            cells = f"{w:>10.1f}{c:>10.1f}" if n else f"{'-':>10}{'-':>10}"
            print(
                f"{rule:<22}{counts[rule]:>6}{cells}{per_job:>13.2f}{per_job * counts[rule]:>10.1f}"
            )
        print(
            f"\nfixed cost of the jobs (process start + imports): {fixed_total:.0f} s = "
            f"{100 * fixed_total / total_cpu:.1f} % of the run's CPU (goal < 10 %)"
        )
        return 0
    finally:
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
