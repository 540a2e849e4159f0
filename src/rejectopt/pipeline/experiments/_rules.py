"""One entry point for every experiment's per-dataset (or per-split) rule, called by one script.

The rules ``experiment_dataset`` (a user's experiment, and guarantees), ``summarize_dataset`` (the
paper's), ``ood_split``, ``double_hinge_split``, ``double_hinge_one_split`` and ``train_landmarks``
are one rule template of ``workflow/rules/experiment_rule.smk`` under their own names, inputs,
outputs and params; their one script hands Snakemake's ``input``, ``output``, ``wildcards``,
``threads`` and ``params`` to :func:`run_rule`, which finds the experiment the rule runs and calls
its own ``run_rule`` (a built-in experiment's, whose params are its library call's keywords) or,
for a user's experiment, the contract's
:func:`~rejectopt.pipeline.experiments._contract.run_dataset`. The params a rule passes are
exactly those it passed before there was one script, so that a finished run's jobs stay done.
The paper's staged rules, ``train_classifier`` and ``learn_score``, keep scripts of their own:
their files are the staged inputs every experiment reads, not an experiment's step, and Snakemake
reruns a job whose script is newer than its outputs, so on the shared script any edit of it
would rerun every finished training job, the bulk of a run's CPU.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any

from ._contract import BUILT_IN_MODULES, load_experiments, run_dataset

#: The built-in experiments' per-dataset rules by name: the experiment (:data:`BUILT_IN_MODULES`)
#: whose ``run_rule`` each one runs. The rule's name picks it, since a rule's params are what its
#: jobs are rerun on (a new one would rerun every finished job).
RULE_EXPERIMENTS = {
    "summarize_dataset": "paper",
    "ood_split": "ood",
    "double_hinge_split": "double_hinge",
    "double_hinge_one_split": "double_hinge",
    "train_landmarks": "landmarks",
}

#: The generic rule of a user's experiment (config key ``experiments``), by its wildcard.
GENERIC_RULE = "experiment_dataset"


def as_list(files) -> list:
    """A named input or output as a list: one file (a one-split rule's) comes as a plain string."""
    return [files] if isinstance(files, str) else list(files)


def rule_of(name: str) -> str | None:
    """The experiment rule a job's rule is: ``name`` itself, or the one it was imported as.

    A user's Snakefile that imports the workflow as a module renames its rules
    (``use rule * from rejectopt as rejectopt_*``): ``rejectopt_ood_split`` is ``ood_split``. The
    longest rule name that ``name`` is, ends with or starts with (after or before a ``_``) wins,
    so ``double_hinge_one_split`` is never taken for ``double_hinge_split``.

    Examples
    --------
    >>> rule_of("rejectopt_double_hinge_one_split"), rule_of("ood_table")
    ('double_hinge_one_split', None)
    """
    known = [GENERIC_RULE, *RULE_EXPERIMENTS]
    matches = [
        rule
        for rule in known
        if name == rule or name.endswith(f"_{rule}") or name.startswith(f"{rule}_")
    ]
    return max(matches, key=len) if matches else None


def run_rule(
    rule: str,
    inputs: Mapping[str, Any],
    outputs: Mapping[str, Any],
    wildcards: Mapping[str, str],
    threads: int,
    params: Mapping[str, Any],
    config: Mapping | None = None,
) -> Any:
    """Run one job of an experiment's rule: every split it names, each written when done.

    Parameters
    ----------
    rule : str
        The rule's name: a key of :data:`RULE_EXPERIMENTS`, or :data:`GENERIC_RULE`, or either
        renamed by a user's Snakefile that imports the workflow as a module (:func:`rule_of`).
    inputs, outputs, wildcards, params : mapping
        The job's named inputs, outputs, wildcards and params (Snakemake's, as dicts).
    threads : int
        The job's threads.
    config : mapping, optional
        The whole pipeline config; :data:`GENERIC_RULE` reads its ``experiments`` and the
        experiment's settings from it.

    Returns
    -------
    dict of int to SplitResult, LandmarkSplitResult or pandas.DataFrame
        What the experiment's ``run_rule`` returns: by split, as written (``train_landmarks``:
        its one split's result; ``summarize_dataset``: the dataset's summary).

    Raises
    ------
    ValueError
        A rule that runs no experiment.
    """
    known = rule_of(rule)
    if known is None:
        names = ", ".join([GENERIC_RULE, *RULE_EXPERIMENTS])
        raise ValueError(f"rule {rule!r} runs no experiment; the rules that do: {names}")
    if known == GENERIC_RULE:
        config = dict(config or {})
        experiment = load_experiments(config["experiments"])[wildcards["experiment"]]
        files = dict(enumerate(zip(as_list(outputs["rows"]), as_list(outputs["curves"]))))
        return run_dataset(
            experiment,
            config,
            wildcards["dataset"],
            params["task"],
            inputs["data"],
            inputs["splits"],
            files,
            params["staged"],
        )
    experiment = importlib.import_module(BUILT_IN_MODULES[RULE_EXPERIMENTS[known]])
    return experiment.run_rule(dict(inputs), dict(outputs), dict(wildcards), threads, dict(params))
