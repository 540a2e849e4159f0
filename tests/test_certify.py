"""Tests of rejectopt._certify: the tails, and the guarantees of certified targets on populations with known truth.

A statistical claim is checked by simulation: uncertainty u ~ U(0, 1) and P(error | u) a known
function, so the population's selective risk and coverage of any threshold are known in closed
form; many calibration samples are drawn and the share of draws whose population quantity misses
the target must stay at or below delta within sampling error (a one-sided binomial test at level
0.001). Real data: sattelite (the demo mirror), scikit-learn's logistic regression and its MCP
uncertainty, its held-out rows taken as the population.
"""

import math
import warnings

import numpy as np
import pytest
from scipy import stats
from support import DEMO_MIRROR

from rejectopt._certify import (
    CERTIFICATE_KEYS,
    CERTIFICATE_KEYS_V2,
    _binomial_pvalue,
    _coverage_lower_bound,
    _coverage_rank,
    _hoeffding_bentkus_pvalue,
    _risk_upper_bound,
    certified_from_dict,
    fit_certified_coverage,
    fit_certified_risk,
    fit_certified_tpr_fpr,
)
from rejectopt.selective import (
    InfeasibleTargetError,
    fit_bounded_abstention,
    fit_bounded_improvement,
)


def _binomial_cdf(k, n, p):
    """P(Binomial(n, p) <= k) by summing the probability mass (an implementation independent of scipy)."""
    return sum(math.comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(int(k) + 1))


def _at_most_delta(violations, draws, delta):
    """The violation count is compatible with a rate <= delta: one-sided binomial test at level 0.001."""
    return stats.binom.sf(violations - 1, draws, delta) > 1e-3


# --- tails -----------------------------------------------------------------------------------


def test_binomial_pvalue_and_clopper_pearson_bound_known_answers():
    for errors, n, rate in ((0, 10, 0.1), (3, 40, 0.05), (7, 200, 0.02), (12, 100, 0.3)):
        assert _binomial_pvalue(errors, n, rate) == pytest.approx(
            _binomial_cdf(errors, n, rate), rel=1e-10
        )
    assert _binomial_pvalue(0, 0, 0.1) == 1.0  # nothing accepted: nothing to reject
    # Clopper-Pearson's upper bound solves P(Binomial(n, b) <= e) = delta; in loss units (0/100)
    for errors, n in ((0, 20), (2, 50), (10, 60)):
        bound = float(_risk_upper_bound(100.0 * errors, n, 0.05, 100.0, True)) / 100
        assert _binomial_cdf(errors, n, bound) == pytest.approx(0.05, abs=1e-9)
    assert float(_risk_upper_bound(0.0, 20, 0.05, 100.0, True)) == pytest.approx(
        100 * (1 - 0.05 ** (1 / 20))
    )


def test_hoeffding_bentkus_pvalue_known_answers_and_its_inversion():
    def independent(mean, n, rate):
        a = min(mean, rate)
        h = (a * math.log(a / rate) if a > 0 else 0.0) + (1 - a) * math.log((1 - a) / (1 - rate))
        return min(
            math.exp(-n * h), math.e * _binomial_cdf(math.ceil(n * mean - 1e-9), n, rate), 1.0
        )

    for mean, n, rate in ((0.0, 50, 0.1), (0.05, 100, 0.1), (0.12, 300, 0.2), (0.3, 80, 0.25)):
        assert _hoeffding_bentkus_pvalue(mean, n, rate) == pytest.approx(
            independent(mean, n, rate), rel=1e-9
        )
    # a count scaled to the tested rows need not be an integer (where Learn-then-Test predicts its start)
    assert _hoeffding_bentkus_pvalue(0.1, 50.5, 0.2) == pytest.approx(
        min(
            math.exp(-50.5 * 0.1 * math.log(0.5) - 50.5 * 0.9 * math.log(0.9 / 0.8)),
            math.e * stats.beta.cdf(0.8, 50.5 - 6, 7),
        ),
        rel=1e-9,
    )
    # the bound of an MAE (B = 4) is the rate at which the p-value reaches delta
    losses = np.array([0, 1, 0, 2, 0, 0, 1, 0] * 25, dtype=float)
    bound = float(_risk_upper_bound(losses.sum(), losses.size, 0.1, 4.0, False))
    assert independent(losses.mean() / 4, losses.size, bound / 4) == pytest.approx(0.1, abs=1e-6)
    assert losses.mean() < bound < 4.0


def test_coverage_rank_is_the_binomial_quantile():
    for n, w, delta in ((100, 0.5, 0.1), (1500, 0.7, 0.05), (20, 0.99, 0.05)):
        k = _coverage_rank(n, w, delta)
        tail = [stats.binom.sf(j - 1, n, w) for j in range(n + 1)]  # P(Binomial(n, w) >= j)
        assert k == next((j for j in range(n + 1) if tail[j] <= delta), n + 1)
        if k <= n:
            assert stats.binom.sf(k - 1, n, _coverage_lower_bound(k, n, delta)) == pytest.approx(
                delta, rel=1e-6
            )


# --- guarantees on a population with known risks ---------------------------------------------

DRAWS = 400


def _draw(rng, n, error_probability):
    u = rng.random(n)
    return 100.0 * (rng.random(n) < error_probability(u)), u


def _population_risk(threshold, cumulative):
    """Selective risk (percent) of accepting u < threshold, from the cumulative error probability."""
    t = min(max(threshold, 0.0), 1.0)
    return 100.0 * cumulative(t) / t if t > 0 else float("nan"), t


def test_certified_risk_holds_with_probability_one_minus_delta_and_ltt_covers_more_than_sgr():
    # P(error | u) = u / 2: the selective risk of {u < t} is 25 t percent, 10 % at coverage 0.4
    rng = np.random.default_rng(3)
    target, delta, n = 10.0, 0.1, 800
    outcome = {"ltt": [], "sgr": [], "plug-in": []}
    for draw in range(DRAWS):
        loss, u = _draw(rng, n, lambda v: v / 2)
        for method in outcome:
            try:
                selection = (
                    fit_bounded_improvement(loss, u, target)
                    if method == "plug-in"
                    else fit_certified_risk(
                        loss, u, target, 1 - delta, method=method, random_state=draw
                    )
                )
            except InfeasibleTargetError:
                outcome[method].append((False, 0.0))
                continue
            risk, coverage = _population_risk(selection.threshold, lambda t: t * t / 4)
            outcome[method].append((risk > target, coverage))
    rate = {method: np.mean([v for v, _ in rows]) for method, rows in outcome.items()}
    coverage = {method: np.mean([c for _, c in rows]) for method, rows in outcome.items()}
    for method in ("ltt", "sgr"):
        assert _at_most_delta(sum(v for v, _ in outcome[method]), DRAWS, delta), rate
    assert rate["plug-in"] > 0.3  # the plug-in target is an estimate: about half the draws miss it
    assert coverage["ltt"] > coverage["sgr"] + 0.02, coverage
    assert 0.15 < coverage["ltt"] < 0.4 < coverage["plug-in"] + 0.05


def test_certified_risk_holds_when_the_most_confident_inputs_err_most():
    # a score that is wrong where it is most confident: the selective risk falls, then rises
    def error_probability(v):
        return np.where(v < 0.05, 0.4, np.where(v < 0.6, 0.02, 0.5))

    def cumulative(t):  # integral of the error probability over [0, t]
        return 0.4 * min(t, 0.05) + 0.02 * min(max(t - 0.05, 0), 0.55) + 0.5 * max(t - 0.6, 0)

    rng = np.random.default_rng(4)
    target, delta, violations = 5.0, 0.1, 0
    for draw in range(DRAWS):
        loss, u = _draw(rng, 600, error_probability)
        try:
            selection = fit_certified_risk(loss, u, target, 1 - delta, random_state=draw)
        except InfeasibleTargetError:
            continue
        violations += _population_risk(selection.threshold, cumulative)[0] > target
    assert _at_most_delta(violations, DRAWS, delta), violations


def test_certified_risk_holds_with_tied_scores_and_decides_deterministically():
    # 20 score levels, P(error | level j) = j / 40: the risk of {s < v} is the mean of j / 40 over levels below v
    rng = np.random.default_rng(9)
    target, delta, violations, infeasible = 10.0, 0.1, 0, 0
    for draw in range(DRAWS):
        level = rng.integers(0, 20, 800)
        loss = 100.0 * (rng.random(800) < level / 40)
        try:
            selection = fit_certified_risk(loss, level / 20, target, 1 - delta, random_state=draw)
        except InfeasibleTargetError:
            infeasible += 1
            continue
        assert selection.accept_prob in (0.0, 1.0)
        levels = np.arange(20)[np.arange(20) / 20 < selection.threshold]
        if selection.accept_prob == 1.0:
            levels = np.arange(20)[np.arange(20) / 20 <= selection.threshold]
        violations += 100 * np.mean(levels / 40) > target
    assert _at_most_delta(violations, DRAWS, delta), violations
    # levels 0-7 (risk 8.75 %) are certifiable with 800 rows; the 40 start rows see two rows per level, so
    # the start sometimes lands on a level the tested rows cannot certify (43 of 400 draws)
    assert infeasible < DRAWS / 5, infeasible


@pytest.mark.slow
def test_certified_risk_holds_where_both_tests_can_err_a_flat_risk_just_above_the_target():
    # the full set alone and the fixed sequence from the start share delta (a union bound): on a flat
    # risk of 9 % against a target of 8 % every cut is bad, and each test can reject; together they
    # must still err in at most a share delta of the samples
    rng = np.random.default_rng(13)
    target, delta, violations = 8.0, 0.1, 0
    for draw in range(DRAWS):
        loss, u = _draw(rng, 1500, lambda v: np.full_like(v, 0.09))
        try:
            fit_certified_risk(loss, u, target, 1 - delta, random_state=draw)
        except InfeasibleTargetError:
            continue
        violations += 1  # every certified cut has population risk 9 % > 8 %
    assert _at_most_delta(violations, DRAWS, delta), violations
    assert violations > 0  # the test can fail: some samples are lucky enough to certify


def test_certified_risk_of_a_bounded_loss_holds_with_hoeffding_bentkus():
    # an ordinal MAE on 5 labels (B = 4): loss 0, 1 or 4 with P(1 | u) = u, P(4 | u) = u / 4
    rng = np.random.default_rng(5)
    target, delta, violations, accepted = 0.5, 0.1, 0, []
    for draw in range(DRAWS // 2):
        u = rng.random(
            610
        )  # 30 start rows and 580 tested: a start predicted on 19.33 times its counts
        r = rng.random(610)
        loss = np.where(r < u / 4, 4.0, np.where(r < u / 4 + u / 2, 1.0, 0.0))
        try:
            selection = fit_certified_risk(
                loss, u, target, 1 - delta, loss_bound=4.0, random_state=draw
            )
        except InfeasibleTargetError:
            accepted.append(0.0)
            continue
        t = min(selection.threshold, 1.0)  # mean loss of {u < t}: (1/t) int_0^t (u/2 + u) du = 3t/4
        violations += 0.75 * t > target
        accepted.append(t)
    assert _at_most_delta(violations, DRAWS // 2, delta), violations
    assert 0.2 < np.mean(accepted) < 2 / 3  # 2/3 is where the population's risk reaches the target


def test_certified_coverage_holds_without_accepting_much_more():
    rng = np.random.default_rng(6)
    w, delta, n = 0.7, 0.05, 1000
    certified, plug_in = [], []
    for _ in range(DRAWS):
        loss, u = _draw(rng, n, lambda v: v / 2)
        certified.append(
            min(fit_certified_coverage(loss, u, w, 1 - delta).threshold, 1.0)
        )  # coverage of u <= t
        plug_in.append(min(fit_bounded_abstention(loss, u, w).threshold, 1.0))
    certified, plug_in = np.array(certified), np.array(plug_in)
    assert _at_most_delta(int((certified < w).sum()), DRAWS, delta)
    assert (plug_in < w).mean() > 0.3
    # the order statistic of rank k accepts about w + z sqrt(w (1 - w) / n): 0.724 here
    k = _coverage_rank(n, w, delta)
    assert certified.mean() == pytest.approx(k / (n + 1), abs=0.005) and certified.mean() < w + 0.03


def test_certified_tpr_fpr_holds_for_both_rates():
    # ID scores ~ U(0, 1), OOD scores ~ U(0.3, 1.3): TPR(t) = t and FPR(t) = t - 0.3 on [0.3, 1]
    rng = np.random.default_rng(7)
    tpr_min, fpr_max, delta, violations, infeasible = 0.7, 0.55, 0.1, 0, 0
    is_ood = np.r_[np.zeros(300, bool), np.ones(300, bool)]
    for _ in range(DRAWS):
        s = np.where(is_ood, 0.3 + rng.random(600), rng.random(600))
        try:
            selection = fit_certified_tpr_fpr(np.zeros(600), is_ood, s, tpr_min, fpr_max, 1 - delta)
        except InfeasibleTargetError:
            infeasible += 1
            continue
        t = min(selection.threshold, 1.3)
        violations += (min(t, 1.0) < tpr_min) or (min(max(t - 0.3, 0.0), 1.0) > fpr_max)
        assert selection.coverage_bound >= tpr_min and selection.bound <= fpr_max
    assert _at_most_delta(violations, DRAWS, delta)
    assert infeasible < DRAWS / 10
    with pytest.raises(
        InfeasibleTargetError, match=r"accepts \d+ OOD rows, whose FPR upper bound"
    ) as error:
        fit_certified_tpr_fpr(np.zeros(600), is_ood, s, 0.95, 0.1, 0.9)
    assert error.value.best_bound > 0.1


def test_an_uncertifiable_risk_advises_a_target_that_certifies():
    # the advice used to be the smallest pointwise bound of any cut (9.50 % here: 30 rows without an error),
    # which the procedure could not certify; it is now a target that the same method certifies on these rows
    loss = np.r_[np.zeros(30), np.full(70, 100.0)]
    s = np.arange(100.0)
    with pytest.raises(InfeasibleTargetError) as error:
        fit_certified_risk(loss, s, 2.0, 0.95)
    best = error.value.best_bound
    assert (error.value.confidence, error.value.n_calibration) == (0.95, 100)
    assert error.value.rows_needed == math.ceil(
        math.log(0.05) / math.log(0.98)
    )  # 149 error-free rows
    assert str(error.value) == (
        "target risk=2 cannot be certified at confidence 0.95 on these 100 calibration rows (method ltt): even "
        "without an error, risk=2 at confidence 0.95 needs at least 149 tested rows (149 calibration rows), and 100 "
        f"are tested; the smallest target risk the method certifies on these rows is {best:.8g}; ask for risk >= "
        f"{best:.8g}, a lower confidence, or more calibration rows"
    )
    assert fit_certified_risk(loss, s, best, 0.95).bound == best
    with pytest.raises(ValueError, match="method 'sgr' bounds 0/B losses only"):
        fit_certified_risk(loss * 0.015, s, 0.5, 0.9, loss_bound=2.0, method="sgr")
    with pytest.raises(ValueError, match=r"a certified target risk must lie in \(0, 100\)"):
        fit_certified_risk(loss, s, 100.0, 0.9)
    with pytest.raises(ValueError, match="exceeds loss_bound 1"):
        fit_certified_risk(loss, s, 0.5, 0.9, loss_bound=1.0)


@pytest.mark.parametrize("method", ["ltt", "sgr"])
def test_the_advice_of_a_refusal_certifies_when_asked_for(method):
    # the advised target, fitted on the same rows with the same method, certifies: over draws, targets, losses
    rng = np.random.default_rng(11)
    checked = 0
    for draw in range(12):
        n = int(rng.choice([40, 200, 900]))
        u = rng.random(n)
        binary = method == "sgr" or draw % 2 == 0
        loss = 100.0 * (rng.random(n) < u / 2) if binary else np.minimum(4.0, rng.poisson(u))
        bound = None if binary else 4.0
        target = float(rng.choice([0.5, 1.0, 2.0])) * (1.0 if binary else 0.04)
        with pytest.raises(InfeasibleTargetError) as error:
            fit_certified_risk(
                loss, u, target, 0.9, loss_bound=bound, method=method, random_state=draw
            )
        best = error.value.best_bound
        assert best > target and f"ask for risk >= {best:.8g}" in str(error.value)
        selection = fit_certified_risk(
            loss, u, best, 0.9, loss_bound=bound, method=method, random_state=draw
        )
        assert selection.bound <= best
        checked += 1
    assert checked == 12


def test_ten_rows_say_how_many_rows_a_target_needs():
    # no start rows below 11 rows: the test starts at the full set, a cut fixed in advance
    loss, s = [0] * 10, range(10)
    selection = fit_certified_risk(
        loss, s, 30.0, 0.9
    )  # 10 error-free rows bound the risk by 20.57 %
    assert (selection.threshold, selection.accept_prob) == (math.inf, 1.0)
    with pytest.raises(InfeasibleTargetError) as error:
        fit_certified_risk(loss, s, 10.0, 0.9)
    assert error.value.rows_needed == 22  # 0.9 ** 22 <= 0.1 < 0.9 ** 21
    assert (
        "even without an error, risk=10 at confidence 0.9 needs at least 22 tested rows (22 calibration rows)"
        in str(error.value)
    )
    best = 100 * (
        1 - 0.1 ** (1 / 10)
    )  # Clopper-Pearson's bound of 10 rows without an error: 20.57 %
    assert best <= error.value.best_bound < best + 1e-2
    assert fit_certified_risk(loss, s, error.value.best_bound, 0.9).threshold == math.inf
    with pytest.raises(InfeasibleTargetError) as error:
        fit_certified_risk(
            [100.0] * 5, range(5), 50.0, 0.9
        )  # every row an error: nothing certifies
    assert math.isnan(error.value.best_bound)
    assert "no target risk below the loss's bound can be certified on these rows" in str(
        error.value
    )


def test_ten_rows_certify_with_the_probability_of_the_full_set_test():
    # flat population risk 35 % and target 30 %: every draw that certifies violates; it certifies iff its
    # 10 rows hold no error (one error bounds the risk by 33.7 %), probability 0.65 ** 10 = 1.3 % <= delta
    rng = np.random.default_rng(12)
    certified = 0
    for draw in range(DRAWS):
        loss = 100.0 * (rng.random(10) < 0.35)
        try:
            fit_certified_risk(loss, rng.random(10), 30.0, 0.9, random_state=draw)
        except InfeasibleTargetError:
            assert loss.any()
            continue
        assert not loss.any()
        certified += 1
    assert (
        abs(certified / DRAWS - 0.65**10)
        < 3 * math.sqrt(0.65**10 * (1 - 0.65**10) / DRAWS) + 1 / DRAWS
    )


def test_certified_risk_on_the_readme_rows():
    # the README's "your classifier" rows (a logistic regression trained on 300 digits) with its MCP
    # uncertainty: risk 10 % at confidence 0.95 certifies on the 1,000 labelled rows
    from sklearn.datasets import load_digits
    from sklearn.linear_model import LogisticRegression

    X, y = load_digits(return_X_y=True)
    clf = LogisticRegression(max_iter=2000).fit(X[:300], y[:300])
    rows = slice(300, 1300)
    loss = 100.0 * (clf.predict(X[rows]) != y[rows])
    uncertainty = 1 - clf.predict_proba(X[rows]).max(axis=1)
    selection = fit_certified_risk(loss, uncertainty, 10.0, 0.95)
    accepted = uncertainty < selection.threshold
    assert selection.bound == 10.0 and 0.5 < accepted.mean() <= 1.0
    assert loss[accepted].mean() < 10.0
    # a flat score on 800 rows with 55 errors (6.875 %): the full set alone certifies 10 % (bound 8.72 %)
    flat = np.r_[np.zeros(745), np.full(55, 100.0)]
    assert float(_risk_upper_bound(flat.sum(), 800, 0.05, 100.0, True)) < 10.0
    assert fit_certified_risk(flat, np.zeros(800), 10.0, 0.95).threshold == math.inf


def test_certified_tpr_zero_accepts_nothing_and_is_certified():
    is_ood = np.r_[np.zeros(20, bool), np.ones(20, bool)]
    selection = fit_certified_tpr_fpr(np.zeros(40), is_ood, np.arange(40.0), 0.0, 0.0, 0.9)
    assert (
        selection.threshold,
        selection.accept_prob,
        selection.bound,
        selection.coverage_bound,
    ) == (-math.inf, 0.0, 0.0, 0.0)
    assert not selection.acceptance_probability(np.arange(40.0)).any()


# --- the certificate: the loss bound B it rests on ---------------------------------------------


def _zero_one_rows(n=2000, seed=1):
    """0/100 losses with P(error | u) = u / 2, u ~ U(0, 1): risk 10 % is certified at 0.9 on 2,000 rows."""
    rng = np.random.default_rng(seed)
    s = rng.random(n)
    return 100.0 * (rng.random(n) < s / 2), s


def _mae_rows(n=2000, seed=2):
    """MAE losses on 5 ordinal labels (0..4, B = K - 1 = 4): Binomial(4, u / 4), mean u, some losses 4."""
    rng = np.random.default_rng(seed)
    s = rng.random(n)
    return rng.binomial(4, s / 4).astype(float), s


def _ood_rows(n=1000, seed=3):
    """Half the rows OOD, scored higher than the ID rows on average; losses NaN on OOD rows."""
    rng = np.random.default_rng(seed)
    is_ood = np.arange(n) % 2 == 1
    return np.where(is_ood, np.nan, 0.0), is_ood, rng.random(n) + is_ood


@pytest.mark.parametrize(
    "fit, loss_bound",
    [
        (lambda: fit_certified_risk(*_zero_one_rows(), 10.0, 0.9, method="ltt"), 100.0),
        (lambda: fit_certified_risk(*_zero_one_rows(), 10.0, 0.9, method="sgr"), 100.0),
        (lambda: fit_certified_risk(*_mae_rows(), 0.5, 0.9, loss_bound=4), 4.0),
        (lambda: fit_certified_coverage(*_zero_one_rows(), 0.5, 0.9), 100.0),
        (lambda: fit_certified_coverage(*_mae_rows(), 0.5, 0.9, loss_bound=4), 4.0),
        (lambda: fit_certified_tpr_fpr(*_ood_rows(), 0.5, 0.9, 0.9), None),
    ],
    ids=[
        "risk-ltt-zero-one",
        "risk-sgr-zero-one",
        "risk-ltt-mae",
        "coverage-zero-one",
        "coverage-mae",
        "tpr-fpr",
    ],
)
def test_every_certified_fit_records_the_loss_bound_it_used_and_reads_it_back(fit, loss_bound):
    """B is 100 for the 0/100 loss, the declared 4 for an MAE on 5 labels, none (NaN, null) for TPR-FPR."""
    selection = fit()
    certificate = selection.certificate
    assert tuple(certificate) == CERTIFICATE_KEYS and certificate["loss_bound"] == loss_bound
    assert (
        math.isnan(selection.loss_bound)
        if loss_bound is None
        else selection.loss_bound == loss_bound
    )
    for version in (3, None):
        back = certified_from_dict(selection.to_dict(), certificate, format_version=version)
        assert back.certificate == certificate and back.to_dict() == selection.to_dict()


def test_a_coverage_fit_without_a_known_loss_bound_states_no_risk_bound_and_reads_back():
    """No B (an MAE without loss_bound): no risk bound rests on one, so both are NaN, and null reads back."""
    selection = fit_certified_coverage(*_mae_rows(), 0.5, 0.9)
    assert math.isnan(selection.risk_bound) and math.isnan(selection.loss_bound)
    assert (
        certified_from_dict(selection.to_dict(), selection.certificate).certificate
        == selection.certificate
    )


#: A format-3 certificate of a certified risk (0/100 loss), as select writes it.
RISK_CERTIFICATE = {
    "bound": 5.0,
    "confidence": 0.9,
    "n_calibration": 750,
    "method": "ltt",
    "risk_bound": 5.0,
    "coverage_bound": 0.4,
    "loss_bound": 100.0,
}
SELECTION = {"threshold": 0.3, "accept_prob": 0.0}


def test_a_format_2_certificate_reads_with_its_loss_bound_unrecorded():
    old = {k: v for k, v in RISK_CERTIFICATE.items() if k != "loss_bound"}
    assert tuple(old) == CERTIFICATE_KEYS_V2
    for version in (2, None):
        selection = certified_from_dict(SELECTION, old, format_version=version)
        assert math.isnan(selection.loss_bound) and selection.certificate == dict(
            old, loss_bound=None
        )
    with pytest.raises(
        ValueError,
        match=r"^certificate.loss_bound is not a field of a format_version 2 certificate "
        r"\(format_version 3 adds it\)$",
    ):
        certified_from_dict(SELECTION, RISK_CERTIFICATE, format_version=2)


NUMBER = (
    r"certificate.loss_bound must be a finite number > 0 \(B, the largest loss a prediction can have\) or "
    "null, got "
)


@pytest.mark.parametrize(
    "changes, message",
    [
        (
            {"loss_bound": ...},
            "certificate.loss_bound is missing: a format_version 3 certificate records B, the largest "
            r"loss a prediction can have, that its risk bound rests on \(null where none does\)$",
        ),
        ({"loss_bound": "100"}, NUMBER + "'100'$"),
        ({"loss_bound": True}, NUMBER + "True$"),
        ({"loss_bound": [100]}, NUMBER + r"\[100\]$"),
        ({"loss_bound": 0}, NUMBER + "0$"),
        ({"loss_bound": -100.0}, NUMBER + "-100.0$"),
        ({"loss_bound": float("inf")}, NUMBER + "inf$"),
        ({"loss_bound": float("nan")}, NUMBER + "nan$"),
        (
            {"loss_bound": None},
            "certificate.loss_bound is null but method 'ltt' certifies a risk, whose bound rests on B, "
            "the largest loss a prediction can have$",
        ),
        (
            {"loss_bound": None, "method": "sgr"},
            "certificate.loss_bound is null but method 'sgr' certifies a risk",
        ),
        (
            {"loss_bound": None, "method": "order-statistic", "risk_bound": 7.5},
            "certificate.loss_bound is null but certificate.risk_bound is 7.5: a risk bound rests "
            "on B, the largest loss a prediction can have$",
        ),
    ],
)
def test_a_format_3_certificate_without_a_valid_loss_bound_is_refused_naming_it(changes, message):
    certificate = {k: v for k, v in {**RISK_CERTIFICATE, **changes}.items() if v is not ...}
    with pytest.raises(ValueError, match=f"^{message}"):
        certified_from_dict(SELECTION, certificate, format_version=3)


# --- real data -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def sattelite_mcp(tmp_path_factory):
    """0/100 losses and MCP uncertainties of a logistic regression on sattelite's 4,435 held-out rows."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from rejectopt.datasets import load_prepared, prepare_dataset

    folder = tmp_path_factory.mktemp("sattelite")
    prepare_dataset("sattelite", folder / "raw", folder / "d.npz", mirror=DEMO_MIRROR)
    X, y = load_prepared(folder / "d.npz")
    order = np.random.default_rng(0).permutation(len(y))
    train, population = order[:2000], order[2000:]
    model = make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000)).fit(
        X[train], y[train]
    )
    proba = model.predict_proba(X[population])
    return 100.0 * (model.classes_[proba.argmax(1)] != y[population]), 1.0 - proba.max(1)


def test_certified_risk_holds_on_real_data(sattelite_mcp):
    loss, s = sattelite_mcp
    order = np.argsort(s, kind="stable")
    cum_loss, values = np.cumsum(loss[order]), s[order]

    def population(selection):  # exact selective risk and coverage on all held-out rows
        accepted = int(
            np.searchsorted(
                values, selection.threshold, side="right" if selection.accept_prob else "left"
            )
        )
        return (
            cum_loss[accepted - 1] / accepted if accepted else float("nan")
        ), accepted / loss.size

    rng = np.random.default_rng(8)
    target, delta, draws = 5.0, 0.1, 300
    outcome = {"ltt": [], "sgr": [], "plug-in": []}
    for draw in range(draws):
        rows = rng.choice(loss.size, 1000, replace=False)
        for method in outcome:
            try:
                selection = (
                    fit_bounded_improvement(loss[rows], s[rows], target)
                    if method == "plug-in"
                    else fit_certified_risk(
                        loss[rows], s[rows], target, 1 - delta, method=method, random_state=draw
                    )
                )
            except InfeasibleTargetError:
                outcome[method].append((False, 0.0))
                continue
            risk, coverage = population(selection)
            outcome[method].append((risk > target, coverage))
    violations = {method: sum(v for v, _ in rows) for method, rows in outcome.items()}
    coverage = {method: np.mean([c for _, c in rows]) for method, rows in outcome.items()}
    assert _at_most_delta(violations["ltt"], draws, delta) and _at_most_delta(
        violations["sgr"], draws, delta
    )
    assert violations["plug-in"] > 0.3 * draws, violations
    assert coverage["ltt"] >= coverage["sgr"], coverage


def test_a_soft_or_mistyped_ood_label_is_refused_by_the_certificate_and_the_row_split():
    """A 0.5 in ``is_ood`` was read as True (an OOD row) by the certified TPR-FPR fit and the OOD
    row split; both now refuse it, naming the index, as the plug-in OOD strategies do."""
    from rejectopt.fitting import split_ood_rows

    with pytest.raises(ValueError, match=r"is_ood\[2\] = 0\.5$"):
        fit_certified_tpr_fpr(np.zeros(4), [0, 1, 0.5, 0], np.arange(4.0), 0.5, 0.5, 0.9)
    with pytest.raises(ValueError, match=r"is_ood\[1\] = 0\.5$"):
        split_ood_rows([0, 0.5, 1, 0])
    assert (
        split_ood_rows(np.array([0, 1] * 200), seed=0)["calibration"].size > 0
    )  # 0/1 integers stay accepted


def test_the_former_keyword_s_warns_once_and_fits_the_same_selection():
    """``s=`` is renamed ``uncertainty=`` in 0.6.0: one FutureWarning per function, the same fit."""
    loss, u = _zero_one_rows()
    ood_loss, is_ood, ood_u = _ood_rows()
    fits = {
        "fit_certified_risk": lambda **scores: fit_certified_risk(
            loss, target_risk=10.0, confidence=0.9, **scores
        ),
        "fit_certified_coverage": lambda **scores: fit_certified_coverage(
            loss, target_coverage=0.5, confidence=0.9, **scores
        ),
        "fit_certified_tpr_fpr": lambda **scores: fit_certified_tpr_fpr(
            ood_loss, is_ood, tpr_min=0.5, fpr_max=0.9, confidence=0.9, **scores
        ),
    }

    def outcome(selection):  # NaN bounds compare unequal: the certificate reads them as None
        return selection.to_dict(), selection.certificate

    for name, fit in fits.items():
        scores = ood_u if name == "fit_certified_tpr_fpr" else u
        expected = outcome(fit(uncertainty=scores))
        with pytest.warns(FutureWarning, match=rf"{name}\(s=\.\.\.\) is renamed {name}\(unc"):
            assert outcome(fit(s=scores)) == expected
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # once per function: a second call stays silent
            assert outcome(fit(s=scores)) == expected
        with pytest.raises(TypeError, match="got both s= and uncertainty="):
            fit(s=scores, uncertainty=scores)
