"""The guarantees experiment's per-dataset work on a finished run's staged files, in process.

Runs :func:`rejectopt.pipeline.experiments.guarantees.run_split` on every split of each dataset
(the config's default scores, 200 draws) from ``<run>/results`` and prints the CPU seconds
(``time.process_time``), the rows and their SHA-256 (the same rows before and after a change
that keeps the experiment's numbers). ``--record`` appends them to a CSV
(``label,dataset,splits,cpu_s,rows,sha256``): guarantees_experiment_records.csv holds the demo's
datasets before and after the refusals' advice became lazy and the draws were fitted at once,
and guarantees_experiment_job_records.csv the pipeline's own benchmark records of a 200-row
custom dataset (its header says how): the experiment job against the training jobs.

The demo (README line 1: shuttle, sattelite and the ordinal abalone, which gives no rows) spends
its guarantees CPU on the two classification datasets: measured on a run's staged files, 115 CPU-s
before and 29 after, the same rows; with the rest of the demo's jobs that fits its stated
3 minutes on 2 cores at the default 200 draws, so the draws (and the numbers) stay as they are.

Usage: python benchmarks/bench_guarantees_experiment.py RUN DATASET [DATASET ...]
       [--splits 5] [--record CSV --label L]
"""

import argparse
import csv
import hashlib
import os
import time
from pathlib import Path

import pandas as pd
import yaml

from rejectopt.pipeline.experiments import guarantees
from rejectopt.pipeline.experiments._contract import SplitInputs

REPO = Path(__file__).resolve().parents[1]


def _inputs(run, dataset, split, classifiers):
    staged = {
        f"classifier/{c}": run / f"results/classifiers/{dataset}/{c}/split_{split}.npz"
        for c in classifiers
    }
    staged |= {f"scores/{c}": run / f"results/scores/{dataset}/{c}.npz" for c in classifiers}
    data = run / f"results/data/{dataset}"
    return SplitInputs(
        dataset, split, "classification", 0, data / "data.npz", data / "splits.npz", staged
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", type=Path)
    parser.add_argument("datasets", nargs="+")
    parser.add_argument("--splits", type=int, default=5)
    parser.add_argument("--record", default=None)
    parser.add_argument("--label", default="")
    args = parser.parse_args()
    config = yaml.safe_load((REPO / "config.yaml").read_text())
    settings = guarantees.settings(config)
    classifiers = config["classifiers"]["classification"]
    records = []
    for dataset in args.datasets:
        start = time.process_time()
        rows = [
            guarantees.run_split(_inputs(args.run, dataset, k, classifiers), settings).rows
            for k in range(args.splits)
        ]
        cpu = time.process_time() - start
        text = pd.concat(rows).to_csv(index=False)
        digest = hashlib.sha256(text.encode()).hexdigest()[:16]
        n_rows = sum(len(r) for r in rows)
        print(f"{dataset}\t{args.splits} splits\t{cpu:.1f} CPU-s\t{n_rows} rows\t{digest}")
        records.append([args.label, dataset, args.splits, f"{cpu:.1f}", n_rows, digest])
    if args.record:
        new = not os.path.exists(args.record)
        with open(args.record, "a", newline="") as handle:
            writer = csv.writer(handle)
            if new:
                writer.writerow(["label", "dataset", "splits", "cpu_s", "rows", "sha256"])
            writer.writerows(records)


if __name__ == "__main__":
    main()
