"""Group statistics in one sort, the Clopper-Pearson band on a grid, exact integer thresholds.

selective_report and the groups= metrics are checked against the plain per-group loop (one
mask per group, each metric on the group's rows); the band's grid against the exact
Clopper-Pearson interval at every point of the curve, and by a coverage simulation on a
population with known selective risk.
"""

import math

import numpy as np
import pandas as pd
import pytest

from rejectopt import metrics
from rejectopt._checks import clopper_pearson
from rejectopt.metrics import augrc, aurc, risk_at_coverage, selective_report
from rejectopt.metrics._bands import loss_kind, mean_interval
from rejectopt.metrics._risk_coverage import _group_labels
from rejectopt.selective import SelectionFunction


def _per_group_loop(loss, uncertainty, groups, accept, confidence=None, loss_bound=None):
    """The report as one mask per group: each number from its definition on the group's rows."""
    loss, uncertainty, groups = (
        np.asarray(loss, float),
        np.asarray(uncertainty, float),
        np.asarray(groups),
    )
    rows = [(label, groups == label) for label in np.unique(groups)] + [
        ("(all)", np.ones(loss.size, bool))
    ]
    records = []
    for label, mask in rows:
        mass, total = accept[mask].sum(), accept[mask] @ loss[mask]
        record = {
            "group": label,
            "n": int(mask.sum()),
            "coverage": mass / mask.sum(),
            "selective_risk": total / mass if mass > 0 else math.nan,
        }
        if confidence is not None:
            bound, binary = loss_kind(loss, loss_bound)
            low, high = (
                mean_interval(
                    np.array(total),
                    np.array(accept[mask] @ loss[mask] ** 2),
                    np.array(mass),
                    bound,
                    binary,
                    1 - confidence,
                )
                if mass > 0
                else (math.nan, math.nan)
            )
            record["risk_low"], record["risk_high"] = float(low), float(high)
        record["aurc"], record["augrc"] = (
            aurc(loss[mask], uncertainty[mask]),
            augrc(loss[mask], uncertainty[mask]),
        )
        records.append(record)
    return pd.DataFrame.from_records(records)


def _sample(rng, n, n_groups, binary):
    uncertainty = np.round(rng.random(n), 2)  # about n / 100 rows per tie
    loss = 100.0 * (rng.random(n) < uncertainty) if binary else 3.0 * rng.random(n) * uncertainty
    # every size class boundary: groups of 1, 2, 3, 4, 5, 8, 9, 16, 17 rows, then random labels
    fixed = np.repeat(np.arange(9), [1, 2, 3, 4, 5, 8, 9, 16, 17])
    groups = np.concatenate([fixed, rng.integers(9, 9 + n_groups, n - fixed.size)])
    return loss, uncertainty, rng.permutation(groups)


@pytest.mark.parametrize(
    "binary, selection", [(True, None), (True, 0.4), (False, SelectionFunction(0.5, 0.3))]
)
def test_report_equals_the_per_group_loop_on_many_groups_with_ties(binary, selection):
    rng = np.random.default_rng(0 if binary else 1)
    loss, uncertainty, groups = _sample(rng, 2500, 250, binary)
    loss_bound = None if binary else 3.0
    report = selective_report(
        loss, uncertainty, groups, selection=selection, confidence=0.9, loss_bound=loss_bound
    )
    if selection is None:
        accept = np.ones(loss.size)
    elif isinstance(selection, float):
        accept = (uncertainty <= selection).astype(float)
    else:
        accept = selection.acceptance_probability(uncertainty)
    expected = _per_group_loop(
        loss, uncertainty, groups, accept, confidence=0.9, loss_bound=loss_bound
    )
    assert report["group"].tolist() == expected["group"].tolist() and len(report) == 260
    assert report["n"].tolist() == expected["n"].tolist()
    for column in ("coverage", "selective_risk", "risk_low", "risk_high", "aurc", "augrc"):
        assert report[column].to_numpy() == pytest.approx(
            expected[column].to_numpy(), rel=1e-12, abs=1e-13, nan_ok=True
        ), column
    # the overall row is the whole sample's own metrics, to the last bit
    assert report["aurc"].iloc[-1] == aurc(loss, uncertainty) and report["augrc"].iloc[-1] == augrc(
        loss, uncertainty
    )


def test_groups_metrics_equal_the_per_group_loop_exactly():
    rng = np.random.default_rng(2)
    loss, uncertainty, groups = _sample(rng, 2000, 150, binary=True)
    labels = np.array([f"site {g:03d}" for g in groups])  # string labels: the sorting path
    for g in (groups, labels):
        by_group = aurc(loss, uncertainty, groups=g, ties="average")
        assert list(by_group) == np.unique(g).tolist()
        assert all(
            by_group[k] == aurc(loss[g == k], uncertainty[g == k], ties="average") for k in by_group
        )
        at = risk_at_coverage(loss, uncertainty, 0.7, groups=g)
        assert all(at[k] == risk_at_coverage(loss[g == k], uncertainty[g == k], 0.7) for k in at)


@pytest.mark.parametrize(
    "groups",
    [
        np.array([5, -3, 5, 7, -3, 1000]),
        np.array([3, 1, 3], dtype=np.uint8),
        np.array([2**63 + 5, 7, 2**63 + 5], dtype=np.uint64),  # spread: sorted
        np.array(["b", "a", "b"]),
        np.array([0.5, 0.25, 0.5]),
    ],
)
def test_group_labels_are_those_of_np_unique(groups):
    labels, inverse = _group_labels(groups, groups.size)
    unique, expected = np.unique(groups, return_inverse=True)
    assert labels == unique.tolist() and [type(v) for v in labels] == [
        type(v) for v in unique.tolist()
    ]
    assert np.array_equal(inverse, expected)


def test_missing_labels_are_found_in_one_pass_and_named_by_row():
    for groups, row, count in [
        (np.array(["a", None, "b", None], dtype=object), 1, 2),
        (np.array(["a", "b", pd.NA], dtype=object), 2, 1),
        (np.array(["2024-01-01", "NaT", "NaT"], dtype="datetime64[D]"), 1, 2),
    ]:
        with pytest.raises(
            ValueError, match=f"missing label \\(None or NaN\\) at row {row} \\({count} in all\\)"
        ):
            selective_report(np.zeros(groups.size), np.arange(groups.size), groups)


def test_a_group_named_like_the_overall_row_is_refused():
    with pytest.raises(
        ValueError,
        match="groups: the label '\\(all\\)' is the name of the report's overall row; "
        "rename that group",
    ):
        selective_report([0, 100, 0], [1, 2, 3], ["(all)", "a", "a"])
    # other labels, and aurc's dict (no overall entry), are unaffected
    assert selective_report([0, 100, 0], [1, 2, 3], ["all", "a", "a"])["group"].tolist() == [
        "a",
        "all",
        "(all)",
    ]
    assert aurc([0, 100, 0], [1, 2, 3], groups=["(all)", "a", "a"]) == {"(all)": 0.0, "a": 75.0}


def test_an_integer_threshold_compares_exactly_beyond_2_to_the_53():
    big = np.array([2**62 + 1, 2**62 + 3])  # one float64 value, 2**62, for both
    report = selective_report([0, 100], big, selection=2**62 + 2)
    assert report["coverage"].iloc[0] == 0.5 and report["selective_risk"].iloc[0] == 0.0
    # a float threshold is read as the number it is: 2**62 exactly, below both scores
    assert selective_report([0, 100], big, selection=float(2**62))["coverage"].iloc[0] == 0.0
    assert selective_report([0, 100], big, selection=np.int64(2**62 + 3))["coverage"].iloc[0] == 1.0
    assert (
        selective_report([0, 100], big.astype(np.uint64), selection=2**62 + 2)["coverage"].iloc[0]
        == 0.5
    )
    huge = [2**64 + 1, 2**64 + 3]  # beyond int64: Python ints, compared as such
    assert selective_report([0, 100], huge, selection=2**64 + 2)["coverage"].iloc[0] == 0.5
    assert (
        selective_report([0, 100], huge, selection=np.float64(2**64))["coverage"].iloc[0] == 0.0
    )  # not 1
    assert selective_report([0, 100], big, selection=2**70)["coverage"].iloc[0] == 1.0
    assert selective_report([0, 100], big, selection=-math.inf)["coverage"].iloc[0] == 0.0
    with pytest.raises(
        ValueError, match="integers beyond 2\\*\\*53, which a selection function's float threshold"
    ):
        selective_report([0, 100], big, selection=SelectionFunction(2**62 + 2, 1.0))
    # small integers and floats as before
    assert selective_report([0, 100, 0], [1, 2, 3], selection=2)["coverage"].iloc[
        0
    ] == pytest.approx(2 / 3)
    assert selective_report([0, 100, 0], [0.1, 0.2, 0.3], selection=0.2)["coverage"].iloc[
        0
    ] == pytest.approx(2 / 3)


@pytest.mark.parametrize("simultaneous", [False, True])
def test_band_on_the_grid_contains_the_exact_clopper_pearson_band(simultaneous):
    rng = np.random.default_rng(4)
    n = 30_000  # counts up to 30,000: the grid's cells are up to 10 counts wide
    uncertainty = rng.random(n)
    loss = 100.0 * (rng.random(n) < 0.02 + 0.9 * uncertainty)
    band = metrics.risk_coverage_band(loss, uncertainty, confidence=0.9, simultaneous=simultaneous)
    errors = np.cumsum(loss[np.argsort(uncertainty)] / 100.0)
    counts = np.arange(1, n + 1.0)
    alpha = (1 - 0.9) / (n if simultaneous else 1)  # as the band computes it
    low, high = clopper_pearson(errors, counts, alpha)
    low, high = 100 * low, 100 * high
    assert np.all(band.lower <= low) and np.all(band.upper >= high)
    width = high - low
    assert (
        np.max((low - band.lower) / width) < 0.035 and np.max((band.upper - high) / width) < 0.035
    )
    from scipy.stats import norm

    exact = (
        counts < 1 / (2 * 0.02 * norm.isf(alpha / 2)) ** 2
    )  # cells narrower than one count: no grid
    assert exact.sum() == (231 if not simultaneous else 28)
    assert np.array_equal(band.lower[exact], low[exact]) and np.array_equal(
        band.upper[exact], high[exact]
    )


@pytest.mark.slow
def test_band_on_the_grid_covers_the_selective_risk_at_its_nominal_level():
    """s ~ U(0, 1), error probability 0.05 + 0.4 s: R(t) = 0.05 + 0.2 t, with the grid in use (n = 6000)."""
    rng = np.random.default_rng(6)
    reps, n, k = 300, 6000, 2999  # the point at coverage 1/2: about 2,700 correct rows, on the grid
    pointwise, whole = [], []
    for _ in range(reps):
        s = rng.random(n)
        loss = (rng.random(n) < 0.05 + 0.4 * s).astype(float)
        truth = 0.05 + 0.2 * np.sort(s)
        band = metrics.risk_coverage_band(loss, s)
        pointwise.append(band.lower[k] <= truth[k] <= band.upper[k])
        together = metrics.risk_coverage_band(loss, s, simultaneous=True)
        whole.append(np.all((together.lower <= truth) & (truth <= together.upper)))
    tolerance = 3 * math.sqrt(0.95 * 0.05 / reps)
    assert np.mean(pointwise) >= 0.95 - tolerance and np.mean(whole) >= 0.95 - tolerance


def test_report_on_more_groups_than_a_16_bit_code_known_answer():
    # 70,000 groups of two rows (beyond the radix sort's 65,536 codes): each pair's areas by hand
    rng = np.random.default_rng(8)
    pairs = 70_000
    loss = 100.0 * rng.integers(0, 2, (pairs, 2))
    uncertainty = rng.integers(0, 3, (pairs, 2)).astype(float)  # a third of the pairs tie
    order = rng.permutation(2 * pairs)  # rows shuffled, each pair's labels kept
    groups = np.repeat(np.arange(pairs), 2)
    report = selective_report(loss.ravel()[order], uncertainty.ravel()[order], groups[order])
    # the first accepted is the less uncertain; on a tie the earlier row of the shuffled order
    position = np.argsort(order).reshape(pairs, 2)
    first_is_0 = (uncertainty[:, 0] < uncertainty[:, 1]) | (
        (uncertainty[:, 0] == uncertainty[:, 1]) & (position[:, 0] < position[:, 1])
    )
    l1, l2 = (
        np.where(first_is_0, loss[:, 0], loss[:, 1]),
        np.where(first_is_0, loss[:, 1], loss[:, 0]),
    )
    tie = uncertainty[:, 0] == uncertainty[:, 1]
    assert np.array_equal(report["aurc"].to_numpy()[:-1], (l1 + (l1 + l2) / 2) / 2)
    assert np.array_equal(
        report["augrc"].to_numpy()[:-1], np.where(tie, (l1 + l2) / 4, (1.5 * l1 + 0.5 * l2) / 4)
    )
    assert report["n"].iloc[-1] == 2 * pairs and report["group"].iloc[-2] == pairs - 1
