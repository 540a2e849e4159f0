"""The audit trail of a certified fit: what the procedure tested, in order, at which level, and why it stopped.

Each trail row's p-value (or bound) is recomputed here from the rows and scipy alone, the levels
are summed where the method splits delta, and the selection is the trail's last rejected cut, on
several populations whose risk falls with the score, stays flat, or is graded.
"""

from __future__ import annotations

import json
import math
import pickle

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from rejectopt import cli
from rejectopt._certify import (
    AUDIT_COLUMNS,
    MIN_START_ROWS,
    START_FRACTION,
    certified_from_dict,
    fit_certified_coverage,
    fit_certified_risk,
    fit_certified_tpr_fpr,
)
from rejectopt.selective import InfeasibleTargetError
from rejectopt.targets import AuditTrail, Target

#: Relative tolerance of a recomputed p-value or bound: the library's betainc / beta quantile and
#: scipy.stats' binom / beta agree to rounding, not bit for bit.
RTOL = 1e-7


def _population(kind, n, seed):
    """Scores and 0/100 (or graded 0..100) losses whose error rate rises with the score ("falling"
    risk below a cut), stays flat, or is graded (losses in [0, 100], not all 0 or 100)."""
    rng = np.random.default_rng(seed)
    s = rng.random(n)
    if kind == "falling":
        return 100.0 * (rng.random(n) < 0.3 * s), s
    if kind == "flat":
        return 100.0 * (rng.random(n) < 0.04), s
    if kind == "graded":
        return np.round(100.0 * rng.random(n) * s * 0.4, 1), s
    if kind == "cubic":  # a low risk that rises late: a run can pass every cut up to the full set
        return 100.0 * (rng.random(n) < 0.1 * s**3), s
    if kind == "ties":  # few distinct scores: cuts accept tied rows together
        s = np.round(s * 20) / 20
        return 100.0 * (rng.random(n) < 0.3 * s), s
    raise AssertionError(kind)


def _tested_rows(n, random_state=0, start_fraction=START_FRACTION):
    """Learn-then-Test's tested rows, from the documented split: a seeded permutation, the first
    round(start_fraction * n) rows (none below MIN_START_ROWS) hold out to choose the start."""
    n_start = int(round(start_fraction * n))
    n_start = n_start if n_start >= MIN_START_ROWS else 0
    return np.random.default_rng(random_state).permutation(n)[n_start:]


def _accepts(row, s):
    """The rows a trail row's cut accepts, from its selection function (deterministic cuts)."""
    return (s < row.threshold) | ((s == row.threshold) & (row.accept_prob == 1.0))


def _assert_stops_at_the_selection(selection):
    """The certified cut is the trail's last rejected test, as a selection function."""
    stop = selection.audit.stop
    assert stop is not None
    assert (stop.threshold, stop.accept_prob) == (selection.threshold, selection.accept_prob)
    assert not any(row.rejected for row in selection.audit.rows[stop.step :]), (
        "a rejection after the stop"
    )


@pytest.mark.parametrize(
    ("kind", "n", "target", "seed"),
    [
        ("falling", 1500, 12.0, 1500),  # a fixed-sequence run that breaks
        ("falling", 3000, 8.0, 3000),
        ("falling", 150, 25.0, 150),  # no start rows: the full set alone, on every row
        ("flat", 400, 12.0, 400),  # the full set's own test rejects
        ("ties", 1500, 12.0, 1500),  # 21 distinct scores: tied rows enter a cut together
        ("graded", 400, 12.0, 400),  # Hoeffding-Bentkus, a run that breaks
        ("graded", 1500, 12.0, 1500),
        ("cubic", 1000, 4.0, 3),  # a run that rejects every cut up to the full set
    ],
)
def test_ltt_trail_recomputes_and_stops_at_the_selection(kind, n, target, seed):
    loss, s = _population(kind, n, seed=seed)
    confidence = 0.9
    delta = 1 - confidence
    # tail="hb": the graded rows' p-values are recomputed as Hoeffding-Bentkus below (the
    # betting tail, which "auto" may choose, has its own tests in test_certify_tails.py)
    selection = fit_certified_risk(loss, s, target, confidence, loss_bound=100.0, tail="hb")
    audit = selection.audit
    assert isinstance(audit, AuditTrail) and audit.method == "ltt"
    _assert_stops_at_the_selection(selection)
    tested = _tested_rows(n)
    loss_t, s_t = loss[tested], s[tested]
    binary = np.isin(loss, (0.0, 100.0)).all()
    rows = audit.rows
    assert rows[0].stage == "full set" and math.isinf(rows[0].threshold)
    for row in rows:
        accepted = _accepts(row, s_t)
        m, mean = int(accepted.sum()), loss_t[accepted].mean() / 100
        rate = target / 100
        if binary:
            pvalue = stats.binom.cdf(round(mean * m), m, rate)
        else:  # Hoeffding-Bentkus (Bates et al. 2021, Prop. 3), written out
            a = min(mean, rate)
            h = a * math.log(a / rate) + (1 - a) * math.log((1 - a) / (1 - rate))
            pvalue = min(math.exp(-m * h), math.e * stats.binom.cdf(math.ceil(m * mean), m, rate))
        assert (row.accepted, row.coverage) == (m, m / tested.size)
        assert row.risk == pytest.approx(100 * mean, rel=1e-12)
        assert row.pvalue == pytest.approx(min(pvalue, 1.0), rel=RTOL, abs=1e-300)
        assert row.rejected == (row.pvalue <= row.level)
        assert math.isnan(row.bound)
    chain = [row for row in rows if row.stage == "fixed sequence"]
    # the run tests nested cuts upwards, rejects all but possibly its last, at one shared level
    assert [row.accepted for row in chain] == sorted({row.accepted for row in chain})
    assert all(row.rejected for row in chain[:-1])
    if chain and chain[-1].rejected:  # the run reached the full set
        assert math.isinf(chain[-1].threshold) and "all cuts" in audit.reason
    assert len({row.level for row in chain}) <= 1
    # delta is split between the full set's test and the run: the two levels sum to delta
    spent = rows[0].level + (chain[0].level if chain else 0.0)
    assert spent <= delta * (1 + 1e-12) and audit.spent == pytest.approx(spent, rel=1e-15)
    if chain:  # both tests made: all of delta spent (a full set that rejects stops before the run)
        assert audit.spent == pytest.approx(delta, rel=1e-12)


@pytest.mark.parametrize(
    ("kind", "n", "target"),
    [
        ("falling", 400, 12.0),  # the last step fails: the stop is an earlier step
        ("falling", 3000, 12.0),
        ("falling", 150, 25.0),
        ("flat", 400, 8.0),
        ("ties", 400, 8.0),
        ("ties", 3000, 12.0),
    ],
)
def test_sgr_trail_recomputes_and_stops_at_the_selection(kind, n, target):
    loss, s = _population(kind, n, seed=n + 1)
    confidence = 0.9
    selection = fit_certified_risk(loss, s, target, confidence, method="sgr")
    audit = selection.audit
    _assert_stops_at_the_selection(selection)
    rows = audit.rows
    steps = max(1, math.ceil(math.log2(n)))
    assert len(rows) == steps  # the search makes all its steps
    for row in rows:
        accepted = s <= row.threshold
        m, e = int(accepted.sum()), int((loss[accepted] > 0).sum())
        bound = 1.0 if e >= m else stats.beta.ppf(1 - row.level, e + 1, m - e)
        assert (row.accepted, row.accept_prob, row.stage) == (m, 1.0, "binary search")
        assert row.bound == pytest.approx(100 * bound, rel=RTOL)
        assert row.pvalue == pytest.approx(stats.binom.cdf(e, m, target / 100), rel=RTOL)
        assert row.rejected == (row.bound < target)
        assert row.level == pytest.approx((1 - confidence) / steps, rel=1e-15)
    for before, after in zip(rows, rows[1:]):  # a binary search: up after a pass, down after a fail
        assert (
            after.accepted > before.accepted
        ) == before.rejected or after.accepted == before.accepted
    # Bonferroni over the steps: the levels sum to delta
    assert sum(row.level for row in rows) <= (1 - confidence) * (1 + 1e-12)
    assert audit.spent == pytest.approx(1 - confidence, rel=1e-12)
    assert selection.risk_bound == pytest.approx(audit.stop.bound, rel=1e-12)
    assert f"iteration {audit.stop.step} " in audit.reason


@pytest.mark.parametrize("kind", ["falling", "ties"])
@pytest.mark.parametrize(("n", "w"), [(100, 0.5), (1000, 0.8), (50, 0.999), (300, 0.001)])
def test_coverage_trail_recomputes_and_stops_at_the_selection(kind, n, w):
    loss, s = _population(kind, n, seed=7)
    delta = 0.1
    selection = fit_certified_coverage(loss, s, w, 1 - delta)
    audit = selection.audit
    _assert_stops_at_the_selection(selection)
    ranks = np.arange(1, n + 1)
    pvalues = stats.binom.sf(ranks - 1, n, w)  # P(Binomial(n, w) >= rank)
    k = int(ranks[pvalues <= delta][0]) if (pvalues <= delta).any() else n + 1
    s_sorted = np.sort(s)
    expected = ([math.inf] if k > n else []) + [
        float(s_sorted[r - 1]) for r in (k, k - 1) if 1 <= r <= n
    ]
    assert [row.threshold for row in audit.rows] == expected
    for row in audit.rows:
        accepted = _accepts(row, s)
        assert row.accepted == accepted.sum() and row.level == pytest.approx(delta, rel=1e-15)
        assert row.risk == pytest.approx(loss[accepted].mean(), rel=1e-12)
        if math.isinf(row.threshold):
            assert (row.pvalue, row.rejected) == (0.0, True)  # coverage 1 >= w in any population
            continue
        rank = int(np.searchsorted(s_sorted, row.threshold)) + 1 if kind != "ties" else None
        if rank is not None:
            assert row.pvalue == pytest.approx(pvalues[rank - 1], rel=RTOL)
        assert row.rejected == (row.pvalue <= delta)
    assert audit.spent == pytest.approx(
        delta, rel=1e-15
    )  # one level: the rank depends on n, w and delta alone


@pytest.mark.parametrize(("n", "tpr", "fpr"), [(600, 0.8, 0.5), (200, 0.95, 0.9), (60, 0.999, 1.0)])
def test_tpr_fpr_trail_recomputes_and_stops_at_the_selection(n, tpr, fpr):
    """The ID rows' order statistic at delta / 2, then the FPR's Clopper-Pearson test at delta / 2."""
    rng = np.random.default_rng(n)
    is_ood = rng.random(n) < 0.3
    s = rng.random(n) + 0.5 * is_ood  # OOD rows score higher
    delta = 0.1
    selection = fit_certified_tpr_fpr(np.zeros(n), is_ood, s, tpr, fpr, 1 - delta)
    audit = selection.audit
    _assert_stops_at_the_selection(selection)
    *ranks, last = audit.rows
    s_id, n_id, n_ood = np.sort(s[~is_ood]), int((~is_ood).sum()), int(is_ood.sum())
    for row in ranks:
        assert row.stage == "order statistic" and row.level == pytest.approx(delta / 2, rel=1e-15)
        if math.isfinite(row.threshold):
            rank = int(np.searchsorted(s_id, row.threshold)) + 1
            assert row.pvalue == pytest.approx(stats.binom.sf(rank - 1, n_id, tpr), rel=RTOL)
        assert row.rejected == (row.pvalue <= delta / 2)
    accepted = int(_accepts(last, s[is_ood]).sum())
    assert (last.stage, last.accepted, last.coverage) == ("fpr bound", accepted, accepted / n_ood)
    bound = (
        1.0 if accepted >= n_ood else stats.beta.ppf(1 - delta / 2, accepted + 1, n_ood - accepted)
    )
    assert last.bound == pytest.approx(bound, rel=RTOL) == pytest.approx(selection.bound, rel=1e-12)
    assert last.pvalue == pytest.approx(stats.binom.cdf(accepted, n_ood, fpr), rel=RTOL)
    # the union bound: delta / 2 for the TPR's order statistic, delta / 2 for the FPR's test
    assert audit.spent == pytest.approx(delta, rel=1e-12) and audit.spent <= delta * (1 + 1e-12)


def test_tpr_fpr_trails_of_an_unmet_fpr_and_of_tpr_zero():
    rng = np.random.default_rng(5)
    is_ood = rng.random(400) < 0.5
    s = rng.random(400)  # OOD rows score like ID rows: the FPR follows the TPR
    with pytest.raises(InfeasibleTargetError) as caught:
        fit_certified_tpr_fpr(np.zeros(400), is_ood, s, 0.9, 0.1, 0.9)
    audit = caught.value.audit
    assert not audit.certified and audit.stop is None and not audit.rows[-1].rejected
    assert audit.rows[-1].bound == pytest.approx(caught.value.best_bound, rel=1e-12)
    nothing = fit_certified_tpr_fpr(np.zeros(400), is_ood, s, 0.0, 0.1, 0.9)
    _assert_stops_at_the_selection(nothing)
    assert (len(nothing.audit), nothing.audit.spent) == (1, 0.0)


def test_infeasible_targets_carry_the_trail_that_failed():
    loss, s = _population("falling", 300, seed=3)
    for method, reason in (("ltt", "not rejected"), ("sgr", "no step")):
        with pytest.raises(InfeasibleTargetError) as caught:
            fit_certified_risk(loss, s, 1.0, 0.9, method=method)
        audit = caught.value.audit
        assert audit.stop is None and not any(row.rejected for row in audit.rows)
        assert reason in audit.reason


def test_the_trail_is_frozen_json_able_and_outside_equality():
    loss, s = _population("falling", 1500, seed=4)
    selection = Target("risk", 12, confidence=0.9).fit(loss, s)
    audit = selection.audit
    with pytest.raises(AttributeError):
        audit.reason = "x"
    with pytest.raises(ValueError):
        audit.columns["pvalue"][0] = 0.0
    records = json.loads(json.dumps(audit.to_records(), allow_nan=False))
    assert [list(r) for r in records] == [list(AUDIT_COLUMNS)] * len(audit)
    assert [r["step"] for r in records] == list(range(1, len(audit) + 1))
    read_back = certified_from_dict(selection.to_dict(), selection.certificate)
    assert read_back == selection and read_back.audit is None
    assert "audit" not in repr(selection) and "audit" not in selection.certificate
    assert pickle.loads(pickle.dumps(selection)).audit.reason == audit.reason
    assert selection.audit.summary().startswith(f"{len(audit)} cuts tested (method ltt)")


def test_select_writes_the_trail_to_report_json_and_its_summary_to_report_md(tmp_path):
    """A certified risk target on 2000 rows whose classifier errs on 4 %: the audit's rows in
    report.json, their stop at the selection written to model.json, one sentence in report.md."""
    rng = np.random.default_rng(0)
    n = 2000
    X = rng.normal(size=(n, 3))
    y = (X[:, 0] > 0).astype(int)
    y_pred = np.where(rng.random(n) < 0.04, 1 - y, y)
    table = pd.DataFrame(X, columns=["f0", "f1", "f2"]).assign(y=y, y_pred=y_pred)
    table.to_csv(tmp_path / "rows.csv", index=False)
    out = tmp_path / "sel"
    args = ["select", "--data", str(tmp_path / "rows.csv"), "--target", "risk=12,confidence=0.9"]
    assert cli.main([*args, "--score", "reg", "--C", "0", "--out", str(out), "-q"]) == 0
    report = json.loads((out / "report.json").read_text())
    audit = report["audit"]
    assert audit["method"] == "ltt" and audit["n_tests"] == len(audit["rows"]) >= 1
    stop = audit["rows"][audit["stop_step"] - 1]
    assert stop["rejected"] and not any(r["rejected"] for r in audit["rows"][audit["stop_step"] :])
    assert {"threshold": stop["threshold"], "accept_prob": stop["accept_prob"]} == report[
        "selection"
    ]
    assert json.loads((out / "model.json").read_text())["selection"] == report["selection"]
    assert audit["level_spent"] <= audit["delta"] * (1 + 1e-12)
    markdown = (out / "report.md").read_text()
    assert (
        f"**Audit trail** (`report.json`'s `audit`, one row per test in the order made): {audit['summary']}"
        in markdown
    )
    assert f"{audit['n_tests']} cuts tested (method ltt)" in markdown


def test_select_of_a_tpr_fpr_target_writes_its_trail(tmp_path):
    """300 ID rows below 200 OOD rows on the one feature (test_cli's tpr-fpr table): the trail ends
    with the FPR's test at the TPR's cut, and report.md says where it stopped."""
    n_id, n_ood = 300, 200
    is_ood = np.arange(n_id + n_ood) >= n_id
    y = np.zeros(n_id + n_ood, dtype=int)
    y[n_id - 20 : n_id : 2] = 1
    y[is_ood] = -1
    f0 = np.where(is_ood, 700.0, 0.0) + np.arange(n_id + n_ood)
    table = pd.DataFrame({"f0": f0, "y": y, "y_pred": 0, "is_ood": is_ood.astype(int)})
    table.to_csv(tmp_path / "mixed.csv", index=False)
    out = tmp_path / "sel"
    args = ["select", "--data", str(tmp_path / "mixed.csv"), "--target", "tpr=0.8,fpr=0.3"]
    assert cli.main([*args, "--confidence", "0.9", "--C", "1", "--out", str(out), "-q"]) == 0
    report = json.loads((out / "report.json").read_text())
    audit = report["audit"]
    stop = audit["rows"][audit["stop_step"] - 1]
    assert audit["method"] == "order-statistic+clopper-pearson" and audit["stop_step"] == len(
        audit["rows"]
    )
    assert stop["stage"] == "fpr bound" and stop["rejected"]
    assert stop["bound"] == pytest.approx(report["certificate"]["bound"], rel=1e-12)
    assert {"threshold": stop["threshold"], "accept_prob": stop["accept_prob"]} == report[
        "selection"
    ]
    assert (
        f"**Audit trail** (`report.json`'s `audit`, one row per test in the order made): {audit['summary']}"
        in (out / "report.md").read_text()
    )
