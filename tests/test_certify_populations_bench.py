"""The Guarantees page's per-group and graded-loss cells on the four populations are the
benchmark's record, and the record meets the page's claims (benchmarks/bench_certified_populations.py).
"""

import pandas as pd
from support import REPO, load_benchmark


def test_the_guarantees_page_shows_the_population_cells_and_they_meet_their_claims():
    bench = load_benchmark("bench_certified_populations")
    record = pd.read_csv(REPO / "benchmarks" / "certified_populations_records.csv")
    page = (REPO / "docs" / "guide" / "guarantees.md").read_text(encoding="utf-8")
    for kind in ("groups", "graded"):
        assert bench.page_table(record, kind) in page
    # every cell of the requirement is there: four populations, n 300 to 5,000, two deltas,
    # 300 draws each
    cells = record.groupby(["population", "n", "delta"]).size()
    assert len(cells) == 4 * 4 * 2 and (record["draws"] == 300).all()
    assert set(record["population"]) == {"flat", "increasing", "tied", "letter"}
    verdict = bench.checks(record)
    # per cell: two group claims (every group's own violation, the simultaneous any-group one)
    # and one per tail
    assert len(verdict) == 32 * (2 + len(bench.TAILS))
    assert verdict["ok"].all(), verdict[~verdict["ok"]]

    # the numbers the page's prose quotes are the record's
    prose = " ".join(page.split())
    claim = verdict["claim"].str.split(":").str[0]
    largest = verdict.groupby([claim, "delta"])["value"].max().map("{:.3f}".format)
    limits = verdict.groupby("delta")["limit"].first().map("{:.3f}".format)
    assert (
        f"the largest {largest['per-group', 0.05]} at delta 0.05 and {largest['per-group', 0.1]} "
        f"at 0.1 against limits of {limits[0.05]} and {limits[0.1]}"
    ) in prose
    assert (
        f"simultaneous any-group rate ({largest['simultaneous', 0.05]} and "
        f"{largest['simultaneous', 0.1]})"
    ) in prose
    graded = verdict[verdict["kind"] == "graded"]["value"].max()
    assert f"(at most {graded:.3f})" in prose
    pooled = record[(record["method"] == "pooled") & (record["group"] == "any")]
    assert (pooled["violation_rate"] > pooled["delta"]).all()
    assert (
        f"({pooled['violation_rate'].min():.3f} to {pooled['violation_rate'].max():.3f})" in prose
    )
    gains = bench.tail_gains(record)
    ahead = gains[gains["betting_minus_hb"] > 0]
    assert len(ahead) == 1 and f"({ahead['betting_minus_hb'].iloc[0]:.3f}, flat at 300" in prose
    assert f"up to {-gains['betting_minus_hb'].min():.3f} less" in prose
    auto = gains["auto_minus_hb"]
    assert f"from {auto.max():.3f} above to {-auto.min():.3f} below it" in prose
