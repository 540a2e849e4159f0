"""The scalar parameters and options of the certified fits, declared once.

:func:`fit_certified_risk`, :func:`fit_certified_coverage`, :func:`fit_certified_tpr_fpr`,
:func:`validate_target`, :func:`certification_table` and :func:`fit_certified_groups` check
their levels, methods, tails, fractions, seeds, loss bound, coverage, rate bounds, the table's
cut count and the groups' ``simultaneous`` against this one table
(:func:`rejectopt._params.validate_params`), each refusal naming the function: "<function>:
<name> must be <what>, got <value>". A target risk, whose range depends on the loss bound, is
checked by the fit that reads it.
"""

from __future__ import annotations

from typing import Any

from .._params import CALLABLE, CONFIDENCE, NONE, SEED, Interval, Options, as_real, validate_params
from ._selection import RISK_METHODS
from ._tails import RISK_TAILS

__all__ = ["PARAMETERS", "check"]


class _WholeNumber(Interval):
    """An integer >= ``low``, also written as a float (``500.0``): what ``repeats`` always took."""

    def accepts(self, value: Any) -> bool:
        return super().accepts(value) and float(value).is_integer()


#: Each scalar parameter of the certified fits and what it allows.
PARAMETERS: dict[str, Any] = {
    "confidence": CONFIDENCE,
    "method": [NONE, Options(*RISK_METHODS)],
    "tail": Options(*RISK_TAILS),
    "start_fraction": Interval(0, 1, closed="left"),
    "target_coverage": Interval(0, 1, closed="right"),
    # a floor of 1 leaves the full set only: certify its risk, with no floor
    "min_coverage": Interval(0, 1),
    "tpr_min": Interval(0, 1, closed="both"),
    "fpr_max": Interval(0, 1, closed="both"),
    "random_state": SEED,
    "loss_bound": [NONE, Interval(0, None, label="a finite number > 0")],
    "repeats": _WholeNumber(1, None, closed="left", label="an integer >= 1"),
    "calibration_fraction": Interval(0, 1),
    "progress": [NONE, CALLABLE],
    "max_cuts": [NONE, Interval(1, None, closed="left", integer=True)],
    # per-group certificates: each group's own level, or all groups' together
    "simultaneous": Options(True, False, label="True or False"),
}

#: The parameters the older checks read with ``float()`` (text such as "100" accepted): still so.
_READ_AS_FLOAT = ("loss_bound",)


def check(owner: str, **values: Any) -> tuple[Any, ...]:
    """Refuse a value outside :data:`PARAMETERS`, naming ``owner``; return the values in order.

    ``loss_bound`` comes back as :func:`rejectopt._params.as_real` reads it, the others as
    given.
    """
    values = {k: as_real(v) if k in _READ_AS_FLOAT else v for k, v in values.items()}
    validate_params(owner, values, PARAMETERS)
    return tuple(values.values())
