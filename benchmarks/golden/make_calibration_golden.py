"""Golden values of the calibration metrics and of probly's AURC, made by the libraries' own code.

Writes ``tests/data/metric_calibration_golden.json``, read by ``tests/test_metrics_calibration.py``
and ``tests/test_metrics_conventions.py`` (probly). It imports nothing of rejectopt.

Run it in scratch virtualenvs, never in the project's environment (none of these is a
dependency of rejectopt)::

    python3 -m venv /tmp/golden-h7-venv                      # Python 3.11
    /tmp/golden-h7-venv/bin/pip install torch-uncertainty==0.13.0 torchmetrics scikit-learn
    python3.12 -m venv /tmp/golden-h7-probly                 # probly 0.9.1 needs Python >= 3.12
    /tmp/golden-h7-probly/bin/pip install numpy && /tmp/golden-h7-probly/bin/pip install --no-deps probly==0.9.1
    PROBLY_PYTHON=/tmp/golden-h7-probly/bin/python /tmp/golden-h7-venv/bin/python \
        benchmarks/golden/make_calibration_golden.py

Provenance (also written into the output file, with the versions actually imported):

* torch-uncertainty 0.13.0 / torchmetrics (PyPI): ECE and MCE by torchmetrics' ``_ce_compute``
  (what torch-uncertainty's ``CalibrationError`` computes; ``norm="l1"`` / ``"max"``), the
  adaptive ECE by torch-uncertainty's ``_ace_compute``, the Brier score and NLL by its
  ``BrierScore`` and ``CategoricalNLL`` metrics, all called as released on float64 tensors
  (their ``update`` casts confidences to float32; the arithmetic is the same). The Brier and
  NLL means are kept as the metrics return them with ``reduction="mean"``, whose running sum is
  a float32 state (so ~1e-7 from the float64 mean), and their per-row terms with
  ``reduction="none"`` (float64, exact).
* fd-shifts is not on PyPI: ``StatsCache.calibration_stats``, ``expected_calibration_error`` and
  ``maximum_calibration_error`` re-typed below, unchanged, from IML-DKFZ/fd-shifts,
  fd_shifts/analysis/metrics.py @ 1336e7ce125b7e9cfb3d61a3574adc556d97da21 (scikit-learn's
  ``label_binarize`` and ``column_or_1d`` as it calls them).
* probly 0.9.1 (PyPI): ``probly.evaluation.tasks.selective_prediction`` (its AURC, ``n_bins=50``),
  run in its own Python 3.12 environment (``PROBLY_PYTHON``), the released file
  ``probly/evaluation/tasks.py`` loaded by path (the package's ``__init__`` imports optional
  dependencies this function does not use). Its sort is NumPy's default
  ``argsort`` reversed, which is not stable: for the cases with tied uncertainties the file
  records ``order = argsort(u)`` as computed in probly's environment; fed in that order,
  rejectopt's stable sort, reversed, processes the rows in probly's sequence.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import numpy as np
import torch
from sklearn import preprocessing as skp
from sklearn import utils as sku
from torch_uncertainty.metrics.classification import BrierScore, CategoricalNLL
from torch_uncertainty.metrics.classification.calibration.adaptive_calibration_error import (
    _ace_compute,
)
from torchmetrics.functional.classification.calibration_error import _ce_compute

OUT = Path(__file__).resolve().parents[2] / "tests" / "data" / "metric_calibration_golden.json"
SEED = 20261206


# fd-shifts (re-typed; see the header)
def fd_calibration_stats(confids, correct, n_bins):
    calib_confids = np.clip(confids, 0, 1)
    y_true = sku.column_or_1d(correct)
    y_prob = sku.column_or_1d(calib_confids)
    labels = np.unique(y_true)
    y_true = skp.label_binarize(y_true, classes=labels)[:, 0]
    bins = np.linspace(0.0, 1.0 + 1e-8, n_bins + 1)
    binids = np.digitize(y_prob, bins) - 1
    bin_sums = np.bincount(binids, weights=y_prob, minlength=len(bins))
    bin_true = np.bincount(binids, weights=y_true, minlength=len(bins))
    bin_total = np.bincount(binids, minlength=len(bins))
    nonzero = bin_total != 0
    prob_true = bin_true[nonzero] / bin_total[nonzero]
    prob_pred = bin_sums[nonzero] / bin_total[nonzero]
    prob_total = bin_total[nonzero] / bin_total.sum()
    return prob_total, prob_true, prob_pred


def fd_ece_mce(confids, correct, n_bins):
    prob_total, prob_true, prob_pred = fd_calibration_stats(confids, correct, n_bins)
    discrepancies = np.abs(prob_true - prob_pred)
    return float(np.dot(discrepancies, prob_total)), float(discrepancies.max())


def softmax_rows(rng, n, k, sharp):
    logits = rng.normal(size=(n, k)) * sharp
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def cases():
    rng = np.random.default_rng(SEED)
    p = softmax_rows(rng, 400, 5, 2.0)
    yield "random", p, rng.integers(0, 5, 400)
    p2 = softmax_rows(rng, 237, 3, 1.0)
    yield "random_odd_n", p2, np.where(rng.random(237) < 0.7, p2.argmax(1), rng.integers(0, 3, 237))
    # confidences on bin edges (0.5, 0.75, 1.0) and tied confidences with mixed correctness
    edge = np.array(
        [
            [1.0, 0.0],
            [0.5, 0.5],
            [0.75, 0.25],
            [0.25, 0.75],
            [0.5, 0.5],
            [0.75, 0.25],
            [0.0, 1.0],
            [0.6, 0.4],
            [0.6, 0.4],
            [0.6, 0.4],
        ]
    )
    yield "edges_and_ties", edge, np.array([0, 1, 0, 0, 0, 1, 1, 0, 1, 0])
    yield "all_correct", p[:50], p[:50].argmax(1)
    yield "all_wrong", p[:50], (p[:50].argmax(1) + 1) % 5


def torch_values(p, y, n_bins):
    t = torch.as_tensor(p, dtype=torch.float64)
    target = torch.as_tensor(y, dtype=torch.long)
    confidence, predicted = t.max(dim=1)
    correct = predicted.eq(target).to(torch.float64)
    out = {
        "ece": float(_ce_compute(confidence, correct, n_bins, norm="l1")),
        "mce": float(_ce_compute(confidence, correct, n_bins, norm="max")),
    }
    if p.shape[0] >= n_bins:
        out["adaptive_ece"] = float(_ace_compute(confidence, correct, n_bins, norm="l1"))
    for key, make in (
        ("brier", lambda r: BrierScore(num_classes=p.shape[1], reduction=r)),
        ("nll", lambda r: CategoricalNLL(reduction=r)),
    ):
        metric = make("mean")  # its running sum is a float32 state
        metric.update(t, target)
        out[key] = float(metric.compute())
        metric = make("none")  # the per-row terms, in the input's float64
        metric.update(t, target)
        out[key + "_terms"] = metric.compute().tolist()
    return out


PROBLY_CODE = """
import importlib.util, json, sys
import numpy as np
# probly's package __init__ pulls optional dependencies; its tasks module needs NumPy only
spec = importlib.util.find_spec("probly")
path = spec.submodule_search_locations[0] + "/evaluation/tasks.py"
tasks_spec = importlib.util.spec_from_file_location("probly_tasks", path)
tasks = importlib.util.module_from_spec(tasks_spec)
tasks_spec.loader.exec_module(tasks)
selective_prediction = tasks.selective_prediction
data = json.load(sys.stdin)
print(json.dumps([
    {"aurc": selective_prediction(np.array(c["u"]), np.array(c["l"]), n_bins=50)[0],
     "order": np.argsort(np.array(c["u"])).tolist()}  # the same sort probly's function runs
    for c in data
]))
"""


def probly_cases():
    rng = np.random.default_rng(SEED + 1)
    out = []
    for n in (50, 173, 400):
        u = rng.permutation(n).astype(float) + rng.random(n) * 0.5
        out.append(
            {
                "name": f"binary_{n}",
                "l": (rng.random(n) < 0.3).astype(float).tolist(),
                "u": u.tolist(),
            }
        )
    u = rng.random(251)
    out.append({"name": "graded_251", "l": rng.exponential(size=251).tolist(), "u": u.tolist()})
    out.append({"name": "all_zero_60", "l": [0.0] * 60, "u": rng.random(60).tolist()})
    out.append({"name": "all_one_60", "l": [1.0] * 60, "u": rng.random(60).tolist()})
    for n in (64, 300):  # ties: uncertainties on a coarse grid
        out.append(
            {
                "name": f"tied_{n}",
                "l": rng.choice([0.0, 0.5, 1.0], n).tolist(),
                "u": np.round(rng.random(n), 1).tolist(),
            }
        )
    python = os.environ["PROBLY_PYTHON"]
    done = subprocess.run(
        [python, "-c", PROBLY_CODE],
        input=json.dumps(out),
        capture_output=True,
        text=True,
        check=True,
    )
    values = json.loads(done.stdout)
    probly_version = subprocess.run(
        [python, "-c", "from importlib.metadata import version; print(version('probly'))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    for case, value in zip(out, values):
        case["aurc"] = value["aurc"]
        if len(set(case["u"])) < len(case["u"]):  # its processing order is this order reversed
            case["order"] = value["order"]
    return out, probly_version


def main():
    records = []
    for name, p, y in cases():
        confids, correct = p.max(axis=1), (p.argmax(axis=1) == y).astype(int)
        by_bins = {}
        for n_bins in (15, 10, 2):
            fd_ece, fd_mce = fd_ece_mce(confids, correct, n_bins)
            by_bins[str(n_bins)] = {
                "torch-uncertainty": torch_values(p, y, n_bins),
                "fd-shifts": {"ece": fd_ece, "mce": fd_mce},
            }
        records.append(
            {"case": name, "probabilities": p.tolist(), "y_true": y.tolist(), "n_bins": by_bins}
        )
    probly, probly_version = probly_cases()
    doc = {
        "provenance": __doc__,
        "versions": {
            "python": sys.version.split()[0],
            "platform": platform.platform(),
            "numpy": np.__version__,
            "torch": torch.__version__,
            "torch-uncertainty": version("torch-uncertainty"),
            "torchmetrics": version("torchmetrics"),
            "scikit-learn": version("scikit-learn"),
            "probly": probly_version,
        },
        "calibration": records,
        "probly": probly,
    }
    OUT.write_text(json.dumps(doc, indent=1) + "\n")


if __name__ == "__main__":
    main()
