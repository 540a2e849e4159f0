"""Internal: the classifiers stage of the paper's experiment (:mod:`rejectopt.pipeline.experiments.paper`).

Each classifier trained on Trn1 of a split, its C chosen by Val1 error, its outputs on every
example saved with what they were made from (:func:`run_classifiers`), and read back verified
(:func:`load_classifier_file`).
"""

from __future__ import annotations

import logging
import time

import numpy as np

# The learners load on first use (the package's lazy attributes), so that a job that only reads
# the registries, a table or a figure job, does not import scikit-learn.
from .... import classifiers
from ...._checks import derive_seed
from ...._io import load_npz, npz_checksum, save_npz
from ....classifiers import get_classifier
from ....datasets import load_prepared
from ....splits import load_split

__all__ = ["load_classifier_file", "run_classifier", "run_classifiers"]

log = logging.getLogger(__name__)


def run_classifier(
    data_path,
    splits_path,
    split: int,
    kind: str,
    C_grid,
    seed: int,
    out_path,
    dataset: str = "",
    threads: int = 1,
) -> dict:
    """Train ``kind`` on Trn1 of one split, pick C by Val1 error and save its outputs on every example.

    A classifier with ``uses_C=False`` (XGBoost) ignores ``C_grid``: it searches
    ``rejectopt.classifiers._xgb.XGB_GRID`` and ``C`` is the chosen grid index.

    Parameters
    ----------
    split : int
        The split trained.
    out_path : path-like
        The ``.npz`` written: ``y_pred`` and ``baseline`` (the registered baseline uncertainty:
        MCP for LR and XGBoost, margin for SVM / SVOR) on every example, ``proba`` (if
        posteriors), ``C``, ``C_grid`` and ``val_error``.
    data_path, splits_path, kind, C_grid, seed, dataset, threads
        As in :func:`run_classifiers`.

    Returns
    -------
    dict
        ``{"C", "val_error"}``: the chosen C and the Val1 error of each C.
    """
    return run_classifiers(
        data_path,
        splits_path,
        {split: out_path},
        kind,
        C_grid,
        seed,
        dataset=dataset,
        threads=threads,
    )[split]


def run_classifiers(
    data_path,
    splits_path,
    split_files: dict,
    kind: str,
    C_grid,
    seed: int,
    dataset: str = "",
    threads: int = 1,
) -> dict:
    """:func:`run_classifier` on every split of ``split_files`` (``split -> out_path``), the data read once.

    One job per (dataset, classifier): a job's start-up (:data:`rejectopt.pipeline.resources.JOB_STARTUP_CPU_S`)
    often costs more than one split's fit. Each split has its own seed, so its file (written
    atomically when done) does not depend on the job's other splits.

    Parameters
    ----------
    data_path, splits_path : path-like
        The prepared data and its splits file.
    split_files : dict
        ``split -> out_path``.
    kind : str
        A registered classifier.
    C_grid : sequence of float
        The C values tried.
    seed : int
        The run's master seed (each fit's derives from it, the dataset, ``kind``, the split).
    dataset : str, default ""
        The dataset's name (seeds and log lines).
    threads : int, default 1
        The classifier's ``n_jobs``.

    Returns
    -------
    dict
        ``split -> {"C", "val_error"}``.
    """
    info = get_classifier(kind)
    X, y = load_prepared(data_path)
    data_id = npz_checksum(data_path)
    n_classes = int(y.max()) + 1
    chosen = {}
    for split, out_path in sorted(split_files.items()):
        parts = load_split(splits_path, split, data_sha256=data_id)
        start = time.perf_counter()
        model, best_C, val_errors = classifiers._training.train_classifier(
            kind,
            X[parts["trn1"]],
            y[parts["trn1"]],
            X[parts["val1"]],
            y[parts["val1"]],
            C_grid=tuple(C_grid) if info.uses_C else None,
            n_classes=n_classes,
            random_state=derive_seed(seed, dataset, "classifier", kind, split),
            n_jobs=threads,
        )
        outputs = classifiers._training.classifier_outputs(kind, model, X, n_classes=n_classes)
        log.info(
            "%s %s split %d: C=%g chosen on Val1 (errors %s) in %.1f s",
            dataset,
            kind,
            split,
            best_C,
            {c: round(e, 4) for c, e in val_errors.items()},
            time.perf_counter() - start,
        )
        arrays = {
            "y_pred": np.asarray(outputs["y_pred"], dtype=np.int64),
            "baseline": np.asarray(outputs["baseline"], dtype=float),
            "C": np.float64(best_C),
            "C_grid": np.asarray(list(val_errors), dtype=float),
            "val_error": np.asarray(list(val_errors.values()), dtype=float),
        }
        if outputs.get("proba") is not None:
            arrays["proba"] = np.asarray(outputs["proba"], dtype=float)
        provenance = {
            "data_sha256": data_id,
            "splits_sha256": npz_checksum(splits_path),
            "split": int(split),
            "classifier": kind,
        }
        save_npz(out_path, provenance=provenance, **arrays)
        chosen[split] = {"C": best_C, "val_error": val_errors}
    return chosen


def load_classifier_file(path, data_sha256: str | None = None, split: int | None = None):
    """A :func:`run_classifier` output, verified unchanged and, where given, made from the data and
    for the split (:func:`rejectopt._io.load_npz`).

    Parameters
    ----------
    path : path-like
        The classifier file.
    data_sha256 : str, optional
        The checksum of the data at hand (:func:`rejectopt._io.npz_checksum`).
    split : int, optional
        The split the file must be for.

    Returns
    -------
    rejectopt._io.NpzArrays
        ``y_pred``, ``baseline``, ``C``, ``C_grid``, ``val_error`` and, where the classifier has
        posteriors, ``proba``.

    Raises
    ------
    rejectopt.exceptions.IntermediateFileError
        Naming the file: corrupt, edited, without a content record, or made from other data or
        for another split.
    """
    return load_npz(
        path, expect={"data_sha256": data_sha256, "split": None if split is None else int(split)}
    )
