"""One split of the OOD experiment: every method on Val and Tst (:mod:`rejectopt.pipeline.experiments.ood`)."""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from sklearn.preprocessing import (
    StandardScaler,
)  # rejectopt.ood's feature scores load scikit-learn already
from threadpoolctl import threadpool_limits

from ...._checks import derive_seed
from ....classifiers import get_classifier
from ....ood import (
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
from ....ood._metrics import operating_points
from ....selective import InfeasibleTargetError
from .. import _contract as contract
from .._contract import LOSS_SCALE, SplitInputs, SplitResult, rule_config
from .._learners import fit_classifier_then_score
from .._rules import as_list
from ._setup import _FEASIBLE_TOL, NAME, SPLIT_COLUMNS, OODPartition, _settings, ood_partition

log = logging.getLogger(__package__)  # the package's logger, as before the split


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


def _fit_methods(
    loss_v: np.ndarray,
    ood_v: np.ndarray,
    singles: dict,
    doubles: Sequence[tuple[str, str]],
    bounds: dict,
    tpr_min: float,
    angles: int,
) -> list[_Method]:
    """Every method's rule fitted on Val at each FPR bound (a single's threshold, a double's
    ``mu``, ``lambda``, ``tau``), singles first; a bound a rule cannot meet is left out."""
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
    return methods


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
    methods = _fit_methods(loss_v, ood_v, singles, doubles, bounds, tpr_min, angles)

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
def _feature_scores(X: np.ndarray, y: np.ndarray, part: OODPartition, settings: dict) -> dict:
    """The kNN-distance and Mahalanobis OOD scores fitted on Trn1 (standardised): their Val and Tst
    uncertainties by name."""
    val, tst = part.val, part.tst
    scaler = StandardScaler().fit(X[part.trn1])
    z_trn1, z_val, z_tst = (scaler.transform(X[i]) for i in (part.trn1, val, tst))
    knn = KNNDistanceOOD(n_neighbors=int(settings["knn_neighbors"])).fit(z_trn1)
    maha = MahalanobisOOD().fit(z_trn1, y[part.trn1])
    return {
        "knn": (knn.predict(z_val), knn.predict(z_tst)),
        "mahalanobis": (maha.predict(z_val), maha.predict(z_tst)),
    }


def _classifier_scores(
    kind: str,
    X: np.ndarray,
    y: np.ndarray,
    part: OODPartition,
    settings: dict,
    seeds: tuple[int, int],
    threads: int,
    ood_scores: dict,
) -> tuple[OODScores, Any]:
    """One classifier on the ID classes of Trn1 and SELE on those of Trn2: the single and double
    scores its methods are tuned and evaluated on, and what was fitted."""
    val, tst, is_ood = part.val, part.tst, part.is_ood
    id_parts = {"trn1": part.trn1, "val1": part.val1, "trn2": part.trn2, "val2": part.val2}
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
        n_classes=part.n_classes_id,
        C_classifier=settings["C_classifier"],
        C_score=settings["C_score"],
        classifier_seed=seeds[0],
        score_seed=seeds[1],
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
    scores = OODScores(
        loss[val],
        is_ood[val],
        loss[tst],
        is_ood[tst],
        singles,
        doubles,
        fitted.C,
        fitted.C_score,
    )
    return scores, fitted


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
    val, tst, is_ood = part.val, part.tst, part.is_ood
    start = time.perf_counter()
    ood_scores = _feature_scores(X, y, part, settings)
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
        seeds = (
            derive_seed(seed, dataset, "ood", split, kind),
            derive_seed(seed, dataset, "ood", split, kind, "sele"),
        )
        scores[kind], fitted = _classifier_scores(
            kind, X, y, part, settings, seeds, threads, ood_scores
        )
        loss, singles, doubles = fitted.loss, scores[kind].singles, scores[kind].doubles
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


def run_rule(
    inputs: Mapping[str, Any],
    outputs: Mapping[str, Any],
    wildcards: Mapping[str, str],
    threads: int,
    params: Mapping[str, Any],
) -> dict[int, OODSplitResult]:
    """Rule ``ood_split``: :func:`run_dataset_files` on the job's files.

    The experiment's entry of :func:`rejectopt.pipeline.experiments._rules.run_rule`: the rule's
    params other than ``splits`` (the job's loop) are :func:`run_dataset_files`' keywords.

    Parameters
    ----------
    inputs, outputs, wildcards, params : mapping
        The job's named inputs, outputs, wildcards and params (Snakemake's, as dicts).
    threads : int
        The job's threads: BLAS is held to them, and they are the classifier's ``n_jobs``.

    Returns
    -------
    dict of int to OODSplitResult
        By split, as written.
    """
    keywords = dict(params)
    splits = [int(k) for k in keywords.pop("splits")]
    files = zip(as_list(outputs["csv"]), as_list(outputs["curves"]))
    with threadpool_limits(limits=threads):
        return run_dataset_files(
            inputs["data"],
            inputs["splits"],
            dict(zip(splits, files)),
            dataset=wildcards["dataset"],
            threads=threads,
            **keywords,
        )
