"""Internal: the pipeline's steps of the paper's experiment; not part of the public API (see
:mod:`rejectopt.pipeline.experiments` for the experiment contract).

The paper's experiment (Section 5.2, Tables 3a / 3b / 4; Table 3c, our XGBoost extension), as
file-in / file-out steps, one per staged rule, unaware of the workflow manager, outputs written
atomically: classifiers on Trn1 / Val1 (:func:`run_classifiers`, in ``_classifiers``),
scores on Trn2 / Val2 (:func:`run_scores`, in ``_scores``), Tst evaluation
(:func:`summarize_dataset`, in ``_summary``, its bootstrap intervals in ``_aurc_intervals``).
The steps are named here, their one import path for the workflow's scripts and the other
experiments. Other experiments reuse the staged files where their protocol is the same.

Contract: :func:`settings`, :func:`run_split`, :func:`aggregate` (:mod:`rejectopt.pipeline.tables`).
Rendering is :mod:`rejectopt.pipeline.report`'s.
"""

from __future__ import annotations

import pandas as pd

# The learners load on first use (the package's lazy attributes), so that a job that only reads
# the registries, a table or a figure job, does not import scikit-learn.
from .... import classifiers
from ....classifiers import CLASSIFIERS
from ....metrics import CONVENTIONS
from ...tables import metric_table, table_specs
from .._contract import SplitInputs, SplitResult
from ._classifiers import load_classifier_file, run_classifier, run_classifiers
from ._scores import SCORE_ERROR, SCORE_FIELDS, learn_score, run_scores, score_key
from ._summary import (
    BASE_SUMMARY_COLUMNS,
    EXTRA_METRICS,
    SUMMARY_COLUMNS,
    SUMMARY_FAILURE_METRICS,
    run_rule,
    summarize_dataset,
    tst_outcomes,
)

__all__ = [
    "NAME",
    "BASE_SUMMARY_COLUMNS",
    "EXTRA_METRICS",
    "SUMMARY_COLUMNS",
    "SUMMARY_FAILURE_METRICS",
    "aggregate",
    "run_split",
    "run_rule",
    "settings",
    "run_classifier",
    "run_classifiers",
    "load_classifier_file",
    "SCORE_ERROR",
    "SCORE_FIELDS",
    "learn_score",
    "run_scores",
    "score_key",
    "summarize_dataset",
    "tst_outcomes",
]


def __dir__():
    """The names of ``__all__``, not the private submodules and helpers the imports above add."""
    return list(__all__)


#: The experiment's name in the experiment contract (the paper's Tables 3 and 4).
NAME = "paper"


# --------------------------------------------------------------------------------------------
# The experiment contract
# --------------------------------------------------------------------------------------------
def settings(config: dict) -> dict:
    """The paper experiment's settings from the pipeline config: classifiers, scores, C grids, seed.

    Parameters
    ----------
    config : dict
        The pipeline's validated config.

    Returns
    -------
    dict
        ``classifiers`` (of every task, registry order), ``scores`` (per classifier, in its table's
        column order), ``C_classifier``, ``C_score``, ``sele_chunk_size``, ``seed``, ``aurc_convention``.

    Raises
    ------
    ValueError
        A classifier not registered, or an unknown ``aurc_convention``; the key is named.
    """
    wanted = [name for task in config.get("classifiers", {}).values() for name in task]
    unknown = [name for name in wanted if name not in CLASSIFIERS]
    if unknown:
        raise ValueError(
            f"config classifiers: {', '.join(map(repr, unknown))} "
            f"not registered (registered: {', '.join(CLASSIFIERS.names())})"
        )
    return {
        "classifiers": [name for name in CLASSIFIERS.names() if name in wanted],
        "scores": {name: list(config.get("scores", {}).get(name, ())) for name in wanted},
        "C_classifier": list(config.get("C_classifier", classifiers._training.C_GRID)),
        "C_score": list(config.get("C_score", ())),
        "sele_chunk_size": int(config.get("sele_chunk_size", 500)),
        "seed": int(config.get("seed", 0)),
        "aurc_convention": _aurc_convention(config),
    }


def _aurc_convention(config: dict) -> str:
    convention = config.get("aurc_convention", "paper")
    if convention not in CONVENTIONS:
        raise ValueError(
            f"config aurc_convention: {convention!r} is not a convention; "
            f"choose one of {', '.join(map(repr, CONVENTIONS))}"
        )
    return convention


def run_split(inputs: SplitInputs, settings: dict) -> SplitResult:
    """The Tst rows of one split (:data:`SUMMARY_COLUMNS`) from its staged classifier and score files.

    Parameters
    ----------
    inputs : rejectopt.pipeline.experiments.SplitInputs
        The split; ``staged`` gives ``classifier/<name>`` (:func:`run_classifiers`) and
        ``scores/<name>`` (:func:`run_scores`) per classifier.
    settings : dict
        :func:`settings`.

    Returns
    -------
    rejectopt.pipeline.experiments.SplitResult
        The split's rows (:func:`summarize_dataset`), no curves.
    """
    classifier_files, score_files = {}, {}
    for name in settings["classifiers"]:
        classifier_files[(name, inputs.split)] = inputs.staged_file(f"classifier/{name}")
        for score in settings["scores"].get(name, ()):
            score_files[(name, score, inputs.split)] = inputs.staged_file(f"scores/{name}")
    rows = summarize_dataset(
        inputs.dataset,
        inputs.task,
        inputs.data_path,
        inputs.splits_path,
        classifier_files,
        score_files,
        settings.get("aurc_convention", "paper"),
    )
    return SplitResult(rows)


def aggregate(rows: pd.DataFrame, settings: dict) -> dict[str, pd.DataFrame]:
    """Every split's rows to one :func:`rejectopt.pipeline.tables.metric_table` per classifier,
    keyed by name (``table3a``).

    Parameters
    ----------
    rows : pandas.DataFrame
        Every split's rows (:data:`SUMMARY_COLUMNS`).
    settings : dict
        :func:`settings`.

    Returns
    -------
    dict of str to pandas.DataFrame
        A table for each configured classifier that has rows.
    """
    specs = table_specs(settings["scores"], settings["classifiers"])
    present = set(rows["classifier"])
    return {
        name: metric_table(rows, spec) for name, spec in specs.items() if spec.classifier in present
    }
