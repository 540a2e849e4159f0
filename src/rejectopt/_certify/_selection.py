"""Internal: the certified selection function, its certificate, and reading one back (``model.json``)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from .._checks import check_confidence
from ..selective import SelectionFunction
from ._audit import AuditTrail

#: SGR at the same delta in 38 of the 40 cells measured on the guide's "Guarantees" page).
RISK_METHODS = ("ltt", "sgr")

#: The ``method`` a release gate's certificate records (:func:`rejectopt._certify.fit_certified_gate`):
#: an order statistic for the floor, then a fixed sequence for the risk (Learn-then-Test's
#: family-wise test) from the cut just below it, joined by a union bound;
#: its ``risk_bound`` and ``coverage_bound`` (the floor) hold *together* at ``confidence``.
JOINT_METHOD = "ltt+order-statistic"


#: The loss of one error of the project's 0/100 loss (:func:`rejectopt.metrics.per_example_loss`).
ZERO_ONE_BOUND = 100.0


@dataclass(frozen=True)
class CertifiedSelection(SelectionFunction):
    """A selection function with its guarantee: what :meth:`rejectopt.targets.Target.fit` returns with a confidence.

    Deterministic (``accept_prob`` 0 or 1). With probability at least ``confidence`` over the
    i.i.d. calibration sample, the population quantity of the target meets ``bound``: selective
    risk <= ``bound`` (a risk target, loss units), coverage >= ``bound`` (a coverage target),
    FPR <= ``bound`` and TPR >= ``coverage_bound`` (a tpr-fpr target).

    Parameters
    ----------
    threshold, accept_prob : float
        As :class:`~rejectopt.selective.SelectionFunction`.
    bound : float
        The certified bound (see above).
    confidence : float
        ``1 - delta``.
    n_calibration : int
        Calibration rows the guarantee rests on (ID and OOD rows for tpr-fpr).
    method : str
        ``"ltt"`` (Learn-then-Test fixed-sequence testing) or ``"sgr"`` for a risk target,
        :data:`JOINT_METHOD` (``"ltt+order-statistic"``) for a release gate,
        ``"order-statistic"`` for coverage, ``"order-statistic+clopper-pearson"`` for tpr-fpr.
    risk_bound : float
        ``(1 - delta)`` upper bound of the selective risk (loss units): ``bound`` for a risk
        target; for a coverage target the pointwise bound of the chosen cut's risk; NaN for tpr-fpr.
    coverage_bound : float
        ``(1 - delta)`` lower bound of the coverage (TPR for tpr-fpr): ``bound`` for a coverage
        target; for a risk target the one-sided DKW bound, valid for a data-chosen threshold;
        for a release gate the floor, which holds *together* with ``risk_bound`` at ``confidence``.
    loss_bound : float
        B, the largest loss a prediction can have, that ``risk_bound`` rests on: every tail
        scales the losses by B (the binomial tail needs losses in {0, B}, Hoeffding-Bentkus and
        the betting tail in [0, B]), so a loss above B voids the risk bound. 100 for the 0/100 loss, K - 1 for the
        MAE on K ordinal labels, a declared ``loss_bound`` otherwise. NaN where no risk bound
        rests on it: a tpr-fpr target, or a coverage target fitted without a known B.

        .. versionadded:: 0.5.0
    audit : AuditTrail or None
        What the procedure tested, in order, at which level, and why it stopped
        (:class:`~rejectopt.targets.AuditTrail`); its last rejected cut is this
        selection. None for a selection read back from ``model.json`` or a tpr-fpr target. Not
        part of the certificate, nor of equality and the repr.

    Examples
    --------
    >>> from rejectopt.targets import Target
    >>> loss = [0] * 90 + [100] * 10
    >>> selection = Target("coverage", 0.5, confidence=0.9).fit(loss, range(100))
    >>> selection.threshold, round(selection.bound, 3), selection.method, selection.loss_bound
    (56.0, 0.501, 'order-statistic', 100.0)
    """

    bound: float = float("nan")
    confidence: float = float("nan")
    n_calibration: int = 0
    method: str = ""
    risk_bound: float = float("nan")
    coverage_bound: float = float("nan")
    loss_bound: float = float("nan")
    # Not compared: a selection read back from model.json (no trail) equals the fitted one.
    audit: AuditTrail | None = field(default=None, compare=False, repr=False)

    def to_dict(self) -> dict[str, Any]:
        """The selection alone, as :meth:`SelectionFunction.to_dict` (the guarantee: :attr:`certificate`)."""
        return SelectionFunction(self.threshold, self.accept_prob).to_dict()

    @property
    def certificate(self) -> dict[str, Any]:
        """The guarantee, JSON-able (NaN as None).

        ``{bound, confidence, n_calibration, method, risk_bound, coverage_bound, loss_bound}``;
        ``model.json`` format_version 2 had all but ``loss_bound``.

        .. versionchanged:: 0.5.0
           Carries ``loss_bound``.
        """

        def number(value):
            return None if math.isnan(value) else float(value)

        return {
            "bound": number(self.bound),
            "confidence": float(self.confidence),
            "n_calibration": int(self.n_calibration),
            "method": self.method,
            "risk_bound": number(self.risk_bound),
            "coverage_bound": number(self.coverage_bound),
            "loss_bound": number(self.loss_bound),
        }


#: The keys of :attr:`CertifiedSelection.certificate` before ``loss_bound`` (``model.json`` format_version 2).
CERTIFICATE_KEYS_V2 = (
    "bound",
    "confidence",
    "n_calibration",
    "method",
    "risk_bound",
    "coverage_bound",
)
#: The keys of :attr:`CertifiedSelection.certificate` (``model.json`` format_version 3).
CERTIFICATE_KEYS = CERTIFICATE_KEYS_V2 + ("loss_bound",)


def certified_from_dict(
    selection: Any,
    certificate: Any,
    *,
    name: str = "certificate",
    format_version: int | None = None,
) -> CertifiedSelection:
    """Inverse of ``(to_dict(), certificate)``, for untrusted input (``model.json``).

    A certificate of ``model.json`` format_version 2 has no ``loss_bound``; it is read with
    ``loss_bound`` NaN. ``loss_bound`` is a finite number > 0, or null where no risk bound
    rests on it: never for a risk target's method (``"ltt"``, ``"sgr"``), never beside a
    ``risk_bound``.

    Parameters
    ----------
    selection : dict
        ``{"threshold": ..., "accept_prob": ...}``.
    certificate : dict
        :attr:`CertifiedSelection.certificate`.
    name : str, default "certificate"
        Prefix of the field names in the messages.
    format_version : {2, 3} or None, default None
        The ``model.json`` version the certificate comes from: 2 reads the keys without
        ``loss_bound`` (``CERTIFICATE_KEYS_V2``), 3 requires it (``CERTIFICATE_KEYS``);
        None reads either.

        .. versionadded:: 0.5.0

    Returns
    -------
    CertifiedSelection
        The certified selection.

    Raises
    ------
    ValueError
        Naming the missing, unknown or malformed field.

    Examples
    --------
    >>> certificate = {"bound": 5.0, "confidence": 0.9, "n_calibration": 750, "method": "ltt",
    ...                "risk_bound": 5.0, "coverage_bound": 0.4}
    >>> certified_from_dict({"threshold": 0.3, "accept_prob": 0.0}, certificate, format_version=2).loss_bound
    nan
    >>> selection = {"threshold": 0.3, "accept_prob": 0.0}
    >>> certified_from_dict(selection, certificate, format_version=3)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    ValueError: certificate.loss_bound is missing: a format_version 3 certificate records B, ...
    """
    base = SelectionFunction.from_dict(selection, name="selection")
    if format_version is None:
        recorded = isinstance(certificate, dict) and "loss_bound" in certificate
        keys = CERTIFICATE_KEYS if recorded else CERTIFICATE_KEYS_V2
    else:
        keys = CERTIFICATE_KEYS if format_version >= 3 else CERTIFICATE_KEYS_V2
    given = set(certificate) if isinstance(certificate, dict) else None
    if keys is CERTIFICATE_KEYS and given == set(CERTIFICATE_KEYS_V2):
        raise ValueError(
            f"{name}.loss_bound is missing: a format_version 3 certificate records B, the largest loss a "
            "prediction can have, that its risk bound rests on (null where none does)"
        )
    if keys is CERTIFICATE_KEYS_V2 and given == set(CERTIFICATE_KEYS):
        raise ValueError(
            f"{name}.loss_bound is not a field of a format_version {format_version} certificate "
            "(format_version 3 adds it)"
        )
    if given != set(keys):
        raise ValueError(f"{name} must be an object with keys {', '.join(sorted(keys))}")
    values = {}
    for key in ("bound", "risk_bound", "coverage_bound"):
        value = certificate[key]
        if value is None:
            value = float("nan")
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValueError(f"{name}.{key} must be a number or null, got {value!r}")
        values[key] = float(value)
    confidence = check_confidence(certificate["confidence"], f"{name}.confidence")
    n_calibration = certificate["n_calibration"]
    if isinstance(n_calibration, bool) or not isinstance(n_calibration, int) or n_calibration < 1:
        raise ValueError(f"{name}.n_calibration must be an integer >= 1, got {n_calibration!r}")
    method = certificate["method"]
    if not isinstance(method, str):
        raise ValueError(f"{name}.method must be text, got {method!r}")
    loss_bound = certificate.get("loss_bound")
    if loss_bound is None:
        values["loss_bound"] = float("nan")
        if "loss_bound" in keys and method in (*RISK_METHODS, JOINT_METHOD):
            raise ValueError(
                f"{name}.loss_bound is null but method {method!r} certifies a risk, whose bound rests on "
                "B, the largest loss a prediction can have"
            )
        if "loss_bound" in keys and not math.isnan(values["risk_bound"]):
            raise ValueError(
                f"{name}.loss_bound is null but {name}.risk_bound is {values['risk_bound']:g}: a risk "
                "bound rests on B, the largest loss a prediction can have"
            )
    elif (
        isinstance(loss_bound, bool)
        or not isinstance(loss_bound, (int, float))
        or not math.isfinite(loss_bound)
        or loss_bound <= 0
    ):
        raise ValueError(
            f"{name}.loss_bound must be a finite number > 0 (B, the largest loss a prediction can have) "
            f"or null, got {loss_bound!r}"
        )
    else:
        values["loss_bound"] = float(loss_bound)
    return CertifiedSelection(
        base.threshold,
        base.accept_prob,
        confidence=float(confidence),
        n_calibration=n_calibration,
        method=method,
        bound=values["bound"],
        risk_bound=values["risk_bound"],
        coverage_bound=values["coverage_bound"],
        loss_bound=values["loss_bound"],
    )
