"""The OOD experiment (rejectopt.pipeline.experiments.ood, workflow/rules/ood.smk).

1. The contract, the settings, the datasets a run covers; the class hold-out: which classes,
   ID / OOD counts of each part.
2. The double score MCP + kNN, tuned on Val at the seed-style bound (recomputed here by brute
   force), meets TPR >= 0.8 and the bound on Val, and is the benchmark's fit.
3. One split on the real sattelite data (the demo mirror): sane numbers, files; the contract's
   run_split on the pipeline's staged data.
4. The table's statistics from a synthetic frame against rejectopt.stats computed here; the
   contract's aggregate.
5. The pipeline plans the ood rules on the CI configuration.

Rendering (Markdown / LaTeX, figures, Table 1) is tests/test_report_ood.py's; the OOD library
(metrics, strategies, scores, the synthetic example) is tests/test_ood.py's.
"""

import numpy as np
import pandas as pd
import pytest
from support import ood_results

from rejectopt import ood, stats
from rejectopt._io import save_csv
from rejectopt.pipeline.experiments import SplitInputs, check_experiment
from rejectopt.pipeline.experiments import ood as ood_experiment
from rejectopt.splits import make_splits, save_splits


# --------------------------------------------------------------------------------------------
# 1. The contract, the settings, the class hold-out
# --------------------------------------------------------------------------------------------
def test_the_module_keeps_the_contract():
    assert check_experiment(ood_experiment) is ood_experiment and ood_experiment.NAME == "ood"


@pytest.mark.parametrize(
    "n_classes, expected",
    [(6, [4, 5]), (10, [7, 8, 9]), (12, [8, 9, 10, 11]), (26, list(range(18, 26))), (3, [2])],
)
def test_held_out_classes_are_the_ceil_of_30_percent_largest_indices(n_classes, expected):
    y = np.repeat(np.arange(n_classes), 3)
    assert (
        ood_experiment.held_out_classes(y, 0.3).tolist() == expected
    )  # 0.3 * 10 = 3.0000000000000004 -> 3


def test_held_out_fraction_is_configurable_and_checked():
    y = np.repeat(np.arange(10), 2)
    assert ood_experiment.held_out_classes(y, 0.5).tolist() == [5, 6, 7, 8, 9]
    assert ood_experiment.held_out_classes(y, 0.01).tolist() == [9]
    with pytest.raises(ValueError, match="fewer than 2 ID classes"):
        ood_experiment.held_out_classes(np.array([0, 1, 1]), 0.3)
    with pytest.raises(ValueError, match=r"\(0, 1\)"):
        ood_experiment.held_out_classes(y, 1.0)
    with pytest.raises(ValueError, match="unknown keys"):
        ood_experiment.settings({"ood": {"held_out_fractoin": 0.3}})
    assert ood_experiment.settings({"ood": {"fpr_max": 0.3}})["held_out_fraction"] == 0.3


def test_settings_fill_defaults_and_reject_bad_values():
    s = ood_experiment.settings({})
    assert {k: s[k] for k in ood_experiment.DEFAULTS} == ood_experiment.DEFAULTS
    # the pipeline's classifier / SELE settings: the config's, else its defaults
    assert s["C_classifier"] == [1, 10, 100, 1000] and s["C_score"] == [0, 1, 10, 100, 1000]
    assert s["sele_chunk_size"] == 500
    s = ood_experiment.settings(
        {"C_classifier": [1, 10], "C_score": [0, 1], "sele_chunk_size": 200}
    )
    assert s["C_classifier"] == [1, 10] and s["C_score"] == [0, 1] and s["sele_chunk_size"] == 200
    for bad in (
        {"held_out_fraction": 0.0},
        {"tpr_min": 1.5},
        {"fpr_max": -0.1},
        {"knn_neighbors": 0},
        {"angles": 1},
    ):
        with pytest.raises(ValueError, match="config ood"):
            ood_experiment.settings({"ood": bad})
    with pytest.raises(ValueError, match="not a classification classifier"):
        ood_experiment.settings({"ood": {"classifiers": ["svor"]}})


def test_datasets_are_those_the_run_covers():
    s = ood_experiment.settings({})
    task = {
        "sattelite": "classification",
        "abalone": "ordinal",
        "letter": "classification",
        "mine": "ordinal",
    }
    assert ood_experiment.covered_datasets(s, ["sattelite", "abalone"], task) == ["sattelite"]
    assert ood_experiment.covered_datasets(s, ["sattelite", "letter"], task) == [
        "sattelite",
        "letter",
    ]
    mine = ood_experiment.settings({"ood": {"datasets": ["mine", "sattelite"]}})
    assert ood_experiment.covered_datasets(mine, ["sattelite"], task, custom=["mine"]) == [
        "sattelite"
    ]
    with pytest.raises(ValueError, match="ordinal dataset"):
        ood_experiment.covered_datasets(mine, ["mine"], task, custom=["mine"])
    with pytest.raises(ValueError, match="unknown dataset|Unknown|unknown"):
        ood_experiment.covered_datasets(
            ood_experiment.settings({"ood": {"datasets": ["letterr"]}}), [], task
        )


def test_partition_counts():
    y = np.repeat(np.arange(6), 10)  # classes 4, 5 are OOD: 20 of 60
    parts = make_splits(y, n_splits=1, seed=3, dataset="toy")
    parts = {p: parts[f"{p}_0"] for p in ("trn1", "val1", "trn2", "val2", "tst")}
    part = ood_experiment.ood_partition(y, parts, 0.3)
    assert part.held_out.tolist() == [4, 5] and part.n_classes_id == 4
    for name in ("trn1", "val1", "trn2", "val2"):  # ID only
        idx = getattr(part, name)
        assert (y[idx] < 4).all()
        assert idx.size == (y[parts[name]] < 4).sum()
    assert part.val.tolist() == sorted(parts["val1"].tolist() + parts["val2"].tolist())
    assert part.tst.tolist() == parts["tst"].tolist()
    counts = part.counts()
    # 10 examples per class, ratios 30/10/30/10/20: 1 + 1 per class in Val, 2 in Tst
    assert counts == {"n_id_val": 8, "n_ood_val": 4, "n_id_tst": 8, "n_ood_tst": 4}


# --------------------------------------------------------------------------------------------
# 2. + 3. One split of the real sattelite data
# --------------------------------------------------------------------------------------------
# (the fixture sattelite, split 0 through the experiment's file step, is tests/conftest.py's)
def test_sattelite_split_numbers_are_sane(sattelite):
    folder, X, y, splits, result = sattelite
    rows = pd.read_csv(folder / "split_0.csv")
    assert list(rows.columns) == ood_experiment.SPLIT_COLUMNS
    assert rows["method"].tolist() == [
        "mcp",
        "sele",
        "knn",
        "mahalanobis",
        "mcp+knn",
        "sele+knn",
        "sele+mahalanobis",
    ]
    assert (rows["held_out"] == "4 5").all()
    tst = splits["tst_0"]
    assert (rows["n_ood_tst"] == np.isin(y[tst], [4, 5]).sum()).all()
    assert (rows["n_id_tst"] + rows["n_ood_tst"] == tst.size).all()
    by = rows.set_index("method")
    assert by.loc["knn", "auroc"] > 0.5
    risks = rows[["risk_seed", "risk_fixed", "deployed_risk_seed", "id_error"]].to_numpy().ravel()
    risks = risks[np.isfinite(risks)]
    assert ((risks >= 0) & (risks <= 100)).all()
    assert 5 < by["id_error"].iloc[0] < 30
    # the seed-style bound makes every method feasible: it is the largest FPR@TPR of them all
    assert np.isfinite(rows["risk_seed"]).all()
    assert rows["fpr_bound_tst"].iloc[0] == pytest.approx(rows["fpr_at_tpr"].max())
    assert rows["feasible_val_seed"].all()
    assert (rows[["auroc", "oscr"]].to_numpy() >= 0).all() and (
        rows[["auroc", "oscr"]].to_numpy() <= 1
    ).all()
    # R^S at the bound is at most the risk at FPR@TPR of a single score: recompute one independently
    sc = result.scores["lr"]
    u = sc.singles["knn"][1]
    ok_risks = []
    for t in np.unique(u):
        acc = u <= t
        id_acc = acc & ~sc.is_ood_tst
        tpr = id_acc.sum() / (~sc.is_ood_tst).sum()
        fpr = (acc & sc.is_ood_tst).sum() / sc.is_ood_tst.sum()
        if tpr >= 0.8 and fpr <= rows["fpr_bound_tst"].iloc[0] + 1e-12:
            ok_risks.append(sc.loss_tst[id_acc].mean())
    assert by.loc["knn", "risk_seed"] == pytest.approx(min(ok_risks))


def _brute_min_fpr(is_ood, u, tpr_min):
    best = 1.0
    for t in np.unique(u):
        acc = u <= t
        if acc[~is_ood].mean() >= tpr_min:
            best = min(best, acc[is_ood].mean())
    return best


def test_mcp_knn_double_score_meets_tpr_on_val(sattelite):
    _, _, _, _, result = sattelite
    sc = result.scores["lr"]
    row = result.rows.set_index("method").loc["mcp+knn"]
    bound = max(_brute_min_fpr(sc.is_ood_val, v, 0.8) for v, _ in sc.singles.values())
    assert row["fpr_bound_val"] == pytest.approx(bound)
    (r_v, _), (g_v, _) = sc.singles["mcp"], sc.singles["knn"]
    sel = ood.fit_double_score_tpr_fpr(sc.loss_val, sc.is_ood_val, r_v, g_v, 0.8, bound, angles=181)
    assert sel.mu == pytest.approx(row["mu_seed"])
    c = sel.acceptance_probability(r_v, g_v)
    assert c[~sc.is_ood_val].mean() >= 0.8 - 1e-9
    assert c[sc.is_ood_val].mean() <= bound + 1e-9
    assert row["feasible_val_seed"]


def test_a_multi_split_job_writes_each_split_as_if_alone(sattelite, tmp_path):
    """The pipeline's job runs every split of a dataset (run_dataset_files); split 0's files must not
    depend on the other splits the job runs, nor on their order."""
    folder, X, y, _, _ = sattelite
    save_splits(
        tmp_path / "splits.npz", make_splits(y, n_splits=2, seed=0, dataset="sattelite"), y=y
    )
    files = {k: (tmp_path / f"split_{k}.csv", tmp_path / f"split_{k}.npz") for k in (1, 0)}
    results = ood_experiment.run_dataset_files(
        folder / "data.npz",
        tmp_path / "splits.npz",
        files,
        dataset="sattelite",
        C_classifier=(1,),
        C_score=(1,),
    )
    assert sorted(results) == [0, 1] and results[1].rows["split"].eq(1).all()
    assert (tmp_path / "split_0.csv").read_bytes() == (folder / "split_0.csv").read_bytes()
    assert (tmp_path / "split_0.npz").read_bytes() == (folder / "split_0.npz").read_bytes()
    assert (tmp_path / "split_1.csv").read_bytes() != (folder / "split_0.csv").read_bytes()


def test_run_split_reads_the_pipelines_staged_data(sattelite):
    """The contract's run_split on SplitInputs (the staged data and splits) gives the job's rows."""
    folder, _, _, _, result = sattelite
    inputs = SplitInputs(
        "sattelite", 0, "classification", 0, folder / "data.npz", folder / "splits.npz"
    )
    again = ood_experiment.run_split(
        inputs, ood_experiment.settings({"C_classifier": [1], "C_score": [1]})
    )
    pd.testing.assert_frame_equal(again.rows, result.rows)
    assert list(again.curves) == list(result.curves)


def test_double_score_beats_both_scores_when_each_sees_one_thing():
    """s_r ranks misclassified ID examples last but is blind to OOD, s_g the reverse."""
    rng = np.random.default_rng(0)

    def sample(n_id, n_ood):
        err = rng.random(n_id) < 0.2
        loss = np.concatenate([100.0 * err, np.full(n_ood, np.nan)])
        is_ood = np.r_[np.zeros(n_id, bool), np.ones(n_ood, bool)]
        s_r = np.concatenate([err + 0.3 * rng.standard_normal(n_id), rng.random(n_ood)])
        s_g = np.concatenate(
            [0.3 * rng.standard_normal(n_id), 1 + 0.3 * rng.standard_normal(n_ood)]
        )
        return loss, is_ood, s_r, s_g

    lv, ov, rv, gv = sample(2000, 500)
    lt, ot, rt, gt = sample(2000, 500)
    rows, curves = ood_experiment.evaluate_ood_methods(
        (lv, ov),
        (lt, ot),
        {"r": (rv, rt), "g": (gv, gt)},
        [("r", "g")],
        tpr_min=0.8,
        fpr_max=0.2,
        angles=91,
    )
    by = {r["method"]: r for r in rows}
    # at FPR <= 0.2 s_r alone is unable, s_g alone accepts the errors, the double score neither
    assert np.isnan(by["r"]["risk_fixed"]) and not by["r"]["feasible_val_fixed"]
    assert by["r+g"]["risk_fixed"] < 0.5 * by["g"]["risk_fixed"]
    assert by["r+g"]["feasible_val_fixed"] and 0 < by["r+g"]["mu_fixed"] < np.inf
    assert curves["r+g__roc_fpr"][0] == 0 and curves["r+g__roc_tpr"][-1] == 1


# --------------------------------------------------------------------------------------------
# 4. The table against rejectopt.stats
# --------------------------------------------------------------------------------------------
def test_table_statistics_match_rejectopt_stats():
    results, methods = ood_results()
    table = ood_experiment.ood_table(results)
    assert len(table) == 12 and table["n_splits"].eq(3).all()
    cell = table.set_index(["dataset", "method"]).loc[("gamma", "knn")]
    sub = results[(results.dataset == "gamma") & (results.method == "knn")]
    assert cell["risk_seed_mean"] == pytest.approx(sub["risk_seed"].mean())
    assert cell["risk_seed_std"] == pytest.approx(sub["risk_seed"].std())
    assert cell["feasible_tst_seed"] == 2 and cell["feasible_val_seed"] == 3
    assert table.set_index(["dataset", "method"]).loc[("beta", "mcp"), "unable_seed"] == 1

    # independently: the mean matrix, the unable cell replaced by a worse-than-all value
    means = results.groupby(["dataset", "method"])["risk_seed"].mean().unstack()[methods]
    means.loc["beta", "mcp"] = 1e6
    s = ood_experiment.ood_statistics(table, "lr", "risk_seed")
    expected = stats.average_ranks(means)
    pd.testing.assert_series_equal(s.average_ranks[methods], expected[methods], check_names=False)
    assert s.ranks.loc["beta", "mcp"] == 4.0
    friedman = stats.friedman_test(means)
    assert s.friedman_pvalue == pytest.approx(friedman.pvalue)
    assert s.cd_005 == pytest.approx(stats.nemenyi_cd(4, 3, alpha=0.05))
    assert s.significant_pairs(0.05) == stats.significant_pairs(s.average_ranks, s.cd_005)

    # AUROC: larger is better
    a = ood_experiment.ood_statistics(table, "lr", "auroc")
    assert a.average_ranks["sele"] == 1.0 and a.average_ranks["mcp"] == 4.0


def test_aggregate_returns_the_tables_as_numbers():
    results, methods = ood_results()
    tables = ood_experiment.aggregate(results, ood_experiment.settings({}))
    assert set(tables) == {"ood", "ranks", "rank_tests"}
    assert all(name.isidentifier() for name in tables)
    table = ood_experiment.ood_table(results)
    pd.testing.assert_frame_equal(tables["ood"], table)
    ranks = tables["ranks"].sort_index()
    for metric in ood_experiment.RANK_METRICS:
        s = ood_experiment.ood_statistics(table, "lr", metric)
        got = ranks.loc[("lr", metric)]["average_rank"]
        np.testing.assert_allclose(got[methods].to_numpy(), s.average_ranks[methods].to_numpy())
        test = tables["rank_tests"].loc[("lr", metric)]
        assert test["n_datasets"] == 3 and test["friedman_pvalue"] == pytest.approx(
            s.friedman_pvalue
        )
        assert test["nemenyi_cd_005"] == pytest.approx(s.cd_005)


def test_table_file_writes_the_table(tmp_path):
    results, _ = ood_results()
    paths = []
    for (dataset, split), frame in results.groupby(["dataset", "split"]):
        paths.append(tmp_path / f"{dataset}_{split}.csv")
        save_csv(frame, paths[-1])  # as run_dataset_files writes them, with their content record
    rows, table = ood_experiment.table_file(paths, tmp_path / "table.csv")
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "table.csv"), table, check_dtype=False)
    assert len(rows) == len(results)


def test_min_fpr_at_tpr_is_the_smallest_fpr_of_a_threshold_meeting_the_tpr():
    is_ood = np.array([False, False, True, True, False])
    uncertainty = np.array([0.1, 0.4, 0.9, 0.3, 0.2])
    assert ood_experiment.min_fpr_at_tpr(is_ood, uncertainty, 0.5) == 0.0
    assert ood_experiment.min_fpr_at_tpr(is_ood, uncertainty, 1.0) == 0.5


def test_a_split_without_ood_tst_examples_is_refused():
    y = np.array([0, 0, 1, 1, 2, 2, 0, 1, 2, 2])
    parts = {"trn1": [0, 2], "val1": [1, 4], "trn2": [3, 5], "val2": [6], "tst": [7, 8, 9]}
    part = ood_experiment.ood_partition(y, parts, held_out_fraction=0.3)
    assert part.held_out.tolist() == [2] and part.is_ood[part.tst].tolist() == [False, True, True]
    with pytest.raises(ValueError, match="the OOD split has no ood tst examples"):
        ood_experiment.ood_partition(y, {**parts, "tst": [7]})


def test_a_splits_scores_recompute_its_rows(sattelite):
    """OODScores hold what evaluate_ood_methods needs: the rows come back from them alone."""
    *_, result = sattelite
    sc = result.scores["lr"]
    rows, _ = ood_experiment.evaluate_ood_methods(
        (sc.loss_val, sc.is_ood_val), (sc.loss_tst, sc.is_ood_tst), sc.singles, sc.doubles
    )
    assert [row["risk_seed"] for row in rows] == result.rows["risk_seed"].tolist()


@pytest.mark.parametrize(
    "call, message",
    [
        (
            lambda: ood_experiment.settings({"ood": {"held_out_fraction": 1}}),
            r"config ood.held_out_fraction must lie in \(0, 1\), got 1",
        ),
        (
            lambda: ood_experiment.held_out_classes(np.arange(10), 0.0),
            r"fraction must lie in \(0, 1\), got 0",
        ),
        (
            lambda: ood_experiment.held_out_classes(np.arange(10).reshape(2, 5), 0.3),
            r"y must be 1-D, got shape \(2, 5\)",
        ),
    ],
)
def test_the_fraction_and_the_labels_are_checked_by_the_shared_checks(call, message):
    with pytest.raises(ValueError, match=message):
        call()
