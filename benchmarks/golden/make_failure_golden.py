"""Golden values of the failure-detection metrics, made by the libraries' own code.

Writes ``tests/data/metric_failure_golden.json``, read by ``tests/test_metrics_failure.py``. It
imports nothing of rejectopt: every value comes from the library that defines the metric.

Run it in a scratch virtualenv, never in the project's environment (none of these is a
dependency of rejectopt)::

    python3 -m venv /tmp/golden-h6-venv
    /tmp/golden-h6-venv/bin/pip install torch==2.13.0          # the CPU build
    /tmp/golden-h6-venv/bin/pip install mapie torch-uncertainty torchmetrics lightning rich torchvision
    /tmp/golden-h6-venv/bin/python benchmarks/golden/make_failure_golden.py

(the second ``pip install`` may upgrade torch for torchvision; the file records what ran).

Provenance (also written into the output file, with the versions actually imported):

* fd-shifts is not on PyPI. Its functions are re-typed below, unchanged but for two names
  NumPy 2 removed (``np.trapz`` -> ``np.trapezoid``, ``np.infty`` -> ``np.inf``), the display
  scale set to 1 (as fd-shifts' own tests do) and without the parts these metrics never reach
  (NaN handling, partial ranges, bootstrap, plotting); the scikit-learn calls are scikit-learn's:
  - IML-DKFZ/fd-shifts, fd_shifts/analysis/metrics.py @ 1336e7ce125b7e9cfb3d61a3574adc556d97da21
    (``failauc``, ``fpr_at_95_tpr``, ``failap_suc``, ``failap_err`` on ``StatsCache``);
  - IML-DKFZ/fd-shifts, fd_shifts/analysis/rc_stats_utils.py @ 8ac4f6dbb5dd4bc3cb3a9756758f4ee31fd5aa5d
    (``selective_risk_stats``, ``generalized_risk_stats``, ``selective_risk_ba_stats``,
    ``generalized_risk_ba_stats``);
  - IML-DKFZ/fd-shifts, fd_shifts/analysis/rc_stats.py @ 56276af1d8d2ebcfe94c85bf06ad68c079169833
    (``RiskCoverageStatsMixin``: ``aurc_ba``, ``augrc_ba``, ``aurc_achievable``,
    ``dominant_point_mask``, ``evaluate_auc`` linear and non-linear branches over [0, 1]).
* torch-uncertainty (PyPI): ``torch_uncertainty.metrics.classification.FPR95`` (``pos_label=1``,
  the successes, scored by confidence), called as released, in float64. torch-uncertainty has
  no AUROC class of its own: torchmetrics' ``BinaryAUROC`` (same scoring) is recorded instead.
* MAPIE (PyPI): ``mapie.metrics.uncertainty.auroc(correctness, confidence)`` (sklearn's
  ``roc_auc_score``), called as released; it raises on a single class, recorded as its message.
  Its ``auarc`` is checked against the ``mapie`` convention by tests/test_metrics_conventions.py.

Ties: every fd-shifts metric here, scikit-learn's ROC and precision-recall curves and
torchmetrics' ROC group tied scores into one threshold, so their values do not depend on the
order of tied rows (no ``order`` is recorded, unlike the risk-coverage golden file).
Confidence = -uncertainty throughout: the file stores ``uncertainty``.
"""

from __future__ import annotations

import json
import platform
import sys
from importlib.metadata import version
from pathlib import Path

import numpy as np
import sklearn.metrics as skm
import torch
from mapie.metrics.uncertainty import auroc as mapie_auroc
from scipy.spatial import ConvexHull
from torch_uncertainty.metrics.classification import FPR95
from torchmetrics.classification import BinaryAUROC

OUT = Path(__file__).resolve().parents[2] / "tests" / "data" / "metric_failure_golden.json"
SEED = 20261206


# ============================================================================================
# fd-shifts (re-typed; see the header for repository, paths and commits)
# ============================================================================================
def failauc(correct, confids):
    fpr, tpr, _ = skm.roc_curve(correct, confids)
    return skm.auc(fpr, tpr)


def fpr_at_95_tpr(correct, confids):
    fpr, tpr, _ = skm.roc_curve(correct, confids)
    return np.min(fpr[np.argwhere(tpr >= 0.9495)])


def failap_suc(correct, confids):
    return skm.average_precision_score(correct, confids, pos_label=1)


def failap_err(correct, confids):
    return skm.average_precision_score(correct, -confids, pos_label=0)


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
    for i in range(n - 1):
        cov -= 1
        selective_risk_norm -= 1
        error_sum -= residuals[i]
        if confidence[i] != confidence[i + 1]:
            coverages.append(cov / n)
            risks.append(error_sum / selective_risk_norm)
    coverages.append(0)
    risks.append(risks[-1])
    return {"coverages": np.array(coverages), "risks": np.array(risks)}


def generalized_risk_stats(*, confids, residuals, idx_sorted_confids=None):
    n = len(residuals)
    idx_sorted = np.argsort(confids) if idx_sorted_confids is None else idx_sorted_confids
    residuals = residuals[idx_sorted]
    confidence = confids[idx_sorted]
    cov = n
    error_sum = sum(residuals)
    coverages = [1.0]
    risks = [error_sum / n]
    for i in range(n - 1):
        cov -= 1
        error_sum -= residuals[i]
        risk = error_sum / n
        if confidence[i] != confidence[i + 1]:
            coverages.append(cov / n)
            risks.append(risk)
    coverages.append(0)
    risks.append(0)
    return {"coverages": np.array(coverages), "risks": np.array(risks)}


def selective_risk_ba_stats(*, confids, residuals, labels=None, idx_sorted_confids=None):
    unique_labels, class_coverages = np.unique(labels, return_counts=True)
    label_to_idx = {lab: idx for idx, lab in enumerate(unique_labels)}
    n = len(confids)
    cov = n
    coverages = [1.0]
    idx_sorted = np.argsort(confids) if idx_sorted_confids is None else idx_sorted_confids
    residuals = residuals[idx_sorted]
    confids = confids[idx_sorted]
    labels = labels[idx_sorted]
    error_sum = np.array([sum(residuals[labels == c]) for c in unique_labels])
    risks = [np.mean(error_sum / class_coverages)]
    for i in range(n - 1):
        c = label_to_idx[labels[i]]
        cov -= 1
        class_coverages[c] -= 1
        error_sum[c] -= residuals[i]
        if confids[i] != confids[i + 1]:
            selective_recalls = np.divide(
                error_sum,
                class_coverages,
                out=np.zeros_like(error_sum, dtype=float),
                where=class_coverages != 0,
            )
            coverages.append(cov / n)
            risks.append(np.mean(selective_recalls))
    coverages.append(0)
    risks.append(risks[-1])
    return {"coverages": np.array(coverages), "risks": np.array(risks)}


def generalized_risk_ba_stats(*, confids, residuals, labels=None, idx_sorted_confids=None):
    unique_labels, class_coverages = np.unique(labels, return_counts=True)
    label_to_idx = {lab: idx for idx, lab in enumerate(unique_labels)}
    num_classes = len(unique_labels)
    n = len(confids)
    weights = np.array([n / (num_classes * class_coverages[label_to_idx[lab]]) for lab in labels])
    assert np.isclose(np.sum(weights), n)
    residuals = residuals * weights
    return generalized_risk_stats(
        confids=confids, residuals=residuals, idx_sorted_confids=idx_sorted_confids
    )


class RiskCoverageStats:
    AUC_DISPLAY_SCALE = 1  # fd-shifts' tests' setting (its default 1000 is a display factor)

    def __init__(self, confids, residuals, labels=None):
        self.confids = confids
        self.residuals = residuals
        self.labels = labels
        self.n = len(residuals)
        self.is_binary = np.all(np.logical_or(self.residuals == 0, self.residuals == 1))

    def get_curve_stats(self, *, risk):
        stats = {
            "selective-risk": selective_risk_stats,
            "generalized-risk": generalized_risk_stats,
            "selective-risk-ba": selective_risk_ba_stats,
            "generalized-risk-ba": generalized_risk_ba_stats,
        }[risk]
        kwargs = {"labels": self.labels} if risk.endswith("-ba") else {}
        return stats(
            confids=self.confids,
            residuals=self.residuals,
            idx_sorted_confids=np.argsort(self.confids),
            **kwargs,
        )

    @property
    def coverages(self):
        return self.get_curve_stats(risk="generalized-risk")["coverages"]

    @property
    def dominant_point_mask(self):
        num_rc_points = len(self.coverages)
        if sum(self.residuals) in (0, self.n):
            indices = np.array([-1])
        else:
            fpr, tpr, _ = skm.roc_curve(1 - self.residuals, self.confids, drop_intermediate=False)
            if num_rc_points == 2:
                return np.array([True, False])
            fpr = np.concatenate((fpr, [2.0]))
            tpr = np.concatenate((tpr, [-1.0]))
            hull = ConvexHull(np.concatenate((fpr.reshape(-1, 1), tpr.reshape(-1, 1)), axis=1))
            indices = hull.vertices
            indices = indices[(indices != 0) & (indices != num_rc_points)]
        mask = np.zeros(num_rc_points, dtype=bool)
        mask[indices] = True
        return mask[::-1]

    def evaluate_auc(self, *, risk, achievable=False, interpolation="linear"):
        curve_stats = self.get_curve_stats(risk=risk)
        coverages = curve_stats["coverages"]
        risks = curve_stats["risks"]
        if achievable:
            risks = risks[self.dominant_point_mask]
            coverages = coverages[self.dominant_point_mask]
        if interpolation == "linear" or "generalized" in risk:
            return -np.trapezoid(risks, coverages) * self.AUC_DISPLAY_SCALE
        if coverages[-1] == 0:
            coverages = coverages[:-1]
            risks = risks[:-1]
        n = self.n
        lower_lim = 0
        cov = coverages * n
        error_sum = risks * cov
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
        aurc += error_sum[-1] * (1 - lower_lim)
        return aurc / n * self.AUC_DISPLAY_SCALE

    @property
    def aurc_achievable(self):
        return self.evaluate_auc(risk="selective-risk", achievable=True, interpolation="non-linear")

    @property
    def aurc_ba(self):
        return self.evaluate_auc(risk="selective-risk-ba")

    @property
    def augrc_ba(self):
        return self.evaluate_auc(risk="generalized-risk-ba")


# ============================================================================================
# torch-uncertainty (PyPI, as released)
# ============================================================================================
def torchmetrics_auroc(correct, confids):
    metric = BinaryAUROC()
    metric.update(torch.as_tensor(confids), torch.as_tensor(correct))
    return float(metric.compute())


def torch_uncertainty_fpr95(correct, confids):
    metric = FPR95(pos_label=1)
    metric.update(torch.as_tensor(confids), torch.as_tensor(correct.astype(np.int64)))
    return float(metric.compute())


# ============================================================================================
# The cases
# ============================================================================================
def _maybe(fn):
    """The library's value, or the text of its exception (the tests expect rejectopt to refuse)."""
    try:
        value = float(fn())
    except Exception as error:  # noqa: BLE001 -- any refusal is recorded, not hidden
        return {"error": f"{type(error).__name__}: {error}"}
    return None if np.isnan(value) else value


def library_values(uncertainty, loss, y_true, y_pred):
    confids = -uncertainty
    correct = (loss == 0).astype(np.int64)
    residuals = loss.astype(np.int64)
    stats = RiskCoverageStats(confids, residuals, labels=y_true)
    return {
        "fd-shifts": {
            "failauc": _maybe(lambda: failauc(correct, confids)),
            "fpr@95tpr": _maybe(lambda: fpr_at_95_tpr(correct, confids)),
            "failap_suc": _maybe(lambda: failap_suc(correct, confids)),
            "failap_err": _maybe(lambda: failap_err(correct, confids)),
            "aurc_achievable": _maybe(lambda: stats.aurc_achievable),
            "aurc_ba": _maybe(lambda: stats.aurc_ba),
            "augrc_ba": _maybe(lambda: stats.augrc_ba),
        },
        "torch-uncertainty": {"FPR95": _maybe(lambda: torch_uncertainty_fpr95(correct, confids))},
        "torchmetrics": {"BinaryAUROC": _maybe(lambda: torchmetrics_auroc(correct, confids))},
        "mapie": {"auroc": _maybe(lambda: mapie_auroc(correct, confids))},
    }


def labelled_case(rng, n, n_classes, accuracy, n_levels=None):
    """A multiclass case: labels, predictions right with probability ``accuracy``, scores."""
    y_true = rng.integers(0, n_classes, n)
    wrong = rng.random(n) > accuracy
    y_pred = np.where(wrong, (y_true + rng.integers(1, n_classes, n)) % n_classes, y_true)
    signal = wrong + rng.normal(0, 0.8, n)
    uncertainty = np.round(signal * n_levels) / n_levels if n_levels else signal
    return y_true, y_pred, uncertainty


def cases(rng):
    """``(case_id, y_true, y_pred, uncertainty)``: random, tied, even steps, all right, all wrong."""
    out = [
        ("binary_distinct", *labelled_case(rng, 200, 2, 0.8)),
        ("multiclass_distinct", *labelled_case(rng, 300, 5, 0.7)),
        ("multiclass_ties", *labelled_case(rng, 300, 4, 0.75, n_levels=3)),
        ("heavy_ties", *labelled_case(rng, 120, 3, 0.6, n_levels=1)),
        ("imbalanced", *labelled_case(rng, 400, 3, 0.95)),
    ]
    # Each score ties one success with one error: the ROC points are evenly spaced on the
    # diagonal and sklearn's drop_intermediate keeps only the ends (fd-shifts' FPR: 1, not 0.95).
    y_true = np.zeros(40, dtype=np.int64)
    y_pred = np.tile([0, 1], 20)
    out.append(("even_steps", y_true, y_pred, np.repeat(np.arange(20.0), 2)))
    # The 95 % threshold falls inside a tie group of successes and errors.
    y_true = np.r_[np.zeros(30), np.ones(30)].astype(np.int64)
    y_pred = y_true.copy()
    y_pred[[3, 7, 40, 41, 55]] = 1 - y_pred[[3, 7, 40, 41, 55]]
    uncertainty = np.r_[np.linspace(0, 1, 50), np.full(10, 1.0)]
    out.append(("tie_at_threshold", y_true, y_pred, uncertainty))
    y_true = rng.integers(0, 3, 30)
    out.append(("all_correct", y_true, y_true.copy(), rng.normal(size=30)))
    out.append(("all_wrong", y_true, (y_true + 1) % 3, rng.normal(size=30)))
    out.append(("one_score", y_true, np.where(np.arange(30) % 4 == 0, 0, y_true), np.zeros(30)))
    return out


def main():
    rng = np.random.default_rng(SEED)
    torch.set_default_dtype(torch.float64)
    records = []
    for case_id, y_true, y_pred, uncertainty in cases(rng):
        loss = (y_true != y_pred).astype(np.float64)
        records.append(
            {
                "id": case_id,
                "y_true": y_true.tolist(),
                "y_pred": y_pred.tolist(),
                "uncertainty": uncertainty.tolist(),
                "values": library_values(uncertainty, loss, y_true, y_pred),
            }
        )
    provenance = {
        "script": "benchmarks/golden/make_failure_golden.py",
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "versions": {
            name: version(name)
            for name in (
                "numpy",
                "scipy",
                "scikit-learn",
                "torch",
                "torchmetrics",
                "torch-uncertainty",
                "mapie",
            )
        },
        "fd-shifts": {
            "metrics.py": "1336e7ce125b7e9cfb3d61a3574adc556d97da21",
            "rc_stats_utils.py": "8ac4f6dbb5dd4bc3cb3a9756758f4ee31fd5aa5d",
            "rc_stats.py": "56276af1d8d2ebcfe94c85bf06ad68c079169833",
        },
    }
    OUT.write_text(json.dumps({"provenance": provenance, "cases": records}, indent=1) + "\n")
    print(f"wrote {OUT} ({len(records)} cases)")


if __name__ == "__main__":
    main()
