"""Benchmark: selecting SELE's C over {0, 1, 10, 100, 1000} on n=100,000, d=50, K=10.

Times the five warm-started fits of the selection helper (``SELE.fit_path``)
and compares each fit's objective F(theta) with a tightly converged float64
reference (plain L-BFGS-B, gtol 1e-10, on the same chunks). Writes a TSV table.

``--record FILE`` measures, per n of ``--ns`` and per code version (this checkout and each
``--src DIR``, another checkout's ``src``: the code before a change), in a fresh subprocess each
run alone: the CPU time of the five-value C grid (``SELE.fit_path``, one thread), the fit's peak
resident memory (the process's high-water mark, reset after the data are made, over its memory
after the imports: the fit and the data it is given, which the estimate counts) against SELE's
memory estimate, and the AuRC of each C's
score on 100,000 fresh rows of the same population (warm starts and tolerances must leave it as
it was).

Usage::

    python benchmarks/bench_sele.py --out sele_bench.tsv
    python benchmarks/bench_sele.py --record benchmarks/sele_records.csv --ns 1e5 1e6 2e6 --src OLD/src
"""

import argparse
import csv
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from scipy.optimize import minimize
from threadpoolctl import threadpool_limits

from rejectopt.scores import SELE

C_GRID = (0, 1, 10, 100, 1000)


def make_synthetic(n=100_000, d=50, n_classes=10, seed=0):
    """Features, predicted classes and 0/100 losses with P(error | x) = sigmoid(<a_c, x> + b_c).

    The logits are computed in row blocks, with no n x d temporary: the memory record measures the fit.
    """
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y_pred = rng.integers(0, n_classes, n)
    directions = rng.standard_normal((n_classes, d)) * (1.5 / np.sqrt(d))
    offsets = rng.normal(-1.5, 0.5, n_classes)
    logit = np.empty(n)
    for start in range(0, n, 65536):
        rows = slice(start, start + 65536)
        logit[rows] = (
            np.einsum("ij,ij->i", X[rows], directions[y_pred[rows]]) + offsets[y_pred[rows]]
        )
    loss = 100.0 * (rng.random(n) < 1.0 / (1.0 + np.exp(-logit)))
    return X, y_pred, loss


def _status_kib(field):
    with open("/proc/self/status") as handle:
        return next(int(line.split()[1]) for line in handle if line.startswith(field + ":"))


def measure_grid(n):
    """CPU seconds of the C grid, peak and estimated memory (MiB), and each C's AuRC on fresh rows (in a child)."""
    import gc

    from rejectopt.exceptions import MemoryBudgetError
    from rejectopt.metrics import aurc
    from rejectopt.scores import _sele

    before = _status_kib("VmRSS")  # the interpreter and the imports
    X, y_pred, loss = make_synthetic(n)
    gc.collect()
    with open(
        "/proc/self/clear_refs", "w"
    ) as handle:  # reset the high-water mark: the fit's own peak follows
        handle.write("5")
    with threadpool_limits(limits=1):
        start = time.process_time()
        try:
            fitted = SELE(random_state=0, n_jobs=1).fit_path(X, y_pred, loss, C_grid=C_GRID)
        except (
            MemoryBudgetError
        ) as err:  # over the default budget by the estimate: refused before allocating
            return {
                "cpu_seconds": time.process_time() - start,
                "peak_mib": (_status_kib("VmHWM") - before) / 1024,
                "estimate_mib": err.estimate / 2**20,
                "estimate_over_peak": float("nan"),
                "n_iter": "refused by the memory budget",
            }
        cpu = time.process_time() - start
    peak = (_status_kib("VmHWM") - before) * 1024  # the fit and the data it is given
    X_test, y_test, loss_test = make_synthetic(100_000, seed=1)
    try:
        estimate = _sele.estimate_fit_bytes(n, X.shape[1], 10, 500, "float32", 1, loss=loss)
    except TypeError:  # a version whose estimate reads the shape alone
        estimate = _sele.estimate_fit_bytes(n, X.shape[1], 10, 500, "float32", 1)
    return {
        "cpu_seconds": cpu,
        "peak_mib": peak / 2**20,
        "estimate_mib": estimate / 2**20,
        "estimate_over_peak": estimate / peak,
        "n_iter": "/".join(str(f.n_iter_) for f in fitted),
        **{
            f"aurc_C{C:g}": aurc(loss_test, f.predict(X_test, y_test))
            for C, f in zip(C_GRID, fitted)
        },
    }


def record(args):
    """:func:`measure_grid` per n and code version, each in a subprocess run alone; writes a CSV."""
    here = Path(__file__).resolve().parent
    versions = [("after", str(here.parent / "src"))] + [(f"before ({d})", d) for d in args.src]
    rows = []
    for n, repeat in [(n, r) for n in args.ns for r in range(args.repeats)]:
        for version, src in versions:
            code = (
                f"import json, sys; sys.path.insert(0, {str(here)!r}); import bench_sele as b; "
                f"print(json.dumps(b.measure_grid({int(float(n))})))"
            )
            out = subprocess.run(
                [sys.executable, "-c", code],
                env=dict(os.environ, PYTHONPATH=src),
                capture_output=True,
                text=True,
                check=True,
            ).stdout
            row = {
                "n": int(float(n)),
                "d": 50,
                "K": 10,
                "code": version,
                "repeat": repeat,
                **json.loads(out.splitlines()[-1]),
            }
            rows.append(row)
            print(row, flush=True)
    with open(args.record, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(max(rows, key=len)))
        writer.writeheader()
        for row in rows:
            writer.writerow({k: f"{v:.6g}" if isinstance(v, float) else v for k, v in row.items()})


def reference_objective(template, X, y_pred, loss, C):
    """F at a tightly converged float64 solution on the same chunks.

    Plain (unpreconditioned) scipy L-BFGS-B on theta from zero, gtol 1e-10 and
    ftol 1e-15 on F / mean(loss): independent of the fast solver's
    preconditioning, warm starts and float32 arithmetic.
    """
    reference = template.__class__(**{**template.get_params(), "dtype": "float64"})
    problem = reference._build_problem(X, y_pred, loss)
    C_eff = reference._effective_C(C, problem)
    with threadpool_limits(limits=1, user_api="blas"):
        result = _minimize_plain(problem, C_eff)
    rel_grad = float(np.abs(result.jac).max() / result.fun)
    return float(result.fun) * problem.scale, problem, int(result.nit), rel_grad


def _minimize_plain(problem, C_eff):
    return minimize(
        problem.value_and_gradient,
        np.zeros(problem.shape).ravel(),
        args=(C_eff,),
        jac=True,
        method="L-BFGS-B",
        options={"gtol": 1e-10, "ftol": 1e-15, "maxiter": 50_000, "maxfun": 100_000},
    )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", help="output TSV path")
    parser.add_argument(
        "--record", help="CSV of the C grid's CPU time, peak memory, estimate and AuRC per n"
    )
    parser.add_argument("--ns", nargs="+", default=["1e5", "1e6", "2e6"])
    parser.add_argument(
        "--repeats", type=int, default=3, help="runs of each n and version, alternating versions"
    )
    parser.add_argument(
        "--src", action="append", default=[], help="another checkout's src to measure too"
    )
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--no-reference", action="store_true", help="skip the slow reference solves"
    )
    args = parser.parse_args(argv)
    if args.record:
        record(args)
        return
    if not args.out:
        parser.error("give --out (the objective table) or --record")

    X, y_pred, loss = make_synthetic(n=args.n, seed=args.seed)
    template = SELE(random_state=args.seed)
    timings = {}
    original_solve = SELE._solve

    def timed_solve(self, problem, C, theta0, executor):
        start, cpu_start = time.perf_counter(), time.process_time()
        result = original_solve(self, problem, C, theta0, executor)
        timings[C] = (time.perf_counter() - start, time.process_time() - cpu_start)
        return result

    SELE._solve = timed_solve  # instrumentation only: times each C inside the real selection path
    try:
        start, cpu_start = time.perf_counter(), time.process_time()
        fitted = template.fit_path(X, y_pred, loss, C_grid=C_GRID)
        total = (time.perf_counter() - start, time.process_time() - cpu_start)
    finally:
        SELE._solve = original_solve

    rows = []
    for C, est in zip(C_GRID, fitted):
        row = {
            "C": C,
            "seconds": timings[C][0],
            "cpu_seconds": timings[C][1],
            "n_iter": est.n_iter_,
        }
        row["objective"] = est.objective_
        if not args.no_reference:
            ref_value, problem, ref_iter, ref_grad = reference_objective(
                template, X, y_pred, loss, C
            )
            fast_in_f64 = (
                problem.value_and_gradient(est._theta_internal.ravel(), est.C_effective_)[0]
                * problem.scale
            )
            row.update(
                objective_f64=fast_in_f64,
                reference=ref_value,
                rel_diff=(fast_in_f64 - ref_value) / abs(ref_value),
                reference_iter=ref_iter,
                reference_rel_grad=ref_grad,
            )
        rows.append(row)
    rows.append({"C": "total (incl. setup)", "seconds": total[0], "cpu_seconds": total[1]})

    columns = [
        "C",
        "seconds",
        "cpu_seconds",
        "n_iter",
        "objective",
        "objective_f64",
        "reference",
        "rel_diff",
        "reference_iter",
        "reference_rel_grad",
    ]
    lines = ["\t".join(columns)]
    for row in rows:
        lines.append("\t".join(_format(row.get(col, "")) for col in columns))
    header = (
        f"# n={args.n} d={X.shape[1]} K=10 seed={args.seed} cpus={os.cpu_count()} "
        f"load1={os.getloadavg()[0]:.2f} numpy={np.__version__} python={platform.python_version()}"
    )
    table = "\n".join([header, *lines]) + "\n"
    print(table)
    with open(args.out, "w") as handle:
        handle.write(table)


def _format(value):
    if isinstance(value, float):
        return f"{value:.6g}" if abs(value) >= 1e-3 or value == 0 else f"{value:.3e}"
    return str(value)


if __name__ == "__main__":
    main()
