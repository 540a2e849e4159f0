"""Benchmark: scores of a network's outputs with many classes, K = 1,000 (ImageNet-sized logits).

Synthesised logits (default n = 3,000, K = 1,000; for time and memory, not for claims about a
real network): each row's true class gets a boost ``a_i ~ U(1, 8)`` over N(0, 1) noise, and the
row is scaled by ``t_i ~ U(0.5, 2)`` (logit norms that say little about errors, the case p-norms
fix). The label is the boosted class; the loss is 0/100 of the largest logit.

``--score NAME`` fits one learned score as ``select`` does (:func:`rejectopt.fitting.fit_selective`,
C over {0, 1, 10, 100, 1000}, the default 30/20/30 split) and prints its time and held-out AuRC.
Per-class ``sele`` is refused up front by its memory estimate (about 23 GiB here). ``--table``
prints :func:`rejectopt.logits.fit_logits`'s table with the baselines, the post-hoc scores and
the class-shared scores.

``--record FILE`` measures the path of ``rejectopt select`` on a logits file (load the NPZ,
validate the outputs, predict, split, fit the score and its selection function) for MSP (the
yardstick: the same path with ``1 - max softmax`` as the score) and each class-shared score, each
in a fresh subprocess that reports its CPU time (``time.process_time``, after the imports) and
peak resident memory (``ru_maxrss``, whole process); ``--repeats`` runs alternate the methods.
``--src DIR`` (repeatable) runs the same measurement against another checkout's ``src`` (the
code before a change), so that before and after come from one run on one machine.

Usage::

    python benchmarks/bench_many_classes.py --score sele_shared
    python benchmarks/bench_many_classes.py --table
    python benchmarks/bench_many_classes.py --n 50000 --record benchmarks/many_classes_records.csv
"""

import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
#: The methods of ``--record``: the MSP yardstick and the class-shared scores.
RECORD_METHODS = ("msp", "sele_shared", "reg_shared")


def imagenet_like(n=3000, n_classes=1000, seed=0):
    """Logits (n, K) and labels as in the module docstring."""
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, n_classes, n)
    logits = rng.standard_normal((n, n_classes))
    logits[np.arange(n), labels] += rng.uniform(1.0, 8.0, n)
    logits *= rng.uniform(0.5, 2.0, (n, 1))
    return logits, labels


def measure_select_path(path, method):
    """CPU seconds, peak RSS (MiB) and held-out AuRC of ``select``'s path on the NPZ ``path``; runs in a child."""
    import resource

    from threadpoolctl import threadpool_limits

    from rejectopt.fitting import fit_selective, split_rows
    from rejectopt.logits import check_network_outputs, msp, predictions
    from rejectopt.metrics import aurc, per_example_loss
    from rejectopt.targets import Target

    start = time.process_time()
    with threadpool_limits(limits=1), np.load(path) as data:
        logits, labels, _ = check_network_outputs(data["logits"], data["labels"])
        y_pred = predictions(logits)
        loss = per_example_loss("zero_one", labels, y_pred)
        parts = split_rows(len(loss))
        target = Target("coverage", 0.8)
        if method == "msp":
            uncertainty = msp(logits)
            target.fit(loss[parts["calibration"]], uncertainty[parts["calibration"]])
        else:
            uncertainty = fit_selective(
                logits,
                y_pred,
                loss,
                target,
                parts,
                score=method,
                n_classes=logits.shape[1],
                n_jobs=1,
            ).uncertainty
    cpu = time.process_time() - start
    rep = parts["report"]
    return {
        "cpu_seconds": cpu,
        "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "aurc": aurc(loss[rep], uncertainty[rep]),
    }


def record(args):
    """Every method of :data:`RECORD_METHODS` on each code version, in subprocesses; writes a CSV."""
    logits, labels = imagenet_like(args.n, args.classes)
    versions = [("after", str(HERE.parent / "src"))] + [(f"before ({d})", d) for d in args.src]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "logits.npz")
        np.savez(path, logits=logits, labels=labels)
        del logits, labels
        for repeat in range(args.repeats):
            for version, src in versions:
                for method in RECORD_METHODS:
                    code = (
                        f"import json, sys; sys.path.insert(0, {str(HERE)!r}); import bench_many_classes as b; "
                        f"print(json.dumps(b.measure_select_path({path!r}, {method!r})))"
                    )
                    env = dict(os.environ, PYTHONPATH=src)
                    out = subprocess.run(
                        [sys.executable, "-c", code],
                        env=env,
                        capture_output=True,
                        text=True,
                        check=True,
                    ).stdout
                    row = {
                        "n": args.n,
                        "K": args.classes,
                        "code": version,
                        "method": method,
                        "repeat": repeat,
                        **json.loads(out.splitlines()[-1]),
                    }
                    rows.append(row)
                    print(row, flush=True)
    with open(args.record, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        for row in rows:
            writer.writerow({k: f"{v:.4g}" if isinstance(v, float) else v for k, v in row.items()})


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--score", default="sele_shared")
    parser.add_argument("--table", action="store_true")
    parser.add_argument("--n", type=int, default=3000)
    parser.add_argument("--classes", type=int, default=1000)
    parser.add_argument(
        "--record", help="CSV of the select path's CPU time and peak memory per method"
    )
    parser.add_argument(
        "--src", action="append", default=[], help="another checkout's src to measure too"
    )
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    if args.record:
        record(args)
        return
    from threadpoolctl import threadpool_limits

    from rejectopt.fitting import fit_selective, split_rows
    from rejectopt.logits import fit_logits
    from rejectopt.metrics import aurc
    from rejectopt.targets import Target

    logits, labels = imagenet_like(args.n, args.classes)
    with threadpool_limits(limits=1):
        if args.table:
            fit = fit_logits(
                logits, labels, scores=("sele_shared", "reg_shared", "reg", "tcp"), seed=0
            )
            print(
                fit.table[["method", "label", "C", "aurc", "risk_full"]]
                .round(3)
                .to_string(index=False)
            )
            return
        y_pred = logits.argmax(axis=1)
        loss = 100.0 * (y_pred != labels)
        parts = split_rows(len(loss))
        start = time.perf_counter()
        try:
            fit = fit_selective(
                logits,
                y_pred,
                loss,
                Target("coverage", 0.8),
                parts,
                score=args.score,
                n_classes=args.classes,
                n_jobs=1,
            )
        except ValueError as err:
            print(f"{args.score}: refused after {time.perf_counter() - start:.3f} s: {err}")
            return
        rep = parts["report"]
        print(
            f"{args.score}: {time.perf_counter() - start:.2f} s, C {fit.C:g}, test AuRC "
            f"{aurc(loss[rep], fit.uncertainty[rep]):.3f} (error rate {loss[rep].mean():.2f} %)"
        )


if __name__ == "__main__":
    main()
