"""Tests for rejectopt.stats (Demsar 2006 statistics; the CD diagram is drawn by rejectopt.report)."""

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from rejectopt.stats import (
    average_ranks,
    cliques,
    friedman_test,
    nemenyi_cd,
    nemenyi_pairwise,
    nemenyi_q,
    rank_methods,
)


def random_table(n_datasets=11, n_methods=4, seed=0):
    rng = np.random.default_rng(seed)
    values = rng.random((n_datasets, n_methods)) + np.arange(n_methods) * 0.15
    return pd.DataFrame(values, index=[f"d{i}" for i in range(n_datasets)],
                        columns=[f"m{j}" for j in range(n_methods)])


# ---------------------------------------------------------------- Nemenyi CD
def test_nemenyi_cd_known_answers():
    assert round(nemenyi_cd(k=4, n=11, alpha=0.10), 2) == 1.26  # paper, Sec. 5.3
    assert round(nemenyi_cd(k=3, n=11, alpha=0.05), 2) == 1.00
    assert round(nemenyi_cd(k=3, n=11, alpha=0.10), 3) == 0.875


@pytest.mark.parametrize("k, alpha, q", [(3, 0.05, 2.343), (4, 0.05, 2.569),
                                         (3, 0.10, 2.052), (4, 0.10, 2.291)])
def test_nemenyi_q_matches_demsar_table(k, alpha, q):
    assert nemenyi_q(k, alpha) == pytest.approx(q, abs=1e-3)  # Demsar's table truncates


def test_nemenyi_cd_bad_input():
    with pytest.raises(ValueError, match="k"):
        nemenyi_cd(1, 11)
    with pytest.raises(ValueError, match="alpha"):
        nemenyi_cd(3, 11, alpha=1.5)


def test_nemenyi_pairwise_is_symmetric_pvalue_matrix():
    table = random_table()
    p = nemenyi_pairwise(table)
    assert list(p.index) == list(table.columns) == list(p.columns)
    np.testing.assert_allclose(p.to_numpy(), p.to_numpy().T)
    assert ((p.to_numpy() >= 0) & (p.to_numpy() <= 1)).all()


# ---------------------------------------------------------------- ranks
def test_ranks_with_ties_are_averaged():
    table = pd.DataFrame({"a": [0.1, 0.3], "b": [0.2, 0.3], "c": [0.2, 0.1]})
    ranks = rank_methods(table)
    np.testing.assert_array_equal(ranks.to_numpy(), [[1.0, 2.5, 2.5], [2.5, 2.5, 1.0]])
    pd.testing.assert_series_equal(
        average_ranks(table), pd.Series({"a": 1.75, "b": 2.5, "c": 1.75}, name="average_rank"))


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
    tie_term = 2 ** 3 - 2  # one pair of ties, in the first row
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
    assert cliques(ranks, cd=1.5) == [["A", "B", "C"], ["C", "D", "E"]]
    assert cliques(ranks, cd=1.25) == [["A", "B", "C"], ["D", "E"]]
    assert cliques(ranks, cd=0.5) == [["D", "E"]]  # 1.5 - 1.0 is not < 0.5
    assert cliques(ranks, cd=0.6) == [["A", "B"], ["D", "E"]]
    assert cliques(ranks, cd=0.05) == []
    assert cliques(ranks, cd=10) == [["A", "B", "C", "D", "E"]]
    with pytest.raises(ValueError, match="cd"):
        cliques(ranks, cd=0)
