"""Reliability of the evaluation statistics on hostile inputs: group labels, custom metrics, logits.

Each case ends in a clear error or a correct value; the containers of ``groups=`` (a list, an
array, a Series) give the same groups or the same refusal.
"""

import numpy as np
import pandas as pd
import pytest

from rejectopt.metrics import aurc, selective_report

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
