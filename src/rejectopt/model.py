"""A fitted selective model: its ``model.json``, the guard on the rows it decides on, its decisions.

``python -m rejectopt apply`` and :class:`rejectopt.SelectiveClassifier` both decide through
:func:`decide`, so they reject the same rows. A feature beyond :data:`FEATURE_LIMIT` (raw or
standardised), NaN or infinite, or an unseen predicted class gets uncertainty ``+inf``: else a
linear score (eq. 37 of Franc, Prusa & Voracek, 2023) of 1e308 is any number. Training rows
with such values are refused: a score fitted on them says nothing about the others.

``model.json`` is plain JSON (no pickle: loading cannot run code), every field checked
(:func:`validate_model`), so a damaged file is refused naming the field, not decided on.
"""

from __future__ import annotations

import json
import reprlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import numpy as np

from ._certify import (
    JOINT_METHOD,
    RISK_METHODS,
    ZERO_ONE_BOUND,
    CertifiedSelection,
    certified_from_dict,
)
from ._certify import gate_statement as gate_statement  # the estimator's and the CLI's home of it
from ._features import (
    FEATURE_LIMIT,
    feature_bounds,
    out_of_range,
    value_text,
)
from ._model_fields import check_extras, check_groups
from ._params import format_level
from .scores._base import PerClassLinearScore
from .scores._confidence import ConfidenceScore
from .scores._registry import call_score
from .selective import SelectionFunction, check_tie_breaking
from .targets import OODTarget, parse_target

__all__ = [
    "FEATURE_LIMIT",
    "MODEL_FORMAT_VERSION",
    "Decisions",
    "decide",
    "model_dict",
    "read_model",
    "validate_model",
]

#: The ``format_version`` this release writes; a change of the fields raises it. Version 2 adds
#: ``n_logits`` (a network's logits width K) and ``certificate`` (a certified target's guarantee);
#: version 3 (since 0.5.0) adds the certificate's ``loss_bound`` (B, the largest loss, that its
#: risk bound rests on); version 4 (since 0.8.0) adds the target's ``min_coverage``, a release
#: gate's coverage floor, certified by ``"ltt+order-statistic"``; version 5 (since 0.9.0) adds
#: ``groups``, a certified threshold per group (``select --group-column``).
MODEL_FORMAT_VERSION = 5
#: The version a release gate without groups is written in (and that reads ``min_coverage``).
_GATE_FORMAT_VERSION = 4
#: The version a model without a release gate is written in. Why not always 4: a file that
#: holds nothing format 3 lacks stays readable by the releases that read format 3, and a gate's
#: file is refused by them as "unsupported format_version 4 ... upgrade rejectopt", which says
#: what to do, rather than as a malformed target.
_GATELESS_FORMAT_VERSION = 3
#: Every ``format_version`` this release reads: a version-1 file (without ``n_logits`` and
#: ``certificate``) is read as a model without either, a version-2 certificate (without
#: ``loss_bound``) as one whose B is not recorded (``loss_bound`` NaN), a version-3 target
#: without ``min_coverage``.
_READABLE_VERSIONS = (1, 2, 3, 4, 5)
#: The ``format`` field of every ``model.json``: a file without it is not read as a model.
_MODEL_FORMAT = "rejectopt-selective-model"
#: ``pred_column`` of a model with one class-agnostic score (no predicted class).
NO_PRED = "none"
_MODEL_KEYS_V1 = (
    "format",
    "format_version",
    "feature_columns",
    "classes",
    "score",
    "selection",
    "target",
    "loss",
    "versions",
    "pred_column",
)
#: The fields of versions 2 to 4 (version 3 changes the content of ``certificate`` only, version 4
#: that of ``target``).
_MODEL_KEYS = _MODEL_KEYS_V1 + ("n_logits", "certificate")
#: Largest ``model.json`` read, refused before parsing: the largest model a learned score makes,
#: 4 million weights (K = 1,000 classes x d = 4,096 features) at about 25 bytes each, is 100 MB;
#: parsing takes about 10 times the file's size in memory, so a larger file is refused unread.
MODEL_MAX_BYTES = 100 * 2**20
#: A weight beyond this magnitude makes the linear score overflow on ordinary rows (standardised
#: features of a few units): ``apply`` would reject almost every row, so it warns.
COEF_WARN = 1e100


# --------------------------------------------------------------------------------------------
# Decisions
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Decisions:
    """What a selective model decides on each row (:func:`decide`).

    Parameters
    ----------
    uncertainty : ndarray of float
        The score ``s(x)``; ``+inf`` on a guarded row.
    accept : ndarray of bool
        True where the prediction is accepted.
    acceptance_probability : ndarray of float
        ``c(x)`` of eq. (25).
    out_of_range, overflow, unseen : ndarray of bool
        Why a row is guarded: a feature out of range (raw or standardised) or NaN; else a
        non-finite score; a predicted class the model never saw.
    first_out_of_range : tuple of (int, int) or None, default=None
        Row and column (0-based) of the first value out of range, for messages; None if none.

    Examples
    --------
    >>> import dataclasses
    >>> [field.name for field in dataclasses.fields(Decisions)][:3]
    ['uncertainty', 'accept', 'acceptance_probability']
    """

    uncertainty: np.ndarray
    accept: np.ndarray
    acceptance_probability: np.ndarray
    out_of_range: np.ndarray
    overflow: np.ndarray
    unseen: np.ndarray
    first_out_of_range: tuple[int, int] | None = None


def decide(
    score: Any,
    selection: SelectionFunction,
    X: Any,
    classes: Any,
    *,
    unseen: Any = None,
    seed: int = 0,
    tie_breaking: str = "sequential",
) -> Decisions:
    """The guarded decisions of a fitted score and selection function on the rows of ``X``.

    Parameters
    ----------
    score : object
        A fitted score with ``predict(X, classes)``.
    selection : SelectionFunction
        The selection function (eq. 25).
    X : ndarray of shape (n, d)
        Features, as the score reads them.
    classes : ndarray of int of shape (n,)
        Predicted class indices (any value on the ``unseen`` rows).
    unseen : ndarray of bool of shape (n,) or None
        Rows whose predicted class the model never saw: rejected.
    seed : int
        Seed of the threshold draws.
    tie_breaking : {"sequential", "hash"}
        See :meth:`SelectionFunction.accept`; ``"sequential"`` is ``apply``'s.

    Returns
    -------
    Decisions
        Per row, with why a row was guarded.

    Raises
    ------
    rejectopt.exceptions.ScoreError
        A non-built-in score (plugin, user instance) fails or is non-finite on an in-range
        row, naming the score and its file. Only the linear score's overflow there is a
        decision (rejected, ``overflow``): its weights are finite, so only extremes overflow.

    Examples
    --------
    A REG score and a threshold 30 accepted with probability 0.5 there: the tied row is drawn;
    the NaN row, the row beyond the limit and the row of an unseen class get ``+inf``.

    >>> import numpy as np
    >>> from rejectopt.scores import REG
    >>> from rejectopt.selective import SelectionFunction
    >>> score = REG(C=0).fit(np.array([[0.0], [1.0], [2.0], [3.0]]), np.array([0, 0, 1, 1]),
    ...                      np.array([10.0, 30.0, 20.0, 60.0]))
    >>> X = np.array([[0.0], [1.0], [np.nan], [1e200], [0.5]])
    >>> decisions = decide(score, SelectionFunction(threshold=30.0, accept_prob=0.5), X,
    ...                    np.array([0, 0, 0, 1, 0]), unseen=np.array([0, 0, 0, 0, 1], dtype=bool))
    >>> decisions.uncertainty.round(4), decisions.acceptance_probability
    (array([10., 30., inf, inf, inf]), array([1. , 0.5, 0. , 0. , 0. ]))
    >>> decisions.out_of_range, decisions.first_out_of_range
    (array([False, False,  True,  True, False]), (2, 0))
    """
    check_tie_breaking(tie_breaking)
    X = np.asarray(X, dtype=np.float64)
    n = X.shape[0]
    unseen = np.zeros(n, dtype=bool) if unseen is None else np.asarray(unseen, dtype=bool)
    extreme, first = out_of_range(X, *feature_bounds(score))
    classes = np.where(unseen, 0, np.asarray(classes)) if unseen.any() else classes
    # an out-of-range row's features are replaced before the score sees them (a NaN would stop it):
    # the row is rejected whatever its score
    X_safe = np.where(extreme[:, None], 0.0, X) if extreme.any() else X
    if isinstance(score, PerClassLinearScore):
        with np.errstate(over="ignore", invalid="ignore"):
            uncertainty = np.array(score.predict(X_safe, classes), dtype=np.float64)
    else:  # a user's score: a non-finite value on an in-range row is its defect, refused naming it
        uncertainty = np.array(
            call_score(score, "predict", X_safe, classes, n_rows=n), dtype=np.float64
        )
    overflow = ~np.isfinite(uncertainty) & ~extreme
    rejected = extreme | overflow | unseen
    uncertainty[rejected] = np.inf
    accept = (
        selection.accept(uncertainty, random_state=seed, tie_breaking=tie_breaking, rows=X_safe)
        & ~rejected
    )
    probability = np.where(rejected, 0.0, selection.acceptance_probability(uncertainty))
    return Decisions(
        uncertainty=uncertainty,
        accept=accept,
        acceptance_probability=probability,
        out_of_range=extreme,
        overflow=overflow,
        unseen=unseen,
        first_out_of_range=first,
    )


# --------------------------------------------------------------------------------------------
# model.json
# --------------------------------------------------------------------------------------------
def model_dict(
    *,
    feature_columns,
    classes,
    score,
    selection,
    target,
    loss_name,
    versions,
    pred_column,
    ood_column=None,
    n_logits=None,
    groups=None,
) -> dict:
    """The content of ``model.json`` (key order fixed: the file is byte-identical for the same input).

    .. versionchanged:: 0.5.0
       Writes ``format_version`` 3: a certified target's ``certificate`` records ``loss_bound``.

    .. versionchanged:: 0.8.0
       A release gate (a target with ``min_coverage``) is written in ``format_version`` 4; any
       other model still in 3.

    Parameters
    ----------
    feature_columns : sequence of str
        Names of the feature columns, in the order the score reads them.
    classes : list of str or None
        Predicted classes as text, in the score's weight order; None with ``pred_column`` ``"none"``.
    score, selection : PerClassLinearScore, SelectionFunction
        The fitted score and selection function (written by their ``to_dict``); a certified
        selection's guarantee goes to ``certificate`` (bound, confidence, calibration rows, method,
        risk and coverage bounds, and ``loss_bound``, the B its risk bound rests on).
    target : Target or OODTarget
        What the selection was fitted for; written ``{"kind": "coverage", "value": 0.8}`` or
        ``{"kind": "tpr-fpr", "value": {"tpr": 0.8, "fpr": 0.2}, "ood_column": "is_ood"}``.
    loss_name : str
        The loss the score learned from (``"zero_one"``, ``"mae"`` or ``"column NAME"``).
    versions : dict of str
        Versions of the libraries that fitted the model.
    pred_column : str
        Column of the predicted class in the data ``apply`` reads, or ``"none"``.
    ood_column : str or None, default=None
        Column that marked the OOD rows at ``select`` (OOD targets only; deciding ignores it).
    n_logits : int or None, default=None
        A deep network's outputs: the width K of its logits, which ``apply`` checks (the
        features may be embeddings, whose width says nothing of K).
    groups : dict or None, default=None
        Per-group certificates (``select --group-column``): the entry ``groups`` of
        ``format_version`` 5, which ``apply`` decides each row's group by.

    Returns
    -------
    dict
        JSON-able: ``json.dumps`` of it is the file.

    Examples
    --------
    >>> import numpy as np
    >>> from rejectopt.scores import REG
    >>> from rejectopt.selective import SelectionFunction
    >>> from rejectopt.targets import Target
    >>> score = REG(C=0).fit(np.eye(2), np.array([0, 1]), np.array([0.0, 100.0]))
    >>> model = model_dict(feature_columns=["a", "b"], classes=["cat", "dog"], score=score,
    ...                    selection=SelectionFunction(threshold=50.0, accept_prob=0.5),
    ...                    target=Target("coverage", 0.75), loss_name="zero_one",
    ...                    versions={"rejectopt": "1.0"}, pred_column="pred")
    >>> list(model)[:4], model["target"]
    (['format', 'format_version', 'feature_columns', 'classes'], {'kind': 'coverage', 'value': 0.75})
    >>> validate_model(model)[1]
    SelectionFunction(threshold=50.0, accept_prob=0.5)
    """
    target_entry = target.to_dict()
    if ood_column is not None:
        target_entry["ood_column"] = ood_column
    gate = getattr(target, "min_coverage", None) is not None
    version = _GATE_FORMAT_VERSION if gate else _GATELESS_FORMAT_VERSION
    model = {
        "format": _MODEL_FORMAT,
        "format_version": MODEL_FORMAT_VERSION if groups is not None else version,
        "feature_columns": list(feature_columns),
        "classes": classes,
        "score": score.to_dict(),
        "selection": selection.to_dict(),
        "target": target_entry,
        "loss": loss_name,
        "versions": versions,
        "pred_column": pred_column,
        "n_logits": n_logits,
        "certificate": selection.certificate if isinstance(selection, CertifiedSelection) else None,
    }
    return model if groups is None else {**model, "groups": groups}


def _score_of(model: Any) -> Any:
    """The fitted score of ``model["score"]``: a learned linear score, or a baseline of the logits.

    A baseline (``"kind": "baseline"``, written by ``select --score mcp``, or ``auto`` choosing
    it) reads the network's logits, one feature column per logit: ``n_logits`` must be its
    width. Files without one read as before.
    """
    entry = model["score"]
    if isinstance(entry, dict) and entry.get("kind") == "baseline":
        score = ConfidenceScore.from_dict(entry, name="score")
        if score.inputs != "logits":
            raise ValueError(
                f"score.inputs must be 'logits' (a model file's features are a network's logits "
                f"for a baseline), got {score.inputs!r}"
            )
        if model.get("n_logits") != score.n_features_in_:
            raise ValueError(
                f"score is a baseline of {score.n_features_in_} logits but n_logits is "
                f"{reprlib.repr(model.get('n_logits'))}: a baseline reads a network's logits"
            )
        return score
    score = PerClassLinearScore.from_dict(entry, name="score")
    _check_class_seen(score)
    return score


def _check_class_seen(score: PerClassLinearScore) -> None:
    """``class_seen`` false means the training rows never predicted that class: its weights are 0 and its
    intercept the unseen-class score (the largest training uncertainty); a file saying otherwise is refused."""
    for c in np.flatnonzero(~score.class_seen_):
        if np.any(score.coef_[c] != 0) or score.intercept_[c] != score.unseen_class_score_:
            raise ValueError(
                f"score.class_seen[{c}] is false (no training row predicted class {c}) but score.coef[{c}] "
                f"or score.intercept[{c}] is not that of an unseen class (zero weights, intercept "
                "score.unseen_class_score)"
            )


#: What a certified selection's bounds are to its target: (certificate field, relation, target's bound) per kind.
_CERTIFIED_BOUNDS = {
    "risk": (("bound", "<="), ("risk_bound", "<=")),
    "coverage": (("bound", ">="), ("coverage_bound", ">=")),
    "tpr-fpr": (("coverage_bound", ">=", "tpr"), ("bound", "<=", "fpr")),
}
#: Slack of the comparison, for a bound written and read back through JSON's 17 digits.
_BOUND_SLACK = 1e-12
_EDITED = "the file was edited or is corrupt: re-run select"


def _check_certificate(target: Any, selection: CertifiedSelection) -> None:
    """ValueError when a certified selection contradicts its target: what fitting never writes.

    A certified selection is deterministic (``accept_prob`` 0 or 1: its guarantee is that of a
    tested cut, the Guarantees page) and its bounds meet its target: a risk bound at most the
    target's risk, a coverage bound at least its coverage, for TPR-FPR a TPR bound at least T
    and an FPR bound at most F. Fitting raises InfeasibleTargetError rather than write otherwise,
    so a file that does has been edited or damaged; ``apply`` would decide on a guarantee that
    does not hold.
    """
    if selection.accept_prob not in (0.0, 1.0):
        raise ValueError(
            f"selection.accept_prob is {selection.accept_prob!r} but a certified selection (certificate "
            f"not null) accepts its threshold's ties all or none (0 or 1), never at random; {_EDITED}"
        )
    targets = target.as_dict() if isinstance(target, OODTarget) else None
    floor = getattr(target, "min_coverage", None)
    if floor is not None and not selection.coverage_bound >= floor - _BOUND_SLACK:
        raise ValueError(
            f"certificate.coverage_bound is {value_text(selection.coverage_bound)} but the target's "
            f"min_coverage is {floor:g}: a release gate's coverage_bound is its floor; {_EDITED}"
        )
    for entry in _CERTIFIED_BOUNDS[target.kind]:
        field, relation = entry[0], entry[1]
        value = targets[entry[2]] if targets is not None else target.value
        bound = getattr(selection, field)
        slack = _BOUND_SLACK * max(1.0, abs(value))
        ok = bound <= value + slack if relation == "<=" else bound >= value - slack
        if not ok:  # NaN too: a certified risk or coverage states its bound
            name = entry[2] if targets is not None else target.kind
            words = "at most" if relation == "<=" else "at least"
            raise ValueError(
                f"certificate.{field} is {value_text(bound)} but the target's {name} is {value:g}: a "
                f"certified selection's {field} is {words} its target's ({relation} {value:g}); {_EDITED}"
            )


def _check_loss_bound(target: Any, selection: CertifiedSelection, loss: str) -> None:
    """ValueError when a format-3 certificate's ``loss_bound`` is not the B that ``select`` records.

    ``select`` records B for a certified risk or coverage target (it refuses a loss column
    without ``--loss-bound``) and none for TPR-FPR, whose guarantee bounds no loss. B is at
    least the largest loss a prediction can have; of the losses a model names, only the 0/100
    loss's is known from the file alone (100): an MAE's K - 1 needs the label set, a column's
    the user's cost table.
    """
    bound = selection.loss_bound
    if isinstance(target, OODTarget):
        if not np.isnan(bound):
            raise ValueError(
                f"certificate.loss_bound is {bound:g} but a {target.kind} certificate bounds no loss "
                f"(loss_bound null); {_EDITED}"
            )
        return
    if np.isnan(bound):
        raise ValueError(
            f"certificate.loss_bound is null but the target is a certified {target.kind}: select records "
            f"B, the largest loss a prediction can have, that the risk bound rests on; {_EDITED}"
        )
    if loss == "zero_one" and bound < ZERO_ONE_BOUND:
        raise ValueError(
            f"certificate.loss_bound is {bound:g} but loss zero_one has losses of {ZERO_ONE_BOUND:g} (an "
            f"error, by its definition): B is at least the largest loss a prediction can have; {_EDITED}"
        )


#: The methods that certify each kind of target (what ``Target.fit`` / ``OODTarget.fit`` record).
_CERTIFYING_METHODS = {
    "risk": RISK_METHODS,
    "coverage": ("order-statistic",),
    "tpr-fpr": ("order-statistic+clopper-pearson",),
}
#: The ``loss`` of a model: the losses ``select --loss`` computes, else ``"column NAME"``.
_LOSS_NAMES = ("zero_one", "mae")
_LOSS_COLUMN = "column "


def _check_loss_name(loss: Any) -> None:
    """``loss`` is a name ``select`` writes: the scale of every risk in the file rests on it."""
    if not isinstance(loss, str):
        raise ValueError("loss must be a string")
    if loss not in _LOSS_NAMES and not (
        loss.startswith(_LOSS_COLUMN) and len(loss) > len(_LOSS_COLUMN)
    ):
        raise ValueError(
            f"loss is {reprlib.repr(loss)} but select writes 'zero_one', 'mae' or 'column NAME' "
            f"(a loss column); {_EDITED}"
        )


def _check_certificate_fields(
    target: Any, selection: CertifiedSelection, loss: str, classes: Any
) -> None:
    """ValueError when a certificate's fields disagree with one another or with the model's loss.

    What fitting records: the method of the target's kind; ``bound`` is the target's own bound
    (``risk_bound`` of a risk, ``coverage_bound`` of a coverage); coverages, TPR and FPR bounds
    lie in [0, 1]; a risk bound in [0, B]; a certified risk below B; an MAE's B at least the
    span of its classes (K - 1 for labels 0..K-1). An edited field would otherwise be read as a
    guarantee that no fit gave.
    """
    methods = _CERTIFYING_METHODS[target.kind]
    if getattr(target, "min_coverage", None) is not None:
        methods = (JOINT_METHOD,)  # a release gate: its floor is certified with its risk
    if selection.method not in methods:
        raise ValueError(
            f"certificate.method is {reprlib.repr(selection.method)} but a certified {target.kind} "
            f"target is certified by {' or '.join(map(repr, methods))}; {_EDITED}"
        )
    own = {"risk": "risk_bound", "coverage": "coverage_bound"}.get(target.kind)
    if own is not None and selection.bound != getattr(selection, own):
        raise ValueError(
            f"certificate.bound is {value_text(selection.bound)} but certificate.{own} is "
            f"{value_text(getattr(selection, own))}: a certified {target.kind}'s bound is its {own}; "
            f"{_EDITED}"
        )
    shares = ["coverage_bound"] + (["bound"] if isinstance(target, OODTarget) else [])
    for field in shares:
        value = getattr(selection, field)
        if not (np.isnan(value) or 0.0 <= value <= 1.0):
            raise ValueError(
                f"certificate.{field} is {value_text(value)} but a coverage (a share of the rows) "
                f"lies in [0, 1]; {_EDITED}"
            )
    _check_risk_scale(target, selection, loss, classes)


def _check_risk_scale(target: Any, selection: CertifiedSelection, loss: str, classes: Any) -> None:
    """A risk bound in [0, B], a certified risk below B, and an MAE's B at least its classes' span."""
    bound, risk = selection.loss_bound, selection.risk_bound
    if not np.isnan(risk) and risk < 0:
        raise ValueError(f"certificate.risk_bound is {value_text(risk)}, below 0; {_EDITED}")
    if np.isnan(bound):
        return
    if not np.isnan(risk) and risk > bound * (1 + _BOUND_SLACK):
        raise ValueError(
            f"certificate.loss_bound is {bound:g} but certificate.risk_bound is {risk:g}: a risk "
            f"bound lies in [0, B], B the largest loss; {_EDITED}"
        )
    if target.kind == "risk" and not target.value < bound:
        raise ValueError(
            f"certificate.loss_bound is {bound:g} but the target's risk is {target.value:g}: a "
            f"certified risk lies below B, the largest loss a prediction can have; {_EDITED}"
        )
    if loss == "mae" and isinstance(classes, list):
        try:
            labels = np.asarray(classes, dtype=np.float64)
        except (TypeError, ValueError):  # text labels: their K - 1 is not known from the file
            return
        span = float(np.ptp(labels)) if labels.size else 0.0
        if bound < span:
            raise ValueError(
                f"certificate.loss_bound is {bound:g} but loss mae on the classes "
                f"{reprlib.repr(classes)} has losses up to {span:g} (K - 1): B is at least the "
                f"largest loss a prediction can have; {_EDITED}"
            )


def _reject_constant(name):
    raise ValueError(f"non-standard JSON number {name}")


def _text_list(value, field, *, unique=True):
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"{field} must be a list of strings")
    if unique and len(set(value)) != len(value):
        first = next(v for i, v in enumerate(value) if v in value[:i])
        raise ValueError(f"{field} lists {first!r} twice")
    return value


def validate_model(model: Any) -> tuple[PerClassLinearScore, SelectionFunction]:
    """Check every field of a parsed ``model.json``; returns ``(score, selection)``.

    .. versionchanged:: 0.5.0
       Reads ``format_version`` 3 and still 1 and 2 (a format-2 certificate reads with
       ``loss_bound`` NaN); a format-3 certificate without a valid ``loss_bound``, or a 0/100 loss
       with a bound below 100, is refused naming ``certificate.loss_bound``.

    .. versionchanged:: 0.8.0
       Reads ``format_version`` 4, whose target may carry ``min_coverage`` (a release gate,
       method ``"ltt+order-statistic"``); a malformed floor is refused naming ``target``'s field.

    .. versionchanged:: 0.9.0
       Reads ``format_version`` 5, whose ``groups`` holds a per-group model's thresholds.

    Parameters
    ----------
    model : object
        The parsed JSON, untrusted (any value).

    Returns
    -------
    score : PerClassLinearScore
        The fitted score.
    selection : SelectionFunction
        Its selection function.

    Raises
    ------
    ValueError
        Naming the first bad field (missing, unknown, wrong type or length, not finite, ...).

    Examples
    --------
    >>> validate_model({"format": "rejectopt-selective-model", "format_version": 6})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    ValueError: unsupported format_version 6: ... 1, 2, 3, 4 and 5 (a newer rejectopt wrote it? upgrade rejectopt)
    """
    version = _check_format(model)
    score = _score_of(model)
    certificate = model.get("certificate")
    selection = (
        SelectionFunction.from_dict(model["selection"], name="selection")
        if certificate is None
        else certified_from_dict(model["selection"], certificate, format_version=version)
    )
    _check_columns(model, score)
    _check_target(model, selection, certificate, version)
    check_extras(model)
    if version >= 5:
        check_groups(model["groups"])
    return score, selection


def _check_format(model: Any) -> int:
    """The ``format_version`` of a model file, once its format, version and fields are checked."""
    if not isinstance(model, dict) or model.get("format") != _MODEL_FORMAT:
        raise ValueError(f'not a rejectopt model (expected "format": "{_MODEL_FORMAT}")')
    version = model.get("format_version")
    if isinstance(version, bool) or version not in _READABLE_VERSIONS:
        newer = (
            " (a newer rejectopt wrote it? upgrade rejectopt)"
            if isinstance(version, int)
            and not isinstance(version, bool)
            and version > MODEL_FORMAT_VERSION
            else ""
        )
        readable = [str(v) for v in _READABLE_VERSIONS]
        raise ValueError(
            f"unsupported format_version {reprlib.repr(version)}: this release reads format_version "
            f"{', '.join(readable[:-1])} and {readable[-1]}{newer}"
        )
    keys = _MODEL_KEYS_V1 if version < 2 else _MODEL_KEYS + (("groups",) if version >= 5 else ())
    missing = [k for k in keys if k not in model]
    unknown = sorted(str(k) for k in model if k not in keys)
    if missing or unknown:
        raise ValueError(
            "; ".join(
                ([f"missing field(s) {missing}"] if missing else [])
                + ([f"unknown field(s) {unknown}"] if unknown else [])
            )
        )
    return version


def _check_columns(model: Any, score: PerClassLinearScore) -> None:
    """``feature_columns``, ``pred_column`` and ``classes`` agree with each other and the score."""
    features = _text_list(model["feature_columns"], "feature_columns")
    if len(features) != score.n_features_in_:
        raise ValueError(
            f"feature_columns has {len(features)} names but score.n_features is {score.n_features_in_}"
        )
    pred_column = model["pred_column"]
    if not isinstance(pred_column, str):
        raise ValueError("pred_column must be a string")
    if pred_column in features:
        raise ValueError(f"feature_columns includes the pred_column {pred_column!r}")
    classes = model["classes"]
    if pred_column == NO_PRED:
        if classes is not None or score.n_classes_ != 1:
            raise ValueError(
                f"classes must be null and score.n_classes 1 with pred_column {NO_PRED!r}"
            )
    else:
        if classes is None:
            raise ValueError(
                f"classes is null but pred_column is {pred_column!r}: the list of predicted classes "
                "is needed to pick each row's weights"
            )
        _text_list(classes, "classes")
        if len(classes) != score.n_classes_:
            raise ValueError(
                f"classes has {len(classes)} entries but score.n_classes is {score.n_classes_}"
            )


def _check_target(
    model: Any, selection: SelectionFunction | CertifiedSelection, certificate: Any, version: int
) -> None:
    """The target parses, agrees with the certificate (or its absence), and ``loss`` is a name."""
    target = model["target"]
    if not isinstance(target, dict):
        raise ValueError(
            "target must be an object with keys kind and value (and optionally confidence)"
        )
    if target.get("kind") in OODTarget.KINDS:
        if set(target) - {"confidence"} != {"kind", "value", "ood_column"}:
            raise ValueError(
                f"target of kind {target['kind']} must be an object with keys kind, value and ood_column "
                "(and optionally confidence)"
            )
        if not isinstance(target["ood_column"], str):
            raise ValueError("target.ood_column must be a string")
        target = {k: v for k, v in target.items() if k != "ood_column"}
    if version < _GATE_FORMAT_VERSION and "min_coverage" in target:
        raise ValueError(
            f"target.min_coverage is not a field of a format_version {version} model (format_version "
            f"{_GATE_FORMAT_VERSION} adds it, a release gate's coverage floor); {_EDITED}"
        )
    parsed = parse_target(target)
    confidence = parsed.confidence
    # certified_from_dict made the selection whenever there is a certificate
    certified = None if certificate is None else cast(CertifiedSelection, selection)
    if certified is not None and confidence != certified.confidence:
        raise ValueError(
            f"certificate.confidence {format_level(certified.confidence)} differs from the target's confidence "
            f"{confidence!r}: the certificate is not that of this target"
        )
    if certificate is None and confidence is not None:
        raise ValueError(
            f"target has confidence {format_level(confidence)} (a certified target) but certificate is null"
        )
    _check_loss_name(model["loss"])
    if certified is not None:
        _check_certificate(parsed, certified)
        if version >= 3:
            _check_loss_bound(parsed, certified, model["loss"])
        _check_certificate_fields(parsed, certified, model["loss"], model["classes"])


def one_line(err: BaseException) -> str:
    """The message of ``err`` on one line, else its type's name; the command line words its errors with it too."""
    return " ".join(str(err).split()) or type(err).__name__


def _unique_keys(pairs: list) -> dict:
    """``object_pairs_hook``: a key given twice is refused (plain JSON keeps the last, silently)."""
    out = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(
                f"duplicate key {reprlib.repr(key)} in one JSON object: each field must appear once"
            )
        out[key] = value
    return out


def read_model(path: Any) -> tuple[dict, PerClassLinearScore, SelectionFunction]:
    """Read and validate a ``model.json``; returns ``(model, score, selection)``.

    A version-1 file gets ``n_logits`` and ``certificate`` null in the returned ``model``; a
    version-2 certificate gets ``loss_bound`` null (its B was not recorded).

    .. versionchanged:: 0.5.0
       Reads ``format_version`` 3 and still 1 and 2 (a format-2 certificate reads with
       ``loss_bound`` NaN); a format-3 certificate without a valid ``loss_bound``, or a 0/100 loss
       with a bound below 100, is refused naming ``certificate.loss_bound``.

    .. versionchanged:: 0.8.0
       Reads ``format_version`` 4, whose target may carry ``min_coverage`` (a release gate,
       method ``"ltt+order-statistic"``); a malformed floor is refused naming ``target``'s field.

    Parameters
    ----------
    path : str or os.PathLike
        The file ``select`` wrote.

    Returns
    -------
    model : dict
        The parsed file.
    score : PerClassLinearScore
        The fitted score.
    selection : SelectionFunction
        The fitted selection function.

    Raises
    ------
    ValueError
        Not a file, larger than :data:`MODEL_MAX_BYTES`, not JSON (also too deeply nested,
        NaN / Infinity, a key twice in one object), or an invalid field; the message starts
        with the path.

    Examples
    --------
    >>> read_model("no/such/model.json")
    Traceback (most recent call last):
        ...
    ValueError: no/such/model.json: no such file
    """
    path = Path(path)
    if path.is_dir():  # select's --out folder given for the model.json inside it
        inside = path / "model.json"
        advice = f"pass {inside}" if inside.is_file() else "pass the model.json that select wrote"
        raise ValueError(f"{path}: a folder, not a model file; {advice}")
    if not path.is_file():
        raise ValueError(f"{path}: no such file")
    size = path.stat().st_size
    if size > MODEL_MAX_BYTES:
        raise ValueError(
            f"{path}: {size / 2**20:.0f} MB is larger than a model file can be "
            f"({MODEL_MAX_BYTES / 2**20:.0f} MB, 4 million weights); refused before parsing"
        )
    try:
        model = json.loads(
            path.read_bytes(), parse_constant=_reject_constant, object_pairs_hook=_unique_keys
        )
    except RecursionError:
        raise ValueError(f"{path}: not a JSON model file (nested too deeply)") from None
    except (ValueError, OSError) as err:  # JSONDecodeError, UnicodeDecodeError, unreadable
        raise ValueError(f"{path}: not a JSON model file ({one_line(err)})") from None
    try:
        score, selection = validate_model(model)
    except ValueError as err:
        raise ValueError(f"{path}: invalid model: {one_line(err)}") from None
    model.setdefault("n_logits", None)
    model.setdefault("certificate", None)
    if model["certificate"] is not None:
        model["certificate"].setdefault("loss_bound", None)
    return model, score, selection
