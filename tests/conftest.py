"""Shared fixtures: small real datasets shipped with scikit-learn (no download), and one split of the
OOD experiment (sattelite) and of the double-hinge one (breast cancer) that their experiment's and
their report's tests read; the helpers they use are tests/support.py's."""

import os

import numpy as np
import pytest
from sklearn.datasets import load_digits, load_iris
from support import (
    COSTS,
    DEMO_MIRROR,
    skip_or_fail_without_mirror,
    skip_or_fail_without_pipeline,
    skip_or_fail_without_torch,
    split,
    split_paths,
)
from threadpoolctl import threadpool_limits


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


@pytest.fixture(scope="session")
def sattelite(tmp_path_factory):
    """Split 0 of the demo mirror's sattelite through the OOD experiment's file-in / file-out step (the
    pipeline's job), C = 1 only: (folder, X, y, splits, result). Its files are read, never changed."""
    # imported here, not above: an import error there then fails the OOD tests only (see tests/support.py)
    from rejectopt.datasets import load_prepared, prepare_dataset
    from rejectopt.pipeline.experiments import ood as ood_experiment
    from rejectopt.splits import make_splits, save_splits

    folder = tmp_path_factory.mktemp("ood_sattelite")
    prepare_dataset("sattelite", folder / "raw", folder / "data.npz", mirror=DEMO_MIRROR)
    X, y = load_prepared(folder / "data.npz")
    splits = make_splits(y, n_splits=1, seed=0, dataset="sattelite")
    save_splits(folder / "splits.npz", splits, y=y)
    result = ood_experiment.run_dataset_files(
        folder / "data.npz",
        folder / "splits.npz",
        {0: (folder / "split_0.csv", folder / "split_0.npz")},
        dataset="sattelite",
        C_classifier=(1,),
        C_score=(1,),
    )[0]
    return folder, X, y, splits, result


@pytest.fixture(scope="session")
def bc_run(tmp_path_factory):
    """Split 0 of breast cancer through the double-hinge experiment's file-in / file-out step (the
    pipeline's job): (result, X, y, parts, folder). Its files are read, never changed."""
    from rejectopt.pipeline.experiments import double_hinge as dh  # imported here: see sattelite

    out = tmp_path_factory.mktemp("double_hinge") / "breast_cancer"
    result = dh.run_dataset_files(
        None,
        None,
        {0: split_paths(out, 0)},
        dataset="breast_cancer",
        settings={"reject_costs": COSTS},
        seed=0,
    )[0]
    X, y, parts = dh.breast_cancer_split(0, seed=0)
    return result, X, y, parts, out


#: The thread variables of the BLAS and OpenMP libraries, read when a library loads (in a child process too).
THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def pytest_configure(config):
    """An xdist worker (``-n auto``) uses its share of the cores for BLAS and OpenMP, as the pipeline's jobs
    do (``threadpool_limits(snakemake.threads)``).

    Each library's default, a thread per core in every worker, oversubscribes the cores, and
    OpenBLAS's spinning threads then slowed the double-hinge experiment's fixture 35-fold (36 s
    against 1 s per worker, two workers on 2 cores). The limit is set for the libraries the worker
    has loaded (numpy's OpenBLAS) and, through the variables, for those it loads later and for its
    child processes (the CLI, Snakemake, the pages' interpreters); when the user set one of the
    variables, the user's settings stand. What the tests check does not depend on the thread count:
    the fast tier passes with the limit as with each library's default (``-n 0``, or the variables
    set to the core count).
    """
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    if (
        "PYTEST_XDIST_WORKER" not in os.environ
        or workers <= 1
        or any(v in os.environ for v in THREAD_VARIABLES)
    ):
        return
    cores = (
        len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    )
    share = max(1, cores // workers)
    os.environ.update(dict.fromkeys(THREAD_VARIABLES, str(share)))
    threadpool_limits(limits=share)


def pytest_runtest_setup(item):
    """A test marked ``torch`` or ``pipeline`` is skipped without its extra, one marked ``mirror``
    without the variable naming its offline copy; each fails instead on CI (see support.py)."""
    skip_or_fail_without_torch(item)
    skip_or_fail_without_pipeline(item)
    skip_or_fail_without_mirror(item)
