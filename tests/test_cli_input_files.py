"""The input files of ``select`` / ``apply`` as users get them wrong, and the rows of decisions.csv.

A file saved with another delimiter, a folder given as ``--data`` or ``--model``: each ends in one
line that says what is wrong and what to pass instead. ``row`` in decisions.csv names the input's
rows as the error messages do. A small synthetic table keeps ``select`` fast.
"""

import numpy as np
import pandas as pd
import pytest

from rejectopt import cli


def _table(n, seed):
    """Two features, a label and a prediction right about 80 % of the time."""
    rng = np.random.default_rng(seed)
    table = pd.DataFrame({"a": rng.normal(size=n), "b": rng.normal(size=n)})
    table["y"] = (table["a"] > 0).astype(int)
    table["y_pred"] = np.where(rng.random(n) < 0.8, table["y"], 1 - table["y"])
    return table


@pytest.fixture(scope="module")
def selected(tmp_path_factory):
    """``(folder, model.json)`` of ``select`` on 200 rows."""
    folder = tmp_path_factory.mktemp("input_files")
    _table(200, seed=0).to_csv(folder / "val.csv", index=False)
    out = folder / "selection"
    argv = ["select", "--data", folder / "val.csv", "--target", "coverage=0.8", "--out", out]
    assert cli.main([str(a) for a in [*argv, "--C", "1", "-q"]]) == 0
    return folder, out / "model.json"


def run(argv, capsys):
    """``(status, stderr)`` of ``cli.main(argv)``."""
    status = cli.main([str(a) for a in argv])
    return status, capsys.readouterr().err.strip()


def assert_one_line_error(status, err, *fragments):
    assert status == 2, err
    assert len(err.splitlines()) == 1 and err.startswith("rejectopt: error: "), err
    for fragment in fragments:
        assert fragment in err, (fragment, err)


def select_argv(data, out):
    return ["select", "--data", data, "--target", "coverage=0.8", "--out", out, "--C", "1", "-q"]


def apply_argv(model, data, out):
    return ["apply", "--model", model, "--data", data, "--out", out, "-q"]


# --------------------------------------------------------------------------------------------
# A CSV saved with semicolons or tabs
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "delimiter, name, literal", [(";", "semicolon", "sep=';'"), ("\t", "tab", "sep='\\t'")]
)
@pytest.mark.parametrize("command", ["select", "apply"])
def test_a_csv_with_another_delimiter_gets_the_fix(
    command, delimiter, name, literal, selected, tmp_path, capsys
):
    _, model = selected
    data = tmp_path / "pixels.csv"
    table = _table(30, seed=1)
    (table if command == "select" else table.drop(columns="y")).to_csv(
        data, sep=delimiter, index=False
    )
    argv = (
        select_argv(data, tmp_path / "out")
        if command == "select"
        else apply_argv(model, data, tmp_path / "d.csv")
    )
    status, err = run(argv, capsys)
    assert_one_line_error(
        status,
        err,
        f"{data}: missing column(s)",  # the message it had, then the hint
        f"Its header is one column holding {name}s: the file looks {name}-separated",
        "save it as comma-separated",
        f"pandas.read_csv('{data}', {literal}).to_csv('{tmp_path / 'pixels_comma.csv'}', "
        "index=False)",
    )
    assert not (tmp_path / "out").exists() and not (tmp_path / "d.csv").exists()


def test_a_semicolon_csv_that_fails_to_parse_gets_the_fix_and_the_decimal_comma(
    selected, tmp_path, capsys
):
    """Decimal commas split the data rows into cells, more in a later row than in the first: the
    parser fails before any column is read, and the hint names read_csv's decimal too."""
    _, model = selected
    data = tmp_path / "european.csv"
    data.write_text("a;b;y_pred\n0,5;1;0\n1,5;2,25;1\n")
    status, err = run(apply_argv(model, data, tmp_path / "d.csv"), capsys)
    assert_one_line_error(
        status,
        err,
        f"{data}: cannot parse CSV",
        "the file looks semicolon-separated",
        "with decimal=',' in read_csv if its numbers have a decimal comma",
    )


def test_a_comma_csv_with_one_column_gets_no_delimiter_hint(selected, tmp_path, capsys):
    _, model = selected
    data = tmp_path / "one.csv"
    data.write_text("a\n1\n2\n")
    status, err = run(apply_argv(model, data, tmp_path / "d.csv"), capsys)
    assert_one_line_error(status, err, f"{data}: missing column(s)")
    assert "separated" not in err


# --------------------------------------------------------------------------------------------
# A folder where a file is expected
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "command, expected",
    [
        ("select", "the features, predicted class and label (or loss) of each row"),
        ("apply", "the model's features and the predicted class of each row"),
    ],
)
def test_a_folder_as_data_says_so_and_what_file_is_expected(
    command, expected, selected, tmp_path, capsys
):
    folder, model = selected  # holds val.csv and the folder selection/
    argv = (
        select_argv(folder, tmp_path / "out")
        if command == "select"
        else apply_argv(model, folder, tmp_path / "d.csv")
    )
    status, err = run(argv, capsys)
    assert_one_line_error(
        status,
        err,
        f"{folder}: a folder, not a file; --data takes one file, a CSV with a header or an NPZ",
        expected,
        "; it holds val.csv",
    )
    assert "no such file" not in err


def test_a_folder_as_model_names_the_model_json_inside(selected, tmp_path, capsys):
    folder, model = selected
    status, err = run(apply_argv(model.parent, folder / "val.csv", tmp_path / "d.csv"), capsys)
    assert_one_line_error(status, err, f"{model.parent}: a folder, not a model file; pass {model}")
    status, err = run(apply_argv(tmp_path, folder / "val.csv", tmp_path / "d.csv"), capsys)
    assert_one_line_error(
        status,
        err,
        f"{tmp_path}: a folder, not a model file; pass the model.json that select wrote",
    )


# --------------------------------------------------------------------------------------------
# decisions.csv: row k is the k-th data row, counted from 1
# --------------------------------------------------------------------------------------------
def test_decisions_row_k_is_the_kth_data_row_of_the_csv(selected, tmp_path, capsys):
    """Each data row of a 6-row file, applied alone, gets the uncertainty of its ``row`` in the
    decisions of the whole file: row k is data row k (the header not counted), as in messages."""
    _, model = selected
    new = _table(6, seed=2).drop(columns="y")
    data = tmp_path / "new.csv"
    new.to_csv(data, index=False)
    assert run(apply_argv(model, data, tmp_path / "d.csv"), capsys)[0] == 0
    decisions = pd.read_csv(tmp_path / "d.csv")
    assert decisions["row"].tolist() == [1, 2, 3, 4, 5, 6]
    assert len(set(decisions["uncertainty"])) == 6  # distinct rows: a shift would be seen
    for k in range(1, 7):
        alone = tmp_path / f"row{k}.csv"
        new.iloc[[k - 1]].to_csv(alone, index=False)
        assert run(apply_argv(model, alone, tmp_path / f"d{k}.csv"), capsys)[0] == 0
        uncertainty = pd.read_csv(tmp_path / f"d{k}.csv")["uncertainty"].item()
        # to 1e-12: BLAS may sum one row's product in another order than six rows'
        assert decisions.loc[decisions["row"] == k, "uncertainty"].item() == pytest.approx(
            uncertainty, rel=1e-12, abs=1e-12
        )
    # the error messages count rows alike: a text value in data row 4 is "row 4"
    lines = data.read_text().splitlines()
    lines[4] = "oops," + lines[4].split(",", 1)[1]  # line 4 + 1 of the file holds data row 4
    data.write_text("\n".join(lines) + "\n")
    status, err = run(apply_argv(model, data, tmp_path / "bad.csv"), capsys)
    assert_one_line_error(status, err, "'oops'", "row 4")
