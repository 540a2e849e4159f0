"""Number formats shared by every rendered table: one home, so all experiments print alike."""

from __future__ import annotations

import numpy as np

__all__ = ["format_number", "mean_std_cell", "pm"]


def format_number(value: float, digits: int = 2) -> str:
    """``value`` with ``digits`` decimals; ``n/a`` for None, NaN or an infinity."""
    return "n/a" if value is None or not np.isfinite(value) else f"{value:.{digits}f}"


def mean_std_cell(mean: float, std: float, digits: int, pm_sign: str, n: int, missing: str = "n/a") -> str:
    """``mean<pm_sign>std`` over ``n`` splits; the mean alone for one split or an undefined std; ``missing`` for no mean."""
    if not np.isfinite(mean):
        return missing
    return f"{mean:.{digits}f}{pm_sign}{std:.{digits}f}" if n > 1 and np.isfinite(std) else f"{mean:.{digits}f}"


def pm(mean: float, std: float) -> str:
    """``mean ± std`` with two decimals, or just the mean when the std is undefined (one split)."""
    return f"{mean:.2f} ± {std:.2f}" if np.isfinite(std) else f"{mean:.2f}"
