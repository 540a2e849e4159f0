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
:func:`aggregate`. Rule ``ood_split`` runs :func:`run_rule` (:func:`run_dataset_files`), ``ood_table``
:func:`table_file`; rendering is :mod:`rejectopt.pipeline.report.ood`'s.

References
----------
.. [1] V. Franc, D. Prusa, J. Paplham. "Reject option models comprising out-of-distribution
   detection." arXiv:2307.05199.
.. [2] V. Franc, D. Prusa, V. Voracek. Optimal Strategies for Reject Option Classifiers.
   JMLR 24(11):1-49, 2023.
"""

from __future__ import annotations

from ._setup import (
    DEFAULTS,
    NAME,
    RANK_METRICS,
    SPLIT_COLUMNS,
    OODPartition,
    covered_datasets,
    held_out_classes,
    ood_partition,
    settings,
)
from ._split import (
    OODScores,
    OODSplitResult,
    evaluate_ood_methods,
    min_fpr_at_tpr,
    run_dataset_files,
    run_rule,
    run_split,
)
from ._tables import OODStatistics, aggregate, ood_statistics, ood_table, table_file

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
    "run_rule",
    "ood_table",
    "ood_statistics",
    "aggregate",
    "table_file",
]


def __dir__():
    """The names of ``__all__``, not the private submodules the imports above add."""
    return list(__all__)
