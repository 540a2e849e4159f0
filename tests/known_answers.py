"""Independent computations that the tests hold the library against (brute force, by the definition)."""

import numpy as np


def brute_force_margin_threshold(f, loss, d):
    """Every threshold t: reject iff |f| < t. Returns (min cost risk, coverage, t) of the minimiser
    with the largest coverage."""
    a = np.abs(f)
    best = None
    for t in np.concatenate([np.unique(a), [np.inf]]):
        accept = a >= t
        cost = (loss[accept].sum() + 100 * d * (~accept).sum()) / a.size
        if (
            best is None
            or cost < best[0] - 1e-9
            or (abs(cost - best[0]) <= 1e-9 and accept.mean() > best[1])
        ):
            best = (cost, accept.mean(), t)
    return best
