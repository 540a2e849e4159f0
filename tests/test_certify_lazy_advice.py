"""A refused certified risk target computes its advice only when it is read.

The advice (the smallest target the method certifies on the rows) costs a bisection of fits; a
caller that only catches the refusal must not pay for it, and one that reads it must see what an
eagerly built error says.
"""

import math
import pickle

import numpy as np
import pytest

from rejectopt._certify import _fits
from rejectopt.exceptions import InfeasibleTargetError
from rejectopt.targets import Target


def _rows(n=200, seed=0):
    rng = np.random.default_rng(seed)
    u = rng.random(n)
    return 100.0 * (rng.random(n) < 0.1 + u / 5), u


@pytest.mark.parametrize("method", ["ltt", "sgr"])
def test_a_caught_refusal_computes_no_advice(monkeypatch, method):
    calls = []
    bisect = _fits._smallest_certified
    monkeypatch.setattr(_fits, "_smallest_certified", lambda *a: calls.append(1) or bisect(*a))
    loss, u = _rows()
    with pytest.raises(InfeasibleTargetError) as error:
        Target("risk", 1.0, confidence=0.9).fit(loss, u, method=method)
    assert calls == []
    best = error.value.best_bound
    assert calls == [1]
    assert str(error.value) == error.value.args[0]
    assert f"is {best:.8g}; ask for risk >= {best:.8g}" in str(error.value)
    assert calls == [1]  # read once, kept


@pytest.mark.parametrize("method", ["ltt", "sgr"])
def test_the_advice_read_late_is_the_advice_and_pickles_as_the_public_class(method):
    loss, u = _rows()
    with pytest.raises(InfeasibleTargetError) as error:
        Target("risk", 1.0, confidence=0.9).fit(loss, u, method=method)
    err = error.value
    # the advice certifies when asked for: the contract the eager error kept
    assert math.isfinite(err.best_bound)
    Target("risk", err.best_bound, confidence=0.9).fit(loss, u, method=method)
    assert (err.confidence, err.n_calibration) == (0.9, 200)
    assert repr(err) == f"InfeasibleTargetError({str(err)!r})"
    copy = pickle.loads(pickle.dumps(err))
    assert type(copy) is InfeasibleTargetError
    assert str(copy) == str(err)
    for name in ("best_bound", "rows_needed", "confidence", "n_calibration"):
        assert getattr(copy, name) == getattr(err, name)
