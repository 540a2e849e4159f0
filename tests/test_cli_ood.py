"""``select --target tpr=T,fpr=F`` / ``precision=P,recall=R`` with out-of-distribution rows.

Real data: LR ("your" classifier) trained on the in-distribution (ID) classes of sattelite; the
last class is out-of-distribution (OOD): its rows are marked ``is_ood=1`` and have no label.
"""

import functools
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from cli_data import frame
from sklearn.linear_model import LogisticRegression
from support import DEMO_MIRROR

from rejectopt import cli
from rejectopt.cli._errors import InputError
from rejectopt.cli._model import apply_model, load_model
from rejectopt.cli._table import load_apply_table, load_table
from rejectopt.datasets import load_prepared, prepare_dataset
from rejectopt.fitting import split_ood_rows
from rejectopt.selective import InfeasibleTargetError
from rejectopt.targets import OODTarget, parse_target

TPR_FPR = (0.8, 0.3)
PRECISION_RECALL = (0.9, 0.7)
C_GRID = "1,10"


@functools.cache
def ood_tables(folder):
    """CSVs ``given`` (2500 rows, for select) and ``unseen`` (the rest, for apply) with an ``is_ood`` column."""
    folder = Path(folder)
    prepare_dataset("sattelite", folder / "raw", folder / "d.npz", mirror=DEMO_MIRROR)
    X, y = load_prepared(folder / "d.npz")
    is_ood = y == y.max()  # the last class is OOD
    order = np.random.default_rng(0).permutation(len(y))
    trn, given, unseen = order[:1500], order[1500:4000], order[4000:]
    trn = trn[~is_ood[trn]]  # the classifier never sees the OOD class
    clf = LogisticRegression(max_iter=2000).fit(X[trn] / 100.0, y[trn])
    paths = {}
    for name, rows in (("given", given), ("unseen", unseen)):
        table = frame(
            X[rows], np.where(is_ood[rows], np.nan, y[rows]), clf.predict(X[rows] / 100.0)
        )
        table["is_ood"] = is_ood[rows].astype(int)  # OOD rows: no label (empty cell)
        paths[name] = folder / f"{name}.csv"
        table.to_csv(paths[name], index=False)
    return paths


@functools.cache
def ood_selection(folder, target):
    out = Path(folder) / f"sel_{target}"
    status = cli.main(
        [
            "select",
            "--data",
            str(ood_tables(folder)["given"]),
            "--target",
            target,
            "--C",
            C_GRID,
            "--out",
            str(out),
            "-q",
        ]
    )
    assert status == 0
    return out


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return str(tmp_path_factory.mktemp("cli_ood"))


@pytest.fixture(scope="module")
def paths(folder):
    return ood_tables(folder)


def run(argv, capsys):
    try:
        status = cli.main([str(a) for a in argv])
    except SystemExit as exit_:
        status = exit_.code
    return status, capsys.readouterr().err.strip()


def sigma(p, n):
    return math.sqrt(p * (1 - p) / n)


def report_rows_rates(paths, out):
    """Expected TPR / FPR / precision on the report rows, recomputed from model.json and the data."""
    model, score, selection = load_model(out / "model.json")
    table = load_apply_table(paths["given"], feature_columns=model["feature_columns"])
    is_ood = pd.read_csv(paths["given"])["is_ood"].to_numpy() == 1
    report = split_ood_rows(is_ood, seed=0)["report"]
    decisions = apply_model(model, score, selection, table)
    prob = decisions["acceptance_probability"].to_numpy()[report]
    ood = is_ood[report]
    return {
        "tpr": prob[~ood].mean(),
        "fpr": prob[ood].mean(),
        "precision": prob[~ood].sum() / prob.sum(),
    }


# --------------------------------------------------------------------------------------------
# The two OOD targets on real data
# --------------------------------------------------------------------------------------------
def test_tpr_fpr_target_holds_on_report_and_unseen_rows(folder, paths, tmp_path, capsys):
    tpr_min, fpr_max = TPR_FPR
    out = ood_selection(folder, f"tpr={tpr_min},fpr={fpr_max}")
    assert sorted(p.name for p in out.iterdir()) == [
        "model.json",
        "rc_curve.png",
        "report.json",
        "report.md",
    ]
    report = json.loads((out / "report.json").read_text())
    model = json.loads((out / "model.json").read_text())
    assert model["target"] == {
        "kind": "tpr-fpr",
        "value": {"tpr": tpr_min, "fpr": fpr_max},
        "ood_column": "is_ood",
    }
    assert "is_ood" not in model["feature_columns"] and len(model["feature_columns"]) == 36
    rows, given = report["rows"], pd.read_csv(paths["given"])
    assert (
        rows["ood"]["total"]
        == given["is_ood"].sum()
        == rows["ood"]["calibration"] + rows["ood"]["report"]
    )
    assert rows["train_fit"] + rows["train_validation"] + rows["calibration"] + rows[
        "report"
    ] == len(given)
    point = report["report"]
    n_id, n_ood = rows["report"] - rows["ood"]["report"], rows["ood"]["report"]
    measured = (
        f"report rows ({n_id} ID, {n_ood} OOD): TPR {point['tpr']:.4f}, FPR {point['fpr']:.4f}, coverage "
        f"{point['coverage']:.4f}, selective risk {point['selective_risk']:.3f} % vs "
        f"{report['risk_full_coverage_report']:.3f} % at full coverage; AUROC {report['auroc_report']:.3f}"
    )
    assert point["tpr"] >= tpr_min - 3 * sigma(tpr_min, n_id)
    assert point["fpr"] <= fpr_max + 3 * sigma(fpr_max, n_ood)
    assert point["selective_risk"] < report["risk_full_coverage_report"]
    for name in ("tpr", "fpr", "coverage", "selective_risk"):
        assert point[f"{name}_ci"][0] <= point[name] <= point[f"{name}_ci"][1]
    assert report["feasibility"]["calibration"]["all"]
    assert report["calibration"]["tpr"] >= tpr_min and report["calibration"]["fpr"] <= fpr_max
    # the report is what the model does on the report rows of the documented split
    rates = report_rows_rates(paths, out)
    assert rates["tpr"] == pytest.approx(point["tpr"]) and rates["fpr"] == pytest.approx(
        point["fpr"]
    )
    assert "tpr=0.8,fpr=0.3" in (out / "report.md").read_text()

    # apply works unchanged on the model; the is_ood column is not read
    unseen = pd.read_csv(paths["unseen"])
    decisions = {}
    for name, table in (("with", unseen), ("without", unseen.drop(columns=["is_ood", "y"]))):
        data, dec = tmp_path / f"{name}.csv", tmp_path / f"decisions_{name}.csv"
        table.to_csv(data, index=False)
        status, err = run(
            ["apply", "--model", out / "model.json", "--data", data, "--out", dec, "-q"], capsys
        )
        assert status == 0, err
        decisions[name] = dec.read_bytes()
    assert decisions["with"] == decisions["without"]
    accept = pd.read_csv(tmp_path / "decisions_with.csv")["accept"].to_numpy() == 1
    ood = unseen["is_ood"].to_numpy() == 1
    tpr, fpr = accept[~ood].mean(), accept[ood].mean()
    correct = unseen["y"].to_numpy()[~ood] == unseen["y_pred"].to_numpy()[~ood]
    risk_accepted, risk_all = 100 * (1 - correct[accept[~ood]].mean()), 100 * (1 - correct.mean())
    print(
        f"{measured}\nunseen rows ({(~ood).sum()} ID, {ood.sum()} OOD): TPR {tpr:.4f}, FPR {fpr:.4f}, selective "
        f"risk {risk_accepted:.3f} % vs {risk_all:.3f} %"
    )
    assert tpr >= tpr_min - 3 * sigma(tpr_min, (~ood).sum())
    assert fpr <= fpr_max + 3 * sigma(fpr_max, ood.sum())
    assert risk_accepted < risk_all


def test_precision_recall_target_holds_on_report_rows(folder, paths):
    precision_min, recall_min = PRECISION_RECALL
    out = ood_selection(folder, f"precision={precision_min},recall={recall_min}")
    report = json.loads((out / "report.json").read_text())
    assert json.loads((out / "model.json").read_text())["target"]["kind"] == "precision-recall"
    point, rows = report["report"], report["rows"]
    n_id = rows["report"] - rows["ood"]["report"]
    print(
        f"report rows: precision {point['precision']:.4f}, recall {point['recall']:.4f}, coverage "
        f"{point['coverage']:.4f}, selective risk {point['selective_risk']:.3f} %"
    )
    assert point["recall"] >= recall_min - 3 * sigma(recall_min, n_id)
    assert point["precision"] >= precision_min - 3 * sigma(
        precision_min, point["n_accepted_expected"]
    )
    assert point["selective_risk"] < report["risk_full_coverage_report"]
    assert (
        report["calibration"]["precision"] >= precision_min
        and report["calibration"]["recall"] >= recall_min
    )
    assert report_rows_rates(paths, out)["precision"] == pytest.approx(point["precision"])


# --------------------------------------------------------------------------------------------
# Bad input: exit 2, one line naming the culprit, nothing written
# --------------------------------------------------------------------------------------------
def _edit(frame_, column, rows, value):
    frame_[column] = frame_[column].astype(object)
    frame_.loc[rows, column] = value
    return frame_


def _first_ood_row(frame_):
    return int(np.flatnonzero(frame_["is_ood"].to_numpy() == 1)[0])


BAD_INPUT = {
    # name: (edit of the given table or None, target, extra options, fragments of the message)
    "no OOD rows": (
        lambda f: f.assign(is_ood=0),
        "tpr=0.8,fpr=0.3",
        (),
        ["'is_ood'", "no row OOD"],
    ),
    "no ID rows": (
        lambda f: f.assign(is_ood=1),
        "tpr=0.8,fpr=0.3",
        (),
        ["'is_ood'", "every row OOD"],
    ),
    "NaN in is_ood": (
        lambda f: _edit(f, "is_ood", 6, np.nan),
        "tpr=0.8,fpr=0.3",
        (),
        ["missing value (NaN)", "'is_ood'", "row 7"],
    ),
    "text in is_ood": (
        lambda f: _edit(f, "is_ood", 9, "maybe"),
        "tpr=0.8,fpr=0.3",
        (),
        ["'maybe'", "'is_ood'", "row 10", "0/false"],
    ),
    "2 in is_ood": (
        lambda f: _edit(f, "is_ood", 3, 2),
        "precision=0.9,recall=0.7",
        (),
        ["'is_ood'", "row 4"],
    ),
    # a share is no OOD mark: 0.5 is refused, not read as True, naming the user's row and the allowed values
    "0.5 in is_ood": (
        lambda f: _edit(f, "is_ood", 5, 0.5),
        "tpr=0.8,fpr=0.3",
        (),
        ["value 0.5 in the OOD column 'is_ood' at row 6 is not 0/false (ID) or 1/true (OOD)"],
    ),
    "no is_ood column": (
        lambda f: f.drop(columns="is_ood"),
        "tpr=0.8,fpr=0.3",
        (),
        ["missing column", "'is_ood'"],
    ),
    "other OOD column missing": (
        None,
        "tpr=0.8,fpr=0.3",
        ("--ood-column", "ood"),
        ["missing column", "'ood'"],
    ),
    "NaN label of an ID row": (
        lambda f: _edit(f.assign(is_ood=np.where(f.index == 12, 0, f["is_ood"])), "y", 12, np.nan),
        "tpr=0.8,fpr=0.3",
        (),
        ["missing value (NaN)", "'y'", "row 13"],
    ),
    "tpr above 1": (None, "tpr=1.2,fpr=0.3", (), ["--target", "tpr", "[0, 1]", "1.2"]),
    "fpr below 0": (None, "tpr=0.8,fpr=-0.1", (), ["--target", "fpr", "[0, 1]", "-0.1"]),
    "precision NaN": (None, "precision=nan,recall=0.7", (), ["--target", "precision", "[0, 1]"]),
    "fpr missing": (None, "tpr=0.8", (), ["--target", "needs fpr"]),
    "mixed models": (
        None,
        "tpr=0.8,recall=0.7",
        (),
        ["--target", "tpr=T,fpr=F or precision=P,recall=R"],
    ),
    "not a number": (None, "tpr=0.8,fpr=abc", (), ["--target", "fpr", "'abc'", "not a number"]),
    "repeated bound": (None, "tpr=0.8,tpr=0.9,fpr=0.1", (), ["--target", "tpr twice"]),
    "infeasible": (
        None,
        "tpr=0.99,fpr=0.01",
        (),
        [
            "cannot meet --target tpr=0.99,fpr=0.01",
            "calibration rows",
            "smallest attainable FPR",
            "largest attainable TPR",
            "unable",
        ],
    ),
    "one OOD row": (
        lambda f: f[(f["is_ood"] == 0) | (f.index == _first_ood_row(f))],
        "tpr=0.8,fpr=0.3",
        (),
        ["too few OOD rows (1)"],
    ),
    "ood column is the label": (
        None,
        "tpr=0.8,fpr=0.3",
        ("--ood-column", "y"),
        ["--ood-column", "'y'", "label"],
    ),
    "ood column as a feature": (
        None,
        "tpr=0.8,fpr=0.3",
        ("--feature-columns", "f0,is_ood"),
        ["--feature-columns", "'is_ood'", "OOD indicator"],
    ),
    "ood column without an OOD target": (
        None,
        "coverage=0.8",
        ("--ood-column", "is_ood"),
        ["--ood-column", "coverage=0.8"],
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_INPUT))
def test_bad_input_exits_2_naming_the_culprit_and_writes_nothing(case, paths, tmp_path, capsys):
    edit, target, extra, fragments = BAD_INPUT[case]
    data = paths["given"]
    if edit is not None:
        data = tmp_path / "data.csv"
        edit(pd.read_csv(paths["given"])).to_csv(data, index=False)
    out = tmp_path / "sel"
    status, err = run(
        ["select", "--data", data, "--target", target, "--out", out, "--C", "1", "-q", *extra],
        capsys,
    )
    assert status == 2, err
    assert (
        "Traceback" not in err
        and len(err.splitlines()) == 1
        and err.startswith("rejectopt: error: ")
    ), err
    for fragment in fragments:
        assert fragment in err, (fragment, err)
    assert not out.exists()


def test_existing_outputs_need_force_and_a_malformed_ood_target_is_refused(
    folder, paths, tmp_path, capsys
):
    out = ood_selection(folder, f"tpr={TPR_FPR[0]},fpr={TPR_FPR[1]}")
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    status, err = run(
        ["select", "--data", paths["given"], "--target", "tpr=0.5,fpr=0.5", "--out", out, "-q"],
        capsys,
    )
    assert status == 2 and "--force" in err
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    for edit, field in (
        (lambda t: t["value"].update(tpr=1.5), "tpr"),
        (lambda t: t.pop("ood_column"), "ood_column"),
        (lambda t: t.update(value=0.8), "target.value"),
    ):
        model = json.loads((out / "model.json").read_text())
        edit(model["target"])
        bad = tmp_path / "model.json"
        bad.write_text(json.dumps(model))
        status, err = run(
            ["apply", "--model", bad, "--data", paths["unseen"], "--out", tmp_path / "d.csv", "-q"],
            capsys,
        )
        assert status == 2 and "invalid model" in err and field in err, err
        assert not (tmp_path / "d.csv").exists()


# --------------------------------------------------------------------------------------------
# The OOD column and the target text, without fitting
# --------------------------------------------------------------------------------------------
def test_ood_column_accepts_0_1_and_true_false_and_npz(paths, tmp_path):
    given = pd.read_csv(paths["given"])
    expected = given["is_ood"].to_numpy() == 1
    texts = given.assign(is_ood=np.where(expected, " True", "false"))
    texts.to_csv(tmp_path / "text.csv", index=False)
    for path in (paths["given"], tmp_path / "text.csv"):
        table = load_table(path, ood_column="is_ood")
        np.testing.assert_array_equal(table.is_ood, expected)
        assert "is_ood" not in table.feature_columns
        assert (
            np.isnan(table.loss[expected]).all()
            and np.isin(table.loss[~expected], (0.0, 100.0)).all()
        )
    features = given[[f"f{j}" for j in range(36)]].to_numpy()
    np.savez(
        tmp_path / "d.npz",
        X=features,
        y_pred=given["y_pred"].to_numpy(),
        y=given["y"].fillna(-1).to_numpy(),
        is_ood=expected,
    )
    table = load_table(tmp_path / "d.npz", ood_column="is_ood")
    np.testing.assert_array_equal(table.is_ood, expected)
    shares = expected.astype(float)
    shares[4] = 0.5  # an NPZ's float array: its index, not a row number
    np.savez(
        tmp_path / "half.npz",
        X=features,
        y_pred=given["y_pred"].to_numpy(),
        y=given["y"].fillna(-1).to_numpy(),
        is_ood=shares,
    )
    with pytest.raises(
        InputError,
        match=r"half.npz: value 0.5 in the OOD column 'is_ood' at index 4 is not 0/false "
        r"\(ID\) or 1/true \(OOD\)",
    ):
        load_table(tmp_path / "half.npz", ood_column="is_ood")


def test_parse_target_and_attainable_agree_with_the_strategies():
    assert parse_target("fpr=0.2, TPR=0.8") == OODTarget("tpr-fpr", (0.8, 0.2))
    assert str(parse_target("precision=0.9,recall=0.7")) == "precision=0.9,recall=0.7"
    rng = np.random.default_rng(3)
    for _ in range(50):
        n = int(rng.integers(20, 80))
        is_ood = rng.random(n) < 0.4
        if is_ood.all() or not is_ood.any():
            continue
        u = rng.integers(0, 6, n) + 0.7 * is_ood  # ties, OOD somewhat more uncertain
        loss = np.where(is_ood, np.nan, 100.0 * rng.integers(0, 2, n))
        first = rng.random()
        for kind, key, index in (
            ("tpr-fpr", "fpr_at_tpr", 1),
            ("precision-recall", "precision_at_recall", 0),
        ):
            bounds = [first, first]
            edge = OODTarget(kind, tuple(bounds)).attainable(is_ood, u)[key]
            if math.isnan(edge):
                continue
            step = (
                1e-6 if kind == "tpr-fpr" else -1e-6
            )  # FPR is an upper bound, precision a lower one
            bounds[index] = min(max(edge + step, 0.0), 1.0)
            OODTarget(kind, tuple(bounds)).fit(loss, is_ood, u)  # just feasible
            bounds[index] = edge - step
            if 0.0 <= bounds[index] <= 1.0:
                with pytest.raises(InfeasibleTargetError, match="attainable"):
                    OODTarget(kind, tuple(bounds)).fit(loss, is_ood, u)
