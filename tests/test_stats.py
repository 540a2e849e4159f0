"""Tests for rejectopt.stats (Demsar 2006 statistics; the CD diagram is drawn by rejectopt.pipeline.report)."""

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from rejectopt.stats import (
    _nemenyi_pairwise,
    _normal_interval,
    average_ranks,
    cliques,
    friedman_test,
    nemenyi_cd,
    nemenyi_q,
    rank_methods,
    selective_risk_interval,
    wilson_interval,
)


def random_table(n_datasets=11, n_methods=4, seed=0):
    rng = np.random.default_rng(seed)
    values = rng.random((n_datasets, n_methods)) + np.arange(n_methods) * 0.15
    return pd.DataFrame(
        values,
        index=[f"d{i}" for i in range(n_datasets)],
        columns=[f"m{j}" for j in range(n_methods)],
    )


# ---------------------------------------------------------------- Nemenyi CD
def test_nemenyi_cd_known_answers():
    assert round(nemenyi_cd(k=4, n=11, alpha=0.10), 2) == 1.26  # paper, Sec. 5.3
    assert round(nemenyi_cd(k=3, n=11, alpha=0.05), 2) == 1.00
    assert round(nemenyi_cd(k=3, n=11, alpha=0.10), 3) == 0.875


@pytest.mark.parametrize(
    "k, alpha, q", [(3, 0.05, 2.343), (4, 0.05, 2.569), (3, 0.10, 2.052), (4, 0.10, 2.291)]
)
def test_nemenyi_q_matches_demsar_table(k, alpha, q):
    assert nemenyi_q(k, alpha) == pytest.approx(q, abs=1e-3)  # Demsar's table truncates


def test_nemenyi_cd_bad_input():
    with pytest.raises(ValueError, match="k"):
        nemenyi_cd(1, 11)
    with pytest.raises(ValueError, match="alpha"):
        nemenyi_cd(3, 11, alpha=1.5)


def test_nemenyi_pairwise_is_symmetric_pvalue_matrix():
    table = random_table()
    p = _nemenyi_pairwise(table)
    assert list(p.index) == list(table.columns) == list(p.columns)
    np.testing.assert_allclose(p.to_numpy(), p.to_numpy().T)
    assert ((p.to_numpy() >= 0) & (p.to_numpy() <= 1)).all()


# scikit-posthocs 0.17.1's posthoc_nemenyi_friedman on these tables (computed with it before the project
# dropped the dependency): the scipy implementation must keep giving the same numbers.
POSTHOCS_SMALL = [
    [1.0, 0.650495127269293, 0.056055893477214735],
    [0.650495127269293, 1.0, 0.33349932504015],
    [0.056055893477214735, 0.33349932504015, 1.0],
]
POSTHOCS_RANDOM_TABLE = [
    [1.0, 0.9601266938424177, 0.19483849639890083, 0.2654009081599459],
    [0.9601266938424177, 1.0, 0.4457734501856162, 0.5493624548841337],
    [0.19483849639890083, 0.4457734501856162, 1.0, 0.9983987421491285],
    [0.2654009081599459, 0.5493624548841337, 0.9983987421491285, 1.0],
]
# scikit-posthocs' own docstring example (6 blocks x 3 groups, with ties in block 2).
DOCSTRING_BLOCKS = [
    [31, 27, 24],
    [31, 28, 31],
    [45, 29, 46],
    [21, 18, 48],
    [42, 36, 46],
    [32, 17, 40],
]
POSTHOCS_DOCSTRING = [
    [1.0, 0.14553486869064602, 0.8322292181161419],
    [0.14553486869064602, 1.0, 0.03760991481961706],
    [0.8322292181161419, 0.03760991481961706, 1.0],
]


def test_nemenyi_pairwise_known_answer():
    table = pd.DataFrame(
        {"sele": [1.0, 2.0, 3.0, 0.5], "mcp": [1.5, 2.5, 2.0, 0.9], "reg": [2.0, 3.0, 4.0, 0.9]}
    )
    p = _nemenyi_pairwise(table)
    np.testing.assert_allclose(p.to_numpy(), POSTHOCS_SMALL, rtol=1e-10, atol=1e-12)
    p = p.round(3)
    assert (
        p.loc["sele", "mcp"] == 0.650
        and p.loc["sele", "reg"] == 0.056
        and p.loc["mcp", "reg"] == 0.333
    )


@pytest.mark.parametrize(
    "table, expected",
    [
        (random_table(), POSTHOCS_RANDOM_TABLE),
        (pd.DataFrame(DOCSTRING_BLOCKS, columns=["g1", "g2", "g3"]), POSTHOCS_DOCSTRING),
    ],
)
def test_nemenyi_pairwise_matches_scikit_posthocs(table, expected):
    np.testing.assert_allclose(
        _nemenyi_pairwise(table).to_numpy(), expected, rtol=1e-10, atol=1e-12
    )


def _range_of_normals_sf(q, k):
    """P(max - min of k iid N(0, 1) > q) by quadrature: 1 - k int phi(z) (Phi(z) - Phi(z - q))^(k-1) dz."""
    from scipy import integrate

    cdf = integrate.quad(
        lambda z: k * sps.norm.pdf(z) * (sps.norm.cdf(z) - sps.norm.cdf(z - q)) ** (k - 1),
        -np.inf,
        np.inf,
        epsabs=1e-13,
        epsrel=1e-12,
    )[0]
    return 1.0 - cdf


def test_nemenyi_pairwise_matches_range_of_normals_by_quadrature():
    # Independent of scipy's studentized_range: Demsar's z statistic from the average ranks by hand,
    # the range distribution of k standard normals integrated numerically.
    table = random_table(n_datasets=9, n_methods=5, seed=3)
    n, k = table.shape
    ranks = np.array(
        [sorted(row).index(v) + 1 for row in table.to_numpy() for v in row], float
    ).reshape(n, k)
    avg = ranks.mean(axis=0)
    p = _nemenyi_pairwise(table).to_numpy()
    for i in range(k):
        for j in range(i + 1, k):
            z = abs(avg[i] - avg[j]) / math.sqrt(k * (k + 1) / (6 * n))
            assert p[i, j] == pytest.approx(_range_of_normals_sf(math.sqrt(2) * z, k), abs=1e-8)


def test_nemenyi_pairwise_bad_table_names_the_entry():
    table = random_table()
    table.iloc[2, 1] = np.nan
    with pytest.raises(ValueError, match="dataset='d2', method='m1'"):
        _nemenyi_pairwise(table)


# ---------------------------------------------------------------- ranks
def test_ranks_with_ties_are_averaged():
    table = pd.DataFrame({"a": [0.1, 0.3], "b": [0.2, 0.3], "c": [0.2, 0.1]})
    ranks = rank_methods(table)
    np.testing.assert_array_equal(ranks.to_numpy(), [[1.0, 2.5, 2.5], [2.5, 2.5, 1.0]])
    pd.testing.assert_series_equal(
        average_ranks(table), pd.Series({"a": 1.75, "b": 2.5, "c": 1.75}, name="average_rank")
    )


def test_ranks_reject_nan():
    with pytest.raises(ValueError, match="method='b'"):
        rank_methods(pd.DataFrame({"a": [0.1], "b": [np.nan]}))


# ---------------------------------------------------------------- Friedman
@pytest.mark.parametrize("seed", range(5))
def test_friedman_equals_scipy_without_ties(seed):
    table = random_table(seed=seed)
    result = friedman_test(table)
    ref = sps.friedmanchisquare(*[table[c] for c in table.columns])
    assert result.statistic == pytest.approx(ref.statistic, rel=1e-12)
    assert result.pvalue == pytest.approx(ref.pvalue, rel=1e-10)
    assert (result.n_datasets, result.n_methods) == (11, 4)


def test_friedman_with_ties_differs_from_scipy_tie_correction():
    table = pd.DataFrame({"a": [1, 1, 2, 1], "b": [1, 2, 3, 2], "c": [2, 3, 1, 3.0]})
    ours = friedman_test(table).statistic
    scipy_value = sps.friedmanchisquare(*[table[c] for c in table.columns]).statistic
    n, k = table.shape
    tie_term = 2**3 - 2  # one pair of ties, in the first row
    assert scipy_value == pytest.approx(ours / (1 - tie_term / (n * k * (k * k - 1))))


def test_iman_davenport_by_hand():
    # N = 4 datasets, k = 3 methods; ranks per row: (1,2,3), (1,2,3), (1,3,2), (2,1,3)
    table = pd.DataFrame({"a": [1, 1, 1, 2.0], "b": [2, 2, 3, 1.0], "c": [3, 3, 2, 3.0]})
    # R = (1.25, 2.0, 2.75); sum R^2 = 1.5625 + 4 + 7.5625 = 13.125
    chi2 = 12 * 4 / (3 * 4) * (13.125 - 3 * 16 / 4)  # = 4 * 1.125 = 4.5
    f_f = 3 * chi2 / (4 * 2 - chi2)  # = 13.5 / 3.5
    result = friedman_test(table)
    assert result.statistic == pytest.approx(4.5)
    assert result.iman_davenport_F == pytest.approx(f_f)
    assert result.iman_davenport_pvalue == pytest.approx(sps.f.sf(f_f, 2, 6))
    assert result.pvalue == pytest.approx(sps.chi2.sf(4.5, 2))


def test_friedman_perfect_agreement_gives_infinite_F():
    table = pd.DataFrame({"a": [1, 1, 1.0], "b": [2, 2, 2.0], "c": [3, 3, 3.0]})
    result = friedman_test(table)
    assert math.isinf(result.iman_davenport_F) and result.iman_davenport_pvalue == 0.0


# ---------------------------------------------------------------- cliques and diagram
def test_cliques_hand_made():
    ranks = pd.Series({"A": 1.0, "B": 1.5, "C": 2.2, "D": 3.5, "E": 3.6})
    paper = pd.Series(
        {"sele": 1.36, "tcp": 2.36, "mcp": 2.73, "reg": 3.55}
    )  # the paper's ranks, CD 1.26
    assert cliques(paper, cd=1.26) == [["sele", "tcp"], ["tcp", "mcp", "reg"]]
    assert cliques(ranks, cd=1.5) == [["A", "B", "C"], ["C", "D", "E"]]
    assert cliques(ranks, cd=1.25) == [["A", "B", "C"], ["D", "E"]]
    assert cliques(ranks, cd=0.5) == [["D", "E"]]  # 1.5 - 1.0 is not < 0.5
    assert cliques(ranks, cd=0.6) == [["A", "B"], ["D", "E"]]
    assert cliques(ranks, cd=0.05) == []
    assert cliques(ranks, cd=10) == [["A", "B", "C", "D", "E"]]
    with pytest.raises(ValueError, match="cd"):
        cliques(ranks, cd=0)


# --------------------------------------------------------------------------------------------
# Intervals (rejectopt.stats)
# --------------------------------------------------------------------------------------------
def test_wilson_interval_matches_its_formula_and_contains_the_estimate():
    z = sps.norm.ppf(0.975)
    low, high = wilson_interval(8, 10)
    centre = (0.8 + z**2 / 20) / (1 + z**2 / 10)
    half = z * math.sqrt(0.8 * 0.2 / 10 + z**2 / 400) / (1 + z**2 / 10)
    assert (low, high) == pytest.approx((centre - half, centre + half))
    assert (round(low, 4), round(high, 4)) == (0.4902, 0.9433)
    assert wilson_interval(0, 50)[0] == 0.0 and wilson_interval(50, 50)[1] == 1.0
    assert all(math.isnan(v) for v in wilson_interval(0, 0))
    assert wilson_interval(8, 10, confidence=0.99)[0] < low


def test_normal_interval():
    low, high = _normal_interval(2.0, 4.0, 16, confidence=0.95)
    assert (low, high) == pytest.approx(
        (2.0 - sps.norm.ppf(0.975) * 0.5, 2.0 + sps.norm.ppf(0.975) * 0.5)
    )


def test_selective_risk_interval_two_valued_weighted_and_empty():
    loss = np.array([0, 100, 0, 0, 100, 0, 0, 0], dtype=float)
    accept = np.array([1, 1, 1, 1, 0.5, 0, 0, 0])
    (low, high), method = selective_risk_interval(loss, accept, loss_bound=100)
    w_low, w_high = wilson_interval(1.5, 4.5)
    assert (low, high) == pytest.approx((100 * w_low, 100 * w_high)) and method.startswith("Wilson")
    mae = np.array([0.5, 1.5, 0.2, 3.0])
    (low, high), method = selective_risk_interval(mae, np.ones(4), loss_bound=4)
    assert (
        method.startswith("normal approximation")
        and low == max(0.0, low)
        and low < mae.mean() < high
    )
    (low, high), method = selective_risk_interval(mae, np.zeros(4), loss_bound=4)
    assert math.isnan(low) and math.isnan(high) and method == "none (nothing accepted)"


def test_selective_risk_interval_scale_is_the_loss_bound_not_the_sample():
    """0 errors in 20 accepted rows of a 0/100 loss: Wilson's upper bound 3.8415 / 23.8415, in percent."""
    z2 = sps.norm.ppf(0.975) ** 2
    (low, high), method = selective_risk_interval(np.zeros(20), np.ones(20), loss_bound=100)
    assert (low, high) == pytest.approx((0.0, 100 * z2 / (20 + z2))) and round(high, 2) == 16.11
    (low, high), _ = selective_risk_interval(
        np.r_[np.zeros(20), 2.0], np.r_[np.ones(20), 0.0], loss_bound=4
    )
    assert high == pytest.approx(
        4 * z2 / (20 + z2)
    )  # an MAE sample without an accepted error: bound K - 1 = 4
    (low, high), method = selective_risk_interval([0.0, 1.0, 3.0, 3.0], np.ones(4), loss_bound=3)
    assert method.startswith("normal") and high == 3.0  # clipped at the bound
    with pytest.raises(
        ValueError, match="loss 100 exceeds loss_bound 1: the bound must be the largest loss"
    ):
        selective_risk_interval([0.0, 100.0], [1.0, 1.0], loss_bound=1)
    with pytest.raises(ValueError, match=r"loss_bound must be a finite number > 0 .* got 0"):
        selective_risk_interval([0.0], [1.0], loss_bound=0)
    with pytest.raises(TypeError, match="loss_bound"):
        selective_risk_interval([0.0], [1.0], 0.95)  # the scale is never guessed from the sample
