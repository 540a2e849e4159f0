"""``select --group-column``: a certified threshold per group, in report.json and report.md."""

import json

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import load_digits
from sklearn.linear_model import LogisticRegression

from rejectopt import cli
from rejectopt.cli._model import apply_model, load_model
from rejectopt.cli._table import EXACT_FLOATS, load_apply_table
from rejectopt.fitting import split_rows
from rejectopt.selective import SelectionFunction, empirical_risk_coverage
from rejectopt.targets import Target, fit_certified_groups


@pytest.fixture(scope="module")
def digits_csv(tmp_path_factory):
    """The README's table (digits, a logistic regression on 300 rows) with a group column: the
    predicted class, copied into a column of its own."""
    folder = tmp_path_factory.mktemp("groups")
    X, y = load_digits(return_X_y=True, as_frame=True)
    clf = LogisticRegression(max_iter=2000).fit(X[:300], y[:300])
    table = X.assign(y=y, y_pred=clf.predict(X))[300:1300]
    table = table.assign(cls=table["y_pred"], parity=np.where(table["y_pred"] % 2, "odd", "even"))
    table.to_csv(folder / "val.csv", index=False)
    return folder / "val.csv"


def _select(data, out, *options):
    args = ["-q", "select", "--data", str(data), "--C", "1", "--out", str(out)]
    return cli.main([*args, *options])


def _rows(report, n):
    split = report["split"]
    return split_rows(
        n,
        split["calibration_fraction"],
        split["report_fraction"],
        split["validation_fraction"],
        split["seed"],
        min_rows=10,
    )


@pytest.mark.parametrize(
    "target", [["--target", "coverage=0.8"], ["--target", "risk=10,min_coverage=0.5"]]
)
def test_each_group_is_the_library_fit_on_its_calibration_rows(digits_csv, tmp_path, target):
    """The per-group records are fit_certified_groups on the calibration rows' uncertainties (as
    apply recomputes them) and groups; coverage and risk per group are those of the report rows."""
    out = tmp_path / "sel"
    assert _select(digits_csv, out, *target, "--confidence", "0.9", "--group-column", "parity") == 0
    report = json.loads((out / "report.json").read_text())
    frame = pd.read_csv(digits_csv)
    model, score, selection = load_model(out / "model.json")
    assert "parity" not in model["feature_columns"] and "cls" in model["feature_columns"]
    s = apply_model(model, score, selection, load_apply_table(digits_csv, **_apply(model)))
    s = s["uncertainty"].to_numpy()
    loss = 100.0 * (frame["y"] != frame["y_pred"]).to_numpy()
    parts = _rows(report, len(frame))
    cal, rep = parts["calibration"], parts["report"]
    groups = frame["parity"].to_numpy()
    t = report["target"]
    target = Target(t["kind"], t["value"], t["confidence"], t.get("min_coverage"))
    expected = fit_certified_groups(loss[cal], s[cal], groups[cal], target, loss_bound=100.0)
    records = report["groups"]["records"]
    assert [r["group"] for r in records] == ["even", "odd"]
    for record, group in zip(records, expected.groups):
        assert record["threshold"] == group.threshold and record["fallback"] == group.fallback
        assert record["n_rows"] == int((groups[cal] == group.label).sum())
        rows = rep[groups[rep] == group.label]
        risk, coverage = empirical_risk_coverage(
            loss[rows], s[rows], SelectionFunction(group.threshold, group.accept_prob)
        )
        assert record["report_rows"] == rows.size
        assert record["report_coverage"] == pytest.approx(coverage, rel=1e-12)
        assert record["report_selective_risk"] == pytest.approx(risk, rel=1e-12)
    markdown = (out / "report.md").read_text()
    assert "## Per-group certificates (--group-column parity)" in markdown
    for r in records:
        kind = "pooled (fallback)" if r["fallback"] else "own"
        assert f"| {r['group']} | {r['n_rows']} | " in markdown and f"| {kind} |" in markdown


def _apply(model):
    return {
        "pred_column": model["pred_column"],
        "feature_columns": model["feature_columns"],
        "group_column": model["groups"]["column"],
    }


def test_small_groups_fall_back_to_the_pooled_threshold_and_say_so(digits_csv, tmp_path, capsys):
    """Grouped by predicted class (about 27 calibration rows each), risk 10 % at 0.9: a class that
    cannot certify on its own takes the pooled threshold, and its sentence says the pooled
    population only; with --simultaneous the pooled level is (0.9)^(1/10)."""
    out, data = tmp_path / "sel", tmp_path / "cls.csv"
    pd.read_csv(digits_csv).drop(columns="parity").to_csv(data, index=False)  # text: no feature
    options = ["--target", "risk=10", "--confidence", "0.9", "--group-column", "cls"]
    assert _select(data, out, *options, "--simultaneous") == 0
    printed = capsys.readouterr().out
    report = json.loads((out / "report.json").read_text())
    groups = report["groups"]
    assert groups["simultaneous"] and groups["group_confidence"] == pytest.approx(0.9**0.1)
    fallen = [r["group"] for r in groups["records"] if r["fallback"]]
    assert fallen and all(r["holds_for"] == "pooled" for r in groups["records"] if r["fallback"])
    markdown = (out / "report.md").read_text()
    assert "This holds for the pooled population only, NOT for groups" in markdown
    assert f"per group (--group-column cls): {10 - len(fallen)} of 10 groups" in printed


def test_a_group_of_one_row(digits_csv, tmp_path):
    """A group of one calibration row: a coverage target accepts all of it (too few rows for its
    order statistic), a risk target falls back to the pooled threshold."""
    frame = pd.read_csv(digits_csv)
    parts = split_rows(len(frame), seed=0, min_rows=10)  # select's default split
    lonely = parts["calibration"][0]
    frame.loc[lonely, "parity"] = "lonely"
    frame.to_csv(tmp_path / "one.csv", index=False)
    options = ["--confidence", "0.9", "--group-column", "parity"]
    assert _select(tmp_path / "one.csv", tmp_path / "c", "--target", "coverage=0.8", *options) == 0
    record = json.loads((tmp_path / "c" / "report.json").read_text())["groups"]["records"][1]
    assert (record["group"], record["n_rows"], record["fallback"]) == ("lonely", 1, False)
    assert record["threshold"] == "inf"
    assert _select(tmp_path / "one.csv", tmp_path / "r", "--target", "risk=10", *options) == 0
    record = json.loads((tmp_path / "r" / "report.json").read_text())["groups"]["records"][1]
    assert (record["group"], record["n_rows"], record["fallback"]) == ("lonely", 1, True)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (
            ["--target", "risk=5", "--group-column", "parity"],
            "--group-column 'parity' fits a certified threshold per group, and --target risk=5 is "
            "not certified: give a risk or coverage target with --confidence",
        ),
        (
            ["--target", "risk=5", "--confidence", "0.9", "--simultaneous"],
            "--simultaneous makes the per-group certificates hold together: it needs "
            "--group-column COL",
        ),
        (
            ["--target", "risk=5", "--confidence", "0.9", "--group-column", "site"],
            "--group-column 'site': no such column; the file has [",
        ),
        (
            ["--target", "risk=5", "--confidence", "0.9", "--group-column", "y"],
            "--group-column 'y' is the label column: the group labels need a column of their own",
        ),
        (
            ["--target", "risk=5", "--confidence", "0.9", "--group-column", "y_pred"],
            "--group-column 'y_pred' is the prediction column",
        ),
        (
            ["--target", "coverage=0.8", "--confidence", "0.9", "--group-column", "parity"]
            + ["--feature-columns", "parity,cls"],
            "--feature-columns includes ['parity'], the group (--group-column) column",
        ),
    ],
)
def test_refused_options(digits_csv, tmp_path, capsys, options, message):
    assert _select(digits_csv, tmp_path / "o", *options) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def test_a_missing_label_is_refused_naming_its_row(digits_csv, tmp_path, capsys):
    frame = pd.read_csv(digits_csv)
    frame.loc[6, "parity"] = None
    frame.to_csv(tmp_path / "nan.csv", index=False)
    options = ["--target", "risk=5", "--confidence", "0.9", "--group-column", "parity"]
    assert _select(tmp_path / "nan.csv", tmp_path / "o", *options) == 2
    assert (
        "nan.csv: --group-column 'parity' has no label at row 7: every row needs its group"
        in capsys.readouterr().err
    )


def test_an_npz_array_names_the_groups(digits_csv, tmp_path):
    """An NPZ's array named by --group-column holds the groups; a CSV and its NPZ agree."""
    frame = pd.read_csv(digits_csv)
    X = frame.drop(columns=["y", "y_pred", "parity"]).to_numpy()
    np.savez(
        tmp_path / "val.npz",
        X=X,
        y=frame["y"].to_numpy(),
        y_pred=frame["y_pred"].to_numpy(),
        parity=frame["parity"].to_numpy().astype(str),
    )
    options = ["--target", "coverage=0.8", "--confidence", "0.9", "--group-column", "parity"]
    assert _select(tmp_path / "val.npz", tmp_path / "n", *options) == 0
    assert _select(digits_csv, tmp_path / "c", *options) == 0
    npz, csv = (json.loads((tmp_path / f / "report.json").read_text()) for f in ("n", "c"))
    keys = ("group", "n_rows", "fallback", "report_rows")
    for a, b in zip(npz["groups"]["records"], csv["groups"]["records"], strict=True):
        assert [a[k] for k in keys] == [b[k] for k in keys]
        # the NPZ's features are read from its array, the CSV's parsed from text: equal to an ulp
        assert a["threshold"] == pytest.approx(b["threshold"], rel=1e-12)


def test_apply_decides_each_row_by_its_groups_threshold(digits_csv, tmp_path, capsys):
    """model.json (format_version 5) records each group's threshold, and apply decides each row
    by its group's: the decisions are GroupSelection.accept of the uncertainties apply writes."""
    out = tmp_path / "sel"
    options = ["--target", "coverage=0.8", "--confidence", "0.9", "--group-column", "parity"]
    assert _select(digits_csv, out, *options) == 0
    model = json.loads((out / "model.json").read_text())
    report = json.loads((out / "report.json").read_text())
    assert model["format_version"] == 5 and model["groups"]["column"] == "parity"
    assert [(g["label"], g["selection"]["threshold"]) for g in model["groups"]["groups"]] == [
        (r["group"], r["threshold"]) for r in report["groups"]["records"]
    ]
    decisions_csv = tmp_path / "d.csv"
    args = ["-q", "apply", "--model", str(out / "model.json"), "--data", str(digits_csv)]
    assert cli.main([*args, "--out", str(decisions_csv)]) == 0
    decisions = pd.read_csv(decisions_csv, **EXACT_FLOATS)  # the uncertainties' exact bits
    groups = pd.read_csv(digits_csv)["parity"].to_numpy()
    threshold = {r["group"]: r["threshold"] for r in report["groups"]["records"]}
    expected = decisions["uncertainty"].to_numpy() <= np.vectorize(threshold.get)(groups)
    np.testing.assert_array_equal(decisions["accept"].to_numpy(), expected.astype(int))
    assert 0 < expected.mean() < 1  # the two thresholds differ: a single one would not match
    # a group select saw no row of: refused, naming it and its row
    frame = pd.read_csv(digits_csv)
    frame.loc[4, "parity"] = "prime"
    frame.to_csv(tmp_path / "new.csv", index=False)
    args = ["-q", "apply", "--model", str(out / "model.json"), "--data", str(tmp_path / "new.csv")]
    assert cli.main([*args, "--out", str(tmp_path / "e.csv")]) == 2
    assert (
        "the group column 'parity' (model.json groups.column) holds 'prime' at row 5 (1 row(s) in "
        "all), a group that select saw no row of" in capsys.readouterr().err
    )
    frame.drop(columns="parity").to_csv(tmp_path / "none.csv", index=False)
    args = ["-q", "apply", "--model", str(out / "model.json"), "--data", str(tmp_path / "none.csv")]
    assert cli.main([*args, "--out", str(tmp_path / "f.csv")]) == 2
    assert "the model's group column (model.json groups.column) 'parity': no such column" in (
        capsys.readouterr().err
    )


def test_a_model_without_groups_keeps_its_format_version(digits_csv, tmp_path):
    """Only a per-group model is written in format 5: the others stay readable by older releases."""
    options = ["--target", "coverage=0.8", "--confidence", "0.9"]
    assert _select(digits_csv, tmp_path / "s", *options, "--feature-columns", "cls") == 0
    model = json.loads((tmp_path / "s" / "model.json").read_text())
    assert model["format_version"] == 3 and "groups" not in model


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda g: g.pop("column"), "groups: missing field(s) ['column']"),
        (lambda g: g["groups"][1].update(label="even"), "groups.groups[1].label 'even' is given"),
        (lambda g: g["groups"][1].update(label=None), "groups.groups[1].label must be text or"),
        (lambda g: g["groups"][1].update(label=1), "groups.groups mixes label kinds"),
        (lambda g: g.update(confidence=1.5), "groups.confidence"),
        (lambda g: g["groups"][0]["selection"].pop("accept_prob"), "groups.groups[0].selection"),
    ],
)
def test_an_edited_groups_entry_is_refused_naming_its_field(digits_csv, tmp_path, edit, message):
    from rejectopt.model import read_model

    out = tmp_path / "sel"
    options = ["--target", "coverage=0.8", "--confidence", "0.9", "--group-column", "parity"]
    assert _select(digits_csv, out, *options, "--feature-columns", "cls") == 0
    model = json.loads((out / "model.json").read_text())
    edit(model["groups"])
    (out / "model.json").write_text(json.dumps(model))
    with pytest.raises(ValueError, match="invalid model: ") as error:
        read_model(out / "model.json")
    assert message in str(error.value)


@pytest.fixture(scope="module")
def population_csv(tmp_path_factory):
    """Two sites of known uncertainty curves and a user's own score column u (no score learned):
    site "b" has u = V^2, so one threshold for both gives the sites different coverages."""
    rng = np.random.default_rng(3)
    n = 4000
    site = rng.choice(np.array(["a", "b"]), size=n, p=[0.6, 0.4])
    v = rng.random(n)
    u = np.where(site == "b", v**2, v)
    y = (rng.random(n) < 0.05 + 0.4 * u).astype(int)
    path = tmp_path_factory.mktemp("population") / "pop.csv"
    pd.DataFrame({"u": u, "y": y, "y_pred": np.zeros(n, int), "site": site}).to_csv(
        path, index=False
    )
    return path


@pytest.mark.parametrize("simultaneous", [False, True])
def test_validate_reports_each_groups_violation_rate(population_csv, tmp_path, simultaneous):
    """validate --group-column: groups.csv has one line per group (and one for all together with
    --simultaneous); each own certificate's violation rate is not above delta beyond its 95 %
    interval (the per-group theorem), and every draw certifies both sites on their own."""
    out = tmp_path / "v"
    args = ["-q", "validate", "--data", str(population_csv), "--uncertainty-column", "u"]
    args += ["--target", "coverage=0.8", "--confidence", "0.9", "--repeats", "100"]
    args += ["--group-column", "site", "--out", str(out)]
    assert cli.main(args + (["--simultaneous"] if simultaneous else [])) == 0
    table = pd.read_csv(out / "groups.csv")
    expected = ["a", "b"] + (["(all groups together)"] if simultaneous else [])
    assert table["group"].tolist() == expected
    own = table.iloc[:2]
    assert own["own_draws"].tolist() == [100, 100] and own["fallback_draws"].tolist() == [0, 0]
    assert own["population_rows"].sum() == 4000
    assert (table["violation_low"] <= table["delta"]).all()
    assert (table["violation_rate"] == table["own_violations"] / 100).all()


def test_a_networks_outputs_take_a_group_array(tmp_path, capsys):
    """An NPZ of logits and labels with an array of sites: select fits per site, apply reads the
    array back; the labels array cannot be the group column."""
    rng = np.random.default_rng(0)
    n = 1500
    logits = 2 * rng.normal(size=(n, 3))
    labels = np.where(rng.random(n) < 0.8, logits.argmax(1), rng.integers(0, 3, n))
    site = np.where(rng.random(n) < 0.5, "x", "y")
    np.savez(tmp_path / "net.npz", logits=logits, labels=labels, site=site)
    options = ["--target", "coverage=0.8", "--confidence", "0.9", "--score", "mcp"]
    out = tmp_path / "sel"
    assert _select(tmp_path / "net.npz", out, *options, "--group-column", "site") == 0
    model = json.loads((out / "model.json").read_text())
    assert [g["label"] for g in model["groups"]["groups"]] == ["x", "y"]
    args = ["-q", "apply", "--model", str(out / "model.json"), "--data", str(tmp_path / "net.npz")]
    assert cli.main([*args, "--out", str(tmp_path / "d.csv")]) == 0
    decisions = pd.read_csv(tmp_path / "d.csv", **EXACT_FLOATS)
    threshold = {g["label"]: g["selection"]["threshold"] for g in model["groups"]["groups"]}
    expected = decisions["uncertainty"].to_numpy() <= np.vectorize(threshold.get)(site)
    np.testing.assert_array_equal(decisions["accept"].to_numpy(), expected.astype(int))
    assert _select(tmp_path / "net.npz", tmp_path / "o", *options, "--group-column", "labels") == 2
    assert "--group-column 'labels' is the label column" in capsys.readouterr().err
