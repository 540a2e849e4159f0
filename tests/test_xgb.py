"""Tests for the XGBoost classifier (rejectopt.classifiers._xgb) and its train_classifier wiring."""

import numpy as np
import pytest

from rejectopt.classifiers import (
    XGB_GRID,
    XGBLabelSpaceClassifier,
    classifier_outputs,
    train_classifier,
)

SMALL_GRID = ({"max_depth": 2, "learning_rate": 0.3, "n_estimators": 60},
              {"max_depth": 4, "learning_rate": 0.1, "n_estimators": 60},
              {"max_depth": 1, "learning_rate": 0.05, "n_estimators": 5})

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
    assert np.mean(classifier_outputs("xgb", model, Xv)["y_pred"] != yv) == pytest.approx(errors[index])
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
    model, _, errors = train_classifier("xgb", Xt[keep], yt[keep], Xv, yv, C_grid=SMALL_GRID[:1], n_classes=4)
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
    fits = [train_classifier("xgb", Xt, yt, Xv, yv, C_grid=SMALL_GRID[:2], random_state=3, n_jobs=2)
            for _ in range(2)]
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
