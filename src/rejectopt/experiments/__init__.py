"""The experiments: each one module with the same small contract.

=====================  =================================================================
module                 experiment
=====================  =================================================================
:mod:`.paper`          Tables 3a / 3b / 3c / 4 of Franc, Prusa & Voracek (2023): learned
                       scores against the classifiers' own baselines, AuRC on Tst
:mod:`.ood`            reject option with out-of-distribution inputs (the OOD seed):
                       classes held out as OOD, single and double scores
:mod:`.double_hinge`   the double-hinge SVM against post-hoc rejection (Grandvalet et al.)
:mod:`.landmarks`      facial landmarks on 300-W (Section 5.2.3)
=====================  =================================================================

The contract
------------
An experiment is a module (or any object) with these four names; :func:`check_experiment`
checks them, and :func:`load_experiments` loads a user's modules by their import paths:

``NAME : str``
    Its name: a lower-case identifier, the folder of its results
    (``results/experiments/<NAME>/`` for a user's experiment).
``settings(config: dict) -> dict``
    Its settings, read from the whole pipeline config (a built-in experiment's own block is
    ``config[NAME]``, a user's ``config["experiment_settings"][NAME]``), with defaults filled in
    and every value checked: a bad value raises ``ValueError`` naming the key.
``run_split(inputs: SplitInputs, settings: dict) -> SplitResult``
    One split of one dataset: from the staged files the pipeline already made (the prepared
    data, the splits, and where the protocol is the paper's, the trained classifiers and learned
    scores) to tidy result rows, one row per (method, setting), and optional curves.
    :class:`SplitInputs` opens what it is asked for, once.
``aggregate(rows: DataFrame, settings: dict) -> dict[str, DataFrame]``
    Every split's rows of every dataset (concatenated; the columns ``dataset`` and ``split``
    are always there) to the experiment's tables, as numbers. Rendering them (Markdown,
    LaTeX, figures) is :mod:`rejectopt.report`'s.

The pipeline runs a module of the contract split by split (:func:`run_splits` writes each
split's rows atomically as soon as it is done), then aggregates. The four built-in
experiments keep their own rules and result paths, which predate the generic ones; a user's
experiment, listed in the config key ``experiments``, runs through the generic rules of
``workflow/rules/experiments.smk`` with nothing else to write.

A user's experiment sees, in ``inputs.staged``, the files of the run's classifiers and scores for
the dataset: ``classifier/<name>`` (arrays ``y_pred``, ``baseline``, ``proba`` where the
classifier has posteriors, on every example) and ``scores/<name>`` (the learned scores' Tst
uncertainties, :func:`rejectopt.experiments.paper.score_key`). Every staged file records what it
holds and what it was made from; read a classifier file with
:func:`rejectopt.experiments.paper.load_classifier_file` (any of them with
:func:`rejectopt._io.load_npz`), which refuses a file edited, truncated or made from other data,
naming it. Its rows go to
``results/experiments/<NAME>/<dataset>/split_<k>.csv`` (:func:`run_dataset`) and its tables to
``results/experiments/<NAME>/tables/<table>.csv`` (:func:`aggregate_files`).

Helpers shared by the experiments live here once: :class:`SplitInputs`, :func:`run_splits`,
:func:`fit_classifier_then_score` and :data:`LOSS_SCALE`; method labels and number formats are
:mod:`rejectopt.report`'s.
"""

from ._contract import (
    BUILT_IN,
    LOSS_SCALE,
    SplitInputs,
    SplitResult,
    aggregate_files,
    check_experiment,
    load_experiments,
    run_dataset,
    run_splits,
    split_inputs,
)
from ._learners import fit_classifier_then_score

__all__ = [
    "BUILT_IN",
    "LOSS_SCALE",
    "SplitInputs",
    "SplitResult",
    "aggregate_files",
    "check_experiment",
    "fit_classifier_then_score",
    "load_experiments",
    "run_dataset",
    "run_splits",
    "split_inputs",
]
