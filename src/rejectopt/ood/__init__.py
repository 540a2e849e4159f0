"""Reject option models comprising out-of-distribution detection (Franc, Prusa & Paplham [1]).

Contract for the names below: ``loss[i]`` is the loss of the ID classifier on sample ``i``
(ignored, may be NaN, for OOD samples), ``is_ood[i]`` a boolean, ``uncertainty[i]`` a score
with larger = reject first. ID is the positive (accepted) class: TPR = share of ID accepted,
FPR = share of OOD accepted. A single-score rule accepts ``uncertainty <= t``; "all
thresholds" are the distinct uncertainty values plus accept-nothing (``t = -inf``), tie
groups are accepted or rejected together, and the fitted strategies add the randomised
acceptance ``tau`` of the boundary tie group (eq. 9). The selective risk is undefined (NaN)
when no ID sample is accepted; an infeasible operating point gives NaN ("unable").

Metrics (Sec. 3, B.2): :func:`selective_risk_at_tpr_fpr`,
:func:`selective_risk_at_precision_recall`, :func:`roc_curve`, :func:`auroc`,
:func:`precision_recall_curve`, :func:`aupr`, :func:`risk_coverage_curve_at_fpr`,
:func:`oscr`, :func:`empirical_rates`.

Strategies (Theorems 1, 3, 5; Sec. 2.4): :func:`fit_cost_based_ood`, :func:`fit_bounded_tpr_fpr`,
:func:`fit_bounded_precision_recall` (returning :class:`rejectopt.selective.SelectionFunction`);
the double score :class:`DoubleScoreSelection` with :func:`fit_double_score_cost_based`,
:func:`fit_double_score_tpr_fpr`, :func:`fit_double_score_precision_recall`.

Synthetic example (Sec. 3.1, Table 1): :class:`GaussianOODModel`, :func:`synthetic_table1`.
OOD scores on features: :class:`KNNDistanceOOD`, :class:`MahalanobisOOD`.

The building blocks the pipeline and the checks import from their modules: the operating points
of all thresholds (``_metrics``), the cost-based score (``_cost``) and a double score's risk at a
target (``_strategies``), the closed forms on finite input sets (Theorems 3, 7; A.5, A.6: ``_finite``),
Table 1 as printed (``_synthetic``), the constraint tolerance (``_validation``).

This package is the library: it knows rules, scores and metrics, not the pipeline. The tabular
benchmark that holds classes of the paper's datasets out as OOD is an experiment of the contract,
:mod:`rejectopt.pipeline.experiments.ood`, rendered by :mod:`rejectopt.pipeline.report.ood`.

References
----------
.. [1] V. Franc, D. Prusa, J. Paplham. "Reject option models comprising out-of-distribution
   detection." arXiv:2307.05199.
"""

from ._metrics import (
    aupr,
    auroc,
    empirical_rates,
    oscr,
    precision_recall_curve,
    risk_coverage_curve_at_fpr,
    roc_curve,
    selective_risk_at_precision_recall,
    selective_risk_at_tpr_fpr,
)
from ._scores import KNNDistanceOOD, MahalanobisOOD
from ._strategies import (
    DoubleScoreSelection,
    fit_bounded_precision_recall,
    fit_bounded_tpr_fpr,
    fit_cost_based_ood,
    fit_double_score_cost_based,
    fit_double_score_precision_recall,
    fit_double_score_tpr_fpr,
)

# The former name of fit_cost_based_ood, for one more release (it warns): not in __all__.
from ._strategies import fit_cost_based as fit_cost_based
from ._synthetic import GaussianOODModel, paper_table1, synthetic_table1

__all__ = [
    "selective_risk_at_tpr_fpr",
    "selective_risk_at_precision_recall",
    "roc_curve",
    "auroc",
    "precision_recall_curve",
    "aupr",
    "risk_coverage_curve_at_fpr",
    "oscr",
    "empirical_rates",
    "DoubleScoreSelection",
    "fit_cost_based_ood",
    "fit_bounded_tpr_fpr",
    "fit_bounded_precision_recall",
    "fit_double_score_cost_based",
    "fit_double_score_tpr_fpr",
    "fit_double_score_precision_recall",
    "GaussianOODModel",
    "synthetic_table1",
    "paper_table1",
    "KNNDistanceOOD",
    "MahalanobisOOD",
]


def __dir__():
    """The names of ``__all__``, not the private submodules and helpers the imports above add."""
    return list(__all__)
