"""The double-hinge experiment (rejectopt.pipeline.experiments.double_hinge, workflow/rules/double_hinge.smk).

1. Settings from the pipeline config, the datasets a run covers, breast cancer's splits.
2. One split on breast cancer: sane numbers, the double-hinge SVM rejects more as d falls, files.
3. The baselines against independent computations: the plain SVM's |f| threshold on Val2,
   Chow's rule on LR's posterior; the contract's run_split on the pipeline's staged data and LR.
4. The tables, ranks and Wilcoxon tests from a synthetic frame against scipy / rejectopt.stats.
5. The pipeline plans the rules.

Rendering is tests/test_report_double_hinge.py's; the cost-risk metric, Chow's rule and the
margin threshold are tested on their own in test_metrics / test_selective, the double-hinge
model selection in test_double_hinge.
"""

import re

import numpy as np
import pandas as pd
import pytest
from known_answers import brute_force_margin_threshold
from scipy.stats import wilcoxon
from support import COSTS, double_hinge_results, split_paths

from rejectopt import stats
from rejectopt._checks import SPLIT_PARTS
from rejectopt._io import save_csv, save_npz
from rejectopt.classifiers import DoubleHingeSVM
from rejectopt.classifiers._training import classifier_outputs
from rejectopt.pipeline.experiments import SplitInputs, check_experiment
from rejectopt.pipeline.experiments import double_hinge as dh
from rejectopt.pipeline.experiments.paper import run_classifiers
from rejectopt.splits import DEFAULT_RATIOS, make_splits, save_splits


# --------------------------------------------------------------------------------------------
# 1. Settings, datasets, breast cancer's splits
# --------------------------------------------------------------------------------------------
def test_the_module_keeps_the_contract():
    assert check_experiment(dh) is dh and dh.NAME == "double_hinge"


def test_settings_fill_defaults_and_reject_bad_values():
    s = dh.settings({"double_hinge": {"reject_costs": [0.3, 0.1]}})
    assert (
        s["reject_costs"] == [0.1, 0.3]
        and s["c_scaling"] == "mean"
        and s["C_grid"] == [1.0, 10.0, 100.0, 1000.0]
    )
    assert s["datasets"] == dh.DEFAULTS["datasets"]
    # the pipeline's LR / SELE settings: the config's, else its defaults
    assert s["C_classifier"] == [1, 10, 100, 1000] and s["C_score"] == [0, 1, 10, 100, 1000]
    assert s["sele_chunk_size"] == 500 and s["split_ratios"] == list(DEFAULT_RATIOS)
    s = dh.settings(
        {
            "C_classifier": [1, 10],
            "C_score": [0, 1],
            "sele_chunk_size": 200,
            "split_ratios": {
                "default": [0.2, 0.2, 0.2, 0.2, 0.2],
                "letter": [0.5, 0.1, 0.2, 0.1, 0.1],
            },
        }
    )
    assert s["C_classifier"] == [1, 10] and s["C_score"] == [0, 1] and s["sele_chunk_size"] == 200
    assert s["split_ratios"] == [0.2] * 5
    for bad in (
        {"reject_cost": [0.1]},
        {"reject_costs": [0.5]},
        {"reject_costs": [0.0]},
        {"C_grid": [0]},
        {"c_scaling": "per_example"},
    ):
        with pytest.raises(ValueError, match="double_hinge"):
            dh.settings({"double_hinge": bad})
    # the Gaussian-kernel row's grids and Nyström rank
    s = dh.settings({})
    assert (
        s["rbf_gamma_grid"] == [0.3, 1.0]
        and s["rbf_C_grid"] == [1e4, 1e5, 1e6]
        and s["rbf_rank"] == 200
    )
    s = dh.settings({"double_hinge": {"rbf_gamma_grid": [3, 0.5], "rbf_rank": 50}})
    assert s["rbf_gamma_grid"] == [0.5, 3.0] and s["rbf_rank"] == 50
    for bad, message in (
        ({"rbf_gamma_grid": [0.0]}, "double_hinge.rbf_gamma_grid must hold distinct positive"),
        ({"rbf_C_grid": [10, 10]}, "double_hinge.rbf_C_grid must hold distinct positive"),
        ({"rbf_C_grid": []}, "double_hinge.rbf_C_grid must hold distinct positive"),
        (
            {"rbf_rank": 0},
            "double_hinge.rbf_rank must be a positive integer (the Nyström rank), got 0",
        ),
        ({"rbf_rank": 2.5}, "double_hinge.rbf_rank must be a positive integer"),
    ):
        with pytest.raises(ValueError, match=re.escape(message)):
            dh.settings({"double_hinge": bad})


def test_datasets_are_those_the_run_covers_plus_breast_cancer():
    s = dh.settings({})
    assert dh.covered_datasets(s, ["sattelite", "abalone"]) == ["breast_cancer"]
    assert dh.covered_datasets(s, ["phishing", "letter", "marketing"]) == [
        "phishing",
        "marketing",
        "breast_cancer",
    ]
    assert dh.covered_datasets(
        dh.settings({"double_hinge": {"datasets": ["phishing"]}}), ["phishing"]
    ) == ["phishing"]
    assert dh.covered_datasets(
        dh.settings({"double_hinge": {"datasets": ["mine"]}}), ["mine"], custom=["mine"]
    ) == ["mine"]
    with pytest.raises(ValueError, match="not a binary"):
        dh.covered_datasets(
            dh.settings({"double_hinge": {"datasets": ["sattelite"]}}), ["sattelite"]
        )
    with pytest.raises(ValueError, match="unknown dataset|Unknown|unknown"):
        dh.covered_datasets(dh.settings({"double_hinge": {"datasets": ["phishng"]}}), [])


def test_breast_cancer_splits_are_make_splits_and_independent_of_their_number():
    X, y, parts = dh.breast_cancer_split(3, seed=7)
    assert X.shape == (569, 30) and set(np.unique(y)) == {0, 1}
    ref = make_splits(y, DEFAULT_RATIOS, n_splits=5, seed=7, dataset="breast_cancer")
    for p in SPLIT_PARTS:
        np.testing.assert_array_equal(parts[p], ref[f"{p}_3"])
    assert np.array_equal(np.sort(np.concatenate([parts[p] for p in SPLIT_PARTS])), np.arange(569))
    _, _, again = dh.breast_cancer_split(3, seed=7)
    assert all(np.array_equal(parts[p], again[p]) for p in SPLIT_PARTS)
    _, _, other = dh.breast_cancer_split(3, seed=8)
    assert not np.array_equal(parts["tst"], other["tst"])


# --------------------------------------------------------------------------------------------
# 2. One split on breast cancer
# --------------------------------------------------------------------------------------------
# (the fixture bc_run, split 0 through the experiment's file step, is tests/conftest.py's)
def test_breast_cancer_numbers_are_sane(bc_run):
    result, _, _, parts, _ = bc_run
    rows = result.rows
    assert list(rows.columns) == dh.SPLIT_COLUMNS
    assert len(rows) == len(COSTS) * len(dh.METHODS)
    assert set(rows["method"]) == set(dh.METHODS)
    assert (rows["n_test"] == parts["tst"].size).all()
    assert rows["coverage"].between(0, 1).all()
    # cost risk = R^S x coverage + 100 d (1 - coverage), and at most the cheaper of "reject all" and
    # "accept all" (the method's full-coverage error) up to ~3 Tst examples of slack
    recomposed = np.nan_to_num(rows["selective_risk"]) * rows["coverage"] + 100 * rows[
        "reject_cost"
    ] * (1 - rows["coverage"])
    np.testing.assert_allclose(rows["cost_risk"], recomposed)
    slack = 300.0 / parts["tst"].size
    bound = np.minimum(100 * rows["reject_cost"], rows["error_full"]) + slack
    assert (rows["cost_risk"] <= bound).all(), rows[rows["cost_risk"] > bound]
    assert rows["error_full"].between(0, 15).all()  # breast cancer is easy: a few % error
    # the DH-SVM's C has the smallest Val1 cost risk of the grid; its certificate is tight
    dhr = rows[rows["method"] == "double_hinge"].set_index("reject_cost")
    assert (
        (dhr["rel_gap"] <= 1e-6).all()
        and dhr["C"].isin([1, 10, 100, 1000]).all()
        and dhr["gamma"].isna().all()
    )
    # the RBF row: (gamma, C) from its grids (gamma in units of 1 / n_features: 30 features)
    rbf = rows[rows["method"] == "double_hinge_rbf"].set_index("reject_cost")
    assert (rbf["rel_gap"] <= 1e-6).all() and rbf["C"].isin(dh.DEFAULTS["rbf_C_grid"]).all()
    np.testing.assert_allclose(
        [min(abs(30 * g - np.array(dh.DEFAULTS["rbf_gamma_grid"]))) for g in rbf["gamma"]],
        0.0,
        atol=1e-12,
    )
    # Trn1 has fewer rows than the rank: every row is a landmark, the exact kernel
    assert all(
        m.n_landmarks_ == parts["trn1"].size for m in result.models["double_hinge_rbf"].values()
    )


def test_double_hinge_rejects_more_as_d_falls(bc_run):
    result, X, y, parts, _ = bc_run
    dhr = result.rows[result.rows["method"] == "double_hinge"].set_index("reject_cost")["coverage"]
    assert dhr[min(COSTS)] < dhr[max(COSTS)]
    # at every fixed C of the grid the Tst rejection rate falls as d grows
    scaler, trn1, tst = result.models["scaler"], parts["trn1"], parts["tst"]
    Z_trn, Z_tst = scaler.transform(X[trn1]), scaler.transform(X[tst])
    for C in (1, 10, 100, 1000):
        rates = [
            DoubleHingeSVM(reject_cost=d, C=C / trn1.size).fit(Z_trn, y[trn1]).reject(Z_tst).mean()
            for d in COSTS
        ]
        assert np.all(np.diff(rates) <= 0), (C, rates)
        assert rates[0] > rates[-1]
    # the models of the run: Chow's thresholds widen as d falls
    widths = [m.f_plus_ - m.f_minus_ for _, m in sorted(result.models["double_hinge"].items())]
    assert np.all(np.diff(widths) < 0)


@pytest.mark.parametrize("method", dh.DOUBLE_HINGE_METHODS)
def test_double_hinge_row_is_the_chosen_model_on_tst(bc_run, method):
    result, X, y, parts, _ = bc_run
    scaler, tst = result.models["scaler"], parts["tst"]
    Z = scaler.transform(X[tst])
    for d, model in result.models[method].items():
        rejected = model.reject(Z)
        errors = (model.predict(Z) != y[tst]) & ~rejected
        expected = 100 * (errors.sum() + d * rejected.sum()) / tst.size
        row = result.rows[
            (result.rows["method"] == method) & (result.rows["reject_cost"] == d)
        ].iloc[0]
        assert row["cost_risk"] == pytest.approx(expected)
        assert row["n_rejected"] == rejected.sum()
        assert row["C"] == pytest.approx(
            model.C * parts["trn1"].size
        )  # the grid's C is per example
        if method == "double_hinge_rbf":
            assert row["gamma"] == model.gamma and model.kernel == "rbf"


def test_split_files(bc_run):
    result, _, _, _, out = bc_run
    written = pd.read_csv(out / "split_0.csv")
    pd.testing.assert_frame_equal(written, result.rows, check_dtype=False)
    with np.load(out / "split_0.npz") as curves:
        assert sorted(curves.files) == sorted(result.curves)
        assert (
            curves["lr_sele_cov"][-1] == 1.0
            and curves["lr_sele_risk"].size == curves["lr_sele_cov"].size
        )
    timing = pd.read_csv(out / "timing_split_0.csv")
    assert list(timing.columns) == dh.TIMING_COLUMNS and len(timing) == len(result.rows)
    assert (timing["fit_cpu_s"] > 0).all() and (timing["fit_wall_s"] > 0).all()


@pytest.mark.slow  # runs the experiment again
def test_a_rerun_writes_the_same_result_bytes(bc_run, tmp_path):
    """Only the timing file may differ between two runs (a local and a SLURM run are compared byte for byte)."""
    _, _, _, _, out = bc_run
    assert not {"fit_wall_s", "fit_cpu_s"} & set(pd.read_csv(out / "split_0.csv").columns)
    dh.run_dataset_files(
        None,
        None,
        {0: split_paths(tmp_path, 0)},
        dataset="breast_cancer",
        settings={"reject_costs": COSTS},
        seed=0,
    )
    assert (tmp_path / "split_0.csv").read_bytes() == (out / "split_0.csv").read_bytes()
    assert (tmp_path / "split_0.npz").read_bytes() == (out / "split_0.npz").read_bytes()


@pytest.mark.slow  # runs the experiment again
def test_a_multi_split_job_writes_each_split_as_if_alone(bc_run, tmp_path):
    """The pipeline's job runs every split of a dataset; split 0's result files must not depend
    on the other splits the job runs."""
    _, _, _, _, out = bc_run
    results = dh.run_dataset_files(
        None,
        None,
        {k: split_paths(tmp_path, k) for k in (1, 0)},
        dataset="breast_cancer",
        settings={"reject_costs": COSTS},
        seed=0,
    )
    assert sorted(results) == [0, 1] and results[1].rows["split"].eq(1).all()
    assert (tmp_path / "split_0.csv").read_bytes() == (out / "split_0.csv").read_bytes()
    assert (tmp_path / "split_0.npz").read_bytes() == (out / "split_0.npz").read_bytes()
    assert (tmp_path / "split_1.csv").read_bytes() != (out / "split_0.csv").read_bytes()
    assert len(pd.read_csv(tmp_path / "timing_split_1.csv")) == len(results[1].rows)


# --------------------------------------------------------------------------------------------
# 3. The baselines against independent computations; the pipeline's staged data
# --------------------------------------------------------------------------------------------


def test_svm_threshold_rows_match_brute_force(bc_run):
    result, X, y, parts, _ = bc_run
    svm = result.models["svm"]
    f_val = classifier_outputs("svm", svm, X[parts["val2"]], n_classes=2)["decision"]
    f_tst = classifier_outputs("svm", svm, X[parts["tst"]], n_classes=2)["decision"]
    loss_val = 100.0 * ((f_val > 0) != y[parts["val2"]])
    loss_tst = 100.0 * ((f_tst > 0) != y[parts["tst"]])
    rows = result.rows[result.rows["method"] == "svm_threshold"].set_index("reject_cost")
    for d in COSTS:
        cost, coverage, t = brute_force_margin_threshold(f_val, loss_val, d)
        assert rows.loc[d, "val_cost_risk"] == pytest.approx(cost)
        if coverage > 0:
            accept = np.abs(f_tst) >= t
            expected = (loss_tst[accept].sum() + 100 * d * (~accept).sum()) / f_tst.size
            assert rows.loc[d, "cost_risk"] == pytest.approx(expected)
            assert rows.loc[d, "coverage"] == pytest.approx(accept.mean())
            assert rows.loc[d, "threshold"] == pytest.approx(t)


def test_chow_rule_rows_match_a_direct_computation(bc_run):
    result, X, y, parts, _ = bc_run
    lr, tst = result.models["lr"], parts["tst"]
    proba = lr.predict_proba(X[tst])
    wrong = lr.predict(X[tst]) != y[tst]
    rows = result.rows[result.rows["method"] == "lr_chow"].set_index("reject_cost")
    for d in COSTS:
        reject = np.max(proba, axis=1) < 1 - d
        assert rows.loc[d, "cost_risk"] == pytest.approx(
            100 * ((wrong & ~reject).sum() + d * reject.sum()) / tst.size
        )
        assert rows.loc[d, "coverage"] == pytest.approx(1 - reject.mean())
        assert rows.loc[d, "error_full"] == pytest.approx(100 * wrong.mean())


def test_run_split_reads_the_pipelines_staged_data(tmp_path):
    """A pipeline dataset's split comes from its prepared data and splits files (SplitInputs)."""
    X, y, _ = dh.breast_cancer_split(0)
    save_npz(tmp_path / "data.npz", X=X, y=2 * y + 3)  # any two labels
    save_splits(
        tmp_path / "splits.npz", make_splits(y, DEFAULT_RATIOS, n_splits=1, seed=1, dataset="toy")
    )
    inputs = SplitInputs(
        "toy", 0, "classification", 1, tmp_path / "data.npz", tmp_path / "splits.npz"
    )
    result = dh.run_split(
        inputs,
        dh.settings(
            {
                "double_hinge": {
                    "reject_costs": [0.2],
                    "rbf_gamma_grid": [0.3],
                    "rbf_C_grid": [10000],
                }
            }
        ),
    )
    assert list(result.rows.columns) == dh.SPLIT_COLUMNS and len(result.rows) == len(dh.METHODS)
    assert result.rows["dataset"].eq("toy").all() and result.rows["split"].eq(0).all()
    assert (result.rows["n_test"] == inputs.parts["tst"].size).all()
    save_npz(tmp_path / "three.npz", X=X, y=y % 3 + (np.arange(y.size) % 3 == 0))
    with pytest.raises(ValueError, match="binary"):
        dh.run_split(
            SplitInputs(
                "toy", 0, "classification", 1, tmp_path / "three.npz", tmp_path / "splits.npz"
            ),
            dh.settings({}),
        )


def test_the_staged_lr_gives_the_same_results_as_training_it(tmp_path):
    """Where the rule gives the staged LR classifier file (rules/classifiers.smk), LR is read, not
    trained: the same rows and curves; LR's fit times are NaN (not this job's)."""
    X, y, _ = dh.breast_cancer_split(0)
    save_npz(tmp_path / "data.npz", X=X, y=y)
    save_splits(
        tmp_path / "splits.npz", make_splits(y, DEFAULT_RATIOS, n_splits=2, seed=1, dataset="toy")
    )
    staged = {k: {dh.STAGED_LR: tmp_path / f"lr_{k}.npz"} for k in (0, 1)}
    run_classifiers(
        tmp_path / "data.npz",
        tmp_path / "splits.npz",
        {k: tmp_path / f"lr_{k}.npz" for k in (0, 1)},
        "lr",
        [1, 10, 100, 1000],
        seed=1,
        dataset="toy",
    )
    settings = {
        "reject_costs": [0.1, 0.3],
        "rbf_gamma_grid": [0.3],
        "rbf_C_grid": [10000],
    }  # a small RBF grid: fast
    trained = dh.run_dataset_files(
        tmp_path / "data.npz",
        tmp_path / "splits.npz",
        {k: split_paths(tmp_path / "trained", k) for k in (0, 1)},
        dataset="toy",
        seed=1,
        settings=settings,
    )
    read = dh.run_dataset_files(
        tmp_path / "data.npz",
        tmp_path / "splits.npz",
        {k: split_paths(tmp_path / "read", k) for k in (0, 1)},
        dataset="toy",
        seed=1,
        settings=settings,
        staged=staged,
    )
    for k in (0, 1):
        for name in (f"split_{k}.csv", f"split_{k}.npz"):
            assert (tmp_path / "read" / name).read_bytes() == (
                tmp_path / "trained" / name
            ).read_bytes()
        assert read[k].models["lr"] is None and trained[k].models["lr"] is not None
        timing = read[k].timing.set_index("method")
        assert timing.loc[["lr_sele", "lr_chow"], "fit_wall_s"].isna().all()
        assert (
            timing.loc[["double_hinge_rbf", "double_hinge", "svm_threshold"], "fit_wall_s"]
            .notna()
            .all()
        )
    # a staged file of another C grid is not this run's LR
    with pytest.raises(ValueError, match="C_classifier"):
        dh.run_split(
            SplitInputs(
                "toy",
                0,
                "classification",
                1,
                tmp_path / "data.npz",
                tmp_path / "splits.npz",
                staged[0],
            ),
            dh.settings({"C_classifier": [1, 10]}),
        )


# --------------------------------------------------------------------------------------------
# 4. The tables from a synthetic frame
# --------------------------------------------------------------------------------------------
def test_table_ranks_and_wilcoxon_match_scipy_and_stats():
    results = double_hinge_results()
    table = dh.double_hinge_table(results)
    assert len(table) == 2 * 2 * len(dh.METHODS) and (table["n_splits"] == 4).all()
    assert list(table["method"][: len(dh.METHODS)]) == list(dh.METHODS)
    cell = table.set_index(["dataset", "reject_cost", "method"]).loc[("beta", 0.1, "double_hinge")]
    sub = results[
        (results.dataset == "beta")
        & (results.reject_cost == 0.1)
        & (results.method == "double_hinge")
    ]
    assert cell["cost_risk_mean"] == pytest.approx(sub["cost_risk"].mean())
    assert cell["cost_risk_std"] == pytest.approx(sub["cost_risk"].std())
    assert (
        cell["selective_risk_mean"] == pytest.approx(sub["selective_risk"].mean())
        and cell["n_empty"] == 1
    )

    means = (
        results.groupby(["dataset", "reject_cost", "method"])["cost_risk"]
        .mean()
        .unstack()[list(dh.METHODS)]
    )
    ranks = dh.cost_risk_ranks(table)
    expected = stats.average_ranks(means.reset_index(drop=True))
    np.testing.assert_allclose(
        ranks.average_ranks[list(dh.METHODS)].to_numpy(), expected.to_numpy()
    )
    assert ranks.friedman_pvalue == pytest.approx(
        stats.friedman_test(means.reset_index(drop=True)).pvalue
    )

    tests = dh.wilcoxon_tests(results).set_index(["reject_cost", "method"])
    for label, frame in (("0.1", results[results.reject_cost == 0.1]), ("all", results)):
        key = ["dataset", "split", "reject_cost"]
        ref = frame[frame.method == dh.REFERENCE].sort_values(key)
        for method in [m for m in dh.METHODS if m != dh.REFERENCE]:
            other = frame[frame.method == method].sort_values(key)
            assert ref[key].to_numpy().tolist() == other[key].to_numpy().tolist()
            x, y = ref["cost_risk"].to_numpy(), other["cost_risk"].to_numpy()
            res = wilcoxon(x, y)
            got = tests.loc[(label, method)]
            assert got["statistic"] == pytest.approx(res.statistic) and got[
                "pvalue"
            ] == pytest.approx(res.pvalue)
            assert got["n_pairs"] == x.size and got["reference_better"] == int((x < y).sum())


def test_aggregate_returns_the_tables_as_numbers():
    results = double_hinge_results()
    tables = dh.aggregate(results, dh.settings({}))
    assert set(tables) == {"double_hinge", "ranks", "rank_tests", "wilcoxon"}
    assert all(name.isidentifier() for name in tables)
    pd.testing.assert_frame_equal(tables["double_hinge"], dh.double_hinge_table(results))
    pd.testing.assert_frame_equal(tables["wilcoxon"], dh.wilcoxon_tests(results))
    ranks = dh.cost_risk_ranks(dh.double_hinge_table(results))
    assert list(tables["ranks"].index) == list(dh.METHODS)
    np.testing.assert_allclose(
        tables["ranks"]["average_rank"], ranks.average_ranks[list(dh.METHODS)]
    )
    assert tables["ranks"]["best_cells"].tolist() == ranks.wins[list(dh.METHODS)].tolist()
    assert tables["rank_tests"].iloc[0]["n_cells"] == 4
    assert tables["rank_tests"].iloc[0]["friedman_pvalue"] == pytest.approx(ranks.friedman_pvalue)


def test_table_file_writes_the_table(tmp_path):
    results = double_hinge_results()
    paths = []
    for (dataset, split), frame in results.groupby(["dataset", "split"]):
        paths.append(tmp_path / f"{dataset}_{split}.csv")
        save_csv(frame, paths[-1])  # as run_dataset_files writes them, with their content record
    rows, table = dh.table_file(paths, tmp_path / "table.csv")
    pd.testing.assert_frame_equal(
        pd.read_csv(tmp_path / "table.csv", dtype={"C": str, "gamma": str}),
        table,
        check_dtype=False,
    )
    assert len(rows) == len(results)


def test_wilcoxon_of_identical_methods_is_one():
    results = double_hinge_results()
    same = results[results.method == dh.REFERENCE].assign(method="lr_chow")
    frame = pd.concat([results[results.method == dh.REFERENCE], same])
    tests = dh.wilcoxon_tests(frame)
    assert (tests["pvalue"] == 1.0).all() and (tests["n_nonzero"] == 0).all()


def test_table_order_keeps_datasets_as_met_costs_sorted_and_the_methods_first():
    rows = pd.DataFrame(
        {
            "dataset": ["b", "a", "b"],
            "reject_cost": [0.3, 0.1, 0.1],
            "method": ["mine", "lr_chow", "double_hinge"],
        }
    )
    assert dh.table_order(rows) == (["b", "a"], [0.1, 0.3], ["double_hinge", "lr_chow", "mine"])
