"""Internal: the command line is a shell over the library; not part of the public API.

``python -m rejectopt select`` learns an uncertainty score (SELE or REG, eq. 37 of Franc, Prusa
& Voracek, 2023) from the features, predictions and losses of *your* classifier, and fits the
paper's randomized Bayes selection function (eq. 25) for a target coverage, selective risk,
reject cost, or an OOD target (``tpr=0.8,fpr=0.2``, ``precision=0.9,recall=0.7``, with OOD rows
marked by ``--ood-column``), certified with ``--confidence``; ``apply`` accepts or rejects new
predictions with the resulting ``model.json``; ``validate`` checks how often a certified target
fails on the user's own rows (:func:`rejectopt.targets.validate_target`). The command line is
documented by ``rejectopt --help`` and the docs.

The work is the library's: :func:`rejectopt.fitting.split_rows` and
:func:`rejectopt.fitting.fit_selective` (the code of :class:`rejectopt.SelectiveClassifier`),
:func:`rejectopt.targets.parse_target`, :func:`rejectopt.selective.operating_point`, the
intervals of :mod:`rejectopt.stats`, and :mod:`rejectopt.model` for the file, its guard and its
decisions. This package adds argument parsing (``_parser``), the commands (``_select``,
``_validate``; ``apply`` and the entry point in ``_main``) and the option checks they share
(``_options``), input tables (``_table``; a network's outputs in ``_network``; their columns in
``_columns``), the model file's errors (``_model``), output files (``_files``), the figures
(``_figures``) and the report texts (``_report``).

Errors in the input exit with status 2 and a one-line message naming the file, row and column
(or the model field); no partial output is left behind, an input is never overwritten, and an
existing output only with ``--force``.
"""

from ._main import main

# The entry point of ``rejectopt`` and ``python -m rejectopt``; the shell's parts stay in their modules.
__all__ = ["main"]


def __dir__():
    """The names of ``__all__``, not the shell's private modules."""
    return list(__all__)
