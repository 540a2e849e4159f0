"""DoubleHingeSVM: reconstruction of the loss, exactness against cvxpy, Chow's rule, errors, labels."""

import doctest

import cvxpy as cp
import numpy as np
import pytest
from scipy.optimize import brentq
from scipy.stats import norm
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning, NotFittedError
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.utils.estimator_checks import check_estimator
from threadpoolctl import threadpool_limits

from rejectopt.classifiers import _double_hinge
from rejectopt.classifiers import fit_double_hinge
from rejectopt.classifiers._double_hinge import DoubleHingeSVM, chow_thresholds, double_hinge_loss


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
        assert np.all(loss <= nll(y, f) + 1e-12)                      # below the NLL ...
        assert np.all(np.diff(loss, 2) >= -1e-12)                     # convex, piecewise linear
        at = double_hinge_loss(np.full(2, y), thresholds, p_minus, p_plus)
        np.testing.assert_allclose(at, nll(y, thresholds), rtol=1e-12)  # ... touching it at f-, f+
        eps = 1e-6
        slope = (double_hinge_loss(np.full(2, y), thresholds + eps, p_minus, p_plus) - at) / eps
        np.testing.assert_allclose(slope, -y / (1 + np.exp(y * thresholds)), atol=1e-5)  # tangent
        assert np.all(loss[y * f > 20 / 3] == 0)                          # sparsity: zero past t
    # the hinge form used by the solver, with the surviving fragments of the paper
    yv = np.where(np.arange(f.size) % 2 == 0, 1.0, -1.0)
    a, D, t, tau = _double_hinge._hinge_form(yv, p_minus, p_plus)
    m = yv * f
    np.testing.assert_allclose(a * np.maximum(0, t - m) + D * np.maximum(0, tau - m),
                               double_hinge_loss(yv, f, p_minus, p_plus), atol=1e-12)
    h_lo, h_hi = entropy(p_minus), entropy(p_plus)
    assert D == pytest.approx(p_plus - p_minus)                                  # D = C (p+ - p-)
    np.testing.assert_allclose(a[yv > 0], 1 - p_plus)                            # C_i = C (1 - p+)
    np.testing.assert_allclose(a[yv < 0], p_minus)                               # C_i = C p-
    np.testing.assert_allclose(t[yv < 0], h_lo / p_minus)                        # t_i = H(p-)/p-
    np.testing.assert_allclose(tau[yv < 0], (h_lo - h_hi) / (p_minus - p_plus))  # tau_i, negatives


def test_symmetric_loss_is_a_scaled_bartlett_wegkamp_loss_and_rules_cross_near_024():
    def phi(z, d):
        return np.where(z < 0, 1 - (1 - d) / d * z, np.maximum(0.0, 1 - z))

    f = np.linspace(-10, 10, 2001)
    for d in (0.1, 0.24, 0.45):
        for y in (1.0, -1.0):
            ours = double_hinge_loss(np.full_like(f, y), f, d, 1 - d)
            np.testing.assert_allclose(ours, entropy(d) * phi(d * y * f / entropy(d), d), atol=1e-12)
    # B&W reject iff |z| < 1/2; ours iff |f| < log((1-d)/d): "identical for r ~ 0.24"
    ratio = lambda d: d * np.log((1 - d) / d) / entropy(d) - 0.5  # noqa: E731
    assert brentq(ratio, 0.1, 0.45) == pytest.approx(0.24, abs=0.005)
    assert ratio(0.1) > 0 > ratio(0.45)  # ours rejects more when rejection is cheap


def test_chow_thresholds_minimise_the_expected_cost():
    p = np.linspace(0.0005, 0.9995, 1999)
    for costs in [(1, 1, 0.2, 0.2), (1, 2, 0.2, 0.4), (3, 1, 0.5, 0.6)]:
        c_pos, c_neg, r_pos, r_neg = costs
        expected = np.stack([c_pos * p, r_pos * p + r_neg * (1 - p), c_neg * (1 - p)])  # -1, reject, +1
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
    y = np.where(X @ rng.standard_normal(d) + rng.normal(0, rng.uniform(0.2, 3), n) > rng.normal(0, 0.5), 1, -1)
    C = float(10 ** rng.uniform(-2, 3))
    if seed % 4 < 2:
        kw = {"reject_cost": float(rng.uniform(0.02, 0.45))}
        costs = (1.0, 1.0, kw["reject_cost"], kw["reject_cost"])
    else:
        c_pos, c_neg = rng.uniform(0.5, 3, 2)
        share = rng.uniform(0.1, 0.9)
        r_pos, r_neg = c_pos * share * rng.uniform(0.2, 0.95), c_neg * (1 - share) * rng.uniform(0.2, 0.95)
        kw = {"c_pos": c_pos, "c_neg": c_neg, "r_pos": r_pos, "r_neg": r_neg}
        costs = (c_pos, c_neg, r_pos, r_neg)
    model = DoubleHingeSVM(C=C, kernel=kernel, **kw).fit(X, y)
    reference = cvxpy_reference(X, y, C, costs, kernel, model.gamma_)
    assert model.converged_ and model.rel_gap_ <= 1e-8
    assert model.objective_ == pytest.approx(reference, rel=1e-6)
    assert model.dual_objective_ <= reference * (1 + 1e-9) + 1e-12          # a true lower bound
    assert model.gap_ == pytest.approx(model.objective_ - model.dual_objective_)
    # the certified objective is the fitted model's own
    f = model.decision_function(X)
    if kernel == "linear":
        norm2 = model.coef_ @ model.coef_
    else:
        norm2 = model.dual_coef_ @ rbf_kernel(model.support_vectors_, gamma=model.gamma_) @ model.dual_coef_
    recomputed = 0.5 * norm2 + C * double_hinge_loss(y, f, model.p_minus_, model.p_plus_).sum()
    assert recomputed == pytest.approx(model.objective_, rel=1e-9)


# ---------------------------------------------------------------- Chow's rule on Gaussians

MU = np.array([1.0, 0.5])  # class +1 ~ N(MU, I), class -1 ~ N(-MU, I), equal priors: logit = 2 <MU, x>


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


@pytest.mark.parametrize("costs", [(1.0, 1.0, 0.2, 0.2), (1.0, 2.0, 0.2, 0.4)], ids=["symmetric", "asymmetric"])
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
            exact = linear_rule_risk(model.coef_, model.intercept_, model.f_minus_, model.f_plus_, costs)
            wrong = ~reject & (decision != y_test)
            empirical = (np.sum(wrong * np.where(y_test > 0, c_pos, c_neg))
                         + np.sum(reject * (weight * r_pos + (1 - weight) * r_neg))) / len(y_test)
            assert empirical == pytest.approx(exact, abs=0.01)   # Monte Carlo vs closed form
            ex.append(exact - bayes)
            ag.append(np.mean(reject == chow_reject))
            ag3.append(np.mean(decision == chow_decision))
        excess[n], agreement[n], agreement3[n] = (round(float(np.mean(v)), 5) for v in (ex, ag, ag3))
    print(f"\n{costs}: Bayes risk {bayes:.5f}; n -> excess risk {excess}; "
          f"abstention agreement with Chow {agreement}; 3-way decision agreement {agreement3}")
    assert min(excess.values()) >= -1e-12                 # nobody beats Bayes
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


@pytest.mark.parametrize("kw,match", [
    ({"reject_cost": 0.0}, "reject_cost must be positive"),
    ({"reject_cost": -0.1}, "reject_cost must be positive"),
    ({"C": 0.0}, "C must be positive"),
    ({"C": -1.0}, "C must be positive"),
    ({"c_pos": 1.0, "c_neg": 1.0, "r_pos": 0.6, "r_neg": 0.5}, "inconsistent costs"),
    ({"r_pos": -0.1, "r_neg": 0.1}, "r_pos must be a positive"),
    ({"kernel": "poly"}, "kernel must be"),
    ({"kernel": "rbf", "gamma": -1.0}, "gamma must be"),
])
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
    np.testing.assert_allclose(swapped.decision_function(X), -reference.decision_function(X), atol=1e-6)
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
    assert early.dual_objective_ <= exact.objective_ + 1e-9 <= early.objective_ + 2e-9  # honest bounds
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
