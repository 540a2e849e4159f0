"""The registry of the calibration metrics of class probabilities, apart from :data:`METRICS`.

:data:`rejectopt.metrics.METRICS` holds metrics of ``(loss, uncertainty)`` and adds one column per
entry to the pipeline's summary, whose outputs stay as they are; the calibration metrics take
``(probabilities, y_true)`` instead, so they are registered here, by the same kind of entry
plus the direction and the inputs a caller has to pass.
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

__all__ = ["CALIBRATION_METRICS", "CalibrationMetric"]


class CalibrationMetric(NamedTuple):
    """A registered calibration metric: ``function(probabilities, y_true) -> float``.

    Examples
    --------
    >>> metric = CALIBRATION_METRICS["brier"]
    >>> metric.label, metric.higher_is_better, metric.function([[0.9, 0.1]], [0])
    ('Brier', False, 0.019999999999999997)
    """

    name: str
    function: Callable
    label: str
    higher_is_better: bool
    inputs: tuple[str, ...]


_INPUTS = ("probabilities", "y_true")

#: Calibration metrics by name; every one is 0 at best and lower is better.
CALIBRATION_METRICS = {
    entry.name: entry
    for entry in (
        CalibrationMetric("ece", expected_calibration_error, "ECE", False, _INPUTS),
        CalibrationMetric("mce", maximum_calibration_error, "MCE", False, _INPUTS),
        CalibrationMetric(
            "adaptive_ece", adaptive_calibration_error, "Adaptive ECE", False, _INPUTS
        ),
        CalibrationMetric("brier", brier_score, "Brier", False, _INPUTS),
        CalibrationMetric("nll", negative_log_likelihood, "NLL", False, _INPUTS),
    )
}
