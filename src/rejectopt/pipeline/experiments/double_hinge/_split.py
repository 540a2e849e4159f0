"""One split of the double-hinge experiment (the package's): every method at every reject cost."""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

# The learners load on first use (the package's lazy attributes): the Snakefile imports this
# module to plan the run, and a table job does not need scikit-learn.
from .... import classifiers, scores
from ...._checks import SPLIT_PARTS, derive_seed
from ...._io import load_npz, save_csv
from ....metrics import rc_curve, task_loss
from ....metrics._confusion import selective_outcome
from ....scores import get_score
from ....selective import chow_reject, fit_cost_based, fit_margin_threshold
from .. import _contract as contract
from .._contract import LOSS_SCALE, SplitInputs, SplitResult, rule_config
from .._learners import ClassifierThenScore, fit_classifier_then_score
from .._rules import as_list
from ._setup import (
    BREAST_CANCER,
    METHODS,
    NAME,
    SPLIT_COLUMNS,
    STAGED_LR,
    TIMING_COLUMNS,
    _settings,
    breast_cancer_split,
)

log = logging.getLogger(__package__)  # the package's logger, as before the split


# --------------------------------------------------------------------------------------------
# One split
# --------------------------------------------------------------------------------------------
@dataclass
class DoubleHingeSplitResult(SplitResult):
    """Output of :func:`run_split`: the contract's rows and curves, the fit times and the models.

    Parameters
    ----------
    rows : DataFrame
        :data:`SPLIT_COLUMNS`, one row per (reject cost, method).
    curves : dict
        Tst RC curves (:func:`rejectopt.metrics.rc_curve`): ``lr_sele_cov``, ``lr_sele_risk`` (LR's
        loss ordered by SELE), ``svm_cov``, ``svm_risk`` (the plain SVM's ordered by ``-|f|``).
    timing : DataFrame
        :data:`TIMING_COLUMNS`: the rows' fit times (wall and CPU seconds).
    models : dict
        Fitted models (not written): ``lr``, ``sele``, ``svm``, ``scaler``, ``double_hinge``,
        ``double_hinge_rbf`` (reject cost -> DoubleHingeSVM).
    """

    timing: pd.DataFrame = None
    models: dict = field(default_factory=dict)


def _row(method: str, d: float, outcome: dict, **extra: Any) -> dict:
    nan = float("nan")
    row = {"method": method, "reject_cost": float(d), **outcome}
    for key in (
        "val_part",
        "val_cost_risk",
        "C",
        "C_score",
        "threshold",
        "fit_wall_s",
        "fit_cpu_s",
        "n_iter",
        "rel_gap",
        "error_full",
        "gamma",
    ):
        row[key] = extra.get(key, "none" if key == "val_part" else nan)
    return row


def _staged_lr_then_sele(
    path, X, y, parts: dict, settings: dict, score_seed: int
) -> ClassifierThenScore:
    """LR's outputs from its staged classifier file, then SELE learned on them as
    :func:`rejectopt.pipeline.experiments._learners.fit_classifier_then_score` learns it.

    The staged LR (:func:`rejectopt.pipeline.experiments.paper.run_classifiers`) has this experiment's split,
    grid and a deterministic solver, so equal predictions; its fit time is not this job's (NaN).

    Raises
    ------
    ValueError
        A staged file of another dataset size or ``C`` grid than this run's.
    """
    with load_npz(path) as staged:  # verified: unchanged since run_classifiers wrote it
        y_pred, baseline, proba = staged["y_pred"], staged["baseline"], staged["proba"]
        C, grid = float(staged["C"]), sorted(float(c) for c in staged["C_grid"])
    if y_pred.shape != y.shape or proba.shape != (y.size, 2):
        raise ValueError(
            f"{path}: staged LR outputs of shape {y_pred.shape} / {proba.shape}, "
            f"expected ({y.size},) / ({y.size}, 2)"
        )
    if grid != sorted(float(c) for c in settings["C_classifier"]):
        raise ValueError(
            f"{path}: staged LR chosen on the grid {grid}, this run's C_classifier is "
            f"{settings['C_classifier']}"
        )
    trn2, val2 = parts["trn2"], parts["val2"]
    loss = task_loss("classification", y, y_pred).astype(float)
    info = get_score("sele")
    learner = info.make(
        settings["C_score"][0],
        n_classes=2,
        chunk_size=settings["sele_chunk_size"],
        random_state=score_seed,
    )
    target = info.target(loss, y, proba)
    wall, cpu = time.perf_counter(), time.process_time()
    best, _ = scores.select_C(
        learner,
        X[trn2],
        y_pred[trn2],
        target[trn2],
        X[val2],
        y_pred[val2],
        loss[val2],
        C_grid=tuple(settings["C_score"]),
    )
    times = {
        "classifier": (float("nan"), float("nan")),
        "score": (time.perf_counter() - wall, time.process_time() - cpu),
    }
    return ClassifierThenScore(None, C, y_pred, baseline, proba, loss, best, float(best.C), times)


def _binary_split(inputs: SplitInputs, settings: dict) -> tuple[np.ndarray, np.ndarray, dict]:
    """The split's features, 0/1 labels and parts (breast cancer's built here); a dataset without
    exactly two classes is refused."""
    dataset, split, seed = inputs.dataset, int(inputs.split), int(inputs.seed)
    if dataset == BREAST_CANCER:
        X, y, parts = breast_cancer_split(split, settings["split_ratios"], seed=seed)
    else:
        X, y, parts = inputs.X, inputs.y, inputs.parts
    X = np.asarray(X, dtype=float)
    classes, y = np.unique(np.asarray(y), return_inverse=True)
    if classes.size != 2:
        raise ValueError(
            f"{dataset or 'the dataset'}: the double-hinge experiment needs a binary dataset, "
            f"found {classes.size} classes"
        )
    y = y.astype(np.int64)
    parts = {p: np.asarray(parts[p], dtype=np.int64) for p in SPLIT_PARTS}
    return X, y, parts


def _lr_and_sele(
    inputs: SplitInputs, X, y, parts: dict, settings: dict, seeds: dict
) -> ClassifierThenScore:
    """LR on Trn1 (C by Val1 error), SELE on Trn2 (C by Val2 AuRC), predicted on Trn2, Val2 and
    Tst; LR from the staged classifier file where the rule gives it."""
    if STAGED_LR in inputs.staged:
        lr = _staged_lr_then_sele(
            inputs.staged_file(STAGED_LR), X, y, parts, settings, seeds["sele"]
        )
        log.info(
            "%s split %d: LR's outputs read from %s",
            inputs.dataset,
            int(inputs.split),
            inputs.staged_file(STAGED_LR),
        )
        return lr
    used = np.concatenate([parts["trn2"], parts["val2"], parts["tst"]])
    return fit_classifier_then_score(
        "lr",
        X,
        y,
        parts,
        used,
        n_classes=2,
        C_classifier=settings["C_classifier"],
        C_score=settings["C_score"],
        classifier_seed=seeds["lr"],
        score_seed=seeds["sele"],
        chunk_size=settings["sele_chunk_size"],
    )


@dataclass
class _PlainSVM:
    """The plain SVM on Trn1 (C by Val1 error, the SVMs' grid): its decision values ``f`` on Val2
    and Tst, their 0/100 losses and its fit time (wall, CPU)."""

    model: Any
    C: float
    fit_time: tuple[float, float]
    f_val2: np.ndarray
    f_tst: np.ndarray
    loss_val2: np.ndarray
    loss_tst: np.ndarray


def _plain_svm(X, y, parts: dict, settings: dict, seed: int) -> _PlainSVM:
    trn1, val1, val2, tst = parts["trn1"], parts["val1"], parts["val2"], parts["tst"]
    wall, cpu = time.perf_counter(), time.process_time()
    svm, C_svm, _ = classifiers._training.train_classifier(
        "svm",
        X[trn1],
        y[trn1],
        X[val1],
        y[val1],
        C_grid=tuple(settings["C_grid"]),
        n_classes=2,
        random_state=seed,
        c_scaling=settings["c_scaling"],
    )
    fit_time = (time.perf_counter() - wall, time.process_time() - cpu)
    f_val2 = classifiers._training.classifier_outputs("svm", svm, X[val2], n_classes=2)["decision"]
    f_tst = classifiers._training.classifier_outputs("svm", svm, X[tst], n_classes=2)["decision"]
    return _PlainSVM(
        svm,
        C_svm,
        fit_time,
        f_val2,
        f_tst,
        LOSS_SCALE * ((f_val2 > 0).astype(np.int64) != y[val2]),
        LOSS_SCALE * ((f_tst > 0).astype(np.int64) != y[tst]),
    )


def _double_hinge_rows(
    Z: tuple, y, parts: dict, d: float, settings: dict, seed: int, gamma_grid, where: tuple
) -> tuple[list[dict], Any, Any, dict, float]:
    """The RBF and the linear double-hinge SVM at reject cost ``d`` on the standardised features
    ``Z`` (Trn1, Val1, Tst): their two rows, the two models, the linear one's fit info and C."""
    Z_trn1, Z_val1, Z_tst = Z
    trn1, val1, tst = parts["trn1"], parts["val1"], parts["tst"]
    c_scaling = settings["c_scaling"]
    model, C_dh, info = classifiers._double_hinge.fit_double_hinge(
        Z_trn1,
        y[trn1],
        Z_val1,
        y[val1],
        d,
        settings["rbf_C_grid"],
        c_scaling=c_scaling,
        kernel="rbf",
        gamma_grid=gamma_grid,
        n_landmarks=settings["rbf_rank"],
        random_state=seed,
    )
    rbf_model = model
    log.info(
        "%s split %d d=%g: RBF DH-SVM gamma=%.4g C=%g, Val1 cost risk %.3f (rank %s)",
        *where,
        d,
        info["gamma"],
        C_dh,
        info["val_cost_risk"][info["key"]],
        model.n_landmarks_,
    )
    dh_loss = LOSS_SCALE * (model.predict(Z_tst) != y[tst])
    key = info["key"]
    rows = [
        _row(
            "double_hinge_rbf",
            d,
            selective_outcome(dh_loss, ~model.reject(Z_tst), d),
            val_part="val1",
            val_cost_risk=info["val_cost_risk"][key],
            C=C_dh,
            gamma=info["gamma"],
            fit_wall_s=info["fit_wall_s"],
            fit_cpu_s=info["fit_cpu_s"],
            n_iter=info["fits"][key][2],
            rel_gap=info["fits"][key][3],
            error_full=float(dh_loss.mean()),
            threshold=model.f_plus_,
        )
    ]
    model, C_dh, info = classifiers._double_hinge.fit_double_hinge(
        Z_trn1, y[trn1], Z_val1, y[val1], d, settings["C_grid"], c_scaling=c_scaling
    )
    dh_loss = LOSS_SCALE * (model.predict(Z_tst) != y[tst])
    rows.append(
        _row(
            "double_hinge",
            d,
            selective_outcome(dh_loss, ~model.reject(Z_tst), d),
            val_part="val1",
            val_cost_risk=info["val_cost_risk"][C_dh],
            C=C_dh,
            fit_wall_s=info["fit_wall_s"],
            fit_cpu_s=info["fit_cpu_s"],
            n_iter=info["fits"][C_dh][2],
            rel_gap=info["fits"][C_dh][3],
            error_full=float(dh_loss.mean()),
            threshold=model.f_plus_,
        )
    )
    return rows, rbf_model, model, info, C_dh


def _post_hoc_rows(
    d: float, lr: ClassifierThenScore, s_val2, s_tst, svm: _PlainSVM, parts: dict
) -> list[dict]:
    """The post-hoc rules at reject cost ``d``: LR + SELE with the cost-based rule and the plain
    SVM with a ``|f|`` threshold (both fitted on Val2), LR with Chow's rule."""
    val2, tst = parts["val2"], parts["tst"]
    loss, proba = lr.loss, lr.proba
    assert proba is not None  # LR has posteriors: Chow's rule reads them
    lr_time, sele_time = lr.times["classifier"], lr.times["score"]
    lr_error = float(loss[tst].mean())
    sel = fit_cost_based(loss[val2], s_val2, LOSS_SCALE * d)
    val_acc = sel.acceptance_probability(s_val2) > 0.5
    rows = [
        _row(
            "lr_sele",
            d,
            selective_outcome(loss[tst], sel.acceptance_probability(s_tst) > 0.5, d),
            val_part="val2",
            val_cost_risk=selective_outcome(loss[val2], val_acc, d)["cost_risk"],
            C=lr.C,
            C_score=lr.C_score,
            threshold=sel.threshold,
            error_full=lr_error,
            fit_wall_s=lr_time[0] + sele_time[0],
            fit_cpu_s=lr_time[1] + sele_time[1],
        )
    ]
    sel = fit_margin_threshold(svm.f_val2, svm.loss_val2, d)
    val_acc = sel.acceptance_probability(-np.abs(svm.f_val2)) > 0.5
    rows.append(
        _row(
            "svm_threshold",
            d,
            selective_outcome(
                svm.loss_tst, sel.acceptance_probability(-np.abs(svm.f_tst)) > 0.5, d
            ),
            val_part="val2",
            val_cost_risk=selective_outcome(svm.loss_val2, val_acc, d)["cost_risk"],
            C=svm.C,
            threshold=-sel.threshold,
            error_full=float(svm.loss_tst.mean()),
            fit_wall_s=svm.fit_time[0],
            fit_cpu_s=svm.fit_time[1],
            n_iter=int(svm.model[-1].n_iter_),
            rel_gap=float(svm.model[-1].rel_gap_),
        )
    )
    rows.append(
        _row(
            "lr_chow",
            d,
            selective_outcome(loss[tst], ~chow_reject(proba[tst], d), d),
            C=lr.C,
            threshold=1.0 - d,
            error_full=lr_error,
            fit_wall_s=lr_time[0],
            fit_cpu_s=lr_time[1],
        )
    )
    return rows


def run_split(inputs: SplitInputs, settings: dict) -> DoubleHingeSplitResult:
    """The five methods of the module notes on one split, for every reject cost; scored on Tst.

    Parameters
    ----------
    inputs : rejectopt.pipeline.experiments.SplitInputs
        The split's data (for :data:`BREAST_CANCER` made by :func:`breast_cancer_split`), the run's
        seed (the seeds derive from it) and, optionally, the staged LR file (:data:`STAGED_LR`),
        read instead of training LR (same numbers; LR's fit times NaN).
    settings : dict
        :func:`settings`'s output.

    Returns
    -------
    DoubleHingeSplitResult
        The rows (:data:`SPLIT_COLUMNS`), the Tst RC curves, the fit times and the models.
    """
    # scikit-learn: heavy, only the split jobs need it
    from sklearn.preprocessing import StandardScaler

    dataset, split, seed = inputs.dataset, int(inputs.split), int(inputs.seed)
    X, y, parts = _binary_split(inputs, settings)
    trn1, val1, val2, tst = parts["trn1"], parts["val1"], parts["val2"], parts["tst"]
    seeds = {
        part: derive_seed(seed, dataset, "double_hinge", split, part)
        for part in ("lr", "sele", "svm", "nystroem")
    }
    rows: list[dict] = []
    start = time.perf_counter()
    lr = _lr_and_sele(inputs, X, y, parts, settings, seeds)
    score = lr.score
    s_val2, s_tst = score.predict(X[val2], lr.y_pred[val2]), score.predict(X[tst], lr.y_pred[tst])
    svm = _plain_svm(X, y, parts, settings, seeds["svm"])
    scaler = StandardScaler().fit(X[trn1])
    Z = tuple(scaler.transform(X[i]) for i in (trn1, val1, tst))
    dh_models, rbf_models = {}, {}
    gamma_grid = [g / X.shape[1] for g in settings["rbf_gamma_grid"]]
    for d in settings["reject_costs"]:
        d = float(d)
        dh_rows, rbf_models[d], dh_models[d], info, C_dh = _double_hinge_rows(
            Z, y, parts, d, settings, seeds["nystroem"], gamma_grid, (dataset, split)
        )
        rows += dh_rows + _post_hoc_rows(d, lr, s_val2, s_tst, svm, parts)
        log.info(
            "%s split %d d=%g: cost risk %s; linear DH-SVM C=%g (Val1 %s)",
            dataset,
            split,
            d,
            {r["method"]: round(r["cost_risk"], 3) for r in rows[-len(METHODS) :]},
            C_dh,
            {c: round(v, 3) for c, v in info["val_cost_risk"].items()},
        )

    frame = pd.DataFrame(rows).assign(dataset=dataset, split=split)
    cov_s, risk_s = rc_curve(lr.loss[tst], s_tst)
    cov_m, risk_m = rc_curve(svm.loss_tst, -np.abs(svm.f_tst))
    curves = {"lr_sele_cov": cov_s, "lr_sele_risk": risk_s, "svm_cov": cov_m, "svm_risk": risk_m}
    log.info(
        "%s split %d: LR C=%g (Tst error %.2f %%), SELE C=%g, SVM C=%g, %d reject costs in %.1f s",
        dataset,
        split,
        lr.C,
        float(lr.loss[tst].mean()),
        lr.C_score,
        svm.C,
        len(settings["reject_costs"]),
        time.perf_counter() - start,
    )
    models = {
        "lr": lr.model,
        "sele": score,
        "svm": svm.model,
        "scaler": scaler,
        "double_hinge": dh_models,
        "double_hinge_rbf": rbf_models,
    }
    return DoubleHingeSplitResult(
        frame[SPLIT_COLUMNS], curves, timing=frame[TIMING_COLUMNS], models=models
    )


def run_dataset_files(
    data_path,
    splits_path,
    split_files: Mapping[int, tuple],
    *,
    dataset: str,
    seed: int = 0,
    settings: dict | None = None,
    split_ratios=None,
    C_classifier=None,
    C_score=None,
    sele_chunk_size=None,
    staged: Mapping | None = None,
) -> dict[int, DoubleHingeSplitResult]:
    """File-in / file-out :func:`run_split` on every split of ``split_files`` of one dataset.

    The contract's :func:`~rejectopt.pipeline.experiments._contract.run_dataset_files` with this
    experiment's settings, built from the rule's params (the keywords; None: the pipeline's
    defaults), and each split's fit times written beside its rows.

    Parameters
    ----------
    data_path, splits_path : path-like or None
        ``results/data/{dataset}/data.npz`` and ``splits.npz``, read once (None for
        :data:`BREAST_CANCER`: :func:`breast_cancer_split` builds each split).
    split_files : mapping of int to tuple
        Split -> ``(csv_path, curves_path, timing_path)``: rows, curves (NPZ), fit times (the only
        output varying between runs).
    dataset : str
        The dataset's name.
    seed : int, default=0
        The run's master seed.
    settings : dict, optional
        The config block ``double_hinge:`` (``datasets`` ignored).
    split_ratios : sequence of float, optional
        The config's ``split_ratios.default`` (breast cancer's splits).
    C_classifier, C_score : sequence of float, optional
        LR's and SELE's grids.
    sele_chunk_size : int, optional
        SELE's chunk size.
    staged : mapping, optional
        Split -> its staged files by role (:data:`STAGED_LR` replaces training LR).

    Returns
    -------
    dict of int to DoubleHingeSplitResult
        Each split's result, as written.
    """
    config = rule_config(
        NAME,
        settings,
        split_ratios={} if split_ratios is None else {"default": split_ratios},
        C_classifier=C_classifier,
        C_score=C_score,
        sele_chunk_size=sele_chunk_size,
    )
    chosen = _settings(config)

    def run(split_input: SplitInputs) -> DoubleHingeSplitResult:
        result = run_split(split_input, chosen)
        # its record names the split, as the rows' (run_splits) do: a copy over another's is refused
        role = {"dataset": split_input.dataset, "split": int(split_input.split), "table": "timing"}
        save_csv(result.timing, split_files[split_input.split][2], provenance=role)
        return result

    return contract.run_dataset_files(
        NAME,
        run,
        None if dataset == BREAST_CANCER else data_path,
        splits_path,
        split_files,
        dataset=dataset,
        seed=seed,
        staged=None if dataset == BREAST_CANCER else staged,
    )


def run_rule(
    inputs: Mapping[str, Any],
    outputs: Mapping[str, Any],
    wildcards: Mapping[str, str],
    threads: int,
    params: Mapping[str, Any],
) -> dict[int, DoubleHingeSplitResult]:
    """Rules ``double_hinge_split`` and ``double_hinge_one_split``: :func:`run_dataset_files`.

    The experiment's entry of :func:`rejectopt.pipeline.experiments._rules.run_rule`: the rule's
    params other than ``splits`` (the job's loop) are :func:`run_dataset_files`' keywords; its
    input ``lr`` (where given) holds the staged LR classifier file of each split, in the order of
    ``splits``. Breast cancer has no input: the job builds it from scikit-learn.

    Parameters
    ----------
    inputs, outputs, wildcards, params : mapping
        The job's named inputs, outputs, wildcards and params (Snakemake's, as dicts).
    threads : int
        The job's threads: BLAS is held to them.

    Returns
    -------
    dict of int to DoubleHingeSplitResult
        By split, as written.
    """
    keywords = dict(params)
    splits = [int(k) for k in keywords.pop("splits")]
    files = zip(*(as_list(outputs[name]) for name in ("csv", "curves", "timing")))
    staged = {k: {STAGED_LR: path} for k, path in zip(splits, as_list(inputs.get("lr", [])))}
    with threadpool_limits(limits=threads):
        return run_dataset_files(
            inputs.get("data"),
            inputs.get("splits"),
            dict(zip(splits, files)),
            dataset=wildcards["dataset"],
            staged=staged,
            **keywords,
        )
