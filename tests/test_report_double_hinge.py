"""The double-hinge experiment rendered (rejectopt.pipeline.report.double_hinge): the Markdown / LaTeX table,
the solver times, the figure and the report files of one real split."""

import re
import zipfile

import numpy as np
import pandas as pd
import pytest
from support import COSTS, double_hinge_results

from rejectopt._io import IntermediateFileError, load_npz, save_npz
from rejectopt.pipeline.experiments import double_hinge as dh
from rejectopt.pipeline.report import double_hinge as report


def test_labels():
    assert report.method_label("double_hinge_rbf") == "DH-SVM (RBF)"
    assert (
        report.method_label("double_hinge") == "DH-SVM (linear)"
        and report.method_label("lr_chow") == "LR + Chow"
    )
    assert report.method_label("mine") == "mine"


def test_table_renders_the_numbers_of_the_experiment():
    results = double_hinge_results()
    table = dh.double_hinge_table(results)
    ranks = dh.cost_risk_ranks(table)
    tests = dh.wilcoxon_tests(results).set_index(["reject_cost", "method"])
    md = report.render_double_hinge_table(table, results, "md")
    for method in dh.METHODS:
        label = report.method_label(method).replace(
            "|", "\\|"
        )  # a literal | is escaped in a Markdown table
        assert f"| {label} | {ranks.average_ranks[method]:.2f} |" in md
    p_all = tests.loc[("all", "lr_chow"), "pvalue"]
    assert f"p = {p_all:.4f}" in md
    assert "(1/4 empty)" in md
    means = results.groupby(["dataset", "reject_cost", "method"])["cost_risk"].mean()
    best = means.loc[("alpha", 0.3)].idxmin()
    assert (
        f"**{table.set_index(['dataset', 'reject_cost', 'method']).loc[('alpha', 0.3, best), 'cost_risk_mean']:.2f}"
        in md
    )
    tex = report.render_double_hinge_table(table, results, "tex")
    assert "\\begin{tabular}" in tex and "$\\pm$" in tex and "\\textbf{" in tex and "$|f|$" in tex
    with pytest.raises(ValueError, match="fmt"):
        report.render_double_hinge_table(table, results, "html")


def test_ranks_over_two_cells_say_their_tests_have_no_power():
    """One dataset, two reject costs: 2 (dataset, d) cells, whose Friedman test over the methods cannot
    reach p <= 0.05 (at most chi2 = 2 (k - 1)); four cells can, and carry no caveat."""
    from scipy.stats import chi2

    results = double_hinge_results()
    k = len(dh.METHODS)
    alpha = results[results["dataset"] == "alpha"]
    md = report.render_double_hinge_table(dh.double_hinge_table(alpha), alpha, "md")
    assert (
        f"Caveat: with N = 2 (dataset, d) cells and k = {k} methods the Friedman test cannot reject equivalence "
        f"at 0.05 whatever the results (its smallest possible p, every dataset ranking the methods alike, is "
        f"{chi2.sf(2 * (k - 1), k - 1):.3f})"
    ) in md
    assert "Caveat" not in report.render_double_hinge_table(
        dh.double_hinge_table(results), results, "md"
    )


def test_bold_follows_the_printed_cost_risks():
    """A (dataset, d) row where every method prints the same cost risk has no bold (and the table says
    so); where two print the best value, both are bold."""
    results = double_hinge_results()
    costs = sorted(results["reject_cost"].unique())
    alpha = results[(results["dataset"] == "alpha") & results["reject_cost"].isin(costs[:2])].copy()
    first, second = alpha["reject_cost"] == costs[0], alpha["reject_cost"] == costs[1]
    alpha.loc[first, "cost_risk"] = 5.0 + 0.001 * alpha.loc[first, "split"]  # every method 5.00
    alpha.loc[second, "cost_risk"] = np.where(
        alpha.loc[second, "method"].isin(dh.METHODS[:2]), 1.0, 2.0
    )
    md = report.render_double_hinge_table(dh.double_hinge_table(alpha), alpha, "md")
    rows = md.split("\n\n")[1].splitlines()[2:4]  # the cost-risk table's two rows
    assert "**" not in rows[0] and rows[1].count("**1.00") == 2 and rows[1].count("**") == 4
    assert "No bold where every method prints the same mean." in md


def test_cells_print_na_for_a_missing_mean_and_the_mean_alone_for_one_split():
    results = double_hinge_results()
    one = results[results["split"] == 0].copy()
    one.loc[one["method"] == "lr_chow", "selective_risk"] = np.nan
    one.loc[one["method"] == "lr_chow", "coverage"] = 0.0
    md = report.render_double_hinge_table(dh.double_hinge_table(one), one, "md")
    assert " ± " not in md.split("### Coverage")[1].split("###")[0].replace("mean ± std", "")
    assert "n/a (1/1 empty)" in md


def test_timing_table():
    timing = pd.DataFrame(
        {
            "dataset": ["a"] * 6,
            "split": [0, 0, 0, 1, 1, 1],
            "reject_cost": [0.1] * 6,
            "method": ["double_hinge_rbf", "double_hinge", "svm_threshold"] * 2,
            "fit_wall_s": [10.0, 1.0, 2.0, 30.0, 3.0, 4.0],
            "fit_cpu_s": [8.0, 1.0, 0.5, 20.0, 3.0, 1.5],
        }
    )
    text = report.render_double_hinge_timing(timing)
    # RBF CPU / wall, linear CPU / wall, plain SVM CPU: means over the two splits
    assert "| a | 14.0 | 20.0 | 2.0 | 2.0 | 1.0 | 2 |" in text
    with pytest.raises(ValueError, match="fit_cpu_s"):
        report.render_double_hinge_timing(timing.drop(columns="fit_cpu_s"))


@pytest.fixture(scope="module")
def bc_files(bc_run):
    """The folder of breast cancer's split 0 (tests/conftest.py's bc_run)."""
    return bc_run[-1]


def test_report_files(bc_files, tmp_path):
    out = bc_files
    table = report.double_hinge_report_files(
        [out / "split_0.csv"],
        [out / "split_0.npz"],
        tmp_path / "t.csv",
        tmp_path / "t.md",
        tmp_path / "t.tex",
        figures={"breast_cancer": tmp_path / "bc.png"},
        timing_paths=[out / "timing_split_0.csv"],
        timing_out=tmp_path / "time.md",
    )
    assert len(table) == len(COSTS) * len(dh.METHODS) and (table["n_splits"] == 1).all()
    pd.testing.assert_frame_equal(
        pd.read_csv(tmp_path / "t.csv", dtype={"C": str, "gamma": str}), table, check_dtype=False
    )
    assert (tmp_path / "bc.png").read_bytes()[:4] == b"\x89PNG"
    md = (tmp_path / "t.md").read_text()
    assert "Cost risk on Tst" in md and "Wilcoxon" in md and "DH-SVM (RBF) vs DH-SVM (linear)" in md
    rbf = table[table["method"] == "double_hinge_rbf"]
    assert (
        f"{rbf['reject_cost'].iloc[0]:g}: C {rbf['C'].iloc[0]}, gamma {rbf['gamma'].iloc[0]}" in md
    )
    assert "\\begin{tabular}" in (tmp_path / "t.tex").read_text()
    # each DH-SVM's time: its fits summed over the reject costs (one split)
    timing = pd.read_csv(out / "timing_split_0.csv")
    rbf_cpu, rbf_wall, lin_cpu = (
        timing.loc[timing["method"] == m, c].sum()
        for m, c in (
            ("double_hinge_rbf", "fit_cpu_s"),
            ("double_hinge_rbf", "fit_wall_s"),
            ("double_hinge", "fit_cpu_s"),
        )
    )
    assert (
        f"| breast_cancer | {rbf_cpu:.1f} | {rbf_wall:.1f} | {lin_cpu:.1f} |"
        in (tmp_path / "time.md").read_text()
    )
    with pytest.raises(ValueError, match="no curve file"):
        report.double_hinge_report_files(
            [out / "split_0.csv"],
            [out / "split_0.npz"],
            tmp_path / "u.csv",
            tmp_path / "u.md",
            tmp_path / "u.tex",
            figures={"phishing": tmp_path / "p.png"},
        )


def test_report_files_refuse_a_curve_file_changed_since_it_was_written(bc_files, tmp_path):
    """The curve files are verified against their content record: one rewritten by hand (no record)
    or edited after save_npz wrote it stops the report with the file's name."""
    curves = load_npz(bc_files / "split_0.npz")
    folder = tmp_path / "breast_cancer"
    folder.mkdir()
    unrecorded, edited = folder / "unrecorded.npz", folder / "edited.npz"
    np.savez(unrecorded, **curves)
    save_npz(edited, **curves)
    with zipfile.ZipFile(edited) as archive:  # same record, one array changed
        comment = archive.comment
    changed = dict(curves, svm_risk=curves["svm_risk"] + 1.0)
    np.savez(edited, **changed)
    with zipfile.ZipFile(edited, "a") as archive:
        archive.comment = comment
    for path, reason in (
        (unrecorded, "no content record"),
        (edited, "its arrays changed after it was written"),
    ):
        with pytest.raises(IntermediateFileError, match=re.escape(str(path))) as err:
            report.double_hinge_report_files(
                [bc_files / "split_0.csv"],
                [path],
                tmp_path / "t.csv",
                tmp_path / "t.md",
                tmp_path / "t.tex",
                figures={"breast_cancer": tmp_path / "bc.png"},
            )
        assert reason in str(err.value)
    assert not (tmp_path / "bc.png").exists()


def test_figure_shows_the_mean_rc_curves_and_each_methods_cost_risk():
    results = double_hinge_results()
    curves = [
        {
            "lr_sele_cov": np.array([0.2, 0.6, 1.0]),
            "lr_sele_risk": np.array([1.0, 2.0, 5.0]),
            "svm_cov": np.array([0.1, 0.5, 1.0]),
            "svm_risk": np.array([0.5, 2.5, 6.0]),
        }
    ] * 2
    fig = report.double_hinge_figure(curves, results[results["dataset"] == "alpha"], "alpha")
    assert [(ax.get_xlabel(), ax.get_ylabel()) for ax in fig.axes] == [
        ("coverage", "selective risk $R^S$ [%]"),
        ("reject cost d", "cost risk [%]"),
    ]
    assert (
        fig.axes[0].get_title() == "alpha: Tst, mean of 4 split(s); points: each method at each d"
    )  # the rows' splits
