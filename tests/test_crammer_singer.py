"""Tests of the certified Crammer-Singer multiclass SVM (CrammerSingerSVM)."""

import warnings

import cvxpy as cp
import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning, NotFittedError
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import LinearSVC
from sklearn.utils.estimator_checks import parametrize_with_checks
from support import run_sklearn_check

from rejectopt.classifiers._crammer_singer import (
    CrammerSingerSVM,
    crammer_singer_objective,
    fit_crammer_singer_path,
)
from rejectopt.classifiers._training import classifier_outputs


def primal(X, y, coef, intercept, C):
    """The objective written out independently: ||W||^2/2 + C sum_i max_y([y != y_i] + f_y - f_{y_i})."""
    classes = np.unique(y)
    yi = np.searchsorted(classes, y)
    F = X @ coef.T + intercept
    A = F - F[np.arange(len(y)), yi][:, None] + (np.arange(len(classes))[None, :] != yi[:, None])
    return 0.5 * (np.sum(coef**2) + np.sum(intercept**2)) + C * A.max(axis=1).sum()


def noisy_problem(seed, n=40, d=3, n_classes=4):
    """Overlapping Gaussian classes (not separable), so many examples pay a loss."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, n_classes, n)
    centres = rng.standard_normal((n_classes, d))
    return centres[y] + rng.standard_normal((n, d)), y


def blobs(seed=0, n_per_class=30, n_classes=3, spread=0.3):
    """Well separated blobs on a circle of radius 3."""
    rng = np.random.default_rng(seed)
    angles = 2 * np.pi * np.arange(n_classes) / n_classes
    centres = 3.0 * np.column_stack([np.cos(angles), np.sin(angles)])
    y = np.repeat(np.arange(n_classes), n_per_class)
    return centres[y] + spread * rng.standard_normal((len(y), 2)), y


def cvxpy_reference(X, y, C):
    """Optimal (coef, intercept) of the primal from a generic conic solver."""
    n, d = X.shape
    classes, yi = np.unique(y, return_inverse=True)
    K = classes.size
    Z = np.column_stack([X, np.ones(n)])
    Y = np.eye(K)[yi]
    W = cp.Variable((K, d + 1))
    S = Z @ W.T
    own = cp.reshape(cp.sum(cp.multiply(S, Y), axis=1), (n, 1), order="C")
    A = (1.0 - Y) + S - own @ np.ones((1, K))
    problem = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(W) + C * cp.sum(cp.max(A, axis=1))))
    problem.solve(solver=cp.CLARABEL, tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12)
    assert problem.status == cp.OPTIMAL
    return W.value[:, :-1], W.value[:, -1]


@pytest.mark.parametrize(
    "seed, C, n_classes",
    [(0, 0.1, 3), (1, 1.0, 4), (2, 10.0, 4), (3, 100.0, 5), (4, 1000.0, 3), (5, 3.0, 2)],
)
def test_objective_matches_cvxpy(seed, C, n_classes):
    X, y = noisy_problem(seed, n_classes=n_classes)
    est = CrammerSingerSVM(C=C, tol=1e-8).fit(X, y)
    ref = primal(X, y, *cvxpy_reference(X, y, C), C)
    assert est.converged_ and est.rel_gap_ <= 1e-8
    assert est.objective_ == pytest.approx(ref, rel=1e-6)
    # the certificate is valid: D <= P* <= P(any W), in particular below the reference
    assert est.dual_objective_ <= ref * (1 + 1e-9)
    assert est.dual_objective_ <= est.objective_


@pytest.mark.parametrize("C", [0.01, 1.0, 100.0])
def test_certificate_is_consistent(C):
    X, y = noisy_problem(7, n=80, d=4, n_classes=5)
    est = CrammerSingerSVM(C=C).fit(X, y)
    assert est.objective_ == pytest.approx(primal(X, y, est.coef_, est.intercept_, C), rel=1e-12)
    assert est.objective_ == pytest.approx(
        crammer_singer_objective(X, y, est.coef_, est.intercept_, C), rel=1e-12
    )
    assert est.gap_ >= 0 and est.dual_objective_ <= est.objective_
    assert est.gap_ == pytest.approx(est.objective_ - est.dual_objective_, rel=1e-12, abs=1e-12)
    assert est.rel_gap_ == pytest.approx(est.gap_ / abs(est.objective_))
    assert est.converged_ and est.rel_gap_ <= est.tol
    assert est.n_iter_ >= 1


def test_liblinear_minimises_the_same_objective():
    X, y = noisy_problem(8, n=50, d=2, n_classes=3)
    C = 1.0
    svc = LinearSVC(
        C=C,
        loss="hinge",
        multi_class="crammer_singer",
        tol=1e-10,
        max_iter=1_000_000,
        intercept_scaling=1.0,
    ).fit(X, y)
    est = CrammerSingerSVM(C=C, tol=1e-9).fit(X, y)
    p_liblinear = primal(X, y, svc.coef_, svc.intercept_, C)
    assert est.objective_ <= p_liblinear * (1 + 1e-9)
    assert p_liblinear == pytest.approx(est.objective_, rel=1e-7)
    assert np.allclose(svc.coef_, est.coef_, atol=1e-4) and np.allclose(
        svc.intercept_, est.intercept_, atol=1e-4
    )


def test_predictions_equal_linearsvc_on_separable_data():
    X, y = blobs()
    X_test, _ = blobs(seed=1, n_per_class=200, spread=1.0)
    svc = LinearSVC(
        C=1.0, loss="hinge", multi_class="crammer_singer", tol=1e-6, max_iter=100_000
    ).fit(X, y)
    est = CrammerSingerSVM(C=1.0).fit(X, y)
    assert np.array_equal(est.predict(X), y)
    assert np.array_equal(est.predict(X_test), svc.predict(X_test))


def test_convergence_warning_when_max_iter_is_tiny():
    X, y = noisy_problem(9, n=60)
    with pytest.warns(ConvergenceWarning, match=r"C=100.*relative duality gap"):
        est = CrammerSingerSVM(C=100.0, tol=1e-10, max_iter=1).fit(X, y)
    assert not est.converged_ and est.n_iter_ == 1 and est.rel_gap_ > est.tol
    assert est.dual_objective_ <= est.objective_


def test_two_classes_give_two_antisymmetric_columns():
    X, y = blobs(n_classes=2, spread=1.5)
    labels = np.array([2, 5])[y]
    est = CrammerSingerSVM(C=1.0, tol=1e-8).fit(X, labels)
    F = est.decision_function(X)
    assert F.shape == (len(y), 2) and np.array_equal(est.classes_, [2, 5])
    assert np.allclose(F[:, 0], -F[:, 1], atol=1e-3 * np.abs(F).max())
    svc = LinearSVC(
        C=1.0, loss="hinge", multi_class="crammer_singer", tol=1e-10, max_iter=1_000_000
    ).fit(X, labels)
    f = svc.decision_function(X)  # 1-D: what classifier_outputs turns into [-f, f] / 2
    assert np.allclose(F, np.column_stack([-f, f]) / 2, atol=1e-3 * np.abs(F).max())


@pytest.mark.parametrize("scale, C", [(1e4, 1e4), (1e-4, 1e6), (1.0, 1e-6)])
def test_badly_scaled_problems_converge(scale, C):
    X, y = noisy_problem(15, n=80, n_classes=4)
    X[0] *= 100.0  # one heavy outlier, as in shuttle's standardised features
    est = CrammerSingerSVM(C=C, tol=1e-6).fit(X * scale, y)
    assert est.converged_ and 0 <= est.rel_gap_ <= 1e-6
    assert est.objective_ == pytest.approx(
        primal(X * scale, y, est.coef_, est.intercept_, C), rel=1e-9
    )


def test_one_class_is_an_error():
    X, _ = blobs()
    with pytest.raises(ValueError, match="at least 2 classes"):
        CrammerSingerSVM().fit(X, np.zeros(len(X), dtype=int))
    with pytest.raises(ValueError, match="at least 2 classes"):
        fit_crammer_singer_path(X, np.ones(len(X)), [1.0, 10.0])


def test_labels_need_not_be_0_to_k_minus_1():
    X, y = noisy_problem(10, n_classes=3)
    plain = CrammerSingerSVM(C=10.0).fit(X, y)
    mapped = CrammerSingerSVM(C=10.0).fit(X, np.array([3, 7, 9])[y])
    assert np.array_equal(mapped.classes_, [3, 7, 9])
    assert np.array_equal(mapped.predict(X), np.array([3, 7, 9])[plain.predict(X)])
    assert np.array_equal(mapped.coef_, plain.coef_)


def test_fits_are_deterministic():
    X, y = noisy_problem(11, n=100, d=5, n_classes=6)
    a = CrammerSingerSVM(C=10.0).fit(X, y)
    b = CrammerSingerSVM(C=10.0).fit(X, y)
    assert (
        a.coef_.tobytes() == b.coef_.tobytes() and a.intercept_.tobytes() == b.intercept_.tobytes()
    )
    assert (a.objective_, a.dual_objective_, a.n_iter_) == (
        b.objective_,
        b.dual_objective_,
        b.n_iter_,
    )


def test_path_fits_are_certified_and_agree_with_single_fits():
    X, y = noisy_problem(12, n=120, d=4, n_classes=5)
    grid = [10.0, 1.0, 1000.0, 100.0]
    path = fit_crammer_singer_path(X, y, grid, tol=1e-4)
    assert [est.C for est in path] == grid
    for est in path:
        single = CrammerSingerSVM(C=est.C, tol=1e-4).fit(X, y)
        assert est.converged_ and single.converged_
        # weak duality across the two certified solutions
        assert est.objective_ >= single.dual_objective_ and single.objective_ >= est.dual_objective_
        assert est.objective_ == pytest.approx(
            primal(X, y, est.coef_, est.intercept_, est.C), rel=1e-12
        )


def test_warm_start_reuses_the_previous_solution():
    X, y = noisy_problem(13, n=120, d=4, n_classes=5)
    est = CrammerSingerSVM(C=10.0, warm_start=True).fit(X, y)
    cold_iter = est.n_iter_
    est.fit(X, y)
    assert est.converged_ and est.n_iter_ < cold_iter
    est.set_params(C=100.0).fit(X, y)
    cold = CrammerSingerSVM(C=100.0).fit(X, y)
    assert (
        est.converged_
        and est.objective_ >= cold.dual_objective_
        and cold.objective_ >= est.dual_objective_
    )


def test_estimator_conventions_and_pipeline_drop_in():
    X, y = noisy_problem(14, n=90, d=3, n_classes=4)
    est = CrammerSingerSVM(C=5.0, tol=1e-4)
    assert clone(est).get_params() == est.get_params()
    with pytest.raises(NotFittedError):
        est.predict(X)
    with pytest.raises(TypeError):
        CrammerSingerSVM(5.0)  # keyword-only
    pipe = Pipeline([("scaler", StandardScaler()), ("model", est)]).fit(X, y)
    out = classifier_outputs("svm", pipe, X, n_classes=5)
    assert np.array_equal(out["y_pred"], pipe.predict(X))
    assert out["decision"].shape == (len(y), 5) and np.all(np.isneginf(out["decision"][:, 4]))
    with pytest.raises(ValueError, match="features"):
        pipe[-1].decision_function(X[:, :2])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        CrammerSingerSVM(C=5.0).fit(X, y)


def test_objective_on_iris_is_the_certificates_and_a_path_converges():
    from sklearn.datasets import load_iris

    X, y = load_iris(return_X_y=True)
    svm = CrammerSingerSVM(C=1.0).fit(X, y)
    assert (
        round(crammer_singer_objective(X, y, svm.coef_, svm.intercept_, C=1.0), 4)
        == round(svm.objective_, 4)
        == 20.0221
    )
    rng = np.random.default_rng(0)
    X, y = rng.standard_normal((60, 3)), rng.integers(0, 3, 60)
    assert [est.converged_ for est in fit_crammer_singer_path(X, y, [1, 10, 100])] == [
        True,
        True,
        True,
    ]


# --------------------------------------------------------------------------------------------
# scikit-learn's estimator checks
# --------------------------------------------------------------------------------------------
#: The checks CrammerSingerSVM fails by design, with the reason (scikit-learn's xfail mechanism).
CS_EXPECTED_FAILED_CHECKS = {
    name: (
        "with two classes decision_function returns one score per class, shape (n, 2), as for K classes: the "
        "Crammer-Singer model learns a weight vector per class, the two scores are not each other's negative, "
        "and the pipeline records both (classifier_outputs' decision); the check expects scikit-learn's single "
        "binary column. predict is the argmax of the two "
        "(test_two_class_decision_function_has_a_column_per_class)"
    )
    for name in ("check_classifiers_train", "check_classifiers_classes")
}


@parametrize_with_checks(
    [CrammerSingerSVM()], expected_failed_checks=lambda est: CS_EXPECTED_FAILED_CHECKS
)
def test_sklearn_estimator_checks(estimator, check, monkeypatch):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        run_sklearn_check(check, estimator, monkeypatch)


def test_two_class_decision_function_has_a_column_per_class():
    """The xfailed checks' data (blobs, two classes, string labels): right predictions, one column per class."""
    from sklearn.datasets import make_blobs

    X, y = make_blobs(n_samples=200, centers=2, random_state=0)
    labels = np.array(["one", "two"])[y]
    model = CrammerSingerSVM().fit(X, labels)
    F = model.decision_function(X)
    assert F.shape == (200, 2) and model.classes_.tolist() == ["one", "two"]
    np.testing.assert_array_equal(model.predict(X), model.classes_[np.argmax(F, axis=1)])
    assert (
        np.mean(model.predict(X) == labels) > 0.83
    )  # the accuracy check_classifiers_train requires
    with pytest.raises(ValueError, match="Unknown label type: continuous"):
        CrammerSingerSVM().fit(X, X[:, 0])
    with pytest.raises(ValueError, match="needs at least 2 classes in y, got 1 class"):
        CrammerSingerSVM().fit(X, np.zeros(200))
    with pytest.raises(
        ValueError, match="X has 1 features, but CrammerSingerSVM is expecting 2 features"
    ):
        model.predict(X[:, :1])
