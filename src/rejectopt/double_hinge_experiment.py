"""SVM with a reject option (double hinge) against post-hoc rejection, on binary datasets (issue 15).

The experiment of Grandvalet et al. [1] on the JMLR pipeline's splits: for each rejection cost
``d`` (misclassification costs 1, ``0 < d < 1/2``) four selective classifiers are fitted on one
random split and scored on its Tst part by the cost risk ``(errors + d x rejections) / n``
(the empirical risk of Chow's cost-based model, Problem 1 of the JMLR paper), their coverage and
selective risk. Each split of the pipeline (``results/data/{dataset}/splits.npz``; for breast
cancer, :func:`breast_cancer_split` makes them with :func:`rejectopt.splits.make_splits`) is used
as follows:

* ``double_hinge`` -- :class:`~rejectopt.classifiers.DoubleHingeSVM` (linear kernel,
  ``reject_cost=d``) on the Trn1 features standardised by Trn1's statistics; ``C`` chosen per ``d``
  on Val1 by the cost risk (ties: the smaller ``C``); it rejects iff ``f- < f(x) < f+``.
* ``lr_sele`` -- LR on Trn1 with ``C`` by Val1 error (exactly as
  :func:`rejectopt.experiment.run_classifier`), SELE on Trn2 with ``C`` by Val2 AuRC (as
  :func:`rejectopt.experiment.run_score`), then the selection function
  :func:`rejectopt.selective.fit_cost_based` with ``reject_cost = 100 d`` (the losses are
  ``100 [y != h(x)]``) fitted on **Val2**, the part SELE's ``C`` was chosen on.
* ``svm_threshold`` -- the seed's naive baseline: the plain linear SVM
  (:class:`~rejectopt.classifiers.BinaryHingeSVM`, the pipeline's ``svm``) on Trn1, ``C`` by Val1
  error on the *same* grid and scaling as the double-hinge SVM, rejecting iff ``|f(x)|`` is below
  the threshold that minimises the cost risk on **Val2** (:func:`fit_margin_threshold`; the same
  part as ``lr_sele``'s selection function, so the two post-hoc rules see the same data).
* ``lr_chow`` -- LR's own posterior with Chow's rule: reject iff ``max_y p(y|x) < 1 - d``
  (:func:`chow_reject`); nothing is tuned.

Seeds are ``derive_seed(seed, dataset, "double_hinge", split, part)`` (``part`` = ``lr``,
``sele``, ``svm``); the linear solvers are deterministic, SELE's chunking is seeded.

C grids: LR uses the pipeline's ``C_classifier`` (loss weight ``C`` on the summed loss, as
everywhere in the pipeline); the two SVMs share ``double_hinge.C_grid`` read with
``double_hinge.c_scaling`` (``"mean"``: loss weight ``C / n_trn1`` on the summed loss, i.e.
``C`` per example; ``"sum"``: ``C``). With standardised features the summed reading of
{1, ..., 1000} is almost hard-margin on the larger datasets: on marketing every ``C`` of it gives
the same double-hinge model, while ``{1, 10, 100, 1000} / n_trn1`` spans under- to weakly
regularised (see :class:`~rejectopt.classifiers.DoubleHingeSVM`).

Outputs of one split (:func:`run_double_hinge_split`): one row per ``(d, method)`` with the
columns :data:`SPLIT_COLUMNS` (risks in the pipeline's loss units, i.e. percent) and the Tst RC
curves of LR + SELE and of the plain SVM's ``-|f|``. The table (:func:`double_hinge_table`,
:func:`render_double_hinge_table`) gives mean +- std over the splits per (dataset, d, method),
the average ranks of the methods by cost risk over the (dataset, d) cells
(:func:`cost_risk_ranks`) and paired Wilcoxon signed-rank tests of the double-hinge SVM against
each other method over splits x datasets, per ``d`` and over all ``d`` (:func:`wilcoxon_tests`).

References
----------
.. [1] Y. Grandvalet, A. Rakotomamonjy, J. Keshet, S. Canu. Support Vector Machines with a
   Reject Option. NIPS 21, 2008.
.. [2] V. Franc, D. Prusa, V. Voracek. Optimal Strategies for Reject Option Classifiers.
   JMLR 24(11):1-49, 2023.
"""

from __future__ import annotations

import logging
import time
import warnings
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np
import pandas as pd

__all__ = [
    "BREAST_CANCER",
    "DOUBLE_HINGE_DEFAULTS",
    "METHODS",
    "SPLIT_COLUMNS",
    "TIMING_COLUMNS",
    "DoubleHingeSplitResult",
    "double_hinge_settings",
    "double_hinge_datasets",
    "breast_cancer_split",
    "selective_outcome",
    "fit_double_hinge",
    "fit_margin_threshold",
    "chow_reject",
    "run_double_hinge_split",
    "double_hinge_split_files",
    "double_hinge_splits_files",
    "double_hinge_table",
    "cost_risk_ranks",
    "wilcoxon_tests",
    "render_double_hinge_table",
    "render_double_hinge_timing",
    "double_hinge_figure",
    "double_hinge_report_files",
    "method_label",
]

log = logging.getLogger(__name__)

#: The dataset loaded from scikit-learn (``sklearn.datasets.load_breast_cancer``), not the pipeline.
BREAST_CANCER = "breast_cancer"

#: Settings of the experiment (config block ``double_hinge:``); :func:`double_hinge_settings` fills the missing ones.
DOUBLE_HINGE_DEFAULTS = {
    "datasets": ["marketing", "phishing", "codrna", "ijcnn", BREAST_CANCER],
    "reject_costs": [0.05, 0.1, 0.2, 0.3, 0.45],
    "C_grid": [1, 10, 100, 1000],
    "c_scaling": "mean",
}

#: The compared methods, in table order (see the module notes).
METHODS = ("double_hinge", "lr_sele", "svm_threshold", "lr_chow")

_LABELS = {
    "double_hinge": "DH-SVM",
    "lr_sele": "LR + SELE",
    "svm_threshold": "SVM + |f| threshold",
    "lr_chow": "LR + Chow",
}

#: Losses are ``100 [y != h(x)]``: risks in percent, as the JMLR tables.
LOSS_SCALE = 100.0

#: Columns of ``results/double_hinge/{dataset}/split_{k}.csv`` (one row per reject cost and method).
SPLIT_COLUMNS = [
    "dataset", "split", "reject_cost", "method", "cost_risk", "coverage", "selective_risk", "error_full",
    "n_test", "n_rejected", "n_errors_accepted", "val_part", "val_cost_risk", "C", "C_score", "threshold",
    "n_iter", "rel_gap",
]

#: Columns of ``results/double_hinge/{dataset}/timing_split_{k}.csv``: the fit times, kept apart from
#: the results so that those are byte-identical from run to run (and between a local and a SLURM run).
TIMING_COLUMNS = ["dataset", "split", "reject_cost", "method", "fit_wall_s", "fit_cpu_s"]


def method_label(method: str) -> str:
    """Display label of a method of :data:`METHODS` (``double_hinge`` -> ``DH-SVM``)."""
    return _LABELS.get(method, method)


# --------------------------------------------------------------------------------------------
# Settings, datasets, breast cancer's splits
# --------------------------------------------------------------------------------------------
def double_hinge_settings(block: dict | None = None) -> dict:
    """The config block ``double_hinge:`` with :data:`DOUBLE_HINGE_DEFAULTS` for the missing keys.

    Raises
    ------
    ValueError
        On an unknown key, a reject cost outside ``(0, 1/2)``, a non-positive ``C`` or an unknown
        ``c_scaling``.
    """
    block = dict(block or {})
    unknown = sorted(set(block) - set(DOUBLE_HINGE_DEFAULTS))
    if unknown:
        raise ValueError(f"config double_hinge: unknown keys {unknown}; allowed: {sorted(DOUBLE_HINGE_DEFAULTS)}")
    out = {**DOUBLE_HINGE_DEFAULTS, **block}
    costs = [float(d) for d in out["reject_costs"]]
    if not costs or any(not 0.0 < d < 0.5 for d in costs) or len(set(costs)) != len(costs):
        raise ValueError(f"config double_hinge.reject_costs must be distinct numbers in (0, 1/2), got {out['reject_costs']!r}")
    grid = [float(c) for c in out["C_grid"]]
    if not grid or any(not (np.isfinite(c) and c > 0) for c in grid):
        raise ValueError(f"config double_hinge.C_grid must hold positive numbers, got {out['C_grid']!r}")
    if out["c_scaling"] not in ("mean", "sum"):
        raise ValueError(f"config double_hinge.c_scaling must be 'mean' or 'sum', got {out['c_scaling']!r}")
    out["reject_costs"], out["C_grid"] = sorted(costs), grid
    out["datasets"] = list(out["datasets"])
    return out


def double_hinge_datasets(settings: dict, run_datasets: Sequence[str], custom: Sequence[str] = ()) -> list[str]:
    """The datasets this run's experiment covers: those of ``settings["datasets"]`` the run covers, then breast cancer.

    A listed name must be :data:`BREAST_CANCER`, a registered binary dataset or a custom dataset
    (``custom``: checked for two classes when its job runs).

    Raises
    ------
    ValueError
        On an unknown name or a registered dataset that is not binary.
    """
    from .datasets import get_spec

    for name in settings["datasets"]:
        if name == BREAST_CANCER or name in custom:
            continue
        spec = get_spec(name)  # an unknown name fails here, listing the valid ones
        if spec.task != "classification" or spec.n_classes != 2:
            raise ValueError(
                f"config double_hinge.datasets: {name!r} is not a binary classification dataset "
                f"({spec.task}, {spec.n_classes} classes); the double-hinge SVM is binary"
            )
    chosen = [d for d in run_datasets if d in settings["datasets"]]
    return chosen + ([BREAST_CANCER] if BREAST_CANCER in settings["datasets"] else [])


def breast_cancer_split(split: int, ratios=None, seed: int = 0) -> tuple[np.ndarray, np.ndarray, dict]:
    """Wisconsin breast cancer (569 x 30, shipped with scikit-learn) and its split ``split``.

    The split is part ``split`` of ``make_splits(y, ratios, n_splits=split + 1, seed,
    dataset="breast_cancer")``: each split is seeded by ``(seed, "breast_cancer", split)`` alone,
    so it is the same whatever the number of splits of the run. Labels are scikit-learn's
    (0 = malignant, 1 = benign).

    Returns
    -------
    X : ndarray of shape (569, 30)
    y : ndarray of int64
    parts : dict
        Index arrays ``trn1, val1, trn2, val2, tst``.
    """
    from sklearn.datasets import load_breast_cancer

    from .splits import DEFAULT_RATIOS, PARTS, make_splits

    X, y = load_breast_cancer(return_X_y=True)
    ratios = DEFAULT_RATIOS if ratios is None else ratios
    arrays = make_splits(y, ratios, n_splits=int(split) + 1, seed=seed, dataset=BREAST_CANCER)
    return np.asarray(X, float), np.asarray(y, np.int64), {p: arrays[f"{p}_{int(split)}"] for p in PARTS}


# --------------------------------------------------------------------------------------------
# The methods' pieces
# --------------------------------------------------------------------------------------------
def selective_outcome(loss: Any, accepted: Any, reject_cost: float) -> dict:
    """Cost risk, coverage and selective risk of accepting ``accepted`` (bool) with losses ``loss``.

    ``loss`` is ``100 [y != h(x)]`` (percent units); ``reject_cost`` is ``d`` in ``[0, 1)``.
    ``cost_risk = (sum of accepted losses + 100 d #rejected) / n``; ``selective_risk`` is the mean
    loss on the accepted examples (NaN when none is accepted).
    """
    loss = np.asarray(loss, dtype=float)
    accepted = np.asarray(accepted, dtype=bool)
    if loss.shape != accepted.shape or loss.ndim != 1 or loss.size == 0:
        raise ValueError(f"loss and accepted must be 1-D of the same non-zero length, got {loss.shape}, {accepted.shape}")
    n, n_acc = loss.size, int(accepted.sum())
    n_rej = n - n_acc
    return {
        "cost_risk": (float(loss[accepted].sum()) + LOSS_SCALE * float(reject_cost) * n_rej) / n,
        "coverage": n_acc / n,
        "selective_risk": float(loss[accepted].mean()) if n_acc else float("nan"),
        "n_test": n,
        "n_rejected": n_rej,
        "n_errors_accepted": int(np.count_nonzero(loss[accepted])),
    }


def fit_double_hinge(Z_trn, y_trn, Z_val, y_val, reject_cost: float, C_grid: Sequence[float], *,
                     c_scaling: str = "mean") -> tuple[Any, float, dict]:
    """One linear :class:`~rejectopt.classifiers.DoubleHingeSVM` per ``C``; the best by Val cost risk.

    ``Z_*`` are standardised features, ``y_*`` binary labels. The loss weight is ``C / n_trn``
    (``c_scaling="mean"``) or ``C`` (``"sum"``); ties go to the smaller ``C``.

    Returns
    -------
    model : DoubleHingeSVM
    C : float
        The chosen grid value.
    info : dict
        ``val_cost_risk`` (C -> Val cost risk, percent), ``fit_wall_s`` / ``fit_cpu_s`` (summed over
        the grid), ``fits`` (C -> (wall s, cpu s, iterations, relative gap)).
    """
    from .classifiers import DoubleHingeSVM

    n = len(y_trn)
    y_val = np.asarray(y_val)
    best, risks, fits = None, {}, {}
    for C in sorted(float(c) for c in C_grid):
        weight = C / n if c_scaling == "mean" else C
        wall, cpu = time.perf_counter(), time.process_time()
        model = DoubleHingeSVM(reject_cost=reject_cost, C=weight).fit(Z_trn, y_trn)
        fits[C] = (time.perf_counter() - wall, time.process_time() - cpu, int(model.n_iter_), float(model.rel_gap_))
        loss = LOSS_SCALE * (model.predict(Z_val) != y_val)
        risks[C] = selective_outcome(loss, ~model.reject(Z_val), reject_cost)["cost_risk"]
        if best is None or risks[C] < best[2]:
            best = (model, C, risks[C])
    info = {"val_cost_risk": risks, "fits": fits, "fit_wall_s": sum(f[0] for f in fits.values()),
            "fit_cpu_s": sum(f[1] for f in fits.values())}
    return best[0], best[1], info


def fit_margin_threshold(decision: Any, loss: Any, reject_cost: float):
    """The naive baseline's rule: reject iff ``|f(x)|`` is small, the cut minimising the cost risk.

    :func:`rejectopt.selective.fit_cost_based` on the uncertainty ``-|f|`` (the SVM margin
    baseline) with ``reject_cost = 100 d``: among all cuts between consecutive distinct ``|f|``
    values of the sample (and "reject all") the one with the smallest empirical cost risk
    ``(sum of accepted losses + 100 d #rejected) / n``; ties go to the largest coverage.

    Parameters
    ----------
    decision : array_like, shape (n,)
        ``f(x)`` on the validation sample.
    loss : array_like, shape (n,)
        ``100 [y != sign f(x)]``.
    reject_cost : float
        ``d``.

    Returns
    -------
    SelectionFunction
        On the uncertainty ``-|f|``: ``selection.acceptance_probability(-np.abs(f)) == 1`` accepts.
        It accepts ``|f| >= -threshold`` (``accept_prob`` 1) or, rejecting all of the sample,
        ``|f| > -threshold`` (``accept_prob`` 0).
    """
    from .selective import fit_cost_based

    return fit_cost_based(loss, -np.abs(np.asarray(decision, float)), LOSS_SCALE * float(reject_cost))


def chow_reject(proba: Any, reject_cost: float) -> np.ndarray:
    """Chow's rule on posteriors: reject iff ``max_y p(y|x) < 1 - d`` (boolean, True = reject)."""
    proba = np.asarray(proba, dtype=float)
    if proba.ndim != 2:
        raise ValueError(f"proba must be 2-D (n, K), got shape {proba.shape}")
    return proba.max(axis=1) < 1.0 - float(reject_cost)


# --------------------------------------------------------------------------------------------
# One split
# --------------------------------------------------------------------------------------------
@dataclass
class DoubleHingeSplitResult:
    """Output of :func:`run_double_hinge_split`.

    Attributes
    ----------
    rows : DataFrame
        :data:`SPLIT_COLUMNS`, one row per (reject cost, method).
    timing : DataFrame
        :data:`TIMING_COLUMNS`, the same rows' fit times (wall and CPU seconds).
    curves : dict
        Tst RC curves (:func:`rejectopt.metrics.rc_curve`): ``lr_sele_cov``, ``lr_sele_risk`` (LR's
        loss ordered by SELE) and ``svm_cov``, ``svm_risk`` (the plain SVM's loss ordered by ``-|f|``).
    models : dict
        The fitted models (not written): ``lr``, ``sele``, ``svm``, ``scaler`` and
        ``double_hinge`` (reject cost -> DoubleHingeSVM).
    """

    rows: pd.DataFrame
    timing: pd.DataFrame
    curves: dict[str, np.ndarray]
    models: dict = field(default_factory=dict)


def _row(method: str, d: float, outcome: dict, **extra: Any) -> dict:
    nan = float("nan")
    row = {"method": method, "reject_cost": float(d), **outcome}
    for key in ("val_part", "val_cost_risk", "C", "C_score", "threshold", "fit_wall_s", "fit_cpu_s", "n_iter",
                "rel_gap", "error_full"):
        row[key] = extra.get(key, "none" if key == "val_part" else nan)
    return row


def run_double_hinge_split(
    X: Any,
    y: Any,
    parts: dict,
    *,
    dataset: str = "",
    split: int = 0,
    reject_costs: Sequence[float] = (0.05, 0.1, 0.2, 0.3, 0.45),
    C_grid: Sequence[float] = (1, 10, 100, 1000),
    c_scaling: str = "mean",
    C_classifier: Sequence[float] = (1, 10, 100, 1000),
    C_score: Sequence[float] = (0, 1, 10, 100, 1000),
    sele_chunk_size: int = 500,
    seed: int = 0,
) -> DoubleHingeSplitResult:
    """The four methods of the module notes on one split, for every reject cost; scored on Tst.

    Parameters
    ----------
    X, y : arrays of shape (n, p) and (n,)
        A binary dataset (any two labels).
    parts : dict
        Index arrays ``trn1, val1, trn2, val2, tst`` (:func:`rejectopt.splits.load_split`).
    dataset, split : str, int
        Names of the cell; with ``seed`` they derive the seeds.
    reject_costs : sequence of float
        The costs ``d`` in ``(0, 1/2)``.
    C_grid, c_scaling
        The two SVMs' grid and its reading (config ``double_hinge.C_grid`` / ``c_scaling``).
    C_classifier, C_score, sele_chunk_size
        The pipeline's LR and SELE grids and SELE's chunk size.

    Returns
    -------
    DoubleHingeSplitResult
    """
    from sklearn.preprocessing import StandardScaler

    from .classifiers import classifier_outputs, train_classifier
    from .metrics import rc_curve
    from .scores import get_score, select_C
    from .selective import fit_cost_based
    from .splits import derive_seed

    X = np.asarray(X, dtype=float)
    classes, y = np.unique(np.asarray(y), return_inverse=True)
    if classes.size != 2:
        raise ValueError(f"{dataset or 'the dataset'}: the double-hinge experiment needs a binary dataset, "
                         f"found {classes.size} classes")
    y = y.astype(np.int64)
    trn1, val1, trn2, val2, tst = (np.asarray(parts[p], dtype=np.int64) for p in ("trn1", "val1", "trn2", "val2", "tst"))
    seeds = {part: derive_seed(seed, dataset, "double_hinge", split, part) for part in ("lr", "sele", "svm")}
    rows: list[dict] = []
    start = time.perf_counter()

    # LR on Trn1 (C by Val1 error), SELE on Trn2 (C by Val2 AuRC): run_classifier / run_score
    wall, cpu = time.perf_counter(), time.process_time()
    lr, C_lr, _ = train_classifier("lr", X[trn1], y[trn1], X[val1], y[val1], C_grid=tuple(C_classifier),
                                   n_classes=2, random_state=seeds["lr"])
    lr_time = (time.perf_counter() - wall, time.process_time() - cpu)
    used = np.concatenate([trn2, val2, tst])
    out = classifier_outputs("lr", lr, X[used], n_classes=2)
    y_pred, proba = np.zeros(y.size, np.int64), np.zeros((y.size, 2))
    y_pred[used], proba[used] = out["y_pred"], out["proba"]
    loss = LOSS_SCALE * (y_pred != y)
    sele = get_score("sele")
    learner = sele.make(C_score[0], n_classes=2, chunk_size=sele_chunk_size, random_state=seeds["sele"])
    target = sele.target(loss, y, proba)
    wall, cpu = time.perf_counter(), time.process_time()
    score, _ = select_C(learner, X[trn2], y_pred[trn2], target[trn2], X[val2], y_pred[val2], loss[val2],
                        C_grid=tuple(C_score))
    sele_time = (time.perf_counter() - wall, time.process_time() - cpu)
    s_val2, s_tst = score.predict(X[val2], y_pred[val2]), score.predict(X[tst], y_pred[tst])
    lr_error = float(loss[tst].mean())

    # the plain SVM on Trn1 (C by Val1 error, the SVMs' grid), f on Val2 and Tst
    wall, cpu = time.perf_counter(), time.process_time()
    svm, C_svm, _ = train_classifier("svm", X[trn1], y[trn1], X[val1], y[val1], C_grid=tuple(C_grid), n_classes=2,
                                     random_state=seeds["svm"], c_scaling=c_scaling)
    svm_time = (time.perf_counter() - wall, time.process_time() - cpu)
    f_val2 = classifier_outputs("svm", svm, X[val2], n_classes=2)["decision"]
    f_tst = classifier_outputs("svm", svm, X[tst], n_classes=2)["decision"]
    svm_loss_val2 = LOSS_SCALE * ((f_val2 > 0).astype(np.int64) != y[val2])
    svm_loss_tst = LOSS_SCALE * ((f_tst > 0).astype(np.int64) != y[tst])

    scaler = StandardScaler().fit(X[trn1])
    Z_trn1, Z_val1, Z_tst = (scaler.transform(X[i]) for i in (trn1, val1, tst))
    dh_models = {}
    for d in reject_costs:
        d = float(d)
        model, C_dh, info = fit_double_hinge(Z_trn1, y[trn1], Z_val1, y[val1], d, C_grid, c_scaling=c_scaling)
        dh_models[d] = model
        dh_loss = LOSS_SCALE * (model.predict(Z_tst) != y[tst])
        rows.append(_row("double_hinge", d, selective_outcome(dh_loss, ~model.reject(Z_tst), d), val_part="val1",
                         val_cost_risk=info["val_cost_risk"][C_dh], C=C_dh, fit_wall_s=info["fit_wall_s"],
                         fit_cpu_s=info["fit_cpu_s"], n_iter=info["fits"][C_dh][2], rel_gap=info["fits"][C_dh][3],
                         error_full=float(dh_loss.mean()), threshold=model.f_plus_))

        sel = fit_cost_based(loss[val2], s_val2, LOSS_SCALE * d)
        val_acc = sel.acceptance_probability(s_val2) > 0.5
        rows.append(_row("lr_sele", d, selective_outcome(loss[tst], sel.acceptance_probability(s_tst) > 0.5, d),
                         val_part="val2", val_cost_risk=selective_outcome(loss[val2], val_acc, d)["cost_risk"],
                         C=C_lr, C_score=float(score.C), threshold=sel.threshold, error_full=lr_error,
                         fit_wall_s=lr_time[0] + sele_time[0], fit_cpu_s=lr_time[1] + sele_time[1]))

        sel = fit_margin_threshold(f_val2, svm_loss_val2, d)
        val_acc = sel.acceptance_probability(-np.abs(f_val2)) > 0.5
        rows.append(_row("svm_threshold", d,
                         selective_outcome(svm_loss_tst, sel.acceptance_probability(-np.abs(f_tst)) > 0.5, d),
                         val_part="val2", val_cost_risk=selective_outcome(svm_loss_val2, val_acc, d)["cost_risk"],
                         C=C_svm, threshold=-sel.threshold, error_full=float(svm_loss_tst.mean()),
                         fit_wall_s=svm_time[0], fit_cpu_s=svm_time[1], n_iter=int(svm[-1].n_iter_),
                         rel_gap=float(svm[-1].rel_gap_)))

        rows.append(_row("lr_chow", d, selective_outcome(loss[tst], ~chow_reject(proba[tst], d), d), C=C_lr,
                         threshold=1.0 - d, error_full=lr_error, fit_wall_s=lr_time[0], fit_cpu_s=lr_time[1]))
        log.info("%s split %d d=%g: cost risk %s; DH-SVM C=%g (Val1 %s)", dataset, split, d,
                 {r["method"]: round(r["cost_risk"], 3) for r in rows[-4:]}, C_dh,
                 {c: round(v, 3) for c, v in info["val_cost_risk"].items()})

    frame = pd.DataFrame(rows).assign(dataset=dataset, split=int(split))
    cov_s, risk_s = rc_curve(loss[tst], s_tst)
    cov_m, risk_m = rc_curve(svm_loss_tst, -np.abs(f_tst))
    curves = {"lr_sele_cov": cov_s, "lr_sele_risk": risk_s, "svm_cov": cov_m, "svm_risk": risk_m}
    log.info("%s split %d: LR C=%g (Tst error %.2f %%), SELE C=%g, SVM C=%g, %d reject costs in %.1f s", dataset,
             split, C_lr, lr_error, score.C, C_svm, len(reject_costs), time.perf_counter() - start)
    models = {"lr": lr, "sele": score, "svm": svm, "scaler": scaler, "double_hinge": dh_models}
    return DoubleHingeSplitResult(frame[SPLIT_COLUMNS], frame[TIMING_COLUMNS], curves, models)


def double_hinge_split_files(data_path, splits_path, split: int, csv_path, curves_path, timing_path, *,
                             dataset: str = "", settings: dict | None = None, split_ratios=None,
                             **kwargs: Any) -> DoubleHingeSplitResult:
    """File-in / file-out :func:`run_double_hinge_split` on one split: :func:`double_hinge_splits_files`
    with one entry."""
    return double_hinge_splits_files(data_path, splits_path, {split: (csv_path, curves_path, timing_path)},
                                     dataset=dataset, settings=settings, split_ratios=split_ratios,
                                     **kwargs)[split]


def double_hinge_splits_files(data_path, splits_path, split_files: dict, *, dataset: str = "",
                              settings: dict | None = None, split_ratios=None,
                              **kwargs: Any) -> dict[int, DoubleHingeSplitResult]:
    """File-in / file-out :func:`run_double_hinge_split` on every split of ``split_files``
    (``split -> (csv_path, curves_path, timing_path)``): the rows to ``csv_path``, the curves to
    ``curves_path`` (NPZ), the fit times to ``timing_path`` (the only output that varies between runs).

    ``data_path`` / ``splits_path`` are the pipeline's prepared data and splits, read once; for
    :data:`BREAST_CANCER` both are None and :func:`breast_cancer_split` builds each split with
    ``split_ratios`` and ``kwargs["seed"]``. Each split's files are written (atomically) as soon
    as it is done and depend only on that split's seeds. ``settings`` is the config block
    ``double_hinge:`` (``datasets`` is ignored); ``kwargs`` go to :func:`run_double_hinge_split`
    (``C_classifier``, ``C_score``, ``sele_chunk_size``, ``seed``).
    """
    from ._io import save_npz, write_csv

    s = double_hinge_settings(settings)
    if dataset != BREAST_CANCER:
        from .datasets import load_prepared
        from .splits import load_split

        X, y = load_prepared(data_path)
    results = {}
    for split, (csv_path, curves_path, timing_path) in sorted(split_files.items()):
        if dataset == BREAST_CANCER:
            X, y, parts = breast_cancer_split(split, split_ratios, seed=kwargs.get("seed", 0))
        else:
            parts = load_split(splits_path, split)
        result = run_double_hinge_split(X, y, parts, dataset=dataset, split=split,
                                        reject_costs=s["reject_costs"], C_grid=s["C_grid"],
                                        c_scaling=s["c_scaling"], **kwargs)
        write_csv(result.rows, csv_path)
        save_npz(curves_path, **result.curves)
        write_csv(result.timing, timing_path)
        results[split] = result
    return results


# --------------------------------------------------------------------------------------------
# The table: mean +- std, ranks by cost risk, Wilcoxon signed-rank tests
# --------------------------------------------------------------------------------------------
_MEAN_STD = ("cost_risk", "coverage", "selective_risk", "error_full")


def _ordered(results: pd.DataFrame) -> tuple[list[str], list[float], list[str]]:
    datasets = list(dict.fromkeys(results["dataset"]))
    costs = sorted(dict.fromkeys(results["reject_cost"].astype(float)))
    methods = [m for m in METHODS if m in set(results["method"])] + sorted(set(results["method"]) - set(METHODS))
    return datasets, costs, methods


def double_hinge_table(results: pd.DataFrame) -> pd.DataFrame:
    """Mean and std over the splits per (dataset, reject cost, method) of the per-split rows.

    Returns
    -------
    DataFrame
        ``dataset, reject_cost, method, n_splits``, ``{metric}_mean`` / ``{metric}_std`` for
        cost risk, coverage, selective risk (over the splits where something is accepted) and the
        full-coverage error, ``n_empty`` (splits accepting nothing) and ``C`` (the chosen grid
        values, space-separated per split).
    """
    needed = ("dataset", "split", "reject_cost", "method", *_MEAN_STD, "C")
    missing = [c for c in needed if c not in results]
    if missing:
        raise ValueError(f"results lack the columns {missing}")
    if results.empty:
        raise ValueError("results has no rows")
    datasets, costs, methods = _ordered(results)
    frame = results.sort_values("split", kind="stable")
    table = frame.groupby(["dataset", "reject_cost", "method"]).agg(
        n_splits=("split", "nunique"),
        **{f"{c}_{s}": (c, s) for c in _MEAN_STD for s in ("mean", "std")},
        n_empty=("coverage", lambda v: int((v == 0).sum())),
        C=("C", lambda v: " ".join(f"{c:g}" for c in v)),
    ).reset_index()
    order = table.assign(_d=table["dataset"].map(datasets.index), _m=table["method"].map(methods.index))
    return table.loc[order.sort_values(["_d", "reject_cost", "_m"]).index].reset_index(drop=True)


@dataclass(frozen=True)
class RankResult:
    """Ranks of the methods by mean cost risk over the (dataset, reject cost) cells.

    ``ranks``: cells x methods (1 = best, ties averaged); ``average_ranks``; Friedman's and
    Iman-Davenport's p-values and Nemenyi's CD at alpha 0.05 (NaN with fewer than 2 cells). The
    cells of one dataset share its splits, so the tests treat them as independent only nominally.
    """

    ranks: pd.DataFrame
    average_ranks: pd.Series
    friedman_pvalue: float
    iman_davenport_pvalue: float
    cd_005: float
    wins: pd.Series


def cost_risk_ranks(table: pd.DataFrame) -> RankResult:
    """Rank the methods per (dataset, d) cell by mean cost risk (:mod:`rejectopt.stats`)."""
    from .stats import average_ranks, friedman_test, nemenyi_cd, rank_methods

    datasets, costs, methods = _ordered(table)
    wide = table.pivot(index=["dataset", "reject_cost"], columns="method", values="cost_risk_mean")
    cells = [(d, c) for d in datasets for c in costs if (d, c) in wide.index]
    wide = wide.loc[cells, methods]
    wide.index = [f"{d}, d={c:g}" for d, c in cells]
    ranks = rank_methods(wide)
    if len(cells) >= 2:
        res = friedman_test(wide)
        p, p_id, cd = float(res.pvalue), float(res.iman_davenport_pvalue), nemenyi_cd(len(methods), len(cells))
    else:
        p = p_id = cd = float("nan")
    wins = (ranks == ranks.min(axis=1).to_numpy()[:, None]).sum(axis=0).rename("best_cells")
    return RankResult(ranks, average_ranks(wide), p, p_id, cd, wins)


def wilcoxon_tests(results: pd.DataFrame, reference: str = "double_hinge", metric: str = "cost_risk") -> pd.DataFrame:
    """Paired Wilcoxon signed-rank tests of ``reference`` against each other method.

    Pairs are the (dataset, split) cells of one reject cost (``reject_cost`` = that cost), or the
    (dataset, split, cost) cells of all costs (``reject_cost`` = ``"all"``); the test is
    :func:`scipy.stats.wilcoxon` (two-sided, zero differences dropped, ``method="auto"``) on the
    per-split ``metric``.

    Returns
    -------
    DataFrame
        ``reject_cost, method, n_pairs, n_nonzero, reference_better, reference_worse,
        median_difference`` (reference minus method), ``statistic``, ``pvalue`` (NaN without pairs;
        1 when every difference is zero).
    """
    from scipy.stats import wilcoxon

    _, costs, methods = _ordered(results)
    if reference not in methods:
        raise ValueError(f"results hold no rows of the reference method {reference!r}")
    groups = [(f"{c:g}", results[results["reject_cost"].astype(float) == c]) for c in costs] + [("all", results)]
    rows = []
    for label, frame in groups:
        wide = frame.pivot(index=["dataset", "split", "reject_cost"], columns="method", values=metric)
        for method in methods:
            if method == reference:
                continue
            pair = wide[[reference, method]].dropna()
            x, y = pair[reference].to_numpy(float), pair[method].to_numpy(float)
            diff = x - y
            stat = p = float("nan")
            if diff.size and not np.any(diff):
                stat, p = 0.0, 1.0  # no evidence either way (scipy: 1 for few pairs, NaN for many)
            elif diff.size:
                with warnings.catch_warnings():  # e.g. one non-zero difference: zero variance of the normal approximation
                    warnings.simplefilter("ignore", RuntimeWarning)
                    res = wilcoxon(x, y)
                stat, p = float(res.statistic), float(res.pvalue)
            rows.append({"reject_cost": label, "method": method, "n_pairs": int(diff.size),
                         "n_nonzero": int(np.count_nonzero(diff)), "reference_better": int((diff < 0).sum()),
                         "reference_worse": int((diff > 0).sum()),
                         "median_difference": float(np.median(diff)) if diff.size else float("nan"),
                         "statistic": stat, "pvalue": p})
    return pd.DataFrame(rows)


def _fmt(value: float, digits: int = 2) -> str:
    return "n/a" if value is None or not np.isfinite(value) else f"{value:.{digits}f}"


def _cell(mean: float, std: float, digits: int, pm: str, n: int) -> str:
    if not np.isfinite(mean):
        return "n/a"
    return f"{mean:.{digits}f}{pm}{std:.{digits}f}" if n > 1 and np.isfinite(std) else f"{mean:.{digits}f}"


def render_double_hinge_table(table: pd.DataFrame, results: pd.DataFrame, fmt: str = "md") -> str:
    """The experiment's report as Markdown (``fmt='md'``) or LaTeX (``fmt='tex'``).

    ``table`` is :func:`double_hinge_table` of the per-split ``results``. Sections: the cost risk
    per (dataset, d) and method (mean ± std over splits, best in bold), coverage and selective
    risk, average ranks by cost risk (:func:`cost_risk_ranks`), the Wilcoxon tests of the
    double-hinge SVM against each method (:func:`wilcoxon_tests`), the chosen ``C`` and the fit times.
    """
    if fmt not in ("md", "tex"):
        raise ValueError(f"fmt must be 'md' or 'tex', got {fmt!r}")
    md = fmt == "md"
    pm = " ± "  # cells are built as Markdown; esc() turns them into LaTeX

    def bold(s: str) -> str:
        return f"**{s}**"

    def esc(s: str) -> str:
        """A Markdown cell as LaTeX: special characters escaped, **bold** -> \\textbf{}."""
        strong = s.startswith("**") and s.endswith("**")
        s = s[2:-2] if strong else s
        s = (s.replace("_", "\\_").replace("%", "\\%").replace("|f|", "$|f|$").replace("R^S", "$R^S$")
             .replace("±", "$\\pm$"))
        return f"\\textbf{{{s}}}" if strong else s

    out: list[str] = []

    def pipe(cells: list[str]) -> str:
        """A Markdown table row; a literal | in a cell (|f|) is escaped."""
        return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"

    def emit(header: list[str], body: list[list[str]], title: str, notes: list[str]) -> None:
        if md:
            out.extend([f"### {title}", "", pipe(header), "|" + "---|" * len(header)])
            out.extend(pipe(r) for r in body)
            out.extend([""] + notes + [""])
        else:
            out.extend([f"% {title}", f"\\begin{{tabular}}{{l{'r' * (len(header) - 1)}}}", "\\hline",
                        " & ".join(esc(h) for h in header) + " \\\\", "\\hline"])
            out.extend(" & ".join(esc(c) for c in r) + " \\\\" for r in body)
            out.extend(["\\hline", "\\end{tabular}"] + [f"% {n}" for n in notes] + [""])

    datasets, costs, methods = _ordered(table)
    n_splits = int(table["n_splits"].max())
    idx = table.set_index(["dataset", "reject_cost", "method"])
    labels = [method_label(m) for m in methods]

    body = []
    for dataset in datasets:
        for i, c in enumerate(costs):
            if (dataset, c, methods[0]) not in idx.index:
                continue
            block = idx.loc[(dataset, c)].loc[methods]
            best = float(block["cost_risk_mean"].min())
            cells = [dataset if i == 0 else "", f"{c:g}", _fmt(100 * c, 1)]
            for _, r in block.iterrows():
                cell = _cell(r["cost_risk_mean"], r["cost_risk_std"], 2, pm, int(r["n_splits"]))
                cells.append(bold(cell) if np.isclose(r["cost_risk_mean"], best) else cell)
            body.append(cells)
    emit(["dataset", "d", "reject all"] + labels, body,
         f"Cost risk on Tst (%), {n_splits} split(s)",
         ["Cost risk = 100 (errors + d x rejections) / n on Tst (errors only on accepted examples), mean ± std over "
          "splits; best per row in bold. 'reject all' = 100 d. DH-SVM: double-hinge SVM, C by Val1 cost risk; "
          "LR + SELE: cost-based selection (reject cost 100 d) fitted on Val2; SVM + |f| threshold: the plain SVM, "
          "threshold minimising the Val2 cost risk; LR + Chow: reject iff max posterior < 1 - d."])

    body = []
    for dataset in datasets:
        for i, c in enumerate(costs):
            if (dataset, c, methods[0]) not in idx.index:
                continue
            block = idx.loc[(dataset, c)].loc[methods]
            cells = [dataset if i == 0 else "", f"{c:g}"]
            for _, r in block.iterrows():
                ns = int(r["n_splits"])
                risk = _cell(r["selective_risk_mean"], r["selective_risk_std"], 2, pm, ns - int(r["n_empty"]))
                if r["n_empty"]:
                    risk += f" ({int(r['n_empty'])}/{ns} empty)"
                cells.append(f"{_cell(r['coverage_mean'], r['coverage_std'], 3, pm, ns)} / {risk}")
            body.append(cells)
    emit(["dataset", "d"] + labels, body, "Coverage / selective risk R^S (%) on Tst",
         ["Coverage = share of Tst accepted; R^S = error (%) on the accepted examples, over the splits accepting "
          "something ('empty': splits rejecting every Tst example)."])

    ranks = cost_risk_ranks(table)
    body = [[method_label(m), _fmt(ranks.average_ranks[m]), str(int(ranks.wins[m]))] for m in methods]
    emit(["method", "average rank", "best in cells"], body,
         f"Average ranks by cost risk over {len(ranks.ranks)} (dataset, d) cells",
         ["Ranked per (dataset, d) cell on the mean cost risk over splits (1 = best, ties averaged); 'best in cells' "
          "counts ties for the best.",
          f"Friedman p = {_fmt(ranks.friedman_pvalue, 4)} (Iman-Davenport p = {_fmt(ranks.iman_davenport_pvalue, 4)}), "
          f"Nemenyi CD (alpha 0.05) = {_fmt(ranks.cd_005)}; the cells of a dataset share its splits, so these "
          "tests are indicative."])

    tests = wilcoxon_tests(results)
    others = [m for m in methods if m != "double_hinge"]
    body = []
    for label in [f"{c:g}" for c in costs] + ["all"]:
        rows = tests[tests["reject_cost"] == label].set_index("method")
        cells = [label, str(int(rows["n_pairs"].iloc[0]))]
        for m in others:
            r = rows.loc[m]
            cells.append(f"p = {_fmt(r['pvalue'], 4)} ({int(r['reference_better'])}/{int(r['reference_worse'])}, "
                         f"median {r['median_difference']:+.2f})")
        body.append(cells)
    emit(["d", "pairs"] + [f"DH-SVM vs {method_label(m)}" for m in others], body,
         "Paired Wilcoxon signed-rank tests of the DH-SVM's cost risk",
         ["scipy.stats.wilcoxon (two-sided, zero differences dropped) over the (dataset, split) pairs of each d and the "
          "(dataset, split, d) pairs of all d. In brackets: pairs where the DH-SVM is better / worse, and the median "
          "of DH-SVM minus the other method (percentage points; negative = DH-SVM better)."])

    body = []
    for dataset in datasets:
        dh = table[(table["dataset"] == dataset) & (table["method"] == "double_hinge")]
        chosen = "; ".join(f"{c:g}: {C}" for c, C in zip(dh["reject_cost"], dh["C"]))
        body.append([dataset, chosen, str(int(dh["n_splits"].max())) if len(dh) else "0"])
    emit(["dataset", "DH-SVM C per d (per split)", "splits"], body, "Model selection",
         ["The DH-SVM fits one model per C of the grid and per d on Trn1 (interior point method, certified duality "
          "gap) and keeps the C with the smallest Val1 cost risk; the solver times are in timing_double_hinge.md."])
    return "\n".join(out).rstrip() + "\n"


def render_double_hinge_timing(timing: pd.DataFrame) -> str:
    """Markdown table of the fit times (:data:`TIMING_COLUMNS` rows of every split) per dataset.

    DH-SVM: the fits of the whole grid for every ``d``, summed, mean over splits; plain SVM: its
    grid once per split (every ``d`` shares it), mean over splits. CPU time counts every thread.
    """
    missing = [c for c in TIMING_COLUMNS if c not in timing]
    if missing:
        raise ValueError(f"timing lacks the columns {missing}")
    out = ["### Solver time per split", "",
           "| dataset | DH-SVM fits CPU s | DH-SVM fits wall s | plain SVM CPU s | splits |", "|---|---|---|---|---|"]
    for dataset in dict.fromkeys(timing["dataset"]):
        rows = timing[timing["dataset"] == dataset]
        dh = rows[rows["method"] == "double_hinge"].groupby("split")[["fit_cpu_s", "fit_wall_s"]].sum()
        svm = rows[rows["method"] == "svm_threshold"].groupby("split")["fit_cpu_s"].first()
        out.append(f"| {dataset} | {_fmt(float(dh['fit_cpu_s'].mean()) if len(dh) else np.nan, 1)} | "
                   f"{_fmt(float(dh['fit_wall_s'].mean()) if len(dh) else np.nan, 1)} | "
                   f"{_fmt(float(svm.mean()) if len(svm) else np.nan, 1)} | {rows['split'].nunique()} |")
    out += ["", "The DH-SVM fits one model per C of the grid and per d; its times are summed over both, then "
            "averaged over the splits. The plain SVM fits its grid once per split. Wall-clock records: they vary "
            "from run to run, unlike every other output of the experiment."]
    return "\n".join(out) + "\n"


# --------------------------------------------------------------------------------------------
# Figure: the methods' (coverage, R^S) points on the LR + SELE RC curve
# --------------------------------------------------------------------------------------------
_GRID = np.linspace(0.0, 1.0, 401)


def _mean_curve(curves: list[dict], name: str) -> tuple[np.ndarray, np.ndarray]:
    """Mean over the splits of the RC curves interpolated on :data:`_GRID` (coverage >= every split's first point)."""
    low = max(float(c[f"{name}_cov"][0]) for c in curves)
    grid = _GRID[_GRID >= low]
    risks = [np.interp(grid, c[f"{name}_cov"], c[f"{name}_risk"]) for c in curves]
    return grid, np.mean(risks, axis=0)


def double_hinge_figure(curves: list[dict], rows: pd.DataFrame, dataset: str = ""):
    """Left: RC curves on Tst (LR + SELE, plain SVM by |f|; mean over splits) with every method's
    mean (coverage, R^S) point per d; right: mean cost risk against d with the reject-all line."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(11.0, 4.6), layout="constrained")
    ax, bx = fig.add_subplot(1, 2, 1), fig.add_subplot(1, 2, 2)
    cov, risk = _mean_curve(curves, "lr_sele")
    ax.plot(cov, risk, "-", color="C1", linewidth=1.4, label="LR + SELE RC curve")
    cov, risk = _mean_curve(curves, "svm")
    ax.plot(cov, risk, ":", color="C2", linewidth=1.2, label="SVM |f| RC curve")
    mean = rows.groupby(["method", "reject_cost"]).agg(coverage=("coverage", "mean"),
                                                       selective_risk=("selective_risk", "mean"),
                                                       cost_risk=("cost_risk", "mean")).reset_index()
    styles = {"double_hinge": ("o", "C0", 8), "lr_sele": ("x", "C1", 7), "svm_threshold": ("^", "C2", 6),
              "lr_chow": ("s", "C3", 5)}
    for method in [m for m in METHODS if m in set(mean["method"])]:
        pts = mean[mean["method"] == method]
        marker, color, size = styles[method]
        ax.plot(pts["coverage"], pts["selective_risk"], marker, color=color, markersize=size, linestyle="none",
                markerfacecolor=color if method == "double_hinge" else "none", label=method_label(method))
        if method == "double_hinge":
            for _, p in pts.iterrows():
                if np.isfinite(p["selective_risk"]):
                    ax.annotate(f"d={p['reject_cost']:g}", (p["coverage"], p["selective_risk"]), fontsize=7,
                                xytext=(4, 4), textcoords="offset points", color=color)
        bx.plot(pts["reject_cost"], pts["cost_risk"], marker + "-", color=color, markersize=size,
                markerfacecolor=color if method == "double_hinge" else "none", label=method_label(method))
    costs = np.sort(mean["reject_cost"].unique())
    bx.plot(costs, 100 * costs, "--", color="grey", linewidth=0.8, label="reject all (100 d)")
    bx.set_ylim(0, 1.25 * float(mean["cost_risk"].max()))
    # zoom on the coverages the methods reach (the RC curves are noisy at small coverage)
    low = max(0.0, float(np.nanmin(mean["coverage"])) - 0.1)
    shown = [float(np.nanmax(mean["selective_risk"])) if mean["selective_risk"].notna().any() else 0.0]
    for name in ("lr_sele", "svm"):
        c, r = _mean_curve(curves, name)
        shown.append(float(r[c >= low].max()) if np.any(c >= low) else 0.0)
    n = int(rows["split"].nunique())
    ax.set_xlim(low, 1.01)
    ax.set_ylim(0, 1.1 * max(shown) + 1e-9)
    ax.set_xlabel("coverage")
    ax.set_ylabel("selective risk $R^S$ [%]")
    ax.set_title(f"{dataset}: Tst, mean of {n} split(s); points: each method at each d", fontsize=9)
    ax.legend(fontsize=7)
    bx.set_xlabel("reject cost d")
    bx.set_ylabel("cost risk [%]")
    bx.set_title(f"{dataset}: cost risk (errors + d rejections) / n on Tst", fontsize=9)
    bx.legend(fontsize=7)
    return fig


def double_hinge_report_files(csv_paths: Sequence, curve_paths: Sequence, csv_out, md_out, tex_out,
                              figures: dict | None = None, timing_paths: Sequence = (),
                              timing_out=None) -> pd.DataFrame:
    """Per-split CSVs and curve NPZs -> the table (CSV, Markdown, LaTeX) and one figure per dataset;
    the per-split timing CSVs ``timing_paths`` -> :func:`render_double_hinge_timing` at ``timing_out``.

    ``figures`` maps a dataset to its PNG path; the curve files of a dataset are those of
    ``curve_paths`` under a folder named after it (``results/double_hinge/{dataset}/split_{k}.npz``).
    """
    from pathlib import Path

    from ._io import save_figure, write_csv, write_text

    results = pd.concat([pd.read_csv(p) for p in csv_paths], ignore_index=True)
    table = double_hinge_table(results)
    write_csv(table, csv_out)
    write_text(render_double_hinge_table(table, results, "md"), md_out)
    write_text(render_double_hinge_table(table, results, "tex"), tex_out)
    if timing_out is not None:
        timing = pd.concat([pd.read_csv(p) for p in timing_paths], ignore_index=True)
        write_text(render_double_hinge_timing(timing), timing_out)
    for dataset, png in (figures or {}).items():
        curves = []
        for path in curve_paths:
            if Path(path).parent.name == dataset:
                with np.load(path, allow_pickle=False) as data:
                    curves.append({k: data[k] for k in data.files})
        if not curves:
            raise ValueError(f"no curve file of dataset {dataset!r} among {list(map(str, curve_paths))}")
        save_figure(double_hinge_figure(curves, results[results["dataset"] == dataset], dataset), png)
    return table
