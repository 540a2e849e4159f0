"""The randomized Bayes selection function ``(a, nu)`` of eq. 25 and how it breaks ties.

Its public home is :mod:`rejectopt.selective` (users import it there; pickles and the API
reference name it there). It is written here, apart from the rules that fit it, because it is a
concept of its own (a threshold, a tie probability, a tie-breaking draw) that model files, the
estimator and every rule read.
"""

from __future__ import annotations

import math
import numbers
import reprlib
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

__all__ = ["TIE_BREAKING", "SelectionFunction", "check_tie_breaking"]


# --------------------------------------------------------------------------------------------
# The selection function
# --------------------------------------------------------------------------------------------
#: How inputs tied at the threshold are drawn (eq. 25): see :meth:`SelectionFunction.accept`.
TIE_BREAKING = ("hash", "sequential")
_MASK64 = (1 << 64) - 1


def check_tie_breaking(tie_breaking: str) -> None:
    """ValueError unless ``tie_breaking`` is one of :data:`TIE_BREAKING` (a model file's, a parameter)."""
    if tie_breaking not in TIE_BREAKING:
        raise ValueError(
            f"tie_breaking must be one of {', '.join(map(repr, TIE_BREAKING))}; got {tie_breaking!r}"
        )


def _splitmix64(values):
    """SplitMix64 finaliser on a uint64 array (wrapping arithmetic)."""
    values = values + np.uint64(0x9E3779B97F4A7C15)
    values = (values ^ (values >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    values = (values ^ (values >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return values ^ (values >> np.uint64(31))


def _row_uniforms(X: np.ndarray, seed: int) -> np.ndarray:
    """Uniform [0, 1) per row, a function of the row and ``seed``: ``"hash"`` decides copies alike."""
    bits = np.ascontiguousarray(np.asarray(X, dtype=np.float64) + 0.0).view(
        np.uint64
    )  # + 0.0: -0.0 -> 0.0
    with np.errstate(over="ignore"):
        state = _splitmix64(np.full(bits.shape[0], np.uint64(seed & _MASK64)))
        for j in range(bits.shape[1]):
            state = _splitmix64(state ^ bits[:, j])
    return (state >> np.uint64(11)).astype(np.float64) * 2.0**-53


@dataclass(frozen=True)
class SelectionFunction:
    """Randomized Bayes selection function on an uncertainty score (eq. 25; ties: eqs. 15, 23).

    Parameters
    ----------
    threshold : float
        Decision threshold ``a`` (gamma in eq. 15, beta in eq. 23). May be ``+inf`` (accept
        everything) or ``-inf`` (reject everything), never NaN.
    accept_prob : float
        Acceptance probability ``nu`` in [0, 1] at exact ties ``s == threshold`` (tau in
        eq. 16, kappa in eq. 24).

    Examples
    --------
    >>> selection = SelectionFunction(threshold=0.4, accept_prob=0.5)
    >>> selection.acceptance_probability([0.1, 0.4, 0.9])
    array([1. , 0.5, 0. ])
    >>> selection.to_dict()
    {'threshold': 0.4, 'accept_prob': 0.5}
    """

    threshold: float
    accept_prob: float

    def __post_init__(self) -> None:
        threshold = float(self.threshold)
        accept_prob = float(self.accept_prob)
        if math.isnan(threshold):
            raise ValueError("SelectionFunction: threshold must not be NaN")
        if not 0.0 <= accept_prob <= 1.0:
            raise ValueError(
                f"SelectionFunction: accept_prob must lie in [0, 1], got {self.accept_prob!r}"
            )
        object.__setattr__(self, "threshold", threshold)
        object.__setattr__(self, "accept_prob", accept_prob)

    def acceptance_probability(self, uncertainty: Any) -> np.ndarray:
        """Probability c(x) of accepting each input: 1, ``accept_prob`` or 0 (eq. 25).

        Parameters
        ----------
        uncertainty : array_like of float
            Uncertainty scores ``s(x)``; NaN raises ValueError.

        Returns
        -------
        numpy.ndarray of float, same shape as ``uncertainty``.
        """
        s = _as_finite_or_inf_array(uncertainty, "uncertainty")
        prob = np.where(s < self.threshold, 1.0, 0.0)
        prob[s == self.threshold] = self.accept_prob
        return prob

    def accept(
        self,
        uncertainty: Any,
        random_state: Any = None,
        *,
        tie_breaking: str = "sequential",
        rows: Any = None,
    ) -> np.ndarray:
        """Draw accept/reject decisions, random only at ties ``s == threshold``.

        The one home of tie-breaking (:func:`rejectopt.model.decide` draws here too).

        Parameters
        ----------
        uncertainty : array_like of float
            Uncertainty scores ``s(x)``.
        random_state : None, int, or numpy.random.Generator
            Seed or generator for the boundary draws; an int with ``tie_breaking="hash"``.
        tie_breaking : {"sequential", "hash"}, default="sequential"
            ``"sequential"``: one seeded draw per tied input, in row order (``apply``'s).
            ``"hash"``: from the input's own values (``rows``) and the seed, so every copy of
            an input is decided alike, in any batch and order.
        rows : array_like of shape (n, d) or None, default=None
            The inputs ``"hash"`` reads; required with it.

        Returns
        -------
        numpy.ndarray of bool
            True where the prediction is accepted.
        """
        check_tie_breaking(tie_breaking)
        if tie_breaking == "hash" and rows is None:
            raise ValueError('tie_breaking="hash" draws from the inputs: pass rows')
        s = _as_finite_or_inf_array(uncertainty, "uncertainty")
        accepted = s < self.threshold
        ties = s == self.threshold
        n_ties = int(ties.sum())
        if n_ties and self.accept_prob >= 1.0:
            accepted[ties] = True
        elif n_ties and self.accept_prob > 0.0:
            if tie_breaking == "hash":
                draws = _row_uniforms(np.asarray(rows)[ties], random_state)
            else:
                draws = np.random.default_rng(random_state).random(n_ties)
            accepted[ties] = draws < self.accept_prob
        return accepted

    def to_dict(self) -> dict[str, Any]:
        """JSON-able dict; infinite thresholds are written as the strings ``"inf"``/``"-inf"``."""
        data = asdict(self)
        if math.isinf(self.threshold):
            data["threshold"] = "inf" if self.threshold > 0 else "-inf"
        return data

    @classmethod
    def from_dict(
        cls, data: dict[str, Any], *, name: str = "SelectionFunction"
    ) -> SelectionFunction:
        """Inverse of :meth:`to_dict`, for untrusted input (e.g. hand-edited JSON).

        Exactly the keys ``threshold`` (number, ``"inf"`` or ``"-inf"``) and ``accept_prob``
        (in [0, 1]); ``name`` prefixes field names in the messages.

        Raises
        ------
        ValueError
            Naming the missing, unknown or malformed field.
        """
        if not isinstance(data, dict):
            raise ValueError(
                f"{name} must be an object with keys threshold and accept_prob, "
                f"got {type(data).__name__}"
            )
        missing = {"threshold", "accept_prob"} - set(data)
        if missing:
            raise ValueError(f"{name}: missing keys {sorted(missing)}")
        unknown = set(data) - {"threshold", "accept_prob"}
        if unknown:
            raise ValueError(f"{name}: unknown keys {sorted(map(str, unknown))}")
        threshold = data["threshold"]
        if isinstance(threshold, str) and threshold in ("inf", "-inf"):
            threshold = float(threshold)
        elif not _is_real_number(threshold) or not math.isfinite(float(threshold)):
            raise ValueError(
                f'{name}.threshold must be a finite number, "inf" or "-inf", '
                f"got {reprlib.repr(threshold)}"
            )
        accept_prob = data["accept_prob"]
        if not _is_real_number(accept_prob) or not 0.0 <= accept_prob <= 1.0:
            raise ValueError(
                f"{name}.accept_prob must be a number in [0, 1], got {reprlib.repr(accept_prob)}"
            )
        return cls(threshold=float(threshold), accept_prob=float(accept_prob))


def _is_real_number(value: Any) -> bool:
    """True for int and float values (JSON numbers) within the float range; False for bool, str, etc."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        return False
    try:
        float(value)
    except OverflowError:  # an integer beyond the float range
        return False
    return True


def _as_finite_or_inf_array(values: Any, name: str) -> np.ndarray:
    arr = np.asarray(values, dtype=float)
    if np.isnan(arr).any():
        raise ValueError(f"{name} contains NaN at index {int(np.flatnonzero(np.isnan(arr))[0])}")
    return arr


# its public home: pickles, reprs of the API reference and users find it there
SelectionFunction.__module__ = "rejectopt.selective"
