"""Tests of rejectopt.scores: learned scores (SELE, REG, TCP), baselines and C selection."""

import importlib.util
import json
import sys
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from scipy.optimize import minimize
from scipy.stats import spearmanr
from sklearn.base import clone
from sklearn.datasets import load_digits
from sklearn.exceptions import NotFittedError
from sklearn.linear_model import LogisticRegression

from rejectopt.metrics import aurc
from rejectopt.scores import (
    REG,
    SCORES,
    SELE,
    TCP,
    ScoreError,
    make_score,
    mcp,
    select_C,
    svm_margin,
)
from rejectopt.scores._base import PerClassLinearScore
from rejectopt.scores._baselines import svor_margin
from rejectopt.scores._registry import call_score, constant_score_message, describe_score
from rejectopt.scores._sele import ChunkedSELEObjective, make_chunks


def _sigmoid(z):
    return np.exp(-np.logaddexp(0.0, -z))


def _linear_risk_data(n, seed, d=5, n_classes=3):
    """x ~ N(0, I_d), predicted class uniform, P(error | x) = sigmoid(<a_c, x> + b_c)."""
    rng = np.random.default_rng(seed)
    directions = np.random.default_rng(123).normal(size=(n_classes, d))
    offsets = np.array([-1.0, 0.0, -0.5])[:n_classes]
    X = rng.normal(size=(n, d))
    y_pred = rng.integers(0, n_classes, n)
    risk = _sigmoid(np.einsum("ij,ij->i", X, directions[y_pred]) + offsets[y_pred])
    loss = 100.0 * (rng.random(n) < risk)  # classification loss in %, as in the protocol
    return X, y_pred, loss, risk


@pytest.fixture(scope="module")
def linear_risk():
    return _linear_risk_data(4000, seed=0), _linear_risk_data(4000, seed=1)


def _naive_chunk_objective(loss, chunks, scores):
    """Eq. (30) averaged over chunks, with explicit n_k x n_k matrices (float64)."""
    value, grad = 0.0, np.zeros_like(scores)
    for chunk in chunks:
        s, chunk_loss = scores[chunk], loss[chunk]
        diff = s[None, :] - s[:, None]
        sig = _sigmoid(diff)
        value += (chunk_loss[:, None] * np.logaddexp(0.0, diff)).sum() / len(chunk) ** 2
        grad[chunk] += (
            (chunk_loss[:, None] * sig).sum(axis=0) - chunk_loss * sig.sum(axis=1)
        ) / len(chunk) ** 2
    return value / len(chunks), grad / len(chunks)


# ---------------------------------------------------------------- SELE objective


@pytest.mark.parametrize("error_rate", [0.67, 0.1], ids=["circulant", "bipartite"])
@pytest.mark.parametrize("spread", [3.0, 200.0], ids=["exp-path", "stable-path"])
@pytest.mark.parametrize("dtype, rel", [(np.float64, 1e-12), (np.float32, 1e-5)])
@pytest.mark.parametrize("n", [2, 9, 1001])
def test_chunked_objective_matches_naive_pairwise_sum(n, dtype, rel, spread, error_rate):
    rng = np.random.default_rng(n)
    loss = (rng.random(n) < error_rate) * rng.integers(1, 3, n).astype(float)
    loss[0] = 1.0  # at least one positive loss
    scores = spread * rng.normal(size=n)
    chunks = make_chunks(n, chunk_size=200, random_state=0)
    expected_value, expected_grad = _naive_chunk_objective(loss, chunks, scores)
    objective = ChunkedSELEObjective(loss, chunks, dtype=dtype, n_jobs=2)
    if n > 100:
        assert objective.groups[-1].bipartite == (error_rate < 0.5)
    with ThreadPoolExecutor(2) as executor:
        value, grad = objective.value_and_gradient(scores, executor)
    assert value == pytest.approx(expected_value, rel=rel)
    np.testing.assert_allclose(grad, expected_grad, rtol=0, atol=rel * np.abs(expected_grad).max())


def test_sele_gradient_matches_finite_differences():
    X, y_pred, loss, _ = _linear_risk_data(600, seed=3)
    problem = SELE(dtype="float64", chunk_size=100)._build_problem(X, y_pred, loss)
    theta = np.random.default_rng(0).normal(size=problem.shape).ravel() * 0.3
    _, grad = problem.value_and_gradient(theta, 0.7)
    step = 1e-6
    for k in np.random.default_rng(1).choice(theta.size, 10, replace=False):
        e = np.zeros_like(theta)
        e[k] = step
        numeric = (
            problem.value_and_gradient(theta + e, 0.7)[0]
            - problem.value_and_gradient(theta - e, 0.7)[0]
        ) / (2 * step)
        assert grad[k] == pytest.approx(numeric, rel=1e-5, abs=1e-8)


def test_make_chunks_is_a_seeded_partition():
    chunks = make_chunks(1234, chunk_size=500, random_state=7)
    assert len(chunks) == 2 and sorted(np.concatenate(chunks).tolist()) == list(range(1234))
    again = make_chunks(1234, chunk_size=500, random_state=7)
    assert all(np.array_equal(a, b) for a, b in zip(chunks, again))


@pytest.mark.parametrize("C", [0.0, 1.0, 100.0])
def test_sele_objective_matches_tightly_converged_reference(C):
    """The fit's objective is within 1e-4 (relative) of scipy L-BFGS at gtol 1e-10 on the same chunks."""
    X, y_pred, loss, _ = _linear_risk_data(1500, seed=4)
    sele = SELE(C=C, chunk_size=300, random_state=5).fit(X, y_pred, loss)

    Z = (X - X.mean(axis=0)) / X.std(axis=0)
    chunks = make_chunks(len(loss), chunk_size=300, random_state=5)
    K, d = 3, X.shape[1]
    C_eff = max(C, 1e-6 * loss.mean())

    def objective(theta_flat):
        theta = theta_flat.reshape(K, d + 1)
        scores = np.einsum("ij,ij->i", Z, theta[y_pred, :d]) + theta[y_pred, d]
        value, grad_s = _naive_chunk_objective(loss, chunks, scores)
        grad = np.zeros_like(theta)
        np.add.at(grad, y_pred, np.hstack([Z, np.ones((len(loss), 1))]) * grad_s[:, None])
        grad[:, :d] += C_eff * theta[:, :d]
        return value + 0.5 * C_eff * np.sum(theta[:, :d] ** 2), grad.ravel()

    reference = minimize(
        objective,
        np.zeros(K * (d + 1)),
        jac=True,
        method="L-BFGS-B",
        options={"gtol": 1e-10, "ftol": 1e-15, "maxiter": 20000},
    )
    fitted_theta = np.hstack([sele.coef_, sele.intercept_[:, None]]).ravel()
    assert objective(fitted_theta)[0] == pytest.approx(sele.objective_, rel=1e-6)
    assert (sele.objective_ - reference.fun) / reference.fun < 1e-4


# ---------------------------------------------------------------- Fisher consistency (Theorems 7 and 11)


@pytest.mark.parametrize("estimator", [SELE(C=1), REG(C=1)], ids=["SELE", "REG"])
def test_learned_score_recovers_ordering_of_linear_conditional_risk(linear_risk, estimator):
    (X, y_pred, loss, _), (X_tst, y_pred_tst, loss_tst, risk_tst) = linear_risk
    score = clone(estimator).fit(X, y_pred, loss).predict(X_tst, y_pred_tst)
    assert spearmanr(score, risk_tst).statistic >= 0.9
    random_aurcs = [
        aurc(loss_tst, np.random.default_rng(k).random(len(loss_tst))) for k in range(5)
    ]
    assert aurc(loss_tst, score) < 0.75 * min(random_aurcs)
    assert aurc(loss_tst, score) < 1.1 * aurc(loss_tst, risk_tst)


def test_tcp_predicts_negative_confidence(linear_risk):
    (X, y_pred, _, risk), (X_tst, y_pred_tst, _, risk_tst) = linear_risk
    tcp = TCP(C=1).fit(X, y_pred, 1.0 - risk)  # p_true = probability of being correct
    uncertainty = tcp.predict(X_tst, y_pred_tst)
    assert spearmanr(uncertainty, risk_tst).statistic >= 0.9
    assert np.allclose(uncertainty, -tcp._raw_scores(X_tst, y_pred_tst))


def test_reg_with_C_zero_is_least_squares_per_class():
    rng = np.random.default_rng(0)
    X, y_pred = rng.normal(size=(300, 3)), rng.integers(0, 2, 300)
    true_w = np.array([[1.0, -2.0, 0.5], [0.0, 3.0, 1.0]])
    target = np.einsum("ij,ij->i", X, true_w[y_pred]) + np.array([0.3, -0.7])[y_pred]
    reg = REG(C=0, standardize=False).fit(X, y_pred, target)
    np.testing.assert_allclose(reg.coef_, true_w, atol=1e-10)
    np.testing.assert_allclose(reg.predict(X, y_pred), target, atol=1e-10)


# ---------------------------------------------------------------- C = 0, structured mode, unseen classes


def test_sele_with_C_zero_is_finite_on_separable_data():
    """An indicator feature separates errors from correct predictions: R alone has no minimiser."""
    rng = np.random.default_rng(0)
    indicator = (rng.random(800) < 0.3).astype(float)
    X = np.column_stack([indicator, rng.normal(size=(800, 2))])
    loss = 100.0 * indicator
    sele = SELE(C=0).fit(X, None, loss)
    scores = sele.predict(X, None)
    assert np.all(np.isfinite(scores)) and np.all(np.isfinite(sele.coef_))
    assert sele.coef_[0, 0] > 1.0  # pushed far along the separating direction, but bounded
    assert aurc(loss, scores) == pytest.approx(aurc(loss, loss), abs=1e-12)
    assert sele.C_effective_ == pytest.approx(1e-6 * loss.mean())


def test_structured_mode_uses_one_weight_vector():
    X, _, loss, _ = _linear_risk_data(500, seed=2)
    for estimator in (SELE(C=1), REG(C=1), TCP(C=1)):
        fitted = estimator.fit(X, None, loss)
        assert fitted.coef_.shape == (1, X.shape[1]) and fitted.predict(X, None).shape == (500,)
        with pytest.raises(ValueError, match="structured"):
            fitted.predict(X, np.zeros(500, int))


@pytest.mark.parametrize("estimator", [SELE(C=1), REG(C=1), TCP(C=1)], ids=["SELE", "REG", "TCP"])
def test_unseen_predicted_class_is_most_uncertain_and_does_not_crash(estimator):
    X, y_pred, loss, _ = _linear_risk_data(600, seed=5)
    y_pred = np.where(y_pred == 1, 0, y_pred)  # class 1 never predicted in training
    fitted = clone(estimator).set_params(n_classes=4).fit(X, y_pred, loss)
    train_uncertainty = fitted.predict(X, y_pred)
    unseen = fitted.predict(X[:5], np.array([1, 1, 3, 3, 7]))  # 7 >= n_classes as well
    assert np.all(np.isfinite(unseen)) and np.all(unseen >= train_uncertainty.max() - 1e-12)
    assert not fitted.class_seen_[1] and not fitted.class_seen_[3]


# ---------------------------------------------------------------- scikit-learn API


@pytest.mark.parametrize(
    "estimator", [SELE(C=3, chunk_size=50), REG(C=3), TCP(C=3)], ids=["SELE", "REG", "TCP"]
)
def test_get_params_set_params_clone_round_trip(estimator):
    params = estimator.get_params()
    copy = clone(estimator)
    assert copy.get_params() == params and copy is not estimator
    copy.set_params(C=7)
    assert copy.C == 7 and estimator.C == 3
    with pytest.raises(TypeError):
        type(estimator)(3)  # keyword-only


@pytest.mark.parametrize("estimator", [SELE(), REG(), TCP()], ids=["SELE", "REG", "TCP"])
def test_predict_before_fit_raises_not_fitted(estimator):
    with pytest.raises(NotFittedError):
        estimator.predict(np.zeros((2, 3)), np.zeros(2, int))


def test_fit_validates_inputs():
    X = np.zeros((4, 2))
    with pytest.raises(ValueError, match="y_pred"):
        SELE().fit(X, np.array([0, 1]), np.ones(4))
    with pytest.raises(ValueError, match="non-negative"):
        SELE().fit(X, np.array([0, -1, 0, 0]), np.ones(4))
    with pytest.raises(ValueError, match="C must be"):
        REG(C=-1).fit(X, np.zeros(4, int), np.ones(4))


def test_sele_is_deterministic_and_standardises_constant_features():
    X, y_pred, loss, _ = _linear_risk_data(700, seed=6)
    X = np.hstack([X, np.full((700, 1), 5.0)])
    first = SELE(C=1, random_state=3).fit(X, y_pred, loss)
    second = SELE(C=1, random_state=3).fit(X, y_pred, loss)
    assert first.scale_[-1] == 1.0
    assert first.predict(X, y_pred).tobytes() == second.predict(X, y_pred).tobytes()


def test_sele_fit_path_matches_individual_fits_and_warm_start():
    X, y_pred, loss, _ = _linear_risk_data(1500, seed=7)
    path = SELE(chunk_size=300).fit_path(X, y_pred, loss, C_grid=(0, 10, 1000))
    for C, fitted in zip((0, 10, 1000), path):
        single = SELE(C=C, chunk_size=300).fit(X, y_pred, loss)
        assert fitted.C == C and fitted.objective_ == pytest.approx(single.objective_, rel=1e-5)
    warm = SELE(C=1000, chunk_size=300, warm_start=True).fit(X, y_pred, loss)
    warm.set_params(C=10).fit(X, y_pred, loss)
    assert warm.objective_ == pytest.approx(path[1].objective_, rel=1e-5)


def test_all_zero_loss_gives_zero_weights():
    X, y_pred, _, _ = _linear_risk_data(300, seed=8)
    sele = SELE(C=0).fit(X, y_pred, np.zeros(300))
    assert np.all(sele.predict(X, y_pred) == 0.0)


# ---------------------------------------------------------------- baselines and selection


def test_baselines_return_uncertainties():
    np.testing.assert_allclose(mcp([[0.7, 0.3], [0.4, 0.6]]), [0.3, 0.4])
    np.testing.assert_allclose(svm_margin([2.0, -0.5]), [-2.0, -0.5])
    np.testing.assert_allclose(svm_margin([[1.0, 3.0], [0.2, -1.0]]), [-3.0, -0.2])
    np.testing.assert_allclose(svor_margin([0.1, 2.0], [0.0, 1.0, 3.0]), [-0.1, -1.0])
    with pytest.raises(ValueError, match="proba"):
        mcp([0.5, 0.5])


def test_select_C_picks_smallest_validation_aurc(linear_risk):
    (X, y_pred, loss, _), (X_val, y_pred_val, loss_val, _) = linear_risk
    for estimator, target in ((REG(), loss), (SELE(), loss), (TCP(), 1.0 - loss / 100)):
        best, val_aurc = select_C(estimator, X, y_pred, target, X_val, y_pred_val, loss_val)
        assert sorted(val_aurc) == [0, 1, 10, 100, 1000]
        assert val_aurc[best.C] == min(val_aurc.values())
        assert aurc(loss_val, best.predict(X_val, y_pred_val)) == pytest.approx(val_aurc[best.C])


def test_select_C_breaks_ties_towards_larger_C():
    X = np.random.default_rng(0).normal(size=(50, 2))
    y_pred, loss = np.zeros(50, int), np.zeros(50)
    best, val_aurc = select_C(REG(), X, y_pred, loss, X, y_pred, loss)
    assert set(val_aurc.values()) == {0.0} and best.C == 1000


@pytest.mark.parametrize("n, d", [(40, 300), (300, 40)])
def test_reg_equals_sklearn_ridge_in_primal_and_dual_regimes(n, d):
    from sklearn.linear_model import Ridge

    rng = np.random.default_rng(3)
    X, loss = rng.normal(size=(n, d)), rng.random(n)
    C = 0.5
    ours = REG(C=C, standardize=False).fit(X, None, loss).predict(X, None)
    # F = C/2 ||w||^2 + 1/n sum r^2  <=>  sum r^2 + (C n / 2) ||w||^2, bias unpenalised
    ref = Ridge(alpha=C * n / 2, fit_intercept=True).fit(X, loss).predict(X)
    np.testing.assert_allclose(ours, ref, rtol=1e-8, atol=1e-10)


# --------------------------------------------------------------------------------------------
# JSON form (dispatch through the registry)
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("cls", [SELE, REG, TCP])
def test_score_json_round_trip_through_the_registry(cls, problem):
    X, y_pred, loss = problem
    target = loss / 100.0 if cls is not TCP else 1.0 - loss / 100.0
    fitted = cls(C=1.0, n_classes=3).fit(X, y_pred, target)  # class 2 never predicted
    data = json.loads(json.dumps(fitted.to_dict(), allow_nan=False))
    assert data["kind"] == cls.__name__.lower() and "structured" not in data
    restored = PerClassLinearScore.from_dict(data)
    assert type(restored) is cls and cls.from_dict(data).to_dict() == data
    probe = np.arange(3).repeat(4)
    np.testing.assert_array_equal(restored.predict(X[:12], probe), fitted.predict(X[:12], probe))


def test_structured_score_round_trip():
    rng = np.random.default_rng(0)
    X, loss = rng.normal(size=(100, 2)), rng.random(100)
    fitted = REG(C=1.0).fit(X, None, loss)
    data = fitted.to_dict()
    assert data["structured"] is True
    np.testing.assert_array_equal(
        PerClassLinearScore.from_dict(data).predict(X, None), fitted.predict(X, None)
    )


@pytest.fixture(scope="module")
def reg_dict(problem):
    X, y_pred, loss = problem
    return REG(C=1.0, n_classes=2).fit(X, y_pred, loss).to_dict()


@pytest.mark.parametrize(
    "edit, message",
    [
        (lambda d: d.pop("mean"), r"score: missing keys \['mean'\]"),
        (lambda d: d.update(extra=1), r"score: unknown keys \['extra'\]"),
        (
            lambda d: d.update(kind="tcp"),
            "score.kind: score 'tcp' is not a SELE",
        ),  # via SELE.from_dict
        (lambda d: d.update(kind=["reg"]), "score.kind: unknown score"),
        (lambda d: d["scale"].__setitem__(1, 0), r"score.scale\[1\] must be > 0"),
        (lambda d: d["mean"].__setitem__(0, "0.5"), r"score.mean\[0\] must be a finite number"),
        (
            lambda d: d["intercept"].__setitem__(0, 10**400),
            r"score.intercept\[0\] must be a finite number",
        ),
        (
            lambda d: d["coef"].append([0.0, 0.0, 0.0]),
            "score.coef must be a list of 2 lists, got a list of 3",
        ),
        (lambda d: d.update(n_classes=True), "score.n_classes must be an integer >= 1"),
        (lambda d: d.update(class_seen=[1, 1]), "score.class_seen must be a list of 2 booleans"),
        (lambda d: d.update(C=-1), "score.C must be >= 0"),
    ],
)
def test_score_from_dict_names_the_bad_field(reg_dict, edit, message):
    data = json.loads(json.dumps(reg_dict))
    edit(data)
    cls = SELE if data["kind"] == "tcp" else PerClassLinearScore
    with pytest.raises(ValueError, match=message):
        cls.from_dict(data)


# --------------------------------------------------------------------------------------------
# A user's score (plugin) that fails: named with its file, whatever it does wrong
# --------------------------------------------------------------------------------------------
#: A plugin file: the mean loss of the k nearest training rows, with a switch for each defect.
FAULTY_PLUGIN = """
import sys

import numpy as np
from sklearn.neighbors import KNeighborsRegressor

import rejectopt

DEFECT = None


@rejectopt.scores.register_score("faulty_knn")
class FaultyKNN:
    def __init__(self, C=1.0):
        self.C = C

    def fit(self, X, y_pred, loss):
        if DEFECT == "raise":
            raise RuntimeError("licence server unreachable")
        self.model_ = KNeighborsRegressor(n_neighbors=1 + int(self.C)).fit(X, loss)
        return None if DEFECT == "no-self" else self

    def predict(self, X, y_pred):
        if DEFECT == "exit":
            sys.exit(0)
        s = self.model_.predict(X)
        if DEFECT in ("-inf", "nan", "inf"):
            s[3] = float(DEFECT)
        if DEFECT == "constant":
            s[:] = 1.0
        return s
"""


@pytest.fixture
def faulty_plugin(tmp_path):
    """The plugin file imported by its path (as the pipeline imports a plugin), unregistered afterwards."""
    path = tmp_path / "faulty_scores.py"
    path.write_text(FAULTY_PLUGIN)
    spec = importlib.util.spec_from_file_location("faulty_scores", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["faulty_scores"] = module
    try:
        spec.loader.exec_module(module)
        yield module, path
    finally:
        SCORES.remove("faulty_knn")
        sys.modules.pop("faulty_scores", None)


@pytest.fixture(scope="module")
def digits_losses():
    """Digits, LR trained on the first 600 rows; the next rows' features, predicted classes and 0/100 losses."""
    X, y = load_digits(return_X_y=True)
    clf = LogisticRegression(max_iter=2000).fit(X[:600], y[:600])
    X, y = X[600:1200], y[600:1200]
    y_pred = clf.predict(X)
    return X, y_pred, 100.0 * (y_pred != y)


@pytest.mark.parametrize(
    "defect, message",
    [
        ("raise", r"failed in fit: RuntimeError: licence server unreachable"),
        ("no-self", r"fit must return self, got None"),
        ("exit", r"failed in predict: SystemExit\(0\)"),
        (
            "-inf",
            r"predict returned the uncertainty -inf at row index 3 \(1 non-finite value\(s\) of 300\)",
        ),
        ("nan", r"predict returned the uncertainty nan at row index 3"),
        ("inf", r"predict returned the uncertainty inf at row index 3"),
    ],
)
def test_a_faulty_plugin_is_named_with_its_file(faulty_plugin, digits_losses, defect, message):
    module, path = faulty_plugin
    module.DEFECT = defect
    X, y_pred, loss = digits_losses
    with pytest.raises(ScoreError, match=message) as err:
        select_C(
            make_score("faulty_knn", 1.0),
            X[:300],
            y_pred[:300],
            loss[:300],
            X[300:],
            y_pred[300:],
            loss[300:],
            C_grid=(1, 3),
        )
    assert str(err.value).startswith(
        f"score 'faulty_knn' (class faulty_scores.FaultyKNN in {path})"
    )


def test_a_sound_plugin_passes_and_a_constant_one_is_described(faulty_plugin, digits_losses):
    _, path = faulty_plugin
    X, y_pred, loss = digits_losses
    best, val_aurc = select_C(
        make_score("faulty_knn", 1.0),
        X[:300],
        y_pred[:300],
        loss[:300],
        X[300:],
        y_pred[300:],
        loss[300:],
        C_grid=(1, 3),
    )
    assert val_aurc[best.C] == min(val_aurc.values())
    assert constant_score_message(best.predict(X[300:], None), best, "Val") is None
    assert constant_score_message(np.full(300, 2.5), best, "Val2 of digits") == (
        f"score 'faulty_knn' (class faulty_scores.FaultyKNN in {path}) gives the same uncertainty 2.5 to all 300 rows "
        "of Val2 of digits: it orders nothing, and every row is accepted at random with one probability"
    )


def test_a_built_in_score_keeps_its_own_input_errors():
    """The library's scores validate their input; their errors are not blamed on the score."""
    assert describe_score(SELE()) == "score 'sele' (rejectopt.scores._sele.SELE)"
    with pytest.raises(ValueError, match="loss contains NaN or infinite values") as err:
        call_score(
            REG(), "fit", np.ones((5, 2)), np.zeros(5, int), np.array([0, 1, np.nan, 0, 1.0])
        )
    assert type(err.value) is ValueError


# ---------------------------------------------------------------- registry entries and internals (known answers)


def test_registered_baseline_classes_compute_their_formula():
    """The baselines' registry classes are the one home of each formula (face score: the negated detector)."""
    from rejectopt.scores import get_score
    from rejectopt.scores._baselines import MCP, FaceScore, Margin, face_score

    assert [get_score(n).cls for n in ("mcp", "margin", "face_score")] == [MCP, Margin, FaceScore]
    np.testing.assert_allclose(MCP.compute([[0.9, 0.1], [0.6, 0.4]]), [0.1, 0.4])
    np.testing.assert_array_equal(Margin.compute([1.5, -0.2]), [-1.5, -0.2])
    np.testing.assert_array_equal(FaceScore.compute([12.5, 3.0]), face_score([12.5, 3.0]))
    np.testing.assert_array_equal(face_score([12.5, 3.0]), [-12.5, -3.0])
    np.testing.assert_allclose(
        svor_margin([0.2, 1.4, 3.0], thresholds=[0.0, 1.0, 2.0]), [-0.2, -0.4, -1.0]
    )


def test_score_info_makes_a_learner_with_only_the_keywords_it_takes():
    from rejectopt.scores import get_score

    info = get_score("tcp")
    assert repr(info) == (
        "ScoreInfo(name='tcp', source='rejectopt.scores._ridge:TCP', label='TCP', "
        "learns_from='true_class_posterior', applies_to=None)"
    )
    assert (info.cls.__name__, info.baseline, info.needs_posteriors) == ("TCP", False, True)
    assert repr(info.make(1.0, n_classes=3, random_state=0)) == "TCP(C=1.0, n_classes=3)"
    assert repr(make_score("reg", 1.0, n_classes=3, chunk_size=200)) == "REG(C=1.0, n_classes=3)"


def test_call_score_checks_the_uncertainty_and_names_the_score():
    X, y_pred = np.array([[0.0], [1.0], [2.0], [3.0]]), np.array([0, 0, 1, 1])
    score = call_score(REG(C=0), "fit", X, y_pred, np.array([10.0, 30.0, 20.0, 60.0]))
    np.testing.assert_allclose(
        call_score(score, "predict", X, y_pred, n_rows=4), [10.0, 30.0, 20.0, 60.0]
    )
    assert describe_score(REG(C=1.0)) == "score 'reg' (rejectopt.scores._ridge.REG)"

    class Forgetful:
        def fit(self, X, y_pred, loss):
            self.mean_ = sum(loss) / len(loss)

    with pytest.raises(ScoreError, match=r"\): fit must return self, got None$") as err:
        call_score(Forgetful(), "fit", [[0.0], [1.0]], [0, 0], [0.0, 100.0])
    assert isinstance(err.value, ValueError)
    assert constant_score_message([0.0, 0.0, 0.0], REG(), "the validation rows") == (
        "score 'reg' (rejectopt.scores._ridge.REG) gives the same uncertainty 0 to all 3 rows of the validation rows: "
        "it orders nothing, and every row is accepted at random with one probability"
    )
    assert constant_score_message([0.1, 0.2], REG(), "the validation rows") is None


def test_a_fitted_score_round_trips_through_json_numbers():
    """PerClassLinearScore.to_dict / from_dict (the ``score`` of model.json); an unseen class gets the largest
    training uncertainty."""
    X, y_pred = np.array([[0.0], [1.0], [2.0], [3.0]]), np.array([0, 0, 1, 1])
    score = REG(C=0).fit(X, y_pred, np.array([10.0, 30.0, 20.0, 60.0]))
    data = score.to_dict()
    assert (data["kind"], data["n_classes"], data["n_features"]) == ("reg", 2, 1)
    np.testing.assert_allclose(
        PerClassLinearScore.from_dict(data).predict(X, y_pred), [10.0, 30.0, 20.0, 60.0]
    )
    np.testing.assert_allclose(score.predict(np.array([[1.0]]), np.array([5])), [60.0])


def test_make_chunks_and_the_chunked_objective_known_answer():
    """SELE's chunks: a seeded partition. One chunk of four rows, two wrong (loss 100): at s = 0 each of the 16
    pair terms of eq. (30) is l_i log 2, so R = 50 log 2; ranking the wrong rows as more uncertain lowers R."""
    assert [c.tolist() for c in make_chunks(10, chunk_size=4, random_state=0)] == [
        [2, 8, 4, 9, 1],
        [6, 7, 3, 0, 5],
    ]
    objective = ChunkedSELEObjective(
        [0.0, 100.0, 0.0, 100.0], make_chunks(4, chunk_size=4), dtype=np.float64
    )
    value, gradient = objective.value_and_gradient(np.zeros(4))
    assert value == pytest.approx(50 * np.log(2), abs=1e-4)
    np.testing.assert_allclose(gradient, [6.25, -6.25, 6.25, -6.25], atol=1e-4)
    values = [
        objective.value_and_gradient(np.array(s))[0]
        for s in ([0.0, 1.0, 0.0, 1.0], [0.0, -1.0, 0.0, -1.0])
    ]
    assert [round(v, 4) for v in values] == [25.1602, 50.1602]


# --------------------------------------------------------------------------------------------
# Class-shared scores for networks with many classes; SELE's memory budget
# --------------------------------------------------------------------------------------------
def test_class_agnostic_features_equal_their_definitions():
    from scipy import special, stats

    from rejectopt.scores._shared import FEATURE_NAMES, output_features

    rng = np.random.default_rng(0)
    Z = rng.normal(size=(50, 7)) * 3
    F = dict(zip(FEATURE_NAMES, output_features(Z).T))
    p = special.softmax(Z, axis=1)
    z = Z - Z.mean(axis=1, keepdims=True)
    top = -np.sort(-p, axis=1)
    expected = {
        "p_top1": top[:, 0],
        "p_top5": top[:, 4],
        "log_p_top1": np.log(top[:, 0]),
        "margin": top[:, 0] - top[:, 1],
        "logit_margin": -np.diff(-np.sort(-Z, axis=1)[:, :2], axis=1)[:, 0],
        "entropy": stats.entropy(p, axis=1),
        "energy": -special.logsumexp(Z, axis=1),
        "doctor_g": (p * p).sum(axis=1),
        "max_centred_logit": z.max(axis=1),
        "norm1": np.abs(z).sum(axis=1),
        "norm2": np.linalg.norm(z, axis=1),
        "maxlogit_p3": z.max(axis=1) / np.linalg.norm(z, ord=3, axis=1),
    }
    for name, values in expected.items():
        np.testing.assert_allclose(F[name], values, rtol=1e-10, atol=1e-12, err_msg=name)
    assert (
        len(FEATURE_NAMES) == 20 and output_features(Z[:, :2])[:, 2:5].tolist() == [[0.0] * 3] * 50
    )  # padded top-5


def test_class_shared_scores_fit_a_thousand_classes_with_one_weight_vector():
    """K = 1,000 logits: 20 shared weights, refitted from the JSON form to the same uncertainties."""
    from rejectopt.scores._base import PerClassLinearScore

    rng = np.random.default_rng(0)
    Z = rng.normal(size=(600, 1000)) * rng.uniform(0.5, 3, size=(600, 1))
    p_error = 1 - special_softmax_max(Z)
    loss = 100.0 * (rng.random(600) < p_error)
    for name in ("sele_shared", "reg_shared"):
        score = make_score(name, 1.0, n_classes=1000).fit(Z, Z.argmax(axis=1), loss)
        assert (
            score.coef_.shape == (1000, 20)
            and (score.coef_ == score.coef_[0]).all()
            and score.class_seen_.all()
        )
        again = PerClassLinearScore.from_dict(json.loads(json.dumps(score.to_dict())))
        np.testing.assert_array_equal(again.predict(Z, Z.argmax(axis=1)), score.predict(Z, None))
        assert aurc(loss, score.predict(Z, None)) < aurc(
            loss, rng.random(600)
        )  # it learned an order


def special_softmax_max(Z):
    from scipy import special

    return special.softmax(Z, axis=1).max(axis=1)


@pytest.mark.parametrize("n, d, K, gib", [(3000, 1000, 1000, "23."), (800, 20_000, 10, "89.")])
def test_sele_refuses_a_fit_over_its_memory_budget_before_allocating(n, d, K, gib):
    """ImageNet-sized logits and wide embeddings: refused from the shapes alone (X is a view of one number)."""
    import tracemalloc

    X = np.broadcast_to(np.float64(0.0), (n, d))
    y_pred = np.arange(n) % K
    tracemalloc.start()
    with pytest.raises(
        ValueError,
        match=rf"SELE on {n} rows, {d} features and {K} predicted classes would need about "
        rf"{gib}\d\d GiB .*alone is {K} x {d + 1} x {d + 1} float64\), "
        r"over the memory budget of 4.00 GiB .* nothing was allocated. "
        r"Use score 'reg' .*'sele_shared' or 'reg_shared'.*SELE\(memory_budget=...\) or "
        r"\$REJECTOPT_SELE_MEMORY_BUDGET",
    ):
        SELE(n_classes=K).fit(X, y_pred, np.zeros(n))
    assert (
        tracemalloc.get_traced_memory()[1] < 16_000_000
    )  # BLAS probing only: the design alone would be 24 MB+
    tracemalloc.stop()


def test_sele_memory_budget_from_the_environment_and_its_estimate_bounds_the_peak(monkeypatch):
    import tracemalloc

    from rejectopt.scores._sele import estimate_fit_bytes

    X, y_pred, loss, _ = _linear_risk_data(400, seed=0, d=60)
    monkeypatch.setenv("REJECTOPT_SELE_MEMORY_BUDGET", "1e5")
    with pytest.raises(ValueError, match=r"over the memory budget of 0.00 GiB \(1e\+05 bytes\)"):
        SELE(n_classes=3).fit(X, y_pred, loss)
    monkeypatch.setenv("REJECTOPT_SELE_MEMORY_BUDGET", "lots")
    with pytest.raises(
        ValueError,
        match=r"\$REJECTOPT_SELE_MEMORY_BUDGET must be a number of bytes > 0, got 'lots'",
    ):
        SELE(n_classes=3).fit(X, y_pred, loss)
    monkeypatch.delenv("REJECTOPT_SELE_MEMORY_BUDGET")
    tracemalloc.start()
    SELE(n_classes=3, n_jobs=1, chunk_size=200).fit(X, y_pred, loss)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    estimate = estimate_fit_bytes(400, 60, 3, chunk_size=200)
    assert peak <= estimate <= 20 * peak


# --------------------------------------------------------------------------------------------
# Class-shared scores: features of the logits in row blocks, computed once per row set
# --------------------------------------------------------------------------------------------
def _logits_with_hard_rows(n, K, seed):
    """Random logits with ties, equal rows, a span beyond the float range and huge values."""
    rng = np.random.default_rng(seed)
    logits = rng.normal(size=(n, K)) * rng.uniform(0.1, 5.0, (n, 1))
    logits[1] = 2.0  # a row of equal logits (centred logits all 0)
    logits[2, :2] = logits[2].max() + 1.0  # two tied largest logits
    logits[3, 0], logits[3, 1] = 1e308, -1e308  # a span beyond the float range
    logits[4] *= 1e150
    return logits


@pytest.mark.parametrize("K", [2, 3, 6, 40])
def test_output_features_in_row_blocks_equal_one_pass_over_all_rows(K):
    from rejectopt.scores._shared import _block_features, output_features

    logits = _logits_with_hard_rows(101, K, K)
    with np.errstate(over="ignore", invalid="ignore"):
        expected = _block_features(logits)  # the unblocked computation
    # the row spanning beyond the float range has a norm beyond it too: refused in any block
    for rows_per_block in (None, 1, 2, 64):
        with pytest.raises(ValueError, match="logits at index 3: the feature 'norm1' overflows"):
            output_features(logits, rows_per_block=rows_per_block)
    kept = np.arange(len(logits)) != 3
    for rows_per_block in (None, 1, 2, 7, 64, 100, 101, 500):
        with np.errstate(over="ignore", invalid="ignore"):
            got = output_features(logits[kept], rows_per_block=rows_per_block)
        # Equal bit for bit on numpy 2; numpy 1.x (the declared floor) reduces a block's rows along other
        # SIMD paths, measured at most 4.4e-16 absolute, 2.8e-15 relative, hence rtol 1e-14.
        np.testing.assert_allclose(
            got, expected[kept], rtol=1e-14, atol=0, err_msg=f"rows_per_block={rows_per_block}"
        )
    assert np.isfinite(expected[[0, 1, 2, 5]]).all()
    from rejectopt.scores._shared import FEATURE_NAMES, pnorm_max

    for column, name in enumerate(FEATURE_NAMES):
        if (
            name.startswith("maxlogit_p") or name == "max_centred_logit"
        ):  # against the one-p-at-a-time formula
            q = 0 if name == "max_centred_logit" else int(name.removeprefix("maxlogit_p"))
            keep = (
                np.arange(len(logits)) != 3
            )  # the row spanning beyond the float range overflows the p-norm
            with np.errstate(over="ignore", invalid="ignore"):
                np.testing.assert_allclose(
                    expected[keep, column], pnorm_max(logits[keep], q), rtol=1e-12, atol=0
                )


def test_output_features_refuse_one_logit_and_name_a_non_finite_one_in_a_later_block():
    from rejectopt.scores._shared import output_features

    with pytest.raises(ValueError, match=r"K >= 2\); got shape \(5, 1\)"):
        output_features(np.zeros((5, 1)))
    logits = np.zeros((30, 3))
    logits[23, 1] = -np.inf
    with pytest.raises(ValueError, match="non-finite value -inf at index 23, column 1"):
        output_features(logits, rows_per_block=8)
    with pytest.raises(ValueError, match="rows_per_block must be a positive integer, got -1"):
        output_features(logits[:20], rows_per_block=-1)


@pytest.mark.parametrize("name", ["sele_shared", "reg_shared"])
def test_class_shared_scores_on_precomputed_features_equal_those_on_the_logits(name):
    from rejectopt.scores._shared import LogitFeatures

    rng = np.random.default_rng(1)
    logits = rng.normal(size=(400, 12)) * 3
    loss = 100.0 * (rng.random(400) < 1 - np.exp(logits.max(1)) / np.exp(logits).sum(1))
    y_pred, train = logits.argmax(1), np.arange(250)
    template = make_score(name, 1.0, n_classes=12, random_state=0, n_jobs=1)
    features = template.precompute_features(logits)
    assert isinstance(features[train], LogitFeatures) and features[train].n_logits == 12
    on_logits = clone(template).fit(logits[train], y_pred[train], loss[train])
    on_features = clone(template).fit(features[train], y_pred[train], loss[train])
    np.testing.assert_array_equal(on_features.coef_, on_logits.coef_)
    assert on_features.n_features_in_ == 12 and on_features.to_dict() == on_logits.to_dict()
    np.testing.assert_array_equal(on_features.predict(features), on_logits.predict(logits))
    np.testing.assert_array_equal(
        on_logits.predict(features[train]), on_logits.predict(logits[train])
    )
    paths = [
        clone(template).fit_path(X, y_pred[train], loss[train], (0, 10))
        for X in (logits[train], features[train])
    ]
    for a, b in zip(*paths):
        np.testing.assert_array_equal(a.coef_, b.coef_)
    with pytest.raises(ValueError, match="X has 5 logits, but the score was fitted on 12"):
        on_logits.predict(LogitFeatures(features[:3], 5))


def test_fit_selective_computes_the_features_of_the_logits_once(monkeypatch):
    from rejectopt.fitting import fit_selective, split_rows
    from rejectopt.scores import _shared
    from rejectopt.targets import Target

    rng = np.random.default_rng(2)
    logits = rng.normal(size=(300, 8)) * 2
    y_pred = logits.argmax(1)
    loss = 100.0 * (rng.random(300) < 0.3)
    parts = split_rows(300)
    expected = fit_selective(
        logits, y_pred, loss, Target("coverage", 0.8), parts, score="reg_shared", n_classes=8
    )
    rows_read = []
    original = _shared.output_features
    monkeypatch.setattr(
        _shared,
        "output_features",
        lambda X, *args, **kw: rows_read.append(len(X)) or original(X, *args, **kw),
    )
    fit = fit_selective(
        logits, y_pred, loss, Target("coverage", 0.8), parts, score="reg_shared", n_classes=8
    )
    assert rows_read == [300]  # once for all rows, not per C, refit and prediction (2.6 n rows)
    np.testing.assert_array_equal(fit.uncertainty, expected.uncertainty)
    manual = make_score("reg_shared", fit.C, n_classes=8)
    train = np.concatenate([parts["fit"], parts["validation"]])
    manual.fit(logits[train], y_pred[train], loss[train])
    np.testing.assert_array_equal(fit.uncertainty, manual.predict(logits))


def test_sele_memory_estimate_counts_the_pair_weights_the_objective_lays_out():
    """Few positive losses: the (positive, zero) pairs, not every pair of a chunk; all positive: every pair."""
    from rejectopt.scores._sele import _pair_bytes, estimate_fit_bytes

    rng = np.random.default_rng(0)
    for loss, layout in (
        (100.0 * (rng.random(20_000) < 0.2), "bipartite"),
        (rng.random(20_000), "circulant"),
    ):
        chunks = make_chunks(loss.size, 500, 0)
        objective = ChunkedSELEObjective(loss, chunks)
        held = sum(
            a.nbytes
            for g in objective.groups
            for a in (
                (g.pos_weight, g.pos_local, g.zero_local, g.zero_mask, g.pos_loss)
                if g.bipartite
                else (g.weight,)
            )
        )
        assert {g.bipartite for g in objective.groups} == {layout == "bipartite"}
        assert 0.9 * held <= _pair_bytes(loss, chunks, 4) <= 1.1 * held, (layout, held)
        shape_only = estimate_fit_bytes(loss.size, 50, 10)
        with_loss = estimate_fit_bytes(loss.size, 50, 10, loss=loss, random_state=0)
        assert (with_loss < shape_only) if layout == "bipartite" else (with_loss == shape_only)


def test_sele_reuses_the_risk_of_a_point_across_C_and_the_path_equals_it_recomputed():
    """R does not depend on C: a warm start evaluates the pairs once; F differs by the regulariser alone."""
    rng = np.random.default_rng(3)
    X, y_pred = rng.normal(size=(600, 4)), rng.integers(0, 2, 600)
    loss = 100.0 * (rng.random(600) < 1 / (1 + np.exp(-2 * X[:, 0])))
    problem = SELE(n_jobs=1)._build_problem(X, y_pred, loss)
    theta = rng.normal(size=problem.shape).ravel()
    before = problem.objective.n_evaluations
    f1, g1 = problem.value_and_gradient(theta, 1.0)
    f10, g10 = problem.value_and_gradient(theta.copy(), 10.0)
    assert problem.objective.n_evaluations == before + 1
    w = theta.reshape(problem.shape)[:, :-1]
    assert f10 - f1 == pytest.approx(0.5 * 9.0 * np.sum(w**2) / problem.scale, rel=1e-12)
    np.testing.assert_allclose(
        (g10 - g1).reshape(problem.shape)[:, :-1], 9.0 * w / problem.scale, rtol=1e-12
    )
    fresh = SELE(n_jobs=1)._build_problem(X, y_pred, loss)
    assert (
        fresh.value_and_gradient(theta, 10.0)[0] == f10
    )  # the reused risk is the one computed afresh
