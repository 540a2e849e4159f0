"""Tests for rejectopt.classifiers._svor (SVOR with implicit constraints)."""

import numpy as np
import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks
from support import run_sklearn_check

from rejectopt.classifiers import SVOR
from rejectopt.classifiers._svor import svor_objective


def make_ordinal(n, d, n_classes, noise=0.5, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    z = X @ rng.standard_normal(d) + noise * rng.standard_normal(n)
    cuts = np.quantile(z, np.linspace(0, 1, n_classes + 1)[1:-1])
    return X, np.searchsorted(cuts, z)


def reference_optimum(X, y, n_classes, C):
    """Optimum of the SVOR objective from a generic conic solver (cvxpy + Clarabel)."""
    import cvxpy as cp  # a test dependency (extra "test"): its absence must fail, not skip

    n, d = X.shape
    w = cp.Variable(d)
    b = cp.Variable(n_classes - 1)
    f = X @ w
    loss = 0
    for j in range(n_classes - 1):
        s = np.where(j < y, 1.0, -1.0)
        loss = loss + cp.sum(cp.pos(1 - cp.multiply(s, f - b[j])))
    prob = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(w) + C / n * loss))
    prob.solve(solver=cp.CLARABEL, tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10)
    return prob.value


@pytest.mark.parametrize("n,d,n_classes", [(60, 4, 4), (100, 3, 6)])
@pytest.mark.parametrize("C", [0.1, 1.0, 10.0, 1000.0])
def test_objective_matches_generic_solver(n, d, n_classes, C):
    X, y = make_ordinal(n, d, n_classes, noise=1.0, seed=n + d)
    model = SVOR(C=C, n_classes=n_classes).fit(X, y)
    ref = reference_optimum(X, y, n_classes, C)
    assert model.objective_ == pytest.approx(ref, rel=1e-4)
    assert model.objective_ >= ref - 1e-7 * abs(ref)


@pytest.mark.parametrize("C", [1.0, 100.0])
def test_certificate_and_objective_consistent(C):
    X, y = make_ordinal(200, 5, 7, noise=1.0, seed=1)
    model = SVOR(C=C, tol=1e-7).fit(X, y)
    assert model.converged_
    assert 0 <= model.gap_ <= 1e-7 * model.objective_ + 1e-12
    assert model.dual_objective_ <= model.objective_
    assert model.objective_ == pytest.approx(
        svor_objective(model.coef_, model.thresholds_, X, y, C), rel=1e-12
    )
    # no random perturbation improves on the certified optimum
    rng = np.random.default_rng(0)
    for _ in range(20):
        dw = 1e-3 * rng.standard_normal(X.shape[1])
        db = 1e-3 * rng.standard_normal(model.thresholds_.size)
        F = svor_objective(model.coef_ + dw, model.thresholds_ + db, X, y, C)
        assert F >= model.objective_ - model.gap_


def test_thresholds_are_ordered():
    for seed in range(3):
        X, y = make_ordinal(150, 3, 8, noise=2.0, seed=seed)
        for C in (0.1, 10.0, 1000.0):
            th = SVOR(C=C, n_classes=8).fit(X, y).thresholds_
            assert th.shape == (7,)
            assert np.all(np.diff(th) >= 0)


def test_predict_formula_and_margin():
    X, y = make_ordinal(120, 4, 5, seed=3)
    model = SVOR(C=10.0).fit(X, y)
    f = X @ model.coef_
    np.testing.assert_allclose(model.decision_function(X), f)
    expected = (f[:, None] > model.thresholds_[None, :]).sum(axis=1)
    np.testing.assert_array_equal(model.predict(X), expected)
    np.testing.assert_allclose(model.margin(X), -np.abs(f[:, None] - model.thresholds_).min(axis=1))
    assert model.predict(X).dtype.kind == "i"
    assert set(np.unique(model.predict(X))) <= set(range(5))


def test_recovers_ordinal_model_with_low_mae():
    X, y = make_ordinal(2000, 5, 10, noise=0.05, seed=4)
    Xt, yt, Xv, yv = X[:1500], y[:1500], X[1500:], y[1500:]
    model = SVOR(C=100.0).fit(Xt, yt)
    mae = np.abs(model.predict(Xv) - yv).mean()
    assert mae < 0.15  # chance level for 10 uniform classes is 3.3


def test_missing_extreme_and_middle_classes():
    X, y = make_ordinal(200, 3, 6, seed=5)
    keep = (y != 0) & (y != 5) & (y != 3)
    model = SVOR(C=10.0, n_classes=6).fit(X[keep], y[keep])
    assert model.thresholds_.shape == (5,)
    assert np.all(np.isfinite(model.thresholds_))
    assert np.all(np.diff(model.thresholds_) >= 0)
    assert model.n_classes_ == 6
    pred = model.predict(X)
    assert pred.min() >= 0 and pred.max() <= 5
    # training objective with absent classes equals the objective on the present ones
    assert model.objective_ == pytest.approx(
        svor_objective(model.coef_, model.thresholds_, X[keep], y[keep], 10.0)
    )


def test_two_classes_is_binary_hinge_svm():
    X, y = make_ordinal(80, 3, 2, seed=6)
    model = SVOR(C=5.0).fit(X, y)
    f = X @ model.coef_ - model.thresholds_[0]
    s = np.where(y == 1, 1.0, -1.0)
    F = 0.5 * model.coef_ @ model.coef_ + 5.0 / 80 * np.maximum(0, 1 - s * f).sum()
    assert model.objective_ == pytest.approx(F)


def test_fit_is_deterministic():
    X, y = make_ordinal(100, 3, 4, seed=7)
    a = SVOR(C=3.0).fit(X, y)
    b = SVOR(C=3.0).fit(X, y)
    assert a.coef_.tobytes() == b.coef_.tobytes()
    assert a.thresholds_.tobytes() == b.thresholds_.tobytes()


def test_rejects_bad_labels():
    X = np.zeros((4, 2))
    with pytest.raises(ValueError, match="labels"):
        SVOR(n_classes=2).fit(X, [0, 1, 2, 1])
    with pytest.raises(ValueError, match="Unknown label type: continuous"):
        SVOR().fit(X, [0.5, 1, 0, 1])
    with pytest.raises(
        ValueError,
        match=r"SVOR needs ordinal labels, the integers 0..n_classes-1 in the classes' "
        r"order; got <U4 labels such as 'high': encode them in their order first",
    ):
        SVOR().fit(X, ["high", "low", "low", "high"])


def test_not_fitted_raises():
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        SVOR().predict(np.zeros((2, 2)))


def test_svor_objective_known_answer():
    """f = (0, 1, 2, 3) against thresholds (1.5, 2.5): hinge terms 0 (rank 0), 0.5 + 0.5 (rank 1 and 2 each),
    so F = ||w||^2 / 2 + C/n sum = 1/2 + 2/4 = 1."""
    X, y = np.array([[0.0], [1.0], [2.0], [3.0]]), np.array([0, 0, 1, 2])
    assert svor_objective(np.array([1.0]), np.array([1.5, 2.5]), X, y, C=1.0) == 1.0


# --------------------------------------------------------------------------------------------
# scikit-learn's estimator checks
# --------------------------------------------------------------------------------------------
#: The checks SVOR fails by design, with the reason (scikit-learn's xfail mechanism).
SVOR_EXPECTED_FAILED_CHECKS = {
    "check_classifiers_train": (
        "decision_function is the projection <x, w>, which predict compares with the learned thresholds b_j (the "
        "ordinal model, section 5.2.2), not with 0 as the check assumes for two classes; the pipeline's SVOR margin "
        "reads it so (test_two_class_svor_predicts_by_its_threshold)"
    ),
    "check_classifiers_classes": (
        "SVOR learns ordered classes, the integers 0..n_classes-1 whose order is the labels' own; it refuses the "
        "check's text labels ('one', 'two'), whose order it cannot know (test_rejects_bad_labels)"
    ),
}


@parametrize_with_checks([SVOR()], expected_failed_checks=lambda est: SVOR_EXPECTED_FAILED_CHECKS)
def test_sklearn_estimator_checks(estimator, check, monkeypatch):
    run_sklearn_check(check, estimator, monkeypatch)


def test_two_class_svor_predicts_by_its_threshold():
    """The xfailed check's data (blobs, two classes): predict = [<x, w> > b_0], accurate, b_0 away from 0."""
    from sklearn.datasets import make_blobs
    from sklearn.preprocessing import StandardScaler

    X, y = make_blobs(n_samples=300, random_state=0)
    X = StandardScaler().fit_transform(X)[y != 2]
    y = y[y != 2]
    model = SVOR().fit(X, y)
    f = model.decision_function(X)
    np.testing.assert_array_equal(model.predict(X), (f > model.thresholds_[0]).astype(int))
    assert np.mean(model.predict(X) == y) > 0.83 and model.thresholds_[0] != 0
    assert np.any(
        (f > 0) != (f > model.thresholds_[0])
    )  # where the check's reading of decision_function differs
    with pytest.raises(ValueError, match="X has 1 features, but SVOR is expecting 2 features"):
        model.predict(X[:, :1])
