"""The guarantees experiment fits each target on all its draws at once: the same numbers as one
fit per draw (:meth:`Target.fit` and the population's exact coverage and risk).

Exact equality is known by construction here: the 0/100 losses and 0/1 acceptances make every
sum an integer in floating point, whatever order it is taken in; a randomised tie takes the
per-draw path itself.
"""

import math

import numpy as np
import pytest

from rejectopt.pipeline.experiments import guarantees as g
from rejectopt.selective import InfeasibleTargetError
from rejectopt.targets import Target


def _one_fit_per_draw(target, loss, u, draws):
    out = []
    for chosen in draws:
        try:
            selection = target.fit(loss[chosen], u[chosen])
        except InfeasibleTargetError:
            selection = None
        out.append((*g._population_outcome(selection, loss, u), selection is None))
    return out


def _population(n, ties, seed):
    rng = np.random.default_rng(seed)
    u = rng.random(n)
    if ties:
        u = np.round(u * 8) / 8  # tie groups: the plug-in targets randomise on them
    return 100.0 * (rng.random(n) < 0.05 + u / 4), u


def _same(a, b):
    return len(a) == len(b) and all(
        x == y or (isinstance(x, float) and math.isnan(x) and math.isnan(y))
        for pa, pb in zip(a, b)
        for x, y in zip(pa, pb)
    )


@pytest.mark.parametrize("n, ties", [(40, False), (40, True), (400, False), (400, True)])
@pytest.mark.parametrize(
    "target",
    [
        Target("coverage", 0.8),
        Target("coverage", 0.8, confidence=0.9),
        Target("coverage", 0.99, confidence=0.95),  # more than the rows certify: accept all
        Target("risk", 8.0),
        Target("risk", 8.0, confidence=0.9),
        Target("risk", 0.5, confidence=0.95),  # no sample of these sizes certifies it
    ],
    ids=str,
)
def test_the_draws_at_once_give_the_numbers_of_one_fit_per_draw(n, ties, target):
    loss, u = _population(n, ties, seed=n + ties)
    _, draws = g.calibration_draws(n, {"calibration_fraction": 0.5, "repeats": 40}, seed=3)
    population = g._Population(loss, u)
    assert _same(
        g._fit_outcomes(target, loss, u, draws, population),
        _one_fit_per_draw(target, loss, u, draws),
    )


def test_a_risk_target_is_skipped_only_where_no_sample_of_its_size_certifies_it():
    # 0.5 % at delta 0.05 needs 598 error-free tested rows: 200 rows never, 1000 rows may
    target = Target("risk", 0.5, confidence=0.95)
    assert g._never_certified(target, 200)
    assert not g._never_certified(target, 1000)
    assert not g._never_certified(Target("risk", 20.0, confidence=0.9), 200)
