"""Internal (the pipeline's report): number formats shared by every rendered table: one home, so all experiments print alike."""

from __future__ import annotations

import numpy as np

__all__ = ["format_number", "mean_std_cell", "pm", "table_section"]


def format_number(value: float, digits: int = 2) -> str:
    """``value`` with ``digits`` decimals; ``n/a`` for None, NaN or an infinity.

    Parameters
    ----------
    value : float or None
        The number to print.
    digits : int, default 2
        Decimals after the point.

    Returns
    -------
    str
        The formatted number, or ``"n/a"``.
    """
    return "n/a" if value is None or not np.isfinite(value) else f"{value:.{digits}f}"


def mean_std_cell(mean: float, std: float, digits: int, pm_sign: str, n: int, missing: str = "n/a") -> str:
    """``mean<pm_sign>std`` over ``n`` splits; the mean alone for one split or an undefined std; ``missing`` for no mean."""
    if not np.isfinite(mean):
        return missing
    return f"{mean:.{digits}f}{pm_sign}{std:.{digits}f}" if n > 1 and np.isfinite(std) else f"{mean:.{digits}f}"


def pm(mean: float, std: float) -> str:
    """``mean ± std`` with two decimals, or just the mean when the std is undefined (one split)."""
    return f"{mean:.2f} ± {std:.2f}" if np.isfinite(std) else f"{mean:.2f}"


def table_section(title: str, header: list[str], body: list[list[str]], notes: list[str], fmt: str,
                  escape=None, escape_pipes: bool = False) -> list[str]:
    """One titled table with its notes, as Markdown (``fmt='md'``) or a LaTeX tabular (``'tex'``) lines.

    ``escape`` turns a cell into LaTeX (identity if None); ``escape_pipes`` escapes a literal ``|``
    in a Markdown cell (a cell that names ``|f|``).
    """
    if fmt == "md":
        def row(cells):
            return "| " + " | ".join(c.replace("|", "\\|") if escape_pipes else c for c in cells) + " |"

        return [f"### {title}", "", row(header), "|" + "---|" * len(header), *map(row, body), "", *notes, ""]
    escape = escape or (lambda cell: cell)
    return ([f"% {title}", f"\\begin{{tabular}}{{l{'r' * (len(header) - 1)}}}", "\\hline",
             " & ".join(escape(h) for h in header) + " \\\\", "\\hline"]
            + [" & ".join(escape(c) for c in r) + " \\\\" for r in body]
            + ["\\hline", "\\end{tabular}"] + [f"% {n}" for n in notes] + [""])
