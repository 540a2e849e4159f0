"""compare_scores and bootstrap_ci: the AuRC of a resample computed from its counts, NaN metrics,
memory in blocks, and the paired interval's level at small n."""

import functools
import math
import os
import subprocess
import sys
import textwrap
import tracemalloc

import numpy as np
import pytest

from rejectopt import metrics
from rejectopt.metrics import aurc, bootstrap_ci, compare_scores, eaurc
from rejectopt.metrics._bootstrap import _fast_rows, _ResampledAurc
from rejectopt.metrics._weighted import _aurc_rows, _eaurc_rows


def _tied_case(rng, n):
    """Graded and zero losses; uncertainties rounded to one decimal, so most rows tie with others."""
    loss = np.where(rng.random(n) < 0.4, 0.0, rng.integers(1, 5, n).astype(float))
    return loss, np.round(rng.random(n), 1)


def _weights(rng, n, rows):
    """Multinomial resamples and a few hand-made rows: one row drawn n times, runs of 0 and of many copies."""
    counts = [np.bincount(rng.integers(0, n, n), minlength=n) for _ in range(rows)]
    heavy = np.zeros(n, dtype=np.intp)
    heavy[n // 2] = n
    spread = np.zeros(n, dtype=np.intp)
    spread[::4] = 4
    spread[0] += n - spread.sum()
    return np.array(counts + [heavy, spread, np.ones(n, dtype=np.intp)])


@pytest.mark.parametrize("n", [1, 2, 37, 300])
def test_resampled_aurc_equals_aurc_of_the_repeated_rows(n):
    # the resample written out: each row repeated by its weight, in index order, through aurc itself
    rng = np.random.default_rng(n)
    loss, u = _tied_case(rng, n)
    weights = _weights(rng, n, 20)
    expected = [aurc(loss[rows], u[rows]) for rows in (np.repeat(np.arange(n), w) for w in weights)]
    order = np.argsort(u, kind="stable")
    area = _ResampledAurc(loss[order])
    np.testing.assert_allclose(area(weights[:, order]), expected, rtol=1e-12, atol=1e-12)
    small = weights.max(axis=1) < 256  # the byte counts of the resampling path
    np.testing.assert_allclose(
        area(weights[small][:, order].astype(np.uint8)), np.array(expected)[small], rtol=1e-12
    )
    np.testing.assert_allclose(
        _fast_rows(_aurc_rows, {}, loss, u)(weights), expected, rtol=1e-12, atol=1e-12
    )
    excess = [eaurc(loss[rows], u[rows]) for rows in (np.repeat(np.arange(n), w) for w in weights)]
    np.testing.assert_allclose(
        _fast_rows(_eaurc_rows, {}, loss, u)(weights), excess, rtol=1e-12, atol=1e-12
    )


def test_resampled_aurc_known_answer():
    # losses (0, 1, 0, 1) sorted; row 3 drawn twice, row 0 twice: sorted resample (0, 0, 1, 1)
    area = _ResampledAurc(np.array([0.0, 1.0, 0.0, 1.0]))
    assert area(np.array([[2, 0, 0, 2]], dtype=np.uint8))[0] == pytest.approx(
        (0 + 0 + 1 / 3 + 2 / 4) / 4, abs=1e-15
    )
    assert area(np.array([[1, 1, 1, 1]]))[0] == pytest.approx(
        aurc([0, 1, 0, 1], [1, 2, 3, 4]), abs=1e-15
    )


def test_tie_average_keeps_its_own_rows_function():
    assert _fast_rows(_aurc_rows, {"ties": "average"}, np.ones(3), np.ones(3)) is None
    rng = np.random.default_rng(4)
    loss, a = _tied_case(rng, 80)
    b = np.round(rng.random(80), 1)
    average = functools.partial(aurc, ties="average")
    fast = compare_scores(loss, a, b, metric=average, n_resamples=200, random_state=1)
    slow = compare_scores(
        loss, a, b, metric=lambda loss_, s: average(loss_, s), n_resamples=200, random_state=1
    )
    assert fast.ci == pytest.approx(slow.ci, rel=1e-12) and fast.p_value == slow.p_value
    assert fast.difference == average(loss, a) - average(loss, b)


@pytest.mark.parametrize("metric", ["aurc", "eaurc", "augrc"])
@pytest.mark.parametrize("chunk", [None, 16])
def test_vectorised_equals_the_metric_on_each_resample(monkeypatch, metric, chunk):
    # chunk=16: rows counted chunk by chunk (the path of n > 32768), on 100 rows
    if chunk:
        monkeypatch.setattr(metrics._compare, "_CHUNK", chunk)
    rng = np.random.default_rng(7)
    loss, a = _tied_case(rng, 100)
    b = a + rng.normal(0, 0.3, 100)
    function = metrics.get_metric(metric)
    fast = compare_scores(loss, a, b, metric=metric, n_resamples=150, random_state=2)
    slow = compare_scores(
        loss, a, b, metric=lambda loss_, u: function(loss_, u), n_resamples=150, random_state=2
    )
    assert fast.ci == pytest.approx(slow.ci, rel=1e-11, abs=1e-12) and fast.p_value == slow.p_value
    assert fast.difference == function(loss, a) - function(loss, b)


@pytest.mark.parametrize("chunk", [None, 16])
@pytest.mark.parametrize("metric", ["aurc", "augrc", "custom"])
def test_blocks_of_resamples_give_the_same_result(monkeypatch, metric, chunk):
    if chunk:
        monkeypatch.setattr(metrics._compare, "_CHUNK", chunk)
    metric = (lambda loss_, u: aurc(loss_, u)) if metric == "custom" else metric
    rng = np.random.default_rng(8)
    loss, a = _tied_case(rng, 60)
    b = rng.random(60)
    whole = compare_scores(loss, a, b, metric=metric, n_resamples=90, random_state=4)
    monkeypatch.setattr(
        metrics._compare, "_BOOTSTRAP_BLOCK_ELEMENTS", 60 * 7
    )  # 7 resamples per block
    blocked = compare_scores(loss, a, b, metric=metric, n_resamples=90, random_state=4)
    assert [blocked[f] for f in blocked.keys()] == [whole[f] for f in whole.keys()]


def test_a_custom_metric_is_resampled_in_blocks(monkeypatch):
    # the former path held every resample's rows at once: 100 x 20,000 indices, 16 MB
    monkeypatch.setattr(
        metrics._compare, "_BOOTSTRAP_BLOCK_ELEMENTS", 20_000 * 5
    )  # 5 resamples, 0.8 MB
    rng = np.random.default_rng(9)
    n = 20_000
    loss, a, b = (rng.random(n) < 0.2).astype(float), rng.random(n), rng.random(n)
    tracemalloc.start()
    try:
        compare_scores(loss, a, b, metric=lambda loss_, u: float(loss_[:5].sum()), n_resamples=100)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 4e6  # a block and one resample's rows, whatever n_resamples


def test_a_metric_that_is_nan_on_the_sample_is_refused():
    loss, u = np.array([0.0, 1.0, 0.0, 1.0, 1.0]), np.array([0.1, 0.4, 0.3, 0.9, 0.5])

    def undefined(loss, uncertainty):
        return float("nan")

    with pytest.raises(
        ValueError, match=r"metric 'undefined' returned NaN on the full sample with score a"
    ):
        compare_scores(loss, u, u[::-1], metric=undefined)
    with pytest.raises(ValueError, match=r"metric 'undefined' returned NaN on the full sample"):
        bootstrap_ci(undefined, loss, u)
    half = functools.partial(lambda loss_, s, k: float("nan") if s[0] > 0.35 else 0.0, k=1)
    with pytest.raises(ValueError, match="NaN on the full sample with score b"):
        compare_scores(loss, u, u[::-1], metric=half)


def test_nan_resamples_are_left_out_and_counted():
    rng = np.random.default_rng(10)
    loss = (rng.random(15) < 0.15).astype(float)
    loss[0] = 1.0  # the sample has an error; many resamples of 15 rows have none
    a, b = rng.random(15), rng.random(15)
    seen = []

    def risk_of_errors(
        loss, uncertainty
    ):  # undefined without an error, as a ratio of the errors would be
        value = aurc(loss, uncertainty) / loss.sum() if loss.sum() else float("nan")
        seen.append(value)
        return value

    with pytest.warns(
        RuntimeWarning, match=r"returned NaN on (\d+) of the 400 resamples"
    ) as caught:
        result = compare_scores(loss, a, b, metric=risk_of_errors, n_resamples=400, random_state=0)
    resampled = np.array(seen[2:]).reshape(400, 2)  # the first two calls: the full sample
    differences = resampled[:, 0] - resampled[:, 1]
    kept = differences[~np.isnan(differences)]
    missing = 400 - kept.size
    assert 0 < missing < 400 and f"NaN on {missing} of the 400" in str(caught[0].message)
    assert f"({missing} NaN resamples left out)" in result.method and result.n_resamples == 400
    assert result.ci == pytest.approx(np.quantile(kept, [0.025, 0.975]), rel=1e-14)
    below, above = (
        (1 + np.sum(kept <= 0)) / (1 + kept.size),
        (1 + np.sum(kept >= 0)) / (1 + kept.size),
    )
    assert result.p_value == min(1.0, 2 * min(below, above))
    with pytest.warns(RuntimeWarning, match="left out"):
        low, high = bootstrap_ci(risk_of_errors, loss, a, n_resamples=200, random_state=0)
    assert low <= high
    with pytest.raises(ValueError, match="NaN on every one of the 50 resamples"):
        compare_scores(
            loss,
            a,
            b,
            metric=lambda loss_, u: (
                0.0
                if loss_.size == 15 and loss_.sum() == loss.sum() and np.array_equal(loss_, loss)
                else float("nan")
            ),
            n_resamples=50,
        )


@pytest.mark.slow
def test_small_samples_reject_too_often_as_documented():
    """The benchmark's null (two exchangeable scores, true difference 0), with its own seeds: at
    n = 30 the 5 % test rejects clearly more than 5 % and the interval covers 0 less than 95 %; at
    n = 200 both hold within three binomial standard errors."""

    def null_rates(n, reps, seed):
        rng = np.random.default_rng(seed)
        rejected = covered = 0
        for r in range(reps):
            risk = rng.random(n)
            loss = (rng.random(n) < 0.1 + 0.5 * risk).astype(float)
            result = compare_scores(
                loss,
                risk + rng.normal(0, 0.3, n),
                risk + rng.normal(0, 0.3, n),
                n_resamples=500,
                random_state=r,
            )
            rejected += result.p_value < 0.05
            covered += result.ci.low <= 0.0 <= result.ci.high
        return rejected / reps, covered / reps

    rejected, covered = null_rates(30, 3000, 30)
    assert (
        rejected > 0.05 + 0.005 and covered < 0.95 - 0.005
    )  # about 6.5 % and 93.5 % in the record
    rejected, covered = null_rates(200, 1000, 200)
    tolerance = 3 * math.sqrt(0.05 * 0.95 / 1000)
    assert rejected <= 0.05 + tolerance and covered >= 0.95 - tolerance


@pytest.mark.slow
def test_a_custom_metric_runs_under_an_address_space_limit():
    # the reported failure: a custom metric needed every resample's rows at once; here 600 x 200,000
    # indices (960 MB) do not fit under the limit, the blocks (17 MB) do
    script = textwrap.dedent("""
        import resource, numpy as np
        from rejectopt.metrics import compare_scores
        size = int(open("/proc/self/status").read().split("VmSize:")[1].split()[0]) * 1024
        resource.setrlimit(resource.RLIMIT_AS, (size + 600 * 2**20, size + 600 * 2**20))
        try:
            np.ones((600, 200_000), dtype=np.intp)
            raise SystemExit("the limit lets the former allocation through")
        except MemoryError:
            pass
        rng = np.random.default_rng(0)
        loss, a, b = (rng.random(200_000) < 0.2).astype(float), rng.random(200_000), rng.random(200_000)
        result = compare_scores(loss, a, b, metric=lambda loss_, u: float(loss_[u < 0.5].mean()), n_resamples=600)
        print(result.n_resamples)
    """)
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=600,
        env=os.environ | {"OPENBLAS_NUM_THREADS": "1"},
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["600"]


def test_a_keyword_without_a_vectorised_form_is_evaluated_per_resample():
    # a partial AuRC must not be resampled as the whole AuRC
    rng = np.random.default_rng(12)
    loss, a = _tied_case(rng, 70)
    b = rng.random(70)
    partial = functools.partial(aurc, coverage_range=(0.0, 0.5))
    bound = compare_scores(loss, a, b, metric=partial, n_resamples=120, random_state=5)
    called = compare_scores(
        loss, a, b, metric=lambda loss_, u: partial(loss_, u), n_resamples=120, random_state=5
    )
    assert bound.ci == called.ci and bound.p_value == called.p_value
    assert bound.ci != compare_scores(loss, a, b, n_resamples=120, random_state=5).ci
    assert bootstrap_ci(partial, loss, a, n_resamples=80, random_state=1) == bootstrap_ci(
        lambda loss_, u: partial(loss_, u), loss, a, n_resamples=80, random_state=1
    )
