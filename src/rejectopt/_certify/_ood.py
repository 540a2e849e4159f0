"""Internal: the certified TPR-FPR fit of an OOD target, TPR and FPR guaranteed together w.p. 1 - delta.

Kept apart from the risk and coverage fits (:mod:`._fits`), whose coverage cut it reuses on the
in-distribution rows; the statement and its proof: :mod:`rejectopt._certify` and the user
guide's "Guarantees" page.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._checks import as_ood_mask, as_uncertainty, renamed_argument
from .._params import format_level
from ..selective import SelectionFunction
from . import _parameters
from ._audit import accept_nothing_trail, tpr_fpr_trail
from ._fits import _certificate_error, _percent
from ._selection import CertifiedSelection
from ._tails import _coverage_lower_bound, _coverage_rank, _risk_upper_bound

__all__ = ["fit_certified_tpr_fpr"]


@renamed_argument("s", "uncertainty", since="0.6.0")
def fit_certified_tpr_fpr(
    loss: Any, is_ood: Any, uncertainty: Any, tpr_min: float, fpr_max: float, confidence: float
) -> CertifiedSelection:
    """TPR >= ``tpr_min`` and FPR <= ``fpr_max`` with probability >= ``confidence`` (union bound, delta/2 each).

    The cut is the coverage cut of the ID rows at ``tpr_min`` (the smallest certified, so the
    least OOD and, for a proper score, the least risk); its FPR is fixed given the ID rows and
    bounded by Clopper-Pearson on the independent OOD rows.

    .. versionchanged:: 0.6.0
       ``s`` is renamed ``uncertainty``; ``s=`` works for one more release, with a FutureWarning.

    Parameters
    ----------
    loss : array_like of shape (n,)
        Ignored but for its length (OOD rows' losses may be NaN).
    is_ood : array_like of bool of shape (n,)
        True for an OOD row.

        .. versionchanged:: 0.4.0
           Values other than booleans, 0 and 1 are refused.
    uncertainty : array_like of shape (n,)
        Uncertainty scores.
    tpr_min, fpr_max : float
        The bounds, in [0, 1].
    confidence : float
        1 - delta.

    Returns
    -------
    CertifiedSelection
        ``bound`` the FPR's upper bound, ``coverage_bound`` the TPR's lower bound; ``risk_bound``
        and ``loss_bound`` NaN (no loss is bounded).

    Raises
    ------
    InfeasibleTargetError
        The FPR's bound exceeds ``fpr_max``; the message gives it.
    """
    confidence, tpr_min, fpr_max = _parameters.check(
        "fit_certified_tpr_fpr", confidence=confidence, tpr_min=tpr_min, fpr_max=fpr_max
    )
    confidence, tpr_min, fpr_max = float(confidence), float(tpr_min), float(fpr_max)
    is_ood = as_ood_mask(is_ood)
    # the one check of scores the risk and coverage targets make too: 1-D, finite, exactly ordered
    s = as_uncertainty(uncertainty, exact_order=False)
    if s.shape != is_ood.shape or len(np.asarray(loss)) != s.size:
        raise ValueError(
            f"loss, is_ood and uncertainty must have one length, got {len(np.asarray(loss))}, "
            f"{is_ood.size} and {s.size}"
        )
    n_id, n_ood = int((~is_ood).sum()), int(is_ood.sum())
    if n_id == 0 or n_ood == 0:
        raise ValueError(
            f"a certified tpr-fpr target needs ID and OOD rows, got {n_id} ID and {n_ood} OOD"
        )
    delta = (1.0 - confidence) / 2
    s_id = np.sort(s[~is_ood])
    if tpr_min <= 0:  # accept nothing: FPR is 0 for every input, no draw can miss fpr <= fpr_max
        return CertifiedSelection(
            -math.inf,
            0.0,
            bound=0.0,
            confidence=confidence,
            n_calibration=int(s.size),
            method="order-statistic+clopper-pearson",
            risk_bound=float("nan"),
            coverage_bound=0.0,
            loss_bound=float("nan"),
            audit=accept_nothing_trail(n_ood, delta),
        )
    else:
        k = _coverage_rank(n_id, float(tpr_min), delta)
        if k > n_id:
            threshold, accept_prob, tpr_bound = math.inf, 1.0, 1.0
        else:
            threshold, accept_prob, tpr_bound = (
                float(s_id[k - 1]),
                1.0,
                _coverage_lower_bound(k, n_id, delta),
            )
    selection = SelectionFunction(threshold, accept_prob)
    ood_accepted = float(selection.acceptance_probability(s[is_ood]).sum())
    fpr_bound = float(_risk_upper_bound(ood_accepted, n_ood, delta, 1.0, True))
    audit = tpr_fpr_trail(s_id, k, tpr_min, delta, (ood_accepted, n_ood, fpr_max, fpr_bound))
    if fpr_bound > fpr_max:
        error = _certificate_error(
            f"target tpr={tpr_min:g},fpr={fpr_max:g} cannot be certified at confidence "
            f"{format_level(confidence)} on these {s.size} rows ({n_id} ID, {n_ood} OOD): the "
            f"threshold certifying TPR >= {tpr_min:g} accepts {int(ood_accepted)} OOD rows, whose "
            f"FPR upper bound ({_percent(delta)}) is {fpr_bound:.4g}; ask for fpr >= "
            f"{fpr_bound:.4g}, a lower tpr or confidence, or more rows",
            best_bound=fpr_bound,
            confidence=confidence,
            n_calibration=int(s.size),
            audit=audit,
        )
        raise error
    return CertifiedSelection(
        threshold,
        accept_prob,
        bound=fpr_bound,
        confidence=confidence,
        n_calibration=int(s.size),
        method="order-statistic+clopper-pearson",
        risk_bound=float("nan"),
        coverage_bound=tpr_bound,
        loss_bound=float("nan"),
        audit=audit,
    )
