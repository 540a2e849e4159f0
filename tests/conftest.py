"""Shared fixtures: small real datasets shipped with scikit-learn (no download)."""

import importlib.util
import os

import numpy as np
import pytest
from sklearn.datasets import load_digits, load_iris


def split(X, y, seed=0, frac=0.6):
    """Seeded random train / validation split: (X_trn, y_trn, X_val, y_val)."""
    rng = np.random.default_rng(seed)
    idx = rng.permutation(len(y))
    k = int(frac * len(y))
    return X[idx[:k]], y[idx[:k]], X[idx[k:]], y[idx[k:]]


@pytest.fixture(scope="module")
def iris():
    X, y = load_iris(return_X_y=True)
    return split(X, y, seed=1)


@pytest.fixture(scope="module")
def digits():
    """The first 900 digits (10 classes, 64 features)."""
    X, y = load_digits(return_X_y=True)
    return split(X[:900], y[:900])


@pytest.fixture(scope="module")
def problem():
    """A synthetic selective problem: features, two predicted classes, 0/100 losses that the first feature ranks."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(800, 3))
    y_pred = rng.integers(0, 2, 800)
    loss = 100.0 * (rng.random(800) < 1 / (1 + np.exp(-2 * X[:, 0] * (2 * y_pred - 1))))
    return X, y_pred, loss


def pytest_runtest_setup(item):
    """A test marked ``torch`` needs PyTorch (the ``deep`` extra): skipped without it, except on CI
    (``CI=true``, set by ``.ci/run``, which installs it), where a missing torch is a failure."""
    if item.get_closest_marker("torch") is None:
        return
    try:
        if importlib.util.find_spec("torch") is not None:
            return
    except (ImportError, ValueError):  # a broken or blocked installation counts as missing
        pass
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail("torch is not installed but CI=true: .ci/run installs torch==2.13.0 for the tests marked torch")
    pytest.skip("needs torch: pip install 'rejectopt[deep]'")
