"""Benchmark: the Nyström double-hinge SVM against the exact Gaussian kernel, on a subset of marketing.

The double-hinge benchmark fits its Gaussian-kernel model (``double_hinge_rbf``) on the Nyström
approximation of rank ``double_hinge.rbf_rank`` because the exact kernel on marketing's Trn1
(13,564 rows) would cost ``O(n^3)`` time and ``O(n^2)`` memory per fit. This script measures what the
approximation changes where the exact problem is still affordable: a random subset of ``--n`` rows
of marketing's Trn1 (split 0 of ``make_splits(seed=0)``, standardised by Trn1's statistics).

For every width (``--gammas``, in units of ``1 / n_features`` as the config's ``rbf_gamma_grid``), ``C``
(``--C``, per example as ``c_scaling: mean``) and reject cost (``--costs``) it fits
``DoubleHingeSVM(kernel="rbf")`` exactly (eigendecomposition of the ``n x n`` kernel matrix), with
every subset row as a Nyström landmark (the exact problem again, through the benchmark's code path)
and at the ranks ``--ranks``, and prints

* ``rel_obj``: ``(P_rank - P_exact) / P_exact``, the primal objectives (10); restricting ``f`` to the
  landmarks' span can only raise the minimum, so it is >= 0 up to the solver's duality gap;
* ``max|df|``: the largest difference of the scores ``f(x)`` on Val1 (all 4,522 rows);
* ``changed``: the share of Val1 rows whose decision (-1, reject, +1) differs from the exact model's;
* ``d_risk``: the Val1 cost risk (%, errors + d rejections) of the approximation minus the exact one's.

Usage: python benchmarks/bench_double_hinge_nystroem.py [--n 2000] [--ranks 100 300 600]
       [--gammas 0.1 0.3 1] [--C 1000 100000] [--costs 0.05 0.2 0.45] [--mirror DIR]
"""

import argparse
import time

import numpy as np
from bench_double_hinge import MIRROR, load_marketing
from threadpoolctl import threadpool_limits

from rejectopt.classifiers._double_hinge import DoubleHingeSVM


def decisions(model, X):
    """-1 / 0 (reject) / +1 per row."""
    return np.where(model.reject(X), 0, np.where(model.predict(X) == model.classes_[1], 1, -1))


def cost_risk(model, X, y, d):
    rejected = model.reject(X)
    return 100.0 * (((model.predict(X) != y) & ~rejected).sum() + d * rejected.sum()) / len(y)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--ranks", type=int, nargs="+", default=[100, 300, 600])
    ap.add_argument("--gammas", type=float, nargs="+", default=[0.1, 0.3, 1.0])
    ap.add_argument("--C", type=float, nargs="+", default=[1000.0, 100000.0])
    ap.add_argument("--costs", type=float, nargs="+", default=[0.05, 0.2, 0.45])
    ap.add_argument("--mirror", default=MIRROR)
    args = ap.parse_args()
    X_trn, y_trn, X_val, y_val = load_marketing(args.mirror)
    rows = np.random.default_rng(0).choice(len(y_trn), size=args.n, replace=False)
    X, y = X_trn[rows], y_trn[rows]
    p = X.shape[1]
    print(
        f"marketing Trn1 subset {X.shape}, Val1 {X_val.shape}; C per example, gamma in units of 1/{p}"
    )
    print("gamma  C        d     rank   rel_obj    max|df|   changed  d_risk  cpu_s")
    worst = {}
    with threadpool_limits(limits=1):
        for g in args.gammas:
            for C in args.C:
                for d in args.costs:
                    common = {"reject_cost": d, "C": C / args.n, "kernel": "rbf", "gamma": g / p}
                    cpu = time.process_time()
                    exact = DoubleHingeSVM(**common).fit(X, y)
                    f0, a0, r0 = (
                        exact.decision_function(X_val),
                        decisions(exact, X_val),
                        cost_risk(exact, X_val, y_val, d),
                    )
                    print(
                        f"{g:<6g} {C:<8g} {d:<5g} exact  P={exact.objective_:.6g} gap {exact.rel_gap_:.1e}"
                        f"                      {time.process_time() - cpu:.1f}"
                    )
                    for rank in [*args.ranks, args.n]:
                        cpu = time.process_time()
                        model = DoubleHingeSVM(**common, n_landmarks=rank, random_state=0).fit(X, y)
                        rel = (model.objective_ - exact.objective_) / exact.objective_
                        df = float(np.abs(model.decision_function(X_val) - f0).max())
                        changed = float((decisions(model, X_val) != a0).mean())
                        dr = cost_risk(model, X_val, y_val, d) - r0
                        label = "all" if rank == args.n else str(rank)
                        print(
                            f"{g:<6g} {C:<8g} {d:<5g} {label:<6} {rel:<10.2e} {df:<9.3g} {changed:<8.4f} "
                            f"{dr:+.3f}  {time.process_time() - cpu:.1f}",
                            flush=True,
                        )
                        w = worst.setdefault(label, [0.0, 0.0, 0.0, 0.0])
                        w[:] = [
                            max(w[0], rel),
                            max(w[1], df),
                            max(w[2], changed),
                            max(w[3], abs(dr)),
                        ]
    print("\nworst over the grid: rank  rel_obj  max|df|  changed  |d_risk|")
    for label, (rel, df, changed, dr) in worst.items():
        print(f"  {label:<6} {rel:.2e}  {df:.3g}  {changed:.4f}  {dr:.3f}")


if __name__ == "__main__":
    main()
