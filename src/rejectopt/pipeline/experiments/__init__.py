"""The experiment contract: what a module needs to run as an experiment of the pipeline.

An experiment is a module (or any object) with these four names, the protocol
:class:`Experiment` (a type checker and an editor read it); :func:`check_experiment` checks them:

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
    scores) to tidy result rows, one row per (method, setting), and optional curves (numeric
    arrays by name). :class:`SplitInputs` opens what it is asked for, once.
``aggregate(rows: DataFrame, settings: dict) -> dict[str, DataFrame]``
    Every split's rows of every dataset (concatenated; the columns ``dataset`` and ``split``
    are always there) to the experiment's tables, as numbers. Rendering them (Markdown,
    LaTeX, figures) is the pipeline's report.

A user's experiment, listed in the config key ``experiments``, runs through the generic rules of
``workflow/rules/experiments.smk`` split by split, each split's rows written as soon as it is
done, then aggregated. The built-in experiments (the paper's tables, guarantees, OOD, double
hinge, landmarks: internal modules of this package) implement the same protocol; but for
guarantees, which runs through the generic rules, they keep their own rules and result paths,
which predate the generic ones, and those rules call the contract's split loop. OOD's, double
hinge's and landmarks' per-dataset rules are the generic rule's template
(``workflow/rules/experiment_rule.smk``) under their own names: its one script calls
``rejectopt.pipeline.run_rule``, which picks the experiment by the rule's name and calls its own
``run_rule``.

A user's experiment sees, in ``inputs.staged``, the files of the run's classifiers and scores for
the dataset: ``classifier/<name>`` (arrays ``y_pred``, ``baseline``, ``proba`` where the
classifier has posteriors, on every example) and ``scores/<name>`` (the learned scores' Tst
uncertainties, arrays ``{score}/split_{k}/uncertainty``). Every staged file records what it holds
and what it was made from. Its rows go to ``results/experiments/<NAME>/<dataset>/split_<k>.csv``,
its curves to ``split_<k>.npz`` beside them and its tables to
``results/experiments/<NAME>/tables/<table>.csv``. Risks are in percent (:data:`LOSS_SCALE`), as
in the paper's tables.

Before any job, each key of ``experiment_settings`` must be the ``NAME`` of a listed experiment
and each ``settings(config)`` must return a dict. What ``run_split`` and ``aggregate`` return is
checked against the types above (an error names the experiment, the dataset and split, and this
contract); a ``dataset`` or ``split`` column of the rows' own must hold the split's value; a NaN
cell is written as an empty cell, with a warning. An experiment is trusted code: it runs in the
pipeline's jobs with the user's permissions and may read and write any file.
"""

from ._contract import LOSS_SCALE, Experiment, SplitInputs, SplitResult, check_experiment

__all__ = ["LOSS_SCALE", "Experiment", "SplitInputs", "SplitResult", "check_experiment"]


def __dir__():
    """The names of ``__all__``, not the private submodules and helpers the imports above add."""
    return list(__all__)
