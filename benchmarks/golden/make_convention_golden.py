"""Golden values of the risk-coverage metric conventions, made by the libraries' own code.

Writes ``tests/data/metric_conventions_golden.json``, read by ``tests/test_metrics_conventions.py``.
It imports nothing of rejectopt: every value comes from the library that defines the convention.

Run it in a scratch virtualenv, never in the project's environment (none of these is a
dependency of rejectopt)::

    python3 -m venv /tmp/golden-venv
    /tmp/golden-venv/bin/pip install torch==2.13.0          # the CPU build
    /tmp/golden-venv/bin/pip install mapie torch-uncertainty torchmetrics lightning rich torchvision
    /tmp/golden-venv/bin/python benchmarks/golden/make_convention_golden.py

Provenance (also written into the output file, with the versions actually imported):

* MAPIE 1.6.0 (PyPI): ``mapie.metrics.uncertainty.auarc``, called as released.
* torch-uncertainty 0.13.0 (PyPI), torchmetrics, torch 2.13.0+cpu: the ``AURC``, ``AUGRC``,
  ``RiskAtxCov`` and ``CovAtxRisk`` metrics' ``compute``, called as released; their states
  ``scores`` / ``errors`` are filled directly (``update`` derives them from class probabilities,
  which cannot express arbitrary scores and non-binary losses). Run with
  ``torch.set_default_dtype(torch.float64)`` so the coverage grid ``arange(1, N + 1) / N`` is
  computed in double precision (in float32 the values agree to ~1e-7 only).
* fd-shifts is not on PyPI. Its functions are re-typed below, unchanged but for two names
  NumPy 2 removed (``np.trapz`` -> ``np.trapezoid``, ``np.infty`` -> ``np.inf``) and without
  the parts these metrics never reach (NaN handling, balanced-accuracy risks, the non-linear
  "achievable" AURC, plotting, bootstrap):
  - IML-DKFZ/fd-shifts, fd_shifts/analysis/rc_stats_utils.py @ 8ac4f6dbb5dd4bc3cb3a9756758f4ee31fd5aa5d
    (``selective_risk_stats``, ``generalized_risk_stats``);
  - IML-DKFZ/fd-shifts, fd_shifts/analysis/rc_stats.py @ 56276af1d8d2ebcfe94c85bf06ad68c079169833
    (``RiskCoverageStatsMixin``: ``aurc``, ``augrc``, ``eaurc``, ``eaugrc``, ``aurc_optimal``,
    ``augrc_optimal``, ``evaluate_auc`` linear branch, ``get_working_point``), with
    ``AUC_DISPLAY_SCALE = 1`` as fd-shifts' own tests set it;
  - IML-DKFZ/fd-shifts, fd_shifts/analysis/metrics.py @ 29d7d9b8fd60940d647559aa3571affaa17e504c
    (``StatsCache.rc_curve_stats``, ``aurc``, ``eaurc``): the metrics before RiskCoverageStats,
    the code fd-shifts keeps behind ``StatsCache(..., legacy=True)``; ``AURC_DISPLAY_SCALE = 1``;
  - IML-DKFZ/fd-shifts, fd_shifts/tests/utils.py @ ccead8427d5d09148aa3c651804a62c7d8e328e7
    (``RC_STATS_TEST_CASES``: its confidence and prediction arrays, rebuilt here with a seeded
    generator for the two that draw random numbers; its expected fd-shifts values are checked
    against the re-typed code below before anything is written).
* Geifman & El-Yaniv's ``RC_curve`` re-typed from geifmany/uncertainty_ICLR,
  utils/uncertainty_tools.py @ 24b8d47ab58555c4c468c07d954687f948900cfb.

Ties: NumPy's default ``argsort`` (fd-shifts, Geifman) and ``torch.argsort`` (torch-uncertainty)
are not stable, so on tied scores these libraries' values depend on how their sort ordered the
tied examples on this machine. For every case and library the file records that order
(``order``: the library's processing order as indices into the case's arrays) whenever it
differs from the stable order; the tests feed rejectopt the arrays in that order, where its
stable sort reproduces the library's sequence exactly.
"""

from __future__ import annotations

import json
import math
import platform
import sys
import warnings
from importlib.metadata import version
from pathlib import Path

import numpy as np
import torch
from mapie.metrics.uncertainty import auarc
from torch_uncertainty.metrics.classification import AUGRC, AURC, CovAtxRisk, RiskAtxCov

OUT = Path(__file__).resolve().parents[2] / "tests" / "data" / "metric_conventions_golden.json"
SEED = 20261125
N_RANDOM = 320


# ============================================================================================
# fd-shifts (re-typed; see the header for repository, paths and commits)
# ============================================================================================
def selective_risk_stats(*, confids, residuals, idx_sorted_confids=None):
    n = len(residuals)
    idx_sorted = np.argsort(confids) if idx_sorted_confids is None else idx_sorted_confids
    residuals = residuals[idx_sorted]
    confidence = confids[idx_sorted]
    cov = n
    selective_risk_norm = n
    error_sum = sum(residuals)
    coverages = [1.0]
    risks = [error_sum / cov]
    thresholds = [confidence[0]]
    working_point_mask = [True]
    current_min_risk = risks[0]
    for i in range(n - 1):
        cov -= 1
        selective_risk_norm -= 1
        error_sum -= residuals[i]
        if confidence[i] != confidence[i + 1]:
            selective_risk = error_sum / selective_risk_norm
            if selective_risk < current_min_risk:
                working_point_mask.append(True)
                current_min_risk = selective_risk
            else:
                working_point_mask.append(False)
            thresholds.append(confidence[i + 1])
            coverages.append(cov / n)
            risks.append(selective_risk)
    coverages.append(0)
    risks.append(risks[-1])
    working_point_mask.append(False)
    return {
        "coverages": np.array(coverages),
        "risks": np.array(risks),
        "thresholds": np.array(thresholds),
        "working_point_mask": working_point_mask,
    }


def generalized_risk_stats(*, confids, residuals, idx_sorted_confids=None):
    n = len(residuals)
    idx_sorted = np.argsort(confids) if idx_sorted_confids is None else idx_sorted_confids
    residuals = residuals[idx_sorted]
    confidence = confids[idx_sorted]
    cov = n
    error_sum = sum(residuals)
    coverages = [1.0]
    risks = [error_sum / n]
    thresholds = [confidence[0]]
    working_point_mask = [True]
    current_min_risk = risks[0]
    for i in range(n - 1):
        cov -= 1
        error_sum -= residuals[i]
        risk = error_sum / n
        if confidence[i] != confidence[i + 1]:
            if risk < current_min_risk:
                working_point_mask.append(True)
                current_min_risk = risk
            else:
                working_point_mask.append(False)
            thresholds.append(confidence[i + 1])
            coverages.append(cov / n)
            risks.append(risk)
    coverages.append(0)
    working_point_mask.append(risks[-1] > 0)
    risks.append(0)
    return {
        "coverages": np.array(coverages),
        "risks": np.array(risks),
        "thresholds": np.array(thresholds),
        "working_point_mask": working_point_mask,
    }


class RiskCoverageStats:
    AUC_DISPLAY_SCALE = 1  # fd-shifts' tests' setting (its default 1000 is a display factor)

    def __init__(self, confids, residuals):
        self.confids = confids
        self.residuals = residuals
        self.n = len(residuals)
        self.is_binary = np.all(np.logical_or(self.residuals == 0, self.residuals == 1))

    def _evaluate_rc_curve_stats(self, *, risk, confids=None, residuals=None):
        idx_sorted_confids = (
            np.argsort(confids) if confids is not None else np.argsort(self.confids)
        )
        confids = confids if confids is not None else self.confids
        residuals = residuals if residuals is not None else self.residuals
        stats = selective_risk_stats if risk == "selective-risk" else generalized_risk_stats
        return stats(confids=confids, residuals=residuals, idx_sorted_confids=idx_sorted_confids)

    def get_curve_stats(self, *, risk):
        return self._evaluate_rc_curve_stats(risk=risk)

    def evaluate_auc(self, *, risk=None, coverages=None, risks=None):
        if coverages is None:
            curve_stats = self.get_curve_stats(risk=risk)
            coverages = curve_stats["coverages"]
            risks = curve_stats["risks"]
        return -np.trapezoid(risks, coverages) * self.AUC_DISPLAY_SCALE

    @property
    def aurc(self):
        return self.evaluate_auc(risk="selective-risk")

    @property
    def augrc(self):
        return self.evaluate_auc(risk="generalized-risk")

    @property
    def aurc_optimal(self):
        if self.is_binary:
            err = np.mean(self.residuals)
            return self.AUC_DISPLAY_SCALE * (
                err + (1 - err) * (np.log(1 - err + np.finfo(err.dtype).eps))
            )
        stats = self._evaluate_rc_curve_stats(
            risk="selective-risk",
            confids=np.linspace(1, 0, len(self.confids)),
            residuals=self.residuals[np.argsort(self.residuals)],
        )
        return self.evaluate_auc(coverages=stats["coverages"], risks=stats["risks"])

    @property
    def augrc_optimal(self):
        if self.is_binary:
            return 0.5 * np.mean(self.residuals) ** 2 * self.AUC_DISPLAY_SCALE
        stats = self._evaluate_rc_curve_stats(
            risk="generalized-risk",
            confids=np.linspace(1, 0, len(self.confids)),
            residuals=self.residuals[np.argsort(self.residuals)],
        )
        return self.evaluate_auc(coverages=stats["coverages"], risks=stats["risks"])

    @property
    def eaurc(self):
        return self.aurc - self.aurc_optimal

    @property
    def eaugrc(self):
        return self.augrc - self.augrc_optimal

    def get_working_point(self, *, risk, target_risk=None, target_cov=None):
        curve_stats = self.get_curve_stats(risk=risk)
        working_point_mask = curve_stats["working_point_mask"]
        coverages = curve_stats["coverages"][working_point_mask]
        risks = curve_stats["risks"][working_point_mask]
        thresholds = np.r_[curve_stats["thresholds"], -np.inf][working_point_mask]
        if target_risk is not None:
            mask = np.argwhere(risks <= target_risk)[:, 0]
            idx = np.argmax(coverages[mask])
        elif target_cov is not None:
            mask = np.argwhere(coverages >= target_cov)[:, 0]
            idx = np.argmin(risks[mask])
        return coverages[mask][idx], risks[mask][idx], thresholds[mask][idx]


AURC_DISPLAY_SCALE = 1  # fd-shifts' legacy metrics.py (display factor 1000 left out)


class LegacyStatsCache:
    def __init__(self, confids, correct):
        self.confids = confids
        self.correct = correct

    @property
    def residuals(self):
        return 1 - self.correct

    @property
    def rc_curve_stats(self):
        coverages = []
        risks = []
        n_residuals = len(self.residuals)
        idx_sorted = np.argsort(self.confids)
        coverage = n_residuals
        error_sum = sum(self.residuals[idx_sorted])
        coverages.append(coverage / n_residuals)
        risks.append(error_sum / n_residuals)
        weights = []
        tmp_weight = 0
        for i in range(0, len(idx_sorted) - 1):  # noqa: PIE808 (as the original)
            coverage = coverage - 1
            error_sum = error_sum - self.residuals[idx_sorted[i]]
            selective_risk = error_sum / (n_residuals - 1 - i)
            tmp_weight += 1
            if i == 0 or self.confids[idx_sorted[i]] != self.confids[idx_sorted[i - 1]]:
                coverages.append(coverage / n_residuals)
                risks.append(selective_risk)
                weights.append(tmp_weight / n_residuals)
                tmp_weight = 0
        if tmp_weight > 0:
            coverages.append(0)
            risks.append(risks[-1])
            weights.append(tmp_weight / n_residuals)
        return coverages, risks, weights


def legacy_aurc(stats_cache):
    _, risks, weights = stats_cache.rc_curve_stats
    return (
        sum([(risks[i] + risks[i + 1]) * 0.5 * weights[i] for i in range(len(weights))])
        * AURC_DISPLAY_SCALE
    )


def legacy_eaurc(stats_cache):
    err = np.mean(stats_cache.residuals)
    kappa_star_aurc = err + (1 - err) * (np.log(1 - err + np.finfo(err.dtype).eps))
    return legacy_aurc(stats_cache) - kappa_star_aurc * AURC_DISPLAY_SCALE


# ============================================================================================
# Geifman & El-Yaniv (re-typed; see the header)
# ============================================================================================
def RC_curve(residuals, confidence):  # the original's name
    curve = []
    m = len(residuals)
    idx_sorted = np.argsort(confidence)
    temp1 = residuals[idx_sorted]
    cov = len(temp1)
    acc = sum(temp1)
    curve.append((cov / m, acc / len(temp1)))
    for i in range(0, len(idx_sorted) - 1):  # noqa: PIE808 (as the original)
        cov = cov - 1
        acc = acc - residuals[idx_sorted[i]]
        curve.append((cov / m, acc / (m - i)))
    AUC = sum([a[1] for a in curve]) / len(curve)
    err = np.mean(residuals)
    kappa_star_aurc = err + (1 - err) * (np.log(1 - err))
    EAURC = AUC - kappa_star_aurc
    return curve, AUC, EAURC


# ============================================================================================
# The cases
# ============================================================================================
def fd_shifts_test_cases(rng):
    """fd-shifts' RC_STATS_TEST_CASES without the NaN ones: (id, confids, correct, expected)."""
    n = 100
    c = {
        "confid-all-equal": np.ones(n) * rng.random(),
        "confid-01": (np.arange(n) % 2).astype(float),
        "confid-10": ((np.arange(n) + 1) % 2).astype(float),
        "confid-asc": np.linspace(0.0, 1.0, n),
        "confid-asc-u": np.arange(-(n // 2), n // 2).astype(float),
        "confid-plateaus": np.repeat([0.2, 0.4, 0.6, 0.8], n // 4),
    }
    p_alt = (np.arange(n) % 2).astype(float)
    p = {
        "p-all-one": np.ones(n),
        "p-all-zero": np.zeros(n),
        "p-01": p_alt,
        "p-asc": np.linspace(0.0, 1.0, n),
        "p-plateau": np.repeat([0.2, 0.4, 0.6, 0.8], n // 4),
    }
    # fd-shifts' expected (aurc, eaurc, augrc) per case, from its tests/utils.py
    expected = {
        ("confid-all-equal", "p-all-one"): (0.0, 0.0, 0),
        ("confid-all-equal", "p-all-zero"): (1.0, 0.0, 0.5),
        ("confid-all-equal", "p-01"): (0.5, 0.3465735902799724, 0.25),
        ("confid-all-equal", "p-asc"): (0.5, 0.2524999999999986, 0.24999999999999997),
        ("confid-all-equal", "p-plateau"): (0.5, 0.1817914679883058, 0.25000000000000017),
        ("confid-01", "p-all-one"): (0.0, 0.0, 0),
        ("confid-01", "p-all-zero"): (1.0, 0.0, 0.5),
        ("confid-01", "p-01"): (0.125, -0.02842640972002758, 0.125),
        ("confid-01", "p-asc"): (0.49621212121212127, 0.24871212121211994, 0.24873737373737373),
        ("confid-01", "p-plateau"): (0.49699999999999944, 0.17879146798830492, 0.24899999999999978),
        ("confid-10", "p-all-one"): (0.0, 0.0, 0),
        ("confid-10", "p-all-zero"): (1.0, 0.0, 0.5),
        ("confid-10", "p-01"): (0.875, 0.7215735902799725, 0.375),
        ("confid-10", "p-asc"): (0.503787878787879, 0.2562878787878777, 0.25126262626262635),
        ("confid-10", "p-plateau"): (0.5029999999999994, 0.18479146798830492, 0.2509999999999998),
        ("confid-asc", "p-all-one"): (0.0, 0.0, 0),
        ("confid-asc", "p-all-zero"): (1.0, 0.0, 0.5),
        ("confid-asc", "p-01"): (0.48281112575762547, 0.3293847160375979, 0.2475),
        ("confid-asc", "p-asc"): (0.24750000000000133, 0, 0.16583333333333353),
        ("confid-asc", "p-plateau"): (0.3182085320116945, 0.0, 0.18750000000000108),
        ("confid-asc-u", "p-all-one"): (0.0, 0.0, 0),
        ("confid-asc-u", "p-all-zero"): (1.0, 0.0, 0.5),
        ("confid-asc-u", "p-01"): (0.48281112575762547, 0.3293847160375979, 0.2475),
        ("confid-asc-u", "p-asc"): (0.24750000000000133, 0, 0.16583333333333353),
        ("confid-asc-u", "p-plateau"): (0.3182085320116945, 0.0, 0.18750000000000108),
        ("confid-plateaus", "p-all-one"): (0.0, 0.0, 0),
        ("confid-plateaus", "p-all-zero"): (1.0, 0.0, 0.5),
        ("confid-plateaus", "p-01"): (0.49083333333333334, 0.33740692361330576, 0.2475),
        ("confid-plateaus", "p-asc"): (
            0.2632575757575754,
            0.015757575757574083,
            0.17108585858585845,
        ),
        ("confid-plateaus", "p-plateau"): (
            0.31250000000000255,
            -0.005708532011691969,
            0.18750000000000097,
        ),
    }
    cases = [(f"fd-shifts:{ci}_{pi}", c[ci], p[pi], expected[(ci, pi)]) for ci, pi in expected]
    permuted = np.concatenate(
        [rng.permutation(p_alt[i * n // 4 : (i + 1) * n // 4]) for i in range(4)]
    )
    cases.append(
        (
            "fd-shifts:confid-plateaus_p-plateau-perm",
            c["confid-plateaus"],
            permuted,
            (0.49083333333333334, 0.33740692361330576, 0.2475),
        )
    )
    return cases


def random_case(rng, k):
    """A random case: sizes 1-60, ties and plateaus in the scores, 0/1 or graded losses."""
    n = int(rng.choice([1, 2, 3, 4, 5, 8, 13, 20, 33, 47, 60]))
    kind = k % 6
    if kind == 0:
        conf = np.round(rng.random(n), 4)  # (almost surely) distinct
    elif kind == 1:
        conf = np.round(rng.random(n), 1)  # a few plateaus
    elif kind == 2:
        conf = rng.integers(0, 3, n) / 2.0  # heavy ties
    elif kind == 3:
        conf = np.full(n, 0.5)  # one tie group
    elif kind == 4:
        conf = np.round(rng.normal(size=n), 2)
    else:
        conf = np.repeat(rng.random(max(1, n // 4 + 1)), 4)[:n]
    loss_kind = (k // 6) % 4
    if loss_kind in (0, 1):
        loss = (rng.random(n) < rng.random()).astype(float)  # 0/1 errors
    elif loss_kind == 2:
        loss = np.round(rng.random(n), 4)  # graded in [0, 1]
    else:
        loss = rng.choice([0.0, 0.25, 0.5, 1.0], n)  # graded with plateaus
    coverage = float(rng.choice([0.5, 0.8, 0.95, 1.0, round(float(rng.uniform(0.05, 1.0)), 3)]))
    risk = float(rng.choice([0.0, 0.05, 0.1, 0.3, 0.5, round(float(rng.uniform(0.0, 1.0)), 3)]))
    return f"random-{k:03d}", conf, loss, coverage, risk


# ============================================================================================
# The libraries' values
# ============================================================================================
def _value(fn):
    try:
        return float(fn())
    except ValueError as error:
        return {"error": "ValueError", "message": str(error)}


def _torch_metric(metric, conf, loss):
    metric.scores.append(torch.as_tensor(conf, dtype=torch.float64))
    metric.errors.append(torch.as_tensor(loss, dtype=torch.float64))
    return metric.compute().item()


def _order(processing, stable):
    return None if np.array_equal(processing, stable) else processing.tolist()


def library_values(conf, loss, coverage, risk):
    out, orders = {}, {}
    fd = RiskCoverageStats(conf, loss)
    out["fd-shifts"] = {
        "aurc": _value(lambda: fd.aurc),
        "augrc": _value(lambda: fd.augrc),
        "eaurc": _value(lambda: fd.eaurc),
        "eaugrc": _value(lambda: fd.eaugrc),
        "risk_at_coverage": _value(
            lambda: fd.get_working_point(risk="selective-risk", target_cov=coverage)[1]
        ),
        "coverage_at_risk": _value(
            lambda: fd.get_working_point(risk="selective-risk", target_risk=risk)[0]
        ),
    }
    ascending, stable_ascending = np.argsort(conf), np.argsort(conf, kind="stable")
    orders["fd-shifts"] = orders["fd-shifts-legacy"] = orders["geifman"] = _order(
        ascending, stable_ascending
    )
    legacy = LegacyStatsCache(conf, 1 - loss)
    out["fd-shifts-legacy"] = {
        "aurc": _value(lambda: legacy_aurc(legacy)),
        "eaurc": _value(lambda: legacy_eaurc(legacy)),
    }
    with np.errstate(divide="ignore", invalid="ignore"):
        _, auc, eaurc = RC_curve(loss, conf)
    out["geifman"] = {"aurc": float(auc), "eaurc": float(eaurc)}
    out["torch-uncertainty"] = {
        "aurc": _torch_metric(AURC(), conf, loss),
        "augrc": _torch_metric(AUGRC(), conf, loss),
        "risk_at_coverage": _torch_metric(RiskAtxCov(cov_threshold=coverage), conf, loss),
        "coverage_at_risk": _torch_metric(CovAtxRisk(risk_threshold=risk), conf, loss),
    }
    descending = torch.as_tensor(conf, dtype=torch.float64).argsort(descending=True).numpy()
    orders["torch-uncertainty"] = _order(descending, np.argsort(-conf, kind="stable"))
    if np.all((loss == 0) | (loss == 1)):
        out["mapie"] = {
            "aurc": 1.0 - auarc(1 - loss, conf)
        }  # MAPIE's own stable sort: no order to record
    return out, {k: v for k, v in orders.items() if v is not None}


def main():
    torch.set_default_dtype(torch.float64)
    # compute() is called on states filled directly, without update(): torchmetrics warns, harmlessly
    warnings.filterwarnings("ignore", message="The ``compute`` method of metric")
    rng = np.random.default_rng(SEED)
    cases = []

    def add(case_id, conf, loss, coverage=0.5, risk=0.1):
        conf, loss = np.asarray(conf, dtype=float), np.asarray(loss, dtype=float)
        values, orders = library_values(conf, loss, coverage, risk)
        case = {
            "id": case_id,
            "loss": loss.tolist(),
            "uncertainty": (-conf).tolist(),
            "coverage": coverage,
            "risk": risk,
            "values": values,
        }
        if orders:
            case["order"] = orders
        cases.append(case)
        return values

    add("four-sample", [0.9, 0.8, 0.7, 0.1], [0, 1, 0, 1])
    add("four-sample-tie", [0.9, 0.8, 0.8, 0.1], [0, 1, 0, 1])
    add("four-sample-tie-swapped", [0.9, 0.8, 0.8, 0.1], [0, 0, 1, 1])
    for case_id, conf, correct, (aurc, eaurc, augrc) in fd_shifts_test_cases(rng):
        values = add(case_id, conf, 1 - correct, 0.5, 0.3)
        got = values["fd-shifts"]
        for name, want in (("aurc", aurc), ("eaurc", eaurc), ("augrc", augrc)):
            assert math.isclose(got[name], want, rel_tol=1e-9, abs_tol=1e-9), (
                case_id,
                name,
                got[name],
                want,
            )
    for k in range(N_RANDOM):
        add(*random_case(rng, k))

    provenance = {
        "generator": "benchmarks/golden/make_convention_golden.py",
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "machine": platform.machine(),
        "packages": {
            name: version(name)
            for name in (
                "numpy",
                "torch",
                "torchmetrics",
                "torch-uncertainty",
                "mapie",
                "scikit-learn",
            )
        },
        "re-typed": {
            "fd-shifts": {
                "repo": "IML-DKFZ/fd-shifts",
                "files": {
                    "fd_shifts/analysis/rc_stats_utils.py": "8ac4f6dbb5dd4bc3cb3a9756758f4ee31fd5aa5d",
                    "fd_shifts/analysis/rc_stats.py": "56276af1d8d2ebcfe94c85bf06ad68c079169833",
                    "fd_shifts/analysis/metrics.py (legacy)": "29d7d9b8fd60940d647559aa3571affaa17e504c",
                    "fd_shifts/tests/utils.py (RC_STATS_TEST_CASES)": "ccead8427d5d09148aa3c651804a62c7d8e328e7",
                },
            },
            "geifman": {
                "repo": "geifmany/uncertainty_ICLR",
                "files": {"utils/uncertainty_tools.py": "24b8d47ab58555c4c468c07d954687f948900cfb"},
            },
        },
        "seed": SEED,
        "units": "loss units: fd-shifts' display factor 1000 left out; MAPIE stored as 1 - auarc",
        "order": "the library's processing order (indices into loss/uncertainty) where its unstable sort "
        "differs from a stable one; absent = the stable order",
    }
    OUT.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps({"provenance": provenance, "cases": cases}, separators=(",", ":"))
    tmp = OUT.with_suffix(".json.tmp")
    tmp.write_text(text + "\n")
    tmp.replace(OUT)
    print(f"{len(cases)} cases -> {OUT} ({len(text) / 1e3:.0f} kB)")


if __name__ == "__main__":
    main()
