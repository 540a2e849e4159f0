"""Benchmark: selecting SELE's C over {0, 1, 10, 100, 1000} on n=100,000, d=50, K=10.

Times the five warm-started fits of the selection helper (``SELE.fit_path``)
and compares each fit's objective F(theta) with a tightly converged float64
reference (plain L-BFGS-B, gtol 1e-10, on the same chunks). Writes a TSV table.

Usage: python benchmarks/bench_sele.py --out sele_bench.tsv
"""

import argparse
import os
import platform
import time

import numpy as np
from scipy.optimize import minimize
from threadpoolctl import threadpool_limits

from rejectopt.scores import SELE

C_GRID = (0, 1, 10, 100, 1000)


def make_synthetic(n=100_000, d=50, n_classes=10, seed=0):
    """Features, predicted classes and 0/100 losses with P(error | x) = sigmoid(<a_c, x> + b_c)."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y_pred = rng.integers(0, n_classes, n)
    directions = rng.standard_normal((n_classes, d)) * (1.5 / np.sqrt(d))
    offsets = rng.normal(-1.5, 0.5, n_classes)
    p_error = 1.0 / (1.0 + np.exp(-(np.einsum("ij,ij->i", X, directions[y_pred]) + offsets[y_pred])))
    loss = 100.0 * (rng.random(n) < p_error)
    return X, y_pred, loss


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
    parser.add_argument("--out", required=True, help="output TSV path")
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-reference", action="store_true", help="skip the slow reference solves")
    args = parser.parse_args(argv)

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
        row = {"C": C, "seconds": timings[C][0], "cpu_seconds": timings[C][1], "n_iter": est.n_iter_}
        row["objective"] = est.objective_
        if not args.no_reference:
            ref_value, problem, ref_iter, ref_grad = reference_objective(template, X, y_pred, loss, C)
            fast_in_f64 = problem.value_and_gradient(est._theta_internal.ravel(), est.C_effective_)[0] * problem.scale
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
        "C", "seconds", "cpu_seconds", "n_iter", "objective", "objective_f64",
        "reference", "rel_diff", "reference_iter", "reference_rel_grad",
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
