"""Reliability of the estimator, model.json and command-line edges: each refused with a reason."""

import warnings

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

from rejectopt import SelectiveClassifier


def _ordinal(n=600, seed=0):
    """Four ordinal labels 0..3 from one informative feature."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    return X, np.clip(np.round(X[:, 0] * 1.5 + 2), 0, 3).astype(int)


def _certified_mae(**params):
    fixed = {"loss": "mae", "target": "risk", "value": 0.5, "confidence": 0.9, "C_grid": (1.0,)}
    return SelectiveClassifier(LogisticRegression(), **{**fixed, **params})


def test_mae_certified_risk_warns_when_B_comes_from_the_labels():
    X, y = _ordinal()
    keep = y < 3  # the largest class is missing: the labels span 2, K - 1 is 3
    with pytest.warns(UserWarning, match=r"B = 2, the span of the labels.*loss_bound=K-1"):
        model = _certified_mae().fit(X[keep], y[keep])
    assert model.selection_.certificate["loss_bound"] == 2.0


def test_mae_loss_bound_declares_B_without_a_warning():
    X, y = _ordinal()
    keep = y < 3
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*span of the labels")
        model = _certified_mae(loss_bound=3).fit(X[keep], y[keep])
    assert model.selection_.certificate["loss_bound"] == 3.0


def test_loss_bound_below_a_loss_is_refused():
    X, y = _ordinal()
    with pytest.raises(ValueError, match=r"loss_bound=0.5: a prediction has the loss [123]"):
        _certified_mae(loss_bound=0.5, value=0.2).fit(X, y)


@pytest.mark.parametrize("bound", [0, -1, float("nan"), "3"])
def test_loss_bound_must_be_a_positive_number(bound):
    X, y = _ordinal(n=100)
    with pytest.raises(ValueError, match="loss_bound must be"):
        _certified_mae(loss_bound=bound).fit(X, y)


def test_loss_bound_with_the_zero_one_loss_is_refused():
    X, y = _ordinal(n=100)
    model = SelectiveClassifier(LogisticRegression(), loss_bound=3)
    with pytest.raises(ValueError, match="applies to loss='mae' only"):
        model.fit(X, y)


@pytest.mark.parametrize("prefit", [False, True])
def test_a_regressor_as_the_classifier_is_refused(prefit):
    from sklearn.linear_model import LinearRegression

    X, y = _ordinal(n=200)
    regressor = LinearRegression().fit(X, y) if prefit else LinearRegression()
    model = SelectiveClassifier(regressor, prefit=prefit, C_grid=(1.0,))
    with pytest.raises(
        ValueError, match=r"LinearRegression.predict returns continuous values.*a regressor"
    ):
        model.fit(X, y)


def test_float_labels_that_are_whole_numbers_stay_accepted():
    X, y = _ordinal(n=300)
    model = SelectiveClassifier(LogisticRegression(), C_grid=(1.0,)).fit(X, y.astype(float))
    assert model.classes_.tolist() == [0.0, 1.0, 2.0, 3.0]


@pytest.mark.parametrize("splitter", ["GroupKFold", "StratifiedGroupKFold", "LeaveOneGroupOut"])
def test_a_group_splitter_is_refused_naming_it(splitter):
    from sklearn import model_selection

    cv = getattr(model_selection, splitter)()
    X, y = _ordinal(n=120)
    model = SelectiveClassifier(LogisticRegression(), cv=cv, C_grid=(1.0,))
    with pytest.raises(ValueError, match=rf"cv={splitter}\(.*splits by groups.*StratifiedKFold"):
        model.fit(X, y)


def test_a_fold_lacking_a_class_is_named():
    from sklearn.model_selection import KFold

    X, y = _ordinal(n=120)
    order = np.argsort(y, kind="stable")  # sorted labels: an unshuffled fold holds one class only
    X, y = X[order], (y[order] > 0).astype(int)
    model = SelectiveClassifier(LogisticRegression(), cv=KFold(2), C_grid=(1.0,))
    with pytest.raises(
        ValueError,
        match=r"fold 1 of 2 failed; its \d+ training rows hold the classes \[1\], lacking \[0\]",
    ):
        model.fit(X, y)


@pytest.mark.parametrize(
    "statement, new",
    [
        ("import rejectopt.experiments", "rejectopt.pipeline.experiments"),
        ("import rejectopt.experiments.guarantees", "rejectopt.pipeline.experiments"),
        ("from rejectopt import report", "rejectopt.pipeline.report"),
        ("from rejectopt.config import load_config", "rejectopt.pipeline.config"),
        ("from rejectopt.resources import estimate", "rejectopt.pipeline.resources"),
        (
            "from rejectopt.tables import aurc_table",
            r"rejectopt.pipeline.tables' \(its aurc_table is metric_table\)",
        ),
    ],
)
def test_an_old_module_path_names_its_new_home(statement, new):
    with pytest.raises(ImportError, match=rf"rejectopt 0.3.0 moved it to '{new}"):
        exec(statement, {})


def test_the_renamed_table_function_names_its_new_name():
    with pytest.raises(ImportError, match=r"rejectopt 0.3.0 renamed it metric_table$"):
        exec("from rejectopt.pipeline.tables import aurc_table", {})
    with pytest.raises(AttributeError, match=r"has no attribute 'nothere'"):
        exec("import rejectopt.pipeline.tables as t; t.nothere", {})


def test_a_module_that_never_existed_keeps_the_usual_error():
    with pytest.raises(ModuleNotFoundError, match=r"^No module named 'rejectopt.nothere'$"):
        exec("import rejectopt.nothere", {})


def test_the_moved_paths_cost_import_rejectopt_no_import():
    import subprocess
    import sys

    code = (
        "import sys, rejectopt; print(sorted(m for m in sys.modules if m.startswith('rejectopt')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "['rejectopt']"


@pytest.mark.parametrize("rows", [0, -1])
def test_rows_per_block_zero_is_refused_as_minus_one_is(rows):
    """0 rows per block meant "the default" (a falsy value) while -1 was refused: both are refused."""
    from rejectopt.scores._shared import output_features

    with pytest.raises(ValueError, match=rf"rows_per_block must be a positive integer, got {rows}"):
        output_features(np.zeros((4, 3)), rows_per_block=rows)


@pytest.mark.parametrize("command", ["select", "validate"])
@pytest.mark.parametrize("target, level", [("risk=5", "1e-300"), ("coverage=0.8", "1e-16")])
def test_a_confidence_that_underflows_is_refused_by_the_command_line(
    command, target, level, tmp_path, capsys
):
    """select wrote a model.json that apply refused as corrupt, validate blamed the data file, and a
    risk target ended in a 31-line traceback: each is one line naming the usable range."""
    from cli_data import wine_table

    from rejectopt import cli

    data = wine_table(tmp_path / "data")
    argv = [command, "--data", data, "--target", target, "--confidence", level]
    try:
        status = cli.main([str(a) for a in [*argv, "--out", tmp_path / "out"]])
    except SystemExit as stop:
        status = stop.code
    err = capsys.readouterr().err.strip()
    assert status == 2 and len(err.splitlines()) == 1
    assert f"confidence must lie in [1e-10, 1) (it is 1 - delta, e.g. 0.95), got {level}" in err
    assert not (tmp_path / "out" / "model.json").exists()
