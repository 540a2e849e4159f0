"""Internal (the pipeline's report): number formats shared by every rendered table: one home, so all experiments print alike."""

from __future__ import annotations

import numpy as np

__all__ = ["format_number", "mean_std_cell", "pm", "power_caveat", "table_section"]


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


def power_caveat(n_datasets: int, n_methods: int, min_pvalue: float) -> str:
    """The sentence a table or CD diagram carries when its Friedman test cannot reject at 0.05.

    ``min_pvalue`` is :func:`rejectopt.tables.friedman_min_pvalue` of ``n_datasets`` and
    ``n_methods``; the test and the Nemenyi test after it then have no power (empty when they do).
    """
    if not min_pvalue > 0.05:
        return ""
    return (f"Caveat: with N = {n_datasets} datasets and k = {n_methods} methods the Friedman test cannot reject "
            f"equivalence at 0.05 whatever the results (its smallest possible p, every dataset ranking the methods "
            f"alike, is {min_pvalue:.3f}): it and the Nemenyi test have no power here; run more datasets.")


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
    # booktabs rules (\usepackage{booktabs}), as journals ask: no vertical rules, three weights of line
    return ([f"% {title} (needs \\usepackage{{booktabs}})", f"\\begin{{tabular}}{{l{'r' * (len(header) - 1)}}}",
             "\\toprule", " & ".join(escape(h) for h in header) + " \\\\", "\\midrule"]
            + [" & ".join(escape(c) for c in r) + " \\\\" for r in body]
            + ["\\bottomrule", "\\end{tabular}"] + [f"% {n}" for n in notes] + [""])
