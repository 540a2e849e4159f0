"""Evaluation metrics for selective classifiers: RC curve, AuRC, AUGRC, excess areas, SELE loss, bootstrap.

All functions take per-example losses ``loss`` (the loss of the classifier's
prediction, ``l(y_i, h(x_i))``) and uncertainties ``uncertainty`` (``s(x_i)``,
larger = more uncertain), and return Python floats or NumPy arrays. Results are
in loss units (no x1000 or percent rescaling).

Bad input (NaN or infinite values, negative losses, length mismatch, empty
arrays) raises ValueError naming the argument.

Conventions. The risk-coverage metrics (:func:`aurc`, :func:`augrc`, :func:`eaurc`,
:func:`eaugrc`, :func:`risk_at_coverage`, :func:`coverage_at_risk`) take
``convention`` (:data:`CONVENTIONS`): ``"paper"`` (the default, eq. (27) of [1] and this
module's definitions) or the definition of another library -- ``"fd-shifts"``,
``"fd-shifts-legacy"``, ``"geifman"``, ``"torch-uncertainty"``, ``"mapie"``, ``"probly"`` (its AuRC
only) -- computed as that
library computes it, tie rule and scale included (in loss units: fd-shifts' display factor
1000 is left out). A metric a convention does not define raises ValueError naming both.
Where a convention depends on the order of tied scores, ``ties="index"`` takes the input
order and ``ties="average"`` the expectation over random orders of the tied examples. The
definitions side by side: ``docs/guide/metric_conventions.md``; the libraries' own values, which
the tests compare with to 1e-12: ``tests/data/metric_conventions_golden.json``.

Beyond the point values: ``groups=`` on the risk-coverage metrics and
:func:`selective_report` (per group and overall, the worst group marked);
:func:`risk_coverage_band` (pointwise or simultaneous band on the RC curve) and
``confidence=`` on :func:`risk_at_coverage` / :func:`coverage_at_risk`; :func:`compare_scores`
(paired bootstrap test of two scores); ``coverage_range=`` on :func:`aurc` / :func:`augrc`
(partial areas, fd-shifts' ``cov_min`` / ``cov_max`` under its convention).

The rest of what a failure-detection paper reports, in :data:`FAILURE_METRICS` with each one's
direction and inputs: the failure detector's :func:`failure_auroc`, :func:`fpr_at_tpr` and
:func:`failure_aupr`; :func:`aurc_achievable` and the balanced-accuracy areas :func:`aurc_ba`,
:func:`augrc_ba` (of labels and predictions); and the calibration of class probabilities,
:func:`expected_calibration_error`, :func:`maximum_calibration_error`,
:func:`adaptive_calibration_error`, :func:`brier_score` and :func:`negative_log_likelihood`.
One call computes every registered metric per score, a paper's table: :func:`metrics_table`.

References
----------
.. [1] V. Franc, D. Prusa, V. Voracek. Optimal Strategies for Reject Option
   Classifiers. JMLR 24(11):1-49, 2023.
.. [2] J. Traub, T. J. Bungert, C. T. Lueth, M. Baumgartner, K. H. Maier-Hein,
   L. Maier-Hein, P. F. Jaeger. Overcoming Common Flaws in the Evaluation of
   Selective Classification Systems. NeurIPS 2024.
"""

from ._bands import ConfidenceInterval, risk_coverage_band
from ._bootstrap import bootstrap_ci
from ._calibration import (
    adaptive_calibration_error,
    brier_score,
    brier_score_terms,
    expected_calibration_error,
    maximum_calibration_error,
    negative_log_likelihood,
    nll_terms,
)
from ._compare import compare_scores
from ._confusion import reject_confusion_matrix
from ._conventions import CONVENTIONS
from ._display import RiskCoverageDisplay
from ._failure import augrc_ba, aurc_achievable, aurc_ba, failure_aupr, failure_auroc, fpr_at_tpr
from ._failure_registry import FAILURE_METRICS, FailureMetric, get_failure_metric
from ._losses import TASK_LOSS, per_example_loss, task_loss
from ._registry import METRICS, Metric, get_metric
from ._report import selective_report
from ._risk_coverage import (
    augrc,
    aurc,
    coverage_at_risk,
    eaugrc,
    eaurc,
    rc_curve,
    risk_at_coverage,
    risk_full,
    selective_risk_coverage,
)
from ._scorer import selective_scorer
from ._sele import sele_loss, sele_proxy
from ._table import metrics_table

__all__ = [
    "CONVENTIONS",
    "TASK_LOSS",
    "per_example_loss",
    "task_loss",
    "rc_curve",
    "aurc",
    "augrc",
    "eaurc",
    "eaugrc",
    "risk_at_coverage",
    "coverage_at_risk",
    "risk_full",
    "sele_loss",
    "sele_proxy",
    "selective_risk_coverage",
    "bootstrap_ci",
    "ConfidenceInterval",
    "risk_coverage_band",
    "compare_scores",
    "selective_report",
    "reject_confusion_matrix",
    "RiskCoverageDisplay",
    "selective_scorer",
    "Metric",
    "METRICS",
    "get_metric",
    "failure_auroc",
    "fpr_at_tpr",
    "failure_aupr",
    "aurc_achievable",
    "aurc_ba",
    "augrc_ba",
    "expected_calibration_error",
    "maximum_calibration_error",
    "adaptive_calibration_error",
    "brier_score",
    "brier_score_terms",
    "negative_log_likelihood",
    "nll_terms",
    "FailureMetric",
    "FAILURE_METRICS",
    "get_failure_metric",
    "metrics_table",
]


def __dir__():
    """The names of ``__all__``, not the private submodules and helpers the imports above add."""
    return list(__all__)
