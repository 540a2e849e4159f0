"""Reliability of the evaluation statistics on hostile inputs: group labels, custom metrics, logits.

Each case ends in a clear error or a correct value; the containers of ``groups=`` (a list, an
array, a Series) give the same groups or the same refusal.
"""

import numpy as np
import pandas as pd
import pytest

from rejectopt.metrics import aurc, bootstrap_ci, compare_scores, selective_report

LOSS = [0.0, 1.0, 0.0, 1.0]
UNCERTAINTY = [0.1, 0.2, 0.3, 0.4]


def _container(labels, kind):
    """The same labels as a plain list, an object array or a pandas Series."""
    if kind == "list":
        return list(labels)
    if kind == "array":
        array = np.empty(len(labels), dtype=object)
        array[:] = list(labels)
        return array
    return pd.Series(labels, dtype=object)


CONTAINERS = ["list", "array", "series"]
#: Labels that are not one group each, with the refusal every container must give.
REFUSED = [
    (["a", np.nan, "b", "a"], r"missing label \(None or NaN\) at row 1 \(1 in all\)"),
    (["a", None, "b", "a"], r"missing label \(None or NaN\) at row 1 \(1 in all\)"),
    (["a", "b", pd.NA, pd.NA], r"missing label \(None or NaN\) at row 2 \(2 in all\)"),
    (
        [1, "1", 1, "1"],
        r"mixes labels of different kinds, numbers \(first at row 0\) and strings \(first at "
        r"row 1\)",
    ),
    (
        [1, "a", 2, "a"],
        r"mixes labels of different kinds, numbers \(first at row 0\) and strings \(first at "
        r"row 1\)",
    ),
    (
        [True, 1, 0, False],
        r"mixes labels of different kinds, booleans \(first at row 0\) and numbers",
    ),
]


@pytest.mark.parametrize("container", CONTAINERS)
@pytest.mark.parametrize(("labels", "message"), REFUSED)
def test_group_labels_are_refused_alike_by_every_container(labels, message, container):
    groups = _container(labels, container)
    with pytest.raises(ValueError, match=message):
        selective_report(LOSS, UNCERTAINTY, groups)
    with pytest.raises(ValueError, match=message):
        aurc(LOSS, UNCERTAINTY, groups=groups)


@pytest.mark.parametrize("container", CONTAINERS)
@pytest.mark.parametrize(
    ("labels", "expected"),
    [
        (["b", "a", "b", "a"], ["a", "b"]),
        ([2, 1, 2, 1], [1, 2]),
        ([1, 2.5, 1, 2.5], [1.0, 2.5]),  # ints and floats are numbers: 1 and 1.0 one group
        ([np.int64(1), 2, 1, 2], [1, 2]),
        ([True, False, True, False], [False, True]),
    ],
)
def test_labels_of_one_kind_give_the_same_groups_in_every_container(labels, expected, container):
    groups = _container(labels, container)
    report = selective_report(LOSS, UNCERTAINTY, groups)
    assert report["group"].tolist()[:-1] == expected
    assert [type(v) for v in report["group"].tolist()[:-1]] == [type(v) for v in expected]
    by_group = aurc(LOSS, UNCERTAINTY, groups=groups)
    assert list(by_group) == expected
    first = np.asarray(labels, dtype=object) == labels[0]
    assert by_group[expected[expected.index(labels[0])]] == aurc(
        np.asarray(LOSS)[first], np.asarray(UNCERTAINTY)[first]
    )


def test_a_list_mixing_kinds_is_not_turned_into_strings():
    # numpy makes ["1", "1", "1", "1"] of [1, "1", 1, "1"]: one group before the reader saw the list
    with pytest.raises(ValueError, match="mixes labels of different kinds"):
        aurc(LOSS, UNCERTAINTY, groups=(1, "1", 1, "1"))
    # a list of one kind keeps its fast paths: integers are counted, strings sorted
    assert aurc(LOSS, UNCERTAINTY, groups=[7, 7, 3, 3]) == {3: 0.25, 7: 0.25}
    assert aurc(LOSS, UNCERTAINTY, groups=["1", "1", "2", "2"]) == {"1": 0.25, "2": 0.25}


# ---------------------------------------------------------------- custom metrics
def _sample(n=40):
    rng = np.random.default_rng(0)
    return (rng.random(n) < 0.3).astype(float), rng.random(n), rng.random(n)


def returns_none(loss, uncertainty):
    return None


def returns_an_array(loss, uncertainty):
    return np.array([1.0, 2.0])


def returns_text(loss, uncertainty):
    return "0.5"


def returns_infinity(loss, uncertainty):
    return np.inf


def returns_a_boolean(loss, uncertainty):
    return True


def _on_resamples(value):
    """A metric that is 0.5 on the full sample (40 rows) and ``value`` on a resample with a repeat."""

    def metric(loss, uncertainty):
        return 0.5 if np.unique(uncertainty).size == uncertainty.size else value

    metric.__name__ = f"resampled_{type(value).__name__}"
    return metric


def _both(metric):
    loss, a, b = _sample()
    yield lambda: compare_scores(loss, a, b, metric=metric, n_resamples=5)
    yield lambda: bootstrap_ci(metric, loss, a, n_resamples=5, random_state=0)


@pytest.mark.parametrize(
    ("metric", "error", "message"),
    [
        (returns_none, TypeError, r"metric 'returns_none' returned None on the full sample"),
        (
            returns_an_array,
            TypeError,
            r"metric 'returns_an_array' returned an array of shape \(2,\) on the full sample",
        ),
        (returns_text, TypeError, r"metric 'returns_text' returned the text '0.5' on the full"),
        (returns_a_boolean, TypeError, r"metric 'returns_a_boolean' returned a bool \(True\)"),
        (
            returns_infinity,
            ValueError,
            r"metric 'returns_infinity' returned an infinite value \(inf\) on the full sample",
        ),
        (
            _on_resamples(None),
            TypeError,
            r"metric 'resampled_NoneType' returned None on a resample of the 40 rows",
        ),
        (
            _on_resamples(-np.inf),
            ValueError,
            r"metric 'resampled_float' returned an infinite value \(-inf\) on a resample of the "
            r"40 rows",
        ),
    ],
)
def test_a_custom_metric_that_returns_no_number_is_named_with_what_it_returned(
    metric, error, message
):
    for call in _both(metric):
        with pytest.raises(error, match=message) as caught:
            call()
        assert "NaN" not in str(caught.value)


def test_a_custom_metric_returning_nan_on_a_resample_is_still_left_out_with_a_warning():
    loss, a, b = _sample()
    with pytest.raises(ValueError, match="returned NaN on every one of the 5 resamples"):
        compare_scores(loss, a, b, metric=_on_resamples(np.nan), n_resamples=5)

    def without_the_first_row(loss, uncertainty):  # NaN when the sample's lowest a is not drawn
        return 0.5 if uncertainty.min() == a.min() else np.nan

    with pytest.warns(RuntimeWarning, match=r"returned NaN on \d+ of the 20 resamples"):
        interval = bootstrap_ci(without_the_first_row, loss, a, n_resamples=20, random_state=0)
    assert interval == (0.5, 0.5)
    one_number = compare_scores(loss, a, b, metric=lambda x, u: np.float64(0.25), n_resamples=5)
    assert one_number.difference == 0.0 and one_number.ci == (0.0, 0.0)
    assert bootstrap_ci(lambda x, u: np.array(0.25), loss, a, n_resamples=5) == (0.25, 0.25)


# ---------------------------------------------------------------- class-shared scores
@pytest.mark.parametrize("learner", ["REGShared", "SELEShared"])
def test_a_row_whose_features_overflow_is_refused_by_both_shared_predicts(learner):
    from rejectopt.scores import _shared

    rng = np.random.default_rng(0)
    logits = rng.normal(size=(60, 3))
    loss = 100.0 * (rng.random(60) < 0.3)
    score = getattr(_shared, learner)(C=1).fit(logits, None, loss)
    rows = np.array([[0.0, 1.0, 2.0], [1e308, -1e308, 0.0]])
    message = (
        r"logits at index {}: the feature 'norm1' overflows the float range \(inf; the logits "
        r"span -1e\+308 to 1e\+308\)"
    )
    with pytest.raises(ValueError, match=message.format(1)):
        score.predict(rows)
    with pytest.raises(ValueError, match=message.format(61)):
        score.fit(np.vstack([logits, rows]), None, np.append(loss, [0.0, 0.0]))
    # max f - mean f = 2.3e308: the first feature to overflow is named
    with pytest.raises(ValueError, match="index 0: the feature 'max_centred_logit' overflows"):
        score.predict([[1.7e308, -1.7e308, -1.7e308]])
    # large logits within the models' bound on features (rejectopt.model.FEATURE_LIMIT) score
    assert np.isfinite(score.predict([[1e150, -1e150, 0.0], [0.0, 1.0, 2.0]])).all()
