"""Certified coverage of a graded risk target: Hoeffding-Bentkus against the betting tail, at one delta.

Run: ``python benchmarks/bench_certified_tails.py --mirror <data mirror> [--draws 100]
[--out benchmarks/certified_tails_records.csv]``.

For each population, calibration size ``n`` and target risk, ``--draws`` calibration samples are
drawn and certified with :func:`rejectopt._certify.fit_certified_risk` (Learn-then-Test) under
each ``tail`` ("hb", "betting", "auto"). A record gives the mean *population* coverage of the
certified cut (0 when the target is refused), the refused share and the share of draws whose cut
misses the target in the population (the level check: at most delta up to chance).

Populations, each with a known truth:

* synthetic, the score ``u ~ U(0, 1)`` and a graded loss given ``u``: ``binomial3`` (Binomial(3,
  0.1 + 0.3 u), B = 9: an ordinal MAE of a fair model), ``mae012`` (0, 1, 2 with probabilities
  falling in ``u``, B = 9: a good model), ``beta`` (Beta with mean 0.1 + 0.4 u, B = 1) and
  ``three_point`` (0, 1 or 4, B = 4: losses at B common, where Hoeffding-Bentkus should win); the
  risk and coverage of a cut are computed on 400,000 reference rows.
* real: the absolute error (MAE, B = 18) of SVOR (:class:`rejectopt.classifiers.SVOR`) on
  abalone, its projection ``<w, x>`` as the uncertainty (the error grows with the predicted age;
  the margin is flat there), from the data mirror (``--mirror``: no download). SVOR is trained
  on 1,500 rows; the other rows are the population, and calibration samples are drawn from them
  with replacement, so a cut's risk and coverage are exact.
"""

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from rejectopt._certify import fit_certified_risk
from rejectopt.classifiers import SVOR
from rejectopt.datasets import load_prepared, prepare_dataset
from rejectopt.selective import InfeasibleTargetError

TAILS = ("hb", "betting", "auto")
DELTA = 0.1


def _synthetic(name, rng, n):
    u = rng.random(n)
    if name == "binomial3":
        return rng.binomial(3, 0.1 + 0.3 * u).astype(float), u
    if name == "mae012":
        r = rng.random(n)
        return np.where(r < 0.1 * u, 2.0, np.where(r < 0.5 * u, 1.0, 0.0)), u
    if name == "beta":
        mean = 0.1 + 0.4 * u
        return rng.beta(4.0 * mean, 4.0 * (1.0 - mean)), u
    r = rng.random(n)  # three_point
    return np.where(r < u / 4, 4.0, np.where(r < u / 4 + u / 2, 1.0, 0.0)), u


SYNTHETIC = {
    "binomial3": (9.0, (0.7, 0.8)),
    "mae012": (9.0, (0.3, 0.4)),
    "beta": (1.0, (0.25, 0.3)),
    "three_point": (4.0, (0.5, 0.7)),
}

#: abalone's targets: the SVOR population's risk is 0.97 at coverage 0.1, 1.19 at 0.5, 1.57 in all.
REAL_TARGETS = (1.3, 1.5)


class _Population:
    """A population as a finite table of rows: a cut's risk and coverage are its means over them."""

    def __init__(self, loss, s):
        order = np.argsort(s, kind="stable")
        self.loss, self.s = loss[order], s[order]
        self.cum = np.cumsum(self.loss)

    def cut(self, threshold):
        k = int(np.searchsorted(self.s, threshold, side="right"))
        return k / self.s.size, (self.cum[k - 1] / k if k else 0.0)


def _real_population(mirror, rng):
    """SVOR's absolute errors and margins on abalone's rows not used to train it."""
    with tempfile.TemporaryDirectory() as tmp:
        prepare_dataset(
            "abalone",
            Path(tmp) / "raw",
            Path(tmp) / "abalone.npz",
            mirror=mirror,
            allow_download=False,
        )
        X, y = load_prepared(Path(tmp) / "abalone.npz")
    X = (X - X.mean(0)) / X.std(0)
    order = rng.permutation(y.size)
    train, rest = order[:1500], order[1500:]
    model = SVOR(C=10.0, n_classes=int(y.max()) + 1).fit(X[train], y[train])
    loss = np.abs(model.predict(X[rest]) - y[rest]).astype(float)
    # The margin is flat on abalone (18 close thresholds); the error grows with the predicted age,
    # so the projection <w, x> ranks the rows by risk.
    return loss, model.decision_function(X[rest]), float(y.max())


def _certify(draw_sample, population, bound, n, target, draws, seed):
    rows = []
    for tail in TAILS:
        rng = np.random.default_rng(seed)  # the same samples for every tail
        coverage, refused, missed = [], 0, 0
        for draw in range(draws):
            loss, s = draw_sample(rng, n)
            try:
                fit = fit_certified_risk(
                    loss, s, target, 1 - DELTA, loss_bound=bound, random_state=draw, tail=tail
                )
            except InfeasibleTargetError:
                coverage.append(0.0)
                refused += 1
                continue
            cov, risk = population.cut(fit.threshold)
            coverage.append(cov)
            missed += risk > target
        rows.append(
            {
                "tail": tail,
                "coverage": np.mean(coverage),
                "refused": refused / draws,
                "missed": missed / draws,
            }
        )
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--mirror", required=True, help="the data mirror holding abalone")
    parser.add_argument("--draws", type=int, default=100)
    parser.add_argument("--sizes", type=int, nargs="+", default=[300, 1000, 3000])
    parser.add_argument("--out", default="benchmarks/certified_tails_records.csv")
    args = parser.parse_args(argv)
    records, started = [], time.perf_counter()
    cases = []
    for name, (bound, targets) in SYNTHETIC.items():
        reference = _Population(*_synthetic(name, np.random.default_rng(0), 400_000))
        cases.append(
            (name, reference, bound, targets, lambda rng, n, name=name: _synthetic(name, rng, n))
        )
    loss, s, bound = _real_population(args.mirror, np.random.default_rng(0))
    real = _Population(loss, s)
    cases.append(
        (
            "abalone_svor_mae",
            real,
            bound,
            REAL_TARGETS,
            lambda rng, n: (lambda i: (loss[i], s[i]))(rng.integers(0, loss.size, n)),
        )
    )
    for name, population, bound, targets, draw_sample in cases:
        for n in args.sizes:
            for target in targets:
                for row in _certify(draw_sample, population, bound, n, target, args.draws, n):
                    records.append(
                        {
                            "population": name,
                            "loss_bound": bound,
                            "n": n,
                            "target_risk": target,
                            "confidence": 1 - DELTA,
                            "draws": args.draws,
                            **row,
                        }
                    )
                    print(records[-1], flush=True)
    table = pd.DataFrame(records)
    table.to_csv(args.out, index=False, float_format="%.4g")
    wide = table.pivot_table(
        index=["population", "n", "target_risk"], columns="tail", values="coverage"
    )
    wide["betting_minus_hb"] = wide["betting"] - wide["hb"]
    print(wide.round(3).to_string())
    print(f"{time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
