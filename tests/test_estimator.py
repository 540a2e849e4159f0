"""Tests of rejectopt.estimator.SelectiveClassifier: CLI parity, scikit-learn conventions, decisions."""

import json
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.compose import ColumnTransformer
from sklearn.datasets import load_digits
from sklearn.dummy import DummyClassifier
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV
from sklearn.naive_bayes import GaussianNB
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import LinearSVC
from sklearn.utils import estimator_checks
from sklearn.utils.estimator_checks import parametrize_with_checks
from support import DEMO_MIRROR

from rejectopt import cli
from rejectopt.datasets import load_prepared, prepare_dataset
from rejectopt.estimator import SelectiveClassifier
from rejectopt.exceptions import InfeasibleTargetError
from rejectopt.fitting import split_rows
from rejectopt.metrics import reject_confusion_matrix
from rejectopt.scores import REG, SELE, TCP, ScoreError
from rejectopt.selective import SelectionFunction
from rejectopt.stats import wilson_interval

#: Checks that a reject option makes inapplicable, with the reason (sklearn's xfail mechanism).
EXPECTED_FAILED_CHECKS = {
    "check_classifiers_train": (
        "predict returns reject_label for the 1 - value = 20 % most uncertain inputs by design, and the check "
        "counts them as errors (it requires training accuracy > 0.83) and as disagreeing with decision_function, "
        "the classifier's own; with the classifier's predictions in their place it passes "
        "(test_xfailed_checks_fail_only_because_of_the_reject_label)"
    ),
    "check_classifiers_one_label_sample_weights": (
        "sample_weight reaches the classifier, which then predicts the one weighted class, but predict returns "
        "reject_label for the most uncertain inputs by design, and the check counts them as wrong; with the "
        "classifier's predictions in their place it passes (test_xfailed_checks_fail_only_because_of_the_reject_label)"
    ),
    "check_classifiers_classes": (
        "its last problem uses the labels {-1, 1}, which contain -1, the label of a rejection by default "
        "(reject_label=None) for numeric classes, so fit refuses "
        "them (an abstention would be indistinguishable from class -1); and it compares predict with the argmax of "
        "decision_function, which predict overrides with reject_label on the rejected rows; with another "
        "reject_label and the classifier's predictions in place of the rejections it passes "
        "(test_xfailed_checks_fail_only_because_of_the_reject_label)"
    ),
}


def _expected_failed_checks(estimator):
    return EXPECTED_FAILED_CHECKS


@parametrize_with_checks(
    [SelectiveClassifier(LinearSVC())], expected_failed_checks=_expected_failed_checks
)
def test_sklearn_estimator_checks(estimator, check, monkeypatch):
    if getattr(check, "func", check).__name__ == "check_array_api_input":
        # scikit-learn skips this check unless SCIPY_ARRAY_API=1, which SciPy reads once at import.
        # The check runs here with the NumPy namespace only (the estimator declares no array API
        # support), where SciPy's flag changes nothing: setting the variable for scikit-learn's own
        # test of it runs the check instead of skipping it (it also passes in a fresh process
        # started with SCIPY_ARRAY_API=1).
        monkeypatch.setenv("SCIPY_ARRAY_API", "1")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", category=UserWarning)
        check(estimator)


class _NeverRejects(SelectiveClassifier):
    """SelectiveClassifier whose predict returns the classifier's predictions, rejected rows included."""

    def predict(self, X):
        labels, accept = super().predict(X), self.accept(X)
        assert (labels[accept] == self.estimator_.predict(X)[accept]).all()
        return self.estimator_.predict(X)


def test_xfailed_checks_fail_only_because_of_the_reject_label():
    estimator_checks.check_classifiers_classes(
        "SelectiveClassifier", _NeverRejects(LinearSVC(), reject_label=-999)
    )
    estimator_checks.check_classifiers_train("SelectiveClassifier", _NeverRejects(LinearSVC()))
    estimator_checks.check_classifiers_one_label_sample_weights(
        "SelectiveClassifier", _NeverRejects(LinearSVC())
    )
    with pytest.raises(AssertionError):  # the checks do fail with the rejections
        estimator_checks.check_classifiers_train(
            "SelectiveClassifier", SelectiveClassifier(LinearSVC())
        )


# --------------------------------------------------------------------------------------------
# Parity with `python -m rejectopt select` / `apply` on the sattelite example of docs/guide/selective.md
# --------------------------------------------------------------------------------------------
def _table(X, y, y_pred, rows):
    frame = pd.DataFrame(X[rows], columns=[f"f{j}" for j in range(X.shape[1])])
    if y is not None:
        frame["y"] = y[rows]
    frame["y_pred"] = y_pred[rows]
    return frame


@pytest.fixture(scope="module")
def readme_example(tmp_path_factory):
    """The command-line example of docs/guide/selective.md, run through the command line."""
    tmp = tmp_path_factory.mktemp("readme")
    prepare_dataset("sattelite", tmp / "raw", tmp / "sattelite.npz", mirror=DEMO_MIRROR)
    X, y = load_prepared(tmp / "sattelite.npz")
    rows = np.random.default_rng(0).permutation(len(y))
    trn, val, new = rows[:1500], rows[1500:4000], rows[4000:]
    clf = make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000)).fit(X[trn], y[trn])
    y_pred = clf.predict(X)
    _table(X, y, y_pred, val).to_csv(tmp / "val.csv", index=False)
    _table(X, None, y_pred, new).to_csv(tmp / "new.csv", index=False)
    assert (
        cli.main(
            [
                "select",
                "--data",
                str(tmp / "val.csv"),
                "--target",
                "coverage=0.8",
                "--out",
                str(tmp / "selection"),
                "-q",
            ]
        )
        == 0
    )
    assert (
        cli.main(
            [
                "apply",
                "--model",
                str(tmp / "selection" / "model.json"),
                "--data",
                str(tmp / "new.csv"),
                "--out",
                str(tmp / "decisions.csv"),
                "-q",
            ]
        )
        == 0
    )
    return {"tmp": tmp, "X": X, "y": y, "clf": clf, "val": val, "new": new}


def _decisions(path):
    frame = pd.read_csv(path, dtype={"uncertainty": str, "acceptance_probability": str})
    return {
        "accept": frame["accept"].to_numpy() == 1,
        "uncertainty": frame["uncertainty"].map(float).to_numpy(),  # exact parse of %.17g
        "acceptance_probability": frame["acceptance_probability"].map(float).to_numpy(),
    }


def test_prefit_decides_exactly_as_select_and_apply(readme_example):
    ex = readme_example
    X, y, val, new = ex["X"], ex["y"], ex["val"], ex["new"]
    model = SelectiveClassifier(
        ex["clf"],
        uncertainty_score="sele",
        prefit=True,
        target="coverage",
        value=0.8,
        random_state=0,
    )
    model.fit(X[val], y[val])
    assert model.estimator_ is ex["clf"]
    saved = json.loads((ex["tmp"] / "selection" / "model.json").read_text())
    report = json.loads((ex["tmp"] / "selection" / "report.json").read_text())
    # the same rows, C, score and selection function as `select`
    assert model.C_ == report["C"]
    assert model.validation_aurc_ == {float(c): v for c, v in report["validation_aurc"].items()}
    assert model.selection_.to_dict() == saved["selection"]
    for name in ("coef", "intercept", "mean", "scale"):
        np.testing.assert_array_equal(
            getattr(model.uncertainty_score_, f"{name}_"), np.asarray(saved["score"][name])
        )
    assert model.report_["coverage_expected"] == report["report"]["coverage"]
    assert model.report_["selective_risk"] == report["report"]["selective_risk"]
    assert model.report_["risk_unit"] == report["risk_unit"] == "%"
    assert {k: v.size for k, v in model.split_.items()} == {
        "classifier": 0,
        "fit": 875,
        "validation": 375,
        "calibration": 750,
        "report": 500,
    }
    for name, rows in split_rows(len(val), seed=0).items():
        np.testing.assert_array_equal(model.split_[name], rows)
    # the same decisions as `apply` on the 2,435 new rows
    expected = _decisions(ex["tmp"] / "decisions.csv")
    np.testing.assert_array_equal(model.predict_uncertainty(X[new]), expected["uncertainty"])
    np.testing.assert_array_equal(
        model.acceptance_probability(X[new]), expected["acceptance_probability"]
    )
    np.testing.assert_array_equal(model.accept(X[new]), expected["accept"])
    np.testing.assert_array_equal(
        model.predict(X[new]), np.where(expected["accept"], ex["clf"].predict(X[new]), -1)
    )
    coverage = expected["accept"].mean()
    print(
        f"README example: estimator and CLI accept the same {expected['accept'].sum()} of {len(new)} new rows "
        f"(coverage {coverage:.4f})"
    )
    assert abs(coverage - 0.8) < 3 * np.sqrt(0.8 * 0.2 / len(new))


def test_sequential_ties_reproduce_apply_draws(readme_example, tmp_path):
    """A risk target randomises at the threshold; with tie_breaking="sequential" the draws are apply's."""
    ex = readme_example
    X, y, val, new = ex["X"], ex["y"], ex["val"], ex["new"]
    assert (
        cli.main(
            [
                "select",
                "--data",
                str(ex["tmp"] / "val.csv"),
                "--target",
                "risk=8",
                "--seed",
                "3",
                "--C",
                "1",
                "--out",
                str(tmp_path / "sel"),
                "-q",
            ]
        )
        == 0
    )
    model = SelectiveClassifier(
        ex["clf"],
        uncertainty_score="sele",
        prefit=True,
        target="risk",
        value=8,
        random_state=3,
        C_grid=(1.0,),
        tie_breaking="sequential",
    ).fit(X[val], y[val])
    assert (
        model.selection_.to_dict()
        == json.loads((tmp_path / "sel" / "model.json").read_text())["selection"]
    )
    assert 0.0 < model.selection_.accept_prob < 1.0
    # new rows plus 40 copies of the calibration row that sits exactly on the threshold
    u_val = model.predict_uncertainty(X[val])
    boundary = val[np.flatnonzero(u_val == model.selection_.threshold)[0]]
    rows = np.concatenate([new[:300], np.repeat(boundary, 40), new[300:600]])
    _table(X, None, ex["clf"].predict(X), rows).to_csv(tmp_path / "ties.csv", index=False)
    assert (
        cli.main(
            [
                "apply",
                "--model",
                str(tmp_path / "sel" / "model.json"),
                "--data",
                str(tmp_path / "ties.csv"),
                "--seed",
                "3",
                "--out",
                str(tmp_path / "decisions.csv"),
                "-q",
            ]
        )
        == 0
    )
    expected = _decisions(tmp_path / "decisions.csv")
    assert 0 < expected["accept"][300:340].sum() < 40  # the copies were drawn
    np.testing.assert_array_equal(model.accept(X[rows]), expected["accept"])
    # the default hash draws (tie_breaking is read at prediction time) decide every copy of an input alike
    hashed = model.set_params(tie_breaking="hash")
    decisions = hashed.accept(X[rows])
    assert len(set(decisions[300:340].tolist())) == 1
    np.testing.assert_array_equal(decisions[300:340], hashed.accept(X[[boundary]]).repeat(40))
    off_threshold = expected["acceptance_probability"] != model.selection_.accept_prob
    np.testing.assert_array_equal(decisions[off_threshold], expected["accept"][off_threshold])


class _RelabelMarked:
    """A fitted classifier that predicts the label 99 (never seen at fit) for rows whose first feature is 0.5."""

    def __init__(self, clf):
        self.clf = clf

    def predict(self, X):
        X = np.asarray(X)
        return np.where(X[:, 0] == 0.5, 99, self.clf.predict(X))


def test_hostile_rows_get_the_same_answer_from_the_estimator_and_apply(readme_example, tmp_path):
    """Overflowing features and an unseen class are rejected by both routes alike; NaN and a missing column refused."""
    ex = readme_example
    X, y, val, new = ex["X"], ex["y"], ex["val"], ex["new"]
    clf = _RelabelMarked(ex["clf"])
    model = SelectiveClassifier(
        clf, prefit=True, target="coverage", value=0.8, random_state=0, tie_breaking="sequential"
    ).fit(X[val], y[val])
    hostile = X[new[:40]].copy()
    values = [1e308, -1e308, 1e200, 1e151, -1e151]
    for i, value in enumerate(values):
        hostile[i, 3 + i] = value
    hostile[10, 0] = 0.5  # predicted as class 99
    y_pred = clf.predict(hostile)
    assert y_pred[10] == 99
    frame = _table(hostile, None, y_pred, np.arange(len(hostile)))
    frame.to_csv(tmp_path / "hostile.csv", index=False)
    assert (
        cli.main(
            [
                "apply",
                "--model",
                str(ex["tmp"] / "selection" / "model.json"),
                "--data",
                str(tmp_path / "hostile.csv"),
                "--unseen-classes",
                "reject",
                "--out",
                str(tmp_path / "decisions.csv"),
                "-q",
            ]
        )
        == 0
    )
    expected = _decisions(tmp_path / "decisions.csv")
    guarded = np.zeros(len(hostile), dtype=bool)
    guarded[[0, 1, 2, 3, 4, 10]] = True
    # without the guard, LR accepted most such rows as the most certain; now never
    assert (
        not expected["accept"][guarded].any() and np.isinf(expected["uncertainty"][guarded]).all()
    )
    np.testing.assert_array_equal(model.accept(hostile), expected["accept"])
    np.testing.assert_array_equal(model.predict_uncertainty(hostile), expected["uncertainty"])
    np.testing.assert_array_equal(
        model.acceptance_probability(hostile), expected["acceptance_probability"]
    )
    assert (model.predict(hostile)[guarded] == -1).all()
    assert expected["accept"][~guarded].mean() > 0.5  # the other rows are decided as usual
    # NaN: both refuse
    nan_rows = hostile[11:13].copy()
    nan_rows[1, 2] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        model.predict(nan_rows)
    _table(nan_rows, None, ex["clf"].predict(np.nan_to_num(nan_rows)), np.arange(2)).to_csv(
        tmp_path / "nan.csv", index=False
    )
    assert (
        cli.main(
            [
                "apply",
                "--model",
                str(ex["tmp"] / "selection" / "model.json"),
                "--data",
                str(tmp_path / "nan.csv"),
                "--out",
                str(tmp_path / "nan_out.csv"),
                "-q",
            ]
        )
        == 2
    )
    # a missing feature column: both refuse, naming the count or the column
    with pytest.raises(ValueError, match="features"):
        model.predict(hostile[:, :-1])
    frame.drop(columns=["f35"]).to_csv(tmp_path / "missing.csv", index=False)
    assert (
        cli.main(
            [
                "apply",
                "--model",
                str(ex["tmp"] / "selection" / "model.json"),
                "--data",
                str(tmp_path / "missing.csv"),
                "--out",
                str(tmp_path / "missing_out.csv"),
                "-q",
            ]
        )
        == 2
    )


def test_fit_refuses_an_overflowing_training_row_naming_it(iris):
    X, y = iris[0].copy(), iris[1]
    X[17, 2] = 1e308
    with pytest.raises(ValueError, match=r"value 1e\+308 at row 17, column 2 is out of range"):
        SelectiveClassifier(LogisticRegression(max_iter=500)).fit(X, y)


# --------------------------------------------------------------------------------------------
# scikit-learn composition
# --------------------------------------------------------------------------------------------
def test_pipeline_and_grid_search(iris):
    X_trn, y_trn, X_val, y_val = iris
    model = make_pipeline(StandardScaler(), SelectiveClassifier(LinearSVC(), C_grid=(1.0,)))
    labels = model.fit(X_trn, y_trn).predict(X_val)
    assert set(np.unique(labels)) <= set(np.unique(y_trn)) | {-1}
    search = GridSearchCV(
        make_pipeline(StandardScaler(), SelectiveClassifier(LinearSVC(), C_grid=(1.0,))),
        {
            "selectiveclassifier__value": [0.7, 0.95],
            "selectiveclassifier__estimator__C": [0.01, 1.0],
        },
        cv=2,
    )
    search.fit(X_trn, y_trn)
    assert set(search.best_params_) == {
        "selectiveclassifier__value",
        "selectiveclassifier__estimator__C",
    }
    assert np.all(
        (search.cv_results_["mean_test_score"] > 0.5) & (search.cv_results_["mean_test_score"] <= 1)
    )
    assert search.best_estimator_.score(X_val, y_val) > 0.8


def test_prefit_frozen_classifier_in_grid_search(iris):
    """clone() refits nothing: a FrozenEstimator keeps a prefit classifier fitted through GridSearchCV."""
    X_trn, y_trn, X_val, y_val = iris
    clf = GaussianNB().fit(X_val, y_val)
    search = GridSearchCV(
        SelectiveClassifier(FrozenEstimator(clf), prefit=True, C_grid=(1.0,)),
        {"value": [0.6, 0.9]},
        cv=2,
    ).fit(X_trn, y_trn)
    assert search.best_estimator_.estimator_.estimator is clf
    np.testing.assert_array_equal(
        search.best_estimator_.estimator_.predict(X_trn), clf.predict(X_trn)
    )


def test_predict_score_and_confusion_matrix(iris):
    X_trn, y_trn, X_val, y_val = iris
    model = SelectiveClassifier(
        GaussianNB(), uncertainty_score="reg", value=0.7, random_state=1
    ).fit(X_trn, y_trn)
    labels = model.predict(X_val)
    accept = model.accept(X_val)
    base = model.estimator_.predict(X_val)
    np.testing.assert_array_equal(labels, np.where(accept, base, -1))
    assert labels.dtype == y_trn.dtype
    assert model.score(X_val, y_val) == pytest.approx(np.mean(base[accept] == y_val[accept]))
    weights = np.linspace(1, 2, len(y_val))
    assert model.score(X_val, y_val, sample_weight=weights) == pytest.approx(
        np.average(base[accept] == y_val[accept], weights=weights[accept])
    )
    counts = reject_confusion_matrix(y_val, base, ~accept)
    assert counts.sum() == len(y_val) and counts[0].sum() == accept.sum()
    assert counts[0, 1] / counts[0].sum() == pytest.approx(1 - model.score(X_val, y_val))
    model.selection_ = SelectionFunction(threshold=-np.inf, accept_prob=0.0)  # reject everything
    assert np.isnan(model.score(X_val, y_val))
    assert np.all(model.predict(X_val) == -1)


def test_dataframe_reaches_the_classifier_with_its_column_names(iris):
    X_trn, y_trn, X_val, _ = iris
    columns = ["sepal_l", "sepal_w", "petal_l", "petal_w"]
    by_name = make_pipeline(
        ColumnTransformer([("petals", StandardScaler(), ["petal_l", "petal_w"])]), LinearSVC()
    )
    model = SelectiveClassifier(by_name, C_grid=(1.0,)).fit(
        pd.DataFrame(X_trn, columns=columns), y_trn
    )
    assert model.feature_names_in_.tolist() == columns
    labels = model.predict(pd.DataFrame(X_val, columns=columns))
    np.testing.assert_array_equal(labels, model.predict(pd.DataFrame(X_val, columns=columns)))
    assert model.uncertainty_score_.n_features_in_ == 4  # the score sees every column as floats


def test_string_labels_and_reject_label_types(iris):
    X_trn, y_trn, X_val, _ = iris
    names = np.array(["setosa", "versicolor", "virginica"])
    model = SelectiveClassifier(GaussianNB(), C_grid=(1.0,), reject_label="abstain")
    labels = model.fit(X_trn, names[y_trn]).predict(X_val)
    assert labels.dtype.kind == "U" and set(labels) <= set(names) | {"abstain"}
    mixed = model.set_params(reject_label=-1).fit(X_trn, names[y_trn]).predict(X_val)
    assert mixed.dtype == object and set(mixed.tolist()) <= set(names) | {-1}
    with pytest.raises(ValueError, match="reject_label='setosa' is one of the classes"):
        model.set_params(reject_label="setosa").fit(X_trn, names[y_trn])


@pytest.mark.parametrize(
    "kind, expected",
    [("text", "reject"), ("object text", "reject"), ("int", -1), ("float", -1)],
)
def test_the_default_reject_label_has_the_classes_type(kind, expected, iris):
    """reject_label=None: -1 among numbers, "reject" among text, so predict keeps the classes'
    dtype kind (text classes once got -1 in an object array)."""
    X_trn, y_trn, X_val, _ = iris
    y = {
        "text": np.array(["setosa", "versicolor", "virginica"])[y_trn],
        "object text": pd.Series(["setosa", "versicolor", "virginica"])
        .iloc[y_trn]
        .to_numpy(object),
        "int": y_trn,
        "float": y_trn.astype(float),
    }[kind]
    model = SelectiveClassifier(GaussianNB(), C_grid=(1.0,), value=0.7).fit(X_trn, y)
    labels = model.predict(X_val)
    assert model.reject_label is None and model.reject_label_ == expected
    # the classifier's own kind: text for text, numbers for numbers (an object y may stay object)
    assert labels.dtype.kind == np.asarray(model.estimator_.predict(X_val)).dtype.kind
    assert labels.dtype.kind == {"text": "U", "int": "i", "float": "f"}.get(kind, labels.dtype.kind)
    accept = model.accept(X_val)
    assert 0 < accept.sum() < len(X_val)  # both kinds of row are there to check
    assert (labels[~accept] == expected).all()
    assert set(labels[accept].tolist()) <= set(np.unique(y).tolist())


@pytest.mark.parametrize(
    "y, params, message",
    [
        (
            np.array([-1, 0, 1]),
            {},
            r"^reject_label=None \(the default\) labels a rejection -1 for numeric classes, and -1 "
            r"is one of the classes \[-1, 0, 1\]; pass a label that is no class, e.g\. "
            r"reject_label=-2$",
        ),
        (
            np.array(["reject", "keep", "other"]),
            {},
            r"^reject_label=None \(the default\) labels a rejection 'reject' for text classes, and "
            r"'reject' is one of the classes \['keep', 'other', 'reject'\]; pass a label that is no "
            r"class, e.g\. reject_label='abstain'$",
        ),
        (
            np.array(["setosa", "versicolor", "virginica"]),
            {"reject_label": "setosa"},
            r"^reject_label='setosa' is one of the classes \['setosa', 'versicolor', 'virginica'\]; "
            r"choose another reject_label, e.g\. reject_label='reject'$",
        ),
        (
            np.array([-1.0, 0.0, 1.0]),
            {"reject_label": -1},
            r"^reject_label=-1 is one of the classes \[-1\.0, 0\.0, 1\.0\]; choose another "
            r"reject_label, e.g\. reject_label=-2$",
        ),
    ],
)
def test_a_reject_label_that_is_a_class_is_refused_by_name(y, params, message, iris):
    X_trn, y_trn, _, _ = iris
    model = SelectiveClassifier(GaussianNB(), C_grid=(1.0,), **params)
    with pytest.raises(ValueError, match=message):
        model.fit(X_trn, y[y_trn])


class _SignRule:
    """A 'classifier' with only predict: no fit, no classes_, no predict_proba."""

    def __init__(self, constant=None):
        self.constant = constant

    def predict(self, X):
        X = np.asarray(X)
        return (
            np.full(len(X), self.constant)
            if self.constant is not None
            else (X[:, 0] > 0).astype(int)
        )


def test_prefit_rule_without_posteriors_or_fit():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(1000, 3))
    flip = rng.random(1000) < 1 / (1 + np.exp(-(3 * X[:, 1] - 2)))  # errors grow with x1
    y = (X[:, 0] > 0).astype(int) ^ flip
    model = SelectiveClassifier(_SignRule(), prefit=True, C_grid=(1.0,)).fit(X, y)
    assert model.classes_.tolist() == [0, 1]
    assert np.corrcoef(model.predict_uncertainty(X), X[:, 1])[0, 1] > 0.5
    X_new = rng.normal(size=(2000, 3))
    wrong = rng.random(2000) < 1 / (1 + np.exp(-(3 * X_new[:, 1] - 2)))
    accept = model.accept(X_new)
    assert wrong[accept].mean() < 0.5 * wrong.mean()
    with pytest.raises(
        ValueError, match="uncertainty_score='tcp' needs an estimator with predict_proba"
    ):
        SelectiveClassifier(_SignRule(), prefit=True, uncertainty_score="tcp").fit(X, y)


def test_infeasible_risk_target_names_the_target():
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(200, 2)), rng.integers(0, 2, 200)
    with pytest.raises(
        InfeasibleTargetError,
        match=r"cannot meet target='risk', value=5 on the 60 calibration rows",
    ):
        SelectiveClassifier(_SignRule(constant=7), prefit=True, target="risk", value=5).fit(X, y)


def test_score_instances_and_tcp(iris):
    X_trn, y_trn, X_val, _ = iris
    for score in (SELE(chunk_size=50), REG(), "reg", "tcp", TCP(C=1.0)):
        model = SelectiveClassifier(
            GaussianNB(), uncertainty_score=score, C_grid=(1.0, 10.0), random_state=2
        ).fit(X_trn, y_trn)
        expected_type = {"tcp": TCP, "reg": REG}[score] if isinstance(score, str) else type(score)
        assert type(model.uncertainty_score_) is expected_type
        assert model.uncertainty_score_.n_classes_ == 3
        assert model.predict_uncertainty(X_val).shape == (len(X_val),)
    assert (
        SELE(chunk_size=50).get_params()["random_state"] == 0
    )  # the given instance is not modified


def test_hash_ties_are_batch_and_order_invariant():
    """Perfectly separable data: all losses zero, one constant score, every input on the threshold."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 2))
    y = (X[:, 0] > 0).astype(int)
    X[:, 0] += np.where(y == 1, 3.0, -3.0)
    model = SelectiveClassifier(
        LogisticRegression(), uncertainty_score="sele", C_grid=(1.0,), value=0.75
    ).fit(X, y)
    assert model.selection_.accept_prob == pytest.approx(0.75)
    X_new = rng.normal(size=(4000, 2))
    accept = model.accept(X_new)
    assert np.all(model.acceptance_probability(X_new) == model.selection_.accept_prob)
    assert abs(accept.mean() - 0.75) < 4 * np.sqrt(0.75 * 0.25 / 4000)
    perm = rng.permutation(4000)
    np.testing.assert_array_equal(model.accept(X_new[perm]), accept[perm])
    np.testing.assert_array_equal(model.accept(X_new[:7]), accept[:7])
    other_seed = clone(model).set_params(random_state=1).fit(X, y)
    assert not np.array_equal(other_seed.accept(X_new), accept)


def test_report_on_held_out_rows(digits):
    X_trn, y_trn, _, _ = digits
    model = SelectiveClassifier(
        LinearSVC(), uncertainty_score="sele", C_grid=(1.0,), value=0.8, cv=None
    ).fit(X_trn, y_trn)
    sizes = {name: rows.size for name, rows in model.split_.items()}
    assert sum(sizes.values()) == len(y_trn) and sizes["classifier"] == round(0.5 * len(y_trn))
    all_rows = np.concatenate(list(model.split_.values()))
    assert np.unique(all_rows).size == len(y_trn)
    assert (
        model.report_["n_rows"]
        == sizes["report"]
        == round(0.2 * (len(y_trn) - sizes["classifier"]))
    )
    assert sorted(model.report_) == [
        "coverage_expected",
        "coverage_reached",
        "n_rows",
        "risk_unit",
        "selective_risk",
    ]
    assert 0.6 < model.report_["coverage_expected"] <= 1.0
    rows = model.split_["report"]
    assert model.report_["coverage_reached"] == model.accept(X_trn[rows]).mean()
    accepted = model.accept(X_trn[rows])
    errors = 100.0 * (model.estimator_.predict(X_trn[rows]) != y_trn[rows])
    # no report row ties at the threshold, so no draw: the expected coverage is the one reached
    assert not np.any(model.predict_uncertainty(X_trn[rows]) == model.selection_.threshold)
    assert model.report_["coverage_expected"] == pytest.approx(model.report_["coverage_reached"])
    assert model.report_["selective_risk"] == pytest.approx(errors[accepted].mean())
    assert model.report_["risk_unit"] == "%"
    assert model.random_seed_ == 0


@pytest.mark.parametrize(
    "params, match",
    [
        (
            {"target": "accuracy"},
            r"^target='accuracy', value=0\.8: target kind must be one of 'coverage', 'risk', "
            r"'reject-cost', got 'accuracy'$",
        ),
        (
            {"value": 1.5},
            r"^target='coverage', value=1\.5: target: coverage must be a number in \(0, 1\], got 1\.5$",
        ),
        (
            {"target": "risk", "value": -1},
            r"^target='risk', value=-1: target: risk must be a finite number > 0 \(loss units\)",
        ),
        (
            {"target": "reject_cost", "value": np.nan},
            r"value=nan: target: reject-cost must be a finite number >= 0, got nan$",
        ),
        ({"uncertainty_score": "sel"}, "uncertainty_score: .*'sele'"),
        (
            {"uncertainty_score": "face_score"},
            "uncertainty_score='face_score' is computed from outputs a classifier of this",
        ),
        ({"uncertainty_score": 3}, "uncertainty_score must be 'auto', the name of a learned score"),
        ({"tie_breaking": "random"}, "tie_breaking must be one of 'hash', 'sequential'"),
        ({"loss": "hinge"}, "loss must be one of 'zero_one', 'mae'"),
        ({"calibration_fraction": 1.0}, r"calibration_fraction must lie in \(0, 1\)"),
        ({"report_fraction": 0.0}, r"report_fraction must lie in \(0, 1\)"),
        (
            {"calibration_fraction": 0.6, "report_fraction": 0.5},
            "calibration_fraction \\+ report_fraction",
        ),
        ({"C_grid": ()}, "C_grid must be a non-empty sequence"),
        ({"n_jobs": 0}, "n_jobs must be None or an integer >= 1"),
        ({"random_state": -3}, "random_state must be a non-negative integer"),
        ({"reject_label": 2}, "reject_label=2 is one of the classes"),
        (
            {"confidence": 1.5},
            r"^target='coverage', value=0\.8, confidence=1\.5: confidence must lie in \(0, 1\) "
            r"\(it is 1 - delta, e\.g\. 0\.95\), got 1\.5$",
        ),
    ],
)
def test_parameter_errors_name_the_parameter(params, match, iris):
    X_trn, y_trn, _, _ = iris
    with pytest.raises(ValueError, match=match):
        SelectiveClassifier(LinearSVC(), C_grid=(1.0,)).set_params(**params).fit(X_trn, y_trn)


def test_input_errors(iris):
    X_trn, y_trn, _, _ = iris
    with pytest.raises(ValueError, match="n_samples = 4"):
        SelectiveClassifier(LogisticRegression()).fit(X_trn[:4], y_trn[:4])
    with pytest.raises(ValueError, match="prefit=True but the estimator is not fitted"):
        SelectiveClassifier(LogisticRegression(), prefit=True).fit(X_trn, y_trn)
    with pytest.raises(ValueError, match="estimator must have predict and fit"):
        SelectiveClassifier(object()).fit(X_trn, y_trn)


# --------------------------------------------------------------------------------------------
# Hostile rows and inputs: the library answers as the CLI does
# --------------------------------------------------------------------------------------------
class _Recording:
    """A fitted classifier that records the largest magnitude of the features it is shown."""

    def __init__(self, clf):
        self.clf, self.classes_, self.largest = clf, clf.classes_, 0.0

    def predict(self, X):
        self.largest = max(self.largest, float(np.abs(np.asarray(X)).max()))
        return self.clf.predict(X)


def test_digits_rows_out_of_range_are_rejected_with_a_warning_and_never_reach_the_classifier():
    """384 digits rows with one feature of +-1e308, +-1e200 or +-1e151 (LR accepted 201 of them before the guard)."""
    X, y = load_digits(return_X_y=True)
    clf = _Recording(LogisticRegression(max_iter=2000).fit(X[:600], y[:600]))
    model = SelectiveClassifier(clf, prefit=True, C_grid=(1.0,), value=0.9).fit(
        X[600:1200], y[600:1200]
    )
    rows = []
    for value in (1e308, -1e308, 1e200, -1e200, 1e151, -1e151):
        for j in range(64):
            row = X[1200 + j].copy()
            row[j] = value
            rows.append(row)
    hostile = np.vstack([np.array(rows), X[1300:1316]])
    with pytest.warns(
        UserWarning,
        match=r"^384 row\(s\) with a value out of range \(first: value 1e\+308 at row 0, "
        r"column 0: values must lie within \+-1e\+150",
    ):
        labels = model.predict(hostile)
    assert (
        labels[:384] == -1
    ).all() and clf.largest <= 16.0  # the classifier saw the 16 ordinary rows only
    np.testing.assert_array_equal(
        labels[384:], np.where(model.accept(X[1300:1316]), clf.predict(X[1300:1316]), -1)
    )


def test_nan_and_text_are_refused_naming_row_and_column(iris):
    X_trn, y_trn, X_val, _ = iris
    columns = ["sepal_l", "sepal_w", "petal_l", "petal_w"]
    model = SelectiveClassifier(LogisticRegression(max_iter=500), C_grid=(1.0,)).fit(
        pd.DataFrame(X_trn, columns=columns), y_trn
    )
    new = pd.DataFrame(
        X_val[:5].copy(), columns=columns
    )  # pandas < 3 wraps the array: keep the fixture intact
    new.iloc[3, 2] = np.inf
    with pytest.raises(
        ValueError, match=r"^X: value inf at row 3, column 2 \('petal_l'\) is not a finite number"
    ):
        model.predict(new)
    bad = X_trn.copy()
    bad[11, 1] = np.nan
    with pytest.raises(
        ValueError,
        match=r"^X: value NaN at row 11, column 1 is out of range: values must be finite",
    ):
        SelectiveClassifier(LogisticRegression()).fit(bad, y_trn)
    text = pd.DataFrame(X_trn, columns=columns).astype({"sepal_w": str})
    with pytest.raises(
        ValueError,
        match=r"^X: column 'sepal_w' holds .* values \(e\.g\. '3\.\d+' at row 0\), not "
        r"numbers",
    ):
        SelectiveClassifier(LogisticRegression()).fit(text, y_trn)
    words = pd.DataFrame(X_val[:5], columns=columns).assign(colour="red")
    with pytest.raises(ValueError, match=r"X: column 'colour' holds .* \(e\.g\. 'red' at row 0\)"):
        model.predict(words)


class _Duck:
    """A fitted classifier with predict and predict_proba but no classes_ (duck typing)."""

    def __init__(self, clf):
        self.clf = clf

    def predict(self, X):
        return self.clf.predict(X)

    def predict_proba(self, X):
        return self.clf.predict_proba(X)


def test_tcp_with_a_classifier_without_classes_names_what_is_missing(iris):
    X_trn, y_trn, X_val, y_val = iris
    duck = _Duck(LogisticRegression(max_iter=500).fit(X_val, y_val))
    with pytest.raises(
        ValueError,
        match=r"uncertainty_score='tcp' needs the estimator's classes_ .* _Duck has "
        r"predict_proba but no classes_",
    ):
        SelectiveClassifier(duck, prefit=True, uncertainty_score="tcp", C_grid=(1.0,)).fit(
            X_trn, y_trn
        )
    model = SelectiveClassifier(duck, prefit=True, C_grid=(1.0,)).fit(
        X_trn, y_trn
    )  # SELE needs no classes_
    assert model.classes_.tolist() == [0, 1, 2]


def test_labels_never_predicted_warn_as_select_does(iris):
    X_trn, y_trn, X_val, y_val = iris
    clf = LogisticRegression(max_iter=500).fit(X_val, y_val)  # predicts 0, 1, 2
    names = np.array(["setosa", "versicolor", "virginica"])
    with pytest.warns(
        UserWarning,
        match=r"no label of y \(setosa, versicolor, virginica\) is ever predicted by the "
        r"classifier \(0, 1, 2\): every prediction counts as an error",
    ):
        model = SelectiveClassifier(clf, prefit=True, C_grid=(1.0,), reject_label="abstain").fit(
            X_trn, names[y_trn]
        )
    assert model.classes_.tolist() == ["setosa", "versicolor", "virginica", 0, 1, 2]
    assert set(model.predict(X_val).tolist()) <= {0, 1, 2, "abstain"}


def test_all_correct_rows_and_tied_coverage_warn_as_select_reports():
    """Digits 0 and 1: LR makes no error, SELE is constant, every row ties; the hash draws reach 0.36 for 0.6."""
    X, y = load_digits(return_X_y=True)
    X, y = X[y < 2], y[y < 2]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = SelectiveClassifier(
            LogisticRegression(max_iter=2000),
            uncertainty_score="sele",
            C_grid=(1.0,),
            value=0.6,
            cv=None,
        ).fit(X, y)
    messages = [str(w.message) for w in caught if issubclass(w.category, UserWarning)]
    assert messages[0].startswith(
        "every loss is 0 (all 180 predictions of the rows after the classifier's part are "
        "correct): there is nothing to learn"
    )
    report_rows = model.split_["report"]
    reached = model.accept(X[report_rows]).mean()
    assert model.report_["coverage_reached"] == reached == 13 / 36
    assert model.report_["coverage_expected"] == pytest.approx(
        0.6
    )  # expected over the draws: the target
    low, high = wilson_interval(13, 36)
    assert (round(low, 3), round(high, 3)) == (0.225, 0.524)
    assert messages[1] == (
        f"the 36 held-out report rows miss target='coverage', value=0.6: their coverage 0.3611 lies "
        f"outside 0.6 beyond its 95 % interval [{low:.4g}, {high:.4g}]: 36 of them tie at the "
        "threshold and are accepted with probability 0.6 each, drawn by tie_breaking='hash'; expect "
        "a coverage off the target on new rows too (a score with fewer ties, or more rows, brings "
        "it closer)"
    )


class _InfAtPredict:
    """A user's score instance: REG's ridge regression of the loss, but -inf on rows whose first pixel
    is 0 once fitted."""

    def __init__(self, C=1.0, poison=False):
        self.C, self.poison = C, poison

    def get_params(self, deep=True):
        return {"C": self.C, "poison": self.poison}

    def set_params(self, **params):
        for key, value in params.items():
            setattr(self, key, value)
        return self

    def fit(self, X, y_pred, loss):
        self.reg_ = REG(C=self.C).fit(X, y_pred, loss)
        return self

    def predict(self, X, y_pred):
        s = self.reg_.predict(X, y_pred)
        return np.where(np.asarray(X)[:, 0] == 0, -np.inf, s) if self.poison else s


def test_a_users_score_with_non_finite_values_at_predict_time_is_named(digits):
    X_trn, y_trn, X_val, _ = digits
    model = SelectiveClassifier(GaussianNB(), uncertainty_score=_InfAtPredict(), C_grid=(1.0,)).fit(
        X_trn, y_trn
    )
    model.uncertainty_score_.poison = True
    with pytest.raises(
        ScoreError,
        match=rf"^uncertainty score \(class test_estimator._InfAtPredict in "
        rf"{__file__}\): predict returned the uncertainty -inf at row index 0",
    ):
        model.predict(X_val)


# --------------------------------------------------------------------------------------------
# scikit-learn's meta-estimator conventions: fit parameters, delegated methods, frozen estimators
# --------------------------------------------------------------------------------------------
def test_sample_weight_reaches_the_classifier_only_with_routing_off_and_on():
    """The classifier is fitted with the weights of its rows; the score and the selection see every row once."""
    import sklearn
    from sklearn.datasets import load_breast_cancer
    from sklearn.exceptions import UnsetMetadataPassedError
    from sklearn.neighbors import KNeighborsClassifier

    X, y = load_breast_cancer(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    w = np.random.default_rng(0).uniform(0.1, 5.0, len(y))
    model = SelectiveClassifier(
        LogisticRegression(), uncertainty_score="sele", C_grid=(1.0,), cv=None
    ).fit(X, y, sample_weight=w)
    rows = model.split_["classifier"]
    weighted = LogisticRegression().fit(X[rows], y[rows], sample_weight=w[rows])
    np.testing.assert_array_equal(model.estimator_.coef_, weighted.coef_)
    assert not np.allclose(weighted.coef_, LogisticRegression().fit(X[rows], y[rows]).coef_)
    # the score and the selection function: those of the same classifier, frozen, on the other rows, unweighted
    rest = np.setdiff1d(np.arange(len(y)), rows)
    frozen = SelectiveClassifier(
        FrozenEstimator(weighted), uncertainty_score="sele", C_grid=(1.0,)
    ).fit(X[rest], y[rest])
    assert frozen.selection_ == model.selection_
    np.testing.assert_array_equal(frozen.uncertainty_score_.coef_, model.uncertainty_score_.coef_)
    with sklearn.config_context(enable_metadata_routing=True):
        routed = SelectiveClassifier(
            LogisticRegression().set_fit_request(sample_weight=True),
            uncertainty_score="sele",
            C_grid=(1.0,),
            cv=None,
        )
        np.testing.assert_array_equal(
            routed.fit(X, y, sample_weight=w).estimator_.coef_, weighted.coef_
        )
        with pytest.raises(
            UnsetMetadataPassedError, match=r"\[sample_weight\] are passed but are not explicitly"
        ):
            SelectiveClassifier(LogisticRegression(), uncertainty_score="sele", C_grid=(1.0,)).fit(
                X, y, sample_weight=w
            )
        # scoring weights are the estimator's own request (score consumes sample_weight)
        routing = (
            SelectiveClassifier(LogisticRegression())
            .set_score_request(sample_weight=True)
            .get_metadata_routing()
        )
        assert routing.consumes("score", ["sample_weight"]) == {"sample_weight"}
    with pytest.raises(
        ValueError, match=r"sample_weight was given but KNeighborsClassifier\.fit does not accept"
    ):
        SelectiveClassifier(KNeighborsClassifier(), C_grid=(1.0,)).fit(X, y, sample_weight=w)
    with pytest.raises(
        ValueError, match=r"got \['classes'\]: with metadata routing off, only sample_weight"
    ):
        SelectiveClassifier(LogisticRegression(), C_grid=(1.0,)).fit(X, y, classes=[0, 1])
    with pytest.raises(
        ValueError,
        match=r"fit parameters \['sample_weight'\] are for the estimator's fit, but "
        r"prefit=True",
    ):
        SelectiveClassifier(weighted, prefit=True, C_grid=(1.0,)).fit(X, y, sample_weight=w)


def test_predict_proba_and_decision_function_are_the_classifiers(iris):
    X_trn, y_trn, X_val, y_val = iris
    model = SelectiveClassifier(LogisticRegression(max_iter=1000), C_grid=(1.0,)).fit(X_trn, y_trn)
    np.testing.assert_array_equal(model.predict_proba(X_val), model.estimator_.predict_proba(X_val))
    np.testing.assert_array_equal(
        model.predict_log_proba(X_val), model.estimator_.predict_log_proba(X_val)
    )
    np.testing.assert_array_equal(
        model.decision_function(X_val), model.estimator_.decision_function(X_val)
    )
    assert not hasattr(SelectiveClassifier(LinearSVC()), "predict_proba")  # LinearSVC has none
    assert hasattr(SelectiveClassifier(LinearSVC()), "decision_function")
    assert not hasattr(SelectiveClassifier(GaussianNB()), "decision_function")
    # a prefit classifier that knows classes 0 and 1 only: class 2's column is 0 (and -inf)
    binary = LogisticRegression().fit(X_val[y_val < 2], y_val[y_val < 2])
    wide = SelectiveClassifier(binary, prefit=True, C_grid=(1.0,)).fit(X_trn, y_trn)
    assert wide.classes_.tolist() == [0, 1, 2]
    proba = wide.predict_proba(X_val)
    np.testing.assert_array_equal(proba[:, :2], binary.predict_proba(X_val))
    assert (proba[:, 2] == 0).all() and np.isneginf(wide.predict_log_proba(X_val)[:, 2]).all()
    with pytest.raises(
        ValueError,
        match=r"decision_function: the classifier's classes \[0, 1\] differ from "
        r"classes_ \[0, 1, 2\]",
    ):
        wide.decision_function(X_val)
    with pytest.raises(ValueError, match="X has 3 features"):
        model.predict_proba(X_val[:, :3])


def test_a_frozen_estimator_counts_as_fitted(iris):
    X_trn, y_trn, X_val, y_val = iris
    clf = GaussianNB().fit(X_val, y_val)
    frozen = SelectiveClassifier(FrozenEstimator(clf), C_grid=(1.0,)).fit(X_trn, y_trn)
    prefit = SelectiveClassifier(clf, prefit=True, C_grid=(1.0,)).fit(X_trn, y_trn)
    assert frozen.split_["classifier"].size == 0 and frozen.estimator_.estimator is clf
    assert frozen.selection_ == prefit.selection_
    np.testing.assert_array_equal(frozen.predict(X_val), prefit.predict(X_val))
    with pytest.raises(
        ValueError,
        match=r"the estimator is a FrozenEstimator \(used as fitted\) but the estimator "
        r"is not fitted",
    ):
        SelectiveClassifier(FrozenEstimator(GaussianNB())).fit(X_trn, y_trn)


# --------------------------------------------------------------------------------------------
# Risk targets: the unit, and a target missed beyond its interval
# --------------------------------------------------------------------------------------------
def _ordered_risk_sample(seed):
    """(X, y, accepted report rows): 900 rows whose selection at risk=0.02 % and at risk=2 % is known by construction.

    A classifier that predicts the majority label 0 errs exactly on the rows labelled 1. The one feature ``f0``
    ranks the rows of the estimator's split (with cross-fitting, :func:`split_rows` of all rows with the default
    fractions), from the lowest: 32 report rows (the 16th labelled 1), 40 calibration and 100 train rows labelled
    0; one calibration row labelled 1; 100 report, 180 calibration and 250 train rows labelled 0; the other 197
    rows labelled 1, calibration before report rows. One feature and one predicted class make the learned score
    ``w * f0 + b``, increasing in f0 for any ``w > 0`` (the errors at the top force it), so its last bits
    cannot reorder the rows. Returns the 32 lowest report rows as the third element.
    """
    n = 900
    parts = split_rows(n, seed=seed)
    cal, rep, train = (
        parts["calibration"],
        parts["report"],
        np.concatenate([parts["fit"], parts["validation"]]),
    )
    low, middle = [rep[:32], cal[:40], train[:100]], [rep[32:132], cal[41:221], train[100:350]]
    order = np.concatenate([*low, cal[40:41], *middle, cal[221:], rep[132:], train[350:]])
    f0 = np.empty(n)
    f0[order] = np.arange(n)
    y = np.ones(n, dtype=int)
    y[np.concatenate([*low, *middle])] = 0
    y[rep[15]] = 1  # the one error among the 32 lowest report rows
    return f0[:, None], y, rep[:32]


def test_a_risk_target_below_one_percent_and_a_missed_target_warn():
    """risk=0.02 (meant as 2 %?): the calibration rows meet 0.02 %, the report rows do not. By construction
    (:func:`_ordered_risk_sample`): the calibration rows' lowest 40 are correct and their 41st errs, so the
    threshold accepts exactly the 32 report rows below it, one of them an error: 3.125 %, whatever the fit's bits."""
    X, y, below = _ordered_risk_sample(seed=3)
    classifier = DummyClassifier(
        strategy="most_frequent"
    )  # predicts 0: errs exactly on the rows labelled 1
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = SelectiveClassifier(
            classifier,
            uncertainty_score="sele",
            target="risk",
            value=0.02,
            C_grid=(1.0,),
            random_state=3,
        ).fit(X, y)
    messages = [str(w.message) for w in caught if issubclass(w.category, UserWarning)]
    assert messages[0] == (
        "target='risk', value=0.02: the risk of the 0/100 loss is in percent (an error costs 100), "
        "so this asks for at most 0.02 % errors among the accepted predictions; if you meant the "
        "fraction 0.02 (2 %), ask for target='risk', value=2"
    )
    assert all(
        np.array_equal(model.split_[name], rows)
        for name, rows in split_rows(len(y), seed=3).items()
    )
    report = model.split_["report"]
    accept = model.selection_.acceptance_probability(model.predict_uncertainty(X[report]))
    errors = model.estimator_.predict(X[report]) != y[report]
    # the accepted report rows are the 32 built lowest, 1 error among them, as counted here from the data
    np.testing.assert_array_equal(accept, np.isin(report, below).astype(float))
    assert (accept.sum(), errors[accept > 0].sum()) == (32, 1)
    low, high = wilson_interval(1, 32)
    assert messages[1] == (
        f"the 180 held-out report rows miss target='risk', value=0.02: their selective risk 3.125 % "
        f"(95 % interval [{100 * low:.4g}, {100 * high:.4g}]) at coverage 0.1778 lies above 0.02 % "
        f"beyond its interval, against {100 * errors.mean():.4g} % when every row is accepted; the "
        "threshold fitted on the calibration rows does not hold on new rows: ask for a larger risk, "
        "or give more rows"
    )
    assert len(messages) == 2
    with warnings.catch_warnings():
        # 2 %: the calibration rows' threshold lies among their top errors (their 221 lowest hold 1 error, 3 more
        # keep the risk <= 2 %), above the 132 lowest report rows, 1 error: 0.76 %, met, no warning
        warnings.simplefilter("error")
        met = SelectiveClassifier(
            classifier,
            uncertainty_score="sele",
            target="risk",
            value=2,
            C_grid=(1.0,),
            random_state=3,
        ).fit(X, y)
    assert met.report_["selective_risk"] == pytest.approx(100 / 132)


# --------------------------------------------------------------------------------------------
# Model selection with selective scorers
# --------------------------------------------------------------------------------------------
def _aurc_by_hand(loss, uncertainty):
    order = np.argsort(uncertainty, kind="stable")
    return float(np.mean(np.cumsum(loss[order]) / np.arange(1, len(loss) + 1)))


def test_grid_search_with_selective_scorers_matches_an_independent_computation():
    """Breast cancer: the default score picks the lowest coverage; AuRC, risk and coverage scorers
    as computed by hand."""
    from sklearn.datasets import load_breast_cancer
    from sklearn.model_selection import StratifiedKFold, cross_val_score

    from rejectopt.metrics import selective_scorer

    X, y = load_breast_cancer(return_X_y=True)
    cv = StratifiedKFold(3)
    model = SelectiveClassifier(
        make_pipeline(StandardScaler(), LogisticRegression()),
        uncertainty_score="reg",
        C_grid=(1.0,),
        cv=None,
    )
    grid = {"value": [0.5, 0.8, 1.0], "estimator__logisticregression__C": [0.01, 1.0]}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        default = GridSearchCV(model, grid, cv=cv).fit(X, y)
        assert (
            default.best_params_["value"] == 0.5
        )  # selective accuracy rewards rejecting: the lowest coverage
        searches = {
            m: GridSearchCV(model, grid, scoring=selective_scorer(m), cv=cv).fit(X, y)
            for m in ("aurc", "selective_risk")
        }
        by_hand = {"aurc": {}, "selective_risk": {}}
        for C in grid["estimator__logisticregression__C"]:
            for value in grid["value"]:
                for k, (trn, tst) in enumerate(cv.split(X, y)):
                    fitted = (
                        clone(model)
                        .set_params(value=value, estimator__logisticregression__C=C)
                        .fit(X[trn], y[trn])
                    )
                    loss = 100.0 * (fitted.estimator_.predict(X[tst]) != y[tst])
                    by_hand["aurc"][C, value, k] = -_aurc_by_hand(
                        loss, fitted.predict_uncertainty(X[tst])
                    )
                    labels = fitted.predict(X[tst])
                    accepted = labels != -1
                    by_hand["selective_risk"][C, value, k] = -100.0 * np.mean(
                        labels[accepted] != y[tst][accepted]
                    )
    for metric, search in searches.items():
        for i, params in enumerate(search.cv_results_["params"]):
            C, value = params["estimator__logisticregression__C"], params["value"]
            for k in range(3):
                assert search.cv_results_[f"split{k}_test_score"][i] == pytest.approx(
                    by_hand[metric][C, value, k], abs=1e-12
                )
    # AuRC does not depend on the target: equal for every value at one C, so the search chooses the classifier
    aurc_scores = searches["aurc"].cv_results_["mean_test_score"].reshape(2, 3)
    assert (aurc_scores == aurc_scores[:, :1]).all() and aurc_scores[0, 0] != aurc_scores[1, 0]
    best_C = max(
        grid["estimator__logisticregression__C"],
        key=lambda C: np.mean([by_hand["aurc"][C, 0.5, k] for k in range(3)]),
    )
    assert searches["aurc"].best_params_["estimator__logisticregression__C"] == best_C
    # at a risk target of 2 %, the coverage scorer chooses the C that accepts most: the middle one
    risk_model = clone(model).set_params(target="risk", value=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        coverage = GridSearchCV(
            risk_model,
            {"estimator__logisticregression__C": [0.01, 0.1, 1.0]},
            scoring=selective_scorer("coverage"),
            cv=cv,
        ).fit(X, y)
        scores = cross_val_score(
            clone(risk_model).set_params(estimator__logisticregression__C=0.1),
            X,
            y,
            cv=cv,
            scoring=selective_scorer("coverage"),
        )
        hand = [
            np.mean(
                clone(risk_model)
                .set_params(estimator__logisticregression__C=0.1)
                .fit(X[trn], y[trn])
                .predict(X[tst])
                != -1
            )
            for trn, tst in cv.split(X, y)
        ]
    np.testing.assert_allclose(scores, hand, rtol=0, atol=1e-15)
    assert coverage.best_params_ == {"estimator__logisticregression__C": 0.1}
    assert coverage.best_score_ == pytest.approx(np.mean(hand), abs=1e-15)
    with pytest.raises(
        ValueError, match=r"metric must be one of 'aurc', 'selective_risk', 'coverage', got 'auroc'"
    ):
        selective_scorer("auroc")


# --------------------------------------------------------------------------------------------
# Certified targets
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("cv, n_calibration", [(None, 270), (5, 539)])
def test_confidence_certifies_the_target_on_the_calibration_rows(cv, n_calibration):
    """The selection is Target(kind, value, confidence).fit on the calibration rows' losses and uncertainties,
    of estimator_ itself (also when cross-fitted: the calibration rows stay out of the folds)."""
    from rejectopt.targets import Target

    X, y = load_digits(return_X_y=True)
    clf = make_pipeline(StandardScaler(), LogisticRegression())
    for kind, value in (("coverage", 0.7), ("risk", 10)):
        model = SelectiveClassifier(
            clf,
            target=kind,
            value=value,
            confidence=0.9,
            uncertainty_score="reg",
            C_grid=(1.0,),
            cv=cv,
        ).fit(X, y)
        cal = model.split_["calibration"]
        loss = 100.0 * (model.estimator_.predict(X[cal]) != y[cal])
        expected = Target(kind, value, confidence=0.9).fit(
            loss, model.predict_uncertainty(X[cal]), loss_bound=100.0
        )
        assert model.selection_ == expected
        assert (
            model.selection_.confidence == 0.9
            and model.selection_.n_calibration == cal.size == n_calibration
        )
        assert model.selection_.method == {"coverage": "order-statistic", "risk": "ltt"}[kind]
        if kind == "coverage":
            assert model.selection_.bound >= 0.7
        else:
            assert model.selection_.bound == 10 and model.report_["selective_risk"] <= 10
    with pytest.raises(
        InfeasibleTargetError,
        match=rf"^cannot meet target='risk', value=2, confidence=0\.9 on the "
        rf"{n_calibration} calibration rows: target risk=2 cannot be "
        r"certified",
    ):
        SelectiveClassifier(
            clf,
            target="risk",
            value=2,
            confidence=0.9,
            uncertainty_score="reg",
            C_grid=(1.0,),
            cv=cv,
        ).fit(X, y)
    with pytest.raises(
        ValueError,
        match=r"^target='reject-cost', value=5, confidence=0\.9: target reject-cost has no "
        r"certified form",
    ):
        SelectiveClassifier(clf, target="reject-cost", value=5, confidence=0.9).fit(X, y)


def test_confidence_with_the_absolute_error_uses_the_label_range_as_bound():
    """MAE on digits' labels 0..9: the loss bound is 9, from the labels, not from the errors seen."""
    from rejectopt.targets import Target

    X, y = load_digits(return_X_y=True)
    model = SelectiveClassifier(
        make_pipeline(StandardScaler(), LogisticRegression()),
        target="risk",
        value=1,
        loss="mae",
        confidence=0.9,
        uncertainty_score="reg",
        C_grid=(1.0,),
    ).fit(X, y)
    cal = model.split_["calibration"]
    loss = np.abs(model.estimator_.predict(X[cal]) - y[cal]).astype(float)
    assert loss.max() < 9
    expected = Target("risk", 1, confidence=0.9).fit(
        loss, model.predict_uncertainty(X[cal]), loss_bound=9.0
    )
    assert model.selection_ == expected and model.selection_.method == "ltt"
    assert model.report_["risk_unit"] == "MAE"  # label units, not the percent of the 0/100 loss
