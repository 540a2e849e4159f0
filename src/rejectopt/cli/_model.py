"""``apply``'s side of ``model.json``: reading it with the CLI's errors, and the decisions as a table.

The file's format, its validation and the guarded decisions are the library's
(:mod:`rejectopt.model`), shared with :class:`rejectopt.SelectiveClassifier`; here they meet
the input table's row labels and the options ``--unseen-classes`` and ``--extreme-values``.
"""

from __future__ import annotations

import logging

import numpy as np
import pandas as pd

from ..model import COEF_WARN, decide, read_model
from ._columns import out_of_range_message
from ._errors import InputError, one_line
from ._groups import group_decisions
from ._table import class_indices

__all__ = ["apply_model", "load_model"]

log = logging.getLogger(__name__)


def load_model(path):
    """Read and validate a ``model.json`` written by ``select``; returns ``(model, score, selection)``.

    Parameters
    ----------
    path : path-like
        The ``model.json`` file.

    Returns
    -------
    model : dict
        The validated file (:func:`rejectopt.model.validate_model`).
    score : rejectopt.scores._base.PerClassLinearScore
        The uncertainty score.
    selection : rejectopt.selective.SelectionFunction
        The selection function.

    Raises
    ------
    InputError
        Not a file, not JSON, or any field invalid (:func:`rejectopt.model.read_model`), naming the field.
    """
    try:
        model, score, selection = read_model(path)
    except ValueError as err:
        raise InputError(one_line(err)) from None
    coef = getattr(score, "coef_", np.zeros((0, 0)))  # a baseline has no weights
    largest = float(np.abs(coef).max()) if coef.size else 0.0
    if largest > COEF_WARN:
        c, j = np.unravel_index(int(np.abs(score.coef_).argmax()), score.coef_.shape)
        log.warning(
            "%s: score.coef[%d][%d] is %g: a learned weight is never this large (beyond %g, the score "
            "overflows on ordinary rows, which are then rejected); was the file edited?",
            path,
            c,
            j,
            score.coef_[c, j],
            COEF_WARN,
        )
    return model, score, selection


def apply_model(model, score, selection, table, unseen="error", extreme="reject", seed=0):
    """Uncertainty and accept/reject decisions for the rows of ``table`` (:func:`rejectopt.model.decide`).

    A per-group model (``model.json``'s ``groups``) decides each row by its group's threshold,
    read from the table's group column; a label ``select`` never saw raises InputError (no
    certificate covers it). Rows whose predicted class was not seen by ``select`` raise InputError
    (``unseen="error"``) or are rejected with uncertainty ``+inf`` (``"reject"``); so are
    rows with a feature value beyond :data:`rejectopt.model.FEATURE_LIMIT` (raw or
    standardised), by ``extreme``.

    Parameters
    ----------
    model, score, selection
        What :func:`load_model` returns.
    table : Table
        The rows to decide (:func:`rejectopt.cli._table.load_apply_table`).
    unseen : {"error", "reject"}, default="error"
        Rows predicting a class ``select`` never saw: an :class:`InputError`, or rejected.
    extreme : {"reject", "error"}, default="reject"
        Rows with a feature beyond the bound: rejected with a warning, or an :class:`InputError`.
    seed : int, default=0
        Seed of the randomized decisions at the threshold (``apply``'s sequential draws).

    Returns
    -------
    pandas.DataFrame
        ``row``, the predicted class, ``uncertainty``, ``acceptance_probability``, ``accept`` (0/1),
        one line per row of ``table`` in its order. ``row`` counts rows as the messages do
        (:func:`rejectopt.cli._columns.row_label`): a CSV's data rows from 1, the header not
        counted (row k is on line k + 1), an NPZ's array index from 0.
    """
    n = table.X.shape[0]
    vocabulary = model["classes"]
    pred_column = model["pred_column"]
    if vocabulary is None:
        classes, unseen_mask = np.zeros(n, dtype=np.intp), np.zeros(n, dtype=bool)
    else:
        classes, unseen_mask = class_indices(
            table.pred_keys, vocabulary, table.source, table.is_csv, pred_column, unseen
        )
    if (
        model.get("n_logits") is not None
        and table.n_logits is not None
        and table.n_logits != model["n_logits"]
    ):
        raise InputError(
            f"{table.source}: the network's outputs have {table.n_logits} logits, the model was selected "
            f"on {model['n_logits']} (model.json n_logits): apply the model to outputs of the network it "
            "was selected on"
        )
    not_trained = ~score.class_seen_[classes] & ~unseen_mask
    if not_trained.any():
        first = int(np.flatnonzero(not_trained)[0])
        log.warning(
            "%d row(s) predict a class that no training row of the score predicted (model.json "
            "score.class_seen false; first: %s, value %r): they get the unseen-class uncertainty %g, the "
            "largest training uncertainty",
            int(not_trained.sum()),
            table.where(first),
            table.pred_keys[first] if table.pred_keys is not None else None,
            score.unseen_class_score_,
        )
    decisions = decide(score, selection, table.X, classes, unseen=unseen_mask, seed=seed)
    probability, accept = decisions.acceptance_probability, decisions.accept
    if model.get("groups") is not None:  # a per-group model: each row by its group's threshold
        forced = unseen_mask | decisions.out_of_range | decisions.overflow
        probability, accept = group_decisions(model["groups"], table, decisions.uncertainty, forced)
    if decisions.overflow.any():
        log.warning(
            "%d of %d row(s) rejected because the score overflowed on them (largest |score.coef| in the model "
            "file: %g): the model rejects what it cannot score; re-run select if the file was edited",
            int(decisions.overflow.sum()),
            n,
            float(np.abs(score.coef_).max()),
        )
    extreme_mask = decisions.out_of_range
    if decisions.first_out_of_range is not None:
        first = decisions.first_out_of_range
        message = out_of_range_message(
            table.source, table.X, first, table.feature_columns, table.where(first[0])
        )
        if extreme == "error":
            raise InputError(
                f"{message} ({int(extreme_mask.sum())} row(s) in all); pass --extreme-values reject "
                "to reject such rows"
            )
        log.warning(
            "%d row(s) with values out of range (first: %s): rejected",
            int(extreme_mask.sum()),
            one_line(message),
        )
    if unseen_mask.any():
        first = int(np.flatnonzero(unseen_mask)[0])
        log.warning(
            "%d row(s) predict a class not seen by select (first: %s, value %r): rejected",
            int(unseen_mask.sum()),
            table.where(first),
            table.pred_keys[first],
        )
    columns = {"row": np.arange(1, n + 1) if table.is_csv else np.arange(n)}
    if table.pred_keys is not None:
        columns[pred_column] = table.pred_keys
    columns.update(
        uncertainty=decisions.uncertainty,
        acceptance_probability=probability,
        accept=accept.astype(int),
    )
    return pd.DataFrame(columns)
