"""The release gate beside MAPIE's multi-risk control: the Guarantees page shows the record, and
the record's rejectopt side is what the shipped gate does on the benchmark's population.

MAPIE is not installed here (it is no dependency); the benchmark module imports it only inside
its MAPIE functions, so its population, its table and its gate side run without it.
"""

import math

import numpy as np
import pandas as pd
import pytest
from support import REPO, load_benchmark

RECORD = REPO / "benchmarks" / "mapie_gate_records.csv"
PAGE = REPO / "docs" / "guide" / "guarantees.md"


@pytest.fixture(scope="module")
def bench():
    return load_benchmark("bench_mapie_gate")


@pytest.fixture(scope="module")
def record():
    return pd.read_csv(RECORD)


def test_the_guarantees_page_shows_the_mapie_gate_record(bench, record):
    assert bench.page_table(record) in PAGE.read_text(encoding="utf-8")
    # every cell has the three methods on the same draws
    assert (record.groupby(["target_risk", "min_coverage", "n", "delta"]).size() == 3).all()
    assert set(record["method"]) == set(bench.METHODS)


def test_every_method_of_the_record_stays_within_its_delta(record):
    # a level-delta procedure violates in Binomial(200, <= delta) draws: 3 sigma above delta
    # fails a valid method's cell with probability under 0.3 %
    sigma = np.sqrt(record["delta"] * (1 - record["delta"]) / record["repeats"])
    assert (record["violation_rate"] <= record["delta"] + 3 * sigma).all()


def test_the_record_population_is_the_benchmark_population(bench, record):
    c, h, y = bench.population()
    error = (h != y).astype(float)
    assert record["n_population"].eq(c.size).all()
    assert record["base_risk"].iloc[0] == pytest.approx(error.mean(), abs=2e-3)
    for (risk, share), floor in zip(
        bench.SETTINGS, record.drop_duplicates(["target_risk", "min_coverage"])["min_coverage"]
    ):
        # another scikit-learn may reorder a few near-tied probabilities: a row or two of 899
        oracle = bench.oracle_coverage(c, error, risk)
        assert floor == pytest.approx(round(share * oracle, 2), abs=0.011)


def test_the_record_gate_cell_is_what_the_shipped_gate_does(bench, record):
    """Refit the gate on the first cell's 200 draws (the benchmark's seeding) and compare."""
    c, h, y = bench.population()
    error = (h != y).astype(float)
    first = record[record["method"] == bench.METHODS[0]].iloc[0]
    rng = np.random.default_rng(int(first["n"]))
    draws = [rng.choice(c.size, int(first["n"]), replace=True) for _ in range(200)]
    pop = (c, h, y, error)
    result = bench.cell(
        pop,
        draws,
        first["target_risk"],
        first["min_coverage"],
        first["delta"],
        bench.METHODS[0],
        first["learn_fraction"],
    )
    # the same draws and the same gate give the same decisions; a few draws may flip when another
    # scikit-learn moves the population's probabilities by rounding (3 draws of 200)
    for name in ("grant_rate", "violation_rate", "mean_coverage"):
        assert math.isclose(result[name], first[name], abs_tol=0.015), name


def test_what_the_page_says_of_the_mapie_gate_record_holds_there(record):
    cells = record.pivot_table(
        index=["target_risk", "min_coverage", "n", "delta"],
        columns="method",
        values=["grant_rate", "mean_coverage", "violation_rate"],
    )
    grants, coverage = cells["grant_rate"], cells["mean_coverage"]
    gate = "rejectopt gate"
    mapie = ["MAPIE bonferroni_holm", "MAPIE split_fixed_sequence"]
    # "The gate grants at least as often as both MAPIE procedures in all 12 cells"
    ahead = grants[gate] >= grants[mapie].max(axis=1)
    assert (len(ahead), int(ahead.sum())) == (12, 12)
    # "3 to 12 points ... (floor 0.66), 17 to 30 points ... (floor 0.79), ... and 1 to 6 points
    # at risk 2 % (floor 0.55)"
    lead = (coverage[gate] - coverage[mapie].max(axis=1)).groupby("min_coverage")
    assert [f"{lead.min()[w]:.2f}-{lead.max()[w]:.2f}" for w in (0.66, 0.79, 0.55)] == [
        "0.03-0.12",
        "0.17-0.30",
        "0.01-0.06",
    ]
    # "where Holm grants at most half the draws" (floor 0.79)
    assert grants.xs(0.79, level="min_coverage")["MAPIE bonferroni_holm"].max() <= 0.5
    # "the gate's largest violation rate 0.055 at delta 0.1, MAPIE's 0.010"
    worst = cells["violation_rate"].max()
    assert (worst[gate], worst[mapie].max()) == (0.055, 0.01)
