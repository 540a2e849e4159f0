"""The guarantees experiment (rejectopt.pipeline.experiments.guarantees): plug-in vs certified targets on the
staged outcomes of a real dataset, through the experiment contract and the pipeline."""

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from support import DEMO_MIRROR

from rejectopt._checks import derive_seed
from rejectopt._io import IntermediateFileError, save_csv
from rejectopt.pipeline.experiments import check_experiment
from rejectopt.pipeline.experiments import guarantees as g
from rejectopt.pipeline.experiments._contract import (
    aggregate_files,
    load_experiments,
    split_inputs,
)
from rejectopt.pipeline.report.guarantees import render
from rejectopt.selective import InfeasibleTargetError
from rejectopt.targets import Target

CONFIG = {"scores": {"lr": ["sele", "reg", "tcp"], "svm": ["sele", "reg"]}}


@pytest.fixture(scope="module")
def staged(tmp_path_factory):
    """Split 0 of the demo mirror's sattelite as the pipeline stages it: LR (C = 1) and its SELE and
    REG scores (C = 1), through the paper experiment's file-in / file-out steps."""
    from rejectopt.datasets import load_prepared, prepare_dataset
    from rejectopt.pipeline.experiments import paper
    from rejectopt.splits import make_splits, save_splits

    folder = tmp_path_factory.mktemp("guarantees_sattelite")
    prepare_dataset("sattelite", folder / "raw", folder / "data.npz", mirror=DEMO_MIRROR)
    _, y = load_prepared(folder / "data.npz")
    save_splits(folder / "splits.npz", make_splits(y, n_splits=1, seed=0, dataset="sattelite"), y=y)
    paper.run_classifiers(
        folder / "data.npz",
        folder / "splits.npz",
        {0: folder / "lr.npz"},
        "lr",
        (1,),
        0,
        dataset="sattelite",
    )
    paper.run_scores(
        folder / "data.npz",
        folder / "splits.npz",
        {0: folder / "lr.npz"},
        "classification",
        ["sele", "reg"],
        (1,),
        0,
        folder / "lr_scores.npz",
        dataset="sattelite",
        classifier="lr",
    )
    inputs = split_inputs(
        "sattelite",
        "classification",
        0,
        folder / "data.npz",
        folder / "splits.npz",
        [0],
        {0: {"classifier/lr": folder / "lr.npz", "scores/lr": folder / "lr_scores.npz"}},
    )[0]
    return folder, inputs


@pytest.fixture(scope="module")
def result(staged):
    """The experiment's default settings (200 draws) on the staged split."""
    return g.run_split(staged[1], g.settings(CONFIG)).rows


def test_the_module_keeps_the_contract_and_loads_by_its_dotted_name():
    assert check_experiment(g).NAME == "guarantees"
    assert load_experiments(["rejectopt.pipeline.experiments.guarantees"], config=CONFIG) == {
        "guarantees": g
    }


def test_every_classifier_score_target_and_delta_has_a_plug_in_and_a_certified_row(result):
    assert len(result) == 3 * 3 * 2 * 2  # scores (mcp, sele, reg) x targets x deltas x methods
    assert sorted(result["score"].unique()) == ["mcp", "reg", "sele"]
    assert (
        (result["repeats"] == 200).all()
        and (result["n_rows"] == 1288).all()
        and (result["n_calibration"] == 644).all()
    )
    risk = result[result["target"] == "risk"]
    # the risk targets are fractions of LR's full-coverage risk on the population (percent)
    np.testing.assert_allclose(
        sorted(risk["target_value"].unique()),
        [0.5 * risk["base_risk"].iloc[0], 0.75 * risk["base_risk"].iloc[0]],
    )
    # the plug-in target has no delta: its two rows (one per delta) are one fit per draw
    plugin = result[result["method"] == "plug-in"].set_index(["score", "target", "level", "delta"])[
        "violations"
    ]
    assert (plugin.xs(0.1, level="delta") == plugin.xs(0.05, level="delta")).all()


def test_the_certified_targets_violate_at_most_delta_and_the_plug_in_ones_about_half_the_time(
    result,
):
    """200 draws: a certified cell whose violations exceed the binomial 99.9 % quantile at delta
    would refute the guarantee; the plug-in targets, met on the calibration rows only, fail near half
    the draws (the population's risk / coverage lies on either side of the sample's)."""
    certified = result[result["method"] == "certified"]
    limit = stats.binom.ppf(0.999, 200, certified["delta"])
    assert (certified["violations"] <= limit).all(), certified[
        ["score", "target", "level", "delta", "violations"]
    ]
    assert certified["violation_rate"].mean() <= 0.06
    plugin = result[result["method"] == "plug-in"]
    assert plugin["violation_rate"].between(0.3, 0.7).all(), plugin[
        ["score", "target", "violation_rate"]
    ]
    # certification costs coverage on risk targets and adds some on coverage targets
    pair = result.pivot_table(
        index=["score", "target", "level", "delta"], columns="method", values="mean_coverage"
    )
    cost = pair["plug-in"] - pair["certified"]
    assert (cost.xs("risk", level="target") > 0).all() and (
        cost.xs("coverage", level="target") < 0
    ).all()


def test_violation_counts_equal_an_independent_recomputation(staged, result):
    """The same draws (seeded by the run's seed, dataset and split) refitted here; the population's
    coverage and risk from the staged files read with numpy and the threshold rule written out."""
    folder, inputs = staged
    y = np.load(folder / "data.npz")["y"]
    tst = inputs.parts["tst"]
    with np.load(folder / "lr.npz") as clf, np.load(folder / "lr_scores.npz") as sc:
        loss = 100.0 * (y[tst] != clf["y_pred"][tst])
        scores = {"mcp": clf["baseline"][tst], "sele": sc["sele/split_0/uncertainty"]}
    settings = {**g.settings(CONFIG), "repeats": 3}
    n_cal, draws = g.calibration_draws(
        tst.size, settings, derive_seed(0, "sattelite", "guarantees", 0, "draws")
    )
    first = g.calibration_draws(
        tst.size, g.settings(CONFIG), derive_seed(0, "sattelite", "guarantees", 0, "draws")
    )[1]
    np.testing.assert_array_equal(draws, first[:3])  # the same draws as the first three of the 200
    short = g.run_split(inputs, settings).rows.set_index(
        ["score", "target", "level", "delta", "method"]
    )
    for score, s in scores.items():
        for kind, value, level in (
            ("risk", 0.5 * loss.mean(), "0.5 x base"),
            ("coverage", 0.8, "0.8"),
        ):
            for delta, confidence in ((0.1, 0.9), (0.05, 0.95), (0.1, None)):
                violations = 0
                for chosen in draws:
                    try:
                        rule = Target(kind, value, confidence).fit(loss[chosen], s[chosen])
                    except InfeasibleTargetError:
                        continue  # rejects everything: no violation
                    accept = (s < rule.threshold) + rule.accept_prob * (s == rule.threshold)
                    coverage = accept.mean()
                    risk = (accept * loss).sum() / accept.sum() if accept.sum() > 0 else np.nan
                    violations += (
                        bool(risk > value * (1 + 1e-12))
                        if kind == "risk"
                        else bool(coverage < value * (1 - 1e-12))
                    )
                method = "plug-in" if confidence is None else "certified"
                row = short.loc[(score, kind, level, delta, method)]
                assert row["violations"] == violations and row["target_value"] == pytest.approx(
                    value, rel=1e-12
                )


def test_aggregate_pools_the_splits_and_prices_the_certification(result):
    rows = pd.concat(
        [result.assign(dataset="sattelite", split=k) for k in (0, 1)], ignore_index=True
    )
    tables = g.aggregate(rows, g.settings(CONFIG))
    cells, summary = tables["cells"], tables["summary"]
    cell = cells.loc[("sattelite", "lr", "sele", "risk", "0.5 x base", 0.05)]
    one = result.set_index(["score", "target", "level", "delta", "method"])
    certified, plugin = (
        one.loc[("sele", "risk", "0.5 x base", 0.05, "certified")],
        one.loc[("sele", "risk", "0.5 x base", 0.05, "plug-in")],
    )
    assert cell["draws"] == 400 and cell["certified_violation_rate"] == pytest.approx(
        certified["violation_rate"]
    )
    assert cell["coverage_cost"] == pytest.approx(
        plugin["mean_coverage"] - certified["mean_coverage"]
    )
    low, high = stats.beta.ppf(
        [0.025, 0.975],
        2 * certified["violations"] + [0, 1],
        400 - 2 * certified["violations"] + [1, 0],
    )
    assert cell["certified_violation_high"] == pytest.approx(high)
    assert summary.loc[("coverage", "0.8", 0.1), "cells"] == 3
    assert summary.loc[("risk", "0.75 x base", 0.05), "certified_cells_above_delta"] == 0


def test_render_writes_the_markdown_and_the_figure(result, tmp_path):
    tables = g.aggregate(result.assign(dataset="sattelite", split=0), g.settings(CONFIG))
    (tmp_path / "tables").mkdir()
    for name, table in tables.items():  # as aggregate_files writes them: with their record
        save_csv(
            table,
            tmp_path / "tables" / f"{name}.csv",
            provenance={"experiment": "guarantees", "table": name},
            index=True,
        )
    written = render(tmp_path / "tables", tmp_path / "out", ("png", "pdf"))
    assert [p.name for p in written] == ["guarantees.md", "guarantees.png", "guarantees.pdf"]
    text = written[0].read_text()
    assert (
        "| target | level | delta | cells |" in text
        and "| sattelite | lr | sele | risk | 0.5 x base | 0.05 |" in text
    )
    assert written[1].read_bytes()[:4] == b"\x89PNG" and written[2].read_bytes()[:5] == b"%PDF-"
    # the same tables give the same bytes (no creation date), so a rerun or a SLURM run equals a local one
    again = render(tmp_path / "tables", tmp_path / "again", ("png", "pdf"))
    assert [p.read_bytes() for p in again] == [p.read_bytes() for p in written]


def test_the_tables_are_written_with_their_record_and_refused_after_an_edit(result, tmp_path):
    """experiment_tables writes the tables with their record (aggregate_files) and the report reads them
    checked: an edited number or a deleted row is refused naming --forcerun, and never reaches
    guarantees.md."""
    rows = tmp_path / "sattelite" / "split_0.csv"
    role = {"experiment": g.NAME, "dataset": "sattelite", "split": 0}
    save_csv(result.assign(dataset="sattelite", split=0), rows, provenance=role)
    tables = tmp_path / "tables"
    aggregate_files(g, CONFIG, [rows], tables, expect=lambda path: role)
    assert sorted(p.name for p in tables.iterdir()) == [
        "cells.csv",
        "cells.csv.record",
        "summary.csv",
        "summary.csv.record",
    ]
    render(tables, tmp_path / "out", ("png",))
    for name, damage in (
        ("summary.csv", lambda lines: [lines[0], _edited(lines[1]), *lines[2:]]),
        ("cells.csv", lambda lines: lines[:1] + lines[2:]),
    ):
        path = tables / name
        text = path.read_text()
        path.write_text("".join(damage(text.splitlines(keepends=True))))
        with pytest.raises(IntermediateFileError) as err:
            render(tables, tmp_path / "damaged", ("png",))
        assert str(err.value).startswith(f"{path}: its content changed after it was written")
        assert f"snakemake --forcerun {path}" in str(err.value)
        assert not (tmp_path / "damaged" / "guarantees.md").exists()
        path.write_text(text)
    # one table's file and record copied over the other's: refused, naming both tables
    for suffix in ("", ".record"):
        (tables / f"cells.csv{suffix}").write_bytes((tables / f"summary.csv{suffix}").read_bytes())
    with pytest.raises(
        IntermediateFileError, match=r"made from table 'summary', but this step's is 'cells'"
    ):
        render(tables, tmp_path / "copied", ("png",))


def _edited(line: str) -> str:
    """``line`` with its last number changed (0.0075 -> 0.314, say)."""
    head, _, last = line.rstrip("\n").rpartition(",")
    return f"{head},{'0.314' if last != '0.314' else '0.315'}\n"


def test_an_ordinal_dataset_gives_no_rows(staged):
    folder, inputs = staged
    ordinal = split_inputs(
        "abalone", "ordinal", 0, folder / "data.npz", folder / "splits.npz", [0], {}
    )[0]
    rows = g.run_split(ordinal, g.settings({})).rows
    assert rows.empty and list(rows.columns) == g.ROW_COLUMNS


@pytest.mark.parametrize(
    "block, message",
    [
        ({"repeat": 10}, r"experiment_settings.guarantees: unknown keys \['repeat'\]"),
        (
            {"risk_fractions": [0.5, 1.5]},
            r"guarantees.risk_fractions must be distinct numbers in \(0, 1\]",
        ),
        ({"deltas": [0.1, 1]}, r"guarantees.deltas must lie in \(0, 1\), got 1"),
        ({"deltas": [0.1, 0.1]}, r"guarantees.deltas must be distinct numbers in \(0, 1\)"),
        ({"repeats": 1}, r"guarantees.repeats must be an integer >= 2, got 1"),
        ({"scores": ["sele", "knn"]}, r"guarantees.scores: \['knn'\] is learned for no classifier"),
    ],
)
def test_bad_settings_are_named(block, message):
    with pytest.raises(ValueError, match=message):
        g.settings({**CONFIG, "experiment_settings": {"guarantees": block}})


def test_the_defaults_and_an_override():
    chosen = g.settings(
        {**CONFIG, "experiment_settings": {"guarantees": {"coverages": 0.9, "repeats": 300}}}
    )
    assert (
        chosen["coverages"] == [0.9]
        and chosen["repeats"] == 300
        and chosen["deltas"] == [0.1, 0.05]
    )
    assert chosen["scores_of"] == {
        "lr": ["reg", "sele"],
        "svm": ["reg", "sele"],
    }  # the registry's order


def test_the_default_scores_follow_a_run_that_narrows_its_learned_scores():
    """A run learning only REG still gets the table (baseline and REG); naming SELE explicitly is refused."""
    narrowed = {**CONFIG, "scores": {"lr": ["reg"]}}
    chosen = g.settings(narrowed)
    assert chosen["scores"] == ["baseline", "reg"] and chosen["scores_of"] == {"lr": ["reg"]}
    with pytest.raises(
        ValueError, match=r"guarantees.scores: \['sele'\] is learned for no classifier"
    ):
        g.settings(
            {**narrowed, "experiment_settings": {"guarantees": {"scores": ["baseline", "sele"]}}}
        )


def test_check_targets_takes_uncertainty_and_still_s_for_one_release():
    """``uncertainty`` is the library's name for a score's values; ``s=`` keeps working in 0.6.0 with
    a FutureWarning naming the new keyword, and gives the same rows."""
    rng = np.random.default_rng(0)
    uncertainty = rng.random(40)
    loss = np.where(rng.random(40) < uncertainty, 100.0, 0.0)
    draws = np.stack([rng.choice(40, 20, replace=False) for _ in range(3)])
    targets = [("coverage", "0.8", 0.8)]
    new = g.check_targets(loss, uncertainty=uncertainty, draws=draws, targets=targets, deltas=[0.1])
    with pytest.warns(FutureWarning, match=r"check_targets\(uncertainty=\.\.\.\) in 0\.6\.0"):
        old = g.check_targets(loss, s=uncertainty, draws=draws, targets=targets, deltas=[0.1])
    pd.testing.assert_frame_equal(old, new)
    assert len(new) == 3 * 2  # per draw: the plug-in row and the certified one
