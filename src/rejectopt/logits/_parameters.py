"""The scalar parameters and options of :mod:`rejectopt.logits`, declared once.

:func:`fit_logits` and the baselines check their fractions, seed, temperatures, norms and method
against this one table (:func:`rejectopt._params.validate_params`): a refusal names the function,
"<function>: <name> must be <what>, got <value>". The network's outputs keep their own checks
(:func:`rejectopt.logits.check_network_outputs`).
"""

from __future__ import annotations

import math
from typing import Any

from .._params import Interval, Options, validate_params

__all__ = ["PARAMETERS", "check"]

#: Each scalar parameter of the public logits functions and what it allows.
PARAMETERS: dict[str, Any] = {
    "temperature": Interval(0, None, label="a finite number > 0"),
    "p": [
        Options(0, label="0 (no normalisation)"),
        Interval(1, None, closed="left", label="a number >= 1"),
        Options(math.inf, label="inf (the max norm)"),
    ],
    "method": Options("maxlogit", "msp"),
    "calibration_fraction": Interval(0, 1),
    "report_fraction": Interval(0, 1),
    "validation_fraction": Interval(0, 1),
    "seed": Interval(0, None, integer=True, closed="left"),
}


def check(owner: str, **values: Any) -> tuple[Any, ...]:
    """Refuse a value outside :data:`PARAMETERS`, naming ``owner``; return the values in order."""
    validate_params(owner, values, PARAMETERS)
    return tuple(values.values())
