"""Benchmark: scores of a network's outputs with many classes, K = 1,000 (ImageNet-sized logits).

Synthesised logits (n = 3,000, K = 1,000; for time and memory, not for claims about a real
network): each row's true class gets a boost ``a_i ~ U(1, 8)`` over N(0, 1) noise, and the row is
scaled by ``t_i ~ U(0.5, 2)`` (logit norms that say little about errors, the case p-norms fix).
The label is the boosted class; the loss is 0/100 of the largest logit.

``--score NAME`` fits one learned score as ``select`` does (:func:`rejectopt.fitting.fit_selective`,
C over {0, 1, 10, 100, 1000}, the default 30/20/30 split) and prints its time and held-out AuRC:
run it under ``farm-bench`` for the process's time and peak memory. Per-class ``sele`` is refused
up front by its memory estimate (about 23 GiB here). ``--table`` prints :func:`rejectopt.logits.fit_logits`'s
table with the baselines, the post-hoc scores and the class-shared scores.

Usage::

    farm-bench -n 3 --timeout 300 -- python benchmarks/bench_many_classes.py --score sele_shared
    python benchmarks/bench_many_classes.py --table
"""

import argparse
import time

import numpy as np


def imagenet_like(n=3000, n_classes=1000, seed=0):
    """Logits (n, K) and labels as in the module docstring."""
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, n_classes, n)
    logits = rng.standard_normal((n, n_classes))
    logits[np.arange(n), labels] += rng.uniform(1.0, 8.0, n)
    logits *= rng.uniform(0.5, 2.0, (n, 1))
    return logits, labels


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--score", default="sele_shared")
    parser.add_argument("--table", action="store_true")
    parser.add_argument("--n", type=int, default=3000)
    parser.add_argument("--classes", type=int, default=1000)
    args = parser.parse_args()
    from threadpoolctl import threadpool_limits

    from rejectopt.fitting import fit_selective, split_rows
    from rejectopt.logits import fit_logits
    from rejectopt.metrics import aurc
    from rejectopt.targets import Target

    logits, labels = imagenet_like(args.n, args.classes)
    with threadpool_limits(limits=1):
        if args.table:
            fit = fit_logits(logits, labels, scores=("sele_shared", "reg_shared", "reg", "tcp"), seed=0)
            print(fit.table[["method", "label", "C", "aurc", "risk_full"]].round(3).to_string(index=False))
            return
        y_pred = logits.argmax(axis=1)
        loss = 100.0 * (y_pred != labels)
        parts = split_rows(len(loss))
        start = time.perf_counter()
        try:
            fit = fit_selective(logits, y_pred, loss, Target("coverage", 0.8), parts, score=args.score,
                                n_classes=args.classes, n_jobs=1)
        except ValueError as err:
            print(f"{args.score}: refused after {time.perf_counter() - start:.3f} s: {err}")
            return
        rep = parts["report"]
        print(f"{args.score}: {time.perf_counter() - start:.2f} s, C {fit.C:g}, test AuRC "
              f"{aurc(loss[rep], fit.uncertainty[rep]):.3f} (error rate {loss[rep].mean():.2f} %)")


if __name__ == "__main__":
    main()
