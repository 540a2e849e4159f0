"""The score choice: ``"auto"``, the classifier's own confidence as a score, and the warning when a
forced learned score ranks the errors worse than the classifier does."""

import json
import logging
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.datasets import load_breast_cancer
from sklearn.dummy import DummyClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from rejectopt import SelectiveClassifier, cli
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
    assert list(auto.candidate_aurc_) == [*baseline_names("proba"), "sele", "reg", "tcp"]
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
    assert list(model.candidate_aurc_) == ["sele", "reg"]  # SELE, the paper's, is the incumbent
    assert model.chosen_score_ in model.candidate_aurc_


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


@pytest.fixture(scope="module")
def network_csv(tmp_path_factory):
    """A network's outputs as ``select`` reads them: columns logit_0..logit_19 and label."""
    logits, labels = _network(n=2000)
    frame = pd.DataFrame(logits, columns=[f"logit_{j}" for j in range(logits.shape[1])])
    frame["label"] = labels
    path = tmp_path_factory.mktemp("network") / "net.csv"
    frame.to_csv(path, index=False)
    return path, logits


def _select(path, out, *options):
    argv = ["select", "--data", str(path), "--target", "risk=5", "--out", str(out), "-q"]
    assert cli.main([*argv, *options]) == 0
    return (
        json.loads((out / "report.json").read_text()),
        json.loads((out / "model.json").read_text()),
        (out / "report.md").read_text(),
    )


def test_select_auto_and_mcp_on_a_networks_outputs_end_to_end(network_csv, tmp_path):
    from rejectopt.logits import msp

    path, logits = network_csv
    report, model, markdown = _select(path, tmp_path / "auto")
    aurcs = report["score_choice"]["validation_aurc"]
    assert report["score_choice"]["option"] == "auto"
    assert list(aurcs)[:2] == ["mcp", "margin"] and {"sele", "reg", "sele_shared"} <= set(aurcs)
    assert report["score"] in aurcs and report["score"] in markdown.lower()
    assert "chosen by --score auto, of the validation AuRCs mcp " in markdown
    forced, forced_model, forced_md = _select(path, tmp_path / "mcp", "--score", "mcp")
    assert forced["score"] == "mcp" and forced["C"] is None and forced["validation_aurc"] == {}
    assert forced_model["score"] == {
        "kind": "baseline",
        "name": "mcp",
        "inputs": "logits",
        "n_classes": 20,
        "n_features": 20,
    }
    assert "MCP, the network's own confidence (nothing learned)" in forced_md
    # model.json round trip: apply decides with the network's MSP of each row
    out = tmp_path / "decisions.csv"
    argv = ["apply", "--model", str(tmp_path / "mcp" / "model.json"), "--data", str(path)]
    assert cli.main([*argv, "--out", str(out), "-q"]) == 0
    decisions = pd.read_csv(out)
    np.testing.assert_allclose(decisions["uncertainty"], msp(logits), rtol=0, atol=1e-12)
    if report["score"] == "mcp":  # auto kept MSP: the same selection as forcing it
        assert report["selection"] == forced["selection"]


def test_select_warns_when_a_forced_learned_score_ranks_worse_than_msp(
    network_csv, tmp_path, caplog
):
    path, _ = network_csv
    with caplog.at_level(logging.WARNING):
        report, _, _ = _select(path, tmp_path / "reg", "--score", "reg", "--C", "1")
    aurcs = report["score_choice"]["validation_aurc"]
    assert report["score_choice"]["option"] == "reg" and list(aurcs) == ["reg", "mcp"]
    assert aurcs["reg"] > aurcs["mcp"]
    assert "--score reg: its AuRC on the 300 validation rows" in caplog.text
    assert "--score auto (the default) weighs both" in caplog.text


def test_a_baseline_needs_a_networks_logits(tmp_path, capsys):
    X, y = load_breast_cancer(return_X_y=True)
    frame = pd.DataFrame(X[:, :3], columns=["a", "b", "c"])
    frame["y_pred"], frame["y"] = (X[:, 0] > 14).astype(int), y
    frame.to_csv(tmp_path / "table.csv", index=False)
    argv = ["select", "--data", str(tmp_path / "table.csv"), "--target", "coverage=0.8"]
    assert cli.main([*argv, "--score", "mcp", "--out", str(tmp_path / "o"), "-q"]) == 2
    assert "--score mcp reads a network's logits" in capsys.readouterr().err
    report, _, _ = _select(tmp_path / "table.csv", tmp_path / "auto")
    assert list(report["score_choice"]["validation_aurc"]) == ["sele", "reg"]


def test_a_baseline_model_file_is_checked_field_by_field(network_csv, tmp_path):
    from rejectopt.model import validate_model

    path, _ = network_csv
    _, model, _ = _select(path, tmp_path / "mcp", "--score", "mcp")
    score, _ = validate_model(model)
    assert isinstance(score, ConfidenceScore) and score.n_features_in_ == 20
    for field, value, message in [
        ("name", "softmax", r"score.name: 'softmax' is not a baseline of logits"),
        ("inputs", "proba", r"score.inputs must be 'logits'"),
        ("n_features", 19, r"baseline of 19 logits but n_logits is 20"),
    ]:
        edited = {**model, "score": {**model["score"], field: value}}
        with pytest.raises(ValueError, match=message):
            validate_model(edited)


def test_a_certified_risk_holds_for_the_score_auto_chooses():
    """The choice reads the fit and validation rows only, so the certificate of the calibration rows
    holds for the chosen score as for a fixed one. Simulated: errors follow x0 (REG learns them),
    a decoy baseline reads an unrelated x1, and a poor REG on x1 competes too; over 200 samples
    of 1,000 rows, a risk <= 10 % certified at 0.9 must hold on a 100,000-row population sample at
    least as often. Tolerance: 3 binomial standard errors of 200 draws at level 0.1 (0.064), and
    the population sample's own error (about 0.3 points of risk) is far below the target's margin."""
    from rejectopt.fitting import fit_selection, learn_score, split_rows
    from rejectopt.scores import REG
    from rejectopt.targets import Target

    def draw(rng, n):
        X = rng.normal(size=(n, 2))
        loss = 100.0 * (rng.random(n) < 1 / (1 + np.exp(-(4 * X[:, 0] - 2))))
        q = 1 / (1 + np.exp(-X[:, 1]))
        return X, np.column_stack([1 - q, q]), loss

    rng = np.random.default_rng(7)
    X_pop, P_pop, loss_pop = draw(rng, 100_000)
    target, violations, chosen = Target("risk", 10.0, 0.9), 0, []
    for k in range(200):
        X, P, loss = draw(rng, 1000)
        parts = split_rows(1000, seed=k)
        y_pred = np.zeros(1000, dtype=int)
        common = {"n_classes": 1, "C_grid": (1.0,)}
        learned = {
            "mcp": learn_score(P, y_pred, loss, parts, score=ConfidenceScore("mcp"), **common),
            "reg": learn_score(X, y_pred, loss, parts, score=REG(), **common),
            "reg_x1": learn_score(X[:, 1:], y_pred, loss, parts, score=REG(), **common),
        }
        name, _ = choose_score(learned, loss, parts["validation"], seed=k)
        fit = fit_selection(learned[name], loss, target, parts, loss_bound=100.0)
        inputs = {"mcp": P_pop, "reg": X_pop, "reg_x1": X_pop[:, 1:]}[name]
        s = fit.score.predict(inputs, np.zeros(len(loss_pop), dtype=int))
        p = fit.selection.acceptance_probability(s)
        if p.sum() > 0 and np.dot(p, loss_pop) / p.sum() > target.value:
            violations += 1
        chosen.append(name)
    assert chosen.count("reg") > 150  # the informative score is found: the test is not vacuous
    assert violations / 200 <= 0.1 + 3 * np.sqrt(0.1 * 0.9 / 200)
