"""Hostile or clumsy input to ``select`` / ``apply`` ends in a clear error or a safe decision.

Each case is one that a looser command line got wrong (exit 0 with a wrong decision, or a
traceback). Only :func:`rejectopt.cli.main` is used, so the tests hold for any layout.
"""

import json
import logging
import os
import shutil
import stat

import numpy as np
import pandas as pd
import pytest
from cli_data import satellite_tables, selected_model, shared_folder

from rejectopt import cli
from rejectopt.cli._parser import build_parser
from rejectopt.cli._table import EXACT_FLOATS


@pytest.fixture(scope="module")
def paths(tmp_path_factory):
    return satellite_tables(shared_folder(tmp_path_factory))


@pytest.fixture(scope="module")
def model_path(tmp_path_factory):
    return selected_model(shared_folder(tmp_path_factory)) / "model.json"


def run(argv, capsys):
    """``(status, stderr)`` of ``cli.main(argv)``; argparse's exits count as a status."""
    try:
        status = cli.main([str(a) for a in argv])
    except SystemExit as exit_:
        status = exit_.code
    return status, capsys.readouterr().err.strip()


def assert_one_line_error(status, err, *fragments):
    assert status == 2, err
    assert "Traceback" not in err
    assert len(err.splitlines()) == 1 and err.startswith("rejectopt: error: "), err
    for fragment in fragments:
        assert fragment in err, (fragment, err)


def select_argv(data, out, *extra):
    return [
        "select",
        "--data",
        data,
        "--target",
        "coverage=0.8",
        "--out",
        out,
        "--C",
        "1",
        "-q",
        *extra,
    ]


def apply_argv(model, data, out, *extra):
    return ["apply", "--model", model, "--data", data, "--out", out, "-q", *extra]


# --------------------------------------------------------------------------------------------
# 1. Nothing is overwritten: never an input, an existing output only with --force
# --------------------------------------------------------------------------------------------
def test_apply_refuses_to_overwrite_the_model_it_reads(paths, model_path, tmp_path, capsys):
    model = tmp_path / "model.json"
    shutil.copy(model_path, model)
    before = model.read_bytes()
    for extra in ((), ("--force",)):
        status, err = run(apply_argv(model, paths["unseen"], model, *extra), capsys)
        assert_one_line_error(status, err, "--model", "input")
    assert model.read_bytes() == before


def test_apply_refuses_to_overwrite_its_data(paths, model_path, tmp_path, capsys):
    data = tmp_path / "new.csv"
    shutil.copy(paths["unseen"], data)
    before = data.read_bytes()
    (tmp_path / "sub").mkdir()
    for extra in ((), ("--force",)):
        status, err = run(
            apply_argv(model_path, data, tmp_path / "sub" / ".." / "new.csv", *extra), capsys
        )
        assert_one_line_error(status, err, "--data", "input")
    assert data.read_bytes() == before


def test_apply_replaces_an_existing_output_only_with_force(paths, model_path, tmp_path, capsys):
    out = tmp_path / "decisions.csv"
    out.write_text("mine\n")
    status, err = run(apply_argv(model_path, paths["unseen"], out), capsys)
    assert_one_line_error(status, err, str(out), "exists", "--force")
    assert out.read_text() == "mine\n"
    status, _ = run(apply_argv(model_path, paths["unseen"], out, "--force"), capsys)
    assert status == 0 and len(pd.read_csv(out)) == 2435
    assert [p.name for p in tmp_path.iterdir()] == ["decisions.csv"]  # no temporary file left


def test_apply_never_replaces_a_special_file(paths, model_path, tmp_path, capsys):
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)  # like /dev/null: os.replace would swap the device for a regular file
    status, err = run(apply_argv(model_path, paths["unseen"], pipe, "--force"), capsys)
    assert_one_line_error(status, err, str(pipe), "not a regular file")
    assert stat.S_ISFIFO(pipe.stat().st_mode)


def test_select_into_a_folder_with_outputs_needs_force(paths, tmp_path, capsys):
    out = tmp_path / "sel"
    out.mkdir()
    (out / "model.json").write_text("my old model")
    status, err = run(select_argv(paths["given"], out), capsys)
    assert_one_line_error(status, err, "model.json", "--force")
    assert sorted(p.name for p in out.iterdir()) == ["model.json"]
    assert (out / "model.json").read_text() == "my old model"
    status, _ = run(select_argv(paths["given"], out, "--force"), capsys)
    assert status == 0
    assert json.loads((out / "model.json").read_text())["format"] == "rejectopt-selective-model"


def test_select_refuses_to_overwrite_its_data(paths, tmp_path, capsys):
    out = tmp_path / "sel"
    out.mkdir()
    data = out / "report.md"  # the data file has the name of an output
    shutil.copy(paths["given"], data)
    for extra in ((), ("--force",)):
        status, err = run(select_argv(data, out, *extra), capsys)
        assert_one_line_error(status, err, "--data", "input")
    assert data.read_bytes() == paths["given"].read_bytes()
    assert sorted(p.name for p in out.iterdir()) == ["report.md"]


# --------------------------------------------------------------------------------------------
# 2. and 4. The whole model.json is validated: exit 2 naming the field, never a wrong decision
# --------------------------------------------------------------------------------------------
def _drop(key):
    def edit(model):
        del model[key]

    return edit


def _set_score(key, index, value):
    def edit(model):
        model["score"][key][index] = value

    return edit


def _replace(path, value):
    def edit(model):
        *parents, last = path
        target = model
        for key in parents:
            target = target[key]
        target[last] = value

    return edit


MODEL_EDITS = {
    # edits that a looser check accepted with exit 0
    "classes removed": (_drop("classes"), "classes"),
    "zero scale": (_set_score("scale", 3, 0.0), "score.scale[3]"),
    "negative scale": (_set_score("scale", 5, -2.5), "score.scale[5]"),
    "short class_seen": (_replace(("score", "class_seen"), [True, True]), "score.class_seen"),
    "threshold as text": (_replace(("selection", "threshold"), "0.5"), "selection.threshold"),
    "n_classes as text": (_replace(("score", "n_classes"), "6"), "score.n_classes"),
    "misspelt key": (lambda m: m.update(clases=m.pop("classes")), "clases"),
    "duplicate feature": (_replace(("feature_columns", 1), "f0"), "feature_columns"),
    "boolean in coef": (lambda m: m["score"]["coef"][2].__setitem__(0, True), "score.coef[2][0]"),
    "unknown score kind": (_replace(("score", "kind"), "svm"), "score.kind"),
    # edits that a looser check met with a TypeError traceback
    "classes as lists": (lambda m: m.update(classes=[[c] for c in m["classes"]]), "classes"),
    "feature names as objects": (
        lambda m: m.update(feature_columns=[{"name": c} for c in m["feature_columns"]]),
        "feature_columns",
    ),
}


@pytest.mark.parametrize("case", sorted(MODEL_EDITS))
def test_apply_refuses_a_malformed_model_naming_the_field(
    case, paths, model_path, tmp_path, capsys
):
    edit, field = MODEL_EDITS[case]
    model = json.loads(model_path.read_text())
    edit(model)
    bad = tmp_path / "model.json"
    bad.write_text(json.dumps(model))
    out = tmp_path / "out" / "decisions.csv"
    status, err = run(apply_argv(bad, paths["unseen"], out), capsys)
    assert_one_line_error(status, err, str(bad), field)
    assert not out.parent.exists()


@pytest.mark.parametrize("text", ["[" * 200_000, '{"format": ' * 100_000, '{"a": NaN}'])
def test_apply_refuses_deeply_nested_or_non_standard_json_in_one_line(
    text, paths, tmp_path, capsys
):
    bad = tmp_path / "model.json"
    bad.write_text(text)
    status, err = run(apply_argv(bad, paths["unseen"], tmp_path / "d.csv"), capsys)
    assert_one_line_error(status, err, str(bad), "not a JSON model file")
    assert not (tmp_path / "d.csv").exists()


# --------------------------------------------------------------------------------------------
# 3. Extreme values: rejected (or refused) at apply, one error naming file, row and column at select
# --------------------------------------------------------------------------------------------
def _with_value(source, path, row, column, value):
    table = pd.read_csv(source)
    table.loc[row, column] = value
    table.to_csv(path, index=False)
    return path


@pytest.mark.parametrize("value", [1e308, -1e308, 3e200])
def test_apply_rejects_rows_with_extreme_values(value, paths, model_path, tmp_path, capsys, caplog):
    clean, extreme = tmp_path / "clean.csv", tmp_path / "extreme.csv"
    run(apply_argv(model_path, paths["unseen"], clean), capsys)
    data = _with_value(paths["unseen"], tmp_path / "x.csv", 6, "f4", value)
    with caplog.at_level(logging.WARNING):
        status, err = run(apply_argv(model_path, data, extreme), capsys)
    assert status == 0, err
    warnings = " ".join(r.getMessage() for r in caplog.records if r.levelno == logging.WARNING)
    assert (
        "1 row(s) with values out of range" in warnings
        and "row 7" in warnings
        and "'f4'" in warnings
    )
    before, after = pd.read_csv(clean), pd.read_csv(extreme)
    assert after.loc[6, "accept"] == 0 and after.loc[6, "acceptance_probability"] == 0
    assert np.isinf(after.loc[6, "uncertainty"])
    others = np.arange(len(before)) != 6
    pd.testing.assert_frame_equal(before[others], after[others])


def test_apply_can_refuse_rows_with_extreme_values(paths, model_path, tmp_path, capsys):
    data = _with_value(paths["unseen"], tmp_path / "x.csv", 11, "f9", -1e308)
    status, err = run(
        apply_argv(model_path, data, tmp_path / "d.csv", "--extreme-values", "error"), capsys
    )
    assert_one_line_error(status, err, str(data), "row 12", "'f9'", "out of range")
    assert not (tmp_path / "d.csv").exists()


@pytest.mark.parametrize("value", [1e308, -1e308])
def test_select_names_file_row_and_column_of_an_extreme_value(value, paths, tmp_path, capsys):
    data = _with_value(paths["given"], tmp_path / "x.csv", 41, "f17", value)
    out = tmp_path / "sel"
    status, err = run(select_argv(data, out), capsys)
    assert_one_line_error(status, err, str(data), "row 42", "'f17'", "out of range")
    assert not out.exists()


# --------------------------------------------------------------------------------------------
# 5. No silent column mix-ups at select
# --------------------------------------------------------------------------------------------
def test_select_refuses_duplicate_column_names(paths, tmp_path, capsys):
    lines = paths["given"].read_text().splitlines(keepends=True)
    lines[0] = lines[0].replace(
        "f3,", "f0,", 1
    )  # header f0,f1,f2,f0,...: pandas would rename it f0.1
    data = tmp_path / "dup.csv"
    data.write_text("".join(lines))
    out = tmp_path / "sel"
    status, err = run(select_argv(data, out), capsys)
    assert_one_line_error(status, err, str(data), "duplicate", "'f0'")
    assert not out.exists()


@pytest.mark.parametrize(
    "column, role, extra",
    [("y", "label", ()), ("y_pred", "prediction", ()), ("loss", "loss", ("--loss-column", "loss"))],
)
def test_select_refuses_label_prediction_or_loss_as_a_feature(
    column, role, extra, paths, tmp_path, capsys
):
    table = pd.read_csv(paths["given"])
    table["loss"] = 100.0 * (table["y"] != table["y_pred"])
    data = tmp_path / "d.csv"
    table.to_csv(data, index=False)
    out = tmp_path / "sel"
    status, err = run(select_argv(data, out, "--feature-columns", f"f0,{column}", *extra), capsys)
    assert_one_line_error(status, err, "--feature-columns", repr(column), role)
    assert not out.exists()


@pytest.mark.parametrize(
    "extra, fragment",
    [
        (
            ("--pred-column", "y"),
            "--pred-column 'y' is the label column (--label-column, default y): the predicted class "
            "and the true label need columns of their own (read from one column, every prediction "
            "would be right and every loss 0); name your classifier's predictions with --pred-column",
        ),
        (
            ("--pred-column", "truth", "--label-column", "truth"),
            "--pred-column 'truth' is the label column",
        ),
        (
            ("--pred-column", "loss", "--loss-column", "loss"),
            "--pred-column 'loss' is the loss column (--loss-column): the predicted class and the "
            "loss need columns of their "
            "own",
        ),
    ],
)
def test_select_refuses_a_prediction_read_from_the_label_or_loss_column(
    extra, fragment, paths, tmp_path, capsys
):
    """Not a warning that every loss is 0: the clash of two roles on one column, named, before anything is fitted."""
    table = pd.read_csv(paths["given"])
    table["loss"], table["truth"] = 100.0 * (table["y"] != table["y_pred"]), table["y"]
    data = tmp_path / "d.csv"
    table.to_csv(data, index=False)
    out = tmp_path / "sel"
    status, err = run(select_argv(data, out, *extra), capsys)
    assert_one_line_error(status, err, fragment)
    assert not out.exists()


def test_apply_refuses_a_certified_model_whose_bound_contradicts_its_target(
    paths, tmp_path, capsys
):
    """A certified coverage of 0.8 whose certificate was edited to 0.7, or whose selection was made random at its
    threshold: apply names the file and the field, and says the file was edited."""
    out = tmp_path / "sel"
    status, err = run(select_argv(paths["given"], out, "--confidence", "0.9"), capsys)
    assert status == 0, err
    for entry, field, value, fragment in (
        (
            "certificate",
            "coverage_bound",
            0.7,
            "certificate.coverage_bound is 0.7 but the target's coverage is 0.8",
        ),
        ("selection", "accept_prob", 0.5, "selection.accept_prob is 0.5 but a certified selection"),
    ):
        model = json.loads((out / "model.json").read_text())
        model[entry][field] = value
        bad = tmp_path / "edited.json"
        bad.write_text(json.dumps(model))
        status, err = run(apply_argv(bad, paths["unseen"], tmp_path / "d.csv"), capsys)
        assert_one_line_error(
            status,
            err,
            f"{bad}: invalid model: {fragment}",
            "the file was edited or is corrupt: re-run select",
        )
        assert not (tmp_path / "d.csv").exists()


# --------------------------------------------------------------------------------------------
# 8. Small ones
# --------------------------------------------------------------------------------------------
def test_negative_seed_names_the_option(paths, model_path, tmp_path, capsys):
    status, err = run(select_argv(paths["given"], tmp_path / "sel", "--seed", "-1"), capsys)
    assert status == 2 and "--seed" in err and "non-negative" in err and "Traceback" not in err
    status, err = run(
        apply_argv(model_path, paths["unseen"], tmp_path / "d.csv", "--seed", "-1"), capsys
    )
    assert status == 2 and "--seed" in err and "Traceback" not in err
    assert not (tmp_path / "sel").exists() and not (tmp_path / "d.csv").exists()


def test_fractions_summing_over_one_get_a_clear_message(paths, tmp_path, capsys):
    argv = select_argv(
        paths["given"],
        tmp_path / "sel",
        "--calibration-fraction",
        "0.6",
        "--report-fraction",
        "0.5",
    )
    status, err = run(argv, capsys)
    assert_one_line_error(
        status, err, "--calibration-fraction", "--report-fraction", "1.1", "below 1"
    )
    assert "too few rows" not in err


def test_header_only_csv_at_apply_names_the_file(paths, model_path, tmp_path, capsys):
    data = tmp_path / "empty.csv"
    data.write_text(paths["unseen"].read_text().splitlines()[0] + "\n")
    status, err = run(apply_argv(model_path, data, tmp_path / "d.csv"), capsys)
    assert_one_line_error(status, err, str(data), "no data rows")


def test_quiet_before_the_subcommand_is_accepted(paths, tmp_path, capsys):
    assert (
        build_parser()
        .parse_args(["-q", "apply", "--model", "m", "--data", "d", "--out", "o"])
        .quiet
    )
    assert (
        build_parser()
        .parse_args(["apply", "-q", "--model", "m", "--data", "d", "--out", "o"])
        .quiet
    )
    assert (
        not build_parser().parse_args(["apply", "--model", "m", "--data", "d", "--out", "o"]).quiet
    )
    out = tmp_path / "sel"
    argv = [
        "-q",
        "select",
        "--data",
        paths["given"],
        "--target",
        "coverage=0.8",
        "--C",
        "1",
        "--out",
        out,
    ]
    status, err = run(argv, capsys)
    assert status == 0, err
    assert (out / "model.json").is_file()


def test_every_prediction_correct_at_select_warns(paths, tmp_path, capsys, caplog):
    table = pd.read_csv(paths["given"])
    table["y_pred"] = table["y"]
    data = tmp_path / "perfect.csv"
    table.to_csv(data, index=False)
    with caplog.at_level(logging.WARNING):
        status, err = run(select_argv(data, tmp_path / "sel"), capsys)
    assert status == 0, err
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any("every loss is 0" in w and str(data) in w for w in warnings), warnings


def test_a_bug_is_a_traceback_not_bad_input(paths, tmp_path, monkeypatch):
    """Only bad input exits with status 2: an error of the library itself keeps its traceback."""

    def broken(*args, **kwargs):
        raise ValueError("a bug in the library")

    import rejectopt.cli._select as select_module

    monkeypatch.setattr(select_module, "learn_score", broken)
    with pytest.raises(ValueError, match="a bug in the library"):
        cli.main([str(a) for a in select_argv(paths["given"], tmp_path / "sel")])
    assert not (tmp_path / "sel").exists()


def test_apply_rejects_rows_whose_standardised_values_overflow(
    paths, model_path, tmp_path, capsys, caplog
):
    model = json.loads(model_path.read_text())
    model["score"]["scale"][2] = 1e-160  # valid (> 0), but f2 / 1e-160 lies beyond 1e150
    edited = tmp_path / "model.json"
    edited.write_text(json.dumps(model))
    with caplog.at_level(logging.WARNING):
        status, err = run(apply_argv(edited, paths["unseen"], tmp_path / "d.csv"), capsys)
    assert status == 0, err
    assert "standardised" in caplog.text and "'f2'" in caplog.text
    decisions = pd.read_csv(tmp_path / "d.csv")
    assert (decisions["accept"] == 0).all() and np.isinf(decisions["uncertainty"]).all()


# --------------------------------------------------------------------------------------------
# decisions.csv never loses a column; the model file's guards at apply
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["row", "accept", "uncertainty", "acceptance_probability"])
def test_select_refuses_a_pred_column_named_like_a_decisions_column(name, paths, tmp_path, capsys):
    table = pd.read_csv(paths["given"]).rename(columns={"y_pred": name})
    data = tmp_path / "renamed.csv"
    table.to_csv(data, index=False)
    status, err = run(select_argv(data, tmp_path / "sel", "--pred-column", name), capsys)
    assert_one_line_error(
        status,
        err,
        f"--pred-column {name!r} collides with the column {name!r} that apply writes "
        "to decisions.csv",
        "rename the predicted-class column of your data",
    )
    assert not (tmp_path / "sel").exists()


def test_apply_refuses_a_model_whose_pred_column_collides(paths, model_path, tmp_path, capsys):
    model = json.loads(model_path.read_text())
    model["pred_column"] = "accept"
    edited = tmp_path / "model.json"
    edited.write_text(json.dumps(model))
    status, err = run(apply_argv(edited, paths["unseen"], tmp_path / "d.csv"), capsys)
    assert_one_line_error(
        status, err, f"{edited}: pred_column 'accept' collides with the column 'accept'"
    )
    assert not (tmp_path / "d.csv").exists()


def test_apply_warns_when_huge_weights_reject_almost_every_row(
    paths, model_path, tmp_path, capsys, caplog
):
    model = json.loads(model_path.read_text())
    for weights in model["score"]["coef"]:
        weights[3] = 1e308
    edited = tmp_path / "model.json"
    edited.write_text(json.dumps(model))
    with caplog.at_level(logging.WARNING):
        status, err = run(apply_argv(edited, paths["unseen"], tmp_path / "d.csv"), capsys)
    assert status == 0, err
    decisions = pd.read_csv(tmp_path / "d.csv")
    overflowed = int(np.isinf(decisions["uncertainty"]).sum())
    assert overflowed > 0 and (decisions["accept"][np.isinf(decisions["uncertainty"])] == 0).all()
    assert "score.coef[0][3] is 1e+308: a learned weight is never this large" in caplog.text
    assert (
        f"{overflowed} of {len(decisions)} row(s) rejected because the score overflowed"
        in caplog.text
    )


def test_apply_warns_on_rows_of_a_class_the_score_never_trained_on(
    paths, model_path, tmp_path, capsys, caplog
):
    model = json.loads(model_path.read_text())
    score = model["score"]
    c = 1
    score["class_seen"][c] = False
    score["coef"][c] = [0.0] * len(score["coef"][c])
    score["intercept"][c] = score["unseen_class_score"]
    edited = tmp_path / "model.json"
    edited.write_text(json.dumps(model))
    with caplog.at_level(logging.WARNING):
        status, err = run(apply_argv(edited, paths["unseen"], tmp_path / "d.csv"), capsys)
    assert status == 0, err
    decisions = pd.read_csv(tmp_path / "d.csv")
    rows = decisions["y_pred"].astype(str) == model["classes"][c]
    assert rows.any() and (decisions["uncertainty"][rows] == score["unseen_class_score"]).all()
    assert (
        f"{int(rows.sum())} row(s) predict a class that no training row of the score predicted (model.json "
        "score.class_seen false"
    ) in caplog.text


def test_an_old_format_model_applies(tmp_path, capsys):
    """tests/data/model_v1_wine.json was written by select before format_version 2 (on wine's f0..f12, y_pred)."""
    from pathlib import Path

    from sklearn.datasets import load_wine

    X, y = load_wine(return_X_y=True)
    table = pd.DataFrame(X, columns=[f"f{j}" for j in range(13)])
    table["y_pred"] = y
    table.to_csv(tmp_path / "wine.csv", index=False)
    model = Path(__file__).parent / "data" / "model_v1_wine.json"
    status, err = run(apply_argv(model, tmp_path / "wine.csv", tmp_path / "d.csv"), capsys)
    assert status == 0, err
    decisions = pd.read_csv(tmp_path / "d.csv")
    assert list(decisions.columns) == [
        "row",
        "y_pred",
        "uncertainty",
        "acceptance_probability",
        "accept",
    ]
    assert len(decisions) == 178 and 0 < decisions["accept"].mean() < 1


def _wine_with_errors(path):
    """Wine's f0..f12, its label y and a y_pred wrong on every 5th row: the table model_v2_wine_certified.json was
    selected on (``select --target coverage=0.5 --confidence 0.9 --C 1`` of the release before format_version 3)."""
    from sklearn.datasets import load_wine

    X, y = load_wine(return_X_y=True)
    table = pd.DataFrame(X, columns=[f"f{j}" for j in range(13)])
    table["y"], table["y_pred"] = y, (y + (np.arange(y.size) % 5 == 0)) % 3
    table.to_csv(path, index=False)
    return path


def test_an_old_format_2_certified_model_applies_as_its_format_3_twin(tmp_path, capsys):
    """A format-2 certificate has no loss_bound; apply decides on it, byte for byte as on the same model in format 3."""
    from pathlib import Path

    data = _wine_with_errors(tmp_path / "wine.csv")
    old = Path(__file__).parent / "data" / "model_v2_wine_certified.json"
    raw = json.loads(old.read_text())
    assert raw["format_version"] == 2 and "loss_bound" not in raw["certificate"]
    assert (
        raw["selection"]["accept_prob"] == 1.0
    )  # a certified coverage: accepts its threshold's ties
    twin = tmp_path / "model_v3.json"
    twin.write_text(
        json.dumps(
            dict(raw, format_version=3, certificate=dict(raw["certificate"], loss_bound=100.0))
        )
    )
    for model, out in ((old, tmp_path / "d2.csv"), (twin, tmp_path / "d3.csv")):
        status, err = run(apply_argv(model, data, out), capsys)
        assert status == 0, err
    assert (tmp_path / "d2.csv").read_bytes() == (tmp_path / "d3.csv").read_bytes()
    decisions = pd.read_csv(
        tmp_path / "d2.csv", **EXACT_FLOATS
    )  # the threshold row exactly, on every pandas
    assert len(decisions) == 178 and 0 < decisions["accept"].mean() < 1
    np.testing.assert_array_equal(
        decisions["accept"], decisions["uncertainty"] <= raw["selection"]["threshold"]
    )


@pytest.mark.parametrize("command", ["select", "validate"])
@pytest.mark.parametrize(
    "extra, fragment",
    [
        (
            ("--label-column", "y"),
            "--loss-column loss and --label-column y conflict: the loss column gives each "
            "prediction's loss, so the labels would not be read; give one of them",
        ),
        (("--loss", "mae"), "--loss-column loss and --loss mae conflict"),
    ],
)
def test_a_loss_column_beside_labels_or_a_loss_is_a_conflict(
    command, extra, fragment, paths, tmp_path, capsys
):
    out = tmp_path / "out"
    argv = [command, "--data", paths["given"], "--out", out, "--loss-column", "loss", *extra]
    certified = () if command == "select" else ("--confidence", "0.9")
    status, err = run(
        [*argv, "--target", "coverage=0.8", *certified, "--loss-bound", "100"], capsys
    )
    assert_one_line_error(status, err, fragment)
    assert not out.exists()
