"""Internal: the pipeline's double-hinge experiment; not part of the public API (see
:mod:`rejectopt.pipeline.experiments` for the experiment contract).

SVM with a reject option (double hinge) against post-hoc rejection, on binary datasets.

Grandvalet et al. [1] on the pipeline's splits: per rejection cost ``d`` (errors cost 1,
``0 < d < 1/2``) five selective classifiers are fitted on one split and scored on Tst by the cost
risk ``(errors + d x rejections) / n`` (Chow's cost-based model, Problem 1 of [2];
:func:`rejectopt.metrics._confusion.selective_outcome`), coverage and selective risk. Splits:
``results/data/{dataset}/splits.npz``; breast cancer's by :func:`breast_cancer_split`.

* ``double_hinge_rbf`` -- the main row, the seed's model: :class:`~rejectopt.classifiers.DoubleHingeSVM`
  with kernel ``exp(-gamma ||x - x'||^2)`` on Trn1 features standardised by Trn1; ``gamma``
  (``rbf_gamma_grid``, in units of ``1 / n_features``: scikit-learn's ``"scale"`` on standardised
  features) and ``C`` (``rbf_C_grid``) chosen per ``d`` on Val1 by cost risk
  (``rejectopt.classifiers._double_hinge.fit_double_hinge``; ties: smaller ``gamma``, then ``C``);
  rejects iff ``f- < f(x) < f+``. The exact kernel costs ``O(n^3)`` time, ``O(n^2)`` memory
  (marketing's Trn1: 13,564 rows), so problem (10) of [1] is solved exactly on the span of a
  rank-``rbf_rank`` Nyström approximation (landmarks uniform from Trn1, seeded by the split, shared
  by every ``gamma``, ``C``, ``d``); its distance to the exact kernel:
  ``benchmarks/bench_double_hinge_nystroem.py`` (docs/guide/double_hinge.md).
* ``double_hinge`` -- the linear kernel, ``C`` on ``C_grid``. Kept because its bias is known: even
  with linear log-odds (1-D N(-1, 1) / N(+1, 1), equal priors) it is not Chow's rule, the loss
  being tangent to the logistic loss only at ``f-`` and ``f+``, which a line cannot both meet.
  Reject interval vs Chow's: +-0.426 / +-0.424 at ``d = 0.3``, +-0.735 / +-0.693 at 0.2,
  +-1.449 / +-1.099 at 0.1 (excess cost 0.0037 over Bayes' 0.0701); at ``d = 0.05`` slope 0,
  rejecting everything (Chow: +-1.472). So at small ``d`` it measures the model's bias as much as
  the data (``tests/test_double_hinge.py`` integrates these numbers).
* ``lr_sele`` -- LR on Trn1 (``C`` by Val1 error), SELE on Trn2 (``C`` by Val2 AuRC,
  :func:`rejectopt.pipeline.experiments._learners.fit_classifier_then_score`), then
  :func:`rejectopt.selective.fit_cost_based` with ``reject_cost = 100 d`` (losses
  ``100 [y != h(x)]``) on **Val2**, where SELE's ``C`` was chosen.
* ``svm_threshold`` -- naive baseline: the plain linear SVM
  (:class:`~rejectopt.classifiers.BinaryHingeSVM`) on Trn1, ``C`` by Val1 error on the *same* grid
  and scaling as the double-hinge SVM, rejecting iff ``|f(x)|`` is below the threshold minimising
  the cost risk on **Val2** (``rejectopt.selective._fit_margin_threshold``; as ``lr_sele``, so both
  post-hoc rules see the same data).
* ``lr_chow`` -- Chow's rule on LR's posterior: reject iff ``max_y p(y|x) < 1 - d``
  (``rejectopt.selective._chow_reject``); nothing tuned.

Seeds: ``derive_seed(seed, dataset, "double_hinge", split, part)``, ``part`` in ``lr``,
``sele``, ``svm``, ``nystroem``; the solvers are deterministic.

C grids: LR uses ``C_classifier`` (weight ``C`` on the summed loss, as everywhere); the linear SVMs
share ``C_grid`` read with ``c_scaling`` (``"mean"``: ``C / n_trn1`` on the summed loss, i.e. per
example; ``"sum"``: ``C``). On standardised features the summed reading of {1, ..., 1000} is
almost hard-margin on larger datasets (on marketing every ``C`` gives the same model), while
``/ n_trn1`` spans under- to weakly regularised (:class:`~rejectopt.classifiers.DoubleHingeSVM`).
The RBF model needs larger ``C`` (``rbf_C_grid``, same reading): ``|f| <= ||f||`` in the RKHS, so
logits beyond Chow's ``f+ = log((1-d)/d)`` cost ``||f||^2 / 2`` against a loss summed over
``n_trn1``; on marketing at ``d = 0.2`` every ``C <= 100`` predicted the majority class, rejecting
nothing (Val1 cost risk 11.7 %, 6.4 % at ``C = 10^5``).

The protocol against the paper's
--------------------------------
As in Section 5.2 of [2]: splits and ratios, LR (``C_classifier``, Val1 error), SELE on LR's Trn2
losses (``C_score``, Val2 AuRC), Tst only for reported numbers, risks in percent. It differs in
that the paper reports a score's AuRC (the whole RC curve), whereas here each method is one
selective classifier per ``d``: a post-hoc rule needs a threshold, fitted on Val2 (Trn2 / Val2 stay
the post-hoc stage's), and the number is the Tst cost risk. The SVMs are not the paper's methods;
they are selected on Trn1 / Val1 like its classifiers. Breast cancer is not a paper dataset: its
splits are made in the job (the config's default ratios and seed).

LR is read from the staged files of ``rules/classifiers.smk`` (``results/classifiers/{dataset}/lr/``;
same splits, grid, deterministic solver) where the dataset is one of the run's, not retrained.
Predictions are equal; posteriors may differ in their last bits (the staged rule predicts every
example at once), which matters only for a maximum posterior within those bits of ``1 - d``: on
phishing and marketing (5 splits) every result file stayed byte-identical. Breast cancer trains LR
in the job. SELE is always learned in the job: the staged score file keeps Tst uncertainties only,
while the selection function is fitted on Val2, with this experiment's seed.

Contract (:mod:`rejectopt.pipeline.experiments`): :data:`NAME`, :func:`settings`, :func:`run_split`,
:func:`aggregate` (:func:`double_hinge_table`, :func:`cost_risk_ranks`, :func:`wilcoxon_tests` of
:data:`REFERENCE` against each method). Rendering is :mod:`rejectopt.pipeline.report.double_hinge`'s.

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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

# The learners load on first use (the package's lazy attributes): the Snakefile imports this
# module to plan the run, and a table job does not need scikit-learn.
from ... import classifiers, scores
from ..._checks import derive_seed
from ..._io import load_npz, save_csv
from ...datasets import get_spec
from ...metrics import rc_curve, task_loss
from ...metrics._confusion import selective_outcome
from ...scores import get_score
from ...selective import _chow_reject, _fit_margin_threshold, fit_cost_based
from ...splits import _PARTS, DEFAULT_RATIOS, make_splits
from ...stats import average_ranks, friedman_test, nemenyi_cd, rank_methods
from . import _contract as contract
from ._contract import LOSS_SCALE, SplitInputs, SplitResult, rule_config
from ._learners import ClassifierThenScore, fit_classifier_then_score

__all__ = [
    "NAME",
    "BREAST_CANCER",
    "DEFAULTS",
    "METHODS",
    "REFERENCE",
    "DOUBLE_HINGE_METHODS",
    "SPLIT_COLUMNS",
    "STAGED_LR",
    "TIMING_COLUMNS",
    "DoubleHingeSplitResult",
    "RankResult",
    "settings",
    "covered_datasets",
    "breast_cancer_split",
    "run_split",
    "run_dataset_files",
    "aggregate",
    "table_file",
    "table_order",
    "double_hinge_table",
    "cost_risk_ranks",
    "wilcoxon_tests",
]

log = logging.getLogger(__name__)

#: The experiment's name in the experiment contract (the double-hinge benchmark).
NAME = "double_hinge"

#: The dataset loaded from scikit-learn (``sklearn.datasets.load_breast_cancer``), not the pipeline.
BREAST_CANCER = "breast_cancer"

#: The config block ``double_hinge:``, its keys and defaults; :func:`settings` fills the missing ones.
DEFAULTS = {
    "datasets": ["marketing", "phishing", "codrna", "ijcnn", BREAST_CANCER],
    "reject_costs": [0.05, 0.1, 0.2, 0.3, 0.45],
    "C_grid": [1, 10, 100, 1000],
    "c_scaling": "mean",
    "rbf_gamma_grid": [0.3, 1.0],
    "rbf_C_grid": [10000, 100000, 1000000],
    "rbf_rank": 200,
}

#: The pipeline's settings of LR and SELE where the config lacks them (its defaults).
_PIPELINE_DEFAULTS = {
    "C_classifier": [1, 10, 100, 1000],
    "C_score": [0, 1, 10, 100, 1000],
    "sele_chunk_size": 500,
}

#: The compared methods, in table order (see the module notes).
METHODS = ("double_hinge_rbf", "double_hinge", "lr_sele", "svm_threshold", "lr_chow")

#: The main row, the reference of the Wilcoxon tests: the Gaussian-kernel double-hinge SVM.
REFERENCE = "double_hinge_rbf"

#: The double-hinge rows (their ``C`` is chosen on Val1 by cost risk).
DOUBLE_HINGE_METHODS = ("double_hinge_rbf", "double_hinge")

#: The role of the staged LR classifier file in :attr:`SplitInputs.staged <rejectopt.pipeline.experiments.SplitInputs>`.
STAGED_LR = "classifier/lr"

#: Columns of ``results/double_hinge/{dataset}/split_{k}.csv`` (one row per reject cost and method).
SPLIT_COLUMNS = [
    "dataset",
    "split",
    "reject_cost",
    "method",
    "cost_risk",
    "coverage",
    "selective_risk",
    "error_full",
    "n_test",
    "n_rejected",
    "n_errors_accepted",
    "val_part",
    "val_cost_risk",
    "C",
    "C_score",
    "threshold",
    "n_iter",
    "rel_gap",
    "gamma",
]

#: Columns of ``results/double_hinge/{dataset}/timing_split_{k}.csv``: fit times, kept apart so the results
#: are byte-identical between runs (local or SLURM). LR's part is NaN where LR is read from its staged file.
TIMING_COLUMNS = ["dataset", "split", "reject_cost", "method", "fit_wall_s", "fit_cpu_s"]


# --------------------------------------------------------------------------------------------
# Settings, datasets, breast cancer's splits
# --------------------------------------------------------------------------------------------
def settings(config: dict) -> dict:
    """The experiment's settings from the whole pipeline config.

    Parameters
    ----------
    config : dict
        The pipeline's config.

    Returns
    -------
    dict
        ``config["double_hinge"]`` completed by :data:`DEFAULTS` (costs and grids sorted, as
        floats); the pipeline's ``C_classifier``, ``C_score``, ``sele_chunk_size`` (LR, SELE);
        ``split_ratios`` (``split_ratios.default``, breast cancer's splits).

    Raises
    ------
    ValueError
        On an unknown key of the block, a reject cost outside ``(0, 1/2)``, a non-positive ``C``
        or width, a rank below 1 or an unknown ``c_scaling``.
    """
    block = dict(config.get("double_hinge") or {})
    unknown = sorted(set(block) - set(DEFAULTS))
    if unknown:
        raise ValueError(
            f"config double_hinge: unknown keys {unknown}; allowed: {sorted(DEFAULTS)}"
        )
    out = {**DEFAULTS, **block}
    costs = [float(d) for d in out["reject_costs"]]
    if not costs or any(not 0.0 < d < 0.5 for d in costs) or len(set(costs)) != len(costs):
        raise ValueError(
            f"config double_hinge.reject_costs must be distinct numbers in (0, 1/2), got {out['reject_costs']!r}"
        )
    grid = [float(c) for c in out["C_grid"]]
    if not grid or any(not (np.isfinite(c) and c > 0) for c in grid):
        raise ValueError(
            f"config double_hinge.C_grid must hold positive numbers, got {out['C_grid']!r}"
        )
    rbf = {}
    for key in ("rbf_gamma_grid", "rbf_C_grid"):
        rbf[key] = [float(c) for c in out[key]]
        if (
            not rbf[key]
            or any(not (np.isfinite(c) and c > 0) for c in rbf[key])
            or len(set(rbf[key])) != len(rbf[key])
        ):
            raise ValueError(
                f"config double_hinge.{key} must hold distinct positive numbers, got {out[key]!r}"
            )
    rank = out["rbf_rank"]
    if isinstance(rank, bool) or not isinstance(rank, (int, np.integer)) or rank < 1:
        raise ValueError(
            f"config double_hinge.rbf_rank must be a positive integer (the Nyström rank), got {rank!r}"
        )
    out.update(
        rbf_gamma_grid=sorted(rbf["rbf_gamma_grid"]),
        rbf_C_grid=sorted(rbf["rbf_C_grid"]),
        rbf_rank=int(rank),
    )
    if out["c_scaling"] not in ("mean", "sum"):
        raise ValueError(
            f"config double_hinge.c_scaling must be 'mean' or 'sum', got {out['c_scaling']!r}"
        )
    out["reject_costs"], out["C_grid"] = sorted(costs), grid
    out["datasets"] = list(out["datasets"])
    # the LR and SELE grids as the config gives them: the staged rules read the same values
    for key, default in _PIPELINE_DEFAULTS.items():
        out[key] = config.get(key, default)
    out["C_classifier"], out["C_score"] = list(out["C_classifier"]), list(out["C_score"])
    out["sele_chunk_size"] = int(out["sele_chunk_size"])
    out["split_ratios"] = list((config.get("split_ratios") or {}).get("default", DEFAULT_RATIOS))
    return out


#: :func:`settings` under another name, for :func:`run_dataset_files`, whose keyword ``settings``
#: (the rule's param) is the config block.
_settings = settings


def covered_datasets(
    settings: dict, run_datasets: Sequence[str], custom: Sequence[str] = ()
) -> list[str]:
    """The datasets of ``settings["datasets"]`` the run covers, then breast cancer.

    A listed name must be :data:`BREAST_CANCER`, registered binary, or custom (checked for two
    classes when its job runs).

    Parameters
    ----------
    settings : dict
        :func:`settings`'s output.
    run_datasets : sequence of str
        The config's ``datasets``.
    custom : sequence of str, optional
        The run's custom datasets (not in the registry).

    Returns
    -------
    list of str
        In the run's order, then :data:`BREAST_CANCER` if listed.

    Raises
    ------
    ValueError
        On an unknown name or a registered dataset that is not binary.
    """
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


def breast_cancer_split(
    split: int, ratios=None, seed: int = 0
) -> tuple[np.ndarray, np.ndarray, dict]:
    """Wisconsin breast cancer (569 x 30, shipped with scikit-learn) and its split ``split``.

    Split ``split`` of ``make_splits(y, ratios, n_splits=split + 1, seed, dataset="breast_cancer")``,
    seeded by ``(seed, "breast_cancer", split)`` alone, so independent of the run's split count.
    Labels are scikit-learn's (0 = malignant, 1 = benign).

    Parameters
    ----------
    split : int
        The split's number, from 0.
    ratios : sequence of float, optional
        The shares of ``trn1, val1, trn2, val2, tst`` (None: :data:`rejectopt.splits.DEFAULT_RATIOS`).
    seed : int, default=0
        The run's master seed.

    Returns
    -------
    X : ndarray of shape (569, 30)
    y : ndarray of int64
    parts : dict
        Index arrays ``trn1, val1, trn2, val2, tst``.
    """
    # scikit-learn: heavy, only the split jobs need it
    from sklearn.datasets import load_breast_cancer

    X, y = load_breast_cancer(return_X_y=True)
    ratios = DEFAULT_RATIOS if ratios is None else ratios
    arrays = make_splits(y, ratios, n_splits=int(split) + 1, seed=seed, dataset=BREAST_CANCER)
    return (
        np.asarray(X, float),
        np.asarray(y, np.int64),
        {p: arrays[f"{p}_{int(split)}"] for p in _PARTS},
    )


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
    if dataset == BREAST_CANCER:
        X, y, parts = breast_cancer_split(split, settings["split_ratios"], seed=seed)
    else:
        X, y, parts = inputs.X, inputs.y, inputs.parts
    reject_costs, C_grid, c_scaling = (
        settings["reject_costs"],
        settings["C_grid"],
        settings["c_scaling"],
    )
    X = np.asarray(X, dtype=float)
    classes, y = np.unique(np.asarray(y), return_inverse=True)
    if classes.size != 2:
        raise ValueError(
            f"{dataset or 'the dataset'}: the double-hinge experiment needs a binary dataset, "
            f"found {classes.size} classes"
        )
    y = y.astype(np.int64)
    parts = {p: np.asarray(parts[p], dtype=np.int64) for p in _PARTS}
    trn1, val1, trn2, val2, tst = (parts[p] for p in _PARTS)
    seeds = {
        part: derive_seed(seed, dataset, "double_hinge", split, part)
        for part in ("lr", "sele", "svm", "nystroem")
    }
    rows: list[dict] = []
    start = time.perf_counter()

    # LR on Trn1 (C by Val1 error), SELE on Trn2 (C by Val2 AuRC), predicted on Trn2, Val2 and Tst;
    # LR from the staged classifier file where the rule gives it
    if STAGED_LR in inputs.staged:
        lr = _staged_lr_then_sele(
            inputs.staged_file(STAGED_LR), X, y, parts, settings, seeds["sele"]
        )
        log.info(
            "%s split %d: LR's outputs read from %s", dataset, split, inputs.staged_file(STAGED_LR)
        )
    else:
        used = np.concatenate([trn2, val2, tst])
        lr = fit_classifier_then_score(
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
    loss, proba, score, C_lr = lr.loss, lr.proba, lr.score, lr.C
    assert proba is not None  # LR has posteriors: Chow's rule reads them
    lr_time, sele_time = lr.times["classifier"], lr.times["score"]
    s_val2, s_tst = score.predict(X[val2], lr.y_pred[val2]), score.predict(X[tst], lr.y_pred[tst])
    lr_error = float(loss[tst].mean())

    # the plain SVM on Trn1 (C by Val1 error, the SVMs' grid), f on Val2 and Tst
    wall, cpu = time.perf_counter(), time.process_time()
    svm, C_svm, _ = classifiers._selection.train_classifier(
        "svm",
        X[trn1],
        y[trn1],
        X[val1],
        y[val1],
        C_grid=tuple(C_grid),
        n_classes=2,
        random_state=seeds["svm"],
        c_scaling=c_scaling,
    )
    svm_time = (time.perf_counter() - wall, time.process_time() - cpu)
    f_val2 = classifiers._selection.classifier_outputs("svm", svm, X[val2], n_classes=2)["decision"]
    f_tst = classifiers._selection.classifier_outputs("svm", svm, X[tst], n_classes=2)["decision"]
    svm_loss_val2 = LOSS_SCALE * ((f_val2 > 0).astype(np.int64) != y[val2])
    svm_loss_tst = LOSS_SCALE * ((f_tst > 0).astype(np.int64) != y[tst])

    scaler = StandardScaler().fit(X[trn1])
    Z_trn1, Z_val1, Z_tst = (scaler.transform(X[i]) for i in (trn1, val1, tst))
    dh_models, rbf_models = {}, {}
    gamma_grid = [g / X.shape[1] for g in settings["rbf_gamma_grid"]]
    for d in reject_costs:
        d = float(d)
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
            random_state=seeds["nystroem"],
        )
        rbf_models[d] = model
        log.info(
            "%s split %d d=%g: RBF DH-SVM gamma=%.4g C=%g, Val1 cost risk %.3f (rank %s)",
            dataset,
            split,
            d,
            info["gamma"],
            C_dh,
            info["val_cost_risk"][info["key"]],
            model.n_landmarks_,
        )
        dh_loss = LOSS_SCALE * (model.predict(Z_tst) != y[tst])
        key = info["key"]
        rows.append(
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
        )

        model, C_dh, info = classifiers._double_hinge.fit_double_hinge(
            Z_trn1, y[trn1], Z_val1, y[val1], d, C_grid, c_scaling=c_scaling
        )
        dh_models[d] = model
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

        sel = fit_cost_based(loss[val2], s_val2, LOSS_SCALE * d)
        val_acc = sel.acceptance_probability(s_val2) > 0.5
        rows.append(
            _row(
                "lr_sele",
                d,
                selective_outcome(loss[tst], sel.acceptance_probability(s_tst) > 0.5, d),
                val_part="val2",
                val_cost_risk=selective_outcome(loss[val2], val_acc, d)["cost_risk"],
                C=C_lr,
                C_score=lr.C_score,
                threshold=sel.threshold,
                error_full=lr_error,
                fit_wall_s=lr_time[0] + sele_time[0],
                fit_cpu_s=lr_time[1] + sele_time[1],
            )
        )

        sel = _fit_margin_threshold(f_val2, svm_loss_val2, d)
        val_acc = sel.acceptance_probability(-np.abs(f_val2)) > 0.5
        rows.append(
            _row(
                "svm_threshold",
                d,
                selective_outcome(
                    svm_loss_tst, sel.acceptance_probability(-np.abs(f_tst)) > 0.5, d
                ),
                val_part="val2",
                val_cost_risk=selective_outcome(svm_loss_val2, val_acc, d)["cost_risk"],
                C=C_svm,
                threshold=-sel.threshold,
                error_full=float(svm_loss_tst.mean()),
                fit_wall_s=svm_time[0],
                fit_cpu_s=svm_time[1],
                n_iter=int(svm[-1].n_iter_),
                rel_gap=float(svm[-1].rel_gap_),
            )
        )

        rows.append(
            _row(
                "lr_chow",
                d,
                selective_outcome(loss[tst], ~_chow_reject(proba[tst], d), d),
                C=C_lr,
                threshold=1.0 - d,
                error_full=lr_error,
                fit_wall_s=lr_time[0],
                fit_cpu_s=lr_time[1],
            )
        )
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
    cov_s, risk_s = rc_curve(loss[tst], s_tst)
    cov_m, risk_m = rc_curve(svm_loss_tst, -np.abs(f_tst))
    curves = {"lr_sele_cov": cov_s, "lr_sele_risk": risk_s, "svm_cov": cov_m, "svm_risk": risk_m}
    log.info(
        "%s split %d: LR C=%g (Tst error %.2f %%), SELE C=%g, SVM C=%g, %d reject costs in %.1f s",
        dataset,
        split,
        C_lr,
        lr_error,
        lr.C_score,
        C_svm,
        len(reject_costs),
        time.perf_counter() - start,
    )
    models = {
        "lr": lr.model,
        "sele": score,
        "svm": svm,
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
        save_csv(result.timing, split_files[split_input.split][2])
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


# --------------------------------------------------------------------------------------------
# The tables: mean +- std, ranks by cost risk, Wilcoxon signed-rank tests
# --------------------------------------------------------------------------------------------
_MEAN_STD = ("cost_risk", "coverage", "selective_risk", "error_full")


def table_order(results: pd.DataFrame) -> tuple[list[str], list[float], list[str]]:
    """Datasets (first seen first), reject costs (ascending), methods (:data:`METHODS` first, then
    others sorted) of per-split rows or :func:`double_hinge_table`.

    Parameters
    ----------
    results : pandas.DataFrame
        Rows with the columns ``dataset``, ``reject_cost`` and ``method``.

    Returns
    -------
    datasets : list of str
    reject_costs : list of float
    methods : list of str
    """
    datasets = list(dict.fromkeys(results["dataset"]))
    costs = sorted(dict.fromkeys(results["reject_cost"].astype(float)))
    methods = [m for m in METHODS if m in set(results["method"])] + sorted(
        set(results["method"]) - set(METHODS)
    )
    return datasets, costs, methods


def double_hinge_table(results: pd.DataFrame) -> pd.DataFrame:
    """Mean and std over the splits per (dataset, reject cost, method) of the per-split rows.

    Parameters
    ----------
    results : pandas.DataFrame
        Per-split rows (:data:`SPLIT_COLUMNS`; at least ``dataset, split, reject_cost, method``,
        the four metrics, ``C``, ``gamma``).

    Returns
    -------
    DataFrame
        ``dataset, reject_cost, method, n_splits``, ``{metric}_mean`` / ``_std`` for cost risk,
        coverage, selective risk (over splits accepting something), full-coverage error;
        ``n_empty`` (splits accepting nothing); ``C``, ``gamma`` (chosen values, space-separated
        per split; ``gamma`` absolute, NaN without an RBF).

    Raises
    ------
    ValueError
        If ``results`` lacks a column or has no rows.
    """
    needed = ("dataset", "split", "reject_cost", "method", *_MEAN_STD, "C", "gamma")
    missing = [c for c in needed if c not in results]
    if missing:
        raise ValueError(f"results lack the columns {missing}")
    if results.empty:
        raise ValueError("results has no rows")
    datasets, costs, methods = table_order(results)
    frame = results.sort_values("split", kind="stable")
    table = (
        frame.groupby(["dataset", "reject_cost", "method"])
        .agg(
            n_splits=("split", "nunique"),
            **{f"{c}_{s}": (c, s) for c in _MEAN_STD for s in ("mean", "std")},
            n_empty=("coverage", lambda v: int((v == 0).sum())),
            C=("C", lambda v: " ".join(f"{c:g}" for c in v)),
            gamma=(
                "gamma",
                lambda v: " ".join(f"{g:.4g}" for g in v) if v.notna().any() else np.nan,
            ),
        )
        .reset_index()
    )
    order = table.assign(
        _d=table["dataset"].map(datasets.index), _m=table["method"].map(methods.index)
    )
    return table.loc[order.sort_values(["_d", "reject_cost", "_m"]).index].reset_index(drop=True)


@dataclass(frozen=True)
class RankResult:
    """Ranks of the methods by mean cost risk over the (dataset, reject cost) cells.

    A dataset's cells share its splits, so the tests treat them as independent only nominally.

    Parameters
    ----------
    ranks : pandas.DataFrame
        Cells x methods (1 = best, ties averaged).
    average_ranks : pandas.Series
        Per method, its average rank over the cells.
    friedman_pvalue, iman_davenport_pvalue : float
        Friedman's test and its Iman-Davenport correction (NaN with fewer than 2 cells).
    cd_005 : float
        Nemenyi's critical difference at alpha 0.05 (NaN with fewer than 2 cells).
    wins : pandas.Series
        Per method, the cells where it has the best rank (ties count for each), named
        ``best_cells``.
    """

    ranks: pd.DataFrame
    average_ranks: pd.Series
    friedman_pvalue: float
    iman_davenport_pvalue: float
    cd_005: float
    wins: pd.Series


def cost_risk_ranks(table: pd.DataFrame) -> RankResult:
    """Rank the methods per (dataset, d) cell by mean cost risk (:mod:`rejectopt.stats`).

    Parameters
    ----------
    table : pandas.DataFrame
        :func:`double_hinge_table`'s output.

    Returns
    -------
    RankResult
    """
    datasets, costs, methods = table_order(table)
    wide = table.pivot(index=["dataset", "reject_cost"], columns="method", values="cost_risk_mean")
    cells = [(d, c) for d in datasets for c in costs if (d, c) in wide.index]
    wide = wide.loc[cells, methods]
    wide.index = [f"{d}, d={c:g}" for d, c in cells]
    ranks = rank_methods(wide)
    if len(cells) >= 2:
        res = friedman_test(wide)
        p, p_id, cd = (
            float(res.pvalue),
            float(res.iman_davenport_pvalue),
            nemenyi_cd(len(methods), len(cells)),
        )
    else:
        p = p_id = cd = float("nan")
    wins = (ranks == ranks.min(axis=1).to_numpy()[:, None]).sum(axis=0).rename("best_cells")
    return RankResult(ranks, average_ranks(wide), p, p_id, cd, wins)


def wilcoxon_tests(
    results: pd.DataFrame, reference: str = REFERENCE, metric: str = "cost_risk"
) -> pd.DataFrame:
    """Paired Wilcoxon signed-rank tests of ``reference`` against each other method.

    Pairs: the (dataset, split) cells of one cost, or (dataset, split, cost) of all (``reject_cost``
    ``"all"``); :func:`scipy.stats.wilcoxon` (two-sided, zeros dropped, ``method="auto"``).

    Parameters
    ----------
    results : pandas.DataFrame
        Per-split rows (at least ``dataset, split, reject_cost, method`` and ``metric``).
    reference : str, default=REFERENCE
        The method tested against each other one.
    metric : str, default="cost_risk"
        The column compared.

    Returns
    -------
    DataFrame
        ``reject_cost, method, n_pairs, n_nonzero, reference_better, reference_worse,
        median_difference`` (reference minus method), ``statistic``, ``pvalue`` (NaN without pairs;
        1 when every difference is zero).

    Raises
    ------
    ValueError
        If ``results`` holds no row of ``reference``.
    """
    # scipy.stats: heavy (about 0.6 s), only the table job needs it
    from scipy.stats import wilcoxon

    _, costs, methods = table_order(results)
    if reference not in methods:
        raise ValueError(f"results hold no rows of the reference method {reference!r}")
    groups = [(f"{c:g}", results[results["reject_cost"].astype(float) == c]) for c in costs] + [
        ("all", results)
    ]
    rows = []
    for label, frame in groups:
        wide = frame.pivot(
            index=["dataset", "split", "reject_cost"], columns="method", values=metric
        )
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
                with (
                    warnings.catch_warnings()
                ):  # e.g. one non-zero difference: zero variance of the normal approximation
                    warnings.simplefilter("ignore", RuntimeWarning)
                    res = wilcoxon(x, y)
                stat, p = float(res.statistic), float(res.pvalue)
            rows.append(
                {
                    "reject_cost": label,
                    "method": method,
                    "n_pairs": int(diff.size),
                    "n_nonzero": int(np.count_nonzero(diff)),
                    "reference_better": int((diff < 0).sum()),
                    "reference_worse": int((diff > 0).sum()),
                    "median_difference": float(np.median(diff)) if diff.size else float("nan"),
                    "statistic": stat,
                    "pvalue": p,
                }
            )
    return pd.DataFrame(rows)


def aggregate(rows: pd.DataFrame, settings: dict | None = None) -> dict[str, pd.DataFrame]:
    """Every split's rows to the experiment's tables, as numbers.

    Parameters
    ----------
    rows : pandas.DataFrame
        Every split's rows.
    settings : dict, optional
        Unused: the rows hold every setting (the contract's signature).

    Returns
    -------
    dict of str to pandas.DataFrame
        ``double_hinge`` (:func:`double_hinge_table`); ``ranks``: average rank and best cells per
        method (:func:`cost_risk_ranks`); ``rank_tests``: one row, the cells' count, Friedman /
        Iman-Davenport p-values, Nemenyi's CD at 0.05; ``wilcoxon`` (:func:`wilcoxon_tests`).
    """
    table = double_hinge_table(rows)
    ranks = cost_risk_ranks(table)
    rank_frame = pd.DataFrame({"average_rank": ranks.average_ranks, "best_cells": ranks.wins})
    rank_frame.index.name = "method"
    rank_tests = pd.DataFrame(
        [
            {
                "n_cells": len(ranks.ranks),
                "friedman_pvalue": ranks.friedman_pvalue,
                "iman_davenport_pvalue": ranks.iman_davenport_pvalue,
                "nemenyi_cd_005": ranks.cd_005,
            }
        ]
    )
    return {
        "double_hinge": table,
        "ranks": rank_frame,
        "rank_tests": rank_tests,
        "wilcoxon": wilcoxon_tests(rows),
    }


def table_file(csv_paths: Sequence, csv_out) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Every split's rows to :func:`double_hinge_table`, written to ``csv_out`` (CSV, atomically):
    the contract's :func:`~rejectopt.pipeline.experiments._contract.table_file`.

    Parameters
    ----------
    csv_paths : sequence of path-like
        The per-split CSVs (:data:`SPLIT_COLUMNS`).
    csv_out : path-like
        Where the table goes.

    Returns
    -------
    rows : pandas.DataFrame
        The per-split rows, concatenated.
    table : pandas.DataFrame
        :func:`double_hinge_table` of them, as written.

    Raises
    ------
    rejectopt.exceptions.IntermediateFileError
        A split's CSV without its content record, or changed since it was written.
    """
    return contract.table_file(csv_paths, csv_out, double_hinge_table)
