"""Settings, datasets and breast cancer's splits of the double-hinge experiment (the package's)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ...._checks import SPLIT_PARTS
from ....datasets import get_spec
from ....splits import DEFAULT_RATIOS, make_splits

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
        {p: arrays[f"{p}_{int(split)}"] for p in SPLIT_PARTS},
    )
