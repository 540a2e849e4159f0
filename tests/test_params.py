"""The parameter-constraint table and its one validator (rejectopt._params.validate_params)."""

import numpy as np
import pytest

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
