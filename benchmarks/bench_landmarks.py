"""Benchmark: the offline 300-W landmark experiment end to end (Snakemake, 2 cores).

Runs the landmark targets of the pipeline (detect_faces, make_face_splits, the
shape-predictor grid train_predictor, train_landmarks, summarize_landmarks,
landmark_figures) in a fresh temporary folder with the offline faces copy
(``faces_mirror``) and the demo data mirror, as a Snakemake subprocess. Prints
the wall time of the whole run, the CPU time of all its processes (exact:
``getrusage`` of the children), the load average before and after (the machine
may be shared), and per rule the jobs, wall and CPU seconds summed over the
``benchmark:`` records (columns ``s`` and ``cpu_time``; Snakemake samples the
CPU time, every 30 s after the first 15 s, so ``cpu_time`` undercounts).
Goal (GOAL_S): the whole offline experiment in under 10 minutes of wall time on 2 cores; the run
reports whether it met it.
Exits nonzero if the run fails or a target is missing.

Usage: python benchmarks/bench_landmarks.py [--n-splits K] [--cores 2] [--faces DIR] [--keep DIR]
"""

import argparse
import csv
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FACES = Path(os.environ.get("REJECTOPT_FACES_MIRROR", ""))
TARGETS = (
    "results/datasets/300w/summary.csv",
    "results/tables/landmarks_note.md",
    "results/figures/rc_300w.png",
    "results/figures/learning_curve_300w.png",
    "results/figures/faces_300w.png",
)
GOAL_S = 600.0


def snakemake_command(workdir, cores, faces, data_mirror, n_splits, snakemake):
    """The Snakemake call of the landmark targets (``n_splits`` None: the config's)."""
    config = [f"data_mirror={data_mirror}", f"faces_mirror={faces}", "datasets=[sattelite]"]
    if n_splits is not None:
        config.append(f"n_splits={n_splits}")
    return [
        snakemake,
        "-s",
        str(REPO / "Snakefile"),
        "--configfile",
        str(REPO / "config.yaml"),
        "--directory",
        str(workdir),
        "--cores",
        str(cores),
        "--config",
        *config,
        "--",
        *TARGETS,
    ]


def rule_totals(workdir):
    """``{rule: (jobs, wall s, cpu s, max wall s)}`` from ``results/benchmarks/<rule>/.../*.tsv``."""
    totals = defaultdict(lambda: [0, 0.0, 0.0, 0.0])
    for path in sorted((Path(workdir) / "results" / "benchmarks").glob("*/300w/*.tsv")):
        with open(path, newline="") as handle:
            row = next(csv.DictReader(handle, delimiter="\t"))
        record = totals[path.parts[-3]]
        wall = float(row["s"])
        cpu = float(row["cpu_time"]) if row["cpu_time"] not in ("", "NA") else float("nan")
        record[0] += 1
        record[1] += wall
        record[2] += cpu
        record[3] = max(record[3], wall)
    return dict(totals)


def run(workdir, args):
    command = snakemake_command(
        workdir, args.cores, args.faces, args.data_mirror, args.n_splits, args.snakemake
    )
    print("$", " ".join(command), flush=True)
    load_before = os.getloadavg()
    usage_before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    with open(Path(workdir) / "snakemake.out", "w") as out:
        returncode = subprocess.call(command, stdout=out, stderr=subprocess.STDOUT)
    wall = time.perf_counter() - start
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (usage.ru_utime - usage_before.ru_utime) + (usage.ru_stime - usage_before.ru_stime)
    load_after = os.getloadavg()

    print(
        f"load average before: {' '.join(f'{v:.2f}' for v in load_before)}; "
        f"after: {' '.join(f'{v:.2f}' for v in load_after)}"
    )
    print(f"{'rule':<20} {'jobs':>4} {'wall s':>9} {'cpu s':>9} {'max wall s':>10}")
    for rule, (jobs, rule_wall, rule_cpu, longest) in sorted(rule_totals(workdir).items()):
        print(f"{rule:<20} {jobs:>4} {rule_wall:>9.1f} {rule_cpu:>9.1f} {longest:>10.1f}")
    print(
        f"total: wall {wall:.1f} s ({wall / 60:.1f} min), CPU of all processes {cpu:.1f} s "
        f"({cpu / max(wall, 1e-9):.2f} cores on average); goal < {GOAL_S:.0f} s: "
        f"{'met' if wall < GOAL_S else 'NOT met'}"
    )
    missing = [target for target in TARGETS if not (Path(workdir) / target).is_file()]
    if returncode != 0 or missing:
        tail = (Path(workdir) / "snakemake.out").read_text().splitlines()[-40:]
        print("\n".join(tail), file=sys.stderr)
        print(
            f"FAILED: snakemake exit code {returncode}, missing targets {missing}", file=sys.stderr
        )
        return 1
    return 0


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--n-splits", type=int, default=None, help="splits (default: config.yaml's n_splits)"
    )
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument(
        "--faces", type=Path, default=FACES, help="offline 300-W faces (faces_mirror)"
    )
    parser.add_argument(
        "--data-mirror", type=Path, default=REPO / "workflow" / "resources" / "demo_mirror"
    )
    parser.add_argument("--snakemake", default=str(Path(sys.executable).with_name("snakemake")))
    parser.add_argument(
        "--keep",
        type=Path,
        default=None,
        help="run in this (new or empty) folder and keep it, e.g. to compare outputs",
    )
    args = parser.parse_args(argv)
    if not (args.faces / "afw").is_dir():
        parser.error(f"no offline faces at {args.faces} (set --faces or REJECTOPT_FACES_MIRROR)")
    if args.keep is not None:
        args.keep.mkdir(parents=True, exist_ok=True)
        if any(args.keep.iterdir()):
            parser.error(f"--keep {args.keep} is not empty")
        return run(args.keep, args)
    with tempfile.TemporaryDirectory(prefix="bench_landmarks_") as workdir:
        return run(workdir, args)


if __name__ == "__main__":
    sys.exit(main())
