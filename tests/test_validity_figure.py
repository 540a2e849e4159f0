"""The validity figure's legend reports what the draws hold: violations among the granted draws
and the refused draws beside them (a refused draw accepts nothing, so it cannot violate)."""

import re

import numpy as np
import pytest

from rejectopt._checks import clopper_pearson
from rejectopt.targets import Target, validate_target

pytest.importorskip("matplotlib")

ENTRY = re.compile(
    r"(?P<method>[\w-]+): violated (?P<violations>\d+) of (?P<granted>\d+) granted draws"
    r"(?: = (?P<rate>[\d.]+)% \[(?P<low>[\d.]+)%, (?P<high>[\d.]+)%\])?; "
    r"refused (?P<refused>\d+) of (?P<draws>\d+) \((?P<share>[\d.]+)%\)"
)


def _entries(check):
    texts = [t.get_text() for t in check.plot().axes[0].get_legend().get_texts()]
    matches = [ENTRY.fullmatch(text) for text in texts]
    return {m["method"]: m for m in matches if m}, texts


def test_the_legend_counts_the_refused_draws_and_the_violations_among_the_granted():
    # a target the method refuses on a sizeable share of draws (about a third here) and grants
    # on the rest: the counts below are read back from the draws, whatever the share
    rng = np.random.default_rng(0)
    u = rng.random(400)
    loss = 100.0 * (rng.random(400) < u / 2)
    check = validate_target(loss, u, Target("risk", 14, confidence=0.9), repeats=60)
    entries, texts = _entries(check)
    assert set(entries) == {"certified", "plug-in"}, texts
    for method, rows in check.draws.groupby("method"):
        entry = entries[method]
        refused = int(rows["infeasible"].sum())
        granted = rows[~rows["infeasible"]]
        violations = int(granted["violated"].sum())
        assert int(entry["draws"]) == 60 == len(rows)
        assert int(entry["refused"]) == refused
        assert float(entry["share"]) == pytest.approx(100 * refused / 60, abs=0.05)
        assert (int(entry["violations"]), int(entry["granted"])) == (violations, len(granted))
        assert float(entry["rate"]) == pytest.approx(100 * violations / len(granted), abs=0.05)
        low, high = clopper_pearson(violations, len(granted), 0.05)
        assert float(entry["low"]) == pytest.approx(100 * float(low), abs=0.05)
        assert float(entry["high"]) == pytest.approx(100 * float(high), abs=0.05)
    # the case the legend must not hide: the certified target refused on many draws
    assert int(entries["certified"]["refused"]) > 0


def test_a_target_refused_on_every_draw_says_so_and_claims_no_rate():
    rng = np.random.default_rng(0)
    u = rng.random(300)
    loss = 100.0 * (rng.random(300) < u / 2)
    check = validate_target(loss, u, Target("risk", 10, confidence=0.9), repeats=20)
    assert check.infeasible_rate == 1.0  # no draw of 150 rows certifies 10 here
    entries, texts = _entries(check)
    certified = entries["certified"]
    assert (certified["violations"], certified["granted"], certified["rate"]) == ("0", "0", None)
    assert (certified["refused"], certified["draws"], certified["share"]) == ("20", "20", "100.0")
