"""Tests of rejectopt.targets: parsing a target and fitting each model's selection function."""

import numpy as np
import pytest

from rejectopt.selective import InfeasibleTargetError, empirical_risk_coverage
from rejectopt.targets import Target, parse_target


def test_parse_target():
    assert parse_target("coverage=0.8") == Target("coverage", 0.8)
    assert parse_target("reject_cost=10") == Target("reject-cost", 10.0)
    assert str(parse_target(" Risk=5")) == "risk=5"
    for bad in ("coverage=1.5", "risk=-1", "cov=0.5", "coverage", "risk=abc", "risk=nan"):
        with pytest.raises(ValueError, match="^target"):
            parse_target(bad)
    with pytest.raises(ValueError, match="coverage"):
        Target("coverage", 0.0)


def test_target_fits_each_model():
    rng = np.random.default_rng(0)
    s = rng.normal(size=400)
    loss = 100.0 * (rng.random(400) < 1 / (1 + np.exp(-2 * s)))
    _, coverage = empirical_risk_coverage(loss, s, Target("coverage", 0.7).fit(loss, s))
    assert coverage == pytest.approx(0.7)
    risk, _ = empirical_risk_coverage(loss, s, Target("risk", 20).fit(loss, s))
    assert risk == pytest.approx(20)
    assert empirical_risk_coverage(loss, s, Target("reject-cost", 0).fit(loss, s))[0] == 0  # rejecting is free
    assert empirical_risk_coverage(loss, s, Target("reject-cost", 1000).fit(loss, s))[1] == 1  # rejecting is dear
    with pytest.raises(InfeasibleTargetError):
        Target("risk", 1e-9).fit(np.full(5, 100.0), np.arange(5.0))
