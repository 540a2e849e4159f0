"""The OOD experiment rendered (rejectopt.pipeline.report.ood): labels, the Markdown / LaTeX table against the
experiment's statistics, the figures of one real split, the report files, and the seed's Table 1."""

import numpy as np
import pandas as pd
import pytest
from support import ood_results

from rejectopt import ood, stats
from rejectopt.pipeline.experiments import ood as ood_experiment
from rejectopt.pipeline.report import ood as report


def test_labels():
    assert report.method_label("mcp+knn") == "MCP + kNN"
    assert report.method_label("sele+mahalanobis") == "SELE + Mahalanobis"
    assert report.method_label("margin") == "Margin" and report.method_label("mine") == "mine"


def test_table_renders_the_statistics_of_the_experiment():
    results, methods = ood_results()
    table = ood_experiment.ood_table(results)
    means = results.groupby(["dataset", "method"])["risk_seed"].mean().unstack()[methods]
    means.loc["beta", "mcp"] = 1e6
    expected = stats.average_ranks(means)
    friedman = stats.friedman_test(means)

    md = report.render_ood_table(table, "md")
    assert f"p = {friedman.pvalue:.4f}" in md
    for method in methods:
        assert f"| {report.method_label(method)} | {expected[method]:.2f} |" in md
    assert "unable on 1/3" in md and "MCP + kNN" in md
    tex = report.render_ood_table(table, "tex")
    assert "\\begin{tabular}" in tex and "$\\pm$" in tex and "$R^S$" in tex
    with pytest.raises(ValueError, match="fmt"):
        report.render_ood_table(table, "html")


def test_table_of_two_datasets_says_its_tests_have_no_power():
    """N = 2 datasets, k = 4 methods: the Friedman statistic is at most N (k - 1) = 6, p = 0.112 on
    3 degrees of freedom, so the table says the tests have no power; with 3 datasets they have."""
    from scipy.stats import chi2

    results, _ = ood_results()
    two = report.render_ood_table(
        ood_experiment.ood_table(results[results["dataset"] != "gamma"]), "md"
    )
    assert round(chi2.sf(6, 3), 3) == 0.112
    assert (
        "Caveat: with N = 2 datasets and k = 4 methods the Friedman test cannot reject equivalence at 0.05 "
        "whatever the results (its smallest possible p, every dataset ranking the methods alike, is 0.112)"
    ) in two
    assert "Caveat" not in report.render_ood_table(ood_experiment.ood_table(results), "md")


def test_table_of_one_dataset_says_why_its_tests_are_na():
    """The OOD table of one dataset (the demo's sattelite) prints Friedman n/a with the caveat saying why,
    "1 dataset" in the singular."""
    results, _ = ood_results()
    one = report.render_ood_table(
        ood_experiment.ood_table(results[results["dataset"] == "alpha"]), "md"
    )
    assert "Friedman test (ranks by R^S at the seed bound, 1 dataset): p = n/a" in one
    assert (
        "Caveat: with N = 1 dataset the Friedman and Nemenyi tests are not defined (n/a): they compare the "
        "methods' ranks across datasets, and with k = 4 methods the Friedman test can reject equivalence at "
        "0.05 from N = 3 on; run more datasets."
    ) in one


def test_bold_follows_the_printed_risks():
    """Two methods whose R^S print alike share the bold; a dataset where all print alike has none."""
    results, _ = ood_results()
    results = results[results["dataset"] == "alpha"].copy()
    results["risk_seed"] = results["method"].map(
        {"mcp": 3.001, "knn": 2.999, "mcp+knn": 3.5, "sele": 4.0}
    )
    results["risk_fixed"] = 7.0
    md = report.render_ood_table(ood_experiment.ood_table(results), "md")
    first = md.split("### Average ranks")[0]
    assert first.count("**3.00 ± 0.00**") == 2 and first.count("**") == 4
    assert "No bold where every method prints the same mean." in first


def test_cells_print_unable_for_a_missing_mean_and_the_mean_alone_for_one_split():
    results, _ = ood_results()
    one = results[results["split"] == 1]
    md = report.render_ood_table(ood_experiment.ood_table(one), "md")
    first = md.split("### Average ranks")[0]
    assert " ± " not in first.replace("mean ± std", "")
    assert "| beta (0.300) | MCP | unable |" in md


def test_report_files(sattelite, tmp_path):
    folder = sattelite[0]
    table = report.ood_table_files(
        [folder / "split_0.csv"], tmp_path / "t.csv", tmp_path / "t.md", tmp_path / "t.tex"
    )
    assert len(table) == 7 and (table["n_splits"] == 1).all()
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "t.csv"), table, check_dtype=False)
    assert "OOD benchmark, LR" in (tmp_path / "t.md").read_text()
    assert "\\begin{tabular}" in (tmp_path / "t.tex").read_text()


def test_sattelite_figures_are_written(sattelite, tmp_path):
    folder = sattelite[0]
    report.ood_figure_files(
        [folder / "split_0.npz"], tmp_path / "roc.png", tmp_path / "rc.png", dataset="sattelite"
    )
    for name in ("roc.png", "rc.png"):
        assert (tmp_path / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_table1_rendering_places_computed_beside_paper():
    paper = ood.paper_table1()
    text = report.render_table1(paper.assign(mu=[np.inf, 0.2, 0.0, 0.11]), paper, paper)
    assert "| C(0) | paper | unable | unable | 0.760 |" in text
    assert "| | stated (OOD mean 3) |" not in text and "|  | stated (OOD mean 3) |" in text
    assert "| inf |" in text


def test_sattelite_figures_name_the_dataset_classifier_and_methods(sattelite):
    from rejectopt._io import load_npz

    curves = load_npz(sattelite[0] / "split_0.npz")
    labels = [report.method_label(m) for m in curves["lr__methods"]]
    roc = report.ood_roc_figure([curves], "sattelite").axes[0]
    assert roc.get_title().startswith("sattelite, LR: ROC on Tst, mean of 1 split(s)\ndotted: TPR ")
    assert [text.get_text() for text in roc.get_legend().get_texts()] == labels
    seed, fpr = report.ood_rc_figure([curves], "sattelite").axes
    assert seed.get_title().startswith("sattelite, LR: RC at seed bound (mean ")
    assert fpr.get_title() == f"sattelite, LR: RC at FPR <= {float(curves['fpr_max']):g}, Tst"
    assert [
        text.get_text().split(" (unable)")[0] for text in fpr.get_legend().get_texts()
    ] == labels


def test_table1_file_writes_what_it_returns(tmp_path, monkeypatch):
    """Table 1's numbers are test_ood's (exact integration, slow); here the file is the text rendered
    from the stated setup, OOD mean 2 and the paper."""
    paper = ood.paper_table1()
    calls = []
    monkeypatch.setattr(report, "synthetic_table1", lambda model=None: calls.append(model) or paper)
    text = report.ood_table1_file(tmp_path / "table1.md")
    assert (tmp_path / "table1.md").read_text() == text == report.render_table1(paper, paper, paper)
    assert calls[0] is None and calls[1].ood_mean == 2.0
