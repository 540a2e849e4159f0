from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from matplotlib.figure import Figure

from rejectopt.pipeline.report import (
    cd_diagram,
    comparison_markdown,
    paper_comparison,
    rc_figure,
    read_summary,
    render_table,
    timing_table,
)
from rejectopt.pipeline.tables import (
    metric_table,
    relative_improvement,
    table_specs,
    table_statistics,
)
from rejectopt.selective import SelectionFunction, operating_point
from rejectopt.stats import nemenyi_cd

#: The tables of the repository's default config (columns: each classifier's baseline + its scores).
TABLES = table_specs(
    yaml.safe_load((Path(__file__).resolve().parents[1] / "config.yaml").read_text())["scores"]
)

METHODS = {"mcp": 10.0, "sele": 8.0, "reg": 9.0, "tcp": 8.5}


def _summary(datasets=("a", "b", "c"), n_splits=3):
    rng = np.random.default_rng(0)
    rows = []
    for d_i, dataset in enumerate(datasets):
        for split in range(n_splits):
            risk = 20.0 + d_i
            for score, base in METHODS.items():
                rows.append(
                    dict(
                        task="classification",
                        dataset=dataset,
                        split=split,
                        classifier="lr",
                        score=score,
                        C_classifier=10.0,
                        C_score=np.nan if score == "mcp" else 1.0,
                        aurc=base + d_i + rng.normal(0, 0.1),
                        risk_full=risk + split,
                        n_test=100,
                    )
                )
    return pd.DataFrame(rows)


def test_metric_table_means_and_stds_match_pandas():
    summary = _summary()
    table = metric_table(summary, TABLES["table3a"])
    sele_b = summary.query("dataset == 'b' and score == 'sele'")["aurc"]
    assert table.loc["b", ("sele", "mean")] == pytest.approx(sele_b.mean())
    assert table.loc["b", ("sele", "std")] == pytest.approx(sele_b.std(ddof=1))
    assert table.loc["a", ("risk_full", "mean")] == pytest.approx(21.0)  # 20 + mean(0, 1, 2)
    assert list(table.index) == ["a", "b", "c"]


def test_table_statistics_rank_sele_first_and_render_bold_best():
    spec = TABLES["table3a"]
    table = metric_table(_summary(), spec)
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
            dict(
                task="classification",
                dataset="a",
                classifier="lr",
                score="sele",
                metric="aurc",
                mean=8.1,
                std=0.1,
            ),
            # ours ~10.0 for mcp: 5 std away but within 10% of 10.9
            dict(
                task="classification",
                dataset="a",
                classifier="lr",
                score="mcp",
                metric="aurc",
                mean=10.9,
                std=0.2,
            ),
            # ours ~9.0 for reg: neither
            dict(
                task="classification",
                dataset="a",
                classifier="lr",
                score="reg",
                metric="aurc",
                mean=12.0,
                std=0.1,
            ),
            # R@100 ours 21.0
            dict(
                task="classification",
                dataset="a",
                classifier="lr",
                score="none",
                metric="risk_full",
                mean=21.0,
                std=0.5,
            ),
            # a dataset we did not run
            dict(
                task="classification",
                dataset="z",
                classifier="lr",
                score="sele",
                metric="aurc",
                mean=1.0,
                std=0.1,
            ),
        ]
    )
    cmp = paper_comparison(summary, reference).set_index(["dataset", "score"])
    assert bool(cmp.loc[("a", "sele"), "agrees"]) and bool(cmp.loc[("a", "mcp"), "agrees"])
    assert not bool(cmp.loc[("a", "reg"), "agrees"])
    assert cmp.loc[("a", "none"), "ours_mean"] == pytest.approx(21.0)
    assert pd.isna(cmp.loc[("z", "sele"), "ours_mean"]) and pd.isna(
        cmp.loc[("z", "sele"), "agrees"]
    )
    md = comparison_markdown(
        paper_comparison(summary, reference), [TABLES["table3a"]], ["a"], ["z"]
    )
    assert "**3 of 4 cells agree**" in md
    assert "not run here: z" in md


def test_timing_table_sums_benchmark_records(tmp_path):
    for k, seconds in enumerate([1.5, 2.5]):
        path = tmp_path / "benchmarks" / "train_classifier" / "shuttle" / "lr" / f"split_{k}.tsv"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(
            "s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"
            f"{seconds}\t0:00:0{int(seconds)}\t100.5\t1\t1\t1\t0\t0\t0\t1\n"
        )
    table, md = timing_table(sorted((tmp_path / "benchmarks").rglob("*.tsv")))
    row = table.iloc[0]
    assert (row["rule"], row["dataset"], row["jobs"]) == ("train_classifier", "shuttle", 2)
    assert row["total_s"] == pytest.approx(4.0) and row["max_s"] == pytest.approx(2.5)
    assert "train_classifier: 2 jobs, 4.0 s in total" in md


def test_timing_table_names_each_experiment_and_its_datasets(tmp_path):
    records = {("guarantees", "wine"): 7.5, ("guarantees", "cancer"): 9.0, ("mine", "wine"): 1.0}
    for (experiment, dataset), seconds in records.items():
        path = tmp_path / "benchmarks" / "experiment_dataset" / experiment / f"{dataset}.tsv"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"s\tmax_rss\n{seconds}\t10\n")
    table, md = timing_table(sorted((tmp_path / "benchmarks").rglob("*.tsv")))
    got = {(r.rule, r.dataset): r.total_s for r in table.itertuples()}
    assert got == {
        ("experiment_dataset/guarantees", "cancer"): 9.0,
        ("experiment_dataset/guarantees", "wine"): 7.5,
        ("experiment_dataset/mine", "wine"): 1.0,
    }
    assert "- experiment_dataset/guarantees: 2 jobs, 16.5 s in total" in md


def test_cd_figure_explains_itself_with_a_single_dataset():
    from rejectopt.pipeline.report import cd_figure

    spec = TABLES["table3a"]
    stats = table_statistics(metric_table(_summary(datasets=("a",)), spec), spec.methods)
    assert stats.n_datasets == 1 and np.isnan(stats.cd_005)
    fig = cd_figure(stats, spec)
    assert "at least 2 datasets" in fig.texts[0].get_text()


def test_environment_lists_versions_checksums_and_config():
    from rejectopt.pipeline.report import environment_markdown

    datasets = {
        "toy": {"n": 3, "d": 2, "k": 2, "xy_sha256": "abc123", "raw": {"toy.data": "def456"}}
    }
    md = environment_markdown({"seed": 0, "datasets": ["toy"]}, datasets)
    assert "| numpy | " in md and "| scikit-learn | " in md
    assert "| toy | 3 | 2 | 2 | `abc123` | toy.data: `def456` |" in md
    assert "seed: 0" in md


def test_table_specs_follow_the_registry_and_config():
    specs = table_specs({"lr": ["sele", "reg"], "svor": ["reg"]})
    assert list(specs) == ["table3a", "table3b", "table4", "table3c"]  # registry order
    assert specs["table3a"].methods == (
        "mcp",
        "sele",
        "reg",
    )  # baseline first, then the config's order
    assert specs["table3b"].methods == ("margin",)
    assert specs["table4"].methods == ("margin", "reg") and specs["table4"].task == "ordinal"
    assert specs["table3c"].extension and not specs["table3a"].extension
    assert list(table_specs({}, classifiers=["svm"])) == ["table3b"]


def test_tables_under_another_metric_and_the_rankings_say_where_they_differ():
    from rejectopt.pipeline.report import rankings_markdown

    summary = _summary(datasets=("a", "b", "c", "d"))
    # a metric under which REG is best everywhere: the rankings must say so
    summary["augrc"] = summary["aurc"].where(summary["score"] != "reg", 0.0)
    table = metric_table(summary, TABLES["table3a"], "augrc")
    assert (table[("reg", "mean")] == 0).all()
    stats = table_statistics(table, TABLES["table3a"].methods)
    assert stats.average_ranks["reg"] == 1.0
    markdown = render_table(table, TABLES["table3a"], stats, fmt="md", metric="augrc")
    assert (
        markdown.startswith("### Table 3a: logistic regression (AUGRC)")
        and "Test AUGRC" in markdown
    )
    text = rankings_markdown(summary, [TABLES["table3a"]], ["aurc", "augrc"])
    assert "| REG | 3.00 | 1.00 |" in text  # AuRC: SELE 8 < TCP 8.5 < REG 9 < MCP 10
    assert "Under AUGRC the best-ranked method is REG, under AuRC SELE." in text
    with pytest.raises(ValueError, match="no column 'eaurc'"):
        metric_table(summary, TABLES["table3a"], "eaurc")


def test_a_higher_is_better_metric_ranks_its_largest_value_first():
    from rejectopt.pipeline.report import metric_rankings, rankings_markdown

    spec = TABLES["table3a"]
    summary = _summary(datasets=("a", "b", "c", "d"))
    # a failure AUROC ordered as the AuRC (SELE best): larger for the better detector
    summary["failure_auroc"] = 1.0 - summary["aurc"] / 100.0
    aurc = table_statistics(metric_table(summary, spec), spec.methods)
    table = metric_table(summary, spec, "failure_auroc")
    stats = table_statistics(table, spec.methods, "failure_auroc")
    # the same order as AuRC's, and the same Friedman statistic (it reads the ranks' spread)
    assert stats.average_ranks.to_dict() == aurc.average_ranks.to_dict()
    assert stats.average_ranks["sele"] == 1.0
    assert stats.friedman_pvalue == pytest.approx(aurc.friedman_pvalue, rel=1e-12)
    # without the metric the ranks read the values as lower-is-better: the order turns round
    assert table_statistics(table, spec.methods).average_ranks["sele"] == 4.0
    markdown = render_table(table, spec, stats, fmt="md", metric="failure_auroc")
    row_a = next(line for line in markdown.splitlines() if line.startswith("| a |"))
    assert row_a.split(" | ")[2].startswith("**0.92")  # SELE: 1 - (8 + 0) / 100, bold
    assert "best per row in bold (higher is better)." in markdown
    assert "(AUROC_f)" in markdown.splitlines()[0]
    _, means = metric_rankings(summary, spec, ["failure_auroc"])["failure_auroc"]
    assert (means["sele"] < means["mcp"]).all()  # signed so that lower is better
    text = rankings_markdown(summary, [spec], ["aurc", "failure_auroc"])
    assert "(1 = best; higher is better for AUROC_f, lower for the rest)." in text
    assert "| SELE | 1.00 | 1.00 |" in text
    assert "Every metric agrees with AuRC on the best method" in text


def test_mean_rc_curve_averages_splits_on_a_common_grid():
    from rejectopt.metrics import rc_curve
    from rejectopt.pipeline.report import mean_rc_curve

    rng = np.random.default_rng(3)
    samples = [(rng.integers(0, 2, n) * 100.0, rng.random(n)) for n in (50, 80)]
    grid = np.array([0.5, 1.0])
    mean, std = mean_rc_curve(samples, grid)
    each = [np.interp(grid, *rc_curve(loss, u)) for loss, u in samples]
    np.testing.assert_allclose(mean, np.mean(each, axis=0))
    np.testing.assert_allclose(std, np.std(each, axis=0))
    np.testing.assert_allclose(
        mean[1], np.mean([loss.mean() for loss, _ in samples])
    )  # full coverage = mean loss


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
    fig = rc_figure(
        loss,
        s,
        score_label="SELE",
        point=operating_point(loss, s, selection, loss_bound=100),
        risk_label="zero_one, %",
        title="report rows",
    )
    ax = fig.axes[0]
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels[0].startswith("SELE score (AuRC") and labels[-1] == "chosen point"
    assert ax.get_ylabel() == "selective risk (zero_one, %)" and ax.get_title() == "report rows"
    nothing = operating_point(loss, s, SelectionFunction(-np.inf, 0.0), loss_bound=100)
    assert len(rc_figure(loss, s, point=nothing).axes[0].get_legend().get_texts()) == 3  # no point


def test_read_summary_names_the_line_and_cell_of_a_nan_aurc(tmp_path):
    """The recorded pipeline summary, one AuRC set to NaN and one AUGRC to inf: the error names the
    file, the line, the row's dataset / classifier / score / split and the column."""
    baseline = pd.read_csv(Path(__file__).resolve().parent / "data/pipeline_baseline/summary.csv")
    assert read_summary(
        Path(__file__).resolve().parent / "data/pipeline_baseline/summary.csv"
    ).equals(baseline)
    damaged = baseline.copy()
    damaged.loc[5, "aurc"] = np.nan
    damaged.to_csv(tmp_path / "summary.csv", index=False)
    row = baseline.iloc[5]
    with pytest.raises(ValueError) as err:
        read_summary(tmp_path / "summary.csv")
    assert str(err.value).startswith(
        f"{tmp_path / 'summary.csv'} line 7 (dataset {row.dataset}, classifier {row.classifier}, score {row.score}, "
        f"split {row.split}): aurc is nan, not a finite number (1 row(s) in all)"
    )
    extra = baseline.assign(augrc=1.0)
    extra.loc[2, "augrc"] = np.inf
    extra.to_csv(tmp_path / "extra.csv", index=False)
    assert read_summary(tmp_path / "extra.csv").shape == extra.shape  # not asked for: not checked
    with pytest.raises(
        ValueError, match=r"extra.csv line 4 \(dataset .*\): augrc is inf, not a finite number"
    ):
        read_summary(tmp_path / "extra.csv", ["augrc"])


def test_paper_comparison_of_a_run_with_one_method_says_so_instead_of_ranking():
    """A run that learned no score for LR (``scores: {lr: []}``) leaves MCP alone in Table 3a:
    nothing to rank, said in words rather than failing in the Friedman ranks."""
    summary = _summary(datasets=("a", "b"))
    summary = summary[summary["score"] == "mcp"]
    reference = pd.DataFrame(
        [
            dict(
                task="classification",
                dataset=d,
                classifier="lr",
                score=s,
                metric="aurc",
                mean=m,
                std=0.1,
            )
            for d in ("a", "b")
            for s, m in (("mcp", 10.0), ("sele", 8.0))
        ]
    )
    md = comparison_markdown(
        paper_comparison(summary, reference), [TABLES["table3a"]], ["a", "b"], []
    )
    assert "only MCP was run: no ranking to compare" in md


def _table3a_summary():
    """Three datasets, two splits, Table 3a's three methods; AuRC ``v + split``, AUGRC half of it."""
    spec = table_specs({"lr": ("sele", "reg")}, classifiers=["lr"])["table3a"]
    aurc = {"a": (12.0, 8.0, 9.0), "b": (20.0, 15.0, 18.0), "c": (5.0, 4.5, 4.0)}
    summary = pd.DataFrame(
        [
            {
                "task": "classification",
                "dataset": d,
                "split": s,
                "classifier": "lr",
                "score": m,
                "aurc": v + s,
                "augrc": (v + s) / 2,
                "risk_full": 30.0 + s,
            }
            for d, values in aurc.items()
            for s in (0, 1)
            for m, v in zip(spec.methods, values)
        ]
    )
    paper = {"a": (12.0, 8.0, 11.0), "b": (21.0, 15.0, 16.0), "z": (7.0, 6.0, 6.5)}
    reference = pd.DataFrame(
        [
            {
                "task": "classification",
                "dataset": d,
                "classifier": "lr",
                "score": m,
                "metric": "aurc",
                "mean": v,
                "std": 0.5,
            }
            for d, values in paper.items()
            for m, v in zip(spec.methods, values)
        ]
    )
    return spec, summary, reference


def test_render_table_known_answer():
    spec, summary, _ = _table3a_summary()
    table = metric_table(summary, spec)
    assert render_table(table, spec, table_statistics(table, spec.methods)) == "\n".join(
        [
            "### Table 3a: logistic regression",
            "",
            "| dataset | MCP | SELE | REG | R@100 | splits |",
            "|---|---|---|---|---|---|",
            "| a | 12.50 ± 0.71 | **8.50 ± 0.71** | 9.50 ± 0.71 | 30.50 ± 0.71 | 2 |",
            "| b | 20.50 ± 0.71 | **15.50 ± 0.71** | 18.50 ± 0.71 | 30.50 ± 0.71 | 2 |",
            "| c | 5.50 ± 0.71 | 5.00 ± 0.71 | **4.50 ± 0.71** | 30.50 ± 0.71 | 2 |",
            "| avg. rank | 3.00 | 1.33 | 1.67 |  |  |",
            "",
            "Test AuRC (mean ± std over splits) on 3 datasets; best per row in bold.",
            "Friedman test p = 0.0970 (Iman-Davenport p = 0.0494); "
            "Nemenyi CD = 1.91 (alpha = 0.05), 1.68 (alpha = 0.10).",
            "",
        ]
    )


def test_paper_comparison_and_its_markdown_known_answer():
    """A cell agrees within 2 paper std (a, b: MCP, SELE) and not beyond (REG); z was not run."""
    spec, summary, reference = _table3a_summary()
    comparison = paper_comparison(summary, reference)
    assert comparison["dataset"].tolist() == ["a"] * 3 + ["b"] * 3 + ["z"] * 3
    assert comparison["ours_mean"].tolist()[:6] == [12.5, 8.5, 9.5, 20.5, 15.5, 18.5]
    assert comparison["diff_in_paper_std"].tolist()[:6] == [1.0, 1.0, -3.0, -1.0, 1.0, 5.0]
    assert comparison["agrees"].tolist()[:6] == [True, True, False, True, True, False]
    assert comparison.iloc[6:][["ours_mean", "diff_in_paper_std", "agrees"]].isna().all().all()
    lines = comparison_markdown(comparison, [spec], ["a", "b", "c"], ["z"]).splitlines()
    assert lines[2:8] == [
        "Datasets run: a, b, c.",
        "Datasets of the paper not run here: z.",
        "AuRC convention of this run: paper (eq. (27)), the paper's own.",
        "",
        "**4 of 6 cells agree** (|ours - paper| <= 2 paper std, or within 10% of the paper's value).",
        "- classification / lr: 4 of 6 cells agree",
    ]
    assert lines[11:14] == [
        "- Table 3a: logistic regression (2 of 3 datasets run):",
        "  - average ranks, ours: SELE 1.00, REG 2.00, MCP 3.00",
        "  - average ranks, paper on the same datasets: SELE 1.00, REG 2.00, MCP 3.00",
    ]


def test_metric_rankings_and_rankings_markdown_known_answer():
    from rejectopt.pipeline.report import metric_rankings, rankings_markdown

    spec, summary, _ = _table3a_summary()
    stats, means = metric_rankings(summary, spec, ["aurc", "augrc"])["augrc"]
    assert stats.average_ranks.round(4).to_dict() == {"mcp": 3.0, "sele": 1.3333, "reg": 1.6667}
    assert means.loc["c"].to_dict() == {"mcp": 2.75, "sele": 2.5, "reg": 2.25}
    lines = rankings_markdown(summary, [spec], ["aurc", "augrc"]).splitlines()
    assert lines[6:13] == [
        "| method | AuRC | AUGRC |",
        "|---|---|---|",
        "| MCP | 3.00 | 3.00 |",
        "| SELE | 1.33 | 1.33 |",
        "| REG | 1.67 | 1.67 |",
        "| Friedman p | 0.0970 | 0.0970 |",
        "| Nemenyi pairs (alpha 0.10) | none | none |",
    ]
    assert lines[14] == (
        "Every metric agrees with AuRC on the best method, Friedman's verdict and the Nemenyi pairs "
        "(3 datasets)."
    )


def test_table_figures_name_their_content():
    from rejectopt.pipeline.report import cd_figure, improvement_figure, message_figure

    spec, summary, _ = _table3a_summary()
    ax = improvement_figure(relative_improvement(summary, spec), spec).axes[0]
    assert ax.get_ylabel() == "improvement over MCP [%]"
    assert [text.get_text() for text in ax.get_legend().get_texts()] == ["SELE", "REG"]
    stats = table_statistics(metric_table(summary, spec), spec.methods)
    assert cd_figure(stats, spec).axes[0].texts[-1].get_text() == (
        "Table 3a: logistic regression\nN = 3 datasets, Nemenyi CD = 1.68 (alpha = 0.1)"
    )
    fig = cd_diagram(
        pd.Series({"SELE": 1.25, "MCP": 1.875, "REG": 2.875}), cd=1.2, title="three methods"
    )
    assert [text.get_text() for text in fig.axes[0].texts] == [
        "1",
        "2",
        "3",
        "CD = 1.20",
        "SELE (1.25)",
        "MCP (1.88)",
        "REG (2.88)",
        "three methods",
    ]
    message = message_figure("a CD diagram needs at least 2 datasets")
    assert (
        message.texts[0].get_text() == "a CD diagram needs at least 2 datasets"
        and message.axes == []
    )


def test_rc_figures_known_answer():
    from rejectopt.pipeline.report import mean_rc_curve, rc_curves_figure

    loss = np.array([0.0, 0.0, 1.0, 0.0, 1.0, 1.0])
    uncertainty = np.array([0.1, 0.2, 0.3, 0.4, 0.5, 0.6])
    ax = rc_figure(
        loss,
        uncertainty,
        score_label="demo",
        point=operating_point(loss, uncertainty, SelectionFunction(0.4, 1.0), loss_bound=1),
    ).axes[0]
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("coverage", "selective risk (loss)")
    assert [text.get_text() for text in ax.get_legend().get_texts()] == [
        "demo score (AuRC 0.247)",
        "oracle (AuRC 0.192)",
        "random order (AuRC 0.5)",
        "chosen point",
    ]
    mean, std = mean_rc_curve([(loss, uncertainty), (loss[::-1], uncertainty)], grid=[0.5, 1.0])
    np.testing.assert_allclose(mean, [0.5, 0.5])
    np.testing.assert_allclose(std, [1 / 6, 0.0], atol=1e-12)
    ax = rc_curves_figure(
        {"sele": [(loss, uncertainty)], "mcp": [(loss, uncertainty[::-1])]}, "demo"
    ).axes[0]
    assert ax.get_title() == "demo\nTst, mean ± std over 1 split(s)"
    assert [text.get_text() for text in ax.get_legend().get_texts()] == [
        "SELE",
        "MCP",
        "oracle",
        "random order",
    ]


def test_labels_and_number_format():
    from rejectopt.pipeline.report import classifier_label, format_number, label, metric_label

    assert (label("sele"), label("mcp"), label("my_score")) == ("SELE", "MCP", "my_score")
    assert [metric_label(m) for m in ("aurc", "augrc", "eaurc", "other")] == [
        "AuRC",
        "AUGRC",
        "E-AuRC",
        "other",
    ]
    assert (classifier_label("lr"), classifier_label("xgb"), classifier_label("my_model")) == (
        "LR",
        "XGBoost",
        "my_model",
    )
    assert [
        format_number(3.14159),
        format_number(3.14159, 3),
        format_number(float("nan")),
        format_number(None),
    ] == ["3.14", "3.142", "n/a", "n/a"]


def test_timing_table_per_rule_and_dataset_known_answer(tmp_path):
    # a rule of one job per dataset writes <rule>/<dataset>.tsv: its dataset is the file's stem
    for rule, file, seconds in (
        ("train_classifier", "iris/split_0.tsv", 1.5),
        ("train_classifier", "wine/split_0.tsv", 2.5),
        ("learn_score", "iris/split_0.tsv", 4.0),
        ("summarize_dataset", "iris.tsv", 0.5),
    ):
        path = tmp_path / "benchmarks" / rule / file
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"s\th:m:s\tmax_rss\n{seconds}\t0:00:01\t130.2\n")
    table, markdown = timing_table(sorted(tmp_path.rglob("*.tsv")))
    assert table.to_dict("list") == {
        "rule": ["learn_score", "summarize_dataset", "train_classifier", "train_classifier"],
        "dataset": ["iris", "iris", "iris", "wine"],
        "jobs": [1, 1, 1, 1],
        "total_s": [4.0, 0.5, 1.5, 2.5],
        "mean_s": [4.0, 0.5, 1.5, 2.5],
        "max_s": [4.0, 0.5, 1.5, 2.5],
        "max_rss_mb": [130.2, 130.2, 130.2, 130.2],
    }
    assert markdown.splitlines()[4] == "- train_classifier: 2 jobs, 4.0 s in total"


def test_environment_ends_with_the_datasets_and_the_config():
    from rejectopt.pipeline.report import environment_markdown

    text = environment_markdown(
        {"seed": 0, "datasets": ["iris"]},
        {"iris": {"n": 150, "d": 4, "k": 3, "xy_sha256": "ab12", "raw": {"iris.csv": "cd34"}}},
    )
    assert text[text.index("## Datasets") :] == "\n".join(
        [
            "## Datasets",
            "",
            "| dataset | n | d | K | fingerprint of X, y (sha256) | raw files (sha256) |",
            "|---|---|---|---|---|---|",
            "| iris | 150 | 4 | 3 | `ab12` | iris.csv: `cd34` |",
            "",
            "## Configuration",
            "",
            "```yaml",
            "datasets:",
            "- iris",
            "seed: 0",
            "```",
            "",
        ]
    )


def test_read_summary_says_how_to_repair(tmp_path):
    path = tmp_path / "summary.csv"
    path.write_text(
        "dataset,classifier,score,split,aurc,risk_full\niris,lr,sele,0,4.5,10.0\niris,lr,mcp,0,,10.0\n"
    )
    with pytest.raises(ValueError) as err:
        read_summary(path)
    assert str(err.value) == (
        f"{path} line 3 (dataset iris, classifier lr, score mcp, split 0): aurc is nan, not a finite number "
        "(1 row(s) in all); the summary was damaged or edited: delete it and rerun the pipeline, which writes it "
        "again from the dataset summaries"
    )


def test_paper_comparison_under_another_convention_names_it_and_counts_no_aurc_cell():
    """The paper's AuRC is eq. (27): a run under another aurc_convention gets its AuRC cells listed
    (ours beside the paper's) but not counted as agreeing, and the report names the convention."""
    spec, summary, reference = _table3a_summary()
    reference = pd.concat(
        [
            reference,
            pd.DataFrame(
                [
                    {
                        "task": "classification",
                        "dataset": "a",
                        "classifier": "lr",
                        "score": "none",
                        "metric": "risk_full",
                        "mean": 30.4,
                        "std": 0.5,
                    }
                ]
            ),
        ]
    )
    comparison = paper_comparison(summary, reference, convention="geifman")
    aurc_cells = comparison[comparison["metric"] == "aurc"]
    assert aurc_cells["ours_mean"].tolist()[:6] == [12.5, 8.5, 9.5, 20.5, 15.5, 18.5]
    assert aurc_cells["agrees"].isna().all()
    assert comparison.loc[comparison["metric"] == "risk_full", "agrees"].tolist() == [
        True
    ]  # 30.5 vs 30.4
    md = comparison_markdown(comparison, [spec], ["a", "b", "c"], ["z"], convention="geifman")
    assert (
        "AuRC convention of this run: geifman (config aurc_convention), not the paper's eq. (27)"
        in md
    )
    assert "**1 of 1 cells (R@100 only) agree**" in md
    assert "cells agree**" not in md.replace("(R@100 only) agree**", "")


def test_tables_and_cd_diagrams_of_two_datasets_say_the_tests_have_no_power():
    """With N = 2 datasets and k = 3 methods the Friedman statistic is at most N (k - 1) = 4, whose
    chi-square p on 2 degrees of freedom is exp(-2) = 0.135: checked over every one of the 36 rank
    configurations, the test never rejects at 0.05. The table, the rankings and the CD diagram say so."""
    import itertools

    from rejectopt.pipeline.report import cd_figure, rankings_markdown
    from rejectopt.pipeline.tables import friedman_min_pvalue
    from rejectopt.stats import friedman_test

    assert friedman_min_pvalue(2, 3) == pytest.approx(np.exp(-2.0), rel=1e-12)
    smallest = min(
        friedman_test(pd.DataFrame([a, b], columns=["x", "y", "z"], dtype=float)).pvalue
        for a, b in itertools.product(itertools.permutations([1, 2, 3]), repeat=2)
    )
    assert smallest == pytest.approx(np.exp(-2.0), rel=1e-12)
    assert (
        friedman_min_pvalue(3, 3) < 0.05
    )  # N = 3 can reject: no caveat there (test_render_table_known_answer)

    spec, summary, _ = _table3a_summary()
    two = summary[summary["dataset"] != "c"]
    table = metric_table(two, spec)
    stats = table_statistics(table, spec.methods)
    assert stats.n_datasets == 2 and not stats.tests_have_power
    assert stats.min_friedman_pvalue == pytest.approx(np.exp(-2.0), rel=1e-12)
    caveat = (
        "Caveat: with N = 2 datasets and k = 3 methods the Friedman test cannot reject equivalence at 0.05 "
        "whatever the results (its smallest possible p, every dataset ranking the methods alike, is 0.135): "
        "it and the Nemenyi test have no power here; run more datasets."
    )
    for fmt in ("md", "tex"):
        assert caveat in render_table(table, spec, stats, fmt=fmt)
    assert caveat in rankings_markdown(two, [spec], ["aurc"])
    assert "Caveat" not in render_table(
        metric_table(summary, spec),
        spec,
        table_statistics(metric_table(summary, spec), spec.methods),
    )
    title = " ".join(text.get_text() for text in cd_figure(stats, spec).axes[0].texts).replace(
        "\n", " "
    )
    assert (
        "no power: with N = 2 the Friedman test cannot reject (smallest possible p 0.135 > 0.05)"
        in title
    )


def test_latex_tables_use_booktabs_rules():
    """Every LaTeX table (the paper's, and the other experiments' through table_section) has
    booktabs' top, mid and bottom rules and no \\hline."""
    from rejectopt.pipeline.report._format import table_section

    spec, summary, _ = _table3a_summary()
    table = metric_table(summary, spec)
    tex = render_table(table, spec, table_statistics(table, spec.methods), fmt="tex").splitlines()
    assert tex[:5] == [
        "% Table 3a: logistic regression (needs \\usepackage{booktabs})",
        "\\begin{tabular}{lrrrrr}",
        "\\toprule",
        "dataset & MCP & SELE & REG & R@100 & splits \\\\",
        "\\midrule",
    ]
    assert tex[8:12] == [
        "\\midrule",
        "avg. rank & 3.00 & 1.33 & 1.67 &  &  \\\\",
        "\\bottomrule",
        "\\end{tabular}",
    ]
    section = table_section("T", ["a", "b"], [["x", "1"]], ["note"], "tex")
    assert section[:3] == [
        "% T (needs \\usepackage{booktabs})",
        "\\begin{tabular}{lr}",
        "\\toprule",
    ]
    assert section[4:8] == ["\\midrule", "x & 1 \\\\", "\\bottomrule", "\\end{tabular}"]
    assert not any("\\hline" in line for line in tex + section)
    # one writer: the results table is table_section's, its average ranks a footer set apart by a rule
    footer = table_section(
        "T",
        ["a", "b"],
        [["x_y", "1"]],
        [],
        "tex",
        lambda c: c.replace("_", "\\_"),
        footer=[["avg. rank", "1.00"]],
    )
    assert footer[5:9] == ["x\\_y & 1 \\\\", "\\midrule", "avg. rank & 1.00 \\\\", "\\bottomrule"]
    assert table_section("T", ["a", "b"], [["x", "1"]], [], "md", footer=[["avg. rank", "1.00"]])[
        4:6
    ] == ["| x | 1 |", "| avg. rank | 1.00 |"]


def _pdf_content(path):
    """The PDF's decompressed content streams, and whether it holds a raster image."""
    import re
    import zlib

    data = Path(path).read_bytes()
    streams = [
        zlib.decompress(m.group(1))
        for m in re.finditer(rb"/FlateDecode.*?stream\r?\n(.*?)\r?\nendstream", data, re.S)
    ]
    return data, b"\n".join(streams), b"/Subtype /Image" in data


def test_figures_are_also_written_as_vector_pdf(tmp_path):
    """figure_formats [png, pdf]: the PNG is the same bytes as alone, and the PDF beside it draws
    with vector paths and text (no raster image), the same bytes on every run (no creation date)."""
    from rejectopt.pipeline.report import cd_figure
    from rejectopt.pipeline.report._figures import figure_paths, save_figure

    spec, summary, _ = _table3a_summary()
    stats = table_statistics(metric_table(summary, spec), spec.methods)
    save_figure(cd_figure(stats, spec), tmp_path / "alone.png")
    save_figure(cd_figure(stats, spec), tmp_path / "cd.png", ["png", "pdf"])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["alone.png", "cd.pdf", "cd.png"]
    assert (tmp_path / "cd.png").read_bytes() == (tmp_path / "alone.png").read_bytes()
    data, content, has_image = _pdf_content(tmp_path / "cd.pdf")
    assert data.startswith(b"%PDF-") and not has_image
    assert (
        content.count(b" l\n") + content.count(b" l ") >= 10
    )  # line segments: the axis, ticks, method lines
    assert b" Tj" in content or b" TJ" in content  # text as text
    assert b"/FontType 3" not in data and b"/CreationDate" not in data
    first = data
    save_figure(cd_figure(stats, spec), tmp_path / "cd.png", ["png", "pdf"])
    assert (tmp_path / "cd.pdf").read_bytes() == first
    assert figure_paths("f/x.png", ["png", "pdf", "svg"]) == [
        Path("f/x.png"),
        Path("f/x.pdf"),
        Path("f/x.svg"),
    ]
    with pytest.raises(
        ValueError, match=r"figure format\(s\) \['eps'\] unknown; config figure_formats takes"
    ):
        figure_paths("x.png", ["png", "eps"])


def test_table_intervals_are_read_from_the_summary_and_rendered():
    """config table_intervals: metric_table takes each (dataset, method)'s aurc_mean_low / _high (the
    same on every split's row) into (method, 'low'|'high') after its std; render_table writes
    ``mean ± std [low, high]`` and says which interval it is; the csv's flat columns follow."""
    spec, summary, _ = _table3a_summary()
    plain = metric_table(summary, spec)
    summary["aurc_mean_low"] = (
        summary["aurc"].groupby([summary["dataset"], summary["score"]]).transform("mean") - 1.0
    )
    summary["aurc_mean_high"] = summary["aurc_mean_low"] + 2.25
    table = metric_table(summary, spec, intervals=True)
    assert list(table.columns[:8]) == [
        ("mcp", "mean"),
        ("mcp", "std"),
        ("mcp", "low"),
        ("mcp", "high"),
        ("sele", "mean"),
        ("sele", "std"),
        ("sele", "low"),
        ("sele", "high"),
    ]
    assert (
        table.loc["b", ("reg", "low")] == 17.5 and table.loc["b", ("reg", "high")] == 19.75
    )  # 18.5 - 1, + 2.25
    assert table.drop(columns=["low", "high"], level=1).equals(plain)
    stats = table_statistics(table, spec.methods)
    assert stats.average_ranks.equals(table_statistics(plain, spec.methods).average_ranks)
    md = render_table(table, spec, stats, fmt="md")
    assert (
        "| a | 12.50 ± 0.71 [11.50, 13.75] | **8.50 ± 0.71 [7.50, 9.75]** "
        "| 9.50 ± 0.71 [8.50, 10.75] | 30.50 ± 0.71 | 2 |" in md
    )
    assert (
        "[low, high]: 95% percentile bootstrap interval of the mean over splits, 1000 resamples of the test rows"
        in md.splitlines()[-2]
    )
    tex = render_table(table, spec, stats, fmt="tex")
    assert (
        "\\textbf{8.50 $\\pm$ 0.71 [7.50, 9.75]}" in tex and "% [low, high]: 95% percentile" in tex
    )
    assert render_table(plain, spec, stats) == render_table(
        metric_table(summary, spec), spec, stats
    )  # option off: as before


def test_table_intervals_refuse_a_summary_without_them_or_from_two_runs():
    spec, summary, _ = _table3a_summary()
    with pytest.raises(
        ValueError,
        match=r"table3a: the summary has no aurc_mean_low / aurc_mean_high for every row, "
        r"so it was written with config table_intervals off; rerun the pipeline",
    ):
        metric_table(summary, spec, intervals=True)
    summary["aurc_mean_low"], summary["aurc_mean_high"] = 1.0, 2.0
    with pytest.raises(ValueError, match="the table intervals .* are of AuRC, not 'augrc'"):
        metric_table(summary, spec, "augrc", intervals=True)
    summary.loc[3, "aurc_mean_high"] = 2.5
    with pytest.raises(
        ValueError,
        match=r"two values of aurc_mean_high for one \(dataset, score\): its rows come from different runs",
    ):
        metric_table(summary, spec, intervals=True)


def test_sentences_agree_in_number_with_one_dataset_and_one_job(tmp_path):
    """A run of one dataset (the ordinal Table 4 of the demo) or one job of a rule reads "1 dataset",
    "1 job", never "1 datasets"; every other count keeps its plural."""
    from rejectopt.pipeline.report import rankings_markdown
    from rejectopt.pipeline.report._format import count

    assert [
        count(1, "dataset"),
        count(2, "dataset"),
        count(0, "job"),
        count(1, "(dataset, d) cell"),
    ] == ["1 dataset", "2 datasets", "0 jobs", "1 (dataset, d) cell"]
    spec, summary, _ = _table3a_summary()
    one = summary[summary["dataset"] == "a"]
    table = metric_table(one, spec)
    for fmt in ("md", "tex"):
        text = render_table(table, spec, table_statistics(table, spec.methods), fmt=fmt)
        assert "on 1 dataset; best per row in bold." in text and "1 datasets" not in text
    assert "Nemenyi pairs (1 dataset)." in rankings_markdown(one, [spec], ["aurc", "augrc"])
    for rule, n in (("train_classifier", 1), ("learn_score", 2)):
        for k in range(n):
            path = tmp_path / "benchmarks" / rule / "iris" / f"split_{k}.tsv"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("s\th:m:s\tmax_rss\n1.0\t0:00:01\t100\n")
    lines = timing_table(sorted(tmp_path.rglob("*.tsv")))[1].splitlines()
    assert lines[2:4] == [
        "- learn_score: 2 jobs, 2.0 s in total",
        "- train_classifier: 1 job, 1.0 s in total",
    ]


def test_a_table_of_one_dataset_says_why_its_tests_are_na():
    """N = 1: Friedman and Nemenyi print n/a, and the table and the rankings say why, with the power
    caveat's own sentence (report._format.power_caveat), naming the N from which the test can reject."""
    from rejectopt.pipeline.report import rankings_markdown
    from rejectopt.pipeline.report._format import power_caveat
    from rejectopt.pipeline.tables import friedman_min_pvalue

    spec, summary, _ = _table3a_summary()
    one = summary[summary["dataset"] == "a"]
    table = metric_table(one, spec)
    stats = table_statistics(table, spec.methods)
    caveat = (
        "Caveat: with N = 1 dataset the Friedman and Nemenyi tests are not defined (n/a): they compare the "
        "methods' ranks across datasets, and with k = 3 methods the Friedman test can reject equivalence at "
        "0.05 from N = 3 on; run more datasets."
    )
    assert (
        friedman_min_pvalue(2, 3) > 0.05 >= friedman_min_pvalue(3, 3)
    )  # the N = 3 the caveat names
    assert power_caveat(1, 3, stats.min_friedman_pvalue) == caveat
    for fmt in ("md", "tex"):
        text = render_table(table, spec, stats, fmt=fmt)
        assert "Friedman test p = n/a" in text and caveat in text
    assert caveat in rankings_markdown(one, [spec], ["aurc"])
    assert power_caveat(3, 1).startswith("Caveat: with k = 1 method there is nothing to rank")
    assert "from N = 4 on" in power_caveat(1, 2)  # two methods: chi2(1) of N needs N = 4 (p 0.046)
    assert power_caveat(3, 3) == ""


def test_bold_marks_the_best_printed_value_and_no_single_one_of_a_tie():
    """Bold follows the printed means: every method tied with the best printed value is bold, and a row
    where every method prints the same (XGBoost's 0.00 on shuttle) has no bold, with a note saying so."""
    from rejectopt.pipeline.report._format import ALIKE_NOTE, best_cells

    assert best_cells([0.004, 0.001, 0.003]).tolist() == [
        False,
        False,
        False,
    ]  # 0.00 x 3: all alike
    assert best_cells([0.004, 0.001, 0.3]).tolist() == [True, True, False]  # 0.00, 0.00 beat 0.30
    assert best_cells([1.0, 0.5, np.nan]).tolist() == [False, True, False]
    assert best_cells([np.nan, 0.001]).tolist() == [False, True]  # the only mean is the best
    assert best_cells([0.5]).tolist() == [True]
    spec, summary, _ = _table3a_summary()
    summary = summary.copy()
    shuttle = summary["dataset"] == "b"  # every method's AuRC near 0: printed 0.00 ± 0.00
    summary.loc[shuttle, "aurc"] = 0.001 * summary.loc[shuttle, "score"].map(
        {"mcp": 1, "sele": 3, "reg": 2}
    )
    tie = summary["dataset"] == "c"  # SELE and REG both print 4.00, MCP 5.00
    summary.loc[tie, "aurc"] = summary.loc[tie, "score"].map(
        {"mcp": 5.0, "sele": 4.001, "reg": 3.999}
    )
    table = metric_table(summary, spec)
    md = render_table(table, spec, table_statistics(table, spec.methods))
    rows = {line.split(" | ")[0]: line for line in md.splitlines() if line.startswith("| ")}
    assert rows["| b"] == "| b | 0.00 ± 0.00 | 0.00 ± 0.00 | 0.00 ± 0.00 | 30.50 ± 0.71 | 2 |"
    assert (
        rows["| c"] == "| c | 5.00 ± 0.00 | **4.00 ± 0.00** | **4.00 ± 0.00** | 30.50 ± 0.71 | 2 |"
    )
    assert rows["| a"].count("**") == 2 and ALIKE_NOTE in md
    tex = render_table(table, spec, table_statistics(table, spec.methods), fmt="tex")
    assert tex.count("\\textbf{") == 1 + 2 and f"% {ALIKE_NOTE}" in tex
    assert ALIKE_NOTE not in render_table(
        metric_table(_table3a_summary()[1], spec),
        spec,
        table_statistics(metric_table(_table3a_summary()[1], spec), spec.methods),
    )


def test_cd_diagram_titles_wrap_inside_the_figure():
    """A title wider than the diagram (a long table title, the no-power line of N = 2) is wrapped at
    spaces so that no line runs past the figure's edges nor over the CD label; a title that fits is
    left on its lines (the figure is then the same as before the wrapping existed)."""
    import dataclasses

    from matplotlib.backends.backend_agg import FigureCanvasAgg

    from rejectopt.pipeline.report import cd_figure

    spec, summary, _ = _table3a_summary()
    long_spec = dataclasses.replace(
        spec, title="Table 3c: gradient-boosted trees (XGBoost; extension, not in the paper)"
    )
    stats = table_statistics(metric_table(summary[summary["dataset"] != "c"], spec), spec.methods)
    for table_spec in (spec, long_spec):
        fig = cd_figure(stats, table_spec)
        FigureCanvasAgg(fig).draw()
        renderer = fig.canvas.get_renderer()
        texts = fig.axes[0].texts
        title, label = texts[-1], next(t for t in texts if t.get_text().startswith("CD = "))
        assert title.get_text().count("\n") >= 3  # three lines and at least one wrapped
        width = fig.bbox.width
        for text in texts:
            box = text.get_window_extent(renderer)
            assert box.x0 >= 0 and box.x1 <= width, text.get_text()
        assert (
            title.get_window_extent(renderer).y0 > label.get_window_extent(renderer).y1
        )  # above the label
    fits = (
        cd_figure(table_statistics(metric_table(summary, spec), spec.methods), spec)
        .axes[0]
        .texts[-1]
        .get_text()
    )
    assert fits == "Table 3a: logistic regression\nN = 3 datasets, Nemenyi CD = 1.68 (alpha = 0.1)"


def test_the_report_names_the_config_of_the_run_it_was_not_given(tmp_path):
    """`snakemake --report` without the run's --config: one line naming the first missing output and the
    --config that gives back the configuration the run recorded in environment.md (within a mapping only
    the keys that differ, as --config merges a mapping); nothing when every output is there."""
    import shlex

    from rejectopt.pipeline.report import (
        environment_markdown,
        report_config_error,
        report_requested,
    )

    assert report_requested(["snakemake", "--report", "results/report.html"])
    assert report_requested(["snakemake", "--report=r.html"]) and report_requested(
        ["snakemake", "--reporter", "html"]
    )
    assert not report_requested(
        ["snakemake", "--cores", "2", "--report-after-run", "--report", "r.html"]
    )
    assert not report_requested(["snakemake", "--cores", "2", "--report-stylesheet", "s.css"])
    default = {
        "datasets": ["avila", "shuttle"],
        "data_mirror": None,
        "n_splits": 5,
        "faces_mirror": "faces",
        "landmarks": {"enabled": True, "pretrained": False},
        "table_intervals": False,
    }
    run = {
        **default,
        "datasets": ["shuttle", "sattelite"],
        "data_mirror": "workflow/resources/demo_mirror",
        "landmarks": {"enabled": False, "pretrained": False},
        "faces_mirror": None,
    }
    environment = tmp_path / "environment.md"
    environment.write_text(environment_markdown(run, {}))
    (tmp_path / "table3a.md").write_text("")
    targets = [tmp_path / "table3a.md", tmp_path / "landmarks_note.md", tmp_path / "rc_300w.png"]
    message = report_config_error(targets, default, environment)
    assert message == (
        f"snakemake --report: {targets[1]} and 1 more output are missing (this configuration's); the run in results/ "
        f"had another (recorded in {environment}): give the report the run's own, --config "
        "data_mirror=workflow/resources/demo_mirror datasets='[shuttle, sattelite]' faces_mirror='' "
        "landmarks='{enabled: false}'"
    )
    assert "\n" not in message
    # the --config named, split by the shell and each value read by YAML (as Snakemake reads a value; the
    # pipeline test runs the report with it), is the run's configuration
    tokens = dict(token.split("=", 1) for token in shlex.split(message.split("--config ")[1]))
    assert {key: yaml.safe_load(value) for key, value in tokens.items()} == {
        "data_mirror": "workflow/resources/demo_mirror",
        "datasets": ["shuttle", "sattelite"],
        "faces_mirror": None,
        "landmarks": {"enabled": False},
    }
    assert report_config_error(targets[:1], default, environment) is None
    assert report_config_error(targets[1:2], run, environment) == (
        f"snakemake --report: {targets[1]} is missing, of the configuration recorded in {environment}: the run did "
        "not finish; run the pipeline again with the same --config, then the report"
    )
    assert report_config_error(targets, default, tmp_path / "none.md").startswith(
        f"snakemake --report: {targets[1]} and 1 more output are missing (this configuration's) and no "
        f"{tmp_path / 'none.md'} records the configuration of a finished run: run the pipeline first"
    )
