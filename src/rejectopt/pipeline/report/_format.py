"""Internal (the pipeline's report): number formats and the table writer (Markdown, LaTeX)
shared by every rendered table: one home, so all experiments print alike."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..tables import friedman_min_pvalue

__all__ = [
    "ALIKE_NOTE",
    "best_cells",
    "count",
    "format_number",
    "mean_std_cell",
    "pm",
    "power_caveat",
    "printed_alike",
    "table_section",
]


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


def best_cells(means, digits: int = 2) -> np.ndarray:
    """Which of a row's ``means`` (lower is better) a table prints in bold.

    Bold says which method is best as the reader sees the row, so the printed values decide (``digits``
    decimals), not the unrounded ones: every method whose printed mean equals the best printed one
    (all of them on a tie, as the ranks count ties for the best), and none when every method prints
    the same value (there is then no best to show). A missing mean (NaN) is never bold.
    """
    means = np.asarray(means, dtype=float)
    finite = np.isfinite(means)
    if not finite.any():
        return np.zeros(means.shape, dtype=bool)
    shown = np.array([float(f"{m:.{digits}f}") if ok else np.nan for m, ok in zip(means, finite)])
    best = shown == np.nanmin(shown)
    if means.size > 1 and best.all():
        return np.zeros(means.shape, dtype=bool)
    return best


def printed_alike(means, digits: int = 2) -> bool:
    """Whether every one of two or more ``means`` prints as the same value: the row :func:`best_cells` leaves plain."""
    means = np.asarray(means, dtype=float)
    return bool(means.size > 1 and np.isfinite(means).all() and not best_cells(means, digits).any())


#: The note of a table with a row :func:`best_cells` leaves plain, so that the plain row is not taken for an error.
ALIKE_NOTE = "No bold where every method prints the same mean."


def count(n: int, noun: str, plural: str | None = None) -> str:
    """``n`` and ``noun`` in agreement: ``1 dataset``, ``2 datasets`` (``plural`` when not ``noun + "s"``).

    A run of one dataset, one job or one split is normal (a demo, a custom dataset), and a sentence
    that reads "1 datasets" looks broken beside numbers that are right.
    """
    return f"{n} {noun if n == 1 else plural or noun + 's'}"


def mean_std_cell(
    mean: float, std: float, digits: int, pm_sign: str, n: int, missing: str = "n/a"
) -> str:
    """``mean<pm_sign>std`` over ``n`` splits; the mean alone for one split or an undefined std;
    ``missing`` for no mean."""
    if not np.isfinite(mean):
        return missing
    return (
        f"{mean:.{digits}f}{pm_sign}{std:.{digits}f}"
        if n > 1 and np.isfinite(std)
        else f"{mean:.{digits}f}"
    )


def pm(mean: float, std: float) -> str:
    """``mean ± std`` with two decimals, or just the mean when the std is undefined (one split)."""
    return f"{mean:.2f} ± {std:.2f}" if np.isfinite(std) else f"{mean:.2f}"


def power_caveat(n_datasets: int, n_methods: int, min_pvalue: float | None = None) -> str:
    """The sentence a table or CD diagram carries when its Friedman test cannot reject at 0.05.

    That is when the table has too few datasets (or methods) for the test to be defined at all (its
    p-value and the Nemenyi CD print ``n/a``), or when ``min_pvalue``,
    :func:`rejectopt.pipeline.tables.friedman_min_pvalue` of ``n_datasets`` and ``n_methods`` (computed when
    None), exceeds 0.05: the test and the Nemenyi test after it then have no power. Empty when they do.
    """
    if n_methods < 2:
        return (
            f"Caveat: with k = {count(n_methods, 'method')} there is nothing to rank: the Friedman and "
            "Nemenyi tests are not defined (n/a)."
        )
    if n_datasets < 2:
        return (
            f"Caveat: with N = {count(n_datasets, 'dataset')} the Friedman and Nemenyi tests are not defined "
            f"(n/a): they compare the methods' ranks across datasets, and with k = {n_methods} methods the "
            f"Friedman test can reject equivalence at 0.05 from N = {_datasets_with_power(n_methods)} on; "
            "run more datasets."
        )
    if min_pvalue is None:
        min_pvalue = friedman_min_pvalue(n_datasets, n_methods)
    if not min_pvalue > 0.05:
        return ""
    return (
        f"Caveat: with N = {n_datasets} datasets and k = {n_methods} methods the Friedman test cannot reject "
        f"equivalence at 0.05 whatever the results (its smallest possible p, every dataset ranking the methods "
        f"alike, is {min_pvalue:.3f}): it and the Nemenyi test have no power here; run more datasets."
    )


def _datasets_with_power(n_methods: int) -> int:
    """The fewest datasets with which the Friedman test over ``n_methods`` methods can reject at 0.05."""
    n = 2
    while friedman_min_pvalue(n, n_methods) > 0.05:
        n += 1
    return n


def table_section(
    title: str,
    header: list[str],
    body: list[list[str]],
    notes: list[str],
    fmt: str,
    escape=None,
    escape_pipes: bool = False,
    footer: Sequence[list[str]] = (),
) -> list[str]:
    """One titled table with its notes, as Markdown (``fmt='md'``) or LaTeX tabular (``'tex'``) lines.

    The one writer of the report's tables (the results tables, the OOD and the double-hinge
    experiments'), so that every table is laid out alike. ``escape`` turns a cell into LaTeX
    (identity if None); ``escape_pipes`` escapes a literal ``|`` in a Markdown cell (a cell that
    names ``|f|``); ``footer`` rows (the average ranks) follow the body, set apart by a rule in LaTeX.
    The lines end with an empty one: joined by newlines, the section ends with a newline.
    """
    if fmt == "md":
        return _markdown_section(title, header, [*body, *footer], notes, escape_pipes)
    return _booktabs_section(title, header, body, footer, notes, escape or (lambda cell: cell))


def _markdown_section(
    title: str, header: list[str], rows: list[list[str]], notes: list[str], escape_pipes: bool
) -> list[str]:
    """``### title``, a pipe table and the notes as lines (see :func:`table_section`)."""

    def row(cells):
        return "| " + " | ".join(c.replace("|", "\\|") if escape_pipes else c for c in cells) + " |"

    return [
        f"### {title}",
        "",
        row(header),
        "|" + "---|" * len(header),
        *map(row, rows),
        "",
        *notes,
        "",
    ]


def _booktabs_section(
    title: str,
    header: list[str],
    body: list[list[str]],
    footer: Sequence[list[str]],
    notes: list[str],
    escape,
) -> list[str]:
    """A LaTeX tabular with booktabs rules, the title and notes as comments, as lines (see :func:`table_section`)."""

    def row(cells):
        return " & ".join(escape(c) for c in cells) + " \\\\"

    # booktabs rules (\usepackage{booktabs}), as journals ask: no vertical rules, three weights of line
    return (
        [
            f"% {title} (needs \\usepackage{{booktabs}})",
            f"\\begin{{tabular}}{{l{'r' * (len(header) - 1)}}}",
            "\\toprule",
            row(header),
            "\\midrule",
            *map(row, body),
        ]
        + (["\\midrule", *map(row, footer)] if footer else [])
        + ["\\bottomrule", "\\end{tabular}", *[f"% {n}" for n in notes], ""]
    )
