"""The OOD experiment's settings, datasets and class hold-out (:mod:`rejectopt.pipeline.experiments.ood`)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...._checks import check_1d, check_open_unit
from ....classifiers import get_classifier
from ....datasets import get_spec

#: The experiment's name in the experiment contract (the OOD benchmark of ``workflow/rules/ood.smk``).
NAME = "ood"

#: The config block ``ood:``, its keys and defaults; :func:`settings` fills the missing ones.
DEFAULTS = {
    "datasets": ["letter", "pendigit", "sattelite", "avila"],
    "held_out_fraction": 0.3,
    "classifiers": ["lr"],
    "tpr_min": 0.8,
    "fpr_max": 0.2,
    "knn_neighbors": 1,
    "angles": 181,
}

#: The pipeline's settings of the classifier and SELE where the config lacks them (its defaults).
_PIPELINE_DEFAULTS = {
    "C_classifier": [1, 10, 100, 1000],
    "C_score": [0, 1, 10, 100, 1000],
    "sele_chunk_size": 500,
}

#: The metrics the methods are ranked by (:func:`ood_statistics`): R^S at the two bounds (smaller is
#: better), AUROC and OSCR (larger is better).
RANK_METRICS = ("risk_seed", "risk_fixed", "auroc", "oscr")

#: Slack of the feasibility checks of fitted (randomised) rules, for floating-point sums.
_FEASIBLE_TOL = 1e-9

#: Columns of ``results/ood/{dataset}/split_{k}.csv`` (one row per classifier and method).
SPLIT_COLUMNS = [
    "dataset",
    "split",
    "classifier",
    "method",
    "kind",
    "held_out",
    "n_classes",
    "n_id_val",
    "n_ood_val",
    "n_id_tst",
    "n_ood_tst",
    "C_classifier",
    "C_sele",
    "id_error",
    "tpr_min",
    "fpr_max",
    "fpr_bound_val",
    "fpr_bound_tst",
    "risk_seed",
    "risk_fixed",
    "feasible_val_seed",
    "feasible_tst_seed",
    "feasible_val_fixed",
    "feasible_tst_fixed",
    "deployed_risk_seed",
    "deployed_tpr_seed",
    "deployed_fpr_seed",
    "deployed_risk_fixed",
    "deployed_tpr_fixed",
    "deployed_fpr_fixed",
    "mu_seed",
    "mu_fixed",
    "fpr_at_tpr",
    "auroc",
    "oscr",
]


# --------------------------------------------------------------------------------------------
# Settings, datasets and the class hold-out
# --------------------------------------------------------------------------------------------
def settings(config: dict) -> dict:
    """The experiment's settings from the whole pipeline config.

    Parameters
    ----------
    config : dict
        The whole pipeline config.

    Returns
    -------
    dict
        ``config["ood"]`` completed by :data:`DEFAULTS` (values as given: the rule passes them on),
        and the pipeline's ``C_classifier``, ``C_score``, ``sele_chunk_size`` (as in the staged rules).

    Raises
    ------
    ValueError
        On an unknown key, a value out of range, or a non-classification classifier (holding out
        classes needs class labels).
    """
    block = dict(config.get("ood") or {})
    unknown = sorted(set(block) - set(DEFAULTS))
    if unknown:
        raise ValueError(f"config ood: unknown keys {unknown}; allowed: {sorted(DEFAULTS)}")
    out = {**DEFAULTS, **block}
    check_open_unit(out["held_out_fraction"], "config ood.held_out_fraction")
    for key in ("tpr_min", "fpr_max"):
        if not 0.0 <= float(out[key]) <= 1.0:
            raise ValueError(f"config ood.{key} must lie in [0, 1], got {out[key]!r}")
    if int(out["knn_neighbors"]) < 1 or int(out["angles"]) < 2:
        raise ValueError("config ood.knn_neighbors must be >= 1 and ood.angles >= 2")
    for name in out["classifiers"]:
        if (
            get_classifier(name).task != "classification"
        ):  # an unknown name fails here, listing the valid ones
            raise ValueError(f"config ood.classifiers: {name!r} is not a classification classifier")
    for key, default in _PIPELINE_DEFAULTS.items():
        out[key] = config.get(key, default)
    out["C_classifier"], out["C_score"] = list(out["C_classifier"]), list(out["C_score"])
    out["sele_chunk_size"] = int(out["sele_chunk_size"])
    return out


#: :func:`settings` under another name, for :func:`run_dataset_files`, whose keyword ``settings``
#: (the rule's param) is the config block.
_settings = settings


def covered_datasets(
    settings: dict, run_datasets: Sequence[str], task: Mapping[str, str], custom: Sequence[str] = ()
) -> list[str]:
    """The datasets of ``settings["datasets"]`` the run covers, in run order.

    Every listed name must be registered or in ``custom``, even if not covered.

    Parameters
    ----------
    settings : dict
        :func:`settings`.
    run_datasets : sequence of str
        The datasets of the run, in run order.
    task : mapping of str to str
        The task of each dataset of the run.
    custom : sequence of str, default ()
        The run's custom datasets, valid names too.

    Returns
    -------
    list of str

    Raises
    ------
    ValueError
        On an unknown name or a covered dataset that is ordinal.
    """
    for name in settings["datasets"]:
        if name not in custom:
            get_spec(name)  # an unknown name fails here, listing the valid ones
    chosen = [d for d in run_datasets if d in settings["datasets"]]
    for name in chosen:
        if task[name] != "classification":
            raise ValueError(
                f"config ood.datasets: {name!r} is an {task[name]} dataset; the OOD benchmark "
                "holds out classes of a classification dataset"
            )
    return chosen


def held_out_classes(y: Any, fraction: float = 0.3) -> np.ndarray:
    """The OOD classes: the ``ceil(fraction K)`` largest of the labels ``0..K-1``.

    ``K = max(y) + 1``; ``fraction K`` is rounded to 9 decimals first (``0.3 * 10`` gives 3, not 4).
    At least one class is held out, at least two stay ID (the classifier must still decide).

    Parameters
    ----------
    y : array-like of int
        The labels ``0..K-1``.
    fraction : float, default 0.3
        The fraction of the classes held out, in ``(0, 1)``.

    Returns
    -------
    numpy.ndarray
        The held-out labels, ascending.

    Raises
    ------
    ValueError
        Labels that are not ``0..K-1``, a fraction outside ``(0, 1)``, or fewer than 2 ID
        classes left.
    """
    y = check_1d(y, "y")
    if y.size == 0 or not np.issubdtype(y.dtype, np.integer) or y.min() < 0:
        raise ValueError("y must be a non-empty 1-D array of integer labels 0..K-1")
    fraction = check_open_unit(fraction, "fraction")
    n_classes = int(y.max()) + 1
    n_out = max(1, math.ceil(round(fraction * n_classes, 9)))
    if n_classes - n_out < 2:
        raise ValueError(
            f"holding out {n_out} of {n_classes} classes leaves fewer than 2 ID classes; "
            "the OOD benchmark needs a multi-class dataset (or a smaller held_out_fraction)"
        )
    return np.arange(n_classes - n_out, n_classes)


@dataclass(frozen=True)
class OODPartition:
    """One pipeline split turned into an OOD problem (module notes).

    Parameters
    ----------
    held_out : ndarray
        The OOD class labels.
    n_classes_id : int
        ID classes ``0..n_classes_id-1``.
    is_ood : ndarray of bool, shape (n,)
        Per example of the dataset.
    trn1, val1, trn2, val2 : ndarray of int
        The ID examples of each part.
    val : ndarray of int
        ID and OOD examples of Val1 and Val2, sorted.
    tst : ndarray of int
        ID and OOD examples of Tst.
    """

    held_out: np.ndarray
    n_classes_id: int
    is_ood: np.ndarray
    trn1: np.ndarray
    val1: np.ndarray
    trn2: np.ndarray
    val2: np.ndarray
    val: np.ndarray
    tst: np.ndarray

    def counts(self) -> dict[str, int]:
        """ID / OOD counts of Val and Tst, the examples the rules are tuned and scored on."""
        return {
            "n_id_val": int((~self.is_ood[self.val]).sum()),
            "n_ood_val": int(self.is_ood[self.val].sum()),
            "n_id_tst": int((~self.is_ood[self.tst]).sum()),
            "n_ood_tst": int(self.is_ood[self.tst].sum()),
        }


def ood_partition(y: Any, parts: dict, held_out_fraction: float = 0.3) -> OODPartition:
    """Hold out the last classes of ``y`` as OOD in one split ``parts`` (``trn1`` ... ``tst``).

    Parameters
    ----------
    y : array-like of int
        The labels ``0..K-1`` of the whole dataset.
    parts : dict
        Row indices of ``trn1``, ``val1``, ``trn2``, ``val2``, ``tst``.
    held_out_fraction : float, default 0.3
        :func:`held_out_classes`'s fraction.

    Returns
    -------
    OODPartition
        ID-only training parts, Val (Val1 and Val2) and Tst with both.

    Raises
    ------
    ValueError
        When Val or Tst lacks ID or OOD examples: neither the rules nor their rates are defined then.
    """
    y = np.asarray(y)
    held_out = held_out_classes(y, held_out_fraction)
    is_ood = y >= held_out[0]
    idx = {p: np.asarray(parts[p], dtype=np.int64) for p in ("trn1", "val1", "trn2", "val2", "tst")}
    id_only = {p: v[~is_ood[v]] for p, v in idx.items()}
    val = np.sort(np.concatenate([idx["val1"], idx["val2"]]))
    part = OODPartition(
        held_out=held_out,
        n_classes_id=int(held_out[0]),
        is_ood=is_ood,
        trn1=id_only["trn1"],
        val1=id_only["val1"],
        trn2=id_only["trn2"],
        val2=id_only["val2"],
        val=val,
        tst=idx["tst"],
    )
    counts = part.counts()
    for name in ("n_id_val", "n_ood_val", "n_id_tst", "n_ood_tst"):
        if counts[name] == 0:
            raise ValueError(f"the OOD split has no {name[2:].replace('_', ' ')} examples")
    return part
