"""Tests of certification_table's thinned listing (``max_cuts``, ``include``) and select's thresholds.csv.

A thinned table computes its bounds at the kept cuts only; each of its rows must be the full
table's row at that cut, bit for bit, and the cuts kept must be the documented ones.
"""

import io
import logging
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from rejectopt._certify._parameters import PARAMETERS
from rejectopt.cli._select import THRESHOLDS_MAX_CUTS, _thresholds_csv
from rejectopt.exceptions import InvalidParameterError
from rejectopt.selective import SelectionFunction
from rejectopt.targets import Target, certification_table


def _rows(n=3000, seed=0, ties=True):
    """Scores with ties (a tie group is one cut) and 0/100 losses whose rate grows with the score."""
    rng = np.random.default_rng(seed)
    s = rng.random(n)
    if ties:
        s = np.round(s, 3)
    return (rng.random(n) < 0.3 * s) * 100.0, s


def _full_rows_at(full, thinned):
    """The full table's rows at the thinned table's thresholds, indexed as the thinned one."""
    return full.set_index("threshold").loc[thinned["threshold"]].reset_index()


@pytest.mark.parametrize(
    ("target", "scale", "loss_bound"),
    [
        (Target("risk", 10, confidence=0.9), 1.0, None),  # 0/B: Clopper-Pearson, beta quantiles
        (Target("coverage", 0.6, confidence=0.95), 1.0, None),
        (Target("risk", 0.2, confidence=0.9), None, 1.0),  # losses in [0, 1]: Hoeffding-Bentkus
    ],
)
def test_thinned_rows_equal_the_full_tables_rows_at_those_cuts(target, scale, loss_bound):
    loss, s = _rows()
    if scale is None:
        loss = np.random.default_rng(1).random(s.size)
    full = certification_table(loss, s, target, loss_bound=loss_bound)
    include = [s[7], full["threshold"].iloc[3] + 1e-9]  # a score, and one between two scores
    thinned = certification_table(
        loss, s, target, loss_bound=loss_bound, max_cuts=37, include=include
    )
    assert len(full) > 37 + 2 and len(thinned) <= 37 + 2
    pd.testing.assert_frame_equal(thinned, _full_rows_at(full, thinned), check_exact=True)
    kept = set(thinned["threshold"])
    assert s[7] in kept and full["threshold"].iloc[4] in kept  # each include's cut
    assert thinned["n_accepted"].iloc[-1] == s.size  # the full set is always listed
    for i in range(1, 38):  # the first cut reaching each coverage i / 37 is listed
        first = full[full["n_accepted"] * 37 >= i * s.size].iloc[0]
        assert first["threshold"] in kept


def test_thinning_keeps_every_cut_when_there_are_few_and_by_default():
    loss, s = _rows(n=500)
    target = Target("risk", 10, confidence=0.9)
    full = certification_table(loss, s, target)
    distinct = np.unique(s).size
    assert len(full) == distinct
    pd.testing.assert_frame_equal(certification_table(loss, s, target, max_cuts=distinct), full)
    one = certification_table(loss, s, target, max_cuts=1)
    assert one["n_accepted"].tolist() == [s.size]  # one cut: the full set
    with_ties = certification_table(loss, np.round(s, 1), target, max_cuts=3)
    assert with_ties["n_accepted"].is_monotonic_increasing and len(with_ties) <= 3


@pytest.mark.parametrize("bad", [0, -3, 2.5, 10.0, True, "100", np.nan])
def test_max_cuts_is_checked_by_the_parameter_table(bad):
    loss, s = _rows(n=50)
    message = "certification_table: max_cuts must be None or an integer >= 1, got "
    with pytest.raises(InvalidParameterError, match=message):
        certification_table(loss, s, Target("risk", 10, confidence=0.9), max_cuts=bad)
    assert any(kind.accepts(np.int64(5)) for kind in PARAMETERS["max_cuts"])


def _fit(s, threshold):
    """What _thresholds_csv reads of a fit: the calibration rows, their scores, the selection."""
    return SimpleNamespace(
        parts={"calibration": np.arange(s.size)},
        uncertainty=s,
        selection=SelectionFunction(threshold=threshold, accept_prob=1.0),
    )


def test_selects_thresholds_csv_is_thinned_with_the_selected_cut_and_a_log_line(caplog):
    loss, s = _rows(n=4000, seed=3, ties=False)
    target = Target("risk", 10, confidence=0.9)
    threshold = np.sort(s)[1234]
    full = certification_table(loss, s, target)
    with caplog.at_level(logging.INFO, logger="rejectopt.cli._select"):
        text = _thresholds_csv(_fit(s, threshold), loss, target, None, max_cuts=50)
    thinned = pd.read_csv(io.StringIO(text.decode()))
    assert len(thinned) <= 53
    kept = full[full["n_accepted"].isin(thinned["n_accepted"])]  # no ties: a count names a cut
    assert len(kept) == len(thinned)
    assert text == kept.to_csv(index=False, float_format="%.10g").encode()
    assert {1234, 1235, 1236} <= set(thinned["n_accepted"])  # s < t, s <= t, the first refused
    assert f"thresholds.csv: {len(thinned)} of the 4000 cuts of the calibration rows" in caplog.text
    assert "certification_table lists every cut" in caplog.text


def test_selects_thresholds_csv_below_the_bound_is_the_full_table(caplog):
    loss, s = _rows(n=800, seed=4)
    target = Target("coverage", 0.5, confidence=0.9)
    with caplog.at_level(logging.INFO, logger="rejectopt.cli._select"):
        text = _thresholds_csv(_fit(s, np.median(s)), loss, target, None)
    full = certification_table(loss, s, target)
    assert text == full.to_csv(index=False, float_format="%.10g").encode()
    assert "cuts of the calibration rows" not in caplog.text
    assert np.unique(s).size < THRESHOLDS_MAX_CUTS
