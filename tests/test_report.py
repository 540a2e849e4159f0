from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from matplotlib.figure import Figure

from rejectopt.report import cd_diagram, rc_figure
from rejectopt.selective import SelectionFunction, operating_point
from rejectopt.stats import nemenyi_cd
from rejectopt.report import (
    aurc_table,
    comparison_markdown,
    paper_comparison,
    read_summary,
    relative_improvement,
    render_table,
    table_statistics,
    table_specs,
    timing_table,
)

#: The tables of the repository's default config (columns: each classifier's baseline + its scores).
TABLES = table_specs(yaml.safe_load((Path(__file__).resolve().parents[1] / "config.yaml").read_text())["scores"])

METHODS = {"mcp": 10.0, "sele": 8.0, "reg": 9.0, "tcp": 8.5}


def _summary(datasets=("a", "b", "c"), n_splits=3):
    rng = np.random.default_rng(0)
    rows = []
    for d_i, dataset in enumerate(datasets):
        for split in range(n_splits):
            risk = 20.0 + d_i
            for score, base in METHODS.items():
                rows.append(dict(task="classification", dataset=dataset, split=split, classifier="lr", score=score,
                                 C_classifier=10.0, C_score=np.nan if score == "mcp" else 1.0,
                                 aurc=base + d_i + rng.normal(0, 0.1), risk_full=risk + split, n_test=100))
    return pd.DataFrame(rows)


def test_aurc_table_means_and_stds_match_pandas():
    summary = _summary()
    table = aurc_table(summary, TABLES["table3a"])
    sele_b = summary.query("dataset == 'b' and score == 'sele'")["aurc"]
    assert table.loc["b", ("sele", "mean")] == pytest.approx(sele_b.mean())
    assert table.loc["b", ("sele", "std")] == pytest.approx(sele_b.std(ddof=1))
    assert table.loc["a", ("risk_full", "mean")] == pytest.approx(21.0)  # 20 + mean(0, 1, 2)
    assert list(table.index) == ["a", "b", "c"]


def test_table_statistics_rank_sele_first_and_render_bold_best():
    spec = TABLES["table3a"]
    table = aurc_table(_summary(), spec)
    stats = table_statistics(table, spec.methods)
    assert stats.average_ranks.to_dict() == {"mcp": 4.0, "sele": 1.0, "reg": 3.0, "tcp": 2.0}
    assert stats.n_datasets == 3
    md = render_table(table, spec, stats, fmt="md")
    assert md.count("**") == 2 * 3  # one bold cell per dataset
    assert "| avg. rank | 4.00 | 1.00 | 3.00 | 2.00 |" in md
    assert "Friedman test p = " in md and "Nemenyi CD" in md
    tex = render_table(table, spec, stats, fmt="tex")
    assert tex.count("\\textbf{") == 3 and "\\end{tabular}" in tex


def test_relative_improvement_is_per_split_then_averaged():
    summary = _summary()
    gains = relative_improvement(summary, TABLES["table3a"])
    wide = summary[summary.dataset == "a"].pivot(index="split", columns="score", values="aurc")
    expected = 100 * (wide["mcp"] - wide["sele"]) / wide["mcp"]
    assert gains.loc["a", ("sele", "mean")] == pytest.approx(expected.mean())
    assert gains.loc["a", ("sele", "std")] == pytest.approx(expected.std(ddof=1))


def test_paper_comparison_counts_agreement_by_std_or_relative():
    summary = _summary(datasets=("a",))
    reference = pd.DataFrame(
        [
            # ours ~8.0 for sele: within 2 std of 8.1 (std 0.1)
            dict(task="classification", dataset="a", classifier="lr", score="sele", metric="aurc", mean=8.1, std=0.1),
            # ours ~10.0 for mcp: 5 std away but within 10% of 10.9
            dict(task="classification", dataset="a", classifier="lr", score="mcp", metric="aurc", mean=10.9, std=0.2),
            # ours ~9.0 for reg: neither
            dict(task="classification", dataset="a", classifier="lr", score="reg", metric="aurc", mean=12.0, std=0.1),
            # R@100 ours 21.0
            dict(task="classification", dataset="a", classifier="lr", score="none", metric="risk_full", mean=21.0, std=0.5),
            # a dataset we did not run
            dict(task="classification", dataset="z", classifier="lr", score="sele", metric="aurc", mean=1.0, std=0.1),
        ]
    )
    cmp = paper_comparison(summary, reference).set_index(["dataset", "score"])
    assert bool(cmp.loc[("a", "sele"), "agrees"]) and bool(cmp.loc[("a", "mcp"), "agrees"])
    assert not bool(cmp.loc[("a", "reg"), "agrees"])
    assert cmp.loc[("a", "none"), "ours_mean"] == pytest.approx(21.0)
    assert pd.isna(cmp.loc[("z", "sele"), "ours_mean"]) and pd.isna(cmp.loc[("z", "sele"), "agrees"])
    md = comparison_markdown(paper_comparison(summary, reference), [TABLES["table3a"]], ["a"], ["z"])
    assert "**3 of 4 cells agree**" in md
    assert "not run here: z" in md


def test_timing_table_sums_benchmark_records(tmp_path):
    for k, seconds in enumerate([1.5, 2.5]):
        path = tmp_path / "benchmarks" / "train_classifier" / "shuttle" / "lr" / f"split_{k}.tsv"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"
                        f"{seconds}\t0:00:0{int(seconds)}\t100.5\t1\t1\t1\t0\t0\t0\t1\n")
    table, md = timing_table(sorted((tmp_path / "benchmarks").rglob("*.tsv")))
    row = table.iloc[0]
    assert (row["rule"], row["dataset"], row["jobs"]) == ("train_classifier", "shuttle", 2)
    assert row["total_s"] == pytest.approx(4.0) and row["max_s"] == pytest.approx(2.5)
    assert "train_classifier: 2 jobs, 4.0 s in total" in md


def test_cd_figure_explains_itself_with_a_single_dataset():
    from rejectopt.report import cd_figure

    spec = TABLES["table3a"]
    stats = table_statistics(aurc_table(_summary(datasets=("a",)), spec), spec.methods)
    assert stats.n_datasets == 1 and np.isnan(stats.cd_005)
    fig = cd_figure(stats, spec)
    assert "at least 2 datasets" in fig.texts[0].get_text()


def test_environment_lists_versions_checksums_and_config():
    from rejectopt.report import environment_markdown

    datasets = {"toy": {"n": 3, "d": 2, "k": 2, "xy_sha256": "abc123", "raw": {"toy.data": "def456"}}}
    md = environment_markdown({"seed": 0, "datasets": ["toy"]}, datasets)
    assert "| numpy | " in md and "| scikit-learn | " in md
    assert "| toy | 3 | 2 | 2 | `abc123` | toy.data: `def456` |" in md
    assert "seed: 0" in md


def test_table_specs_follow_the_registry_and_config():
    specs = table_specs({"lr": ["sele", "reg"], "svor": ["reg"]})
    assert list(specs) == ["table3a", "table3b", "table4", "table3c"]  # registry order
    assert specs["table3a"].methods == ("mcp", "sele", "reg")  # baseline first, then the config's order
    assert specs["table3b"].methods == ("margin",)
    assert specs["table4"].methods == ("margin", "reg") and specs["table4"].task == "ordinal"
    assert specs["table3c"].extension and not specs["table3a"].extension
    assert list(table_specs({}, classifiers=["svm"])) == ["table3b"]


def test_tables_under_another_metric_and_the_rankings_say_where_they_differ():
    from rejectopt.report import rankings_markdown

    summary = _summary(datasets=("a", "b", "c", "d"))
    # a metric under which REG is best everywhere: the rankings must say so
    summary["augrc"] = summary["aurc"].where(summary["score"] != "reg", 0.0)
    table = aurc_table(summary, TABLES["table3a"], "augrc")
    assert (table[("reg", "mean")] == 0).all()
    stats = table_statistics(table, TABLES["table3a"].methods)
    assert stats.average_ranks["reg"] == 1.0
    markdown = render_table(table, TABLES["table3a"], stats, fmt="md", metric="augrc")
    assert markdown.startswith("### Table 3a: logistic regression (AUGRC)") and "Test AUGRC" in markdown
    text = rankings_markdown(summary, [TABLES["table3a"]], ["aurc", "augrc"])
    assert "| REG | 3.00 | 1.00 |" in text  # AuRC: SELE 8 < TCP 8.5 < REG 9 < MCP 10
    assert "Under AUGRC the best-ranked method is REG, under AuRC SELE." in text
    with pytest.raises(ValueError, match="no column 'eaurc'"):
        aurc_table(summary, TABLES["table3a"], "eaurc")


def test_mean_rc_curve_averages_splits_on_a_common_grid():
    from rejectopt.metrics import rc_curve
    from rejectopt.report import mean_rc_curve

    rng = np.random.default_rng(3)
    samples = [(rng.integers(0, 2, n) * 100.0, rng.random(n)) for n in (50, 80)]
    grid = np.array([0.5, 1.0])
    mean, std = mean_rc_curve(samples, grid)
    each = [np.interp(grid, *rc_curve(loss, u)) for loss, u in samples]
    np.testing.assert_allclose(mean, np.mean(each, axis=0))
    np.testing.assert_allclose(std, np.std(each, axis=0))
    np.testing.assert_allclose(mean[1], np.mean([loss.mean() for loss, _ in samples]))  # full coverage = mean loss


def test_cd_diagram_has_one_label_per_method(tmp_path):
    ranks = pd.Series({"MCP": 2.9, "REG": 2.45, "SELE": 1.55, "TCP": 3.1})
    fig = cd_diagram(ranks, nemenyi_cd(4, 11, 0.10), title="demo")
    assert isinstance(fig, Figure)
    texts = [t.get_text() for ax in fig.axes for t in ax.texts]
    for name in ranks.index:
        assert sum(t.startswith(f"{name} (") for t in texts) == 1
    assert any(t.startswith("CD = 1.26") for t in texts)
    fig.savefig(tmp_path / "cd.png")
    assert (tmp_path / "cd.png").stat().st_size > 0


def test_cd_diagram_draws_into_given_axes():
    fig = Figure()
    ax = fig.add_subplot()
    assert cd_diagram(pd.Series({"x": 1.2, "y": 1.8}), 0.5, ax=ax) is fig


def test_rc_figure_draws_curves_and_the_point():
    rng = np.random.default_rng(0)
    s = rng.normal(size=200)
    loss = 100.0 * (rng.random(200) < 1 / (1 + np.exp(-2 * s)))
    selection = SelectionFunction(0.0, 1.0)
    fig = rc_figure(loss, s, score_label="SELE", point=operating_point(loss, s, selection),
                    risk_label="zero_one, %", title="report rows")
    ax = fig.axes[0]
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels[0].startswith("SELE score (AuRC") and labels[-1] == "chosen point"
    assert ax.get_ylabel() == "selective risk (zero_one, %)" and ax.get_title() == "report rows"
    nothing = operating_point(loss, s, SelectionFunction(-np.inf, 0.0))
    assert len(rc_figure(loss, s, point=nothing).axes[0].get_legend().get_texts()) == 3  # no point


def test_read_summary_names_the_line_and_cell_of_a_nan_aurc(tmp_path):
    """The recorded pipeline summary, one AuRC set to NaN and one AUGRC to inf: the error names the
    file, the line, the row's dataset / classifier / score / split and the column."""
    baseline = pd.read_csv(Path(__file__).resolve().parent / "data/pipeline_baseline/summary.csv")
    assert read_summary(Path(__file__).resolve().parent / "data/pipeline_baseline/summary.csv").equals(baseline)
    damaged = baseline.copy()
    damaged.loc[5, "aurc"] = np.nan
    damaged.to_csv(tmp_path / "summary.csv", index=False)
    row = baseline.iloc[5]
    with pytest.raises(ValueError) as err:
        read_summary(tmp_path / "summary.csv")
    assert str(err.value).startswith(
        f"{tmp_path / 'summary.csv'} line 7 (dataset {row.dataset}, classifier {row.classifier}, score {row.score}, "
        f"split {row.split}): aurc is nan, not a finite number (1 row(s) in all)")
    extra = baseline.assign(augrc=1.0)
    extra.loc[2, "augrc"] = np.inf
    extra.to_csv(tmp_path / "extra.csv", index=False)
    assert read_summary(tmp_path / "extra.csv").shape == extra.shape  # not asked for: not checked
    with pytest.raises(ValueError, match=r"extra.csv line 4 \(dataset .*\): augrc is inf, not a finite number"):
        read_summary(tmp_path / "extra.csv", ["augrc"])


def test_paper_comparison_of_a_run_with_one_method_says_so_instead_of_ranking():
    """A run that learned no score for LR (``scores: {lr: []}``) leaves MCP alone in Table 3a:
    nothing to rank, said in words rather than failing in the Friedman ranks."""
    summary = _summary(datasets=("a", "b"))
    summary = summary[summary["score"] == "mcp"]
    reference = pd.DataFrame([
        dict(task="classification", dataset=d, classifier="lr", score=s, metric="aurc", mean=m, std=0.1)
        for d in ("a", "b") for s, m in (("mcp", 10.0), ("sele", 8.0))
    ])
    md = comparison_markdown(paper_comparison(summary, reference), [TABLES["table3a"]], ["a", "b"], [])
    assert "only MCP was run: no ranking to compare" in md
