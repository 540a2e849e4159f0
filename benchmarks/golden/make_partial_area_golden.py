"""Golden values of the partial areas (``coverage_range``), made by fd-shifts' own code re-typed.

Writes ``tests/data/metric_partial_area_golden.json``, read by ``tests/test_metrics_conventions.py``.
It imports nothing of rejectopt and needs NumPy only (run it with any Python that has NumPy)::

    python3 benchmarks/golden/make_partial_area_golden.py

Provenance. fd-shifts is not on PyPI; its functions are re-typed below, unchanged but for
``np.trapz`` -> ``np.trapezoid`` and without the parts a partial area never reaches (NaN
handling, balanced-accuracy risks, the "achievable" point mask, plotting, bootstrap):

* IML-DKFZ/fd-shifts, fd_shifts/analysis/rc_stats_utils.py @ 8ac4f6dbb5dd4bc3cb3a9756758f4ee31fd5aa5d
  (``selective_risk_stats``, ``generalized_risk_stats``);
* IML-DKFZ/fd-shifts, fd_shifts/analysis/rc_stats.py @ 56276af1d8d2ebcfe94c85bf06ad68c079169833
  (``RiskCoverageStatsMixin.evaluate_auc`` with ``cov_min`` / ``cov_max``), ``AUC_DISPLAY_SCALE = 1``.

fd-shifts computes a partial AURC only with ``interpolation="non-linear"`` (the accepted loss
linear in the coverage between two points of its curve, so the selective risk is a hyperbola
there); its linear interpolation -- the default, and the only one for the generalized risk --
raises ``NotImplementedError`` for any range but [0, 1]. So the AURC values below are fd-shifts'
``evaluate_auc(risk="selective-risk", cov_min=a, cov_max=b, interpolation="non-linear")``, and
the AUGRC values are recorded as fd-shifts' refusal plus a reference computed from its curve by
NumPy alone: the trapezoid of ``generalized_risk_stats``' points clipped to [a, b] with
``np.interp`` (the area its linear branch would give on a sub-range).
"""

from __future__ import annotations

import json
import platform
import sys
from importlib.metadata import version
from pathlib import Path

import numpy as np

OUT = Path(__file__).resolve().parents[2] / "tests" / "data" / "metric_partial_area_golden.json"
SEED = 20261127
N_RANDOM = 200


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
    AUC_DISPLAY_SCALE = 1

    def __init__(self, confids, residuals):
        self.confids = confids
        self.residuals = residuals
        self.n = len(residuals)

    def get_curve_stats(self, *, risk):
        stats = selective_risk_stats if risk == "selective-risk" else generalized_risk_stats
        return stats(
            confids=self.confids,
            residuals=self.residuals,
            idx_sorted_confids=np.argsort(self.confids),
        )

    def evaluate_auc(
        self, *, risk=None, coverages=None, risks=None, cov_min=0, cov_max=1, interpolation="linear"
    ):
        if cov_max <= cov_min or cov_max <= 0 or cov_min >= 1:
            return 0.0
        assert (coverages is None) == (risks is None)
        if coverages is None:
            curve_stats = self.get_curve_stats(risk=risk)
            coverages = curve_stats["coverages"]
            risks = curve_stats["risks"]
        if interpolation == "linear" or "generalized" in risk:
            if cov_max != 1 or cov_min != 0:
                raise NotImplementedError()
            return -np.trapezoid(risks, coverages) * self.AUC_DISPLAY_SCALE
        if coverages[-1] == 0:
            coverages = coverages[:-1]
            risks = risks[:-1]
        n = self.n
        cov_below = 0
        error_sum_below = 0
        lower_lim = 0
        cov_above = None
        error_sum_above = 1
        upper_lim = 1
        if cov_min > 0:
            idx_range = np.argwhere(coverages >= cov_min)[:, 0]
            if idx_range[-1] < len(coverages) - 1:
                cov_below = coverages[idx_range[-1] + 1]
                error_sum_below = risks[idx_range[-1] + 1] * cov_below
            lower_lim = (cov_min - cov_below) / (coverages[idx_range[-1]] - cov_below)
            cov_below *= n
            error_sum_below *= n
            coverages = coverages[idx_range]
            risks = risks[idx_range]
        if cov_max < 1:
            idx_range = np.argwhere(coverages <= cov_max)[:, 0]
            if len(idx_range) > 0:
                cov_above = coverages[idx_range[0] - 1]
                error_sum_above = risks[idx_range[0] - 1] * cov_above
                upper_lim = (cov_max - coverages[idx_range[0]]) / (
                    cov_above - coverages[idx_range[0]]
                )
                cov_above *= n
                error_sum_above *= n
            else:
                cov_above = coverages[-1] * n
                error_sum_above = risks[-1] * cov_above
                upper_lim = cov_max / coverages[-1]
            coverages = coverages[idx_range]
            risks = risks[idx_range]
        cov = coverages * n
        error_sum = risks * cov
        if len(cov) == 0:
            if cov_below == 0:
                aurc = error_sum_above * (upper_lim - lower_lim)
                return aurc / n
            else:
                cov_diff = cov_above - cov_below
                aurc = (error_sum_above - error_sum_below) * (upper_lim - lower_lim) + (
                    error_sum_below * cov_above - error_sum_above * cov_below
                ) * np.log(
                    (cov_above + cov_diff * upper_lim) / (cov_below + cov_diff * lower_lim)
                ) / cov_diff
                return aurc / n
        aurc = 0
        if len(cov) > 1:
            cov_diff = -np.diff(cov)
            error_sum_prev = error_sum[:-1]
            error_sum_next = error_sum[1:]
            cov_prev = cov[:-1]
            cov_next = cov[1:]
            aurc += sum(
                error_sum_prev
                - error_sum_next
                + (error_sum_next * cov_prev - error_sum_prev * cov_next)
                * np.log(cov_prev / cov_next)
                / cov_diff
            )
        if cov_below == 0:
            aurc += error_sum[-1] * (1 - lower_lim)
        else:
            cov_diff = cov[-1] - cov_below
            aurc += (error_sum[-1] - error_sum_below) * (1 - lower_lim) + (
                error_sum_below * cov[-1] - error_sum[-1] * cov_below
            ) * np.log(cov[-1] / (cov_below + cov_diff * lower_lim)) / cov_diff
        if cov_max < 1:
            cov_diff = cov_above - cov[0]
            aurc += (error_sum_above - error_sum[0]) * upper_lim + (
                error_sum[0] * cov_above - error_sum_above * cov[0]
            ) * np.log((cov[0] + cov_diff * upper_lim) / cov[0]) / cov_diff
        return aurc / n * self.AUC_DISPLAY_SCALE


# ============================================================================================
# The cases
# ============================================================================================
def random_case(rng, k):
    """Sizes 1-60, ties and plateaus in the scores, 0/1 or graded losses (as the conventions' cases)."""
    n = int(rng.choice([1, 2, 3, 4, 5, 8, 13, 20, 33, 47, 60]))
    kind = k % 6
    if kind == 0:
        conf = np.round(rng.random(n), 4)
    elif kind == 1:
        conf = np.round(rng.random(n), 1)
    elif kind == 2:
        conf = rng.integers(0, 3, n) / 2.0
    elif kind == 3:
        conf = np.full(n, 0.5)
    elif kind == 4:
        conf = np.round(rng.normal(size=n), 2)
    else:
        conf = np.repeat(rng.random(max(1, n // 4 + 1)), 4)[:n]
    loss_kind = (k // 6) % 4
    if loss_kind in (0, 1):
        loss = (rng.random(n) < rng.random()).astype(float)
    elif loss_kind == 2:
        loss = np.round(rng.random(n), 4)
    else:
        loss = rng.choice([0.0, 0.25, 0.5, 1.0], n)
    return f"random-{k:03d}", conf, loss


def coverage_ranges(rng, conf):
    """Fixed ranges, random ones, and ranges whose ends sit on the curve's points."""
    n = len(conf)
    points = sorted(
        {
            (n - i) / n
            for i in range(n)
            if i == 0 or conf[np.argsort(conf)][i - 1] != conf[np.argsort(conf)][i]
        }
    )
    ranges = [(0.0, 1.0), (0.0, 0.5), (0.5, 1.0), (0.2, 0.8), (0.0, 0.1), (0.9, 1.0)]
    a, b = np.sort(np.round(rng.uniform(0, 1, 2), 3))
    if a < b:
        ranges.append((float(a), float(b)))
    if len(points) >= 2:
        ranges.append((float(points[0]), float(points[-1])))
        lo, hi = points[len(points) // 2 - 1], points[len(points) // 2]
        ranges.append(
            (float(lo + (hi - lo) / 4), float(lo + 3 * (hi - lo) / 4))
        )  # inside one segment
    return ranges


def generalized_reference(stats, a, b):
    """Trapezoid of fd-shifts' generalized curve between a and b (np.interp at the ends)."""
    cov, risk = stats["coverages"][::-1], stats["risks"][::-1]  # ascending coverage
    inside = cov[(cov > a) & (cov < b)]
    grid = np.concatenate(([a], inside, [b]))
    return float(np.trapezoid(np.interp(grid, cov, risk), grid))


def main():
    rng = np.random.default_rng(SEED)
    cases = []
    named = [
        ("four-sample", np.array([0.9, 0.8, 0.7, 0.1]), np.array([0.0, 1, 0, 1])),
        ("four-sample-tie", np.array([0.9, 0.8, 0.8, 0.1]), np.array([0.0, 1, 0, 1])),
    ]
    for case_id, conf, loss in named + [random_case(rng, k) for k in range(N_RANDOM)]:
        fd = RiskCoverageStats(conf, loss)
        values = []
        for a, b in coverage_ranges(rng, conf):
            aurc = float(
                fd.evaluate_auc(
                    risk="selective-risk", cov_min=a, cov_max=b, interpolation="non-linear"
                )
            )
            try:
                fd.evaluate_auc(risk="generalized-risk", cov_min=a, cov_max=b)
                refusal = None
            except NotImplementedError:
                refusal = "NotImplementedError"
            augrc = generalized_reference(fd.get_curve_stats(risk="generalized-risk"), a, b)
            values.append(
                {"range": [a, b], "aurc": aurc, "augrc": augrc, "fd_shifts_augrc": refusal}
            )
        cases.append(
            {
                "id": case_id,
                "loss": loss.tolist(),
                "uncertainty": (-conf).tolist(),
                "values": values,
            }
        )
    provenance = {
        "generator": "benchmarks/golden/make_partial_area_golden.py",
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "numpy": version("numpy"),
        "re-typed": {
            "repo": "IML-DKFZ/fd-shifts",
            "files": {
                "fd_shifts/analysis/rc_stats_utils.py": "8ac4f6dbb5dd4bc3cb3a9756758f4ee31fd5aa5d",
                "fd_shifts/analysis/rc_stats.py": "56276af1d8d2ebcfe94c85bf06ad68c079169833",
            },
        },
        "aurc": "fd-shifts evaluate_auc(risk='selective-risk', cov_min, cov_max, interpolation='non-linear')",
        "augrc": "np.trapezoid of fd-shifts' generalized_risk_stats points clipped to the range by np.interp "
        "(fd-shifts' own evaluate_auc raises NotImplementedError on a partial AUGRC)",
        "seed": SEED,
        "units": "loss units (AUC_DISPLAY_SCALE = 1)",
    }
    text = json.dumps({"provenance": provenance, "cases": cases}, separators=(",", ":"))
    OUT.write_text(text + "\n")
    print(f"{len(cases)} cases -> {OUT} ({len(text) / 1e3:.0f} kB)")


if __name__ == "__main__":
    main()
