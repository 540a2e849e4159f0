"""Tests for rejectopt.classifiers (LR, linear SVMs, selection, outputs)."""

import functools
import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import LinearSVC
from sklearn.utils.estimator_checks import parametrize_with_checks
from support import run_sklearn_check, split

from rejectopt.classifiers import BinaryHingeSVM, CrammerSingerSVM, make_classifier
from rejectopt.classifiers._crammer_singer import crammer_singer_objective
from rejectopt.classifiers._linear import CS_TOL
from rejectopt.classifiers._training import classifier_outputs, train_classifier


# the SVM on iris: the multiclass (Crammer-Singer) solver takes minutes on digits' large C, and iris
# has a tie (C = 1 and 10) and a worse C, so the choice is still tested
@pytest.mark.parametrize("kind, data", [("lr", "digits"), ("svm", "iris")])
def test_train_classifier_picks_smallest_validation_error(kind, data, request):
    Xt, yt, Xv, yv = request.getfixturevalue(data)
    grid = (1, 10, 100, 1000)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        model, C, errors = train_classifier(kind, Xt, yt, Xv, yv, C_grid=grid)
    direct = {}
    for c in grid:
        m = make_classifier(
            kind, C=c, n_classes=int(yt.max()) + 1, n_samples=len(yt), n_features=Xt.shape[1]
        ).fit(Xt, yt)
        direct[c] = float(np.mean(m.predict(Xv) != yv))
    assert errors == pytest.approx(direct)
    best = min(direct.values())
    assert C == min(c for c in grid if direct[c] == best)  # ties -> smaller C
    assert np.mean(model.predict(Xv) != yv) == pytest.approx(errors[C])


def test_train_classifier_svor_uses_mae():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((300, 4))
    z = X @ np.array([1.0, -2.0, 0.5, 0.0]) + 0.3 * rng.standard_normal(300)
    y = np.searchsorted(np.quantile(z, [0.2, 0.4, 0.6, 0.8]), z)
    Xt, yt, Xv, yv = split(X, y)
    model, C, errors = train_classifier("svor", Xt, yt, Xv, yv, C_grid=(0.1, 1, 10))
    for c in (0.1, 1, 10):
        m = make_classifier("svor", C=c, n_classes=5, n_samples=len(yt)).fit(Xt, yt)
        assert errors[c] == pytest.approx(np.mean(np.abs(m.predict(Xv) - yv)))
    assert errors[C] == min(errors.values())
    out = classifier_outputs("svor", model, Xv)
    np.testing.assert_array_equal(out["y_pred"], model.predict(Xv))
    th = model[-1].thresholds_
    f = out["decision"]
    np.testing.assert_allclose(out["baseline"], -np.abs(f[:, None] - th).min(axis=1))
    assert errors[C] < 0.5


def test_lr_outputs_shapes_and_mcp(iris):
    Xt, yt, Xv, yv = iris
    model, C, _ = train_classifier("lr", Xt, yt, Xv, yv)
    out = classifier_outputs("lr", model, Xv, n_classes=3)
    assert out["y_pred"].shape == (len(yv),) and out["y_pred"].dtype == np.int64
    assert out["proba"].shape == (len(yv), 3)
    np.testing.assert_allclose(out["proba"].sum(axis=1), 1.0)
    np.testing.assert_allclose(out["baseline"], 1 - out["proba"].max(axis=1))
    np.testing.assert_array_equal(out["y_pred"], out["proba"].argmax(axis=1))
    # multinomial model with C/n on the summed log-loss
    est = model[-1]
    assert est.C == pytest.approx(C)  # default c_scaling='sum': sklearn's C
    assert est.coef_.shape == (3, 4)


def test_multiclass_svm_is_crammer_singer(iris):
    Xt, yt, Xv, yv = iris
    model, C, _ = train_classifier("svm", Xt, yt, Xv, yv)
    est = model[-1]
    assert isinstance(est, CrammerSingerSVM) and est.converged_ and est.rel_gap_ <= CS_TOL
    assert est.C == pytest.approx(C)  # default c_scaling='sum': sklearn's C
    # the warm-started path's model solves liblinear's Crammer-Singer objective: against liblinear
    # itself run to a tight tolerance, within the certified gap
    Z = model[0].transform(Xt)
    svc = LinearSVC(
        C=C, loss="hinge", multi_class="crammer_singer", tol=1e-10, max_iter=1_000_000
    ).fit(Z, yt)
    reference = crammer_singer_objective(Z, yt, svc.coef_, svc.intercept_, C)
    assert crammer_singer_objective(Z, yt, est.coef_, est.intercept_, C) == pytest.approx(
        est.objective_, rel=1e-12
    )
    assert (
        est.dual_objective_ <= reference * (1 + 1e-9)
        and abs(est.objective_ - reference) <= CS_TOL * reference
    )
    out = classifier_outputs("svm", model, Xv)
    assert out["decision"].shape == (len(yv), 3)
    np.testing.assert_allclose(out["baseline"], -out["decision"].max(axis=1))
    np.testing.assert_array_equal(out["y_pred"], model.predict(Xv))
    assert "proba" not in out


def test_binary_svm_margin_is_minus_abs_decision(iris):
    Xt, yt, Xv, yv = iris
    yt, yv = (yt == 2).astype(int), (yv == 2).astype(int)
    model, C, _ = train_classifier("svm", Xt, yt, Xv, yv)
    assert isinstance(model[-1], BinaryHingeSVM)
    out = classifier_outputs("svm", model, Xv)
    assert out["decision"].shape == (len(yv),)
    np.testing.assert_allclose(out["baseline"], -np.abs(out["decision"]))
    np.testing.assert_array_equal(out["y_pred"], (out["decision"] > 0).astype(int))
    assert np.mean(out["y_pred"] != yv) < 0.15


def test_binary_hinge_svm_matches_objective_optimum():
    import cvxpy as cp  # a test dependency (extra "test"): its absence must fail, not skip

    rng = np.random.default_rng(0)
    X = rng.standard_normal((80, 3))
    y = (X[:, 0] + 0.5 * rng.standard_normal(80) > 0.3).astype(int)
    C = 10.0
    est = BinaryHingeSVM(C=C).fit(X, y)
    w, b = cp.Variable(3), cp.Variable()
    s = 2.0 * y - 1
    prob = cp.Problem(
        cp.Minimize(
            0.5 * cp.sum_squares(w) + C / 80 * cp.sum(cp.pos(1 - cp.multiply(s, X @ w + b)))
        )
    )
    prob.solve(solver=cp.CLARABEL)
    assert est.objective_ == pytest.approx(prob.value, rel=1e-4)


@pytest.mark.parametrize("kind", ["lr", "svm"])
def test_label_space_kept_when_class_missing_from_training(kind, digits):
    Xt, yt, Xv, yv = digits
    keep = yt != 7  # class 7 absent from Trn1, present in Val1
    model, _, _ = train_classifier(kind, Xt[keep], yt[keep], Xv, yv, C_grid=(10, 100))
    out = classifier_outputs(kind, model, Xv, n_classes=10)
    assert out["y_pred"].max() <= 9 and 7 not in out["y_pred"]
    # labels are not shifted: other classes are still predicted well
    ok = yv != 7
    assert np.mean(out["y_pred"][ok] == yv[ok]) > 0.85
    if kind == "lr":
        assert out["proba"].shape == (len(yv), 10)
        np.testing.assert_array_equal(out["proba"][:, 7], 0.0)
    else:
        assert out["decision"].shape == (len(yv), 10)
        assert np.all(np.isneginf(out["decision"][:, 7]))
        assert np.all(np.isfinite(out["baseline"]))


def test_last_class_missing_needs_n_classes(digits):
    Xt, yt, Xv, yv = digits
    keep = yt != 9
    model, _, _ = train_classifier(
        "lr", Xt[keep], yt[keep], Xv[yv != 9], yv[yv != 9], C_grid=(10,), n_classes=10
    )
    out = classifier_outputs("lr", model, Xv, n_classes=10)
    assert out["proba"].shape == (len(yv), 10)


def test_binary_lr_equals_multinomial_convention(iris):
    Xt, yt, Xv, yv = iris
    yt, yv = (yt == 1).astype(int), (yv == 1).astype(int)
    model, C, _ = train_classifier("lr", Xt, yt, Xv, yv, C_grid=(10,))
    assert model[-1].C == pytest.approx(2 * 10)
    out = classifier_outputs("lr", model, Xv)
    assert out["proba"].shape == (len(yv), 2)


def test_standardisation_uses_training_statistics(iris):
    Xt, yt, Xv, yv = iris
    model, _, _ = train_classifier("lr", Xt, yt, Xv, yv, C_grid=(1,))
    np.testing.assert_allclose(model[0].mean_, Xt.mean(axis=0))
    np.testing.assert_allclose(model[0].scale_, Xt.std(axis=0))


def test_c_scaling_sum_and_mean(iris):
    Xt, yt, Xv, yv = iris
    m = make_classifier("svm", C=2.0, n_classes=3, n_samples=len(yt), c_scaling="sum")
    assert m[-1].C == pytest.approx(2.0)
    m = make_classifier("svm", C=2.0, n_classes=3, n_samples=len(yt), c_scaling="mean")
    assert m[-1].C == pytest.approx(2.0 / len(yt))
    m = make_classifier("lr", C=2.0, n_classes=3, n_samples=len(yt), c_scaling="mean")
    assert m[-1].C == pytest.approx(2.0 / len(yt))
    m = make_classifier("svor", C=2.0, n_classes=3, n_samples=len(yt), c_scaling="sum")
    assert m[-1].C == pytest.approx(2.0 * len(yt))


def test_bad_arguments():
    X = np.zeros((4, 2))
    y = np.array([0, 1, 0, 1])
    with pytest.raises(
        ValueError, match="unknown classifier 'knn'.*registered classifiers: lr, svm, svor, xgb"
    ):
        train_classifier("knn", X, y, X, y)
    with pytest.raises(ValueError, match="loss"):
        train_classifier("lr", X, y, X, y, loss="hinge")
    with pytest.raises(ValueError, match="lie in"):
        train_classifier("lr", X, y, X, y + 1, n_classes=2)


def test_a_fit_at_its_iteration_cap_is_logged(iris, monkeypatch, caplog):
    """LR at scikit-learn's max_iter and a certified solver whose duality gap is above its tolerance both
    leave a warning naming the cap in the job's log (timing.md lists those lines)."""
    from rejectopt.classifiers import _linear

    Xt, yt, Xv, yv = iris
    monkeypatch.setattr(_linear, "LR_MAX_ITER", 2)
    with (
        caplog.at_level("WARNING", logger="rejectopt.classifiers._training"),
        warnings.catch_warnings(),
    ):
        warnings.simplefilter("ignore", ConvergenceWarning)
        train_classifier("lr", Xt, yt, Xv, yv, C_grid=(1000.0,), n_classes=3)
    assert "lr C=1000 stopped at its iteration cap (2 iterations" in caplog.text
    caplog.clear()
    monkeypatch.setattr(_linear, "SVOR", functools.partial(_linear.SVOR, max_iter=1))
    with caplog.at_level("WARNING", logger="rejectopt.classifiers._training"):
        train_classifier("svor", Xt, yt, Xv, yv, C_grid=(1.0,), n_classes=3)
    assert (
        "svor C=1 stopped at its iteration cap (1 iterations, relative duality gap" in caplog.text
    )
    caplog.clear()
    monkeypatch.undo()
    with caplog.at_level("WARNING", logger="rejectopt.classifiers._training"):
        train_classifier("lr", Xt, yt, Xv, yv, C_grid=(1.0,), n_classes=3)
        train_classifier("svor", Xt, yt, Xv, yv, C_grid=(1.0,), n_classes=3)
    assert "iteration cap" not in caplog.text


def test_registry_entries_and_the_iris_known_answers():
    """The registry entry of SVOR; LR on iris (even rows Trn1, odd rows Val1): C by Val1 error and its outputs."""
    from sklearn.datasets import load_iris

    from rejectopt.classifiers import get_classifier

    info = get_classifier("svor")
    assert (info.task, info.baseline, info.posteriors, info.loss, info.table, info.extension) == (
        "ordinal",
        "margin",
        False,
        "mae",
        "table4",
        False,
    )
    assert (info.source, info.cls.__name__) == (
        "rejectopt.classifiers._training:SVORModel",
        "SVORModel",
    )
    X, y = load_iris(return_X_y=True)
    model, C, errors = train_classifier("lr", X[::2], y[::2], X[1::2], y[1::2], C_grid=[0.01, 1.0])
    assert (C, {c: round(e, 4) for c, e in errors.items()}) == (1.0, {0.01: 0.1333, 1.0: 0.0267})
    model, _, _ = train_classifier("lr", X[::2], y[::2], X[1::2], y[1::2], C_grid=[1.0])
    outputs = classifier_outputs("lr", model, X[[1, 51, 101]], n_classes=3)
    assert sorted(outputs) == ["baseline", "proba", "y_pred"] and outputs["y_pred"].tolist() == [
        0,
        1,
        2,
    ]
    np.testing.assert_allclose(outputs["baseline"], [0.116, 0.237, 0.248], atol=5e-4)


def test_a_registered_plugin_classifier_trains_and_predicts_through_the_registry():
    from rejectopt.classifiers import CLASSIFIERS, register_classifier

    @register_classifier(
        "nearest_mean_test",
        task="classification",
        baseline="margin",
        posteriors=False,
        uses_C=False,
    )
    class NearestMean:
        @staticmethod
        def train(
            X_trn,
            y_trn,
            X_val,
            y_val,
            *,
            C_grid,
            n_classes,
            random_state,
            n_jobs,
            loss,
            c_scaling="sum",
        ):
            model = {"means": np.stack([X_trn[y_trn == k].mean(axis=0) for k in range(n_classes)])}
            return (
                model,
                1.0,
                {1.0: float(np.mean(NearestMean.outputs(model, X_val)["y_pred"] != y_val))},
            )

        @staticmethod
        def outputs(model, X, n_classes=None):
            distance = np.linalg.norm(X[:, None, :] - model["means"][None], axis=2)
            return {"y_pred": distance.argmin(axis=1), "baseline": distance.min(axis=1)}

    try:
        X = np.array([[0.0, 0.0], [0.2, 0.1], [3.0, 3.0], [3.1, 2.8]])
        y = np.array([0, 0, 1, 1])
        model, C, errors = train_classifier("nearest_mean_test", X, y, X, y)
        assert (C, errors) == (1.0, {1.0: 0.0})
        assert classifier_outputs("nearest_mean_test", model, [[2.0, 2.0]])["y_pred"].tolist() == [
            1
        ]
    finally:
        CLASSIFIERS.remove("nearest_mean_test")
    assert "nearest_mean_test" not in CLASSIFIERS


@parametrize_with_checks([BinaryHingeSVM()])
def test_binary_hinge_svm_passes_sklearn_estimator_checks(estimator, check, monkeypatch):
    run_sklearn_check(check, estimator, monkeypatch)


def test_binary_hinge_svm_takes_any_two_labels(iris):
    """Labels other than {0, 1}: the second in sorted order is the positive class; the model is the {0, 1} one."""
    X_trn, y_trn, X_val, _ = iris
    X, y = X_trn[y_trn < 2], y_trn[y_trn < 2]
    base = BinaryHingeSVM(C=10.0).fit(X, y)
    named = BinaryHingeSVM(C=10.0).fit(X, np.array(["setosa", "versicolor"])[y])
    assert named.classes_.tolist() == ["setosa", "versicolor"]
    np.testing.assert_array_equal(named.coef_, base.coef_)
    np.testing.assert_array_equal(
        named.predict(X_val), np.array(["setosa", "versicolor"])[base.predict(X_val)]
    )
    assert base.classes_.tolist() == [0, 1] and base.predict(X_val).dtype == np.int64
    with pytest.raises(
        ValueError,
        match=r"Only binary classification is supported: BinaryHingeSVM needs two classes, "
        r"got 3 class\(es\): \[0, 1, 2\]",
    ):
        BinaryHingeSVM().fit(X_trn, y_trn)
