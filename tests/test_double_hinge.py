"""DoubleHingeSVM: reconstruction of the loss, exactness against cvxpy, Chow's rule, errors, labels."""

import doctest
import re

import cvxpy as cp
import numpy as np
import pytest
from scipy.optimize import brentq, minimize_scalar
from scipy.stats import norm
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning, NotFittedError
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.utils.estimator_checks import check_estimator
from threadpoolctl import threadpool_limits

from rejectopt.classifiers import _double_hinge
from rejectopt.classifiers._double_hinge import (
    DoubleHingeSVM,
    chow_thresholds,
    double_hinge_loss,
    fit_double_hinge,
)


@pytest.fixture(autouse=True, scope="module")
def one_blas_thread():
    """Small dense problems: threads only add contention on a shared 2-core machine."""
    with threadpool_limits(limits=1, user_api="blas"):
        yield


def entropy(p):
    return -p * np.log(p) - (1 - p) * np.log(1 - p)


def nll(y, f):
    """Logistic negative log-likelihood ``log(1 + exp(-y f))``."""
    return np.logaddexp(0.0, -y * f)


# ---------------------------------------------------------------- reconstruction of the loss


@pytest.mark.parametrize("p_minus,p_plus", [(0.4, 0.8), (0.2, 0.8), (0.05, 0.6), (0.3, 0.35)])
def test_loss_is_the_double_tangent_of_the_logistic_nll(p_minus, p_plus):
    f = np.linspace(-12, 12, 4801)
    thresholds = np.log(np.array([p_minus, p_plus]) / (1 - np.array([p_minus, p_plus])))
    for y in (1.0, -1.0):
        loss = double_hinge_loss(np.full_like(f, y), f, p_minus, p_plus)
        assert np.all(loss <= nll(y, f) + 1e-12)  # below the NLL ...
        assert np.all(np.diff(loss, 2) >= -1e-12)  # convex, piecewise linear
        at = double_hinge_loss(np.full(2, y), thresholds, p_minus, p_plus)
        np.testing.assert_allclose(at, nll(y, thresholds), rtol=1e-12)  # ... touching it at f-, f+
        eps = 1e-6
        slope = (double_hinge_loss(np.full(2, y), thresholds + eps, p_minus, p_plus) - at) / eps
        np.testing.assert_allclose(slope, -y / (1 + np.exp(y * thresholds)), atol=1e-5)  # tangent
        assert np.all(loss[y * f > 20 / 3] == 0)  # sparsity: zero past t
    # the hinge form used by the solver, with the surviving fragments of the paper
    yv = np.where(np.arange(f.size) % 2 == 0, 1.0, -1.0)
    a, D, t, tau = _double_hinge._hinge_form(yv, p_minus, p_plus)
    m = yv * f
    np.testing.assert_allclose(
        a * np.maximum(0, t - m) + D * np.maximum(0, tau - m),
        double_hinge_loss(yv, f, p_minus, p_plus),
        atol=1e-12,
    )
    h_lo, h_hi = entropy(p_minus), entropy(p_plus)
    assert D == pytest.approx(p_plus - p_minus)  # D = C (p+ - p-)
    np.testing.assert_allclose(a[yv > 0], 1 - p_plus)  # C_i = C (1 - p+)
    np.testing.assert_allclose(a[yv < 0], p_minus)  # C_i = C p-
    np.testing.assert_allclose(t[yv < 0], h_lo / p_minus)  # t_i = H(p-)/p-
    np.testing.assert_allclose(tau[yv < 0], (h_lo - h_hi) / (p_minus - p_plus))  # tau_i, negatives


def test_symmetric_loss_is_a_scaled_bartlett_wegkamp_loss_and_rules_cross_near_024():
    def phi(z, d):
        return np.where(z < 0, 1 - (1 - d) / d * z, np.maximum(0.0, 1 - z))

    f = np.linspace(-10, 10, 2001)
    for d in (0.1, 0.24, 0.45):
        for y in (1.0, -1.0):
            ours = double_hinge_loss(np.full_like(f, y), f, d, 1 - d)
            np.testing.assert_allclose(
                ours, entropy(d) * phi(d * y * f / entropy(d), d), atol=1e-12
            )
    # B&W reject iff |z| < 1/2; ours iff |f| < log((1-d)/d): "identical for r ~ 0.24"
    ratio = lambda d: d * np.log((1 - d) / d) / entropy(d) - 0.5  # noqa: E731
    root = brentq(ratio, 0.1, 0.45, xtol=1e-14, rtol=1e-14)
    assert abs(ratio(root)) < 1e-13 and ratio(root - 1e-9) * ratio(root + 1e-9) < 0  # a simple root
    # the docstring's value is the root to its own printed digits (it once said 0.2398)
    stated = re.search(r"equals 1/2 at ``d = (0\.(\d+))``", DoubleHingeSVM.__doc__)
    assert stated is not None
    assert abs(float(stated.group(1)) - root) <= 0.5 * 10.0 ** -len(stated.group(2))
    assert ratio(0.1) > 0 > ratio(0.45)  # ours rejects more when rejection is cheap


def test_chow_thresholds_minimise_the_expected_cost():
    p = np.linspace(0.0005, 0.9995, 1999)
    for costs in [(1, 1, 0.2, 0.2), (1, 2, 0.2, 0.4), (3, 1, 0.5, 0.6)]:
        c_pos, c_neg, r_pos, r_neg = costs
        expected = np.stack(
            [c_pos * p, r_pos * p + r_neg * (1 - p), c_neg * (1 - p)]
        )  # -1, reject, +1
        p_minus, p_plus = chow_thresholds(*costs)
        assert 0 < p_minus < p_plus < 1
        inside = (p > p_minus + 1e-3) & (p < p_plus - 1e-3)
        outside = (p < p_minus - 1e-3) | (p > p_plus + 1e-3)
        assert np.all(expected.argmin(axis=0)[inside] == 1)
        assert np.all(expected.argmin(axis=0)[outside] != 1)
    assert chow_thresholds(1, 1, 0.3, 0.3) == pytest.approx((0.3, 0.7))


# ---------------------------------------------------------------- exactness against cvxpy


def cvxpy_reference(X, y, C, costs, kernel, gamma):
    """min ||f||^2/2 + C sum_i max(0, tangents at p-, p+) written from scratch, solved by Clarabel."""
    c_pos, c_neg, r_pos, r_neg = costs
    p_lo = r_neg / (c_pos - r_pos + r_neg)
    p_hi = (c_neg - r_neg) / (c_neg - r_neg + r_pos)
    b = cp.Variable()
    if kernel == "linear":
        w = cp.Variable(X.shape[1])
        f, reg = X @ w + b, 0.5 * cp.sum_squares(w)
    else:
        K = np.exp(-gamma * ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1))
        a = cp.Variable(len(y))
        vals, vecs = np.linalg.eigh(K)
        root = vecs * np.sqrt(np.clip(vals, 0, None))  # K = root root^T
        f, reg = K @ a + b, 0.5 * cp.sum_squares(root.T @ a)
    pieces = [0]
    for p in (p_lo, p_hi):  # tangent of log(1 + exp(-y f)) at f = logit(p), for each label
        slope = np.where(y > 0, -(1 - p), p)
        pieces.append(entropy(p) + cp.multiply(slope, f))
    problem = cp.Problem(cp.Minimize(reg + C * cp.sum(cp.maximum(*pieces))))
    problem.solve(solver="CLARABEL")
    return problem.value


@pytest.mark.parametrize("seed", range(24))
def test_objective_matches_cvxpy(seed):
    rng = np.random.default_rng(1000 + seed)
    kernel = "linear" if seed % 2 == 0 else "rbf"
    n = int(rng.integers(40, 501 if kernel == "linear" else 201))
    d = int(rng.integers(1, 12))
    X = rng.standard_normal((n, d)) * rng.uniform(0.5, 3, d)
    y = np.where(
        X @ rng.standard_normal(d) + rng.normal(0, rng.uniform(0.2, 3), n) > rng.normal(0, 0.5),
        1,
        -1,
    )
    C = float(10 ** rng.uniform(-2, 3))
    if seed % 4 < 2:
        kw = {"reject_cost": float(rng.uniform(0.02, 0.45))}
        costs = (1.0, 1.0, kw["reject_cost"], kw["reject_cost"])
    else:
        c_pos, c_neg = rng.uniform(0.5, 3, 2)
        share = rng.uniform(0.1, 0.9)
        r_pos, r_neg = (
            c_pos * share * rng.uniform(0.2, 0.95),
            c_neg * (1 - share) * rng.uniform(0.2, 0.95),
        )
        kw = {"c_pos": c_pos, "c_neg": c_neg, "r_pos": r_pos, "r_neg": r_neg}
        costs = (c_pos, c_neg, r_pos, r_neg)
    model = DoubleHingeSVM(C=C, kernel=kernel, **kw).fit(X, y)
    reference = cvxpy_reference(X, y, C, costs, kernel, model.gamma_)
    assert model.converged_ and model.rel_gap_ <= 1e-8
    assert model.objective_ == pytest.approx(reference, rel=1e-6)
    assert model.dual_objective_ <= reference * (1 + 1e-9) + 1e-12  # a true lower bound
    assert model.gap_ == pytest.approx(model.objective_ - model.dual_objective_)
    # the certified objective is the fitted model's own
    f = model.decision_function(X)
    if kernel == "linear":
        norm2 = model.coef_ @ model.coef_
    else:
        norm2 = (
            model.dual_coef_
            @ rbf_kernel(model.support_vectors_, gamma=model.gamma_)
            @ model.dual_coef_
        )
    recomputed = 0.5 * norm2 + C * double_hinge_loss(y, f, model.p_minus_, model.p_plus_).sum()
    assert recomputed == pytest.approx(model.objective_, rel=1e-9)


# ---------------------------------------------------------------- Chow's rule on Gaussians

MU = np.array(
    [1.0, 0.5]
)  # class +1 ~ N(MU, I), class -1 ~ N(-MU, I), equal priors: logit = 2 <MU, x>


def gaussians(n, rng):
    y = rng.choice([-1, 1], size=n)
    return y[:, None] * MU + rng.standard_normal((n, 2)), y


def linear_rule_risk(w, b, f_minus, f_plus, costs):
    """Exact expected cost of 'reject iff f_minus < <w,x>+b < f_plus, else sign side' on the Gaussians."""
    c_pos, c_neg, r_pos, r_neg = costs
    scale = np.linalg.norm(w)
    risk = 0.0
    for label, c, r in ((1, c_pos, r_pos), (-1, c_neg, r_neg)):
        mean = label * (w @ MU) + b
        below, above = norm.cdf((f_minus - mean) / scale), norm.sf((f_plus - mean) / scale)
        risk += 0.5 * (c * (below if label == 1 else above) + r * (1 - below - above))
    return risk


@pytest.mark.parametrize(
    "costs", [(1.0, 1.0, 0.2, 0.2), (1.0, 2.0, 0.2, 0.4)], ids=["symmetric", "asymmetric"]
)
def test_linear_abstentions_follow_chow_and_risk_approaches_bayes(costs):
    c_pos, c_neg, r_pos, r_neg = costs
    kw = {"c_pos": c_pos, "c_neg": c_neg, "r_pos": r_pos, "r_neg": r_neg}
    p_minus, p_plus = chow_thresholds(*costs)
    f_minus, f_plus = np.log(p_minus / (1 - p_minus)), np.log(p_plus / (1 - p_plus))
    bayes = linear_rule_risk(2 * MU, 0.0, f_minus, f_plus, costs)
    rng = np.random.default_rng(7)
    X_test, y_test = gaussians(40_000, rng)
    chow_reject = (2 * X_test @ MU > f_minus) & (2 * X_test @ MU < f_plus)
    chow_decision = np.where(chow_reject, 0, np.where(2 * X_test @ MU >= f_plus, 1, -1))
    weight = np.where(y_test > 0, 1.0, 0.0)
    excess, agreement, agreement3 = {}, {}, {}
    for n in (100, 400, 1600, 6400):
        ex, ag, ag3 = [], [], []
        for _ in range(3):
            X, y = gaussians(n, rng)
            model = DoubleHingeSVM(C=1.0, **kw).fit(X, y)
            reject = model.reject(X_test)
            decision = np.where(reject, 0, model.predict(X_test))
            exact = linear_rule_risk(
                model.coef_, model.intercept_, model.f_minus_, model.f_plus_, costs
            )
            wrong = ~reject & (decision != y_test)
            empirical = (
                np.sum(wrong * np.where(y_test > 0, c_pos, c_neg))
                + np.sum(reject * (weight * r_pos + (1 - weight) * r_neg))
            ) / len(y_test)
            assert empirical == pytest.approx(exact, abs=0.01)  # Monte Carlo vs closed form
            ex.append(exact - bayes)
            ag.append(np.mean(reject == chow_reject))
            ag3.append(np.mean(decision == chow_decision))
        excess[n], agreement[n], agreement3[n] = (
            round(float(np.mean(v)), 5) for v in (ex, ag, ag3)
        )
    print(
        f"\n{costs}: Bayes risk {bayes:.5f}; n -> excess risk {excess}; "
        f"abstention agreement with Chow {agreement}; 3-way decision agreement {agreement3}"
    )
    assert min(excess.values()) >= -1e-12  # nobody beats Bayes
    assert excess[6400] < excess[100] / 4
    assert excess[6400] < 0.01 * bayes
    assert agreement[6400] >= 0.95 and agreement3[6400] >= 0.95
    assert agreement[6400] > agreement[100]


def test_rbf_abstentions_follow_chow():
    rng = np.random.default_rng(3)
    X, y = gaussians(800, rng)
    X_test, _ = gaussians(20_000, rng)
    model = DoubleHingeSVM(reject_cost=0.2, C=1.0, kernel="rbf", gamma=0.5).fit(X, y)
    agreement = np.mean(model.reject(X_test) == (np.abs(2 * X_test @ MU) < np.log(4)))
    print(f"\nRBF n=800: abstention agreement with Chow {agreement:.3f}, {model.support_.size} SVs")
    assert agreement >= 0.9
    assert model.support_.size < len(y)  # sparse


# ---------------------------------------------------------------- errors, labels, conventions


@pytest.mark.parametrize("d", [0.5, 0.7])
def test_reject_cost_at_least_half_is_an_error(d):
    with pytest.raises(ValueError, match="never optimal"):
        DoubleHingeSVM(reject_cost=d).fit([[0.0], [1.0]], [0, 1])


@pytest.mark.parametrize(
    "kw,match",
    [
        ({"reject_cost": 0.0}, "reject_cost must be positive"),
        ({"reject_cost": -0.1}, "reject_cost must be positive"),
        ({"C": 0.0}, "C must be positive"),
        ({"C": -1.0}, "C must be positive"),
        ({"c_pos": 1.0, "c_neg": 1.0, "r_pos": 0.6, "r_neg": 0.5}, "inconsistent costs"),
        ({"r_pos": -0.1, "r_neg": 0.1}, "r_pos must be a positive"),
        ({"kernel": "poly"}, "kernel must be"),
        ({"kernel": "rbf", "gamma": -1.0}, "gamma must be"),
    ],
)
def test_invalid_parameters(kw, match):
    with pytest.raises(ValueError, match=match):
        DoubleHingeSVM(**kw).fit([[0.0], [1.0], [2.0]], [0, 1, 1])


def test_non_binary_labels_are_named():
    X = np.arange(6.0)[:, None]
    with pytest.raises(ValueError, match=r"found 3 classes: \['x', 'y', 'z'\]"):
        DoubleHingeSVM().fit(X, ["x", "y", "z", "x", "y", "z"])
    with pytest.raises(ValueError, match=r"found 1 class: \[4\]"):
        DoubleHingeSVM().fit(X, [4] * 6)


@pytest.mark.parametrize("labels", [("a", "b"), (-1, 1), (3, 7), (False, True)])
def test_any_two_labels_round_trip(labels):
    rng = np.random.default_rng(5)
    X, s = gaussians(300, rng)
    y = np.where(s > 0, labels[1], labels[0])
    model = DoubleHingeSVM(C=1.0).fit(X, y)
    reference = DoubleHingeSVM(C=1.0).fit(X, s)
    assert model.classes_.tolist() == sorted(labels)
    pred = model.predict(X)
    assert pred.dtype == y.dtype and set(pred.tolist()) <= set(labels)
    np.testing.assert_allclose(model.decision_function(X), reference.decision_function(X))
    assert np.mean(pred == y) > 0.8
    # swapping which label is positive negates f (the symmetric loss is label-symmetric)
    swapped = DoubleHingeSVM(C=1.0).fit(X, -s)
    np.testing.assert_allclose(
        swapped.decision_function(X), -reference.decision_function(X), atol=1e-6
    )
    np.testing.assert_array_equal(swapped.reject(X), reference.reject(X))


def test_predict_and_reject_are_chows_rule_on_f():
    rng = np.random.default_rng(2)
    X, y = gaussians(400, rng)
    model = DoubleHingeSVM(C=1.0, c_pos=1.0, c_neg=2.0, r_pos=0.2, r_neg=0.4).fit(X, y)
    f = model.decision_function(X)
    assert model.f_minus_ < model.threshold_ < model.f_plus_
    np.testing.assert_array_equal(model.reject(X), (f > model.f_minus_) & (f < model.f_plus_))
    kept = ~model.reject(X)
    np.testing.assert_array_equal(model.predict(X)[kept], np.where(f[kept] >= model.f_plus_, 1, -1))
    assert DoubleHingeSVM(reject_cost=0.1).fit(X, y).threshold_ == 0.0


def test_sklearn_conventions_certificate_and_doctest():
    model = DoubleHingeSVM(reject_cost=0.3, C=5.0, kernel="rbf", gamma=0.7)
    assert clone(model).get_params() == model.get_params()
    with pytest.raises(NotFittedError):
        model.decision_function([[0.0, 0.0]])
    rng = np.random.default_rng(4)
    X, y = gaussians(200, rng)
    with pytest.warns(ConvergenceWarning):
        early = DoubleHingeSVM(C=5.0, max_iter=2).fit(X, y)
    exact = DoubleHingeSVM(C=5.0).fit(X, y)
    assert not early.converged_ and early.n_iter_ == 2
    assert (
        early.dual_objective_ <= exact.objective_ + 1e-9 <= early.objective_ + 2e-9
    )  # honest bounds
    with pytest.raises(ValueError, match="features"):
        exact.decision_function(np.zeros((3, 5)))
    result = doctest.testmod(_double_hinge, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0


def test_passes_scikit_learns_estimator_checks():
    check_estimator(DoubleHingeSVM())


def test_fit_double_hinge_keeps_the_c_of_the_smallest_validation_cost_risk():
    rng = np.random.default_rng(5)
    X, y = gaussians(300, rng)
    Xv, yv = gaussians(200, rng)
    grid = [100.0, 0.01, 1.0]
    model, C, info = fit_double_hinge(X, y, Xv, yv, 0.2, grid, c_scaling="mean")
    assert sorted(info["val_cost_risk"]) == sorted(grid) == sorted(info["fits"])
    # the validation cost risk by hand: 100 (errors on the accepted + d rejections) / n
    for c, risk in info["val_cost_risk"].items():
        fitted = DoubleHingeSVM(reject_cost=0.2, C=c / len(y)).fit(X, y)
        rejected = fitted.reject(Xv)
        errors = (fitted.predict(Xv) != yv) & ~rejected
        assert risk == pytest.approx(100 * (errors.sum() + 0.2 * rejected.sum()) / len(yv))
    best = min(info["val_cost_risk"].values())
    assert info["val_cost_risk"][C] == best
    assert C == min(c for c, r in info["val_cost_risk"].items() if r == best)  # ties: the smaller C
    assert model.C == pytest.approx(C / len(y)) and model.reject_cost == 0.2
    assert info["fit_cpu_s"] == pytest.approx(sum(f[1] for f in info["fits"].values()))
    assert all(f[3] <= 1e-6 for f in info["fits"].values())
    # c_scaling="sum": the grid value is the loss weight itself
    model, C, _ = fit_double_hinge(X, y, Xv, yv, 0.2, [0.5], c_scaling="sum")
    assert C == 0.5 and model.C == 0.5


def test_fit_double_hinge_breaks_ties_towards_the_smaller_c():
    rng = np.random.default_rng(6)
    X, y = gaussians(100, rng)
    # every C of a hard-margin-like grid gives the same validation risk on a far-apart sample
    Xv, yv = 10 * MU * np.array([[1], [-1]]), np.array([1, -1])
    _, C, info = fit_double_hinge(X, y, Xv, yv, 0.3, [1000.0, 10.0, 100.0], c_scaling="mean")
    assert len(set(info["val_cost_risk"].values())) == 1 and C == 10.0


# ---------------------------------------------------------------- the Gaussian kernel through Nyström


def test_nystroem_with_every_row_as_a_landmark_is_the_exact_kernel():
    rng = np.random.default_rng(8)
    X, y = gaussians(150, rng)
    X_test, _ = gaussians(500, rng)
    kw = {"reject_cost": 0.2, "C": 2.0, "kernel": "rbf", "gamma": 0.5}
    exact = DoubleHingeSVM(**kw).fit(X, y)
    full = DoubleHingeSVM(**kw, n_landmarks=10_000, random_state=0).fit(X, y)  # capped at n = 150
    assert full.n_landmarks_ == 150 and full.feature_map_ is not None and exact.feature_map_ is None
    assert full.objective_ == pytest.approx(exact.objective_, rel=1e-6)
    np.testing.assert_allclose(
        full.decision_function(X_test), exact.decision_function(X_test), atol=1e-4
    )
    # fewer landmarks restrict f to their span: the minimum of P can only rise
    for rank in (5, 20, 60):
        low = DoubleHingeSVM(**kw, n_landmarks=rank, random_state=0).fit(X, y)
        assert low.coef_.shape == (rank,) and low.converged_
        assert low.objective_ >= exact.objective_ - exact.gap_ - low.gap_
    # the same landmarks for the same seed
    a, b = (DoubleHingeSVM(**kw, n_landmarks=20, random_state=3).fit(X, y) for _ in range(2))
    np.testing.assert_array_equal(a.decision_function(X_test), b.decision_function(X_test))


@pytest.mark.parametrize(
    "kw,match",
    [
        ({"n_landmarks": 10}, "n_landmarks is the Nyström rank of the rbf kernel; kernel='linear'"),
        ({"kernel": "rbf", "n_landmarks": 0}, "n_landmarks must be a positive int or None, got 0"),
        (
            {"kernel": "rbf", "n_landmarks": 2.5},
            "n_landmarks must be a positive int or None, got 2.5",
        ),
    ],
)
def test_invalid_nystroem_rank_is_named(kw, match):
    with pytest.raises(ValueError, match=re.escape(match)):
        DoubleHingeSVM(**kw).fit([[0.0], [1.0], [2.0]], [0, 1, 1])


def test_fit_double_hinge_rbf_keeps_the_width_and_c_of_the_smallest_validation_cost_risk():
    rng = np.random.default_rng(9)
    X, y = gaussians(200, rng)
    Xv, yv = gaussians(300, rng)
    gammas, grid = [2.0, 0.05], [1000.0, 10.0]
    model, C, info = fit_double_hinge(
        X, y, Xv, yv, 0.2, grid, kernel="rbf", gamma_grid=gammas, n_landmarks=40, random_state=1
    )
    assert sorted(info["val_cost_risk"]) == [(g, c) for g in sorted(gammas) for c in sorted(grid)]
    for (g, c), risk in info["val_cost_risk"].items():
        fitted = DoubleHingeSVM(
            reject_cost=0.2, C=c / len(y), kernel="rbf", gamma=g, n_landmarks=40, random_state=1
        ).fit(X, y)
        rejected = fitted.reject(Xv)
        errors = (fitted.predict(Xv) != yv) & ~rejected
        assert risk == pytest.approx(100 * (errors.sum() + 0.2 * rejected.sum()) / len(yv))
    best = min(info["val_cost_risk"].values())
    first = min(
        k for k, r in info["val_cost_risk"].items() if r == best
    )  # ties: smaller gamma, then C
    assert info["key"] == first == (info["gamma"], C)
    assert (
        model.gamma == info["gamma"]
        and model.n_landmarks_ == 40
        and model.C == pytest.approx(C / len(y))
    )


@pytest.mark.parametrize(
    "kw,match",
    [
        ({"gamma_grid": [1.0]}, "gamma_grid is the RBF kernel's"),
        ({"kernel": "rbf"}, "kernel='rbf' needs gamma_grid of positive widths, got None"),
        (
            {"kernel": "rbf", "gamma_grid": [0.0]},
            "kernel='rbf' needs gamma_grid of positive widths, got [0.0]",
        ),
        ({"kernel": "poly"}, "kernel must be 'linear' or 'rbf', got 'poly'"),
        ({"c_scaling": "per_row"}, "c_scaling must be 'mean' or 'sum', got 'per_row'"),
    ],
)
def test_fit_double_hinge_names_a_bad_kernel_grid(kw, match):
    X, y = np.arange(6.0)[:, None], np.array([0, 0, 0, 1, 1, 1])
    with pytest.raises(ValueError, match=re.escape(match)):
        fit_double_hinge(X, y, X, y, 0.2, [1.0], **kw)


# ---------------------------------------------------------------- the Chow limit in one dimension


def _gaussian_1d(n, rng):
    """Classes N(-1, 1) / N(+1, 1) with equal priors: the log-odds is 2x.

    So Chow's rule rejects iff |x| < logit(1-d)/2."""
    y = np.where(rng.random(n) < 0.5, 1, -1)
    return rng.normal(y.astype(float), 1.0)[:, None], y


def exact_cost_1d(f, d):
    """Expected cost (errors + d rejections) of Chow's rule on the score ``f`` under the 1-D model, by integration.

    The decision of ``f`` (-1 / reject / +1 against ``logit(d)``, 0, ``logit(1-d)``) is constant between the
    crossings of those levels, found on a grid of step 1e-3 over [-12, 12] and refined by brentq; on each
    piece the class masses are differences of the normal CDF (beyond +-12 each tail has mass < 1e-32).
    """
    lo, hi = -12.0, 12.0
    levels = (np.log(d / (1 - d)), 0.0, np.log((1 - d) / d))
    x = np.linspace(lo, hi, 24_001)
    fx = f(x)
    cuts = [lo, hi]
    for level in levels:
        g = fx - level
        for i in np.flatnonzero(g[:-1] * g[1:] < 0):
            cuts.append(
                brentq(
                    lambda z, level=level: f(np.array([z]))[0] - level, x[i], x[i + 1], xtol=1e-13
                )
            )
    cuts = np.sort(cuts)
    mids = f((cuts[:-1] + cuts[1:]) / 2)  # the score inside each piece
    cuts[0], cuts[-1] = -np.inf, np.inf
    cost = 0.0
    for a, b, mid in zip(cuts[:-1], cuts[1:], mids):
        neg = 0.5 * (norm.cdf(b + 1) - norm.cdf(a + 1))  # mass of class -1 on (a, b)
        pos = 0.5 * (norm.cdf(b - 1) - norm.cdf(a - 1))
        cost += d * (neg + pos) if levels[0] < mid < levels[2] else (neg if mid > 0 else pos)
    return cost


def best_linear_slope(d):
    """Slope ``w`` of the linear score ``f = w x`` minimising the expected double-hinge loss (b = 0 by symmetry).

    In the margin ``m = y w x`` the two tangents at ``p- = d``, ``p+ = 1 - d`` are ``H(d) - (1-d) m`` and
    ``H(d) - d m``, so ``l = d [H(d)/d - m]_+ + (1 - 2d) [-m]_+``; and ``u = y x ~ N(1, 1)`` for both classes, so
    ``m ~ N(w, w^2)`` and ``E[k - m]_+ = (k - w) Phi((k - w)/w) + w phi((k - w)/w)`` in closed form.
    """
    h = entropy(d)

    def hinge(k, w):
        if w == 0:
            return max(k, 0.0)
        z = (k - w) / w
        return (k - w) * norm.cdf(z) + w * norm.pdf(z)

    def risk(w):
        return d * hinge(h / d, w) + (1 - 2 * d) * hinge(0.0, w)

    return minimize_scalar(risk, bounds=(0.0, 6.0), method="bounded", options={"xatol": 1e-10}).x


def test_best_linear_double_hinge_model_is_not_chows_rule():
    # Chow's rule (f = the log-odds 2x): Bayes cost; the best line's reject interval +-logit(1-d)/w
    expected = {0.3: (0.426, 0.424), 0.2: (0.735, 0.693), 0.1: (1.449, 1.099)}
    for d, (linear, chow) in expected.items():
        w = best_linear_slope(d)
        half = np.log((1 - d) / d)
        assert round(half / w, 3) == linear and round(half / 2, 3) == chow
    d = 0.1
    bayes = exact_cost_1d(lambda x: 2 * x, d)
    assert bayes == pytest.approx(0.0701, abs=5e-5)
    # Bayes cost in closed form: errors beyond the reject interval, d inside it
    a = np.log(9) / 2
    assert bayes == pytest.approx(
        2 * 0.5 * norm.sf(a + 1) + d * (norm.cdf(a - 1) - norm.cdf(-a - 1)), rel=1e-10
    )
    w = best_linear_slope(d)
    assert w == pytest.approx(1.52, abs=0.005)
    assert exact_cost_1d(lambda x: w * x, d) - bayes == pytest.approx(0.0037, abs=5e-5)
    # d = 0.05: the best slope is 0, so f = 0 rejects everything at cost d (Chow: +-1.472)
    assert best_linear_slope(0.05) < 1e-6
    assert exact_cost_1d(lambda x: 0.0 * x, 0.05) == pytest.approx(0.05)


def test_rbf_excess_cost_falls_to_the_chow_limit_and_the_linear_one_stays_at_its_bias():
    d, seeds = 0.1, range(8)
    bayes = exact_cost_1d(lambda x: 2 * x, d)
    w = best_linear_slope(d)
    linear_bias = exact_cost_1d(lambda x: w * x, d) - bayes  # 0.0037
    rbf, linear = {}, {}
    for n in (200, 800, 3200):
        ex_rbf, ex_lin = [], []
        for seed in seeds:
            X, y = _gaussian_1d(n, np.random.default_rng(seed))
            # C = c0 n^-0.6 on the summed loss: the regularisation C^-1 / n -> 0, slower than 1/n
            model = DoubleHingeSVM(
                reject_cost=d,
                C=100.0 * n**-0.6,
                kernel="rbf",
                gamma=0.5,
                n_landmarks=100,
                random_state=seed,
            ).fit(X, y)
            ex_rbf.append(
                exact_cost_1d(lambda x, m=model: m.decision_function(x[:, None]), d) - bayes
            )
            lin = DoubleHingeSVM(reject_cost=d, C=10.0).fit(X, y)
            ex_lin.append(
                exact_cost_1d(lambda x, m=lin: m.decision_function(x[:, None]), d) - bayes
            )
        rbf[n], linear[n] = float(np.mean(ex_rbf)), float(np.mean(ex_lin))
        assert min(ex_rbf + ex_lin) >= -1e-12  # nobody beats Bayes
    print(
        f"\nd = {d}: Bayes {bayes:.4f}; mean excess cost over {len(seeds)} seeds, n -> RBF {rbf}, "
        f"linear {linear}; the best line's {linear_bias:.4f}"
    )
    assert rbf[200] > rbf[800] > rbf[3200]  # the RBF model approaches Chow's rule ...
    assert rbf[3200] < linear_bias  # ... below what any line can reach
    assert linear[3200] == pytest.approx(linear_bias, abs=0.001)  # the line stays at its bias
    assert min(linear.values()) > 0.8 * linear_bias


def test_double_hinge_known_answers():
    """Chow's thresholds; the loss equals the logistic loss at the logits of d = 0.2 and is 0 beyond the hinge;
    fit_double_hinge keeps the C of the smallest validation cost risk (linear, then RBF on 30 landmarks)."""
    assert chow_thresholds(r_pos=0.2, r_neg=0.2) == pytest.approx((0.2, 0.8))
    assert chow_thresholds(c_pos=1.0, c_neg=2.0, r_pos=0.3, r_neg=0.3) == pytest.approx((0.3, 0.85))
    f = np.array([-3.0, -np.log(4), 0.0, np.log(4), 3.0])
    np.testing.assert_allclose(
        double_hinge_loss(np.ones(5), f, 0.2, 0.8), [2.9004, 1.6094, 0.5004, 0.2231, 0.0], atol=5e-5
    )
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 2))
    y = (X[:, 0] + 0.5 * rng.normal(size=200) > 0).astype(int)
    model, C, info = fit_double_hinge(X[:100], y[:100], X[100:], y[100:], 0.2, [0.1, 1, 10])
    assert (C, model.C) == (10.0, 0.1)
    assert {k: round(r, 2) for k, r in info["val_cost_risk"].items()} == {
        0.1: 20.0,
        1.0: 20.0,
        10.0: 17.2,
    }
    model, C, info = fit_double_hinge(
        X[:100],
        y[:100],
        X[100:],
        y[100:],
        0.2,
        [1, 10],
        kernel="rbf",
        gamma_grid=[0.5],
        n_landmarks=30,
        random_state=0,
    )
    assert (info["key"], info["val_cost_risk"], model.n_landmarks_) == (
        (0.5, 1.0),
        {(0.5, 1.0): 20.0, (0.5, 10.0): 20.0},
        30,
    )
    assert float(model.reject(X[100:]).mean()) == 1.0
