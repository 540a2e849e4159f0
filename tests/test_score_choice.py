"""The score choice: ``"auto"``, the classifier's own confidence as a score, and the warning when a
forced learned score ranks the errors worse than the classifier does."""

import warnings

import numpy as np
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.datasets import load_breast_cancer
from sklearn.dummy import DummyClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from rejectopt import SelectiveClassifier
from rejectopt.fitting import LearnedScore, choose_score
from rejectopt.scores._confidence import ConfidenceScore, baseline_names


def _fit(X, y, score, **options):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = SelectiveClassifier(uncertainty_score=score, **options).fit(X, y)
    return model, [str(w.message) for w in caught if issubclass(w.category, UserWarning)]


@pytest.mark.parametrize("seed", [0, 3])
def test_auto_reaches_the_coverage_of_the_classifiers_own_confidence(seed):
    """Breast cancer, scaled LR, risk <= 1 %: SELE and REG alone reach about a tenth of the rows
    (seed 0), and REG, best on the validation rows of seed 3 by chance, almost none; the default
    keeps MCP unless a learned score wins beyond the validation rows' noise, so it accepts at
    least as many of the same report rows as MCP does (same seed: same rows, same classifier)."""
    X, y = load_breast_cancer(return_X_y=True)
    options = {
        "estimator": make_pipeline(StandardScaler(), LogisticRegression()),
        "target": "risk",
        "value": 1.0,
        "random_state": seed,
    }
    auto, _ = _fit(X, y, "auto", **options)
    mcp, _ = _fit(X, y, "mcp", **options)
    assert SelectiveClassifier(options["estimator"]).uncertainty_score == "auto"
    assert auto.report_["coverage_expected"] >= mcp.report_["coverage_expected"] > 0.8
    assert list(auto.candidate_aurc_)[:4] == baseline_names("proba")
    assert {"sele", "reg", "tcp"} <= set(auto.candidate_aurc_)
    assert auto.chosen_score_ in auto.candidate_aurc_
    np.testing.assert_array_equal(auto.split_["calibration"], mcp.split_["calibration"])


def _errors_in_the_features(n=600, seed=0):
    """A majority-class classifier errs exactly on the rows with x0 > 0.6: its probabilities are
    one constant (MCP orders nothing), the features tell every error."""
    rng = np.random.default_rng(seed)
    X = rng.random((n, 2))
    return X, (X[:, 0] > 0.6).astype(int)


def test_a_forced_learned_score_that_loses_to_mcp_warns():
    X, y = load_breast_cancer(return_X_y=True)
    model, messages = _fit(
        X,
        y,
        "sele",
        estimator=make_pipeline(StandardScaler(), LogisticRegression()),
        target="risk",
        value=1.0,
        C_grid=(1.0, 100.0),
    )
    lost = [m for m in messages if "worse than that of the classifier's own confidence" in m]
    assert len(lost) == 1 and lost[0].startswith("uncertainty_score='sele': its AuRC on the 85 ")
    assert model.candidate_aurc_["sele"] > model.candidate_aurc_["mcp"]
    assert model.chosen_score_ == "sele" and type(model.uncertainty_score_).__name__ == "SELE"


def test_a_forced_learned_score_that_wins_does_not_warn_and_auto_takes_it():
    X, y = _errors_in_the_features()
    options = {"estimator": DummyClassifier(strategy="prior"), "value": 0.5, "C_grid": (1.0,)}
    forced, messages = _fit(X, y, "reg", **options)
    assert not [m for m in messages if "own confidence" in m]
    assert forced.candidate_aurc_["reg"] < forced.candidate_aurc_["mcp"]
    auto, _ = _fit(X, y, "auto", **options)
    assert auto.chosen_score_ in ("reg", "sele", "tcp")
    assert auto.candidate_aurc_[auto.chosen_score_] < auto.candidate_aurc_["mcp"]
    # the learned score rejects the errors (x0 > 0.6), which MCP cannot tell apart
    accepted = auto.accept(X)
    assert (y[accepted] == 0).mean() > 0.95


def test_a_baseline_decides_with_the_classifiers_probabilities():
    X, y = load_breast_cancer(return_X_y=True)
    clf = make_pipeline(StandardScaler(), LogisticRegression())
    model, _ = _fit(X, y, "mcp", estimator=clf, value=0.8, random_state=1)
    assert isinstance(model.uncertainty_score_, ConfidenceScore)
    assert np.isnan(model.C_) and model.validation_aurc_ == {}
    proba = model.estimator_.predict_proba(X[:50])
    np.testing.assert_allclose(model.predict_uncertainty(X[:50]), 1 - proba.max(axis=1))
    labels = model.predict(X[:50])
    assert set(np.unique(labels)) <= {-1, 0, 1}
    with pytest.raises(ValueError, match="uncertainty_score='entropy' needs an estimator with"):
        SelectiveClassifier(_NoProba().fit(X, y), uncertainty_score="entropy", prefit=True).fit(
            X, y
        )


class _NoProba(ClassifierMixin, BaseEstimator):
    """A prefitted rule without predict_proba."""

    def fit(self, X, y):
        self.classes_ = np.array([0, 1])
        return self

    def predict(self, X):
        return (np.asarray(X)[:, 0] > 14).astype(int)


def test_auto_without_probabilities_chooses_among_the_learned_scores():
    X, y = load_breast_cancer(return_X_y=True)
    model, _ = _fit(X, y, "auto", estimator=_NoProba().fit(X, y), prefit=True, C_grid=(1.0,))
    assert set(model.candidate_aurc_) == {"reg", "sele"}
    assert model.chosen_score_ == min(model.candidate_aurc_, key=model.candidate_aurc_.get)


def test_choose_score_keeps_the_incumbent_unless_the_challenger_wins_beyond_noise():
    """By construction: 200 validation rows, 4 errors. A challenger ranking the 4 errors last
    wins in every resample holding an error; one whose win rests on a single row does not."""
    loss = np.zeros(200)
    loss[[10, 50, 90, 130]] = 100.0
    incumbent = np.arange(200.0) % 7  # unrelated to the errors
    perfect = loss.copy()
    slightly = incumbent.copy()
    slightly[10] = -1.0  # one error moved first: lesser AuRC, won by a single row
    rows = np.arange(200)

    def learned(s):
        return LearnedScore(
            None,
            0.0,
            {},
            float(np.mean(np.cumsum(loss[np.argsort(s, kind="stable")]) / np.arange(1, 201))),
            s,
        )

    mcp = learned(incumbent)
    chosen, aurcs = choose_score({"mcp": mcp, "sele": learned(perfect)}, loss, rows)
    assert chosen == "sele" and aurcs["sele"] < aurcs["mcp"]
    assert choose_score({"mcp": mcp, "reg": learned(-slightly)}, loss, rows)[0] == "mcp"
    assert choose_score({"mcp": mcp, "sele": learned(perfect)})[0] == "sele"  # untested: least AuRC


def _network(n=3000, K=20, seed=0):
    """Logits whose true class gets a boost of random size: MSP ranks the errors well, and a
    linear score of 20 logits on 900 training rows has nothing more to learn."""
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, K, n)
    logits = rng.normal(size=(n, K))
    logits[np.arange(n), labels] += rng.normal(2.5, 1.5, n)
    return logits, labels


def test_fit_logits_returns_a_baseline_as_the_chosen_score():
    from rejectopt.logits import baseline_uncertainties, fit_logits

    logits, labels = _network()
    result = fit_logits(logits, labels, scores=("reg",), C_grid=(1.0,), post_hoc=())
    assert list(result.candidate_aurc)[0] == "mcp"
    assert set(result.candidate_aurc) == {*baseline_uncertainties(logits[:1]), "reg"}
    assert result.chosen in baseline_names("logits")
    assert result.candidate_aurc["reg"] > result.candidate_aurc["mcp"]
    assert isinstance(result.chosen_score, ConfidenceScore)
    # the chosen score decides new logits as the baseline ranks them
    np.testing.assert_allclose(
        result.chosen_score.predict(logits[:100]),
        result.uncertainty[result.chosen][:100],
        rtol=0,
        atol=1e-12,
    )


@pytest.mark.parametrize("name", baseline_names("logits"))
def test_a_confidence_score_of_logits_is_the_baseline_of_fit_logits(name):
    from rejectopt.logits import baseline_uncertainties

    logits, _ = _network(n=200)
    expected = baseline_uncertainties(logits, [name])[name]
    got = ConfidenceScore(name, "logits").fit(logits, None).predict(logits)
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)  # float rounding only
