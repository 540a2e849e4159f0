"""Print the numerical evidence of the notes on the three seed papers (docs/papers.md).

Each section recomputes one item of ``docs/papers.md`` with the library (or, where the point is
about the paper's text, prints the passage from the seed text next to the corrected reading):

* ``ood-table1``   -- Table 1 of the OOD paper at OOD means 3 (as stated), 2 and 1.5 (exact integration);
* ``ood-theorem3`` -- the LP optimum of Problem 1 on a finite set is not a threshold rule on ``r(x)``
  alone, as ``g = p_I / p_I = 1`` would make it; with ``g = p_O / p_I`` it is Theorem 3's rule;
* ``ood-lemma1``   -- ``R^S(h, c / alpha) = R^S(h, c)`` (not ``R^S(h, c) / alpha``), and Program (21)
  still equals Problem 1 (Charnes-Cooper LP of the fractional problem);
* ``ood-typos``    -- the passages of the seed text with the typos (needs ``--seeds``);
* ``jmlr-theorem8`` -- the largest ``AuRC / sele`` over all losses for distinct scores (exact: a
  vertex), for losses non-decreasing along the score, and the tie counterexample of the lower bound;
* ``jmlr-nemenyi`` -- Nemenyi's CD for k = 3 methods, N = 11 datasets;
* ``dh-loss``      -- the reconstructed double-hinge loss touches ``log(1 + e^{-yf})`` at ``logit p-`` /
  ``logit p+``, its kinks, and the Bartlett-Wegkamp crossing ``d = 0.24149``.

Usage: python benchmarks/papers_errata.py [SECTION ...] [--seeds /work/shared/seeds]
(no section: all of them; ``ood-table1`` takes about a minute).
"""

import argparse
import math
from fractions import Fraction
from pathlib import Path

import numpy as np
from scipy.optimize import brentq, linprog

from rejectopt.classifiers._double_hinge import double_hinge_loss
from rejectopt.metrics import aurc
from rejectopt.metrics import sele_loss as sele
from rejectopt.ood import GaussianOODModel, synthetic_table1
from rejectopt.ood._finite import solve_bounded_tpr_fpr_finite
from rejectopt.ood._synthetic import paper_table1
from rejectopt.stats import nemenyi_cd, nemenyi_q


def ood_table1(_args):
    paper = paper_table1()
    print("Table 1 of the OOD paper (Sec. 3.1), exact; the paper's row first")
    cols = ["risk_tpr_fpr", "risk_prec_recall", "auroc", "aupr", "oscr"]
    for mean in (3.0, 2.0, 1.5):
        table = synthetic_table1(GaussianOODModel(ood_mean=mean), oscr_angles=9)
        print(f"\nOOD mean {mean:g}:")
        for method in table.index:
            ours = "  ".join(f"{table.loc[method, c]:.4f}" for c in cols)
            printed = "  ".join(f"{paper.loc[method, c]:.3g}" for c in cols)
            print(f"  {method:7s} {ours}    paper: {printed}")
        a = table.loc["A(inf)"]
        print(
            f"  A's two risks: {a['risk_tpr_fpr']:.4f} vs {a['risk_prec_recall']:.4f} "
            f"({'equal' if abs(a['risk_tpr_fpr'] - a['risk_prec_recall']) < 5e-5 else 'differ'}); "
            f"C's AUPR {table.loc['C(0)', 'aupr']:.4f} (paper 0.92)"
        )


def _random_finite(rng, m=6):
    p_in = rng.dirichlet(np.ones(m))
    p_out = rng.dirichlet(np.ones(m))
    risk = rng.uniform(0.0, 0.6, m)
    return p_in, p_out, risk


def _lp_21(p_in, p_out, risk, phi, rho):
    """Program (21): min sum p_I r c / phi s.t. sum p_I c = phi, sum p_O c <= rho, 0 <= c <= 1."""
    return linprog(
        p_in * risk / phi,
        A_ub=[p_out],
        b_ub=[rho],
        A_eq=[p_in],
        b_eq=[phi],
        bounds=[(0, 1)] * len(p_in),
        method="highs",
    )


def _problem_1(p_in, p_out, risk, phi, rho):
    """Problem 1 itself, min R^S = sum p_I r c / sum p_I c s.t. TPR >= phi, FPR <= rho, by Charnes-Cooper:
    y = t c, t = 1 / sum p_I c; min sum p_I r y s.t. sum p_I y = 1, y <= t, sum p_O y <= rho t, t <= 1/phi."""
    m = len(p_in)
    cost = np.append(p_in * risk, 0.0)
    a_ub = np.vstack(
        [
            np.hstack([np.eye(m), -np.ones((m, 1))]),
            np.append(p_out, -rho)[None, :],
            np.append(np.zeros(m), 1.0)[None, :],
        ]
    )
    b_ub = np.append(np.zeros(m + 1), 1.0 / phi)
    return linprog(
        cost,
        A_ub=a_ub,
        b_ub=b_ub,
        A_eq=[np.append(p_in, 0.0)],
        b_eq=[1.0],
        bounds=[(0, None)] * (m + 1),
        method="highs",
    )


def ood_theorem3(_args):
    print(
        "Theorem 3 (OOD paper): the optimal c thresholds s(x) = r(x) + mu g(x). With g = p_I/p_I = 1,"
    )
    print(
        "s = r + mu would be a threshold on r alone; the LP optimum of Problem 1 is not one, while"
    )
    print("g = p_O/p_I gives it exactly (rejectopt.ood._finite.solve_bounded_tpr_fpr_finite):")
    rng = np.random.default_rng(11)
    shown = 0
    while shown < 3:
        p_in, p_out, risk = _random_finite(rng)
        phi, rho = 0.6, 0.3
        res = _lp_21(p_in, p_out, risk, phi, rho)
        if res.status != 0:
            continue
        c = res.x
        # a pair accepted against the order of r: r_i < r_j but c_i < c_j (c_j > 0)
        bad = [
            (i, j)
            for i in range(len(c))
            for j in range(len(c))
            if risk[i] < risk[j] and c[i] < c[j] - 1e-9
        ]
        if not bad:
            continue
        sol = solve_bounded_tpr_fpr_finite(p_in, p_out, risk, phi, rho)
        i, j = bad[0]
        print(
            f"  instance {shown}: LP optimum R^S = {res.fun:.6f}, Theorem 3 with g = p_O/p_I: "
            f"{sol.selective_risk:.6f}; r[{i}] = {risk[i]:.3f} < r[{j}] = {risk[j]:.3f} yet c = {c[i]:.3f} < {c[j]:.3f}"
            f" (g = {p_out[i] / p_in[i]:.3f} vs {p_out[j] / p_in[j]:.3f})"
        )
        shown += 1


def ood_lemma1(_args):
    rng = np.random.default_rng(5)
    p_in, _, risk = _random_finite(rng)
    c = rng.uniform(0.2, 1.0, p_in.size)
    alpha = 2.0

    def selective_risk(cc):
        return float(p_in @ (risk * cc) / (p_in @ cc))

    print("Lemma 1 (OOD supplement) claims R^S(h, c/alpha) = R^S(h, c)/alpha:")
    print(
        f"  R^S(c) = {selective_risk(c):.6f}, R^S(c/{alpha:g}) = {selective_risk(c / alpha):.6f}, "
        f"R^S(c)/{alpha:g} = {selective_risk(c) / alpha:.6f}: the selective risk is scale-invariant."
    )
    rng = np.random.default_rng(2024)
    worst, checked = 0.0, 0
    while checked < 200:
        p_in, p_out, risk = _random_finite(rng)
        phi, rho = rng.uniform(0.05, 1.0), rng.uniform(0.0, 1.0)
        a, b = _lp_21(p_in, p_out, risk, phi, rho), _problem_1(p_in, p_out, risk, phi, rho)
        if a.status != 0 or b.status != 0:
            assert a.status == b.status == 2, (a.status, b.status)  # infeasible for both
            continue
        worst = max(worst, abs(a.fun - b.fun))
        checked += 1
    print(
        f"  Program (21) vs Problem 1 (Charnes-Cooper LP) on {checked} random feasible instances: "
        f"largest difference of the optimal R^S {worst:.1e} (still exact)"
    )


_TYPOS = [
    (
        "ood_reject_option_models_supplement.txt",
        r"\pi < 10",
        "proof of Theorem 1: pi < 10 (pi is a prior in [0, 1])",
    ),
    (
        "ood_reject_option_models.txt",
        "g(x)=p_{I}(x)/p_{I}(x)",
        "Theorem 3: g = p_I/p_I, read p_O/p_I",
    ),
    (
        "ood_reject_option_models.txt",
        r"proposed Method E(\mathbb{R})",
        "Sec. 3.2: Method E(R), read D(R)",
    ),
    (
        "ood_reject_option_models.txt",
        r"recall ϕmax=0.7",
        "Sec. 3.3: recall phi_max = 0.7, read phi_min",
    ),
    (
        "ood_reject_option_models.txt",
        r"minimal acceptable TPR ρmin",
        "App. B.1: TPR rho_min, read phi_min",
    ),
]


def ood_typos(args):
    folder = Path(args.seeds)
    for name, needle, reading in _TYPOS:
        path = folder / name
        if not path.is_file():
            raise FileNotFoundError(
                f"{path}: seed text not found; pass --seeds DIR (the folder of {name})"
            )
        text = path.read_text(encoding="utf-8")
        at = text.find(needle)
        if at < 0:
            raise ValueError(f"{path}: passage {needle!r} not found")
        line = text.count("\n", 0, at) + 1
        print(
            f"  {name}:{line}: ...{text[max(0, at - 60) : at + len(needle) + 40]!r}...\n    -> {reading}"
        )


def jmlr_theorem8(_args):
    print(
        "Theorem 8 (JMLR): AuRC < 2 sele for any score. AuRC / sele is a ratio of linear functions of the"
    )
    print(
        "losses (>= 0), so over all losses its maximum is at a vertex: one unit loss. Distinct scores:"
    )
    for n in (2, 3, 4, 8, 16, 100):
        u = np.arange(n, dtype=float)  # uncertainties, distinct
        best = max((aurc(np.eye(n)[i], u) / sele(np.eye(n)[i], u), i) for i in range(n))
        harmonic = float(sum(Fraction(1, k) for k in range(1, n + 1)))
        print(
            f"  n = {n:3d}: max ratio {best[0]:.4f} (unit loss on example {best[1]}, "
            f"the least uncertain), H_n = {harmonic:.4f}"
        )
    print(
        "  e.g. losses [1, 0, 0, 0] with increasing uncertainty:",
        f"AuRC = {aurc([1, 0, 0, 0], [0, 1, 2, 3]):.4f}, sele = {sele([1, 0, 0, 0], [0, 1, 2, 3]):.4f}",
    )
    print(
        "Losses non-decreasing along the score (Lemma 15's hypothesis): a cone generated by the steps"
    )
    print("1[i >= j], so the maximum is at a step:")
    for n in (2, 4, 8, 16, 100, 1000):
        u = np.arange(n, dtype=float)
        ratio = max(
            aurc((u >= j).astype(float), u) / sele((u >= j).astype(float), u) for j in range(n)
        )
        print(f"  n = {n:4d}: max ratio {ratio:.4f}")
    print("Lower bound sele <= AuRC with ties: losses [0, 1], both uncertainties 0:")
    for ties in ("index", "average"):
        print(
            f"  AuRC (ties={ties!r}) = {aurc([0, 1], [0, 0], ties=ties):.4f}, sele = {sele([0, 1], [0, 0]):.4f}"
        )


def jmlr_nemenyi(_args):
    q = nemenyi_q(3, alpha=0.10)
    print(
        f"Nemenyi CD, k = 3, N = 11, alpha 0.10: q = {q:.4f}, "
        f"CD = q sqrt(k(k+1)/(6N)) = {nemenyi_cd(3, 11, alpha=0.10):.4f}"
        f" (paper: 0.98); at alpha 0.05: {nemenyi_cd(3, 11, alpha=0.05):.4f}"
    )


def dh_loss(_args):
    def entropy(p):
        return -p * math.log(p) - (1 - p) * math.log(1 - p)

    p_minus, p_plus = 0.2, 0.8
    print(
        f"Double-hinge loss (Grandvalet et al.), p- = {p_minus}, p+ = {p_plus}: tangents of log(1 + e^(-yf))"
    )
    for p in (p_minus, p_plus):
        f = math.log(p / (1 - p))
        for y in (1.0, -1.0):
            ours = double_hinge_loss(y, f, p_minus, p_plus)
            print(
                f"  y = {y:+.0f}, f = logit({p}) = {f:+.4f}: loss {float(ours):.6f}, "
                f"log(1+e^(-yf)) {math.log1p(math.exp(-y * f)):.6f}"
            )
    h_lo, h_hi = entropy(p_minus), entropy(p_plus)
    print(
        f"  kinks in the margin m = yf: negatives t = H(p-)/p- = {h_lo / p_minus:.4f}, tau = (H(p-)-H(p+))/(p- - p+) = "
        f"{(h_lo - h_hi) / (p_minus - p_plus):.4f}; positives t = H(p+)/(1-p+) = {h_hi / (1 - p_plus):.4f}"
    )

    def ratio(d):
        return d * math.log((1 - d) / d) / entropy(d) - 0.5

    print(
        f"  B&W and Chow-on-f reject the same set at d = {brentq(ratio, 0.1, 0.45, xtol=1e-14):.5f} (text: 'r ~ 0.24')"
    )


SECTIONS = {
    "ood-table1": ood_table1,
    "ood-theorem3": ood_theorem3,
    "ood-lemma1": ood_lemma1,
    "ood-typos": ood_typos,
    "jmlr-theorem8": jmlr_theorem8,
    "jmlr-nemenyi": jmlr_nemenyi,
    "dh-loss": dh_loss,
}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "sections",
        nargs="*",
        choices=[[], *SECTIONS],
        default=[],
        metavar="SECTION",
        help=f"any of {', '.join(SECTIONS)} (default: all)",
    )
    ap.add_argument(
        "--seeds", default="/work/shared/seeds", help="folder of the seed texts (for ood-typos)"
    )
    args = ap.parse_args()
    for name in args.sections or SECTIONS:
        print(f"\n== {name}")
        SECTIONS[name](args)


if __name__ == "__main__":
    main()
