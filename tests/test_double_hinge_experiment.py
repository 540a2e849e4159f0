"""The double-hinge experiment (rejectopt.double_hinge_experiment, workflow/rules/double_hinge.smk; issue 15, part 3).

1. Settings and the datasets a run covers; breast cancer's splits.
2. One split on breast cancer: sane numbers, the double-hinge SVM rejects more as d falls, files.
3. The naive baseline (plain SVM, |f| threshold on Val2) against a brute-force threshold search;
   Chow's rule on LR's posterior against a direct computation.
4. The table, ranks and Wilcoxon tests from a synthetic frame against scipy / rejectopt.stats.
5. The pipeline plans the rules on the CI configuration.
"""

import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import wilcoxon

from rejectopt import stats
from rejectopt import double_hinge_experiment as dh
from rejectopt.classifiers import DoubleHingeSVM, classifier_outputs
from rejectopt.splits import DEFAULT_RATIOS, PARTS, make_splits

REPO = Path(__file__).resolve().parents[1]
DEMO_MIRROR = REPO / "workflow" / "resources" / "demo_mirror"
COSTS = [0.05, 0.1, 0.2, 0.3, 0.45]


# --------------------------------------------------------------------------------------------
# 1. Settings, datasets, breast cancer's splits
# --------------------------------------------------------------------------------------------
def test_settings_fill_defaults_and_reject_bad_values():
    s = dh.double_hinge_settings({"reject_costs": [0.3, 0.1]})
    assert s["reject_costs"] == [0.1, 0.3] and s["c_scaling"] == "mean" and s["C_grid"] == [1.0, 10.0, 100.0, 1000.0]
    for bad in ({"reject_cost": [0.1]}, {"reject_costs": [0.5]}, {"reject_costs": [0.0]}, {"C_grid": [0]},
                {"c_scaling": "per_example"}):
        with pytest.raises(ValueError, match="double_hinge"):
            dh.double_hinge_settings(bad)


def test_datasets_are_those_the_run_covers_plus_breast_cancer():
    s = dh.double_hinge_settings()
    assert dh.double_hinge_datasets(s, ["sattelite", "abalone"]) == ["breast_cancer"]
    assert dh.double_hinge_datasets(s, ["phishing", "letter", "marketing"]) == ["phishing", "marketing", "breast_cancer"]
    assert dh.double_hinge_datasets(dh.double_hinge_settings({"datasets": ["phishing"]}), ["phishing"]) == ["phishing"]
    with pytest.raises(ValueError, match="not a binary"):
        dh.double_hinge_datasets(dh.double_hinge_settings({"datasets": ["sattelite"]}), ["sattelite"])
    with pytest.raises(ValueError, match="unknown dataset|Unknown|unknown"):
        dh.double_hinge_datasets(dh.double_hinge_settings({"datasets": ["phishng"]}), [])


def test_breast_cancer_splits_are_make_splits_and_independent_of_their_number():
    X, y, parts = dh.breast_cancer_split(3, seed=7)
    assert X.shape == (569, 30) and set(np.unique(y)) == {0, 1}
    ref = make_splits(y, DEFAULT_RATIOS, n_splits=5, seed=7, dataset="breast_cancer")
    for p in PARTS:
        np.testing.assert_array_equal(parts[p], ref[f"{p}_3"])
    assert np.array_equal(np.sort(np.concatenate([parts[p] for p in PARTS])), np.arange(569))
    _, _, again = dh.breast_cancer_split(3, seed=7)
    assert all(np.array_equal(parts[p], again[p]) for p in PARTS)
    _, _, other = dh.breast_cancer_split(3, seed=8)
    assert not np.array_equal(parts["tst"], other["tst"])


# --------------------------------------------------------------------------------------------
# 2. One split on breast cancer
# --------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def bc_run(tmp_path_factory):
    """Split 0 of breast cancer through the file-in / file-out step (the pipeline's job)."""
    out = tmp_path_factory.mktemp("double_hinge") / "breast_cancer"
    result = dh.double_hinge_split_files(None, None, 0, out / "split_0.csv", out / "split_0.npz",
                                         out / "timing_split_0.csv", dataset="breast_cancer",
                                         settings={"reject_costs": COSTS}, seed=0)
    X, y, parts = dh.breast_cancer_split(0, seed=0)
    return result, X, y, parts, out


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
    recomposed = np.nan_to_num(rows["selective_risk"]) * rows["coverage"] + 100 * rows["reject_cost"] * (1 - rows["coverage"])
    np.testing.assert_allclose(rows["cost_risk"], recomposed)
    slack = 300.0 / parts["tst"].size
    bound = np.minimum(100 * rows["reject_cost"], rows["error_full"]) + slack
    assert (rows["cost_risk"] <= bound).all(), rows[rows["cost_risk"] > bound]
    assert rows["error_full"].between(0, 15).all()  # breast cancer is easy: a few % error
    # the DH-SVM's C has the smallest Val1 cost risk of the grid; its certificate is tight
    dhr = rows[rows["method"] == "double_hinge"].set_index("reject_cost")
    assert (dhr["rel_gap"] <= 1e-6).all() and dhr["C"].isin([1, 10, 100, 1000]).all()


def test_double_hinge_rejects_more_as_d_falls(bc_run):
    result, X, y, parts, _ = bc_run
    dhr = result.rows[result.rows["method"] == "double_hinge"].set_index("reject_cost")["coverage"]
    assert dhr[min(COSTS)] < dhr[max(COSTS)]
    # at every fixed C of the grid the Tst rejection rate falls as d grows
    scaler, trn1, tst = result.models["scaler"], parts["trn1"], parts["tst"]
    Z_trn, Z_tst = scaler.transform(X[trn1]), scaler.transform(X[tst])
    for C in (1, 10, 100, 1000):
        rates = [DoubleHingeSVM(reject_cost=d, C=C / trn1.size).fit(Z_trn, y[trn1]).reject(Z_tst).mean() for d in COSTS]
        assert np.all(np.diff(rates) <= 0), (C, rates)
        assert rates[0] > rates[-1]
    # the models of the run: Chow's thresholds widen as d falls
    widths = [m.f_plus_ - m.f_minus_ for _, m in sorted(result.models["double_hinge"].items())]
    assert np.all(np.diff(widths) < 0)


def test_double_hinge_row_is_the_chosen_model_on_tst(bc_run):
    result, X, y, parts, _ = bc_run
    scaler, tst = result.models["scaler"], parts["tst"]
    Z = scaler.transform(X[tst])
    for d, model in result.models["double_hinge"].items():
        rejected = model.reject(Z)
        errors = (model.predict(Z) != y[tst]) & ~rejected
        expected = 100 * (errors.sum() + d * rejected.sum()) / tst.size
        row = result.rows[(result.rows["method"] == "double_hinge") & (result.rows["reject_cost"] == d)].iloc[0]
        assert row["cost_risk"] == pytest.approx(expected)
        assert row["n_rejected"] == rejected.sum()


def test_split_files_and_report_files(bc_run, tmp_path):
    result, _, _, _, out = bc_run
    written = pd.read_csv(out / "split_0.csv")
    pd.testing.assert_frame_equal(written, result.rows, check_dtype=False)
    with np.load(out / "split_0.npz") as curves:
        assert curves["lr_sele_cov"][-1] == 1.0 and curves["lr_sele_risk"].size == curves["lr_sele_cov"].size
    timing = pd.read_csv(out / "timing_split_0.csv")
    assert list(timing.columns) == dh.TIMING_COLUMNS and len(timing) == len(result.rows)
    assert (timing["fit_cpu_s"] > 0).all() and (timing["fit_wall_s"] > 0).all()
    table = dh.double_hinge_report_files([out / "split_0.csv"], [out / "split_0.npz"], tmp_path / "t.csv",
                                         tmp_path / "t.md", tmp_path / "t.tex",
                                         figures={"breast_cancer": tmp_path / "bc.png"},
                                         timing_paths=[out / "timing_split_0.csv"], timing_out=tmp_path / "time.md")
    assert len(table) == len(COSTS) * len(dh.METHODS) and (table["n_splits"] == 1).all()
    assert (tmp_path / "bc.png").read_bytes()[:4] == b"\x89PNG"
    md = (tmp_path / "t.md").read_text()
    assert "Cost risk on Tst" in md and "Wilcoxon" in md and "DH-SVM" in md
    assert "\\begin{tabular}" in (tmp_path / "t.tex").read_text()
    # the DH-SVM's time: its fits summed over the reject costs (one split)
    dh_cpu = timing.loc[timing["method"] == "double_hinge", "fit_cpu_s"].sum()
    assert f"| breast_cancer | {dh_cpu:.1f} |" in (tmp_path / "time.md").read_text()


def test_a_rerun_writes_the_same_result_bytes(bc_run, tmp_path):
    """Only the timing file may differ between two runs (a local and a SLURM run are compared byte for byte)."""
    _, _, _, _, out = bc_run
    assert not {"fit_wall_s", "fit_cpu_s"} & set(pd.read_csv(out / "split_0.csv").columns)
    dh.double_hinge_split_files(None, None, 0, tmp_path / "split_0.csv", tmp_path / "split_0.npz",
                                tmp_path / "timing_split_0.csv", dataset="breast_cancer",
                                settings={"reject_costs": COSTS}, seed=0)
    assert (tmp_path / "split_0.csv").read_bytes() == (out / "split_0.csv").read_bytes()
    assert (tmp_path / "split_0.npz").read_bytes() == (out / "split_0.npz").read_bytes()


def test_a_multi_split_job_writes_each_split_as_if_alone(bc_run, tmp_path):
    """The pipeline's job runs every split of a dataset (double_hinge_splits_files); split 0's
    result files must not depend on the other splits the job runs."""
    _, _, _, _, out = bc_run
    files = {k: (tmp_path / f"split_{k}.csv", tmp_path / f"split_{k}.npz", tmp_path / f"timing_{k}.csv")
             for k in (1, 0)}
    results = dh.double_hinge_splits_files(None, None, files, dataset="breast_cancer",
                                           settings={"reject_costs": COSTS}, seed=0)
    assert sorted(results) == [0, 1] and results[1].rows["split"].eq(1).all()
    assert (tmp_path / "split_0.csv").read_bytes() == (out / "split_0.csv").read_bytes()
    assert (tmp_path / "split_0.npz").read_bytes() == (out / "split_0.npz").read_bytes()
    assert (tmp_path / "split_1.csv").read_bytes() != (out / "split_0.csv").read_bytes()
    assert len(pd.read_csv(tmp_path / "timing_1.csv")) == len(results[1].rows)


# --------------------------------------------------------------------------------------------
# 3. The baselines against independent computations
# --------------------------------------------------------------------------------------------
def _brute_force_threshold(f, loss, d):
    """Every threshold t: reject iff |f| < t. Returns (min cost risk, coverage, t) of the minimiser
    with the largest coverage."""
    a = np.abs(f)
    best = None
    for t in np.concatenate([np.unique(a), [np.inf]]):
        accept = a >= t
        cost = (loss[accept].sum() + 100 * d * (~accept).sum()) / a.size
        if best is None or cost < best[0] - 1e-9 or (abs(cost - best[0]) <= 1e-9 and accept.mean() > best[1]):
            best = (cost, accept.mean(), t)
    return best


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_margin_threshold_matches_brute_force_on_synthetic_data(seed):
    rng = np.random.default_rng(seed)
    f = np.round(rng.normal(size=300), 1)  # many ties in |f|, and f = 0
    loss = 100.0 * (rng.random(300) < 1 / (1 + np.exp(3 * np.abs(f))))
    for d in COSTS:
        sel = dh.fit_margin_threshold(f, loss, d)
        accept = sel.acceptance_probability(-np.abs(f)) > 0.5
        cost, coverage, t = _brute_force_threshold(f, loss, d)
        got = dh.selective_outcome(loss, accept, d)
        assert got["cost_risk"] == pytest.approx(cost)
        assert got["coverage"] == pytest.approx(coverage)
        if coverage > 0:
            assert -sel.threshold == pytest.approx(t)


def test_svm_threshold_rows_match_brute_force(bc_run):
    result, X, y, parts, _ = bc_run
    svm = result.models["svm"]
    f_val = classifier_outputs("svm", svm, X[parts["val2"]], n_classes=2)["decision"]
    f_tst = classifier_outputs("svm", svm, X[parts["tst"]], n_classes=2)["decision"]
    loss_val = 100.0 * ((f_val > 0) != y[parts["val2"]])
    loss_tst = 100.0 * ((f_tst > 0) != y[parts["tst"]])
    rows = result.rows[result.rows["method"] == "svm_threshold"].set_index("reject_cost")
    for d in COSTS:
        cost, coverage, t = _brute_force_threshold(f_val, loss_val, d)
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
        assert rows.loc[d, "cost_risk"] == pytest.approx(100 * ((wrong & ~reject).sum() + d * reject.sum()) / tst.size)
        assert rows.loc[d, "coverage"] == pytest.approx(1 - reject.mean())
        assert rows.loc[d, "error_full"] == pytest.approx(100 * wrong.mean())
    # the boundary: max posterior exactly 1 - d is accepted
    assert dh.chow_reject([[0.8, 0.2], [0.79, 0.21], [0.1, 0.9]], 0.2).tolist() == [False, True, False]


# --------------------------------------------------------------------------------------------
# 4. The table from a synthetic frame
# --------------------------------------------------------------------------------------------
def _synthetic_results():
    rng = np.random.default_rng(3)
    rows = []
    for k, dataset in enumerate(["alpha", "beta"]):
        for split in range(4):
            for d in (0.1, 0.3):
                for m, method in enumerate(dh.METHODS):
                    coverage = 0.0 if (dataset, split, d, method) == ("beta", 2, 0.1, "double_hinge") else 0.5 + 0.1 * m
                    rows.append({
                        "dataset": dataset, "split": split, "reject_cost": d, "method": method,
                        "cost_risk": 3.0 + m * 0.3 + k + d + rng.random(), "coverage": coverage,
                        "selective_risk": np.nan if coverage == 0 else 2.0 + rng.random(),
                        "error_full": 5.0, "C": 10.0,
                    })
    return pd.DataFrame(rows)


def test_table_ranks_and_wilcoxon_match_scipy_and_stats():
    results = _synthetic_results()
    table = dh.double_hinge_table(results)
    assert len(table) == 2 * 2 * 4 and (table["n_splits"] == 4).all()
    assert list(table["method"][:4]) == list(dh.METHODS)
    cell = table.set_index(["dataset", "reject_cost", "method"]).loc[("beta", 0.1, "double_hinge")]
    sub = results[(results.dataset == "beta") & (results.reject_cost == 0.1) & (results.method == "double_hinge")]
    assert cell["cost_risk_mean"] == pytest.approx(sub["cost_risk"].mean())
    assert cell["cost_risk_std"] == pytest.approx(sub["cost_risk"].std())
    assert cell["selective_risk_mean"] == pytest.approx(sub["selective_risk"].mean()) and cell["n_empty"] == 1

    means = results.groupby(["dataset", "reject_cost", "method"])["cost_risk"].mean().unstack()[list(dh.METHODS)]
    ranks = dh.cost_risk_ranks(table)
    expected = stats.average_ranks(means.reset_index(drop=True))
    np.testing.assert_allclose(ranks.average_ranks[list(dh.METHODS)].to_numpy(), expected.to_numpy())
    assert ranks.friedman_pvalue == pytest.approx(stats.friedman_test(means.reset_index(drop=True)).pvalue)

    tests = dh.wilcoxon_tests(results).set_index(["reject_cost", "method"])
    for label, frame in (("0.1", results[results.reject_cost == 0.1]), ("all", results)):
        key = ["dataset", "split", "reject_cost"]
        ref = frame[frame.method == "double_hinge"].sort_values(key)
        for method in dh.METHODS[1:]:
            other = frame[frame.method == method].sort_values(key)
            assert ref[key].to_numpy().tolist() == other[key].to_numpy().tolist()
            x, y = ref["cost_risk"].to_numpy(), other["cost_risk"].to_numpy()
            res = wilcoxon(x, y)
            got = tests.loc[(label, method)]
            assert got["statistic"] == pytest.approx(res.statistic) and got["pvalue"] == pytest.approx(res.pvalue)
            assert got["n_pairs"] == x.size and got["reference_better"] == int((x < y).sum())

    md = dh.render_double_hinge_table(table, results, "md")
    for method in dh.METHODS:
        label = dh.method_label(method).replace("|", "\\|")  # a literal | is escaped in a Markdown table
        assert f"| {label} | {ranks.average_ranks[method]:.2f} |" in md
    p_all = tests.loc[("all", "lr_chow"), "pvalue"]
    assert f"p = {p_all:.4f}" in md
    assert "(1/4 empty)" in md
    best = means.loc[("alpha", 0.3)].idxmin()
    assert f"**{table.set_index(['dataset', 'reject_cost', 'method']).loc[('alpha', 0.3, best), 'cost_risk_mean']:.2f}" in md
    tex = dh.render_double_hinge_table(table, results, "tex")
    assert "\\begin{tabular}" in tex and "$\\pm$" in tex and "\\textbf{" in tex and "$|f|$" in tex


def test_wilcoxon_of_identical_methods_is_one():
    results = _synthetic_results()
    same = results[results.method == "double_hinge"].assign(method="lr_chow")
    frame = pd.concat([results[results.method == "double_hinge"], same])
    tests = dh.wilcoxon_tests(frame)
    assert (tests["pvalue"] == 1.0).all() and (tests["n_nonzero"] == 0).all()


# --------------------------------------------------------------------------------------------
# 5. The pipeline plans the rules
# --------------------------------------------------------------------------------------------
def test_pipeline_plans_the_double_hinge_rules_on_the_ci_configuration(tmp_path):
    cmd = [
        sys.executable, "-m", "snakemake", "--snakefile", str(REPO / "Snakefile"), "--directory", str(tmp_path),
        "-n", "--quiet", "rules", "--config", f"data_mirror={DEMO_MIRROR}", "datasets=[sattelite,abalone]",
        "n_splits=1",
    ]
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    counts = {
        line.split()[0]: int(line.split()[1])
        for line in (run.stdout + run.stderr).splitlines()
        if len(line.split()) == 2 and line.split()[1].isdigit()
    }
    # neither sattelite (6 classes) nor abalone (ordinal) is binary: breast cancer only, 1 split
    assert counts["double_hinge_split"] == 1
    assert counts["double_hinge_report"] == 1
