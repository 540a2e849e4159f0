"""Tests for the ``python -m rejectopt select|apply`` command line (rejectopt.cli)."""

import json
import logging
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
import scipy.stats as sps
from cli_data import (
    N_FEATURES,
    TARGET_COVERAGE,
    digits_table,
    network_outputs,
    satellite_tables,
    selected_model,
    shared_folder,
    wine_table,
)
from sklearn.datasets import load_digits
from sklearn.linear_model import LogisticRegression

from rejectopt import cli
from rejectopt.cli._errors import InputError
from rejectopt.cli._files import write_outputs
from rejectopt.cli._model import apply_model, load_model
from rejectopt.cli._parser import build_parser, cli_scores
from rejectopt.cli._table import EXACT_FLOATS, load_apply_table, load_table
from rejectopt.fitting import split_rows
from rejectopt.logits import fit_logits
from rejectopt.scores import SELE
from rejectopt.scores._base import PerClassLinearScore


@pytest.fixture(scope="module")
def satellite(tmp_path_factory):
    """(folder, {"given": CSV for select, "unseen": CSV for apply}), shared by the test_cli* modules."""
    folder = shared_folder(tmp_path_factory)
    return folder, satellite_tables(folder)


@pytest.fixture(scope="module")
def selected(satellite):
    return selected_model(satellite[0])


def test_select_writes_all_outputs(selected):
    assert sorted(p.name for p in selected.iterdir()) == [
        "model.json",
        "rc_curve.png",
        "report.json",
        "report.md",
        "thresholds.csv",
    ]
    report = json.loads((selected / "report.json").read_text())
    assert report["rows"] == {
        "total": 2500,
        "train_fit": 875,
        "train_validation": 375,
        "calibration": 750,
        "report": 500,
    }
    point = report["report"]
    assert point["coverage_ci"][0] <= point["coverage"] <= point["coverage_ci"][1]
    assert point["selective_risk_ci"][0] <= point["selective_risk"] <= point["selective_risk_ci"][1]
    assert report["aurc_report"]["learned_score"] < report["aurc_report"]["random_order"]
    assert report["calibration"]["coverage"] == pytest.approx(TARGET_COVERAGE)
    model = json.loads((selected / "model.json").read_text())
    assert model["classes"] == [str(k) for k in range(6)]
    assert model["feature_columns"] == [f"f{j}" for j in range(36)]
    assert (selected / "rc_curve.png").read_bytes()[:4] == b"\x89PNG"


def test_coverage_on_unseen_rows(satellite, selected, tmp_path):
    _, paths = satellite
    out = tmp_path / "decisions.csv"
    assert (
        cli.main(
            [
                "apply",
                "--model",
                str(selected / "model.json"),
                "--data",
                str(paths["unseen"]),
                "--out",
                str(out),
                "-q",
            ]
        )
        == 0
    )
    decisions = pd.read_csv(out)
    unseen = pd.read_csv(paths["unseen"])
    n = len(unseen)
    coverage = decisions["accept"].mean()
    sigma = np.sqrt(TARGET_COVERAGE * (1 - TARGET_COVERAGE) / n)
    accepted = decisions["accept"].to_numpy() == 1
    risk_accepted = 100 * np.mean(
        unseen["y"].to_numpy()[accepted] != unseen["y_pred"].to_numpy()[accepted]
    )
    risk_all = 100 * np.mean(unseen["y"] != unseen["y_pred"])
    print(
        f"unseen rows n={n}: coverage {coverage:.4f} (3 sigma {3 * sigma:.4f}), "
        f"selective risk {risk_accepted:.2f} % vs {risk_all:.2f} % at full coverage"
    )
    assert len(decisions) == n
    assert coverage >= TARGET_COVERAGE - 3 * sigma
    assert risk_accepted < risk_all


def test_model_json_round_trip_reproduces_uncertainties_exactly(satellite, selected, tmp_path):
    _, paths = satellite
    model, score, selection = load_model(selected / "model.json")
    table = load_apply_table(paths["unseen"], feature_columns=model["feature_columns"])
    classes = np.array([model["classes"].index(k) for k in table.pred_keys])
    expected = score.predict(table.X, classes)
    out = tmp_path / "decisions.csv"
    cli.main(
        [
            "apply",
            "--model",
            str(selected / "model.json"),
            "--data",
            str(paths["unseen"]),
            "--out",
            str(out),
            "-q",
        ]
    )
    written = (
        pd.read_csv(out, dtype={"uncertainty": str})["uncertainty"].map(float).to_numpy()
    )  # exact parse
    np.testing.assert_array_equal(written, expected)
    # fitted score -> dict -> JSON text -> dict -> score: bit-identical predictions
    rng = np.random.default_rng(1)
    X, y_pred = rng.normal(size=(300, 4)), rng.integers(0, 3, 300)
    loss = 100.0 * (rng.random(300) < 1 / (1 + np.exp(-X[:, 0])))
    fitted = SELE(C=1.0, n_classes=4).fit(X, y_pred, loss)  # class 3 never predicted
    restored = PerClassLinearScore.from_dict(json.loads(json.dumps(fitted.to_dict())))
    assert type(restored) is SELE and restored.to_dict() == fitted.to_dict()
    probe = np.arange(4).repeat(5)
    X_new = rng.normal(size=(20, 4))
    np.testing.assert_array_equal(restored.predict(X_new, probe), fitted.predict(X_new, probe))


def _corrupt(paths, tmp_path, name, edit):
    frame = pd.read_csv(paths["unseen"])
    frame = edit(frame)
    path = tmp_path / f"{name}.csv"
    frame.to_csv(path, index=False)
    return path


def _set(frame, row, column, value):
    frame[column] = frame[column].astype(object)
    frame.loc[row, column] = value
    return frame


ERROR_CASES = {
    "missing": (lambda f: f.drop(columns=["f5"]), ["missing column", "'f5'", "'f4'"]),
    "nan": (lambda f: _set(f, 4, "f3", np.nan), ["NaN", "'f3'", "row 5"]),
    "text": (lambda f: _set(f, 7, "f2", "abc"), ["non-numeric", "'abc'", "'f2'", "row 8"]),
    "unseen_class": (lambda f: _set(f, 9, "y_pred", 9), ["not seen", "'9'", "'y_pred'", "row 10"]),
}


@pytest.mark.parametrize("case", sorted(ERROR_CASES))
def test_apply_errors_name_row_and_column(case, satellite, selected, tmp_path, capsys):
    _, paths = satellite
    edit, fragments = ERROR_CASES[case]
    data = _corrupt(paths, tmp_path, case, edit)
    out = tmp_path / "out" / "decisions.csv"
    status = cli.main(
        [
            "apply",
            "--model",
            str(selected / "model.json"),
            "--data",
            str(data),
            "--out",
            str(out),
            "-q",
        ]
    )
    err = capsys.readouterr().err.strip()
    assert status == 2
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    for fragment in fragments:
        assert fragment in err
    assert not out.parent.exists()


@pytest.mark.parametrize("case", ["missing", "nan", "text"])
def test_select_errors_leave_no_output(case, satellite, tmp_path, capsys):
    _, paths = satellite
    edit, fragments = ERROR_CASES[case]
    data = _corrupt(paths, tmp_path, case, edit)
    out = tmp_path / "sel"
    status = cli.main(
        [
            "select",
            "--data",
            str(data),
            "--target",
            "coverage=0.8",
            "--out",
            str(out),
            "--feature-columns",
            ",".join(f"f{j}" for j in range(36)),
            "-q",
        ]
    )
    err = capsys.readouterr().err.strip()
    assert status == 2 and len(err.splitlines()) == 1
    for fragment in fragments:
        assert fragment in err
    assert not out.exists()


def test_unseen_class_can_be_rejected(satellite, selected, tmp_path):
    _, paths = satellite
    data = _corrupt(paths, tmp_path, "u", lambda f: _set(f, 9, "y_pred", 9))
    out = tmp_path / "d.csv"
    assert (
        cli.main(
            [
                "apply",
                "--model",
                str(selected / "model.json"),
                "--data",
                str(data),
                "--out",
                str(out),
                "--unseen-classes",
                "reject",
                "-q",
            ]
        )
        == 0
    )
    row = pd.read_csv(out).iloc[9]
    assert row["accept"] == 0 and np.isinf(row["uncertainty"])


def test_failed_write_removes_partial_files(tmp_path):
    out = tmp_path / "new"
    with pytest.raises(TypeError):
        write_outputs(out, {"a.json": b"{}", "b.md": None})  # the second write fails
    assert not out.exists()
    existing = tmp_path / "old"
    existing.mkdir()
    with pytest.raises(TypeError):
        write_outputs(existing, {"a.json": b"{}", "b.md": None})
    assert list(existing.iterdir()) == []
    (existing / "a.json").write_bytes(
        b"previous"
    )  # --force: nothing is replaced unless every file is written
    with pytest.raises(TypeError):
        write_outputs(existing, {"a.json": b"{}", "b.md": None})
    assert [p.name for p in existing.iterdir()] == ["a.json"] and (
        existing / "a.json"
    ).read_bytes() == b"previous"


def test_npz_input_with_loss_and_reg(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(600, 3))
    y_pred = rng.integers(0, 2, 600)
    loss = np.abs(rng.normal(size=600)) * (1 + (X[:, 0] > 0))
    np.savez(tmp_path / "d.npz", X=X, y_pred=y_pred, loss=loss)
    out = tmp_path / "sel"
    assert (
        cli.main(
            [
                "select",
                "--data",
                str(tmp_path / "d.npz"),
                "--loss-column",
                "loss",
                "--score",
                "reg",
                "--target",
                "risk=1.0",
                "--C",
                "0,1",
                "--out",
                str(out),
                "-q",
            ]
        )
        == 0
    )
    report = json.loads((out / "report.json").read_text())
    assert report["score"] == "reg" and report["target"] == {"kind": "risk", "value": 1.0}
    assert report["report"]["selective_risk_ci_method"].startswith("normal approximation")
    np.savez(tmp_path / "new.npz", X=X[:50], y_pred=y_pred[:50])
    assert (
        cli.main(
            [
                "apply",
                "--model",
                str(out / "model.json"),
                "--data",
                str(tmp_path / "new.npz"),
                "--out",
                str(tmp_path / "d.csv"),
                "-q",
            ]
        )
        == 0
    )
    assert pd.read_csv(tmp_path / "d.csv")["row"].tolist() == list(
        range(50)
    )  # NPZ rows are 0-based indices


def test_module_entry_point_exits_2_without_traceback(tmp_path):
    # -q before the subcommand is accepted, as after it
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "rejectopt",
            "-q",
            "apply",
            "--model",
            str(tmp_path / "none.json"),
            "--data",
            "x.csv",
            "--out",
            str(tmp_path / "d.csv"),
        ],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 2
    assert (
        result.stderr.strip().startswith("python -m rejectopt: error:")
        and "Traceback" not in result.stderr
    )
    assert "no such file" in result.stderr


def test_infeasible_risk_target_exits_2_without_output(tmp_path, capsys):
    rng = np.random.default_rng(0)
    np.savez(
        tmp_path / "d.npz",
        X=rng.normal(size=(200, 2)),
        y_pred=np.zeros(200, int),
        y=np.ones(200, int),
    )
    out = tmp_path / "sel"
    assert (
        cli.main(
            [
                "select",
                "--data",
                str(tmp_path / "d.npz"),
                "--target",
                "risk=5",
                "--C",
                "1",
                "--out",
                str(out),
                "-q",
            ]
        )
        == 2
    )
    assert "cannot meet --target risk=5" in capsys.readouterr().err
    assert not out.exists()


def test_satellite_tables(tmp_path_factory):
    paths = satellite_tables(shared_folder(tmp_path_factory))
    given, unseen = pd.read_csv(paths["given"]), pd.read_csv(paths["unseen"])
    assert len(given) == 2500 and len(unseen) == 2435
    assert list(given.columns) == [f"f{j}" for j in range(N_FEATURES)] + ["y", "y_pred"]
    assert 0.05 < (given["y"] != given["y_pred"]).mean() < 0.3  # a useful, imperfect classifier


def test_cli_offers_the_registered_scores_that_learn_from_the_loss(capsys):
    choices = cli_scores()
    assert (
        choices[:2] == ["sele", "reg"] and "tcp" not in choices
    )  # the default first; TCP learns from posteriors
    with pytest.raises(SystemExit):
        build_parser().parse_args(["select", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    offered = ["auto", *choices, "mcp", "margin", "entropy", "doctor", "max_logit", "energy"]
    assert (
        f"--score {{{','.join(offered)}}}" in help_text
        and "not TCP: it learns from the classifier's class posteriors" in help_text
    )
    args = build_parser().parse_args(
        ["select", "--data", "d.csv", "--target", "coverage=0.5", "--out", "o"]
    )
    assert args.C == "0,1,10,100,1000" and args.score == "auto"  # SCORE_C_GRID
    validate = build_parser().parse_args(
        ["validate", "--data", "d.csv", "--target", "risk=5", "--confidence", "0.9", "--out", "v"]
    )
    assert validate.score == "sele"  # validate fits one learned score


def test_small_table_parser_defaults_and_missing_model(tmp_path):
    """The shell's pieces on a two-row CSV: classes normalised, 0/100 losses, rows named as messages name them."""
    path = tmp_path / "rows.csv"
    path.write_text("a,b,y,y_pred\n0.5,1,2,2.0\n1.5,0,1, 2\n")
    table = load_table(path)
    assert (
        table.X.tolist(),
        table.feature_columns,
        table.pred_keys.tolist(),
        table.loss.tolist(),
    ) == ([[0.5, 1.0], [1.5, 0.0]], ["a", "b"], ["2", "2"], [0.0, 100.0])
    assert table.where(1) == "row 2"
    path.write_text("a,b,y,y_pred\n0.5,1,2,2\n1e300,0,1,2\n")
    with pytest.raises(
        InputError, match=r"rows\.csv: value 1e\+300 in column 'a' at row 2 is out of range: "
    ):
        load_table(path)  # select refuses it
    assert load_apply_table(path).X[:, 0].tolist() == [
        0.5,
        1e300,
    ]  # apply rejects the row later
    args = build_parser().parse_args(
        ["apply", "--model", "m.json", "--data", "d.csv", "--out", "o.csv"]
    )
    assert (args.command, args.unseen_classes, args.extreme_values, args.seed) == (
        "apply",
        "error",
        "reject",
        0,
    )
    with pytest.raises(InputError, match="^no/such/model.json: no such file$"):
        load_model("no/such/model.json")


def test_select_then_apply_in_memory_scenario(tmp_path, capsys):
    """select on a logistic regression's predictions on digits, then apply: the decisions' columns and summary."""
    X, y = load_digits(return_X_y=True)
    clf = LogisticRegression(max_iter=3000, C=0.001).fit(X[:300], y[:300])
    frame = pd.DataFrame(X[300:], columns=[f"f{j}" for j in range(64)]).assign(
        y=y[300:], y_pred=clf.predict(X[300:])
    )
    frame.to_csv(tmp_path / "val.csv", index=False)
    assert (
        cli.main(
            [
                "-q",
                "select",
                "--data",
                str(tmp_path / "val.csv"),
                "--target",
                "coverage=0.8",
                "--C",
                "1",
                "--out",
                str(tmp_path / "sel"),
            ]
        )
        == 0
    )
    assert capsys.readouterr().out.startswith(
        f"wrote model.json, report.json, report.md, rc_curve.png, thresholds.csv to {tmp_path}"
    )
    model, score, selection = load_model(tmp_path / "sel" / "model.json")
    assert model["target"] == {"kind": "coverage", "value": 0.8} and type(score).__name__ == "SELE"
    decisions = apply_model(model, score, selection, load_apply_table(tmp_path / "val.csv"))
    assert decisions.columns.tolist() == [
        "row",
        "y_pred",
        "uncertainty",
        "acceptance_probability",
        "accept",
    ]
    assert int(decisions["accept"].sum()) == 1189  # the known answer of this seed
    assert (
        cli.main(
            [
                "-q",
                "apply",
                "--model",
                str(tmp_path / "sel" / "model.json"),
                "--data",
                str(tmp_path / "val.csv"),
                "--out",
                str(tmp_path / "decisions.csv"),
            ]
        )
        == 0
    )
    assert capsys.readouterr().out == (
        f"wrote {tmp_path / 'decisions.csv'}: {int(decisions['accept'].sum())} of 1497 "
        f"rows accepted ({decisions['accept'].mean():.4f})\n"
    )


# --------------------------------------------------------------------------------------------
# A deep network's outputs: NPZ arrays logits / labels / embeddings, CSV columns logit_* / emb_* / label
# --------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def network(tmp_path_factory):
    return network_outputs(str(tmp_path_factory.getbasetemp() / "network_outputs"))


@pytest.fixture(scope="module")
def network_selected(network, tmp_path_factory):
    """``select`` on the NPZ and on the CSV of the same outputs (seed 3)."""
    out = {}
    for kind in ("npz", "csv"):
        out[kind] = tmp_path_factory.mktemp(f"sel_{kind}")
        assert (
            cli.main(
                [
                    "select",
                    "--data",
                    str(network[kind]),
                    "--target",
                    "coverage=0.8",
                    "--seed",
                    "3",
                    "--score",
                    "sele",
                    "--out",
                    str(out[kind]),
                    "--force",
                    "-q",
                ]
            )
            == 0
        )
    return out


def test_network_outputs_select_and_apply_as_the_library_does(network, network_selected, tmp_path):
    models = {
        kind: json.loads((folder / "model.json").read_text())
        for kind, folder in network_selected.items()
    }
    assert models["npz"] == models["csv"]  # the same outputs as NPZ or CSV: the same model
    assert models["npz"]["feature_columns"] == [f"emb_{j}" for j in range(12)]
    assert (
        models["npz"]["classes"] == [str(k) for k in range(10)]
        and models["npz"]["pred_column"] == "y_pred"
    )
    route = fit_logits(
        network["logits"], network["labels"], network["embeddings"], scores=("sele",), seed=3
    )
    for model_kind in ("npz", "csv"):  # a model selected on either file applies to both
        for data_kind in ("npz", "csv"):
            out = tmp_path / f"{model_kind}_{data_kind}.csv"
            assert (
                cli.main(
                    [
                        "apply",
                        "--model",
                        str(network_selected[model_kind] / "model.json"),
                        "--data",
                        str(network[data_kind]),
                        "--out",
                        str(out),
                        "-q",
                    ]
                )
                == 0
            )
            decisions = pd.read_csv(out, dtype={"uncertainty": str})
            np.testing.assert_array_equal(
                decisions["uncertainty"].map(float).to_numpy(), route.uncertainty["sele"]
            )
            np.testing.assert_array_equal(
                decisions["y_pred"].to_numpy(), network["logits"].argmax(axis=1)
            )
    report = json.loads((network_selected["npz"] / "report.json").read_text())
    assert report["C"] == route.table["C"].iloc[-1]


def test_network_outputs_without_embeddings_learn_on_the_logits(network, tmp_path):
    np.savez(tmp_path / "logits.npz", logits=network["logits"], labels=network["labels"])
    assert (
        cli.main(
            [
                "select",
                "--data",
                str(tmp_path / "logits.npz"),
                "--target",
                "coverage=0.8",
                "--C",
                "1",
                "--out",
                str(tmp_path / "sel"),
                "-q",
            ]
        )
        == 0
    )
    model = json.loads((tmp_path / "sel" / "model.json").read_text())
    assert model["feature_columns"] == [f"logit_{j}" for j in range(10)]


def _network_csv(network, tmp_path, edit):
    frame = edit(pd.read_csv(network["csv"]))
    frame.to_csv(tmp_path / "bad.csv", index=False)
    return tmp_path / "bad.csv"


def _network_npz(network, tmp_path, **changes):
    arrays = {
        "logits": network["logits"],
        "labels": network["labels"],
        "embeddings": network["embeddings"],
    }
    arrays.update(changes)
    np.savez(tmp_path / "bad.npz", **{k: v for k, v in arrays.items() if v is not None})
    return tmp_path / "bad.npz"


def _changed(array, position, value):
    array = np.array(array, dtype=float, copy=True)
    array[position] = value
    return array


NETWORK_SELECT_ERRORS = {
    "csv_nan_logit": (
        lambda n, t: _network_csv(n, t, lambda f: _set(f, 4, "logit_3", np.nan)),
        ["bad.csv", "NaN", "'logit_3'", "row 5"],
    ),
    "csv_text_embedding": (
        lambda n, t: _network_csv(n, t, lambda f: _set(f, 7, "emb_2", "abc")),
        ["bad.csv", "non-numeric", "'abc'", "'emb_2'", "row 8"],
    ),
    "csv_label_out_of_range": (
        lambda n, t: _network_csv(n, t, lambda f: _set(f, 3, "label", 10)),
        ["bad.csv", "label 10 is not a class of the 10 logits (0..9)", "'label'", "row 4"],
    ),
    "csv_gap_in_logits": (
        lambda n, t: _network_csv(n, t, lambda f: f.drop(columns=["logit_4"])),
        ["bad.csv", "column logit_4 is missing"],
    ),
    "csv_also_predictions": (
        lambda n, t: _network_csv(n, t, lambda f: f.assign(y_pred=0)),
        ["bad.csv", "both logit columns", "'y_pred'"],
    ),
    "npz_inf_embedding": (
        lambda n, t: _network_npz(n, t, embeddings=_changed(n["embeddings"], (6, 1), np.inf)),
        ["bad.npz", "non-finite value inf", "array 'embeddings'", "index 6, column 1"],
    ),
    "npz_label_rows": (
        lambda n, t: _network_npz(n, t, labels=n["labels"][:-1]),
        ["bad.npz", "array 'labels'", "1296 rows, logits 1297"],
    ),
    "npz_embedding_rows": (
        lambda n, t: _network_npz(n, t, embeddings=n["embeddings"][:5]),
        ["bad.npz", "array 'embeddings'", "5 rows, logits 1297"],
    ),
    "npz_no_labels": (
        lambda n, t: _network_npz(n, t, labels=None),
        ["bad.npz", "missing column(s) ['labels']"],
    ),
    "npz_flat_logits": (
        lambda n, t: _network_npz(n, t, logits=n["logits"][:, 0]),
        ["bad.npz", "array 'logits'", "must be 2-D", "(1297,)"],
    ),
    "npz_huge_embedding": (
        lambda n, t: _network_npz(n, t, embeddings=_changed(n["embeddings"], (2, 3), 1e200)),
        ["bad.npz", "value 1e+200", "'emb_3'", "index 2", "out of range"],
    ),
}


@pytest.mark.parametrize("case", sorted(NETWORK_SELECT_ERRORS))
def test_network_outputs_errors_name_file_array_and_row(case, network, tmp_path, capsys):
    make, fragments = NETWORK_SELECT_ERRORS[case]
    data = make(network, tmp_path)
    out = tmp_path / "sel"
    status = cli.main(
        ["select", "--data", str(data), "--target", "coverage=0.8", "--out", str(out), "-q"]
    )
    err = capsys.readouterr().err.strip()
    assert status == 2 and len(err.splitlines()) == 1 and "Traceback" not in err
    for fragment in fragments:
        assert fragment in err, err
    assert not out.exists()


@pytest.mark.parametrize(
    "option, fragment",
    [
        (["--loss-column", "loss"], "--loss-column does not apply"),
        (["--loss", "mae"], "--loss mae does not apply"),
        (["--feature-columns", "emb_0"], "--feature-columns does not apply"),
        (["--pred-column", "pred"], "--pred-column pred does not apply"),
        (["--target", "tpr=0.8,fpr=0.3"], "not available for a network's outputs"),
    ],
)
def test_network_outputs_refuse_table_options(option, fragment, network, tmp_path, capsys):
    args = [
        "select",
        "--data",
        str(network["npz"]),
        "--target",
        "coverage=0.8",
        "--out",
        str(tmp_path / "s"),
        "-q",
    ]
    assert cli.main(args + option) == 2
    err = capsys.readouterr().err
    assert fragment in err and str(network["npz"]) in err
    assert option[0] == "--target" or "the prediction is the largest logit" in err


def test_apply_checks_the_network_outputs_against_the_model(
    network, network_selected, tmp_path, capsys
):
    model = str(network_selected["npz"] / "model.json")
    no_embeddings = _network_npz(network, tmp_path, embeddings=None, labels=None)
    assert (
        cli.main(
            [
                "apply",
                "--model",
                model,
                "--data",
                str(no_embeddings),
                "--out",
                str(tmp_path / "d.csv"),
                "-q",
            ]
        )
        == 2
    )
    err = capsys.readouterr().err
    assert (
        "bad.npz: the model reads 12 features emb_0 .. emb_11" in err
        and "10 logit_0 .. logit_9" in err
    )
    nan_logit = _network_csv(
        network, tmp_path, lambda f: _set(f.drop(columns=["label"]), 9, "logit_0", np.nan)
    )
    assert (
        cli.main(
            [
                "apply",
                "--model",
                model,
                "--data",
                str(nan_logit),
                "--out",
                str(tmp_path / "d.csv"),
                "-q",
            ]
        )
        == 2
    )
    assert "bad.csv: missing value (NaN) in column 'logit_0' at row 10" in capsys.readouterr().err
    assert not (tmp_path / "d.csv").exists()
    # a huge embedding value is rejected (the guard of every apply), the other rows decided as usual
    huge = _network_npz(
        network, tmp_path, embeddings=_changed(network["embeddings"], (2, 3), 1e200)
    )
    assert (
        cli.main(
            ["apply", "--model", model, "--data", str(huge), "--out", str(tmp_path / "d.csv"), "-q"]
        )
        == 0
    )
    decisions = pd.read_csv(tmp_path / "d.csv")
    assert decisions["accept"].iloc[2] == 0 and np.isinf(decisions["uncertainty"].iloc[2])


# --------------------------------------------------------------------------------------------
# The report's units, intervals and warnings (wine: 178 rows, 3 errors; an ordered table of 178 rows, 5 errors)
# --------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def wine(tmp_path_factory):
    return wine_table(str(tmp_path_factory.getbasetemp() / "wine"))


#: The seed of ``select`` on the ordered table, and the error rows: 5 of its 10 largest f0, interleaved.
ORDERED_SEED = 5
ORDERED_ERRORS = np.arange(168, 178, 2)


@pytest.fixture(scope="module")
def ordered(tmp_path_factory):
    """(CSV, rows accepted) of a table whose ``select --target coverage=0.8 --seed 5`` is known by construction.

    178 rows (wine's split sizes), one feature ``f0`` = 0..177 and one predicted class ``y_pred`` = 1; the
    labels ``y`` are 1 but on :data:`ORDERED_ERRORS`, 2, 0, 2, 0, 2 (so the labels span 0..2). The learned score
    is then ``w * f0 + b``, increasing in f0 for any ``w > 0``, which the errors at the top of f0 force: the fit's
    last bits cannot reorder the rows. coverage=0.8 sets the threshold at the calibration rows' 43rd smallest
    f0 of 53 (10 calibration rows lie above it, so the 10 largest f0, the errors among them, do too), hence
    accepts exactly the report rows below that f0, counted here from the seeded split, none of them an error,
    whatever the loss of the errors.
    """
    n = 178
    folder = tmp_path_factory.mktemp("ordered")
    y = np.ones(n, dtype=int)
    y[ORDERED_ERRORS] = [2, 0, 2, 0, 2]
    table = pd.DataFrame({"f0": np.arange(n, dtype=float), "y": y, "y_pred": np.ones(n, dtype=int)})
    table.to_csv(folder / "ordered.csv", index=False)
    parts = split_rows(n, seed=ORDERED_SEED)  # select's default fractions
    assert np.isin(ORDERED_ERRORS, parts["fit"]).any(), "the score must see an error to learn w > 0"
    calibration = np.sort(table["f0"].to_numpy()[parts["calibration"]])
    threshold = calibration[int(np.ceil(0.8 * calibration.size)) - 1]  # the 43rd of 53
    assert (
        threshold < ORDERED_ERRORS.min()
    )  # 10 calibration rows lie above it, so do the 10 largest f0
    n_accepted = int((table["f0"].to_numpy()[parts["report"]] < threshold).sum())
    assert n_accepted > 0
    return folder / "ordered.csv", n_accepted


def _select(data, out, target, seed, capsys, caplog):
    with caplog.at_level(logging.WARNING):
        status = cli.main(
            [
                "select",
                "--data",
                str(data),
                "--target",
                target,
                "--seed",
                str(seed),
                "--C",
                "0,1000",
                "--out",
                str(out),
                "-q",
            ]
        )
    captured = capsys.readouterr()
    assert status == 0, captured.err
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    return json.loads((out / "report.json").read_text()), captured.out, warnings


def test_risk_interval_without_an_error_is_in_percent(ordered, tmp_path, capsys, caplog):
    """No error among the accepted report rows: the upper bound is 100 x Wilson's, not Wilson's fraction. The
    ordered table makes the accepted rows, their number and their 0 errors known by construction (``ordered``)."""
    data, n = ordered
    report, out, _ = _select(data, tmp_path / "sel", "coverage=0.8", ORDERED_SEED, capsys, caplog)
    point = report["report"]
    assert point["n_accepted_expected"] == n and point["selective_risk"] == 0
    assert report["loss_bound"] == 100 and report["risk_unit"] == "%"
    wilson = sps.binomtest(0, n).proportion_ci(0.95, method="wilson")
    assert point["selective_risk_ci"] == pytest.approx([0.0, 100 * wilson.high], abs=1e-9)
    # Wilson's upper bound for 0 of n is z^2 / (n + z^2): about 12 % for some 30 rows, in percent
    z = sps.norm.ppf(0.975)
    assert 100 * wilson.high == pytest.approx(100 * z**2 / (n + z**2))
    # Clopper-Pearson's exact bound for 0 of n is (0.025)^(1/n) away from 1: the same scale, a little wider
    clopper_pearson = sps.binomtest(0, n).proportion_ci(0.95, method="exact").high
    assert (
        clopper_pearson == pytest.approx(1 - 0.025 ** (1 / n))
        and 5 < 100 * wilson.high < 100 * clopper_pearson
    )
    assert f"selective risk 0 [0, {100 * wilson.high:.4g}] %" in out
    assert (
        f"| selective risk (%) | 0 | [0, {100 * wilson.high:.4g}] |"
        in (tmp_path / "sel" / "report.md").read_text()
    )


def _monotone_table(path, seed, errors, f0=None):
    """A table whose learned score orders its rows by ``f0`` whatever the fit's last bits: one feature ``f0``
    (the row index unless given) and one predicted class make the score ``w * f0 + b``, and errors among the
    fit and validation rows' largest f0 force ``w > 0``. ``errors`` maps a part of ``split_rows(n, seed)``
    (select's split) to the positions, within that part's rows in order, that err besides. Returns the parts."""
    n = 178
    parts = split_rows(n, seed=seed)
    y = np.zeros(n, dtype=int)
    y[parts["fit"][-6::2]] = y[parts["validation"][-4::2]] = 1  # interleaved among their largest f0
    for part, positions in errors.items():
        y[parts[part][positions]] = 1
    f0 = np.arange(n, dtype=float) if f0 is None else f0
    pd.DataFrame({"f0": f0, "y": y, "y_pred": np.zeros(n, dtype=int)}).to_csv(path, index=False)
    return parts


def test_report_warns_on_a_missed_risk_target_in_the_wrong_unit(tmp_path, capsys, caplog):
    """By construction (``_monotone_table``): the calibration rows err only at their 3 largest f0, so risk=0.02
    accepts every calibration row below them; the report rows err at their 3 smallest f0, which are accepted
    first, so their selective risk's interval lies above 0.02 %."""
    data = tmp_path / "monotone.csv"
    _monotone_table(data, 0, {"calibration": slice(-3, None), "report": slice(0, 3)})
    report, out, warnings = _select(data, tmp_path / "sel", "risk=0.02", 0, capsys, caplog)
    point = report["report"]
    low, high = point["selective_risk_ci"]
    assert low > 0.02 and out.rstrip().endswith("%")
    # the estimator's wording (rejectopt._diagnostics), the target named as the command line wrote it
    assert (
        "--target risk=0.02: the risk of the 0/100 loss is in percent (an error costs 100), so this asks for at "
        "most 0.02 % errors among the accepted predictions; if you meant the fraction 0.02 (2 %), ask for "
        "--target risk=2"
    ) in warnings
    assert (
        f"the {report['rows']['report']} held-out report rows miss --target risk=0.02: their selective risk "
        f"{point['selective_risk']:.4g} % (95 % interval [{low:.4g}, {high:.4g}]) at coverage "
        f"{point['coverage']:.4g} lies above 0.02 % beyond its interval, against "
        f"{report['risk_full_coverage_report']:.4g} % when every row is accepted"
    ) in " ".join(warnings)


def test_report_warns_on_a_score_worse_than_random_and_a_tie_over_C(tmp_path, capsys, caplog):
    """Both by construction, whatever the fit's last bits: one feature f0 and one predicted class make the learned
    score w * f0 + b; the fit and validation rows err only among their largest f0, so w > 0 for either C and both
    order the validation rows alike (the same AuRC, above 0), while the report rows err at their 3 smallest f0,
    which the learned order accepts first (an AuRC above the random order's)."""
    n, seed = 178, 3
    parts = split_rows(
        n, seed=seed
    )  # select's split: default fractions, rows sorted, f0 = row index
    y = np.zeros(n, dtype=int)
    y[parts["fit"][-6::2]] = y[parts["validation"][-4::2]] = 1  # interleaved among their largest f0
    y[parts["report"][:3]] = 1
    data = tmp_path / "reversed.csv"
    pd.DataFrame(
        {"f0": np.arange(n, dtype=float), "y": y, "y_pred": np.zeros(n, dtype=int)}
    ).to_csv(data, index=False)
    report, _, warnings = _select(data, tmp_path / "sel", "coverage=0.8", seed, capsys, caplog)
    aurcs, val = report["aurc_report"], report["validation_aurc"]
    assert (
        aurcs["learned_score"] > aurcs["random_order"]
        and val["0.0"] == val["1000.0"] > 0
        and report["C"] == 1000
    )
    text = " ".join(warnings)
    assert (
        f"the learned score orders the report rows worse than random: AuRC {aurcs['learned_score']:.4g} % "
        f"against {aurcs['random_order']:.4g} % for a random order"
    ) in text
    assert (
        f"all 2 values of --C (0,1000) tie at validation AuRC {val['0.0']:.4g} %: C = 1000 was chosen by the "
        "tie-break"
    ) in text


def test_mae_and_loss_column_risks_carry_their_unit_and_bound(ordered, tmp_path, capsys, caplog):
    """The bound comes from the loss's definition: K - 1 = 2 for the MAE on labels 0..2, a declared --loss-bound
    for a loss column (else, with a warning, the file's largest loss). The ordered table rejects its error rows
    whatever their loss, so the accepted rows, their number and their 0 risk are known by construction."""
    data, n = ordered
    table = pd.read_csv(data)
    table["cost"] = 3.0 * (table["y"] != table["y_pred"])
    costs = tmp_path / "costs.csv"
    table.drop(columns=["y"]).to_csv(costs, index=False)
    wilson = sps.binomtest(0, n).proportion_ci(0.95, method="wilson").high
    cases = (
        (data, ["--loss", "mae"], 2.0, "MAE"),
        (costs, ["--loss-column", "cost"], 3.0, "(units of column cost)"),
        (costs, ["--loss-column", "cost", "--loss-bound", "10"], 10.0, "(units of column cost)"),
        (data, ["--loss", "mae", "--loss-bound", "4"], 4.0, "MAE"),
    )
    for k, (path, extra, bound, unit) in enumerate(cases):
        caplog.clear()
        with caplog.at_level(logging.WARNING):
            assert (
                cli.main(
                    [
                        "select",
                        "--data",
                        str(path),
                        "--target",
                        "coverage=0.8",
                        "--seed",
                        str(ORDERED_SEED),
                        "--C",
                        "0,1000",
                        "--out",
                        str(tmp_path / str(k)),
                        "-q",
                        *extra,
                    ]
                )
                == 0
            )
        report = json.loads((tmp_path / str(k) / "report.json").read_text())
        assert report["loss_bound"] == bound and report["risk_unit"] == unit
        assert report["loss_bound_source"] == ("labels", "data", "option", "option")[k]
        assert (
            report["report"]["n_accepted_expected"] == n and report["report"]["selective_risk"] == 0
        )
        assert report["report"]["selective_risk_ci"] == pytest.approx(
            [0.0, bound * wilson], abs=1e-9
        )
        assert ("--loss-bound not given" in caplog.text) == (k == 1)
        assert capsys.readouterr().out.rstrip().endswith(unit)


@pytest.mark.parametrize(
    "extra, fragments",
    [
        (
            ["--loss-column", "cost", "--loss-bound", "2"],
            ["costs.csv: loss 3 (column 'cost') at row", "exceeds --loss-bound 2"],
        ),
        (
            ["--loss", "mae", "--loss-bound", "0.5"],
            ["costs.csv: loss 1 (--loss mae) at row", "exceeds --loss-bound 0.5"],
        ),
        (
            ["--loss-bound", "100"],
            ["--loss-bound applies to --loss-column or --loss mae only", "zero_one"],
        ),
        (
            ["--loss-column", "cost", "--loss-bound", "nan"],
            ["--loss-bound must be a finite number > 0"],
        ),
    ],
)
def test_loss_bound_errors_name_the_option(wine, extra, fragments, tmp_path, capsys):
    table = pd.read_csv(wine)
    table["cost"] = 3.0 * (table["y"] != table["y_pred"])
    table.to_csv(tmp_path / "costs.csv", index=False)
    feature_columns = ",".join(f"f{j}" for j in range(13))
    status = cli.main(
        [
            "select",
            "--data",
            str(tmp_path / "costs.csv"),
            "--target",
            "coverage=0.8",
            "--out",
            str(tmp_path / "sel"),
            "--feature-columns",
            feature_columns,
            "-q",
            *extra,
        ]
    )
    err = capsys.readouterr().err
    assert status == 2 and all(f in err for f in fragments), err
    assert not (tmp_path / "sel").exists()


@pytest.mark.parametrize(
    "command, target, extra",
    [
        ("select", "coverage=0.8,confidence=0.9", ()),
        ("select", "risk=1", ("--confidence", "0.9")),
        ("validate", "risk=1", ("--confidence", "0.9")),
    ],
)
def test_a_certified_target_on_a_loss_column_needs_its_bound_declared(
    command, target, extra, wine, tmp_path, capsys
):
    """The file's largest loss is a property of the sample, not of the loss: a certificate resting on it
    could be too small. Refused before the data are read, naming --loss-bound and what B is."""
    table = pd.read_csv(wine)
    table["cost"] = 3.0 * (table["y"] != table["y_pred"])
    table.drop(columns=["y"]).to_csv(tmp_path / "costs.csv", index=False)
    status = cli.main(
        [
            command,
            "--data",
            str(tmp_path / "costs.csv"),
            "--target",
            target,
            "--loss-column",
            "cost",
            "--out",
            str(tmp_path / "out"),
            "-q",
            *extra,
        ]
    )
    err = capsys.readouterr().err
    assert status == 2 and not (tmp_path / "out").exists()
    target = target if not extra else f"{target},confidence=0.9"
    assert (
        f"rejectopt: error: --loss-column cost with the certified --target {target} needs --loss-bound B: B is the "
        "largest loss a prediction can have, by the loss's definition (e.g. the largest cost of your cost table), "
        "fixed before the rows are drawn; the certificate's bounds hold for losses in [0, B]. The file's largest "
        "loss is not taken: from the sample, it can lie below what new rows have"
    ) in err, err


def test_a_certified_target_on_the_mae_warns_that_its_bound_is_the_labels_span(
    wine, tmp_path, capsys, caplog
):
    """Wine's 3 classes all occur: B = 2 = K - 1, taken from the labels read, which the report says and a warning
    names (a missing extreme class would make it too small); --loss-bound 2 declares it and silences the warning."""
    for extra, source in (((), "labels"), (("--loss-bound", "2"), "option")):
        caplog.clear()
        out = tmp_path / source
        with caplog.at_level(logging.WARNING):
            assert (
                cli.main(
                    [
                        "select",
                        "--data",
                        str(wine),
                        "--target",
                        "coverage=0.8,confidence=0.9",
                        "--loss",
                        "mae",
                        "--score",
                        "reg",
                        "--C",
                        "0",
                        "--out",
                        str(out),
                        "-q",
                        *extra,
                    ]
                )
                == 0
            )
        report = json.loads((out / "report.json").read_text())
        assert (report["loss_bound"], report["loss_bound_source"]) == (2.0, source)
        assert json.loads((out / "model.json").read_text())["certificate"]["loss_bound"] == 2.0
        warned = (
            "--target coverage=0.8,confidence=0.9 with --loss mae: the certificate takes B = 2, the span of the "
            f"labels and predictions in {wine}, as the largest loss; it is the MAE's K - 1 only when the smallest "
            "and largest classes occur: pass --loss-bound K-1 if one may be missing"
        )
        assert (warned in caplog.text) == (source == "labels"), caplog.text
    capsys.readouterr()


def test_a_certified_target_records_the_declared_loss_bound(wine, tmp_path, capsys):
    """With --loss-bound the certificate rests on B, which report.json and report.md record with its source; a
    coverage target's risk bound is pointwise and said to be outside the guarantee."""
    table = pd.read_csv(wine)
    table["cost"] = 3.0 * (table["y"] != table["y_pred"])
    table.drop(columns=["y"]).to_csv(tmp_path / "costs.csv", index=False)
    out = tmp_path / "sel"
    assert (
        cli.main(
            [
                "select",
                "--data",
                str(tmp_path / "costs.csv"),
                "--target",
                "coverage=0.8,confidence=0.9",
                "--loss-column",
                "cost",
                "--loss-bound",
                "10",
                "--score",
                "reg",
                "--C",
                "0",
                "--out",
                str(out),
                "-q",
            ]
        )
        == 0
    )
    printed = capsys.readouterr().out
    report = json.loads((out / "report.json").read_text())
    certificate = report["certificate"]
    assert (report["loss_bound"], report["loss_bound_source"]) == (10.0, "option")
    assert json.loads((out / "model.json").read_text())["certificate"] == certificate
    assert certificate["loss_bound"] == 10.0
    markdown = (out / "report.md").read_text()
    unit = "(units of column cost)"
    assert (
        f"With probability at least 0.9 over the draw of the {certificate['n_calibration']} calibration rows, the "
        f"population's coverage is at least {certificate['coverage_bound']:.4g} (lower confidence bound). Not part "
        "of the guarantee: the accepted calibration rows give the selective risk an upper confidence bound of "
        f"{certificate['risk_bound']:.4g} {unit} at level 0.9, pointwise (as if the threshold had been fixed in "
        "advance)."
    ) in markdown, markdown
    assert printed.rstrip().endswith(
        f"; certified for the population with probability >= 0.9: coverage >= "
        f"{certificate['coverage_bound']:.4g} (risk <= {certificate['risk_bound']:.4g} "
        f"{unit} is a pointwise bound, not certified)"
    ), printed


def test_validate_names_its_uncertainty_column_on_a_networks_outputs(network, tmp_path, capsys):
    """The one feature validate reads is --uncertainty-column: the refusal names it, not --feature-columns."""
    status = cli.main(
        [
            "validate",
            "--data",
            str(network["csv"]),
            "--target",
            "coverage=0.8",
            "--confidence",
            "0.9",
            "--uncertainty-column",
            "emb_0",
            "--out",
            str(tmp_path / "v"),
            "-q",
        ]
    )
    err = capsys.readouterr().err
    assert status == 2 and not (tmp_path / "v").exists()
    assert (
        f"rejectopt: error: --uncertainty-column does not apply: {network['csv']} holds a network's outputs "
        "(logits)"
    ) in err, err


def test_apply_refuses_outputs_of_a_network_with_another_number_of_logits(
    network, network_selected, tmp_path, capsys
):
    """The model reads the embeddings, whose width says nothing of K: model.json records the logits' width."""
    model = json.loads((network_selected["npz"] / "model.json").read_text())
    assert model["format_version"] == 3 and model["n_logits"] == 10 and model["certificate"] is None
    data = tmp_path / "five.npz"
    np.savez(data, logits=network["logits"][:, :5], embeddings=network["embeddings"])
    status = cli.main(
        [
            "apply",
            "--model",
            str(network_selected["npz"] / "model.json"),
            "--data",
            str(data),
            "--out",
            str(tmp_path / "d.csv"),
            "-q",
        ]
    )
    err = capsys.readouterr().err
    assert (
        status == 2
        and (
            f"{data}: the network's outputs have 5 logits, the model was selected on 10 (model.json "
            "n_logits)"
        )
        in err
    ), err
    assert not (tmp_path / "d.csv").exists()


# --------------------------------------------------------------------------------------------
# Certified targets: --confidence, the certificate in model.json and the report, thresholds.csv
# --------------------------------------------------------------------------------------------
def test_certified_risk_target_records_its_guarantee_and_per_threshold_table(
    satellite, tmp_path, capsys
):
    paths = satellite[1]
    out = tmp_path / "sel"
    assert (
        cli.main(
            [
                "select",
                "--data",
                str(paths["given"]),
                "--target",
                "risk=5",
                "--confidence",
                "0.9",
                "--C",
                "1",
                "--seed",
                "1",
                "--out",
                str(out),
                "-q",
            ]
        )
        == 0
    )
    printed = capsys.readouterr().out
    model = json.loads((out / "model.json").read_text())
    report = json.loads((out / "report.json").read_text())
    certificate = model["certificate"]
    assert (
        model["target"] == {"kind": "risk", "value": 5, "confidence": 0.9}
        and report["certificate"] == certificate
    )
    assert (certificate["bound"], certificate["confidence"], certificate["method"]) == (
        5.0,
        0.9,
        "ltt",
    )
    assert (
        certificate["n_calibration"] == report["rows"]["calibration"] == 750
        and certificate["risk_bound"] == 5.0
    )
    assert (
        model["format_version"] == 3 and certificate["loss_bound"] == 100.0
    )  # B of the 0/100 loss
    coverage = f"{certificate['coverage_bound']:.4g}"
    # each bound is a theorem at its own level (Learn-then-Test, DKW): both at once are not claimed at 0.9
    assert printed.rstrip().endswith(
        f"; certified for the population with probability >= 0.9: risk <= 5 %; "
        f"separately, with probability >= 0.9: coverage >= {coverage} (each alone, not "
        "both at once)"
    ), printed
    markdown = (out / "report.md").read_text()
    assert (
        "With probability at least 0.9 over the draw of the 750 calibration rows, the population's selective risk "
        "is at most 5 % (the target). Separately, with probability at least 0.9 over the same draw, the "
        f"population's coverage is at least {coverage} (one-sided DKW lower bound, valid for a threshold chosen "
        "from the data). Each statement holds alone at its level; both at once are not guaranteed at 0.9. The "
        "risk bound rests on losses at most B = 100 (the loss's definition)."
    ) in markdown, markdown
    assert report["loss_bound"] == 100 and report["loss_bound_source"] == "definition"
    assert (
        "[thresholds.csv](thresholds.csv)" in markdown
        and report["thresholds_csv"] == "thresholds.csv"
    )
    # the table, recomputed from the uncertainties apply gives the calibration rows (split_rows, seed 1)
    assert (
        cli.main(
            [
                "apply",
                "--model",
                str(out / "model.json"),
                "--data",
                str(paths["given"]),
                "--out",
                str(tmp_path / "d.csv"),
                "-q",
            ]
        )
        == 0
    )
    given = pd.read_csv(paths["given"])
    # exact floats under pandas < 3 too (its default parser can be one ulp off): thresholds are compared below
    s = pd.read_csv(tmp_path / "d.csv", **EXACT_FLOATS)["uncertainty"].to_numpy()
    cal = split_rows(len(given), seed=1)["calibration"]
    loss, s = 100.0 * (given["y"] != given["y_pred"]).to_numpy()[cal], s[cal]
    table = pd.read_csv(out / "thresholds.csv")
    assert list(table.columns) == [
        "threshold",
        "n_accepted",
        "coverage",
        "empirical_risk",
        "upper_bound",
        "p_value",
    ]
    thresholds = np.unique(s)
    n_accepted = np.searchsorted(np.sort(s), thresholds, side="right")
    errors = np.array([(loss[s <= t] > 0).sum() for t in thresholds])
    np.testing.assert_allclose(table["threshold"], thresholds, rtol=1e-9)
    np.testing.assert_array_equal(table["n_accepted"], n_accepted)
    np.testing.assert_allclose(
        table["empirical_risk"], 100 * errors / n_accepted, rtol=1e-9, atol=1e-12
    )
    upper = np.where(
        errors < n_accepted,
        sps.beta.isf(0.1, errors + 1, np.maximum(n_accepted - errors, 1e-300)),
        1,
    )
    np.testing.assert_allclose(
        table["upper_bound"], 100 * upper, rtol=1e-8
    )  # Clopper-Pearson, one-sided
    np.testing.assert_allclose(
        table["p_value"], sps.binom.cdf(errors, n_accepted, 0.05), rtol=1e-8, atol=1e-12
    )
    selection = model["selection"]  # deterministic: accepts s <= t (accept_prob 1) or s < t (0)
    accepted = (
        thresholds <= selection["threshold"]
        if selection["accept_prob"] == 1
        else thresholds < selection["threshold"]
    )
    chosen = table[accepted].iloc[-1]
    assert chosen["upper_bound"] <= 5.0 and chosen["p_value"] <= 0.1  # the certified cut's own test


@pytest.mark.parametrize(
    "target, extra, fragment",
    [
        (
            "reject-cost=10",
            ["--confidence", "0.9"],
            "--confidence 0.9 with --target reject-cost=10:",
        ),
        (
            "risk=5,confidence=0.9",
            ["--confidence", "0.95"],
            "gives confidence 0.9 and --confidence 0.95: give it once",
        ),
        ("risk=5", ["--confidence", "1.5"], "--confidence 1.5 with --target risk=5:"),
    ],
)
def test_confidence_errors_name_the_option(target, extra, fragment, satellite, tmp_path, capsys):
    status = cli.main(
        [
            "select",
            "--data",
            str(satellite[1]["given"]),
            "--target",
            target,
            "--out",
            str(tmp_path / "sel"),
            "-q",
            *extra,
        ]
    )
    err = capsys.readouterr().err
    assert status == 2 and fragment in err and not (tmp_path / "sel").exists(), err


# --------------------------------------------------------------------------------------------
# validate: how often a certified target fails on the user's own rows
# --------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def digits(tmp_path_factory):
    return digits_table(str(tmp_path_factory.getbasetemp() / "digits"))


def _check_validity_outputs(out, repeats, n_rows, target_risk):
    assert sorted(p.name for p in out.iterdir()) == ["repeats.csv", "summary.csv", "validity.png"]
    draws = pd.read_csv(out / "repeats.csv")
    summary = pd.read_csv(out / "summary.csv").set_index("method")
    assert len(draws) == 2 * repeats and list(summary.index) == ["certified", "plug-in"]
    for method, rows in draws.groupby("method"):
        row = summary.loc[method]
        violations = int(rows["violated"].sum())
        assert (row["repeats"], row["n_rows"], row["violations"]) == (repeats, n_rows, violations)
        assert row["violation_rate"] == pytest.approx(violations / repeats) and row[
            "delta"
        ] == pytest.approx(0.1)
        # the violation flag is the population's risk above the target (an infeasible draw accepts nothing)
        np.testing.assert_array_equal(
            rows["violated"], rows["population_risk"].fillna(0) > target_risk
        )
        low = sps.beta.ppf(0.025, violations, repeats - violations + 1) if violations else 0.0
        high = (
            sps.beta.isf(0.025, violations + 1, repeats - violations)
            if violations < repeats
            else 1.0
        )
        assert (row["violation_low"], row["violation_high"]) == pytest.approx((low, high), rel=1e-8)
        # quantiles of the feasible draws only: an infeasible draw's coverage 0 is no fitted rule's
        feasible = rows[~rows["infeasible"]]
        assert row["feasible_draws"] == len(feasible)
        for name, column in (("coverage", "population_coverage"), ("risk", "population_risk")):
            expected = np.quantile(feasible[column].dropna(), [0.05, 0.5, 0.95])
            got = [row[f"{name}_q{q}"] for q in ("05", "50", "95")]
            np.testing.assert_allclose(got, expected, rtol=1e-8)
    return summary


def test_validate_on_a_users_table_counts_violations_of_both_targets(digits, tmp_path, capsys):
    """Digits with a standardised LR: the learned REG score (held-out rows) and the user's own MCP (all rows)."""
    out = tmp_path / "learned"
    assert (
        cli.main(
            [
                "validate",
                "--data",
                str(digits),
                "--target",
                "risk=3",
                "--confidence",
                "0.9",
                "--repeats",
                "60",
                "--score",
                "reg",
                "--C",
                "1",
                "--out",
                str(out),
                "-q",
            ]
        )
        == 0
    )
    printed = capsys.readouterr().out.splitlines()
    held_out = sum(split_rows(1797)[part].size for part in ("calibration", "report"))
    summary = _check_validity_outputs(out, 60, held_out, 3.0)
    assert printed[1] == (
        f"--target risk=3,confidence=0.9: 60 draws of {summary.loc['certified', 'n_calibration']} "
        f"calibration rows from the {held_out} held-out rows of {digits} taken as the population"
    )
    certified = summary.loc["certified"]
    infeasible = 60 - int(certified["feasible_draws"])
    assert (
        infeasible > 0
    )  # the share of infeasible draws comes first, the quantiles are the feasible draws'
    quantiles = {
        name: "/".join(f"{certified[f'{name}_q{q}']:.4g}" for q in ("05", "50", "95"))
        for name in ("coverage", "risk")
    }
    assert printed[2] == (
        f"certified: infeasible (nothing accepted) in {infeasible} of 60 draws = "
        f"{infeasible / 60:.1%}; violated {int(certified['violations'])} of 60 draws = "
        f"{certified['violation_rate']:.1%} [{certified['violation_low']:.1%}, "
        f"{certified['violation_high']:.1%}] (delta 0.1); population coverage {quantiles['coverage']}, "
        f"selective risk {quantiles['risk']} % (quantiles 0.05, 0.5, 0.95 of the "
        f"{60 - infeasible} feasible draws)"
    )
    assert certified["violation_low"] <= 0.1 < summary.loc["plug-in", "violation_high"]
    out = tmp_path / "mcp"
    assert (
        cli.main(
            [
                "validate",
                "--data",
                str(digits),
                "--target",
                "risk=3",
                "--confidence",
                "0.9",
                "--repeats",
                "60",
                "--uncertainty-column",
                "mcp",
                "--out",
                str(out),
                "-q",
            ]
        )
        == 0
    )
    summary = _check_validity_outputs(out, 60, 1797, 3.0)
    assert "calibration rows from the 1797 rows of" in capsys.readouterr().out
    assert summary.loc["certified", "violation_low"] <= 0.1


def test_validate_of_a_hopeless_target_puts_the_infeasible_draws_first_and_no_quantiles(
    digits, tmp_path, capsys
):
    """A certified risk of 0.1 % on 1,797 digits cannot be certified on any draw: every draw accepts nothing, so
    there is no population coverage or risk to give quantiles of (they are empty in summary.csv)."""
    out = tmp_path / "v"
    assert (
        cli.main(
            [
                "validate",
                "--data",
                str(digits),
                "--target",
                "risk=0.1",
                "--confidence",
                "0.9",
                "--repeats",
                "10",
                "--uncertainty-column",
                "mcp",
                "--out",
                str(out),
                "-q",
            ]
        )
        == 0
    )
    printed = capsys.readouterr().out.splitlines()
    summary = pd.read_csv(out / "summary.csv").set_index("method")
    certified = summary.loc["certified"]
    assert certified["feasible_draws"] == 0 and certified["infeasible_rate"] == 1
    assert (
        certified[[f"{name}_q{q}" for name in ("coverage", "risk") for q in ("05", "50", "95")]]
        .isna()
        .all()
    )
    high = sps.beta.isf(0.025, 1, 10)  # Clopper-Pearson's upper bound of 0 of 10
    assert printed[2] == (
        "certified: infeasible (nothing accepted) in 10 of 10 draws = 100.0%; violated 0 of 10 draws "
        f"= 0.0% [0.0%, {high:.1%}] (delta 0.1); no draw accepted anything: no population coverage "
        "or risk to report"
    )


def test_validate_progress_is_logged_on_long_runs_only(caplog):
    """Silent for the first PROGRESS_SECONDS; after them a line at each new tenth, or every PROGRESS_SECONDS."""
    from rejectopt.cli import _validate

    now = [0.0]
    progress = _validate._Progress(clock=lambda: now[0])
    with caplog.at_level(logging.INFO, logger="rejectopt.cli._validate"):
        for done, at in (
            (10, 1.0),
            (60, 4.0),
            (61, 5.0),
            (62, 6.0),
            (70, 7.0),
            (71, 20.0),
            (100, 21.0),
        ):
            now[0] = at
            progress(done, 100)
    assert [r.getMessage() for r in caplog.records] == [
        "validate: draw 61 of 100 (61 %), 5 s",
        "validate: draw 70 of 100 (70 %), 7 s",
        "validate: draw 71 of 100 (71 %), 20 s",
        "validate: draw 100 of 100 (100 %), 21 s",
    ]


def test_validate_logs_its_progress_through_the_draws(
    digits, tmp_path, capsys, caplog, monkeypatch
):
    """With PROGRESS_SECONDS at 0 every draw is 'long': one line per draw, to the logger (stderr), not stdout."""
    from rejectopt.cli import _validate

    monkeypatch.setattr(_validate, "PROGRESS_SECONDS", 0.0)
    with caplog.at_level(logging.INFO, logger="rejectopt.cli._validate"):
        assert (
            cli.main(
                [
                    "validate",
                    "--data",
                    str(digits),
                    "--target",
                    "risk=3",
                    "--confidence",
                    "0.9",
                    "--repeats",
                    "10",
                    "--uncertainty-column",
                    "mcp",
                    "--out",
                    str(tmp_path / "v"),
                ]
            )
            == 0
        )
    lines = [r.getMessage() for r in caplog.records if r.getMessage().startswith("validate: draw")]
    assert [line.split(",")[0] for line in lines] == [
        f"validate: draw {k} of 10 ({10 * k} %)" for k in range(1, 11)
    ]
    assert "validate: draw" not in capsys.readouterr().out


@pytest.mark.parametrize(
    "extra, fragment",
    [
        (
            ["--target", "reject-cost=10", "--confidence", "0.9"],
            "--confidence 0.9 with --target reject-cost=10",
        ),
        (
            ["--target", "risk=3", "--confidence", "0.9", "--uncertainty-column", "y"],
            "--uncertainty-column 'y' is the label column (--label-column, default y): the uncertainty "
            "score needs a column "
            "of its own: your score of each row (larger = less certain)",
        ),
        (
            ["--target", "risk=3", "--confidence", "0.9", "--uncertainty-column", "y_pred"],
            "--uncertainty-column 'y_pred' is the prediction column (--pred-column)",
        ),
        (
            ["--target", "risk=3", "--confidence", "0.9", "--pred-column", "y"],
            "--pred-column 'y' is the label column (--label-column, default y): the predicted class "
            "and the true label need "
            "columns of their own (read from one column, every prediction would be right and every loss 0)",
        ),
        (["--target", "risk=3"], "the following arguments are required: --confidence"),
        (
            ["--target", "risk=3", "--confidence", "0.9", "--uncertainty-column", "nope"],
            "missing column(s) ['nope']",
        ),
        (
            ["--target", "risk=3", "--confidence", "0.9", "--repeats", "0"],
            "--repeats: must be a positive integer",
        ),
    ],
)
def test_validate_errors_name_the_option(extra, fragment, digits, tmp_path, capsys):
    try:
        status = cli.main(
            ["validate", "--data", str(digits), "--out", str(tmp_path / "v"), "-q", *extra]
        )
    except SystemExit as exit_:
        status = exit_.code
    err = capsys.readouterr().err
    assert status == 2 and fragment in err and not (tmp_path / "v").exists(), err


def test_certified_tpr_fpr_target_round_trips_through_model_json(tmp_path, capsys):
    """300 ID rows (f0 = 0..299, errors interleaved among the largest) and 200 OOD rows beyond them (f0 = 1000..1199).
    One feature and one predicted class make the learned score w * f0 + b with w > 0 (the ID errors force it), so
    it ranks every OOD row above every ID row whatever the fit's last bits: the threshold certifying TPR >= 0.8
    accepts no OOD row, and 0 of the 120 OOD calibration rows bound the FPR near 0.025, so the target is met."""
    n_id, n_ood = 300, 200
    is_ood = np.arange(n_id + n_ood) >= n_id
    y = np.zeros(n_id + n_ood, dtype=int)
    y[n_id - 20 : n_id : 2] = 1  # 10 ID errors
    y[is_ood] = -1
    table = pd.DataFrame(
        {
            "f0": np.where(is_ood, 700.0, 0.0) + np.arange(n_id + n_ood),
            "y": y,
            "y_pred": 0,
            "is_ood": is_ood.astype(int),
        }
    )
    table.to_csv(tmp_path / "mixed.csv", index=False)
    out = tmp_path / "sel"
    assert (
        cli.main(
            [
                "select",
                "--data",
                str(tmp_path / "mixed.csv"),
                "--target",
                "tpr=0.8,fpr=0.3",
                "--confidence",
                "0.9",
                "--C",
                "1",
                "--out",
                str(out),
                "-q",
            ]
        )
        == 0
    )
    printed = capsys.readouterr().out
    model = json.loads((out / "model.json").read_text())
    certificate = model["certificate"]
    assert (
        model["target"]["confidence"] == 0.9
        and certificate["method"] == "order-statistic+clopper-pearson"
    )
    assert (
        certificate["bound"] <= 0.3
        and certificate["coverage_bound"] >= 0.8
        and certificate["risk_bound"] is None
    )
    assert certificate["loss_bound"] is None  # TPR and FPR bounds rest on no loss
    # one statement of both bounds: the union bound at delta / 2 each makes it a theorem at 0.9
    assert printed.rstrip().endswith(
        f"certified for the population with probability >= 0.9: FPR <= "
        f"{certificate['bound']:.4g} and TPR >= {certificate['coverage_bound']:.4g} "
        "(both at once)"
    )
    assert not (
        out / "thresholds.csv"
    ).exists()  # the per-threshold table is that of a risk or coverage target
    assert (
        cli.main(
            [
                "apply",
                "--model",
                str(out / "model.json"),
                "--data",
                str(tmp_path / "mixed.csv"),
                "--out",
                str(tmp_path / "d.csv"),
                "-q",
            ]
        )
        == 0
    )
    decisions = pd.read_csv(
        tmp_path / "d.csv", float_precision="round_trip"
    )  # the threshold row exactly, on every pandas
    np.testing.assert_array_equal(
        decisions["accept"],
        decisions["uncertainty"] < model["selection"]["threshold"]
        if model["selection"]["accept_prob"] == 0
        else decisions["uncertainty"] <= model["selection"]["threshold"],
    )


def test_a_certified_risk_at_the_loss_bound_is_bad_input(wine, tmp_path, capsys):
    """Any selection meets a risk of 100 % and none certifies it: refused before anything is fitted."""
    status = cli.main(
        [
            "select",
            "--data",
            str(wine),
            "--target",
            "risk=100,confidence=0.9",
            "--out",
            str(tmp_path / "sel"),
            "-q",
        ]
    )
    assert status == 2
    assert (
        "--target risk=100,confidence=0.9: a certified risk must lie below the largest loss a prediction can "
        "have, 100"
    ) in capsys.readouterr().err
    assert not (tmp_path / "sel").exists()


def test_report_warns_on_a_missed_coverage_but_not_above_a_certified_one(tmp_path, capsys, caplog):
    """By construction (``_monotone_table``): the report rows' f0 lie below every other row's, so any threshold
    the calibration rows give accepts all of them, a coverage above 0.8 beyond its interval."""
    data = tmp_path / "monotone.csv"
    parts = split_rows(178, seed=0)
    f0 = np.arange(178, dtype=float)
    f0[parts["report"]] = -1.0 - np.arange(parts["report"].size)
    _monotone_table(data, 0, {}, f0=f0)
    report, _, warnings = _select(data, tmp_path / "plug-in", "coverage=0.8", 0, capsys, caplog)
    assert report["report"]["coverage"] == 1.0
    low, high = report["report"]["coverage_ci"]
    assert (
        low > 0.8
    )  # more accepted than asked: the plug-in target is a coverage of 0.8, not at least 0.8
    assert (
        f"the {report['rows']['report']} held-out report rows miss --target coverage=0.8: their coverage "
        f"{report['report']['coverage']:.4g} lies outside 0.8 beyond its 95 % interval [{low:.4g}, {high:.4g}]"
    ) in warnings
    caplog.clear()
    report, _, warnings = _select(
        data, tmp_path / "certified", "coverage=0.8,confidence=0.9", 0, capsys, caplog
    )
    assert (
        report["report"]["coverage_ci"][0] > 0.8 and report["certificate"]["coverage_bound"] >= 0.8
    )
    assert not any("miss" in w for w in warnings)  # a certified coverage is a lower bound


# --------------------------------------------------------------------------------------------
# SELE's memory budget; the class-shared scores read a network's logits, not its embeddings
# --------------------------------------------------------------------------------------------
MEMORY_CASES = {  # command, data, extra options, the remedies the message offers
    "select_table": (
        "select",
        "wine",
        ["--target", "coverage=0.8"],
        ["--score reg (no per-class preconditioner)", "fewer features (--feature-columns)"],
    ),
    "validate_table": (
        "validate",
        "wine",
        ["--target", "risk=3", "--confidence", "0.9"],
        ["--score reg (no per-class preconditioner)", "fewer features (--feature-columns)"],
    ),
    "select_network": (
        "select",
        "network",
        ["--target", "coverage=0.8"],
        [
            "--score reg or reg_shared or sele_shared (no per-class preconditioner; the _shared ones "
            "learn one weight vector on class-agnostic features of the logits)"
        ],
    ),
}


@pytest.mark.parametrize("case", sorted(MEMORY_CASES))
def test_sele_over_its_memory_budget_exits_2_naming_the_file_and_the_alternatives(
    case, wine, network, tmp_path, capsys, monkeypatch
):
    """A budget of 100 kB refuses SELE's first fit (on the fit rows) before it allocates: one line, no output."""
    from rejectopt.scores._sele import estimate_fit_bytes

    command, which, extra, remedies = MEMORY_CASES[case]
    data = wine if which == "wine" else network["npz"]
    n, d, K = (178, 13, 3) if which == "wine" else (1297, 12, 10)
    monkeypatch.setenv("REJECTOPT_SELE_MEMORY_BUDGET", "1e5")
    out = tmp_path / "out"
    status = cli.main(
        [command, "--data", str(data), "--score", "sele", "--out", str(out), "-q", *extra]
    )
    err = capsys.readouterr().err.strip()
    assert status == 2 and len(err.splitlines()) == 1 and "Traceback" not in err, err
    n_fit = split_rows(n)["fit"].size
    shape_only = estimate_fit_bytes(
        n_fit, d, K, 500, "float32", 1
    )  # the gate counts the pairs of the actual losses
    stated = float(err.partition("would need about ")[2].partition(" MiB")[0])
    assert 0.9 * shape_only / 2**20 <= stated <= shape_only / 2**20 + 0.05, err
    assert err.startswith(
        f"rejectopt: error: {data}: --score sele would need about {stated:.1f} MiB of memory to fit "
        f"{n_fit} rows of {d} features for {K} predicted class(es), over the budget of 1e+05 bytes "
        "($REJECTOPT_SELE_MEMORY_BUDGET=1e5): refused before allocating, nothing written. Use "
    ), err
    for remedy in remedies:
        assert remedy in err, err
    assert err.endswith("or raise $REJECTOPT_SELE_MEMORY_BUDGET (bytes)")
    assert not out.exists()
    # a budget that is no number is the user's input too, refused before the data are read
    monkeypatch.setenv("REJECTOPT_SELE_MEMORY_BUDGET", "lots")
    assert (
        cli.main([command, "--data", str(data), "--score", "sele", "--out", str(out), "-q", *extra])
        == 2
    )
    assert capsys.readouterr().err == (
        "rejectopt: error: $REJECTOPT_SELE_MEMORY_BUDGET must be a number of bytes > 0, got "
        "'lots'\n"
    )
    assert not out.exists()


def test_class_shared_score_reads_the_logits_of_a_file_with_embeddings(network, tmp_path):
    """``select --score sele_shared`` on logits + embeddings learns what it learns on the logits alone, and its model
    (feature columns logit_*) applies to either file, NPZ or CSV, as :func:`rejectopt.logits.fit_logits` fits it."""
    logits_only = tmp_path / "logits.npz"
    np.savez(logits_only, logits=network["logits"], labels=network["labels"])
    models = {}
    for name, data in (("both", network["npz"]), ("logits", logits_only)):
        assert (
            cli.main(
                [
                    "select",
                    "--data",
                    str(data),
                    "--target",
                    "coverage=0.8",
                    "--score",
                    "sele_shared",
                    "--C",
                    "1,10",
                    "--seed",
                    "3",
                    "--out",
                    str(tmp_path / name),
                    "-q",
                ]
            )
            == 0
        )
        models[name] = json.loads((tmp_path / name / "model.json").read_text())
    assert models["both"]["feature_columns"] == [f"logit_{j}" for j in range(10)]
    assert models["both"] == models["logits"]
    route = fit_logits(
        network["logits"],
        network["labels"],
        network["embeddings"],
        scores="sele_shared",
        baselines=(),
        post_hoc=(),
        C_grid=(1, 10),
        seed=3,
    )
    assert route.table["features"].tolist() == ["logits"]
    uncertainties = []
    for data in (network["npz"], network["csv"], logits_only):
        out = tmp_path / f"decisions_{data.stem}_{data.suffix[1:]}.csv"
        assert (
            cli.main(
                [
                    "apply",
                    "--model",
                    str(tmp_path / "both" / "model.json"),
                    "--data",
                    str(data),
                    "--out",
                    str(out),
                    "-q",
                ]
            )
            == 0
        )
        uncertainties.append(
            pd.read_csv(out, dtype={"uncertainty": str})["uncertainty"].map(float).to_numpy()
        )
    np.testing.assert_array_equal(
        uncertainties[0], uncertainties[2]
    )  # embeddings or not: the same logits read
    np.testing.assert_array_equal(
        uncertainties[1], uncertainties[2]
    )  # the CSV's logits are the NPZ's (%.17g)
    np.testing.assert_allclose(
        uncertainties[0], route.uncertainty["sele_shared"], rtol=1e-12, atol=1e-12
    )


# --------------------------------------------------------------------------------------------
# --figure-format: the figures also as vector PDF / SVG, as the pipeline's config figure_formats
# --------------------------------------------------------------------------------------------
def test_select_writes_its_figure_in_every_figure_format_with_the_same_bytes_twice(
    wine, tmp_path, capsys
):
    """rc_curve.png is always written (the same bytes as without the option); PDF and SVG beside it are
    vector graphics with no date, so a second run gives the same bytes."""
    args = ["select", "--data", str(wine), "--target", "coverage=0.8", "--C", "0,1000", "-q"]
    assert cli.main([*args, "--out", str(tmp_path / "png")]) == 0
    for run in ("a", "b"):
        assert (
            cli.main(
                [
                    *args,
                    "--out",
                    str(tmp_path / run),
                    "--figure-format",
                    "pdf",
                    "--figure-format",
                    "svg",
                    "--figure-format",
                    "png",
                ]
            )
            == 0
        )
    printed = capsys.readouterr().out
    assert (
        "wrote model.json, report.json, report.md, rc_curve.png, rc_curve.pdf, rc_curve.svg, thresholds.csv"
        in printed
    )
    a, b = tmp_path / "a", tmp_path / "b"
    assert sorted(p.name for p in a.iterdir()) == [
        "model.json",
        "rc_curve.pdf",
        "rc_curve.png",
        "rc_curve.svg",
        "report.json",
        "report.md",
        "thresholds.csv",
    ]
    assert (a / "rc_curve.png").read_bytes() == (tmp_path / "png" / "rc_curve.png").read_bytes()
    pdf, svg = (a / "rc_curve.pdf").read_bytes(), (a / "rc_curve.svg").read_text()
    assert (
        pdf.startswith(b"%PDF-") and b"/CreationDate" not in pdf and b"/Subtype /Image" not in pdf
    )
    assert (
        svg.lstrip().startswith("<?xml")
        and "<dc:date>" not in svg
        and "<path " in svg
        and "<image" not in svg
    )
    for name in ("rc_curve.pdf", "rc_curve.svg"):
        assert (a / name).read_bytes() == (b / name).read_bytes(), name
    # an existing figure in a further format is an output like the others: kept without --force
    status = cli.main([*args, "--out", str(a), "--figure-format", "svg"])
    assert (
        status == 2
        and "already holds model.json, report.json, report.md, rc_curve.png, rc_curve.svg, "
        "thresholds.csv; pass --force"
        in capsys.readouterr().err
    )


def test_validate_writes_its_figure_in_the_figure_formats(digits, tmp_path, capsys):
    assert (
        cli.main(
            [
                "validate",
                "--data",
                str(digits),
                "--target",
                "risk=3",
                "--confidence",
                "0.9",
                "--repeats",
                "20",
                "--uncertainty-column",
                "mcp",
                "--out",
                str(tmp_path / "v"),
                "--figure-format",
                "pdf",
                "-q",
            ]
        )
        == 0
    )
    assert sorted(p.name for p in (tmp_path / "v").iterdir()) == [
        "repeats.csv",
        "summary.csv",
        "validity.pdf",
        "validity.png",
    ]
    assert (tmp_path / "v" / "validity.pdf").read_bytes().startswith(b"%PDF-")
    assert (
        "wrote repeats.csv, summary.csv, validity.png, validity.pdf to" in capsys.readouterr().out
    )


@pytest.mark.parametrize("command", ["select", "validate"])
def test_an_unknown_figure_format_is_refused_by_argparse(command, tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_:
        cli.main(
            [
                command,
                "--data",
                "x.csv",
                "--target",
                "risk=3",
                "--confidence",
                "0.9",
                "--out",
                str(tmp_path / "o"),
                "--figure-format",
                "jpg",
            ]
        )
    assert exit_.value.code == 2 and not (tmp_path / "o").exists()
    assert (
        f"rejectopt {command}: error: argument --figure-format: invalid choice: 'jpg' (choose from 'png', "
        "'pdf', 'svg')"
    ) in capsys.readouterr().err
    with pytest.raises(SystemExit):
        cli.main(
            [
                "apply",
                "--model",
                "m.json",
                "--data",
                "x.csv",
                "--out",
                "d.csv",
                "--figure-format",
                "pdf",
            ]
        )
    assert (
        "unrecognized arguments: --figure-format pdf" in capsys.readouterr().err
    )  # apply draws no figure


# --------------------------------------------------------------------------------------------
# What the report and the printed line guarantee: each "with probability at least" is a theorem
# --------------------------------------------------------------------------------------------
#: The population of the simulations: u ~ U(0, 1), P(error | u) = 0.05 + 0.4 u, 0/100 loss. The cut
#: {u <= t} has coverage t and selective risk 100 (0.05 + 0.2 t) % (the mean of the error rate below t).
DELTA, DRAWS = 0.1, 1000


def _population_truth(threshold):
    t = np.clip(threshold, 0.0, 1.0)
    return {"coverage": t, "risk": 100 * (0.05 + 0.2 * t)}


def _failures(statements, truth):
    """Per statement, the share of draws where one of its bounds fails on the population (vectorised over draws)."""

    def holds(quantity, relation, bound):
        return truth[quantity] <= bound if relation == "<=" else truth[quantity] >= bound

    return [
        1.0 - np.mean(np.logical_and.reduce([holds(*bound) for bound in statement["bounds"]]))
        for statement in statements
    ]


@pytest.mark.parametrize("n", [500, 2000])
def test_each_printed_statement_of_a_certified_coverage_holds_at_its_level(n):
    """1,000 calibration draws of the known population: each statement the report prints for a certified coverage
    fails in at most delta + 3 sigma of the draws; the joint "risk <= R and coverage >= C" it printed before fails
    in about 18 % (n = 500) and 21 % (n = 2,000) against the promised 10 %, which the simulation detects."""
    from rejectopt.cli._report import guarantee_statements
    from rejectopt.targets import Target

    rng = np.random.default_rng(n)
    u = rng.random((DRAWS, n))
    loss = 100.0 * (rng.random((DRAWS, n)) < 0.05 + 0.4 * u)
    target = Target("coverage", 0.8, confidence=1 - DELTA)
    # the certified cut is the k-th smallest score, k fixed by n, w and delta; its risk bound is the one-sided
    # Clopper-Pearson bound of the errors among the k accepted rows: computed for all draws at once, and checked
    # against the library's own fit on a few
    first = target.fit(loss[0], u[0])
    k = int(np.searchsorted(np.sort(u[0]), first.threshold, side="right"))
    order = np.sort(u, axis=1)
    threshold = order[:, k - 1]
    errors = ((u <= threshold[:, None]) & (loss > 0)).sum(axis=1)
    certificate = {
        "bound": first.bound,
        "confidence": 1 - DELTA,
        "n_calibration": n,
        "method": "order-statistic",
        "coverage_bound": first.coverage_bound,
        "risk_bound": 100
        * np.where(errors < k, sps.beta.isf(DELTA, errors + 1, np.maximum(k - errors, 1)), 1.0),
    }
    for i in range(5):
        selection = target.fit(loss[i], u[i])
        assert (
            selection.threshold == threshold[i] and selection.coverage_bound == first.coverage_bound
        )
        assert selection.risk_bound == pytest.approx(certificate["risk_bound"][i], rel=1e-9)
    report = {"target": target.to_dict(), "certificate": certificate, "risk_unit": "%"}
    statements = guarantee_statements(report)
    assert [s["bounds"][0][:2] for s in statements] == [
        ("coverage", ">=")
    ]  # the risk bound is not certified
    truth = _population_truth(threshold)
    sigma = np.sqrt(DELTA * (1 - DELTA) / DRAWS)
    for rate in _failures(statements, truth):
        assert rate <= DELTA + 3 * sigma, rate
    joint = [
        {
            "level": 1 - DELTA,
            "bounds": [
                ("coverage", ">=", certificate["coverage_bound"]),
                ("risk", "<=", certificate["risk_bound"]),
            ],
        }
    ]
    assert _failures(joint, truth)[0] > DELTA + 3 * sigma  # the wording it replaces: not a theorem


@pytest.mark.slow
@pytest.mark.parametrize("n", [500, 2000])
def test_each_printed_statement_of_a_certified_risk_holds_at_its_level(n):
    """The same population and draws for a certified risk of 20 % (Learn-then-Test, a few seconds): the risk
    statement and, alone, the coverage's DKW statement each fail in at most delta + 3 sigma of the draws. A draw
    that cannot certify is refused (select exits 2): it states nothing, and counts as no failure."""
    from rejectopt.cli._report import guarantee_statements
    from rejectopt.exceptions import InfeasibleTargetError
    from rejectopt.targets import Target

    rng = np.random.default_rng(n + 1)
    target = Target("risk", 20, confidence=1 - DELTA)
    thresholds, risk_bounds, coverage_bounds = [], [], []
    for _ in range(DRAWS):
        u = rng.random(n)
        try:
            selection = target.fit(100.0 * (rng.random(n) < 0.05 + 0.4 * u), u)
        except InfeasibleTargetError:
            continue
        thresholds.append(
            selection.threshold
        )  # {u < t} or {u <= t}: the same coverage, u is continuous
        risk_bounds.append(selection.risk_bound)
        coverage_bounds.append(selection.coverage_bound)
    assert len(thresholds) > DRAWS / 2  # most draws certify: the check is of statements made
    certificate = {
        "bound": 20.0,
        "confidence": 1 - DELTA,
        "n_calibration": n,
        "method": "ltt",
        "risk_bound": np.array(risk_bounds),
        "coverage_bound": np.array(coverage_bounds),
    }
    statements = guarantee_statements(
        {"target": target.to_dict(), "certificate": certificate, "risk_unit": "%"}
    )
    assert [s["bounds"][0][:2] for s in statements] == [("risk", "<="), ("coverage", ">=")]
    sigma = np.sqrt(DELTA * (1 - DELTA) / DRAWS)
    for rate in _failures(statements, _population_truth(np.array(thresholds))):
        assert rate * len(thresholds) / DRAWS <= DELTA + 3 * sigma, rate


def test_the_printed_statement_of_a_release_gate_holds_at_its_level():
    """1,000 calibration draws of n = 1,000 from the known population, gate risk <= 20 % and coverage >= 0.4 at
    0.9: the report states ONE sentence with both bounds at 0.9 (the gate theorem), and it fails (either bound
    missed by the population) in at most delta + 3 sigma of the draws. The good cuts are t in [0.4, 0.75] (risk
    100 (0.05 + 0.2 t) <= 20); a refused draw states nothing and counts as no failure, as select exits 2."""
    from rejectopt.cli._report import guarantee_lines, guarantee_statements
    from rejectopt.exceptions import InfeasibleTargetError
    from rejectopt.model import gate_statement
    from rejectopt.targets import Target

    n = 1000
    rng = np.random.default_rng(7)
    target = Target("risk", 20, confidence=1 - DELTA, min_coverage=0.4)
    thresholds, report = [], None
    for _ in range(DRAWS):
        u = rng.random(n)
        try:
            selection = target.fit(100.0 * (rng.random(n) < 0.05 + 0.4 * u), u)
        except InfeasibleTargetError:
            continue
        thresholds.append(selection.threshold)
        if report is None:
            report = {
                "target": target.to_dict(),
                "certificate": selection.certificate,
                "risk_unit": "%",
                "loss_bound": 100.0,
            }
    assert len(thresholds) > DRAWS / 2  # most draws grant: the check is of statements made
    statements = guarantee_statements(report)
    assert statements == [
        {"level": 1 - DELTA, "bounds": [("risk", "<=", 20.0), ("coverage", ">=", 0.4)]}
    ]
    text = " ".join(guarantee_lines(report))
    assert gate_statement(report["certificate"], "%") in text
    assert text.count("probability at least") == 1 and "Separately" not in text
    sigma = np.sqrt(DELTA * (1 - DELTA) / DRAWS)
    (rate,) = _failures(statements, _population_truth(np.array(thresholds)))
    assert rate * len(thresholds) / DRAWS <= DELTA + 3 * sigma, rate


#: Per-group populations: group "a" (and "c") as above; group "b" has u = V^2, V ~ U(0, 1), so the cut
#: {u <= t} has coverage sqrt(t) and selective risk 100 (0.05 + 0.4 t / 3) % (the mean of V^2 below sqrt(t)).
#: Shares 0.5, 0.49 and 0.01: "c" has about 10 rows of 1,000, too few to certify a risk on its own.
GROUP_SHARES = {"a": 0.5, "b": 0.49, "c": 0.01}


def _group_truth(population, threshold):
    """Coverage and selective risk of the cut {u <= threshold} on one group, or pooled (None)."""
    t = np.clip(float(threshold), 0.0, 1.0)
    each = {
        "a": (t, 100 * (0.05 + 0.2 * t)),
        "b": (np.sqrt(t), 100 * (0.05 + 0.4 * t / 3)),
        "c": (t, 100 * (0.05 + 0.2 * t)),
    }
    if population is not None:
        coverage, risk = each[population]
        return {"coverage": coverage, "risk": risk}
    coverage = sum(GROUP_SHARES[g] * each[g][0] for g in each)
    risk = sum(GROUP_SHARES[g] * each[g][0] * each[g][1] for g in each) / max(coverage, 1e-12)
    return {"coverage": coverage, "risk": risk}


def _group_failures(target, simultaneous, n=1000, seed=11):
    """Per "with probability at least" sentence of select --group-column's report (keyed by the
    populations it names), the share of DRAWS calibration draws where it is stated and a bound of it
    fails on its population; a refused draw states nothing and counts as no failure."""
    from rejectopt.cli._groups import group_lines, group_statements
    from rejectopt.exceptions import InfeasibleTargetError
    from rejectopt.targets import fit_certified_groups

    rng = np.random.default_rng(seed)
    failures, stated = {}, 0
    for _ in range(DRAWS):
        groups = rng.choice(np.array(list(GROUP_SHARES)), size=n, p=list(GROUP_SHARES.values()))
        v = rng.random(n)
        u = np.where(groups == "b", v**2, v)
        loss = 100.0 * (rng.random(n) < 0.05 + 0.4 * u)
        try:
            selection = fit_certified_groups(loss, u, groups, target, simultaneous=simultaneous)
        except InfeasibleTargetError:
            continue
        stated += 1
        report = {
            "target": target.to_dict(),
            "risk_unit": "%",
            "groups": {
                "column": "g",
                "simultaneous": simultaneous,
                "confidence": selection.confidence,
                "group_confidence": selection.group_confidence,
                "n_calibration": n,
                "records": selection.to_records(),
            },
        }
        statements = group_statements(report)
        text = " ".join(group_lines(report))
        assert text.lower().count("with probability at least") == len(statements)
        for statement in statements:
            key = tuple(dict.fromkeys(b[3] for b in statement["bounds"]))
            held = all(
                _holds(_group_truth(p, _applied(selection, p))[q], rel, value)
                for q, rel, value, p in statement["bounds"]
            )
            failures.setdefault(key, []).append((statement["level"], not held))
    assert stated > DRAWS / 2  # most draws certify: the check is of statements made
    return {key: (rows[0][0], sum(f for _, f in rows) / DRAWS) for key, rows in failures.items()}


def _holds(truth, relation, bound):
    """Whether the population's value meets a stated bound (to rounding: bounds are stored floats)."""
    return truth <= bound + 1e-12 if relation == "<=" else truth >= bound - 1e-12


def _applied(selection, population):
    """The threshold a statement's population is served with: its group's, or the pooled one."""
    return selection.pooled.threshold if population is None else selection[population].threshold


def test_each_per_group_statement_of_a_certified_coverage_holds_together():
    """--group-column --simultaneous, coverage 0.8 at 0.9 on groups of known coverage curves: the one
    sentence stating every group's coverage at once fails in at most delta + 3 sigma of the draws
    (Sidak), and no group falls back (a coverage target never does)."""
    from rejectopt.targets import Target

    failures = _group_failures(Target("coverage", 0.8, confidence=1 - DELTA), simultaneous=True)
    assert list(failures) == [("a", "b", "c")]
    sigma = np.sqrt(DELTA * (1 - DELTA) / DRAWS)
    ((level, rate),) = failures.values()
    assert level == 1 - DELTA and rate <= DELTA + 3 * sigma, rate


@pytest.mark.slow
def test_each_per_group_statement_of_a_certified_risk_holds_at_its_level():
    """--group-column, risk 15 % at 0.9 (Learn-then-Test per group, ten seconds): each group's own
    sentence fails on that group's population, and the pooled sentence of the small group "c" (which
    falls back) on the pooled population, in at most delta + 3 sigma of the draws."""
    from rejectopt.targets import Target

    failures = _group_failures(Target("risk", 15, confidence=1 - DELTA), simultaneous=False)
    assert {("a",), ("b",), (None,)} <= set(failures)  # "c" falls back in most draws
    sigma = np.sqrt(DELTA * (1 - DELTA) / DRAWS)
    for level, rate in failures.values():
        assert level == 1 - DELTA and rate <= DELTA + 3 * sigma, rate
