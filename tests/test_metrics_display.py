"""Tests of rejectopt.RiskCoverageDisplay: scikit-learn's Display API on risk-coverage curves."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from sklearn.datasets import load_breast_cancer  # noqa: E402
from sklearn.linear_model import LogisticRegression  # noqa: E402
from sklearn.model_selection import GridSearchCV, train_test_split  # noqa: E402
from sklearn.naive_bayes import GaussianNB  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402

import rejectopt  # noqa: E402
from rejectopt.estimator import SelectiveClassifier  # noqa: E402
from rejectopt.metrics import RiskCoverageDisplay, risk_coverage_band, selective_scorer  # noqa: E402


def _curve(loss, uncertainty):
    """The RC curve by hand: losses sorted by uncertainty (ties by index), running means."""
    order = np.argsort(uncertainty, kind="stable")
    n = len(loss)
    return np.arange(1, n + 1) / n, np.cumsum(np.asarray(loss, dtype=float)[order]) / np.arange(
        1, n + 1
    )


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


@pytest.fixture(scope="module")
def cancer():
    X, y = load_breast_cancer(return_X_y=True)
    return train_test_split(X, y, test_size=0.4, random_state=0, stratify=y)


def test_from_predictions_known_answer_and_display_attributes():
    y_true, y_pred = [0, 1, 1, 0, 1], [0, 1, 0, 0, 0]  # losses 0, 0, 100, 0, 100
    display = RiskCoverageDisplay.from_predictions(
        y_true, y_pred, [0.1, 0.2, 0.9, 0.3, 0.5], name="s"
    )
    assert display.coverage.tolist() == [0.2, 0.4, 0.6, 0.8, 1.0]
    assert display.risk.tolist() == [0.0, 0.0, 0.0, 25.0, 40.0]
    assert display.aurc == pytest.approx((0 + 0 + 0 + 25 + 40) / 5)
    assert display.oracle_risk.tolist() == [
        0.0,
        0.0,
        0.0,
        25.0,
        40.0,
    ]  # this score is the oracle here
    assert display.random_risk == 40.0
    assert display.line_.get_label() == "s (AuRC 13)"
    np.testing.assert_array_equal(display.line_.get_xdata(), display.coverage)
    np.testing.assert_array_equal(display.random_line_.get_ydata(), [40.0, 40.0])
    assert (
        display.ax_.get_ylabel() == "Selective risk (%)" and display.ax_.get_xlabel() == "Coverage"
    )
    assert display.figure_ is display.ax_.figure and display.band_ is None
    # plot() again on new axes returns self, drawn anew (scikit-learn's Display API)
    _, ax = plt.subplots()
    assert display.plot(ax=ax, name="again") is display and display.ax_ is ax
    assert display.line_.get_label() == "again (AuRC 13)"
    assert rejectopt.RiskCoverageDisplay is RiskCoverageDisplay


def test_from_estimator_overlays_curves_with_shared_references_and_a_band(cancer):
    X_trn, X_tst, y_trn, y_tst = cancer
    lr = SelectiveClassifier(
        make_pipeline(StandardScaler(), LogisticRegression()),
        uncertainty_score="reg",
        C_grid=(1.0,),
    ).fit(X_trn, y_trn)
    nb = SelectiveClassifier(GaussianNB(), uncertainty_score="reg", C_grid=(1.0,)).fit(X_trn, y_trn)
    first = RiskCoverageDisplay.from_estimator(lr, X_tst, y_tst, name="LR", band=True)
    second = RiskCoverageDisplay.from_estimator(nb, X_tst, y_tst, ax=first.ax_)
    # the curve of each: the classifier's losses on every test row, ordered by the learned uncertainty
    for display, model in ((first, lr), (second, nb)):
        loss = 100.0 * (model.estimator_.predict(X_tst) != y_tst)
        coverage, risk = _curve(loss, model.predict_uncertainty(X_tst))
        np.testing.assert_allclose(display.risk, risk, rtol=0, atol=1e-12)
        np.testing.assert_allclose(display.coverage, coverage, rtol=0, atol=1e-15)
        assert display.aurc == pytest.approx(risk.mean(), abs=1e-12)
        assert display.random_risk == pytest.approx(loss.mean(), abs=1e-12)
        np.testing.assert_allclose(display.oracle_risk, _curve(loss, loss)[1], atol=1e-12)
    assert second.line_.get_label().startswith("GaussianNB (AuRC ")
    # two classifiers, two oracles and two random references; a third curve of LR's predictions reuses LR's
    loss = 100.0 * (lr.estimator_.predict(X_tst) != y_tst)
    proba = lr.predict_proba(X_tst)
    third = RiskCoverageDisplay.from_predictions(
        y_tst, lr.estimator_.predict(X_tst), 1 - proba.max(axis=1), name="LR, MCP", ax=first.ax_
    )
    assert third.oracle_line_ is first.oracle_line_ and third.random_line_ is first.random_line_
    assert second.oracle_line_ is not first.oracle_line_
    assert len(first.ax_.get_lines()) == 3 + 2 + 2
    # the band: risk_coverage_band's at the 95 % level, its lower and upper edges around the curve
    band = risk_coverage_band(loss, lr.predict_uncertainty(X_tst), loss_bound=100.0)
    coverage, lower, upper = first.band
    np.testing.assert_array_equal(coverage, band.coverage)
    np.testing.assert_array_equal(lower, band.lower)
    np.testing.assert_array_equal(upper, band.upper)
    assert np.all(lower <= band.risk) and np.all(band.risk <= upper) and upper.max() > lower.min()
    vertices = first.band_.get_paths()[0].vertices
    assert vertices[:, 1].min() == pytest.approx(lower.min()) and vertices[
        :, 1
    ].max() == pytest.approx(upper.max())
    assert second.band_ is None


def test_display_of_the_model_grid_search_chose(cancer):
    """GridSearchCV with a selective scorer, then the display of its best model on the test rows."""
    X_trn, X_tst, y_trn, y_tst = cancer
    model = SelectiveClassifier(
        make_pipeline(StandardScaler(), LogisticRegression()),
        uncertainty_score="reg",
        C_grid=(1.0,),
    )
    search = GridSearchCV(
        model,
        {"estimator__logisticregression__C": [0.01, 1.0]},
        scoring=selective_scorer("aurc"),
        cv=3,
    ).fit(X_trn, y_trn)
    display = RiskCoverageDisplay.from_estimator(search.best_estimator_, X_tst, y_tst, name="best")
    best = search.best_estimator_
    loss = 100.0 * (best.estimator_.predict(X_tst) != y_tst)
    assert display.aurc == pytest.approx(
        _curve(loss, best.predict_uncertainty(X_tst))[1].mean(), abs=1e-12
    )
    assert -selective_scorer("aurc")(best, X_tst, y_tst) == pytest.approx(display.aurc, abs=1e-12)


def test_display_errors_name_what_is_missing(cancer):
    X_trn, X_tst, y_trn, y_tst = cancer
    plain = GaussianNB().fit(X_trn, y_trn)
    with pytest.raises(
        TypeError,
        match=r"GaussianNB has no predict_uncertainty\(X\): RiskCoverageDisplay.from_estimator needs",
    ):
        RiskCoverageDisplay.from_estimator(plain, X_tst, y_tst)
    with pytest.raises(ValueError, match="unknown loss 'hinge'"):
        RiskCoverageDisplay.from_predictions([0, 1], [0, 0], [0.1, 0.2], loss="hinge")
