"""The parameter-constraint table and its one validator (rejectopt._params.validate_params)."""

import importlib
import inspect

import numpy as np
import pytest

from rejectopt import _certify, logits, metrics, ood, splits, stats, targets
from rejectopt._params import (
    CALLABLE,
    NONE,
    HasMethods,
    InstanceOf,
    Interval,
    Options,
    validate_params,
)
from rejectopt.exceptions import InvalidParameterError

LOSS = np.array([0.0, 1.0, 0.0, 1.0, 0.0, 0.0, 1.0, 0.0])
U = np.array([0.1, 0.9, 0.2, 0.8, 0.3, 0.4, 0.7, 0.5])
IS_OOD = np.array([False, False, False, True, False, True, False, False])

TABLE = {
    "level": Interval(0, 1),
    "prior": [NONE, Interval(0, 1)],
    "coverage": Interval(0, 1, closed="right"),
    "rate": Interval(0, 1, closed="both"),
    "cost": Interval(0, None, closed="left"),
    "n_jobs": [NONE, Interval(1, None, integer=True, closed="left")],
    "folds": Interval(2, None, integer=True, closed="left", label="a number of folds >= 2"),
    "rule": Options("hash", "sequential"),
    "flag": Options(True, False, "auto"),
    "progress": [NONE, CALLABLE],
    "splitter": HasMethods("split", "get_n_splits"),
    "rng": InstanceOf(np.random.RandomState, np.random.Generator),
}


@pytest.mark.parametrize(
    "name, value",
    [
        ("level", 0.5),
        ("level", np.float32(0.25)),
        ("prior", None),
        ("coverage", 1),
        ("rate", 0.0),
        ("cost", 0),
        ("n_jobs", np.int64(3)),
        ("folds", 2),
        ("rule", "sequential"),
        ("rule", np.str_("hash")),
        ("flag", "auto"),
        ("flag", False),
        ("progress", print),
        ("rng", np.random.default_rng(0)),
    ],
)
def test_allowed_values_pass(name, value):
    validate_params("owner", {name: value}, TABLE)


@pytest.mark.parametrize(
    "name, value, message",
    [
        ("level", 1.0, "owner: level must lie in (0, 1), got 1"),
        ("level", float("nan"), "owner: level must lie in (0, 1), got nan"),
        ("level", "0.5", "owner: level must be a real number in (0, 1), got '0.5'"),
        ("level", True, "owner: level must be a real number in (0, 1), got True"),
        ("prior", 0, "owner: prior must lie in (0, 1) or None, got 0"),
        ("coverage", 0.0, "owner: coverage must be a number in (0, 1], got 0.0"),
        ("rate", 1.5, "owner: rate must be a number in [0, 1], got 1.5"),
        ("cost", float("inf"), "owner: cost must be a finite number >= 0, got inf"),
        ("cost", np.float64(-2.5), "owner: cost must be a finite number >= 0, got -2.5"),
        ("n_jobs", 0, "owner: n_jobs must be None or an integer >= 1, got 0"),
        ("n_jobs", 2.0, "owner: n_jobs must be None or an integer >= 1, got 2.0"),
        ("n_jobs", True, "owner: n_jobs must be None or an integer >= 1, got True"),
        ("folds", 1, "owner: folds must be a number of folds >= 2, got 1"),
        ("rule", "random", "owner: rule must be one of 'hash', 'sequential', got 'random'"),
        ("flag", 1, "owner: flag must be one of True, False, 'auto', got 1"),
        ("progress", 3, "owner: progress must be None or a callable, got 3"),
        (
            "splitter",
            "5",
            "owner: splitter must be an object with the method(s) split, get_n_splits, got '5'",
        ),
        (
            "rng",
            7,
            "owner: rng must be an instance of RandomState or Generator, got 7",
        ),
    ],
)
def test_refusals_name_owner_parameter_allowed_values_and_value(name, value, message):
    with pytest.raises(InvalidParameterError) as caught:
        validate_params("owner", {name: value}, TABLE)
    assert str(caught.value) == message
    assert isinstance(caught.value, ValueError) and isinstance(caught.value, TypeError)


def test_names_outside_the_values_are_skipped_and_every_given_one_is_checked():
    validate_params("owner", {}, TABLE)
    with pytest.raises(InvalidParameterError, match="^owner: rule"):
        validate_params("owner", {"level": 0.5, "rule": "x"}, TABLE)


def test_an_array_is_no_option():
    with pytest.raises(InvalidParameterError, match="rule must be one of"):
        validate_params("owner", {"rule": np.array(["hash", "hash"])}, TABLE)


def test_interval_refuses_a_bad_closed_argument():
    with pytest.raises(ValueError, match="closed must be"):
        Interval(0, 1, closed="open")


def test_selective_classifier_checks_its_table_before_fitting():
    from sklearn.linear_model import LogisticRegression

    from rejectopt import SelectiveClassifier

    X, y = np.random.default_rng(0).normal(size=(60, 2)), np.arange(60) % 2
    with pytest.raises(
        InvalidParameterError,
        match=r"^SelectiveClassifier: n_jobs must be None or an integer >= 1, got 0$",
    ):
        SelectiveClassifier(LogisticRegression(), n_jobs=0).fit(X, y)
    with pytest.raises(
        InvalidParameterError,
        match=r"^SelectiveClassifier: validation_fraction must lie in \(0, 1\), got 1$",
    ):
        SelectiveClassifier(LogisticRegression(), validation_fraction=1).fit(X, y)


# --- every public entry point declares its scalars ----------------------------------------------

#: Each covered module and its tables of scalar parameters: one per module of the package that
#: defines its functions (the metrics' risk-coverage, failure-detection and calibration modules
#: each declare theirs, since an argument such as ``convention`` allows other values in each).
TABLES = {
    "rejectopt.metrics": (
        "rejectopt.metrics._parameters:PARAMETERS",
        "rejectopt.metrics._failure:FAILURE_PARAMETERS",
        "rejectopt.metrics._calibration:PARAMETERS",
        "rejectopt.metrics._table:TABLE_PARAMETERS",
    ),
    "rejectopt.ood": "rejectopt.ood._parameters:PARAMETERS",
    "rejectopt._certify": "rejectopt._certify._parameters:PARAMETERS",
    "rejectopt.logits": "rejectopt.logits._parameters:PARAMETERS",
    "rejectopt.splits": "rejectopt.splits:_PARAMETERS",
    "rejectopt.selective": "rejectopt.selective:_PARAMETERS",
    "rejectopt.stats": "rejectopt.stats:_PARAMETERS",
}

#: (module, function, parameter) with a scalar default that the function does not check against
#: its module's table, and why.
ALLOWED_UNDECLARED = {
    ("rejectopt.metrics", "compare_scores", "metric"): "a metric name or a callable, resolved "
    "by the metrics' registry (rejectopt.metrics.get_metric), which names the known ones",
    ("rejectopt.ood", "fit_bounded_tpr_fpr", "randomize"): "read by its truth value: any "
    "value is accepted today",
    ("rejectopt.ood", "fit_bounded_precision_recall", "randomize"): "read by its truth value",
    ("rejectopt.ood", "fit_double_score_tpr_fpr", "randomize"): "read by its truth value",
    ("rejectopt.ood", "fit_double_score_precision_recall", "randomize"): "read by its truth value",
    **{
        ("rejectopt.ood", "synthetic_table1", name): "the population model's targets: any "
        "number is accepted (an unmet target gives an infeasible cell, not an error)"
        for name in ("tpr_min", "fpr_max", "precision_min", "recall_min", "mu_b")
    },
    ("rejectopt._certify", "certified_from_dict", "name"): "the label of the certificate in "
    "messages (e.g. 'model.json certificate'), not a user's setting",
    ("rejectopt.logits", "fit_logits", "target"): "a target spec or a Target, parsed by "
    "rejectopt.targets.parse_target, which names the forms it takes",
    ("rejectopt.logits", "fit_logits", "features"): "'auto' or a list of feature sources, "
    "checked together with the embeddings they need",
    ("rejectopt.logits", "fit_logits", "n_jobs"): "passed on to the learned scores, whose "
    "estimators take scikit-learn's n_jobs",
    ("rejectopt.logits", "fit_logits", "min_rows"): "compared with each part's size by "
    "rejectopt.fitting.split_rows, which takes any number",
    ("rejectopt.splits", "make_splits", "seed"): "read by int() in rejectopt._checks."
    "derive_seed, which takes 3.0 and '3' alike",
    ("rejectopt.splits", "make_splits", "dataset"): "a name hashed through str(): any value "
    "names a dataset",
}


def _scalar_defaults():
    """(module, function, parameter) of every public function's plain int/float/str/bool default."""
    found = []
    for module_name in TABLES:
        module = importlib.import_module(module_name)
        for name in module.__all__:
            function = getattr(module, name)
            if not inspect.isfunction(function):
                continue
            for parameter in inspect.signature(function).parameters.values():
                if type(parameter.default) in (int, float, str, bool):
                    found.append((module_name, name, parameter.name))
    return found


def _table(module_name):
    """The names every table of ``module_name`` declares."""
    homes = TABLES[module_name]
    names = set()
    for entry in (homes,) if isinstance(homes, str) else homes:
        home, attribute = entry.split(":")
        names |= set(getattr(importlib.import_module(home), attribute))
    return names


def test_every_scalar_default_of_a_public_function_is_declared():
    """A public function's scalar parameter is in its module's table or allowed with a reason:
    a new option without a declaration would be checked by hand, or not at all."""
    undeclared = [
        key
        for key in _scalar_defaults()
        if key[2] not in _table(key[0]) and key not in ALLOWED_UNDECLARED
    ]
    assert undeclared == []


def test_the_allow_list_names_only_real_scalars():
    """An entry of the allow-list whose parameter is gone is stale. (An entry may name a parameter
    the module's table declares for its other functions: synthetic_table1's targets share the
    names of the rate bounds that the fits check, but it does not check them.)"""
    defaults = set(_scalar_defaults())
    assert [key for key in ALLOWED_UNDECLARED if key not in defaults] == []


def test_the_coverage_walk_sees_the_public_functions():
    """The walk above finds the functions it is meant to check (not an empty loop)."""
    functions = {(m, f) for m, f, _ in _scalar_defaults()}
    assert ("rejectopt.metrics", "bootstrap_ci") in functions
    assert ("rejectopt.logits", "fit_logits") in functions
    assert ("rejectopt._certify", "validate_target") in functions
    assert ("rejectopt.splits", "make_splits") in functions


@pytest.mark.parametrize(
    "call, message",
    [
        (
            lambda: metrics.risk_at_coverage(LOSS, U, coverage=1.5),
            r"^risk_at_coverage: coverage must be a number in \(0, 1\], got 1.5$",
        ),
        (
            lambda: metrics.coverage_at_risk(LOSS, U, -2),
            r"^coverage_at_risk: risk must be a finite number >= 0 \(loss units\), got -2$",
        ),
        (
            lambda: metrics.aurc(LOSS, U, convention="sklearn"),
            r"^aurc: convention must be one of 'paper', 'fd-shifts', .*, got 'sklearn'$",
        ),
        (
            lambda: metrics.augrc(LOSS, U, ties="random"),
            r"^augrc: ties must be one of 'index', 'average', got 'random'$",
        ),
        (
            lambda: metrics.bootstrap_ci("aurc", LOSS, U, n_resamples=0),
            r"^bootstrap_ci: n_resamples must be an integer >= 1, got 0$",
        ),
        (
            lambda: metrics.bootstrap_ci("aurc", LOSS, U, level=95),
            r"^bootstrap_ci: level must lie in \(0, 1\), got 95$",
        ),
        (
            lambda: metrics.bootstrap_ci("aurc", LOSS, U, random_state=1.5),
            r"^bootstrap_ci: random_state must be None, an integer >= 0 or a numpy "
            r"SeedSequence, BitGenerator or Generator, got 1.5$",
        ),
        (
            lambda: metrics.risk_coverage_band(LOSS, U, loss_bound=-1),
            r"^risk_coverage_band: loss_bound must be None or a finite number > 0, got -1$",
        ),
        (
            lambda: ood.fit_bounded_tpr_fpr(LOSS, IS_OOD, U, 1.5, 0.1),
            r"^fit_bounded_tpr_fpr: tpr_min must be a number in \[0, 1\], got 1.5$",
        ),
        (
            lambda: ood.aupr(IS_OOD, U, ood_prior=1.0),
            r"^aupr: ood_prior must lie in \(0, 1\) or None, got 1$",
        ),
        (
            lambda: ood.oscr(LOSS, IS_OOD, U, ccr="closed"),
            r"^oscr: ccr must be one of 'seed', 'open_set', got 'closed'$",
        ),
        (
            lambda: ood.fit_cost_based_ood(
                LOSS, IS_OOD, U, reject_cost_id=-1, accept_cost_ood=1, reject_cost_ood=0
            ),
            r"^fit_cost_based_ood: reject_cost_id must be a finite number >= 0, got -1$",
        ),
        (
            lambda: _certify.fit_certified_risk(LOSS, U, 30, 0.9, method="exact"),
            r"^fit_certified_risk: method must be None or one of 'ltt', 'sgr', got 'exact'$",
        ),
        (
            lambda: _certify.validate_target(
                LOSS, U, targets.Target("coverage", 0.5, confidence=0.9), repeats=0
            ),
            r"^validate_target: repeats must be an integer >= 1, got 0$",
        ),
        (
            lambda: logits.energy([[0.0, 1.0]], temperature=0),
            r"^energy: temperature must be a finite number > 0, got 0$",
        ),
        (
            lambda: logits.fit_pnorm([[0.0, 1.0]], [1], method="energy"),
            r"^fit_pnorm: method must be one of 'maxlogit', 'msp', got 'energy'$",
        ),
        (
            lambda: logits.fit_logits([[0.0, 1.0]], [1], seed=-1),
            r"^fit_logits: seed must be an integer >= 0, got -1$",
        ),
        (
            lambda: splits.make_splits(np.arange(20) % 2, n_splits=0),
            r"^make_splits: n_splits must be an integer >= 1, got 0$",
        ),
        (
            lambda: stats.wilson_interval(3, 10, confidence=1.0),
            r"^wilson_interval: confidence must lie in \(0, 1\), got 1$",
        ),
    ],
)
def test_a_public_function_refuses_a_scalar_naming_itself(call, message):
    with pytest.raises(InvalidParameterError, match=message):
        call()


def test_values_the_older_checks_took_are_still_taken():
    """Text a ``float()`` read (a coverage, a rate bound) and a seed numpy takes still pass;
    a bool is no number."""
    assert metrics.risk_at_coverage(LOSS, U, "0.5") == metrics.risk_at_coverage(LOSS, U, 0.5)
    assert ood.selective_risk_at_tpr_fpr(LOSS, IS_OOD, U, "0.5", 1) == pytest.approx(
        ood.selective_risk_at_tpr_fpr(LOSS, IS_OOD, U, 0.5, 1.0)
    )
    generator = np.random.default_rng(0)
    assert metrics.bootstrap_ci("aurc", LOSS, U, n_resamples=10, random_state=generator)
    with pytest.raises(InvalidParameterError, match="coverage must be a number in"):
        metrics.risk_at_coverage(LOSS, U, True)
