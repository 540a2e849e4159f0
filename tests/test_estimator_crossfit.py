"""SelectiveClassifier: every parameter checked before the classifier is fitted, the exception of an infeasible
target, and cross-fitting (``cv``) against scikit-learn's own out-of-fold predictions."""

import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import load_digits
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import KFold, ShuffleSplit, cross_val_predict, train_test_split
from sklearn.naive_bayes import GaussianNB
from sklearn.preprocessing import StandardScaler

from rejectopt._checks import clopper_pearson
from rejectopt.estimator import SelectiveClassifier
from rejectopt.exceptions import InfeasibleTargetError
from rejectopt.fitting import fit_selective
from rejectopt.targets import Target


class _FitRecorder(LogisticRegression):
    """A logistic regression that records, on its class, whether any instance (or clone) was fitted."""

    fitted = False

    def fit(self, X, y, sample_weight=None):
        type(self).fitted = True
        return super().fit(X, y, sample_weight=sample_weight)


@pytest.fixture(scope="module")
def small_digits():
    X, y = load_digits(return_X_y=True)
    return X[:600] / 16.0, y[:600]


def _index(model, labels):
    """Positions of ``labels`` in ``model.classes_`` (the predicted classes the score reads)."""
    return np.searchsorted(model.classes_, labels)


# --------------------------------------------------------------------------------------------
# Parameters: checked before any fit
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "params, match",
    [
        (
            {"confidence": 0},
            r"^target='coverage', value=0\.8, confidence=0: confidence must lie in \(0, 1\)",
        ),
        (
            {"confidence": 1},
            r"^target='coverage', value=0\.8, confidence=1: confidence must lie in \(0, 1\)",
        ),
        (
            {"confidence": 1.5},
            r"confidence must lie in \(0, 1\) \(it is 1 - delta, e\.g\. 0\.95\), got 1\.5$",
        ),
        ({"confidence": float("nan")}, r"confidence=nan: confidence must lie in \(0, 1\)"),
        (
            {"confidence": "0.95"},
            r"^confidence must be a number \(a level 1 - delta in \(0, 1\), or None\), got "
            r"'0\.95' \(a str\): pass it as a number, e\.g\. confidence=0\.95$",
        ),
        ({"confidence": True}, r"^confidence must be a number .*got True \(a bool\)"),
        (
            {"confidence": np.bool_(False)},
            r"^confidence must be a number .*got (np\.False_|False) \(a bool_?\)",
        ),  # numpy < 2: False (a bool_)
        ({"confidence": [0.9]}, r"^confidence must be a number .*got \[0\.9\] \(a list\)"),
        (
            {"target": "reject-cost", "value": 10, "confidence": 0.9},
            r"^target='reject-cost', value=10, confidence=0\.9: target reject-cost has no certified form",
        ),
        (
            {"target": "reject_cost", "value": 10, "confidence": "0.9"},
            r"^confidence must be a number",
        ),
        (
            {"value": "0.8"},
            r"^value must be a number \(a coverage, selective risk or reject cost\), got '0\.8' "
            r"\(a str\): pass it as a number, e\.g\. value=0\.8$",
        ),
        ({"value": True}, r"^value must be a number .*got True \(a bool\)"),
        ({"value": 0.0}, r"target: coverage must be a number in \(0, 1\], got 0\.0$"),
        (
            {"target": "accuracy"},
            r"target kind must be one of 'coverage', 'risk', 'reject-cost', got 'accuracy'",
        ),
        (
            {"cv": 1},
            r"^SelectiveClassifier: cv must be None \(a held-out split\), a number of folds >= 2 "
            r"or a splitter such as sklearn\.model_selection\.KFold\(5\), got 1$",
        ),
        ({"cv": True}, r"^SelectiveClassifier: cv must be None .*got True$"),
        ({"cv": "5"}, r"^SelectiveClassifier: cv must be None .*got '5'$"),
        ({"cv": 2.5}, r"^SelectiveClassifier: cv must be None .*got 2\.5$"),
    ],
)
def test_every_bad_parameter_is_refused_before_the_classifier_is_fitted(
    params, match, small_digits
):
    X, y = small_digits
    _FitRecorder.fitted = False
    with pytest.raises(ValueError, match=match):
        SelectiveClassifier(_FitRecorder(), C_grid=(1.0,)).set_params(**params).fit(X, y)
    assert not _FitRecorder.fitted


def test_the_recorder_records_a_fit(small_digits):
    """The recorder of the test above does see a fit when the parameters are good."""
    X, y = small_digits
    _FitRecorder.fitted = False
    SelectiveClassifier(_FitRecorder(max_iter=500), C_grid=(1.0,), cv=2, confidence=0.9).fit(X, y)
    assert _FitRecorder.fitted


@pytest.mark.parametrize("cv", [None, 5])
def test_an_infeasible_certified_target_raises_infeasible_target_error_with_the_best_bound(
    cv, small_digits
):
    """risk=0.5 % at 0.9 on ~180 calibration rows cannot be certified; best_bound is Target.fit's on the same rows.

    The same fit with a feasible target gives the same split, classifier and score (the score does not
    depend on the target), so its calibration rows recompute the bound independently.
    """
    X, y = small_digits
    model = SelectiveClassifier(
        LogisticRegression(max_iter=500),
        target="risk",
        value=50,
        confidence=0.9,
        cv=cv,
        uncertainty_score="reg",
        C_grid=(1.0,),
    )
    feasible = clone(model).fit(X, y)
    cal = feasible.split_["calibration"]
    loss = 100.0 * (feasible.estimator_.predict(X[cal]) != y[cal])
    with pytest.raises(InfeasibleTargetError) as expected:
        Target("risk", 0.5, confidence=0.9).fit(
            loss, feasible.predict_uncertainty(X[cal]), loss_bound=100.0
        )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # a risk below 1 % with the 0/100 loss warns
        with pytest.raises(
            InfeasibleTargetError,
            match=rf"^cannot meet target='risk', value=0\.5, confidence=0\.9 "
            rf"on the {cal.size} calibration rows: target risk=0\.5 "
            r"cannot be certified",
        ) as raised:
            clone(model).set_params(value=0.5).fit(X, y)
    error = raised.value
    assert isinstance(error, ValueError)
    assert error.best_bound == expected.value.best_bound > 0.5
    assert (error.confidence, error.n_calibration) == (0.9, cal.size)


# --------------------------------------------------------------------------------------------
# Cross-fitting: what each part sees
# --------------------------------------------------------------------------------------------
def test_every_row_is_predicted_by_a_model_that_did_not_see_it(small_digits):
    """cv=5, plug-in target: the predictions are cross_val_predict's on the same folds, the classifier is refitted
    on all rows, and the score and the selection learn from the out-of-fold predictions."""
    X, y = small_digits
    clf = LogisticRegression(max_iter=500)
    model = SelectiveClassifier(
        clf, uncertainty_score="sele", value=0.8, cv=5, C_grid=(1.0,), random_state=3
    ).fit(X, y)
    folds = model.cv_folds_
    assert len(folds) == 5
    assert all(np.intersect1d(train, test).size == 0 for train, test in folds)
    np.testing.assert_array_equal(
        np.sort(np.concatenate([test for _, test in folds])), np.arange(len(y))
    )
    oof = cross_val_predict(clone(clf), X, y, cv=folds)
    np.testing.assert_array_equal(model.cv_predictions_, oof)
    assert (
        np.mean(oof != clf.fit(X, y).predict(X)) > 0.01
    )  # out-of-fold: not the refitted model's predictions
    np.testing.assert_array_equal(model.estimator_.coef_, clone(clf).fit(X, y).coef_)
    np.testing.assert_array_equal(model.split_["classifier"], np.arange(len(y)))
    # the score and the selection, recomputed from the out-of-fold predictions with the library's fit
    loss = 100.0 * (oof != y)
    parts = {name: model.split_[name] for name in ("fit", "validation", "calibration", "report")}
    again = fit_selective(
        X,
        _index(model, oof),
        loss,
        Target("coverage", 0.8),
        parts,
        n_classes=10,
        C_grid=(1.0,),
        seed=3,
    )
    np.testing.assert_array_equal(again.score.coef_, model.uncertainty_score_.coef_)
    assert again.selection == model.selection_
    cal = parts["calibration"]
    assert cal.size == round(0.3 * len(y))  # twice cv=None's 0.3 of half the rows
    assert model.selection_ == Target("coverage", 0.8).fit(
        loss[cal], model.uncertainty_score_.predict(X[cal], _index(model, oof[cal]))
    )
    report = parts["report"]
    expected = model.selection_.acceptance_probability(
        model.uncertainty_score_.predict(X[report], _index(model, oof[report]))
    ).mean()
    assert model.report_["coverage_expected"] == pytest.approx(expected, abs=1e-12)


def test_a_certified_target_keeps_its_calibration_rows_out_of_the_folds(small_digits):
    """cv=5 with a confidence: the folds cut the fit and validation rows only; estimator_, fitted on them, predicts
    the calibration rows, which no model learned from."""
    X, y = small_digits
    clf = LogisticRegression(max_iter=500)
    model = SelectiveClassifier(
        clf, target="coverage", value=0.7, confidence=0.9, cv=5, C_grid=(1.0,), random_state=1
    ).fit(X, y)
    train = np.union1d(model.split_["fit"], model.split_["validation"])
    np.testing.assert_array_equal(model.split_["classifier"], train)
    held_out = np.union1d(model.split_["calibration"], model.split_["report"])
    assert (
        np.intersect1d(
            np.concatenate([np.concatenate(fold) for fold in model.cv_folds_]), held_out
        ).size
        == 0
    )
    np.testing.assert_array_equal(model.estimator_.coef_, clone(clf).fit(X[train], y[train]).coef_)
    within = [
        (np.searchsorted(train, a), np.searchsorted(train, b)) for a, b in model.cv_folds_
    ]  # of X[train]
    np.testing.assert_array_equal(
        model.cv_predictions_[train], cross_val_predict(clone(clf), X[train], y[train], cv=within)
    )
    np.testing.assert_array_equal(
        model.cv_predictions_[held_out], model.estimator_.predict(X[held_out])
    )
    cal = model.split_["calibration"]
    loss = 100.0 * (model.estimator_.predict(X[cal]) != y[cal])
    assert model.selection_ == Target("coverage", 0.7, confidence=0.9).fit(
        loss, model.predict_uncertainty(X[cal])
    )
    assert model.selection_.n_calibration == cal.size == round(0.3 * len(y))


def test_cross_fitting_gives_each_fold_the_weights_of_its_rows():
    from sklearn.datasets import load_breast_cancer

    X, y = load_breast_cancer(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    w = np.random.default_rng(0).uniform(0.1, 5.0, len(y))
    model = SelectiveClassifier(LogisticRegression(), C_grid=(1.0,), cv=4).fit(
        X, y, sample_weight=w
    )
    oof = cross_val_predict(
        LogisticRegression(), X, y, cv=model.cv_folds_, params={"sample_weight": w}
    )
    np.testing.assert_array_equal(model.cv_predictions_, oof)
    np.testing.assert_array_equal(
        model.estimator_.coef_, LogisticRegression().fit(X, y, sample_weight=w).coef_
    )
    unweighted = cross_val_predict(LogisticRegression(), X, y, cv=model.cv_folds_)
    assert np.any(unweighted != oof)


def test_tcp_learns_from_out_of_fold_posteriors(small_digits):
    """TCP's fit target is each row's true-class probability from the fold model that did not see it."""
    X, y = small_digits
    clf = LogisticRegression(max_iter=500)
    model = SelectiveClassifier(
        clf, uncertainty_score="tcp", cv=3, C_grid=(1.0,), random_state=2
    ).fit(X, y)
    proba = cross_val_predict(clone(clf), X, y, cv=model.cv_folds_, method="predict_proba")
    oof = proba.argmax(axis=1)
    np.testing.assert_array_equal(model.cv_predictions_, oof)
    parts = {name: model.split_[name] for name in ("fit", "validation", "calibration", "report")}
    again = fit_selective(
        X,
        oof,
        100.0 * (oof != y),
        Target("coverage", 0.8),
        parts,
        score="tcp",
        n_classes=10,
        C_grid=(1.0,),
        seed=2,
        fit_target=proba[np.arange(len(y)), y],
    )
    np.testing.assert_allclose(
        again.score.predict(X, oof), model.uncertainty_score_.predict(X, oof), rtol=0, atol=1e-12
    )
    assert again.selection == model.selection_


def test_a_splitter_is_used_as_given_and_one_that_leaves_rows_out_is_refused(small_digits):
    X, y = small_digits
    model = SelectiveClassifier(GaussianNB(), cv=KFold(3), C_grid=(1.0,)).fit(X, y)
    assert [test.tolist() for _, test in model.cv_folds_] == [
        test.tolist() for _, test in KFold(3).split(X)
    ]
    with pytest.raises(
        ValueError,
        match=r"^cv=ShuffleSplit\(.*\) must put each of the 600 rows in exactly one test "
        r"fold \(as KFold does\)",
    ):
        SelectiveClassifier(GaussianNB(), cv=ShuffleSplit(3, test_size=0.2), C_grid=(1.0,)).fit(
            X, y
        )
    with pytest.raises(
        ValueError,
        match=r"^cv=5: cannot cut the 4 rows the classifier learns from \(n_samples = 4\) "
        r"into folds .*; lower cv, or pass cv=None",
    ):
        SelectiveClassifier(GaussianNB(), C_grid=(1.0,)).fit(X[:4], y[:4])


def test_prefit_ignores_cv(small_digits):
    """A prefitted classifier is not fitted, so there is nothing to cross-fit: cv changes nothing."""
    X, y = small_digits
    fitted = GaussianNB().fit(X[:200], y[:200])
    by_cv = [
        SelectiveClassifier(fitted, prefit=True, cv=cv, C_grid=(1.0,)).fit(X[200:], y[200:])
        for cv in (None, 5)
    ]
    assert by_cv[0].selection_ == by_cv[1].selection_
    assert not hasattr(by_cv[1], "cv_folds_")
    refitted = (
        SelectiveClassifier(GaussianNB(), cv=3, C_grid=(1.0,))
        .fit(X, y)
        .set_params(cv=None)
        .fit(X, y)
    )
    assert not hasattr(refitted, "cv_folds_") and not hasattr(refitted, "cv_predictions_")


def test_all_correct_out_of_fold_predictions_warn_naming_them():
    """Digits 0 and 1: no fold model errs; the warning counts every row's out-of-fold prediction."""
    X, y = load_digits(return_X_y=True)
    X, y = X[y < 2], y[y < 2]
    with pytest.warns(
        UserWarning,
        match=rf"^every loss is 0 \(all {len(y)} predictions of the rows \(out of fold: "
        r"each by a classifier that did not see it\) are correct\)",
    ):
        SelectiveClassifier(LogisticRegression(max_iter=2000), C_grid=(1.0,), value=0.6).fit(X, y)


# --------------------------------------------------------------------------------------------
# What cross-fitting reaches, and what a certificate still guarantees
# --------------------------------------------------------------------------------------------
@pytest.mark.slow
def test_cross_fitting_meets_a_coverage_target_on_digits():
    """Digits, half to train and half to test, 8 seeds: the test coverage averages within 0.02 of 0.8 with cv=5
    (the protocol of benchmarks/bench_estimator_cv.py)."""
    X, y = load_digits(return_X_y=True)
    coverages = []
    for seed in range(8):
        X_trn, X_tst, y_trn, _ = train_test_split(
            X, y, test_size=0.5, stratify=y, random_state=seed
        )
        model = SelectiveClassifier(
            LogisticRegression(max_iter=2000), value=0.8, random_state=seed, cv=5
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            coverages.append(model.fit(X_trn, y_trn).accept(X_tst).mean())
    assert abs(np.mean(coverages) - 0.8) < 0.02
    assert np.std(coverages, ddof=1) < 0.04


@pytest.mark.slow
def test_a_cross_fitted_certificate_holds_for_the_population():
    """A population with known truth: 40,000 rows of a two-class problem whose Bayes error is about 16 %.

    100 training samples of 2,000 rows each fit SelectiveClassifier(cv=5) for risk <= 10 % and for coverage
    >= 0.6 at confidence 0.9, and their plug-in twins (no confidence); each fitted rule's selective risk and
    coverage are computed on all 40,000 rows. A guarantee that holds is violated in at most 10 % of the
    samples: the Clopper-Pearson 95 % interval of the certified violation rate must reach below 0.1. The
    plug-in twins, met on the calibration rows only, miss about half the time, above 0.1 beyond their
    interval: the simulation sees a violated target when there is one.
    """
    rng = np.random.default_rng(0)

    def draw(n):
        label = rng.integers(0, 2, n)
        return rng.normal(size=(n, 2)) + np.outer(2.0 * label - 1.0, [1.0, 0.0]), label

    X_pop, y_pop = draw(40_000)
    repeats, targets = 100, (("risk", 10.0), ("coverage", 0.6))
    violations = {(kind, confidence): 0 for kind, _ in targets for confidence in (0.9, None)}
    infeasible = 0
    for repeat in range(repeats):
        X, y = draw(2000)
        for (kind, value), confidence in [(target, c) for target in targets for c in (0.9, None)]:
            model = SelectiveClassifier(
                GaussianNB(),
                target=kind,
                value=value,
                confidence=confidence,
                cv=5,
                uncertainty_score="reg",
                C_grid=(1.0,),
                random_state=repeat,
            )
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)
                try:
                    model.fit(X, y)
                except InfeasibleTargetError:
                    infeasible += 1
                    continue  # nothing certified: rejecting everything violates no target of risk
            accept = model.accept(X_pop)
            if kind == "risk":
                missed = (
                    100.0 * np.mean(model.estimator_.predict(X_pop[accept]) != y_pop[accept])
                    > value
                )
            else:
                missed = accept.mean() < value
            violations[kind, confidence] += bool(missed)
    assert infeasible < 0.1 * repeats  # the certified risk is fitted, not refused, in most samples
    for (kind, confidence), count in violations.items():
        low, high = clopper_pearson(count, repeats, 0.05)
        if confidence is None:
            assert low > 0.1, (kind, count)
        else:
            assert low < 0.1, (kind, count)


def test_the_guides_table_of_cv_is_the_benchmarks_record():
    """The selective page's table of cv = None, 5, 10 is benchmarks/bench_estimator_cv.csv, to its digits."""
    import re

    import pandas as pd
    from support import REPO

    records = pd.read_csv(
        REPO / "benchmarks" / "bench_estimator_cv.csv", dtype={"cv": str}, keep_default_na=False
    )
    page = (REPO / "docs" / "guide" / "selective.md").read_text(encoding="utf-8")
    row = re.compile(
        r"^\| `(None|5|10)` \| (\d+) \| ([\d.]+) \(([\d.]+)-([\d.]+)\) \| ([\d.]+) \| ([\d.]+) % \| "
        r"([\d.]+) s \|$",
        re.MULTILINE,
    )
    shown = {match[0]: match[1:] for match in row.findall(page)}
    assert sorted(shown) == ["10", "5", "None"]
    for cv, group in records.groupby("cv"):
        assert len(group) == 8
        expected = (
            f"{group['n_calibration'].mean():.0f}",
            f"{group['test_coverage'].mean():.3f}",
            f"{group['test_coverage'].min():.3f}",
            f"{group['test_coverage'].max():.3f}",
            f"{group['coverage_error'].std(ddof=1):.3f}",
            f"{group['test_selective_risk'].mean():.2f}",
            f"{group['fit_cpu_seconds'].mean():.2f}",
        )
        assert shown[cv] == expected, cv
