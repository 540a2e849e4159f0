"""The registry of the failure-detection metrics, apart from :data:`._registry.METRICS`.

:data:`._registry.METRICS` holds the ``(loss, uncertainty)`` areas, lower is better, and the
pipeline's summary adds a column per entry; the other metrics a failure-detection paper reports
(fd-shifts and torch-uncertainty report them side by side) differ in direction (an AUROC is
higher-is-better) and some in inputs (the balanced-accuracy areas read the labels, the
calibration metrics the class probabilities), so they live here with both said, and the
pipeline's outputs stay as they are.
"""

from collections.abc import Callable
from typing import NamedTuple

from ._calibration import (
    adaptive_calibration_error,
    brier_score,
    expected_calibration_error,
    maximum_calibration_error,
    negative_log_likelihood,
)
from ._failure import (
    augrc_ba,
    aurc_achievable,
    aurc_ba,
    failure_aupr,
    failure_auroc,
    fpr_at_tpr,
)

__all__ = ["FAILURE_METRICS", "FailureMetric", "get_failure_metric"]

#: The inputs of a metric of the 0/1 loss and the score.
LOSS_INPUTS = ("loss", "uncertainty")
#: The inputs of a metric of the labels and the score.
LABEL_INPUTS = ("y_true", "y_pred", "uncertainty")
#: The inputs of a calibration metric: the class probabilities and the labels.
PROBABILITY_INPUTS = ("probabilities", "y_true")


class FailureMetric(NamedTuple):
    """A registered failure-detection metric: ``function(*inputs) -> float`` and how to read it.

    .. versionadded:: 0.7.0

    Parameters
    ----------
    function : callable
        Called with the arrays named by ``inputs``, in that order.
    label : str
        The name tables show, e.g. ``"FPR@95TPR"``.
    description : str
        One line saying what the metric measures and who reports it.
    higher_is_better : bool
        The direction of a better detector.
    inputs : tuple of str
        ``("loss", "uncertainty")``, ``("y_true", "y_pred", "uncertainty")`` or
        ``("probabilities", "y_true")``.

    Examples
    --------
    >>> metric = FAILURE_METRICS["failure_auroc"]
    >>> metric.label, metric.higher_is_better, metric.function([0, 1], [0.2, 0.7])
    ('AUROC_f', True, 1.0)
    """

    function: Callable
    label: str
    description: str
    higher_is_better: bool
    inputs: tuple[str, ...]


def failure_aupr_error(loss, uncertainty):
    """:func:`failure_aupr` with the errors as positives (fd-shifts' ``failap_err``)."""
    return failure_aupr(loss, uncertainty, positive="error")


def failure_aupr_success(loss, uncertainty):
    """:func:`failure_aupr` with the successes as positives (fd-shifts' ``failap_suc``)."""
    return failure_aupr(loss, uncertainty, positive="success")


def fpr_at_95_tpr(loss, uncertainty):
    """:func:`fpr_at_tpr` at 95 % TPR, every distinct score a threshold."""
    return fpr_at_tpr(loss, uncertainty, tpr=0.95)


#: Failure-detection metrics by name, each with its direction and inputs.
FAILURE_METRICS = {
    "failure_auroc": FailureMetric(
        failure_auroc,
        "AUROC_f",
        "AUROC of the score detecting the errors, ties as midranks (fd-shifts failauc)",
        True,
        LOSS_INPUTS,
    ),
    "fpr_at_95_tpr": FailureMetric(
        fpr_at_95_tpr,
        "FPR@95TPR",
        "share of errors accepted when 95 % of successes are (fd-shifts, torch-uncertainty)",
        False,
        LOSS_INPUTS,
    ),
    "failure_aupr_error": FailureMetric(
        failure_aupr_error,
        "AUPR-Error",
        "average precision, errors positive (fd-shifts failap_err)",
        True,
        LOSS_INPUTS,
    ),
    "failure_aupr_success": FailureMetric(
        failure_aupr_success,
        "AUPR-Success",
        "average precision, successes positive (fd-shifts failap_suc)",
        True,
        LOSS_INPUTS,
    ),
    "aurc_achievable": FailureMetric(
        aurc_achievable,
        "AURC (achievable)",
        "AURC over the ROC convex hull's thresholds (fd-shifts aurc_achievable)",
        False,
        LOSS_INPUTS,
    ),
    "aurc_ba": FailureMetric(
        aurc_ba,
        "AURC-BA",
        "AURC with risk 1 - balanced accuracy of the accepted rows (fd-shifts aurc_ba)",
        False,
        LABEL_INPUTS,
    ),
    "augrc_ba": FailureMetric(
        augrc_ba,
        "AUGRC-BA",
        "AUGRC of the errors weighted by inverse class prevalence (fd-shifts augrc_ba)",
        False,
        LABEL_INPUTS,
    ),
    "ece": FailureMetric(
        expected_calibration_error,
        "ECE",
        "expected calibration error of the top-label confidence, equal-width bins",
        False,
        PROBABILITY_INPUTS,
    ),
    "mce": FailureMetric(
        maximum_calibration_error,
        "MCE",
        "maximum calibration error over the equal-width bins",
        False,
        PROBABILITY_INPUTS,
    ),
    "adaptive_ece": FailureMetric(
        adaptive_calibration_error,
        "Adaptive ECE",
        "expected calibration error over equal-mass bins",
        False,
        PROBABILITY_INPUTS,
    ),
    "brier": FailureMetric(
        brier_score,
        "Brier",
        "mean squared distance of the probabilities from the one-hot label",
        False,
        PROBABILITY_INPUTS,
    ),
    "nll": FailureMetric(
        negative_log_likelihood,
        "NLL",
        "mean negative log probability of the true class",
        False,
        PROBABILITY_INPUTS,
    ),
}


def get_failure_metric(name):
    """The :class:`FailureMetric` registered under ``name`` in :data:`FAILURE_METRICS`.

    .. versionadded:: 0.7.0

    Parameters
    ----------
    name : str
        A key of :data:`FAILURE_METRICS`.

    Returns
    -------
    FailureMetric

    Raises
    ------
    ValueError
        For an unknown name; the message lists the valid names.

    Examples
    --------
    >>> get_failure_metric("aurc_ba").inputs
    ('y_true', 'y_pred', 'uncertainty')
    """
    if isinstance(name, str) and name in FAILURE_METRICS:
        return FAILURE_METRICS[name]
    raise ValueError(
        f"{name!r} is not a failure metric name; valid names are "
        f"{', '.join(map(repr, FAILURE_METRICS))}"
    )
