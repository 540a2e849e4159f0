"""Input checks shared by the OOD metrics and strategies (ValueErrors name the argument)."""

from __future__ import annotations

from typing import Any

import numpy as np

from .._checks import as_loss_and_uncertainty, as_ood_mask, check_1d

#: Absolute tolerance with which the rate constraints (TPR, FPR, precision) are checked, so that
#: a target equal to an attainable ratio ``k / n`` counts as met despite floating-point rounding.
CONSTRAINT_TOL = 1e-12


def as_1d(values: Any, name: str) -> np.ndarray:
    """``values`` as a non-empty 1-D array: an OOD rate needs at least one ID and one OOD row."""
    arr = check_1d(values, name)
    if arr.size == 0:
        raise ValueError(f"{name} is empty; need at least one ID and one OOD sample")
    return arr


def as_finite_1d(values: Any, name: str) -> np.ndarray:
    arr = as_1d(values, name)
    try:
        arr = arr.astype(float)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be numeric") from None
    bad = ~np.isfinite(arr)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{name} must be finite (no NaN or inf); {name}[{i}] = {arr[i]}")
    return arr


def check_lengths(**arrays: np.ndarray) -> int:
    lengths = {name: arr.shape[0] for name, arr in arrays.items()}
    if len(set(lengths.values())) > 1:
        desc = ", ".join(f"{name} has {n}" for name, n in lengths.items())
        raise ValueError(f"length mismatch: {desc}")
    return next(iter(lengths.values()))


def check_both_classes(is_ood: np.ndarray, *, need_ood: bool = True, need_id: bool = True) -> None:
    if need_id and not (~is_ood).any():
        raise ValueError(
            "is_ood marks every sample as OOD: no ID samples, TPR and risk are undefined"
        )
    if need_ood and not is_ood.any():
        raise ValueError("is_ood marks no sample as OOD: no OOD samples, FPR is undefined")


def validate(
    loss: Any,
    is_ood: Any,
    uncertainty: Any,
    *,
    need_loss: bool = True,
    need_ood: bool = True,
    uncertainty_name: str = "uncertainty",
) -> tuple[np.ndarray | None, np.ndarray, np.ndarray]:
    """Return ``(loss, is_ood, uncertainty)`` as 1-D arrays, the OOD losses set to 0.

    The loss of OOD samples is ignored (it may be NaN, e.g. when OOD samples have no label);
    the loss of every ID sample must be finite and >= 0.
    """
    is_ood = as_ood_mask(is_ood)
    uncertainty = as_finite_1d(uncertainty, uncertainty_name)
    arrays = {"is_ood": is_ood, uncertainty_name: uncertainty}
    if need_loss:
        arrays = {"loss": check_1d(loss, "loss"), **arrays}
    check_lengths(**arrays)
    check_both_classes(is_ood, need_ood=need_ood)
    if not need_loss:
        return None, is_ood, uncertainty
    # the loss of OOD rows does not count: they may have no label, hence a NaN loss
    loss_arr, _ = as_loss_and_uncertainty(
        arrays["loss"], uncertainty, ignored=is_ood, uncertainty_name=uncertainty_name
    )
    return loss_arr, is_ood, uncertainty
