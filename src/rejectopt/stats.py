"""Comparing methods over many datasets (Demsar 2006; Franc, Prusa & Voracek 2023, Sec. 5.3).

Per-dataset AuRC ranks, the Friedman test (with Iman-Davenport F), and the Nemenyi post-hoc
test with critical difference ``CD = q_alpha sqrt(k (k + 1) / (6 N))``; the groups it does not
separate are the bars of the CD diagram :mod:`rejectopt.pipeline.report` draws (the paper's Figs. 1, 3a).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import lazy_loader as _lazy
import numpy as np
import pandas as pd

from ._checks import check_open_unit
from ._params import CONFIDENCE, Interval, validate_params

#: scipy.stats, imported at its first use (heavy to import: ``benchmarks/import_costs_records.csv``;
#: a table job needs it, a figure job not).
_sps = _lazy.load("scipy.stats", suppress_warning=True)  # parent scipy is cheap

__all__ = [
    "FriedmanResult",
    "rank_methods",
    "average_ranks",
    "friedman_test",
    "nemenyi_q",
    "nemenyi_cd",
    "significant_pairs",
    "wilson_interval",
    "selective_risk_interval",
]


# --------------------------------------------------------------------------------------------
# Ranks
# --------------------------------------------------------------------------------------------
def _validate_table(table: Any) -> pd.DataFrame:
    if not isinstance(table, pd.DataFrame):
        raise ValueError(
            f"table must be a pandas DataFrame (datasets x methods), got {type(table).__name__}"
        )
    n_datasets, n_methods = table.shape
    if n_methods < 2:
        raise ValueError(f"need at least 2 methods (columns), got {n_methods}")
    if n_datasets < 1:
        raise ValueError("need at least 1 dataset (row), got 0")
    values = table.to_numpy(dtype=float)
    bad = ~np.isfinite(values)
    if bad.any():
        i, j = (int(v[0]) for v in np.nonzero(bad))
        raise ValueError(
            f"table must be finite; entry (dataset={table.index[i]!r}, method={table.columns[j]!r}) "
            f"= {values[i, j]}"
        )
    return table.astype(float)


def rank_methods(table: pd.DataFrame) -> pd.DataFrame:
    """Rank the methods within each dataset (Demsar 2006, Sec. 3.2.2).

    Parameters
    ----------
    table : pandas.DataFrame
        Rows = datasets, columns = methods, values = AuRC (smaller is better).

    Returns
    -------
    pandas.DataFrame
        Same shape; rank 1 = smallest value, tied values get the average of their ranks.

    Examples
    --------
    >>> import pandas as pd
    >>> rank_methods(pd.DataFrame({"sele": [1.0, 3.0], "mcp": [2.0, 2.0], "reg": [2.0, 4.0]}))
       sele  mcp  reg
    0   1.0  2.5  2.5
    1   2.0  1.0  3.0
    """
    table = _validate_table(table)
    return table.rank(axis=1, method="average", ascending=True)


def average_ranks(table: pd.DataFrame) -> pd.Series:
    """Average rank of each method over the datasets (``R_j`` in Demsar 2006).

    Parameters
    ----------
    table : pandas.DataFrame
        Datasets x methods, as in :func:`rank_methods`.

    Returns
    -------
    pandas.Series
        Indexed by method, in the column order of ``table``, named ``"average_rank"``.

    Examples
    --------
    >>> import pandas as pd
    >>> average_ranks(pd.DataFrame({"a": [0.1, 0.2, 0.5], "b": [0.3, 0.1, 0.6]})).round(3)
    a    1.333
    b    1.667
    Name: average_rank, dtype: float64
    """
    return rank_methods(table).mean(axis=0).rename("average_rank")


# --------------------------------------------------------------------------------------------
# Friedman test
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class FriedmanResult:
    """Friedman test and its Iman-Davenport correction (Demsar 2006, Sec. 3.2.2).

    Parameters
    ----------
    statistic : float
        ``chi2_F`` (:func:`_friedman_statistic`).
    pvalue : float
        Upper tail of chi-square with k - 1 degrees of freedom.
    iman_davenport_F, iman_davenport_pvalue : float
        ``F_F`` (inf when the ranks agree perfectly) and its F(k - 1, (k - 1)(N - 1)) tail.
    n_datasets, n_methods : int
        N and k.

    Examples
    --------
    >>> import pandas as pd
    >>> result = friedman_test(pd.DataFrame({"a": [1, 1, 1, 2.0], "b": [2, 2, 3, 1.0], "c": [3, 3, 2, 3.0]}))
    >>> result.statistic, result.n_datasets, result.n_methods
    (4.5, 4, 3)
    """

    statistic: float
    pvalue: float
    iman_davenport_F: float
    iman_davenport_pvalue: float
    n_datasets: int
    n_methods: int


def _friedman_statistic(avg_ranks: Any, n_datasets: int) -> float:
    """``chi2_F = 12 N / (k (k + 1)) [sum_j R_j^2 - k (k + 1)^2 / 4]`` (Demsar 2006, Sec. 3.2.2).

    Parameters
    ----------
    avg_ranks : array-like of shape (k,)
        Average rank of each method.
    n_datasets : int
        Number of datasets N the ranks average over.

    Returns
    -------
    float
        The Friedman statistic, chi-square with k - 1 degrees of freedom under the null.
    """
    ranks = np.asarray(avg_ranks, dtype=float)
    k, n = ranks.size, int(n_datasets)
    return float(12.0 * n / (k * (k + 1)) * (np.sum(ranks**2) - k * (k + 1) ** 2 / 4.0))


def _iman_davenport(chi2_f: float, n_datasets: int, n_methods: int) -> tuple[float, float]:
    """Iman-Davenport ``F_F = (N - 1) chi2_F / (N (k - 1) - chi2_F)``, p-value from F(k - 1, (k - 1)(N - 1)).

    Parameters
    ----------
    chi2_f : float
        Friedman's statistic (:func:`_friedman_statistic`).
    n_datasets, n_methods : int
        N and k.

    Returns
    -------
    (float, float)
        ``(inf, 0)`` when the ranks agree perfectly, ``(nan, nan)`` for fewer than 2 datasets.
    """
    n, k = int(n_datasets), int(n_methods)
    denominator = n * (k - 1) - chi2_f
    if n < 2:
        return float("nan"), float("nan")
    if denominator <= 1e-12 * n * (k - 1):
        return float("inf"), 0.0
    f_f = (n - 1) * chi2_f / denominator
    return float(f_f), float(_sps.f.sf(f_f, k - 1, (k - 1) * (n - 1)))


def friedman_test(table: pd.DataFrame) -> FriedmanResult:
    """Friedman test on a datasets x methods table, with the Iman-Davenport F statistic.

    Demsar's (2006) formula, *no* tie correction: with ties ``scipy.stats.friedmanchisquare``
    divides by ``1 - sum(t^3 - t) / (N k (k^2 - 1))`` and is larger; without, equal.

    Parameters
    ----------
    table : pandas.DataFrame
        Rows = datasets (N >= 2), columns = methods (k >= 2), values = AuRC.

    Returns
    -------
    FriedmanResult
        Friedman and Iman-Davenport statistics with p-values.

    Examples
    --------
    >>> import pandas as pd
    >>> table = pd.DataFrame({"sele": [1.0, 2.0, 3.0, 0.5], "mcp": [1.5, 2.5, 2.0, 0.9],
    ...                       "reg": [2.0, 3.0, 4.0, 0.9]})
    >>> result = friedman_test(table)
    >>> round(result.statistic, 3), round(result.pvalue, 4), round(result.iman_davenport_pvalue, 4)
    (5.375, 0.0681, 0.0353)
    """
    table = _validate_table(table)
    n, k = table.shape
    if n < 2:
        raise ValueError(f"the Friedman test needs at least 2 datasets (rows), got {n}")
    chi2_f = _friedman_statistic(average_ranks(table).to_numpy(), n)
    f_f, f_pvalue = _iman_davenport(chi2_f, n, k)
    return FriedmanResult(
        statistic=chi2_f,
        pvalue=float(_sps.chi2.sf(chi2_f, k - 1)),
        iman_davenport_F=f_f,
        iman_davenport_pvalue=f_pvalue,
        n_datasets=int(n),
        n_methods=int(k),
    )


# --------------------------------------------------------------------------------------------
# Nemenyi post-hoc test
# --------------------------------------------------------------------------------------------
#: The scalar parameters of the public functions of this module, declared once (``validate_params``).
_PARAMETERS = {
    "k": Interval(
        2, None, integer=True, closed="left", label="an integer >= 2 (number of methods)"
    ),
    "n": Interval(
        1, None, integer=True, closed="left", label="an integer >= 1 (number of datasets)"
    ),
    "alpha": Interval(0, 1),
    "confidence": CONFIDENCE,
    "cd": Interval(0, None),
    "loss_bound": Interval(
        0, None, label="a finite number > 0 (the largest loss a prediction can have)"
    ),
}


def _validate_k_n_alpha(owner: str, k: int, n: int, alpha: float) -> tuple[int, int, float]:
    validate_params(owner, {"k": k, "n": n, "alpha": alpha}, _PARAMETERS)
    return int(k), int(n), float(alpha)


def nemenyi_q(k: int, alpha: float = 0.05) -> float:
    """Nemenyi critical value ``q_alpha``: studentized-range quantile (df = inf) over sqrt(2).

    Reproduces Demsar's (2006) Table 5a, e.g. ``q_0.05 = 2.343`` (k=3), ``2.569`` (k=4).

    Parameters
    ----------
    k : int
        Number of methods (>= 2).
    alpha : float, default 0.05
        Significance level.

    Returns
    -------
    float
        ``q_alpha``.

    Examples
    --------
    >>> round(nemenyi_q(3), 3), round(nemenyi_q(4, alpha=0.10), 3)
    (2.344, 2.291)
    """
    k, _, alpha = _validate_k_n_alpha("nemenyi_q", k, 1, alpha)
    q_range = float(_sps.studentized_range.ppf(1.0 - alpha, k, np.inf))
    if not math.isfinite(q_range):  # fall back to a very large df if df=inf is unsupported
        q_range = float(_sps.studentized_range.ppf(1.0 - alpha, k, 1e7))
    return q_range / math.sqrt(2.0)


def nemenyi_cd(k: int, n: int, alpha: float = 0.05) -> float:
    """Critical difference of the Nemenyi test, ``CD = q_alpha sqrt(k (k + 1) / (6 N))``.

    Parameters
    ----------
    k, n : int
        Numbers of methods and of datasets N.
    alpha : float, default 0.05
        Significance level.

    Returns
    -------
    float
        E.g. 1.26 for k=4, N=11, alpha=0.10 (as the paper); for k=3 at alpha=0.10 the paper
        prints 0.98 where the formula gives 0.875 (``docs/papers.md``).

    Examples
    --------
    >>> round(nemenyi_cd(4, 11, alpha=0.10), 3)
    1.261
    """
    k, n, alpha = _validate_k_n_alpha("nemenyi_cd", k, n, alpha)
    return nemenyi_q(k, alpha) * math.sqrt(k * (k + 1) / (6.0 * n))


def _nemenyi_pairwise(table: pd.DataFrame) -> pd.DataFrame:
    """Pairwise Nemenyi p-values after a Friedman test (Demsar 2006, Sec. 3.2.2).

    Two methods' average ranks ``R_i, R_j`` over ``N`` datasets differ by
    ``z = |R_i - R_j| / sqrt(k (k + 1) / (6 N))`` standard errors; ``sqrt(2) z`` follows the
    studentized range of ``k`` normals (df = inf) under the null, whose tail gives the p-value: the
    pairwise form of the critical difference :func:`nemenyi_cd`. Equal to scikit-posthocs'
    ``posthoc_nemenyi_friedman`` (tests/test_stats.py keeps its values).

    Parameters
    ----------
    table : pandas.DataFrame
        Datasets (blocks) x methods (groups).

    Returns
    -------
    pandas.DataFrame
        Symmetric k x k p-values indexed by method, ones on the diagonal.
    """
    table = _validate_table(table)
    n, k = table.shape
    ranks = average_ranks(table).to_numpy()
    z = np.abs(ranks[:, None] - ranks[None, :]) / math.sqrt(k * (k + 1) / (6.0 * n))
    pvalues = _sps.studentized_range.sf(math.sqrt(2.0) * z, k, np.inf)
    np.fill_diagonal(pvalues, 1.0)
    return pd.DataFrame(pvalues, index=table.columns, columns=table.columns)


def significant_pairs(avg_ranks: pd.Series, cd: float) -> list[tuple[str, str]]:
    """Nemenyi verdict (Demsar 2006, Sec. 3.2.2): pairs whose average ranks differ by more than ``cd``.

    Parameters
    ----------
    avg_ranks : pandas.Series
        Average rank per method (index = method names).
    cd : float
        Critical difference (:func:`nemenyi_cd`); NaN (fewer than two datasets) gives no pairs.

    Returns
    -------
    list of (str, str)
        ``(better, worse)`` pairs in the order of ``avg_ranks``.

    Examples
    --------
    >>> import pandas as pd
    >>> ranks = pd.Series({"a": 1.36, "b": 2.36, "c": 2.73, "d": 3.55})
    >>> significant_pairs(ranks, cd=1.26)
    [('a', 'c'), ('a', 'd')]
    """
    if not np.isfinite(cd):
        return []
    return [
        (a, b) for a in avg_ranks.index for b in avg_ranks.index if avg_ranks[b] - avg_ranks[a] > cd
    ]


def cliques(avg_ranks: pd.Series, cd: float) -> list[list[str]]:
    """Maximal runs (>= 2 methods, in rank order) with ``max rank - min rank < cd``: the CD diagram's bars.

    Parameters
    ----------
    avg_ranks : pandas.Series
        Average rank per method (index = method names).
    cd : float
        Critical difference (> 0).

    Returns
    -------
    list of list of str
        Groups, and methods within them, in rank order.
    """
    validate_params("cliques", {"cd": cd}, _PARAMETERS)
    cd = float(cd)
    ranks = pd.Series(avg_ranks, dtype=float).sort_values(kind="stable")
    if ranks.isna().any():
        raise ValueError(f"avg_ranks contains NaN for {list(ranks.index[ranks.isna()])}")
    values = ranks.to_numpy()
    names = list(ranks.index)
    groups: list[list[str]] = []
    last_end = -1
    for start in range(values.size):
        end = int(np.searchsorted(values, values[start] + cd, side="left")) - 1
        if end > last_end and end > start:
            groups.append(names[start : end + 1])
        last_end = max(last_end, end)
    return groups


# --------------------------------------------------------------------------------------------
# Confidence intervals of a selective classifier's coverage and selective risk
# --------------------------------------------------------------------------------------------
def _z_value(confidence: float) -> float:
    confidence = check_open_unit(confidence, "confidence")
    return float(_sps.norm.ppf(0.5 + confidence / 2))


def wilson_interval(successes: float, n: float, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval of a binomial proportion ``successes / n``.

    Widened, if round-off requires, to contain ``successes / n``.

    Parameters
    ----------
    successes : float
        Number of successes; may be fractional (e.g. a randomized selection's accepted mass).
    n : float
        Number of trials; ``(nan, nan)`` is returned for ``n <= 0``.
    confidence : float, default 0.95
        Confidence level in (0, 1).

    Returns
    -------
    (float, float)
        Lower and upper bound, within [0, 1].

    Examples
    --------
    >>> low, high = wilson_interval(8, 100)
    >>> round(low, 4), round(high, 4)
    (0.0411, 0.15)
    """
    if n <= 0:  # no row: no interval, whatever the level
        return float("nan"), float("nan")
    validate_params("wilson_interval", {"confidence": confidence}, _PARAMETERS)
    z = _z_value(confidence)
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(max(p * (1 - p), 0.0) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, min(centre - half, p)), min(1.0, max(centre + half, p))


def _normal_interval(
    mean: float, variance: float, n: float, confidence: float = 0.95
) -> tuple[float, float]:
    """Normal-approximation interval ``mean +- z sqrt(variance / n)``.

    Parameters
    ----------
    mean, variance, n : float
        Sample mean, variance and size (> 0).
    confidence : float, default 0.95
        Confidence level in (0, 1).

    Returns
    -------
    (float, float)
        Lower and upper bound.
    """
    half = _z_value(confidence) * math.sqrt(variance / n)
    return mean - half, mean + half


def selective_risk_interval(
    loss: Any, accept_prob: Any, confidence: float = 0.95, *, loss_bound: float
) -> tuple[tuple[float, float], str]:
    """Confidence interval of the selective risk over the accepted rows, and its method.

    Rows are weighted by acceptance probability. Accepted losses in {0, ``loss_bound``} (the
    0/100 loss with bound 100, or no accepted loss at all): Wilson interval of the accepted
    error rate, times ``loss_bound``; others (e.g. MAE): normal approximation of the weighted
    mean, clipped to [0, ``loss_bound``].
    The bound comes from the loss's definition, never from the sample: a sample without an
    error still has an upper bound in the loss's units (0 errors of 20 rows: 16.11 %).

    Parameters
    ----------
    loss, accept_prob : array-like of shape (n,)
        Each row's loss (in [0, ``loss_bound``]) and acceptance probability.
    confidence : float, default 0.95
        Confidence level in (0, 1).
    loss_bound : float
        The largest loss a prediction can have: 100 for the 0/100 loss, K - 1 for the MAE
        on labels 0..K-1, a user loss's declared bound.

    Returns
    -------
    (low, high), method : tuple of float, str
        ``(nan, nan)`` and ``"none (nothing accepted)"`` when nothing is accepted.

    Raises
    ------
    ValueError
        ``loss_bound`` not a finite number > 0, or a loss above it.

    Examples
    --------
    >>> (low, high), method = selective_risk_interval([0, 100, 0, 0], [1, 1, 1, 0.5], loss_bound=100)
    >>> round(low, 2), round(high, 2), method
    (5.24, 74.33, 'Wilson score interval (95%) on the accepted rows')
    >>> round(selective_risk_interval([0.0] * 20, [1.0] * 20, loss_bound=100)[0][1], 2)
    16.11
    """
    validate_params("selective_risk_interval", {"loss_bound": loss_bound}, _PARAMETERS)
    bound = float(loss_bound)
    loss = np.asarray(loss, dtype=float)
    accept_prob = np.asarray(accept_prob, dtype=float)
    if loss.size and float(loss.max()) > bound:
        raise ValueError(
            f"loss {float(loss.max()):g} exceeds loss_bound {bound:g}: the bound must be the largest "
            "loss a prediction can have"
        )
    accepted = float(accept_prob.sum())
    if accepted <= 0:  # no accepted row: no interval, whatever the level
        return (float("nan"), float("nan")), "none (nothing accepted)"
    validate_params("selective_risk_interval", {"confidence": confidence}, _PARAMETERS)
    on = loss[accept_prob > 0]
    if np.all(
        (on == 0.0) | (on == bound)
    ):  # also an accepted sample without a loss: its bound is not 0
        low, high = wilson_interval(float(accept_prob @ (loss > 0)), accepted, confidence)
        return (
            low * bound,
            high * bound,
        ), f"Wilson score interval ({confidence:.0%}) on the accepted rows"
    mean = float(accept_prob @ loss) / accepted
    variance = float(accept_prob @ (loss - mean) ** 2) / max(accepted - 1.0, 1.0)
    low, high = _normal_interval(mean, variance, accepted, confidence)
    return (
        max(0.0, low),
        min(high, bound),
    ), f"normal approximation ({confidence:.0%}) on the accepted rows"


# --------------------------------------------------------------------------------------------
# Vectorised intervals of a mean of bounded losses (the risk-coverage bands of rejectopt.metrics)
# --------------------------------------------------------------------------------------------
def _empirical_bernstein(
    mean: Any, variance: Any, trials: Any, alpha: Any
) -> tuple[np.ndarray, np.ndarray]:
    """Empirical Bernstein interval of the mean of ``trials`` i.i.d. values in [0, 1], level ``1 - alpha``.

    Maurer & Pontil (2009), Theorem 4: with probability ``1 - d`` the mean is within
    ``sqrt(2 V ln(2/d) / k) + 7 ln(2/d) / (3 (k - 1))`` of the sample mean (``V`` the unbiased
    sample variance); each side at ``d = alpha / 2``. Valid at every ``k`` for any
    distribution on [0, 1], so conservative; clipped to [0, 1] (``k < 2``: [0, 1]).
    """
    mean, variance, k = np.broadcast_arrays(
        *(np.asarray(v, dtype=float) for v in (mean, variance, trials))
    )
    log_term = np.log(4.0 / np.broadcast_to(np.asarray(alpha, dtype=float), mean.shape))
    with np.errstate(invalid="ignore", divide="ignore"):
        half = np.sqrt(2.0 * np.maximum(variance, 0.0) * log_term / k) + 7.0 * log_term / (
            3.0 * (k - 1.0)
        )
    half = np.where(k >= 2, half, np.inf)
    return np.clip(mean - half, 0.0, 1.0), np.clip(mean + half, 0.0, 1.0)
