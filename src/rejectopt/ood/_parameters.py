"""The scalar parameters and options of :mod:`rejectopt.ood`, declared once.

The OOD metrics and strategies check their rate targets, prior, costs and options against this one
table (:func:`rejectopt._params.validate_params`): a ``tpr_min`` or an ``ood_prior`` is refused
alike by every function that takes it, "<function>: <name> must be <what>, got <value>". The
arrays (losses, OOD masks, scores) keep their own checks (:mod:`._validation`).
"""

from __future__ import annotations

from typing import Any

from .._params import NONE, Interval, Options, as_real, validate_params

__all__ = ["PARAMETERS", "check"]

_RATE = Interval(0, 1, closed="both")
_COST = Interval(0, None, closed="left")

#: Each scalar parameter of the public OOD functions and what it allows.
PARAMETERS: dict[str, Any] = {
    "tpr_min": _RATE,
    "fpr_max": _RATE,
    "precision_min": _RATE,
    "recall_min": _RATE,
    "ood_prior": [NONE, Interval(0, 1)],
    "ccr": Options("seed", "open_set"),
    "reject_cost_id": _COST,
    "accept_cost_ood": _COST,
    "reject_cost_ood": _COST,
    "oscr_angles": Interval(0, None, integer=True, closed="left"),
}

#: The rate targets and costs were read with ``float()`` (text such as "0.5" accepted): still so.
_READ_AS_FLOAT = (
    "tpr_min",
    "fpr_max",
    "precision_min",
    "recall_min",
    "reject_cost_id",
    "accept_cost_ood",
    "reject_cost_ood",
)


def check(owner: str, **values: Any) -> tuple[Any, ...]:
    """Refuse a value outside :data:`PARAMETERS`, naming ``owner``; return the values in order.

    The rate targets and costs come back as floats, ``ood_prior`` as a float or None, the options
    as given.
    """
    values = {k: as_real(v) if k in _READ_AS_FLOAT else v for k, v in values.items()}
    validate_params(owner, values, PARAMETERS)
    return tuple(
        float(v) if k in _READ_AS_FLOAT or (k == "ood_prior" and v is not None) else v
        for k, v in values.items()
    )
