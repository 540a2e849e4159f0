"""The risk-coverage metrics as other libraries compute them: one function per (convention, metric).

Every function takes validated float64 arrays ``loss`` (non-negative) and ``uncertainty``
(larger = more uncertain; the libraries' confidence is ``-uncertainty``) and returns a float
in loss units (fd-shifts' display factor 1000 is not applied). The arithmetic follows each
library's own code step by step (sequential sums where the library loops, its rounding of
the coverage grid, its comparisons), so the values agree with the libraries' to round-off;
``tests/data/metric_conventions_golden.json`` holds the libraries' own values and
``benchmarks/golden/make_convention_golden.py`` the code that made them.

Ties. Every library here sorts the examples by confidence; when several examples share a
score the libraries that walk the sorted examples one by one (all but fd-shifts) depend on
the order their sort leaves the tied examples in. NumPy's default ``argsort`` and
``torch.argsort`` are not stable sorts, so on tied scores the libraries' own values can change
with the platform, the library version and the array's length. Here ``ties="index"`` sorts
stably in the library's direction, so among tied examples the input order decides (what the
library computes whenever its sort keeps equal keys in place), and ``ties="average"``
replaces the losses of every tie group by the group's mean: the cumulative losses become the
expected ones under a uniformly random order inside each group, so every metric that is
linear in them -- all areas and the risk at a coverage -- is the exact expectation over the
orders of the tied examples; a coverage at a risk is read on that expected curve.
"""

from __future__ import annotations

import math

import numpy as np

#: The conventions, ``paper`` first (the default of :mod:`rejectopt.metrics`).
CONVENTIONS = (
    "paper",
    "fd-shifts",
    "fd-shifts-legacy",
    "geifman",
    "torch-uncertainty",
    "mapie",
    "probly",
)

#: Where each convention comes from (named in error messages and the docs).
SOURCES = {
    "paper": "eq. (27) of Franc, Prusa & Voracek (JMLR 2023)",
    "fd-shifts": "fd-shifts' RiskCoverageStats (fd_shifts/analysis/rc_stats.py)",
    "fd-shifts-legacy": "fd-shifts' legacy StatsCache metrics (fd_shifts/analysis/metrics.py, legacy=True)",
    "geifman": "Geifman & El-Yaniv's RC_curve (uncertainty_ICLR, utils/uncertainty_tools.py)",
    "torch-uncertainty": "torch-uncertainty's AURC / AUGRC / RiskAtxCov / CovAtxRisk",
    "mapie": "MAPIE's auarc (mapie.metrics.uncertainty), as 1 - AUARC",
    "probly": "probly's selective_prediction (probly.evaluation.tasks), n_bins=50",
}

#: The metrics each convention defines; asking another raises ValueError.
DEFINED = {
    "paper": ("aurc", "augrc", "eaurc", "eaugrc", "risk_at_coverage", "coverage_at_risk"),
    "fd-shifts": ("aurc", "augrc", "eaurc", "eaugrc", "risk_at_coverage", "coverage_at_risk"),
    "fd-shifts-legacy": ("aurc", "eaurc"),
    "geifman": ("aurc", "eaurc"),
    "torch-uncertainty": ("aurc", "augrc", "risk_at_coverage", "coverage_at_risk"),
    "mapie": ("aurc",),
    "probly": ("aurc",),
}

#: Conventions whose values depend on the order of tied examples (``ties`` matters).
ORDER_DEPENDENT = ("paper", "fd-shifts-legacy", "geifman", "torch-uncertainty", "mapie", "probly")


def check(convention, metric):
    """Raise ValueError unless ``convention`` is known and defines ``metric``."""
    if not isinstance(convention, str) or convention not in CONVENTIONS:
        raise ValueError(
            f"convention must be one of {', '.join(map(repr, CONVENTIONS))}; got {convention!r}"
        )
    if metric not in DEFINED[convention]:
        having = [c for c in CONVENTIONS if metric in DEFINED[c]]
        raise ValueError(
            f"convention {convention!r} ({SOURCES[convention]}) does not define {metric}; "
            f"the conventions that do: {', '.join(map(repr, having))}"
        )


def tie_means(loss, uncertainty):
    """Each loss replaced by the mean loss of its tie group (examples of equal uncertainty)."""
    _, group = np.unique(uncertainty, return_inverse=True)
    sums = np.bincount(group, weights=loss)
    return (sums / np.bincount(group))[group]


def _sequential_sum(values):
    """Left-to-right float sum, as Python's ``sum`` over an array (the libraries' loops)."""
    return float(np.add.accumulate(values)[-1]) if values.size else 0.0


def _remaining_sums(sorted_loss):
    """Loss sum left after removing the first ``i`` sorted examples, i = 0..n-1, by repeated subtraction."""
    total = _sequential_sum(sorted_loss)
    return np.subtract.accumulate(np.concatenate(([total], sorted_loss[:-1])))


def _trapezoid(y, x):
    """``numpy.trapezoid(y, x)`` (the same expression, so the same rounding)."""
    return float(np.add.reduce(np.diff(x) * (y[1:] + y[:-1]) / 2.0))


def _ascending_confidence(loss, uncertainty):
    """Losses and confidences sorted by confidence ascending, stably (ties keep the input order)."""
    order = np.argsort(-uncertainty, kind="stable")
    return loss[order], -uncertainty[order]


def _descending_confidence(loss, uncertainty):
    """Losses sorted by confidence descending, stably (ties keep the input order)."""
    return loss[np.argsort(uncertainty, kind="stable")]


# --------------------------------------------------------------------------------------------
# fd-shifts: RiskCoverageStats (points only between distinct scores, trapezoid, coverage-0 point)
# --------------------------------------------------------------------------------------------
def _fd_curve(loss, uncertainty, generalized):
    """fd-shifts' ``selective_risk_stats`` / ``generalized_risk_stats``: coverages, risks, working points.

    Examples are removed least confident first; a point is placed after the last example of
    each tie group, plus ``(1, L(n)/n)`` and a coverage-0 point (risk repeated for the
    selective risk, 0 for the generalized one). A point is a working point when its risk is
    strictly below every risk at a higher coverage.
    """
    r, c = _ascending_confidence(loss, uncertainty)
    n = r.size
    remaining = _remaining_sums(r)  # remaining[i + 1]: after removing i + 1 examples
    at = np.flatnonzero(c[:-1] != c[1:])  # i with a point after removing examples 0..i
    kept = n - 1 - at
    risks = np.concatenate(
        ([remaining[0] / n], remaining[at + 1] / (kept if not generalized else n))
    )
    coverages = np.concatenate(([1.0], kept / n, [0.0]))
    working = [True]
    lowest = risks[0]
    for risk in risks[1:]:
        working.append(bool(risk < lowest))
        lowest = min(lowest, risk)
    if generalized:
        working.append(bool(risks[-1] > 0))
        risks = np.concatenate((risks, [0.0]))
    else:
        working.append(False)
        risks = np.concatenate((risks, [risks[-1]]))
    return coverages, risks, np.asarray(working)


def _fd_area(loss, uncertainty, generalized):
    coverages, risks, _ = _fd_curve(loss, uncertainty, generalized)
    return -_trapezoid(risks, coverages)


def _is_binary(loss):
    return bool(np.all((loss == 0) | (loss == 1)))


def _fd_optimal(loss, generalized):
    """fd-shifts' ``aurc_optimal`` / ``augrc_optimal``: closed forms for 0/1 losses, else the sorted losses."""
    if _is_binary(loss):
        err = np.mean(loss)
        if generalized:
            return float(0.5 * err**2)
        return float(err + (1 - err) * np.log(1 - err + np.finfo(err.dtype).eps))
    ordered = np.sort(loss)  # the oracle: confidences linspace(1, 0, n) on the ascending losses
    return _fd_area(ordered, np.arange(ordered.size, dtype=np.float64), generalized)


def fd_shifts(metric, loss, uncertainty, coverage=None, risk=None):
    if metric == "aurc":
        return _fd_area(loss, uncertainty, False)
    if metric == "augrc":
        return _fd_area(loss, uncertainty, True)
    if metric == "eaurc":
        return _fd_area(loss, uncertainty, False) - _fd_optimal(loss, False)
    if metric == "eaugrc":
        return _fd_area(loss, uncertainty, True) - _fd_optimal(loss, True)
    coverages, risks, working = _fd_curve(loss, uncertainty, False)
    coverages, risks = coverages[working], risks[working]
    if (
        metric == "risk_at_coverage"
    ):  # get_working_point(target_cov): the lowest risk at coverage >= target
        return float(risks[coverages >= coverage].min())
    admissible = (
        risks <= risk
    )  # get_working_point(target_risk): the largest coverage at risk <= target
    if not admissible.any():
        raise ValueError(
            f"convention 'fd-shifts': no working point of the risk-coverage curve has a selective "
            f"risk <= {risk!r} (the lowest is {risks.min()!r}); fd-shifts' get_working_point fails here too"
        )
    return float(coverages[admissible].max())


def partial_trapezoid(coverages, risks, low, high):
    """Area under the polyline through ``(coverages, risks)`` (any order) between ``low`` and ``high``."""
    order = np.argsort(coverages, kind="stable")
    x, y = np.asarray(coverages, dtype=float)[order], np.asarray(risks, dtype=float)[order]
    grid = np.concatenate(([low], x[(x > low) & (x < high)], [high]))
    return _trapezoid(np.interp(grid, x, y), grid)


def _hyperbola_area(k_low, s_low, k_high, s_high, x1, x2):
    """``int_{x1}^{x2} Lbar(x) / x dx`` with ``Lbar`` linear from ``(k_low, s_low)`` to ``(k_high, s_high)``.

    With slope ``mu``: ``mu (x2 - x1) + (s_low - k_low mu) ln(x2 / x1)``; from ``k_low = 0`` the
    risk is the constant ``mu`` (the line passes through the origin).
    """
    mu = (s_high - s_low) / (k_high - k_low)
    if k_low == 0:
        return mu * (x2 - x1)
    return mu * (x2 - x1) + (s_high * k_low - s_low * k_high) / (k_low - k_high) * math.log(x2 / x1)


def fd_shifts_partial(metric, loss, uncertainty, low, high):
    """fd-shifts' area between coverages ``low`` < ``high``: ``evaluate_auc(cov_min, cov_max)``.

    AURC: fd-shifts' ``interpolation="non-linear"``, the only one it defines on a sub-range:
    between two points of its curve the accepted loss is linear in the coverage, so the
    selective risk is ``Lbar(x) / x`` (:func:`_hyperbola_area`), constant from coverage 0 to its
    lowest point. fd-shifts' own quirk is kept: when no point of its curve lies in
    ``[low, high]`` and one lies below ``low`` (both ends inside one segment ``(c0, c1)``,
    ``c0 > 0``), its single-segment formula takes the upper end as the fraction ``high / c1``
    of the segment and places it at ``c1 + (c1 - c0) high / c1`` in the logarithm, so the value
    is not the area there (the area would be :func:`_hyperbola_area` from ``low`` to ``high``).
    AUGRC: fd-shifts raises NotImplementedError; here the trapezoid of its generalized curve
    clipped to the range (what its linear interpolation gives on [0, 1]).
    """
    coverages, risks, _ = _fd_curve(loss, uncertainty, metric == "augrc")
    if metric == "augrc":
        return partial_trapezoid(coverages, risks, low, high)
    n = loss.size
    counts = coverages[:-1][::-1] * n  # ascending, without fd-shifts' coverage-0 point
    sums = risks[:-1][::-1] * counts
    counts, sums = np.concatenate(([0.0], counts)), np.concatenate(([0.0], sums))
    x1, x2 = low * n, high * n
    if not np.any(
        (counts >= x1) & (counts <= x2)
    ):  # both ends inside one segment (x1 > 0: 0 is a point)
        j = int(np.searchsorted(counts, x1))
        k0, s0, k1, s1 = counts[j - 1], sums[j - 1], counts[j], sums[j]
        if k0 == 0:
            return _hyperbola_area(k0, s0, k1, s1, x1, x2) / n
        # fd-shifts' single-segment branch: fractions (x1 - k0)/(k1 - k0) and x2/k1 of the segment, the
        # upper one measured from k1 in the logarithm (its quirk; correct would be (x2 - k0)/(k1 - k0) from k0)
        lower, upper = (x1 - k0) / (k1 - k0), x2 / k1
        return (
            (s1 - s0) * (upper - lower)
            + (s0 * k1 - s1 * k0) * math.log((k1 + (k1 - k0) * upper) / x1) / (k1 - k0)
        ) / n
    area = 0.0
    for j in range(1, counts.size):
        a, b = max(counts[j - 1], x1), min(counts[j], x2)
        if a < b:
            area += _hyperbola_area(counts[j - 1], sums[j - 1], counts[j], sums[j], a, b)
    return area / n


# --------------------------------------------------------------------------------------------
# fd-shifts legacy: StatsCache.rc_curve_stats and the aurc / e-aurc metric functions
# --------------------------------------------------------------------------------------------
def fd_shifts_legacy(metric, loss, uncertainty):
    """Legacy fd-shifts: after removing ``i + 1`` examples the risk is ``L/(n - 1 - i)``, a point is
    kept when the removed example starts a new score (and always for the first one), each with
    the weight of the examples removed since the previous point; AURC is the weighted mean of
    consecutive risk pairs. E-AURC subtracts ``e + (1 - e) ln(1 - e + eps)``, ``e`` the mean loss.
    """
    r, c = _ascending_confidence(loss, uncertainty)
    n = r.size
    remaining = _remaining_sums(r)
    starts = np.ones(
        max(n - 1, 0), dtype=bool
    )  # removal i (0..n-2) keeps a point: i == 0 or a new score
    starts[1:] = c[1 : n - 1] != c[: n - 2]
    at = np.flatnonzero(starts)
    risks = np.concatenate(([remaining[0] / n], remaining[at + 1] / (n - 1 - at)))
    weights = np.diff(np.concatenate(([-1], at))) / n
    tail = (n - 2) - (at[-1] if at.size else -1)
    if tail > 0:
        risks = np.concatenate((risks, [risks[-1]]))
        weights = np.concatenate((weights, [tail / n]))
    area = _sequential_sum(
        (risks[:-1] + risks[1:]) * 0.5 * weights
    )  # 0.0 for n = 1: no pair of risks
    if metric == "aurc":
        return area
    err = np.mean(loss)
    with np.errstate(divide="ignore", invalid="ignore"):
        return float(area - (err + (1 - err) * np.log(1 - err + np.finfo(err.dtype).eps)))


def _zero_one_reference(convention, loss):
    """The scale ``m`` that makes ``loss / m`` fit Geifman's oracle ``e + (1 - e) ln(1 - e)``, or refuse.

    That reference is the continuous-limit AuRC of the oracle for 0/1 errors; their AURC is
    linear in the losses, so losses in {0, m}, m > 1 (the 0/100 loss: m = 100) are evaluated as
    0/1 errors and the excess scaled back by ``m``. Losses in [0, 1] get the libraries' own value
    (for graded ones it can be negative: the reference is not their oracle); others are refused.
    """
    values = np.unique(loss)
    if values[-1] <= 1.0:
        return 1.0
    if values.size == 2 and values[0] == 0.0:
        return float(values[-1])
    raise ValueError(
        f"convention {convention!r}: its E-AuRC subtracts e + (1 - e) ln(1 - e), the oracle AuRC of 0/1 "
        f"errors, which is undefined for losses above 1 that are not 0/m errors (got values "
        f"{values[:5].tolist()}{'...' if values.size > 5 else ''}, e.g. an absolute error); use "
        "convention 'paper' or 'fd-shifts', whose oracle is the sorted losses themselves"
    )


# --------------------------------------------------------------------------------------------
# Geifman & El-Yaniv: RC_curve of utils/uncertainty_tools.py
# --------------------------------------------------------------------------------------------
def geifman(metric, loss, uncertainty):
    """One point per removed example, risk ``L / (n - i)`` after removing ``i + 1`` (one more than the
    examples left), AUC the mean of the ``n`` risks; E-AURC subtracts ``e + (1 - e) ln(1 - e)``
    (NaN when every loss is 1, as the original)."""
    r, _ = _ascending_confidence(loss, uncertainty)
    n = r.size
    remaining = _remaining_sums(r)
    risks = np.concatenate(([remaining[0] / n], remaining[1:] / (n - np.arange(n - 1))))
    area = _sequential_sum(risks) / n
    if metric == "aurc":
        return area
    err = np.mean(loss)
    with np.errstate(divide="ignore", invalid="ignore"):
        return float(area - (err + (1 - err) * np.log(1 - err)))


# --------------------------------------------------------------------------------------------
# torch-uncertainty: AURC, AUGRC, RiskAtxCov, CovAtxRisk
# --------------------------------------------------------------------------------------------
def torch_uncertainty(metric, loss, uncertainty, coverage=None, risk=None):
    """Selective risks at coverages ``k/N``, k = 1..N (no coverage-0 point); the areas are the
    trapezoid over them divided by ``1 - 1/N`` (NaN for N < 2, as the library); the risk at a
    coverage is the risk at ``ceil(N coverage)``; the coverage at a risk the largest ``k/N`` whose
    risk is <= it (NaN when none is)."""
    e = _descending_confidence(loss, uncertainty)
    n = e.size
    rates = np.cumsum(e) / np.arange(1, n + 1, dtype=np.float64)
    if metric == "risk_at_coverage":
        return float(rates[math.ceil(n * coverage) - 1])
    if metric == "coverage_at_risk":
        admissible = np.flatnonzero(rates <= risk)
        return float((admissible[-1] + 1) / n) if admissible.size else float("nan")
    if n < 2:
        return float("nan")
    cov = np.arange(1, n + 1) / n
    y = rates if metric == "aurc" else rates * cov
    return _trapezoid(y, cov) / (1 - 1 / n)


# --------------------------------------------------------------------------------------------
# MAPIE: auarc (mean accuracy of the k most confident, k = 1..n), AURC = 1 - AUARC
# --------------------------------------------------------------------------------------------
def mapie(metric, loss, uncertainty, original_loss):
    """1 - MAPIE's AUARC; MAPIE takes correctness ``1 - loss`` and refuses anything but 0/1."""
    if not _is_binary(original_loss):
        raise ValueError(
            "convention 'mapie' (MAPIE's auarc) takes 0/1 losses only (correctness = 1 - loss), got "
            f"values {np.unique(original_loss)[:5].tolist()}...; pass 0/1 errors (e.g. the 0/100 "
            "loss divided by 100) or choose another convention"
        )
    correct = (1.0 - loss)[np.argsort(uncertainty, kind="stable")]
    accuracy = np.cumsum(correct) / np.arange(1, correct.size + 1, dtype=float)
    return 1.0 - float(np.mean(accuracy))


# --------------------------------------------------------------------------------------------
# probly: selective_prediction (binned curve on a 0..1 grid of n_bins points)
# --------------------------------------------------------------------------------------------
#: probly's default number of points of its binned curve.
PROBLY_BINS = 50


def probly(metric, loss, uncertainty):
    """probly's ``selective_prediction``: the mean loss of the rows left after rejecting the
    ``i * (n // 50)`` most uncertain, i = 0..49, trapezoid over ``linspace(0, 1, 50)``.

    Its quirks are kept: the grid places point ``i`` at ``i / 49`` whatever share of the rows it
    rejected (``n // 50`` rows per step, so the last point keeps ``n - 49 (n // 50)`` rows, not
    ``n / 50``), and it refuses fewer than 50 rows. It sorts by ``argsort(uncertainty)[::-1]``;
    among tied uncertainties the later input row is rejected first here (a stable sort
    reversed), what NumPy's ``argsort`` gives whenever it keeps equal keys in place.
    """
    n = loss.size
    if n < PROBLY_BINS:
        raise ValueError(
            f"convention 'probly' ({SOURCES['probly']}) needs at least {PROBLY_BINS} rows "
            f"(one per point of its curve), got {n}; probly refuses them too"
        )
    del metric  # probly defines the AURC only (check() has refused the others)
    ordered = loss[np.argsort(uncertainty, kind="stable")[::-1]]
    step = n // PROBLY_BINS
    # one np.mean per point, as probly's loop (the same pairwise sums, so the same rounding)
    means = np.array([np.mean(ordered[i * step :]) for i in range(PROBLY_BINS)])
    return _trapezoid(means, np.linspace(0, 1, PROBLY_BINS))


def evaluate(metric, loss, uncertainty, convention, ties, coverage=None, risk=None):
    """``metric`` of validated ``(loss, uncertainty)`` under a non-paper ``convention``."""
    check(convention, metric)
    original = loss
    if ties == "average" and convention in ORDER_DEPENDENT:
        loss = tie_means(loss, uncertainty)
    if convention == "fd-shifts":
        return fd_shifts(metric, loss, uncertainty, coverage, risk)
    if convention in ("fd-shifts-legacy", "geifman"):
        function = fd_shifts_legacy if convention == "fd-shifts-legacy" else geifman
        scale = _zero_one_reference(convention, original) if metric == "eaurc" else 1.0
        return scale * function(metric, loss / scale, uncertainty)
    if convention == "torch-uncertainty":
        return torch_uncertainty(metric, loss, uncertainty, coverage, risk)
    if convention == "probly":
        return probly(metric, loss, uncertainty)
    return mapie(metric, loss, uncertainty, original)
