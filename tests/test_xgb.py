"""Tests for the XGBoost classifier (rejectopt.classifiers._xgb) and its train_classifier wiring."""

import numpy as np
import pytest

from rejectopt.classifiers._training import classifier_outputs, train_classifier
from rejectopt.classifiers._xgb import XGB_GRID, XGBLabelSpaceClassifier, train_xgb

# Every test here trains XGBoost: the `pipeline` extra (conftest skips without it, or fails with CI=true).
pytestmark = pytest.mark.pipeline

SMALL_GRID = (
    {"max_depth": 2, "learning_rate": 0.3, "n_estimators": 60},
    {"max_depth": 4, "learning_rate": 0.1, "n_estimators": 60},
    {"max_depth": 1, "learning_rate": 0.05, "n_estimators": 5},
)


def test_picks_grid_point_with_smallest_validation_error(digits):
    Xt, yt, Xv, yv = digits
    model, index, errors = train_classifier("xgb", Xt, yt, Xv, yv, C_grid=SMALL_GRID, n_classes=10)
    direct = {}
    for k, point in enumerate(SMALL_GRID):
        m = XGBLabelSpaceClassifier(n_classes=10, random_state=0, **point).fit(Xt, yt, Xv, yv)
        direct[float(k)] = float(np.mean(m.predict(Xv) != yv))
    assert errors == pytest.approx(direct)
    best = min(direct.values())
    assert index == min(k for k in direct if direct[k] == best)  # ties -> earlier grid point
    assert isinstance(index, float)
    assert model.grid_index_ == int(index)
    assert model.best_params_["max_depth"] == SMALL_GRID[int(index)]["max_depth"]
    assert 1 <= model.best_params_["n_estimators"] <= SMALL_GRID[int(index)]["n_estimators"]
    assert np.mean(classifier_outputs("xgb", model, Xv)["y_pred"] != yv) == pytest.approx(
        errors[index]
    )
    assert len(set(direct.values())) > 1  # the grid actually discriminates


def test_outputs_proba_sums_to_one_and_baseline_is_mcp(iris):
    Xt, yt, Xv, yv = iris
    model, _, _ = train_classifier("xgb", Xt, yt, Xv, yv, C_grid=SMALL_GRID[:1])
    out = classifier_outputs("xgb", model, Xv)
    assert out["proba"].shape == (len(yv), 3)
    np.testing.assert_allclose(out["proba"].sum(axis=1), 1.0, atol=1e-12)
    np.testing.assert_array_equal(out["y_pred"], np.argmax(out["proba"], axis=1))
    np.testing.assert_allclose(out["baseline"], 1.0 - out["proba"].max(axis=1))
    assert out["y_pred"].dtype == np.int64


def test_label_space_kept_when_a_class_is_missing_from_training(iris):
    Xt, yt, Xv, yv = iris
    keep = yt != 1  # class 1 absent from training, present in validation
    model, _, errors = train_classifier(
        "xgb", Xt[keep], yt[keep], Xv, yv, C_grid=SMALL_GRID[:1], n_classes=4
    )
    out = classifier_outputs("xgb", model, Xv)
    assert out["proba"].shape == (len(yv), 4)
    assert np.all(out["proba"][:, [1, 3]] == 0.0)
    assert set(np.unique(out["y_pred"])) <= {0, 2}
    assert 2 in out["y_pred"]  # global label, not the encoded index 1
    assert errors[0.0] >= np.mean(yv == 1)  # the unseen class is always wrong
    with pytest.raises(ValueError, match="n_classes"):
        classifier_outputs("xgb", model, Xv, n_classes=3)


def test_deterministic(digits):
    Xt, yt, Xv, yv = digits
    fits = [
        train_classifier("xgb", Xt, yt, Xv, yv, C_grid=SMALL_GRID[:2], random_state=3, n_jobs=2)
        for _ in range(2)
    ]
    a, b = (classifier_outputs("xgb", m, Xv) for m, _, _ in fits)
    np.testing.assert_array_equal(a["y_pred"], b["y_pred"])
    np.testing.assert_array_equal(a["proba"], b["proba"])
    assert fits[0][1:] == fits[1][1:]


def test_numeric_C_grid_is_refused_and_default_grid_documented(iris):
    Xt, yt, Xv, yv = iris
    with pytest.raises(ValueError, match="no C"):
        train_classifier("xgb", Xt, yt, Xv, yv, C_grid=(1, 10))
    assert [tuple(sorted(p)) for p in XGB_GRID] == [("learning_rate", "max_depth")] * 4


def test_single_training_class_is_an_error(iris):
    Xt, yt, Xv, yv = iris
    with pytest.raises(ValueError, match="two classes"):
        XGBLabelSpaceClassifier().fit(Xt[yt == 0], yt[yt == 0])


def _xgbclassifier_proba(X_trn, y_trn, X_val, y_val, X, n_classes, **params):
    """``xgboost.XGBClassifier`` (the booster before the shared-matrix grid) on encoded labels.

    Early-stopped on (X_val, y_val)."""
    xgboost = pytest.importorskip("xgboost")
    classes = np.unique(y_trn)
    known = np.isin(y_val, classes)
    clf = xgboost.XGBClassifier(
        tree_method="hist",
        random_state=5,
        n_jobs=1,
        verbosity=0,
        early_stopping_rounds=20,
        **params,
    )
    clf.fit(
        X_trn,
        np.searchsorted(classes, y_trn),
        eval_set=[(X_val[known], np.searchsorted(classes, y_val[known]))],
        verbose=False,
    )
    p = np.asarray(clf.predict_proba(X), dtype=float)
    p /= p.sum(axis=1, keepdims=True)
    proba = np.zeros((X.shape[0], n_classes))
    proba[:, classes] = p
    return proba, clf.best_iteration


@pytest.mark.parametrize("labels", [None, (0, 2)], ids=["multiclass", "binary"])
def test_same_model_as_xgbclassifier(iris, digits, labels):
    Xt, yt, Xv, yv = digits if labels is None else iris
    if labels is not None:  # binary:logistic, as XGBClassifier picks for two classes
        keep_t, keep_v = np.isin(yt, labels), np.isin(yv, labels)
        Xt, yt, Xv, yv = Xt[keep_t], yt[keep_t], Xv[keep_v], yv[keep_v]
    params = {"max_depth": 3, "learning_rate": 0.3, "n_estimators": 200}
    model = XGBLabelSpaceClassifier(n_classes=11, random_state=5, **params).fit(Xt, yt, Xv, yv)
    expected, best = _xgbclassifier_proba(Xt, yt, Xv, yv, Xv, 11, **params)
    assert model.best_iteration_ == best < 199  # early stopping fired
    np.testing.assert_array_equal(model.predict_proba(Xv), expected)
    assert model.booster_.num_boosted_rounds() == best + 1  # cut to the rounds it uses


@pytest.mark.parametrize("selection_rounds", [5, None])
def test_selection_errors_are_those_of_capped_fits(digits, selection_rounds):
    Xt, yt, Xv, yv = digits
    model, index, errors = train_xgb(
        Xt, yt, Xv, yv, grid=SMALL_GRID, n_classes=10, selection_rounds=selection_rounds
    )
    direct = {}
    for k, point in enumerate(SMALL_GRID):
        rounds = (
            point["n_estimators"]
            if selection_rounds is None
            else min(selection_rounds, point["n_estimators"])
        )
        m = XGBLabelSpaceClassifier(n_classes=10, **{**point, "n_estimators": rounds}).fit(
            Xt, yt, Xv, yv
        )
        direct[float(k)] = float(np.mean(m.predict(Xv) != yv))
    assert errors == direct  # exact: the same boosters
    assert index == min(k for k in direct if direct[k] == min(direct.values()))


def test_chosen_point_resumed_after_the_cap_equals_a_fresh_fit(digits):
    Xt, yt, Xv, yv = digits
    grid = SMALL_GRID[:2]
    model, index, _ = train_xgb(
        Xt, yt, Xv, yv, grid=grid, n_classes=10, random_state=3, selection_rounds=7
    )
    point = grid[int(index)]
    rounds = model.best_params_["n_estimators"]
    assert rounds > 7  # boosted on past the selection cap
    alone = XGBLabelSpaceClassifier(n_classes=10, random_state=3, **point).fit(Xt, yt, Xv, yv)
    fresh = XGBLabelSpaceClassifier(
        n_classes=10,
        random_state=3,
        **{**point, "n_estimators": rounds},
        early_stopping_rounds=None,
    ).fit(Xt, yt)
    assert alone.best_params_ == model.best_params_
    for other in (alone, fresh):
        np.testing.assert_array_equal(model.predict_proba(Xv), other.predict_proba(Xv))
        np.testing.assert_array_equal(model.predict_proba(Xt), other.predict_proba(Xt))


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_bit_identical_for_a_fixed_thread_count(n_jobs):
    # 6,000 rows: more than one of XGBoost's 2,048-row blocks, so two threads really split the work
    rng = np.random.default_rng(0)
    X = rng.standard_normal((7500, 6))
    y = np.digitize(X[:, 0] + 0.5 * X[:, 1] + 0.5 * rng.standard_normal(7500), [-0.5, 0.5])
    Xt, yt, Xv, yv = X[:6000], y[:6000], X[6000:], y[6000:]
    grid = (
        {"max_depth": 3, "learning_rate": 0.3, "n_estimators": 15},
        {"max_depth": 2, "learning_rate": 0.3, "n_estimators": 15},
    )
    fits = [
        train_xgb(Xt, yt, Xv, yv, grid=grid, n_jobs=n_jobs, selection_rounds=5) for _ in range(2)
    ]
    (a, index_a, errors_a), (b, index_b, errors_b) = fits
    assert a.best_params_["n_estimators"] > 5  # the chosen point was paused and resumed
    assert (index_a, errors_a, a.best_params_) == (index_b, errors_b, b.best_params_)
    np.testing.assert_array_equal(a.predict_proba(Xv), b.predict_proba(Xv))
    np.testing.assert_array_equal(a.booster_.save_raw(), b.booster_.save_raw())


@pytest.mark.parametrize("n_jobs", [0, -1, 1.5, True, None])
def test_n_jobs_must_be_a_positive_integer(iris, n_jobs):
    Xt, yt, Xv, yv = iris
    with pytest.raises(ValueError, match="n_jobs must be a positive integer"):
        train_xgb(Xt, yt, Xv, yv, grid=SMALL_GRID[:1], n_jobs=n_jobs)
    with pytest.raises(ValueError, match="n_jobs must be a positive integer"):
        XGBLabelSpaceClassifier(n_jobs=n_jobs).fit(Xt, yt)


@pytest.mark.parametrize("selection_rounds", [0, -5, 2.5, False])
def test_selection_rounds_must_be_a_positive_integer_or_none(iris, selection_rounds):
    Xt, yt, Xv, yv = iris
    with pytest.raises(ValueError, match="selection_rounds must be a positive integer or None"):
        train_xgb(Xt, yt, Xv, yv, grid=SMALL_GRID[:1], selection_rounds=selection_rounds)


def test_predict_checks_the_number_of_features(iris):
    Xt, yt, Xv, yv = iris
    model = XGBLabelSpaceClassifier(n_estimators=5).fit(Xt, yt)
    with pytest.raises(ValueError, match="X has 3 features, the model was fitted on 4"):
        model.predict_proba(Xv[:, :3])


def test_a_fit_ended_by_its_round_cap_says_so(digits, caplog):
    """Three rounds at learning rate 0.05 cannot early-stop (patience 20): capped_, and the log names the cap;
    a fit that early-stopped or had no validation set to stop on is not capped."""
    Xt, yt, Xv, yv = digits
    capped = XGBLabelSpaceClassifier(n_classes=10, n_estimators=3, learning_rate=0.05).fit(
        Xt, yt, Xv, yv
    )
    assert capped.capped_ and capped.best_iteration_ == 2
    stopped = XGBLabelSpaceClassifier(n_classes=10, n_estimators=1000, early_stopping_rounds=2).fit(
        Xt, yt, Xv, yv
    )
    assert not stopped.capped_ and stopped.best_iteration_ < 997
    assert not XGBLabelSpaceClassifier(n_classes=10, n_estimators=3).fit(Xt, yt).capped_
    with caplog.at_level("WARNING", logger="rejectopt.classifiers._training"):
        train_classifier(
            "xgb",
            Xt,
            yt,
            Xv,
            yv,
            C_grid=({"max_depth": 2, "learning_rate": 0.05, "n_estimators": 3},),
            n_classes=10,
        )
    assert "xgb grid point 0 stopped at its iteration cap (3 boosting rounds" in caplog.text


def test_train_xgb_and_outputs_on_iris_known_answer():
    """Iris, even rows Trn1, odd rows Val1; a label space of four classes, the last absent from training."""
    from sklearn.datasets import load_iris

    from rejectopt.classifiers._xgb import xgb_outputs

    X, y = load_iris(return_X_y=True)
    grid = [
        {"max_depth": 2, "learning_rate": 0.3, "n_estimators": 20},
        {"max_depth": 1, "learning_rate": 0.3, "n_estimators": 20},
    ]
    model, index, errors = train_xgb(X[::2], y[::2], X[1::2], y[1::2], grid=grid)
    assert (index, {k: round(e, 4) for k, e in errors.items()}) == (0.0, {0.0: 0.0267, 1.0: 0.0267})
    assert model.best_params_ == {"max_depth": 2, "learning_rate": 0.3, "n_estimators": 18}
    model = XGBLabelSpaceClassifier(n_classes=4, n_estimators=20).fit(X[::2], y[::2])
    outputs = xgb_outputs(model, X[[1, 51, 101]])
    assert outputs["y_pred"].tolist() == [0, 1, 2] and outputs["proba"].shape == (3, 4)
    np.testing.assert_allclose(outputs["baseline"], [0.019, 0.02, 0.044], atol=5e-4)
    np.testing.assert_array_equal(outputs["proba"][:, 3], 0.0)
