"""What several test modules share, so that no test module imports another.

The Snakemake runner and the demo mirror of the pipeline tests; the seeded split of the fixtures;
the rules of the torch, pipeline and mirror markers; the 300-W face helpers; the synthetic result
frames that an experiment's tests and its report's tests both read. The fixtures built on them are
in tests/conftest.py; the excerpts of the raw files the repository does not ship in tests/excerpts.py.
"""

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from rejectopt.pipeline.report._lock import lock_differences as installed_not_at

REPO = Path(__file__).resolve().parents[1]
#: The raw files of sattelite, abalone and the other small datasets, shipped with the workflow.
DEMO_MIRROR = REPO / "workflow" / "resources" / "demo_mirror"


# --------------------------------------------------------------------------- the pipeline
def snakemake_command(workdir, *args):
    """The command line that runs the repository's workflow in ``workdir`` with this Python."""
    return [
        sys.executable,
        "-m",
        "snakemake",
        "--snakefile",
        str(REPO / "Snakefile"),
        "--directory",
        str(workdir),
        *args,
    ]


def snakemake(workdir, *args, timeout=1800):
    """Run the repository's workflow in ``workdir``; return the completed process (output captured)."""
    return subprocess.run(
        snakemake_command(workdir, *args), capture_output=True, text=True, timeout=timeout
    )


def rule_counts(text):
    """{rule: number of jobs} from the job table Snakemake prints (``-n --quiet rules`` and runs)."""
    return {
        line.split()[0]: int(line.split()[1])
        for line in text.splitlines()
        if len(line.split()) == 2 and line.split()[1].isdigit()
    }


# --------------------------------------------------------------------------- the lock
#: The lock behind README line 2 (requirements/lock.sh): the environment whose numbers are recorded.
TEST_LOCK = REPO / "requirements" / "test.txt"


def lock_differences():
    """The installed packages not at the version of :data:`TEST_LOCK` (empty: this is the lock's
    environment, where a fitted value recorded under the lock is compared exactly)."""
    return installed_not_at(TEST_LOCK)


#: Outside the lock, how far a recorded AuRC may move, as a fraction of its cell's risk without rejection
#: (``risk_full``, the AuRC of a random order): a fit stops at its solver's tolerance, another release or
#: BLAS stops it elsewhere, and a near tie on Val1 / Val2 may then choose another C. Measured with the
#: newest releases of 2026-12-06 (numpy 2.5.5, scipy 1.18.1, xgboost 3.4.1) on the demo: the largest move
#: was 3.8 % of risk_full (shuttle / svm / REG, split 3: 0.552 -> 0.475, risk_full 2.04; 35 of 125 cells
#: moved, 7 risk_full with them), and 10 % allows twice that. Every score's AuRC lies between the oracle's
#: and about risk_full, so a score broken to random order moves by most of risk_full and fails.
AURC_TOLERANCE_OUTSIDE_LOCK = 0.10


def assert_summary_close(summary, recorded):
    """A run's ``summary.csv`` against a recorded one outside the lock: the same cells, every Tst size
    equal, every AuRC within :data:`AURC_TOLERANCE_OUTSIDE_LOCK` of its recorded ``risk_full``."""
    keys = ["task", "dataset", "split", "classifier", "score"]
    merged = recorded.merge(
        summary, on=keys, how="outer", suffixes=("_recorded", ""), indicator=True
    )
    unmatched = merged[merged["_merge"] != "both"]
    assert unmatched.empty, f"cells not in both runs:\n{unmatched[keys + ['_merge']]}"
    assert (merged["n_test"] == merged["n_test_recorded"]).all()
    allowed = AURC_TOLERANCE_OUTSIDE_LOCK * merged["risk_full_recorded"]
    moved = merged[(merged["aurc"] - merged["aurc_recorded"]).abs() > allowed]
    assert moved.empty, (
        f"AuRCs moved by more than {AURC_TOLERANCE_OUTSIDE_LOCK:.0%} of risk_full:\n"
        + moved[keys + ["aurc_recorded", "aurc", "risk_full_recorded"]].to_string()
    )


# --------------------------------------------------------------------------- fixtures' data
def split(X, y, seed=0, frac=0.6):
    """Seeded random train / validation split: (X_trn, y_trn, X_val, y_val)."""
    rng = np.random.default_rng(seed)
    idx = rng.permutation(len(y))
    k = int(frac * len(y))
    return X[idx[:k]], y[idx[:k]], X[idx[k:]], y[idx[k:]]


def skip_or_fail_without_torch(item):
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
        pytest.fail(
            "torch is not installed but CI=true: .ci/run installs torch==2.13.0 for the tests marked torch"
        )
    pytest.skip("needs torch: pip install 'rejectopt[deep]'")


#: What a test marked ``pipeline`` imports or runs: the ``pipeline`` extra's packages (jsonschema is Snakemake's).
PIPELINE_MODULES = ("snakemake", "jsonschema", "xgboost", "openpyxl")


def skip_or_fail_without_pipeline(item):
    """A test marked ``pipeline`` needs the ``pipeline`` extra: skipped without it, except on CI
    (``CI=true``), where a missing package is a failure; CI's minimum-versions stage, which installs
    the core and test extras only, deselects these tests (``-m "not pipeline"``) instead."""
    if item.get_closest_marker("pipeline") is None:
        return
    missing = [name for name in PIPELINE_MODULES if importlib.util.find_spec(name) is None]
    if not missing:
        return
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(
            f"{', '.join(missing)} not installed but CI=true: .ci/run installs the pipeline extra"
        )
    pytest.skip(f"needs {', '.join(missing)}: pip install 'rejectopt[pipeline]'")


# ------------------------------------------------------- the full offline copies (marker ``mirror``)
#: The variables a test marked ``mirror`` reads, and the folder each names: full offline copies of
#: the official files, which the repository does not ship (CI sets them in its second pass).
MIRRORS = {
    "REJECTOPT_DATA_MIRROR": "the full raw-data mirror (<dataset>/<file>.xz copies of the official raw files "
    "and their MANIFEST*.tsv)",
    "REJECTOPT_FACES_MIRROR": "the offline 300-W faces (afw/, helen_testset/, helen_trainset/: <name>.jpg + "
    "<name>.pts)",
}


def mirror_folder(variable):
    """The folder ``$variable`` names (see :data:`MIRRORS`), None when it is unset or empty."""
    assert variable in MIRRORS, variable
    value = os.environ.get(variable, "")
    return Path(value) if value else None


def skip_or_fail_without_mirror(item):
    """A test marked ``mirror`` needs each variable its marker names (:data:`MIRRORS`) set to a folder:
    skipped when one is unset, with a reason naming it, except on CI (``CI=true``), where it is a
    failure; a variable set to something that is not a folder is a failure (a typo must not skip)."""
    variables = [
        name
        for marker in item.iter_markers("mirror")
        for name in marker.args or ("REJECTOPT_DATA_MIRROR",)
    ]
    for variable in dict.fromkeys(variables):
        folder = mirror_folder(variable)
        if folder is None:
            if os.environ.get("CI", "").lower() == "true":
                pytest.fail(
                    f"{variable} is not set but CI=true: .ci/run sets it to {MIRRORS[variable]}"
                )
            pytest.skip(f"needs {variable}: {MIRRORS[variable]}")
        if not folder.is_dir():
            pytest.fail(
                f"{variable}={folder} is not a folder: point it at {MIRRORS[variable]}, or unset it to "
                "skip the tests marked mirror"
            )


#: The marker of a test on the full raw-data mirror.
needs_data_mirror = pytest.mark.mirror("REJECTOPT_DATA_MIRROR")


# --------------------------------------------------------------------------- 300-W faces (landmarks)
#: The offline 300-W faces of the tests marked ``mirror("REJECTOPT_FACES_MIRROR")`` (None: unset, those tests skip).
FACES = mirror_folder("REJECTOPT_FACES_MIRROR")
#: The marker of a test on the offline 300-W faces.
needs_faces = pytest.mark.mirror("REJECTOPT_FACES_MIRROR")


def random_points(seed=0):
    """68 landmarks inside a 100 x 100 image."""
    rng = np.random.default_rng(seed)
    return rng.uniform(10, 90, size=(68, 2)).round(3)


def write_pts(path, points, header=True):
    """A 300-W .pts file of ``points``, with or without the ``version`` header."""
    body = "\n".join(f"{x:.3f} {y:.3f}" for x, y in points)
    text = f"version: 1\nn_points:  68\n{{\n{body}\n}}\n" if header else body + "\n"
    path.write_text(text)
    return path


def forty_offline_faces():
    """40 faces spread over the offline copy (every subset represented)."""
    from rejectopt.datasets._faces300w import list_faces

    faces = list_faces(FACES)
    return faces.iloc[np.linspace(0, len(faces) - 1, 40).astype(int)].reset_index(drop=True)


def fake_result(n=24, seed=0, index_offset=0):
    """A landmark split's result as run_landmark_split returns it, with made-up numbers."""
    from rejectopt.landmarks import per_landmark

    rng = np.random.default_rng(seed)
    truth = random_points(seed)
    loss = rng.gamma(2.0, 100.0, size=n)
    return {
        "tst_index": np.arange(n) + index_offset,
        "loss": loss,
        "pred": np.repeat(truth[None], n, axis=0) + rng.normal(0, 1, size=(n, 68, 2)),
        "uncertainty_face_score": rng.normal(size=n),
        "uncertainty_sele": loss + rng.normal(0, 50, size=n),
        "uncertainty_reg": loss + rng.normal(0, 80, size=n),
        "aurc": {"face_score": 3.5, "sele": 2.6, "reg": 2.8},
        "risk_full": float(per_landmark(loss).mean()),
        "C": {"sele": 10.0, "reg": 100.0},
        "val_aurc": {"sele": {"10.0": 1.0}, "reg": {"100.0": 1.0}},
        "predictor_options": {"oversampling_amount": 5, "tree_depth": 4},
        "val1_error": {"0": 5.0},
        "mean_error": {"tst": 5.0},
    }


def fake_faces(tmp_path, n=24):
    """``n`` grey 100 x 100 images with their .pts files, listed as list_faces lists them."""
    from PIL import Image

    rows = []
    for k in range(n):
        image = tmp_path / f"f{k}.png"
        Image.fromarray(np.full((100, 100), 40 + k, dtype=np.uint8)).save(image)
        pts = write_pts(tmp_path / f"f{k}.pts", random_points(0))
        rows.append({"name": f"f{k}", "subset": "s", "image": str(image), "pts": str(pts)})
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------- the experiments' result frames
#: The reject costs d of the double-hinge tests.
COSTS = [0.05, 0.1, 0.2, 0.3, 0.45]


def split_paths(folder, k):
    """The double-hinge experiment's files of split ``k``: rows, curves, timing."""
    return folder / f"split_{k}.csv", folder / f"split_{k}.npz", folder / f"timing_split_{k}.csv"


def double_hinge_results():
    """The double-hinge experiment's rows for 2 datasets x 4 splits x 2 costs, one with coverage 0."""
    from rejectopt.pipeline.experiments import double_hinge as dh

    rng = np.random.default_rng(3)
    rows = []
    for k, dataset in enumerate(["alpha", "beta"]):
        for split in range(4):
            for d in (0.1, 0.3):
                for m, method in enumerate(dh.METHODS):
                    coverage = (
                        0.0
                        if (dataset, split, d, method) == ("beta", 2, 0.1, "double_hinge")
                        else 0.5 + 0.1 * m
                    )
                    rows.append(
                        {
                            "dataset": dataset,
                            "split": split,
                            "reject_cost": d,
                            "method": method,
                            "cost_risk": 3.0 + m * 0.3 + k + d + rng.random(),
                            "coverage": coverage,
                            "selective_risk": np.nan if coverage == 0 else 2.0 + rng.random(),
                            "error_full": 5.0,
                            "C": 10.0,
                            "gamma": 0.1 if method == dh.REFERENCE else np.nan,
                        }
                    )
    return pd.DataFrame(rows)


def ood_results():
    """The OOD experiment's rows for 3 datasets x 3 splits x 4 methods, one risk missing; and the methods."""
    rng = np.random.default_rng(1)
    methods = ["mcp", "knn", "mcp+knn", "sele"]
    rows = []
    for d, dataset in enumerate(["alpha", "beta", "gamma"]):
        for split in range(3):
            for m, method in enumerate(methods):
                risk = 5.0 + m + d + rng.random()
                rows.append(
                    {
                        "dataset": dataset,
                        "split": split,
                        "classifier": "lr",
                        "method": method,
                        "kind": "double" if "+" in method else "single",
                        "held_out": "4 5",
                        "tpr_min": 0.8,
                        "fpr_max": 0.2,
                        "risk_seed": np.nan
                        if (dataset, method, split) == ("beta", "mcp", 1)
                        else risk,
                        "risk_fixed": risk + 1,
                        "fpr_bound_tst": 0.3,
                        "fpr_at_tpr": 0.1 * m,
                        "auroc": 0.5 + 0.1 * m,
                        "oscr": 0.9,
                        "id_error": 10.0,
                        "feasible_val_seed": True,
                        "feasible_tst_seed": split != 0,
                        "feasible_val_fixed": False,
                        "feasible_tst_fixed": False,
                    }
                )
    return pd.DataFrame(rows), methods


def run_sklearn_check(check, estimator, monkeypatch):
    """Run one of scikit-learn's estimator checks (``parametrize_with_checks``), the array API one included.

    scikit-learn skips ``check_array_api_input`` unless SCIPY_ARRAY_API=1, which SciPy reads once at
    import; with the NumPy namespace only (the estimators declare no array API support) the flag
    changes nothing, so it is set for the check instead of letting the check skip.
    """
    if getattr(check, "func", check).__name__ == "check_array_api_input":
        monkeypatch.setenv("SCIPY_ARRAY_API", "1")
    check(estimator)


#: The library's public names at most (tests/test_house.py counts the API reference's library
#: modules, tests/test_architecture.py every public module outside the pipeline): 150 until 0.7.0,
#: which adds the failure-detection and calibration metrics a paper's table reports (16 names in
#: rejectopt.metrics); 170 until 0.8.0, whose certified release gates' records and per-group
#: certificates are what a deployment reads (AuditTrail, GroupSelection, fit_certified_groups in
#: rejectopt.targets; the gate itself is a Target's min_coverage, no new name).
MAX_PUBLIC_NAMES = 175


def load_benchmark(name):
    """The module ``benchmarks/<name>.py``, loaded from its file: a test of a benchmark record
    calls the script's own table and checks (the benchmarks are scripts, not a package)."""
    spec = importlib.util.spec_from_file_location(name, REPO / "benchmarks" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
