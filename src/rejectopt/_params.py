"""Internal: the parameter-constraint table, in the spirit of scikit-learn's ``_parameter_constraints``.

Each owner (an estimator, a module of public functions) declares its scalar parameters and options
once, in a table that maps a name to the kinds of value it allows (:class:`Interval`,
:class:`Options`, :data:`NONE`, :data:`CALLABLE`, :class:`HasMethods`, :class:`InstanceOf`);
:func:`validate_params` checks the values against it and words every refusal alike: "<owner>:
<name> must be <what>, got <value>". Apart from :mod:`rejectopt._checks` (the array checks, and the
one (0, 1) check that words an open unit interval), whose direction of import is this one only.
"""

from __future__ import annotations

import numbers
import reprlib
from collections.abc import Mapping
from typing import Any

import numpy as np

from ._checks import CONFIDENCE_MIN, CONFIDENCE_RANGE, check_confidence, check_open_unit
from .exceptions import InvalidParameterError

__all__ = [
    "CALLABLE",
    "CONFIDENCE",
    "NONE",
    "SEED",
    "Constraint",
    "HasMethods",
    "InstanceOf",
    "Interval",
    "Options",
    "as_real",
    "format_level",
    "validate_params",
]


def _is_real(value: Any) -> bool:
    """A real number that is not a bool (``True`` as a level or a count is a slip, not 1)."""
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))


class Constraint:
    """One kind of value a parameter may take: :meth:`accepts` it, and :meth:`describe` says it.

    ``label`` replaces the generated description where the owner's words say more (``"a number of
    folds >= 2"`` rather than ``"an integer >= 2"``).
    """

    label: str | None = None

    def accepts(self, value: Any) -> bool:
        raise NotImplementedError

    def describe(self) -> str:
        return self.label or self._describe()

    def _describe(self) -> str:
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<{type(self).__name__}: {self.describe()}>"


class Interval(Constraint):
    """A finite real number (or an ``integer``) between ``low`` and ``high`` (None: unbounded there).

    ``closed`` is ``"neither"``, ``"left"``, ``"right"`` or ``"both"``: which ends belong to it.
    NaN and infinities lie in no interval (a level, a cost or a count is finite); bools are no
    numbers.

    >>> Interval(0, 1, closed="right").describe(), Interval(1, None, integer=True, closed="left").describe()
    ('a number in (0, 1]', 'an integer >= 1')
    """

    def __init__(
        self,
        low: float | None = None,
        high: float | None = None,
        *,
        closed: str = "neither",
        integer: bool = False,
        label: str | None = None,
    ) -> None:
        if closed not in ("neither", "left", "right", "both"):
            raise ValueError(f"closed must be 'neither', 'left', 'right' or 'both', got {closed!r}")
        self.low, self.high, self.closed, self.integer, self.label = (
            low,
            high,
            closed,
            integer,
            label,
        )

    @property
    def is_open_unit(self) -> bool:
        """The open interval (0, 1) of real numbers: levels, fractions, priors (:func:`check_open_unit`)."""
        return (self.low, self.high, self.closed, self.integer) == (0, 1, "neither", False)

    def accepts(self, value: Any) -> bool:
        if not (_is_real(value) and (isinstance(value, numbers.Integral) or not self.integer)):
            return False
        number = float(value)
        if not np.isfinite(number):
            return False
        left_closed, right_closed = (
            self.closed in ("left", "both"),
            self.closed in ("right", "both"),
        )
        if self.low is not None and not (number >= self.low if left_closed else number > self.low):
            return False
        return self.high is None or (number <= self.high if right_closed else number < self.high)

    def _describe(self) -> str:
        kind = "an integer" if self.integer else "a finite number"
        left_closed, right_closed = (
            self.closed in ("left", "both"),
            self.closed in ("right", "both"),
        )
        if self.low is not None and self.high is not None:
            ends = f"{'[' if left_closed else '('}{self.low:g}, {self.high:g}{']' if right_closed else ')'}"
            return f"{'an integer' if self.integer else 'a number'} in {ends}"
        if self.low is not None:
            return f"{kind} {'>=' if left_closed else '>'} {self.low:g}"
        if self.high is not None:
            return f"{kind} {'<=' if right_closed else '<'} {self.high:g}"
        return kind


class Options(Constraint):
    """One of a few fixed values, compared with ``==`` (but ``True`` is not ``1``).

    >>> Options("hash", "sequential").describe()
    "one of 'hash', 'sequential'"
    """

    def __init__(self, *values: Any, label: str | None = None) -> None:
        self.values, self.label = values, label

    def accepts(self, value: Any) -> bool:
        for option in self.values:
            if isinstance(value, (bool, np.bool_)) != isinstance(option, bool):
                continue
            try:
                if bool(value == option):
                    return True
            except (TypeError, ValueError):  # an array compares elementwise
                continue
        return False

    def _describe(self) -> str:
        return f"one of {', '.join(map(repr, self.values))}"


class _NoneConstraint(Constraint):
    def __init__(self, label: str | None = None) -> None:
        self.label = label

    def accepts(self, value: Any) -> bool:
        return value is None

    def _describe(self) -> str:
        return "None"

    def __call__(self, label: str) -> _NoneConstraint:
        """The same constraint, said in the owner's words (``NONE("None (a held-out split)")``)."""
        return _NoneConstraint(label)


class _CallableConstraint(Constraint):
    def accepts(self, value: Any) -> bool:
        return callable(value)

    def _describe(self) -> str:
        return "a callable"


#: The parameter may be None (a default worked out at fit time, or "not asked for").
NONE = _NoneConstraint()
#: The parameter is a function (a progress callback, a score).
CALLABLE = _CallableConstraint()


class _SeedConstraint(Constraint):
    """What :func:`numpy.random.default_rng` takes: None, an integer >= 0, a sequence of them, a
    SeedSequence, a BitGenerator or a Generator (a bool is a slip, not a seed)."""

    def accepts(self, value: Any) -> bool:
        if isinstance(value, (bool, np.bool_)):
            return False
        try:
            np.random.default_rng(value)  # a Generator is returned as given: no state is drawn
        except (TypeError, ValueError):
            return False
        return True

    def _describe(self) -> str:
        return "None, an integer >= 0 or a numpy SeedSequence, BitGenerator or Generator"


#: The parameter seeds :func:`numpy.random.default_rng` (a ``random_state`` of the metrics).
SEED = _SeedConstraint()


class HasMethods(Constraint):
    """An object with these methods (a splitter, an estimator): duck-typed, as scikit-learn's objects are."""

    def __init__(self, *methods: str, label: str | None = None) -> None:
        self.methods, self.label = methods, label

    def accepts(self, value: Any) -> bool:
        return not isinstance(value, (str, bytes)) and all(
            callable(getattr(value, m, None)) for m in self.methods
        )

    def _describe(self) -> str:
        return f"an object with the method(s) {', '.join(self.methods)}"


class InstanceOf(Constraint):
    """An instance of one of ``types``."""

    def __init__(self, *types: type, label: str | None = None) -> None:
        self.types, self.label = types, label

    def accepts(self, value: Any) -> bool:
        return isinstance(value, self.types)

    def _describe(self) -> str:
        return f"an instance of {' or '.join(t.__name__ for t in self.types)}"


class _ConfidenceConstraint(Interval):
    """A level ``1 - delta`` in [CONFIDENCE_MIN, 1): what :func:`check_confidence` accepts, so that
    every table's confidence entry and the targets' own check give one range and one wording."""

    def __init__(self) -> None:
        super().__init__(CONFIDENCE_MIN, 1, closed="left", label=f"a level in {CONFIDENCE_RANGE}")

    def accepts(self, value: Any) -> bool:
        return _is_real(value) and super().accepts(value)


#: The confidence entry of every parameter table (the certified fits, the metrics, the bands and
#: tests of :mod:`rejectopt.stats`, :mod:`rejectopt.selective`, the estimator): one range, whose
#: ends :data:`rejectopt._checks.CONFIDENCE_MIN` explains.
CONFIDENCE = _ConfidenceConstraint()


def format_level(level: float) -> str:
    """A level as a statement prints it: ``:g``, unless that would read as 1 or 0 (then in full).

    A confidence of 0.9999999999999999 is a level below 1; "confidence 1" would state a certainty.

    >>> format_level(0.95), format_level(0.9999999999999999)
    ('0.95', '0.9999999999999999')
    """
    text = f"{level:g}"
    return repr(float(level)) if text in ("1", "0") else text


def validate_params(owner: str, values: Mapping[str, Any], constraints: Mapping[str, Any]) -> None:
    """Check each parameter of ``values`` named in ``constraints`` against its allowed kinds.

    ``constraints`` maps a parameter's name to one :class:`Constraint` or a list of them (the value
    must satisfy one); names it holds but ``values`` lacks are skipped, so that the functions of a
    module share one table. A refusal is an :class:`~rejectopt.exceptions.InvalidParameterError` (a
    ValueError and a TypeError) naming ``owner``, the parameter, what it allows and what it got; an
    open (0, 1) interval is worded as :func:`check_open_unit` words it.

    >>> table = {"n_jobs": [NONE, Interval(1, None, integer=True, closed="left")]}
    >>> validate_params("fit", {"n_jobs": 2}, table)
    >>> validate_params("fit", {"n_jobs": 0}, table)
    Traceback (most recent call last):
    rejectopt.exceptions.InvalidParameterError: fit: n_jobs must be None or an integer >= 1, got 0
    >>> validate_params("fit", {"level": 1.0}, {"level": Interval(0, 1)})
    Traceback (most recent call last):
    rejectopt.exceptions.InvalidParameterError: fit: level must lie in (0, 1), got 1
    """
    for name, allowed in constraints.items():
        if name not in values:  # a table shared by several functions, each checking its own
            continue
        kinds = list(allowed) if isinstance(allowed, (list, tuple)) else [allowed]
        value = values[name]
        if any(kind.accepts(value) for kind in kinds):
            continue
        others = [kind for kind in kinds if not isinstance(kind, _NoneConstraint)]
        level = len(others) == 1 and isinstance(others[0], _ConfidenceConstraint)
        if level or (
            len(others) == 1 and isinstance(others[0], Interval) and others[0].is_open_unit
        ):
            hint = " or None" if len(kinds) > 1 else ""
            try:
                check_open_unit(value, name, hint=hint)  # outside (0, 1): worded as every level
                if level:  # inside, but too small for the computations: naming the usable range
                    check_confidence(value, name)
            except ValueError as err:
                raise InvalidParameterError(f"{owner}: {err}") from None
        texts = [kind.describe() for kind in kinds]
        expected = texts[0] if len(texts) == 1 else f"{', '.join(texts[:-1])} or {texts[-1]}"
        raise InvalidParameterError(f"{owner}: {name} must be {expected}, got {_shown(value)}")


def _shown(value: Any) -> str:
    """A refused value as the message shows it: numbers plainly (``1.5``, not ``np.float64(1.5)``)."""
    if _is_real(value):
        return str(int(value)) if isinstance(value, numbers.Integral) else repr(float(value))
    return reprlib.repr(value)


def as_real(value: Any) -> Any:
    """``value`` as ``float()`` reads it when it is no real number but reads as one, else as given.

    The older checks of a few parameters (a coverage, a risk, a rate bound, a cost, a loss bound)
    read them with ``float()``, which takes text such as ``"0.5"`` and a one-element array: what
    they accepted stays accepted. A bool, and anything ``float()`` refuses, is returned as given,
    for the table to refuse in its words.

    >>> as_real("0.5"), as_real(np.array(0.25)), as_real(True), as_real("half")
    (0.5, 0.25, True, 'half')
    """
    if _is_real(value) or isinstance(value, (bool, np.bool_)):
        return value
    try:
        return float(value)
    except (TypeError, ValueError, OverflowError):
        return value
