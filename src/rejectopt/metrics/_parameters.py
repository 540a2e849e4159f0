"""The scalar parameters and options of :mod:`rejectopt.metrics`, declared once.

Every public metric checks its scalars against this one table (:func:`rejectopt._params.validate_params`),
so that a ``ties``, a ``convention``, a level or a number of resamples is refused alike by every
function that takes it: "<function>: <name> must be <what>, got <value>". The arrays (losses,
uncertainties, groups) keep their own checks (:func:`rejectopt._checks.as_loss_and_uncertainty`).
"""

from __future__ import annotations

from typing import Any

from .._params import CONFIDENCE, NONE, SEED, Interval, Options, as_real, validate_params
from ._conventions import CONVENTIONS

__all__ = ["PARAMETERS", "check"]

#: Each scalar parameter of the public metrics and what it allows.
PARAMETERS: dict[str, Any] = {
    "ties": Options("index", "average"),
    "convention": Options(*CONVENTIONS),
    "coverage": Interval(0, 1, closed="right"),
    "risk": Interval(0, None, closed="left", label="a finite number >= 0 (loss units)"),
    "confidence": CONFIDENCE,  # None, where a function allows it, is not checked
    "level": Interval(0, 1),
    "loss_bound": [NONE, Interval(0, None, label="a finite number > 0")],
    "simultaneous": Options(True, False, label="True or False"),
    "n_resamples": Interval(1, None, integer=True, closed="left"),
    "random_state": SEED,
}

#: The parameters the older checks read with ``float()`` (text such as "0.5" accepted).
_READ_AS_FLOAT = ("coverage", "risk", "loss_bound")


def check(owner: str, *, optional: tuple[str, ...] = (), **values: Any) -> dict[str, Any]:
    """Refuse a value outside :data:`PARAMETERS`, naming ``owner``; return the values as read.

    ``optional`` names the parameters whose None means "not asked for" (a ``confidence``), left
    unchecked. ``coverage``, ``risk`` and ``loss_bound`` come back as floats where they were text
    or a one-element array (:func:`rejectopt._params.as_real`), the others as given.
    """
    values = {
        k: as_real(v) if k in _READ_AS_FLOAT else v
        for k, v in values.items()
        if not (k in optional and v is None)
    }
    validate_params(owner, values, PARAMETERS)
    return values
