"""Internal: the pipeline's OOD experiment; not part of the public API (see
:mod:`rejectopt.pipeline.experiments` for the experiment contract).

The reject option with out-of-distribution inputs: classes of a tabular dataset held out as OOD.

The benchmark of Franc, Prusa & Paplham [1] (Sec. 4) on the datasets of [2]: of ``K`` classes
``0..K-1``, the ``ceil(f K)`` largest (``f = held_out_fraction``, default 0.3) are OOD, the
others ID. Each pipeline split (``results/data/{dataset}/splits.npz``, as in the main tables):

* **Trn1** (ID only): the classifier, C by ID Val1 error; the standardisation, the kNN-distance
  (:class:`rejectopt.ood.KNNDistanceOOD`) and class-conditional Gaussian
  (:class:`rejectopt.ood.MahalanobisOOD`) OOD scores on standardised features.
* **Trn2 / Val2** (ID only): SELE, C by ID Val2 AuRC (the protocol of Section 5.2 of [2],
  :func:`rejectopt.pipeline.experiments._learners.fit_classifier_then_score`).
* **Val** = ID *and* OOD examples of Val1 and Val2: the single scores' thresholds and the double
  scores' ``mu``, ``lambda``, ``tau`` (``s_r + mu s_g <= lambda``,
  :func:`rejectopt.ood.fit_double_score_tpr_fpr`, angle grid over ``[0, pi/2]``) are tuned for the
  bounded TPR-FPR problem (13) of [1]. The OOD examples of Trn1 / Trn2 are unused.
* **Tst** (ID and OOD): every reported number.

The staged classifier and SELE files (:mod:`rejectopt.pipeline.experiments.paper`) are not reused: they
see *all* classes, whereas here the held-out classes must stay unseen, so the classifier has
``K - ceil(f K)`` outputs and its predictions, baseline score and losses (hence SELE) differ.
The job trains its own on the same splits and grids. Seeds:
``derive_seed(seed, dataset, "ood", split, classifier)`` (and ``..., "sele")`` for SELE), so a
split's results depend on that split alone.

Methods (baseline ``b``: ``mcp`` for LR / XGBoost, ``margin`` for SVM): single ``b``, ``sele``,
``knn``, ``mahalanobis``; double ``b+knn``, ``sele+knn``, ``sele+mahalanobis``.

Metrics on Tst (losses ``100 [y != h(x)]``, :data:`rejectopt.pipeline.experiments.LOSS_SCALE`, so R^S is
a percentage). R^S is [1]'s: the best deterministic Tst threshold of the method's score (double:
of ``s_r + mu s_g``, ``mu`` tuned on Val for that bound).

* ``risk_seed``: R^S at TPR >= ``tpr_min`` and FPR <= "the highest FPR attained by all compared
  methods" (Sec. 4 of [1]): the largest over the methods of their smallest Tst FPR at that TPR,
  so every method is feasible. Doubles tune ``mu`` at the same bound computed on Val from the
  four singles (``fpr_bound_val``; always feasible, each single being a double).
* ``risk_fixed``: R^S at TPR >= ``tpr_min``, FPR <= ``fpr_max``; NaN ("unable") when no Tst
  threshold meets both, or a double's Val tuning was infeasible.
* ``feasible_val_*`` / ``feasible_tst_*``: whether the rule fitted on Val (threshold, ``tau`` of
  eq. 9, a double's ``mu``) meets its bounds on Val / Tst (expected rates over ``tau``,
  :func:`rejectopt.ood.empirical_rates`); ``deployed_*``: its Tst R^S, TPR and FPR.
* ``auroc`` (ID positive), ``oscr`` (CCR = 1 - R^S on the 0/1 loss, the seed's convention,
  :func:`rejectopt.ood.oscr`) of the ``risk_seed`` score; ``fpr_at_tpr``: smallest Tst FPR at
  TPR >= ``tpr_min``.

Ranks (:func:`ood_statistics`): per dataset on the mean over splits (unable on any split: worst);
average ranks, Friedman, Nemenyi's CD by :mod:`rejectopt.stats`.

Contract (:mod:`rejectopt.pipeline.experiments`): :data:`NAME`, :func:`settings`, :func:`run_split`,
:func:`aggregate`. Rule ``ood_split`` runs :func:`run_dataset_files`, ``ood_table``
:func:`table_file`; rendering is :mod:`rejectopt.pipeline.report.ood`'s.

References
----------
.. [1] V. Franc, D. Prusa, J. Paplham. "Reject option models comprising out-of-distribution
   detection." arXiv:2307.05199.
.. [2] V. Franc, D. Prusa, V. Voracek. Optimal Strategies for Reject Option Classifiers.
   JMLR 24(11):1-49, 2023.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from sklearn.preprocessing import (
    StandardScaler,
)  # rejectopt.ood's feature scores load scikit-learn already

from ..._checks import derive_seed
from ...classifiers import get_classifier
from ...datasets import get_spec
from ...ood import (
    KNNDistanceOOD,
    MahalanobisOOD,
    auroc,
    empirical_rates,
    fit_bounded_tpr_fpr,
    fit_double_score_tpr_fpr,
    oscr,
    risk_coverage_curve_at_fpr,
    roc_curve,
    selective_risk_at_tpr_fpr,
)
from ...ood._metrics import operating_points
from ...selective import InfeasibleTargetError
from ...stats import average_ranks, friedman_test, nemenyi_cd, rank_methods, significant_pairs
from . import _contract as contract
from ._contract import LOSS_SCALE, SplitInputs, SplitResult, rule_config
from ._learners import fit_classifier_then_score

__all__ = [
    "NAME",
    "DEFAULTS",
    "RANK_METRICS",
    "SPLIT_COLUMNS",
    "OODPartition",
    "OODScores",
    "OODSplitResult",
    "OODStatistics",
    "settings",
    "covered_datasets",
    "held_out_classes",
    "ood_partition",
    "min_fpr_at_tpr",
    "evaluate_ood_methods",
    "run_split",
    "run_dataset_files",
    "ood_table",
    "ood_statistics",
    "aggregate",
    "table_file",
]

log = logging.getLogger(__name__)

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
    if not 0.0 < float(out["held_out_fraction"]) < 1.0:
        raise ValueError(
            f"config ood.held_out_fraction must lie in (0, 1), got {out['held_out_fraction']!r}"
        )
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
    y = np.asarray(y)
    if y.ndim != 1 or y.size == 0 or not np.issubdtype(y.dtype, np.integer) or y.min() < 0:
        raise ValueError("y must be a non-empty 1-D array of integer labels 0..K-1")
    fraction = float(fraction)
    if not 0.0 < fraction < 1.0:
        raise ValueError(f"fraction must lie in (0, 1), got {fraction!r}")
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


def min_fpr_at_tpr(is_ood: Any, uncertainty: Any, tpr_min: float) -> float:
    """Smallest FPR of a deterministic threshold with TPR >= ``tpr_min`` (FPR@TPR); the seed-style
    bound is the largest of these over the methods.

    Parameters
    ----------
    is_ood : array-like of bool
        The OOD indicators (the positives are the ID examples).
    uncertainty : array-like of float
        The score; larger = reject first.
    tpr_min : float
        The smallest TPR (accepted ID fraction) allowed.

    Returns
    -------
    float
        FPR: the accepted OOD fraction.
    """
    is_ood = np.asarray(is_ood, dtype=bool)
    pts = operating_points(np.zeros(is_ood.shape), is_ood, uncertainty)
    ok = pts.tpr >= tpr_min - 1e-12
    return float(pts.fpr[ok].min())


# --------------------------------------------------------------------------------------------
# Evaluating the methods of one split
# --------------------------------------------------------------------------------------------
@dataclass
class _Method:
    name: str
    kind: str
    tst_score: dict = field(default_factory=dict)  # bound -> Tst uncertainty (None: not tuned)
    accept_tst: dict = field(default_factory=dict)  # bound -> acceptance probability on Tst
    accept_val: dict = field(default_factory=dict)
    mu: dict = field(default_factory=dict)


def _rates_ok(rates: dict, tpr_min: float, fpr_max: float) -> bool:
    return bool(rates["tpr"] >= tpr_min - _FEASIBLE_TOL and rates["fpr"] <= fpr_max + _FEASIBLE_TOL)


def evaluate_ood_methods(
    val: tuple[np.ndarray, np.ndarray],
    tst: tuple[np.ndarray, np.ndarray],
    singles: dict[str, tuple[np.ndarray, np.ndarray]],
    doubles: Sequence[tuple[str, str]],
    *,
    tpr_min: float = 0.8,
    fpr_max: float = 0.2,
    angles: int = 181,
    loss_scale: float = LOSS_SCALE,
) -> tuple[list[dict], dict[str, np.ndarray]]:
    """Tune every method on Val and evaluate it on Tst (the metrics of the module notes).

    Parameters
    ----------
    val, tst : (loss, is_ood)
        Losses (``loss_scale`` for an error, 0 otherwise; ignored for OOD) and OOD indicators.
    singles : dict
        Method name -> (Val uncertainty, Tst uncertainty); larger = reject first.
    doubles : sequence of (s_r, s_g)
        Pairs of names of ``singles`` combined as ``s_r + mu s_g``; the method is ``"r+g"``.
    tpr_min, fpr_max : float
        Target TPR and the fixed FPR bound.
    angles : int
        Angle grid of :func:`rejectopt.ood.fit_double_score_tpr_fpr` over ``[0, pi/2]``.
    loss_scale : float
        The loss of an error; OSCR uses ``loss / loss_scale``.

    Returns
    -------
    rows : list of dict
        One per method (singles first), the metric columns of :data:`SPLIT_COLUMNS`.
    curves : dict
        ``{method}__roc_fpr``, ``__roc_tpr`` (ROC of the ``risk_seed`` score),
        ``__rc_seed_cov``, ``__rc_seed_risk`` (RC curve at the Tst seed-style bound),
        ``__rc_fixed_cov``, ``__rc_fixed_risk`` (at ``fpr_max``), and ``fpr_bound_tst``.
    """
    loss_v, ood_v = np.asarray(val[0], float), np.asarray(val[1], bool)
    loss_t, ood_t = np.asarray(tst[0], float), np.asarray(tst[1], bool)
    bound_val = max(min_fpr_at_tpr(ood_v, u_v, tpr_min) for u_v, _ in singles.values())
    bounds = {"seed": bound_val, "fixed": float(fpr_max)}

    methods: list[_Method] = []
    for name, (u_v, u_t) in singles.items():
        m = _Method(name, "single")
        for which, bound in bounds.items():
            m.tst_score[which] = np.asarray(u_t, float)
            try:
                rule = fit_bounded_tpr_fpr(loss_v, ood_v, u_v, tpr_min, bound)
            except InfeasibleTargetError:
                continue
            m.accept_val[which] = rule.acceptance_probability(u_v)
            m.accept_tst[which] = rule.acceptance_probability(u_t)
        methods.append(m)
    for r, g in doubles:
        m = _Method(f"{r}+{g}", "double")
        (r_v, r_t), (g_v, g_t) = singles[r], singles[g]
        for which, bound in bounds.items():
            try:
                sel = fit_double_score_tpr_fpr(
                    loss_v, ood_v, r_v, g_v, tpr_min, bound, angles=int(angles)
                )
            except InfeasibleTargetError:
                m.tst_score[which] = None
                continue
            m.tst_score[which] = sel.score(r_t, g_t)
            m.accept_val[which] = sel.acceptance_probability(r_v, g_v)
            m.accept_tst[which] = sel.acceptance_probability(r_t, g_t)
            m.mu[which] = sel.mu
        methods.append(m)

    bound_tst = max(
        min_fpr_at_tpr(ood_t, m.tst_score["seed"], tpr_min)
        for m in methods
        if m.tst_score["seed"] is not None
    )
    targets = {"seed": bound_tst, "fixed": float(fpr_max)}
    nan = float("nan")
    rows, curves = [], {"fpr_bound_tst": np.float64(bound_tst)}
    for m in methods:
        row: dict[str, Any] = {
            "method": m.name,
            "kind": m.kind,
            "fpr_bound_val": bound_val,
            "fpr_bound_tst": bound_tst,
        }
        for which in ("seed", "fixed"):
            u = m.tst_score[which]
            row[f"risk_{which}"] = (
                nan
                if u is None
                else selective_risk_at_tpr_fpr(loss_t, ood_t, u, tpr_min, targets[which])
            )
            fitted = which in m.accept_val
            row[f"feasible_val_{which}"] = fitted and _rates_ok(
                empirical_rates(loss_v, ood_v, m.accept_val[which]), tpr_min, bounds[which]
            )
            rates = empirical_rates(loss_t, ood_t, m.accept_tst[which]) if fitted else {}
            row[f"feasible_tst_{which}"] = fitted and _rates_ok(rates, tpr_min, bounds[which])
            for key in ("selective_risk", "tpr", "fpr"):
                short = "risk" if key == "selective_risk" else key
                row[f"deployed_{short}_{which}"] = rates.get(key, nan)
            row[f"mu_{which}"] = m.mu.get(which, nan)
            if u is not None:
                cov, risk, _ = risk_coverage_curve_at_fpr(loss_t, ood_t, u, targets[which])
                curves[f"{m.name}__rc_{which}_cov"], curves[f"{m.name}__rc_{which}_risk"] = (
                    cov,
                    risk,
                )
        u = m.tst_score["seed"]
        row["fpr_at_tpr"] = min_fpr_at_tpr(ood_t, u, tpr_min)
        row["auroc"] = auroc(ood_t, u)
        row["oscr"] = oscr(loss_t / loss_scale, ood_t, u)
        fpr, tpr, _ = roc_curve(ood_t, u)
        curves[f"{m.name}__roc_fpr"], curves[f"{m.name}__roc_tpr"] = fpr, tpr
        rows.append(row)
    return rows, curves


@dataclass
class OODScores:
    """What one classifier's methods are tuned and evaluated on (Val and Tst of one split).

    Parameters
    ----------
    loss_val, is_ood_val, loss_tst, is_ood_tst : ndarray
        Losses ``100 [y != h(x)]`` (NaN for OOD examples) and OOD indicators.
    singles : dict
        Method -> (Val uncertainty, Tst uncertainty).
    doubles : list of (s_r, s_g)
        The pairs of ``singles`` combined as double scores.
    C_classifier, C_sele : float
        The chosen regularisation constants.
    """

    loss_val: np.ndarray
    is_ood_val: np.ndarray
    loss_tst: np.ndarray
    is_ood_tst: np.ndarray
    singles: dict
    doubles: list
    C_classifier: float
    C_sele: float


@dataclass
class OODSplitResult(SplitResult):
    """Output of :func:`run_split`: the contract's rows (:data:`SPLIT_COLUMNS`) and Tst curves.

    Parameters
    ----------
    rows : pandas.DataFrame
        One row per (classifier, method), :data:`SPLIT_COLUMNS`.
    curves : dict of str to numpy.ndarray
        ``{classifier}__{method}__{curve}`` (:func:`evaluate_ood_methods`),
        ``{classifier}__fpr_bound_tst``, ``{classifier}__methods``, ``classifiers``, ``tpr_min``,
        ``fpr_max``.
    scores : dict of str to OODScores
        By classifier; not written to files, so a test can recompute a number from the very scores.
    """

    scores: dict = field(default_factory=dict)


# --------------------------------------------------------------------------------------------
# One split
# --------------------------------------------------------------------------------------------
def run_split(inputs: SplitInputs, settings: dict, *, threads: int = 1) -> OODSplitResult:
    """The OOD benchmark on one split: hold out classes, train, score, tune on Val, test on Tst.

    Parameters
    ----------
    inputs : rejectopt.pipeline.experiments.SplitInputs
        The prepared dataset (labels ``0..K-1``), its split and the run's seed (the classifier's
        and SELE's seeds derive from it, module notes).
    settings : dict
        :func:`settings`.
    threads : int, default 1
        The classifier's ``n_jobs`` (XGBoost): a resource of the job, not a setting.

    Returns
    -------
    OODSplitResult
        The rows (:data:`SPLIT_COLUMNS`), the Tst curves and the scores.
    """
    dataset, split, seed = inputs.dataset, int(inputs.split), int(inputs.seed)
    classifiers = settings["classifiers"]
    tpr_min, fpr_max = settings["tpr_min"], settings["fpr_max"]
    X = np.asarray(inputs.X, dtype=float)
    y = np.asarray(inputs.y)
    part = ood_partition(y, inputs.parts, settings["held_out_fraction"])
    counts = part.counts()
    k_id = part.n_classes_id
    val, tst, is_ood = part.val, part.tst, part.is_ood
    id_parts = {"trn1": part.trn1, "val1": part.val1, "trn2": part.trn2, "val2": part.val2}
    start = time.perf_counter()

    scaler = StandardScaler().fit(X[part.trn1])
    z_trn1, z_val, z_tst = (scaler.transform(X[i]) for i in (part.trn1, val, tst))
    knn = KNNDistanceOOD(n_neighbors=int(settings["knn_neighbors"])).fit(z_trn1)
    maha = MahalanobisOOD().fit(z_trn1, y[part.trn1])
    ood_scores = {
        "knn": (knn.predict(z_val), knn.predict(z_tst)),
        "mahalanobis": (maha.predict(z_val), maha.predict(z_tst)),
    }
    log.info(
        "%s split %d: OOD scores fitted on %d Trn1 examples in %.1f s",
        dataset,
        split,
        part.trn1.size,
        time.perf_counter() - start,
    )

    frames, curves = (
        [],
        {
            "classifiers": np.asarray(list(classifiers)),
            "tpr_min": np.float64(tpr_min),
            "fpr_max": np.float64(fpr_max),
        },
    )
    scores: dict[str, OODScores] = {}
    for kind in classifiers:
        info = get_classifier(kind)
        if info.task != "classification":
            raise ValueError(
                f"the OOD benchmark needs a classification classifier, {kind!r} is {info.task}"
            )
        # predicted where SELE learns and is selected (Trn2, Val2) and where the rules are tuned and
        # scored (Val, Tst); Val2 is part of Val
        needed = np.unique(np.concatenate([part.trn2, val, tst]))
        fitted = fit_classifier_then_score(
            kind,
            X,
            y,
            id_parts,
            needed,
            n_classes=k_id,
            C_classifier=settings["C_classifier"],
            C_score=settings["C_score"],
            classifier_seed=derive_seed(seed, dataset, "ood", split, kind),
            score_seed=derive_seed(seed, dataset, "ood", split, kind, "sele"),
            score="sele",
            chunk_size=settings["sele_chunk_size"],
            threads=threads,
            ignore=is_ood,
        )
        loss, y_pred, sele = fitted.loss, fitted.y_pred, fitted.score
        singles = {
            info.baseline: (fitted.baseline[val], fitted.baseline[tst]),
            "sele": (sele.predict(X[val], y_pred[val]), sele.predict(X[tst], y_pred[tst])),
            **ood_scores,
        }
        doubles = [(info.baseline, "knn"), ("sele", "knn"), ("sele", "mahalanobis")]
        scores[kind] = OODScores(
            loss[val],
            is_ood[val],
            loss[tst],
            is_ood[tst],
            singles,
            doubles,
            fitted.C,
            fitted.C_score,
        )
        rows, split_curves = evaluate_ood_methods(
            (loss[val], is_ood[val]),
            (loss[tst], is_ood[tst]),
            singles,
            doubles,
            tpr_min=tpr_min,
            fpr_max=fpr_max,
            angles=settings["angles"],
        )
        id_tst = tst[~is_ood[tst]]
        frame = pd.DataFrame(rows)
        frame = frame.assign(
            dataset=dataset,
            split=split,
            classifier=kind,
            held_out=" ".join(map(str, part.held_out)),
            n_classes=int(y.max()) + 1,
            **counts,
            C_classifier=fitted.C,
            C_sele=fitted.C_score,
            id_error=float(np.mean(loss[id_tst])),
            tpr_min=float(tpr_min),
            fpr_max=float(fpr_max),
        )
        frames.append(frame[SPLIT_COLUMNS])
        curves.update({f"{kind}__{key}": value for key, value in split_curves.items()})
        curves[f"{kind}__methods"] = np.asarray(list(frame["method"]))
        log.info(
            "%s %s split %d: C=%g, SELE C=%g, FPR bound Val %.3f / Tst %.3f, R^S %s (%.1f s)",
            dataset,
            kind,
            split,
            fitted.C,
            fitted.C_score,
            rows[0]["fpr_bound_val"],
            rows[0]["fpr_bound_tst"],
            {r["method"]: round(r["risk_seed"], 2) for r in rows},
            time.perf_counter() - start,
        )
    return OODSplitResult(pd.concat(frames, ignore_index=True), curves, scores)


def run_dataset_files(
    data_path,
    splits_path,
    split_files: Mapping[int, tuple],
    *,
    dataset: str,
    seed: int = 0,
    settings: dict | None = None,
    C_classifier=None,
    C_score=None,
    sele_chunk_size=None,
    threads: int = 1,
) -> dict[int, OODSplitResult]:
    """File-in / file-out :func:`run_split` on every split of ``split_files`` of one dataset.

    The contract's :func:`~rejectopt.pipeline.experiments._contract.run_dataset_files` with this
    experiment's settings, built from the rule's params (the keywords).

    Parameters
    ----------
    data_path, splits_path : path-like
        The prepared data and its splits file.
    split_files : mapping of int to tuple
        ``split -> (csv_path, curves_path)``: the rows (CSV) and curves (NPZ) written.
    dataset : str
        The dataset's name.
    seed : int, default 0
        The run's master seed.
    settings : dict, optional
        The config block ``ood:`` (None: :data:`DEFAULTS`; ``datasets`` ignored).
    C_classifier, C_score : sequence of float, optional
        The config's C grids (None: the pipeline's defaults).
    sele_chunk_size : int, optional
        The config's SELE chunk size (None: the default).
    threads : int, default 1
        The classifier's ``n_jobs``.

    Returns
    -------
    dict of int to OODSplitResult
        By split.
    """
    config = rule_config(
        NAME, settings, C_classifier=C_classifier, C_score=C_score, sele_chunk_size=sele_chunk_size
    )
    chosen = _settings(config)
    return contract.run_dataset_files(
        NAME,
        lambda split_input: run_split(split_input, chosen, threads=threads),
        data_path,
        splits_path,
        split_files,
        dataset=dataset,
        seed=seed,
    )


# --------------------------------------------------------------------------------------------
# The table: mean +- std per (dataset, method), ranks, Friedman, Nemenyi
# --------------------------------------------------------------------------------------------
_MEAN_STD = ("risk_seed", "risk_fixed", "fpr_bound_tst", "fpr_at_tpr", "auroc", "oscr", "id_error")
_COUNTS = ("feasible_val_seed", "feasible_tst_seed", "feasible_val_fixed", "feasible_tst_fixed")


def ood_table(results: pd.DataFrame) -> pd.DataFrame:
    """Mean and std over the splits per (classifier, dataset, method) of the per-split rows.

    Parameters
    ----------
    results : pandas.DataFrame
        Every split's rows (:data:`SPLIT_COLUMNS`).

    Returns
    -------
    pandas.DataFrame
        One row per (classifier, dataset, method), first-appearance order: ``n_splits``,
        ``{metric}_mean`` / ``_std`` (R^S over the feasible splits, FPR bound, FPR@TPR, AUROC,
        OSCR, ID error), ``unable_seed`` / ``unable_fixed`` (splits with R^S undefined), the
        counts ``feasible_{val,tst}_{seed,fixed}``.

    Raises
    ------
    ValueError
        ``results`` lacks a column (named) or has no rows.
    """
    needed = ("classifier", "dataset", "method", "kind", "held_out", "split", *_MEAN_STD, *_COUNTS)
    missing = [c for c in needed if c not in results]
    if missing:
        raise ValueError(f"results lack the columns {missing}")
    if results.empty:
        raise ValueError("results has no rows")
    keys = ["classifier", "dataset", "method"]
    grouped = results.groupby(keys, sort=False)
    bounds = {c: (c, "first") for c in ("tpr_min", "fpr_max") if c in results}
    table = grouped.agg(
        kind=("kind", "first"),
        held_out=("held_out", "first"),
        **bounds,
        n_splits=("split", "nunique"),
        **{f"{c}_{s}": (c, s) for c in _MEAN_STD for s in ("mean", "std")},
        unable_seed=("risk_seed", lambda v: int(v.isna().sum())),
        unable_fixed=("risk_fixed", lambda v: int(v.isna().sum())),
        **{c: (c, lambda v: int(v.astype(bool).sum())) for c in _COUNTS},
    )
    return table.reset_index()


@dataclass(frozen=True)
class OODStatistics:
    """Ranks of one classifier's methods over the datasets (by one metric).

    Parameters
    ----------
    metric : str
        ``risk_seed``, ``risk_fixed`` (smaller is better), ``auroc`` or ``oscr`` (larger).
    ranks : DataFrame
        Datasets x methods, 1 = best, unable = worst (ties averaged).
    average_ranks : Series
        The methods' average ranks over the datasets.
    friedman_pvalue, iman_davenport_pvalue : float
        NaN with fewer than 2 datasets.
    cd_005, cd_010 : float
        Nemenyi critical differences at alpha 0.05 and 0.10 (NaN with fewer than 2 datasets).
    """

    metric: str
    ranks: pd.DataFrame
    average_ranks: pd.Series
    friedman_pvalue: float
    iman_davenport_pvalue: float
    cd_005: float
    cd_010: float

    @property
    def n_datasets(self) -> int:
        return int(self.ranks.shape[0])

    def significant_pairs(self, alpha: float = 0.05) -> list[tuple[str, str]]:
        """Pairs (better, worse) whose average ranks differ by more than the CD at ``alpha``
        (:func:`rejectopt.stats.significant_pairs`; none with fewer than 2 datasets)."""
        return significant_pairs(self.average_ranks, self.cd_005 if alpha == 0.05 else self.cd_010)


def _rankable(table: pd.DataFrame, classifier: str, metric: str) -> pd.DataFrame:
    """Datasets x methods matrix for :mod:`rejectopt.stats` (smaller = better, all finite)."""
    rows = table[table["classifier"] == classifier]
    methods = list(dict.fromkeys(rows["method"]))
    datasets = list(dict.fromkeys(rows["dataset"]))
    wide = rows.pivot(index="dataset", columns="method", values=f"{metric}_mean").loc[
        datasets, methods
    ]
    higher_is_better = metric in ("auroc", "oscr")
    values = -wide if higher_is_better else wide.copy()
    if metric.startswith("risk_"):
        unable = rows.pivot(index="dataset", columns="method", values=f"unable_{metric[5:]}").loc[
            datasets, methods
        ]
        values = values.mask(unable > 0)
    finite = values.to_numpy(dtype=float)
    worst = np.nanmax(finite) + 1.0 if np.isfinite(finite).any() else 1.0
    return values.astype(float).fillna(worst)


def ood_statistics(
    table: pd.DataFrame, classifier: str, metric: str = "risk_seed"
) -> OODStatistics:
    """Per-dataset ranks of the methods, average ranks, Friedman test, Nemenyi CD (Demsar 2006).

    Ranks are on the mean over the splits (unable on any split of a dataset: worst there, having
    no number), by :mod:`rejectopt.stats`.

    Parameters
    ----------
    table : pandas.DataFrame
        :func:`ood_table`.
    classifier : str
        Whose methods are ranked.
    metric : str, default "risk_seed"
        One of :data:`RANK_METRICS`.

    Returns
    -------
    OODStatistics
    """
    matrix = _rankable(table, classifier, metric)
    n, k = matrix.shape
    if n >= 2:
        result = friedman_test(matrix)
        p, p_id = float(result.pvalue), float(result.iman_davenport_pvalue)
        cd05, cd10 = nemenyi_cd(k, n, alpha=0.05), nemenyi_cd(k, n, alpha=0.10)
    else:
        p = p_id = cd05 = cd10 = float("nan")
    return OODStatistics(metric, rank_methods(matrix), average_ranks(matrix), p, p_id, cd05, cd10)


def aggregate(rows: pd.DataFrame, settings: dict | None = None) -> dict[str, pd.DataFrame]:
    """Every split's rows to the experiment's tables, as numbers.

    Parameters
    ----------
    rows : pandas.DataFrame
        Every split's rows of every dataset.
    settings : dict, optional
        Unused: the rows hold every setting (the contract's signature).

    Returns
    -------
    dict of str to pandas.DataFrame
        ``ood`` (:func:`ood_table`); ``ranks``: average rank per (classifier, metric of
        :data:`RANK_METRICS`, method); ``rank_tests``: per (classifier, metric) the datasets'
        count, Friedman / Iman-Davenport p-values, Nemenyi's CD at 0.05 and 0.10.
    """
    table = ood_table(rows)
    ranks, tests = [], []
    for classifier in dict.fromkeys(table["classifier"]):
        for metric in RANK_METRICS:
            s = ood_statistics(table, classifier, metric)
            ranks += [
                {"classifier": classifier, "metric": metric, "method": m, "average_rank": float(r)}
                for m, r in s.average_ranks.items()
            ]
            tests.append(
                {
                    "classifier": classifier,
                    "metric": metric,
                    "n_datasets": s.n_datasets,
                    "friedman_pvalue": s.friedman_pvalue,
                    "iman_davenport_pvalue": s.iman_davenport_pvalue,
                    "nemenyi_cd_005": s.cd_005,
                    "nemenyi_cd_010": s.cd_010,
                }
            )
    return {
        "ood": table,
        "ranks": pd.DataFrame(ranks).set_index(["classifier", "metric", "method"]),
        "rank_tests": pd.DataFrame(tests).set_index(["classifier", "metric"]),
    }


def table_file(csv_paths: Sequence, csv_out) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Every split's rows to :func:`ood_table`, written to ``csv_out`` (CSV, atomically): the
    contract's :func:`~rejectopt.pipeline.experiments._contract.table_file`.

    Parameters
    ----------
    csv_paths : sequence of path-like
        The splits' rows (:func:`run_dataset_files`).
    csv_out : path-like
        The table written.

    Returns
    -------
    rows : pandas.DataFrame
        The splits' rows, concatenated.
    table : pandas.DataFrame
        :func:`ood_table` of them.

    Raises
    ------
    rejectopt.exceptions.IntermediateFileError
        A split's CSV without its content record, or changed since it was written.
    """
    return contract.table_file(csv_paths, csv_out, ood_table)
