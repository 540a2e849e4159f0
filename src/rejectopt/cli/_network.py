"""Input tables of a deep network's outputs: its logits, optionally its embeddings, and the labels.

The arrays (:data:`NETWORK_ARRAYS`) or columns (:data:`NETWORK_CSV`) of the file; the prediction
is the largest logit and the features are the embeddings, or the logits when there are none or
when the score reads the logits (the class-shared scores; ``apply`` reads what ``model.json``'s
feature columns name), as :func:`rejectopt.logits.fit_logits` does.
"""

from __future__ import annotations

import logging
import re

import numpy as np

from ..logits import NetworkOutputError, check_network_outputs, predictions, softmax
from ..metrics import per_example_loss
from ._columns import Table, _check_range, _numeric_column, _require_columns, row_label
from ._errors import InputError

__all__ = [
    "NETWORK_ARRAYS",
    "NETWORK_CSV",
    "is_network_file",
    "network_apply_table",
    "network_table",
]

log = logging.getLogger(__name__)

#: The arrays of a network's outputs in an NPZ: ``logits`` (n x K, required), ``embeddings``
#: (n x d, the penultimate layer, optional), ``labels`` (n, true classes 0..K-1; ``select`` only).
NETWORK_ARRAYS = {"logits": "logits", "embeddings": "embeddings", "labels": "labels"}
#: The columns of a network's outputs in a CSV: ``logit_0`` .. ``logit_{K-1}``, ``emb_0`` ..
#: ``emb_{d-1}`` (optional), ``label`` (``select`` only). Features keep these names in
#: ``model.json``, so a model selected on an NPZ applies to a CSV and back.
NETWORK_CSV = {"logits": "logit_", "embeddings": "emb_", "labels": "label"}
_NUMBERED = {prefix: re.compile(rf"^{prefix}(0|[1-9][0-9]*)$") for prefix in ("logit_", "emb_")}


def is_network_file(frame, is_csv):
    """Whether a read file holds a network's outputs: an array ``logits`` (NPZ) or a column ``logit_0`` (CSV).

    Parameters
    ----------
    frame : pandas.DataFrame or rejectopt._io.LazyNpz
        The file as read.
    is_csv : bool
        Whether it is a CSV.

    Returns
    -------
    bool
    """
    if is_csv:  # a padded logit_00 counts too: the network route then says how to name the columns
        return any(re.fullmatch(r"logit_[0-9]+", str(c)) for c in frame.columns)
    return NETWORK_ARRAYS["logits"] in frame


def _numbered_columns(columns, prefix, source):
    """``[prefix0, prefix1, ...]``: the columns named ``prefix<j>``, checked to run from 0 without a gap."""
    found = sorted(
        int(_NUMBERED[prefix].match(str(c)).group(1))
        for c in columns
        if _NUMBERED[prefix].match(str(c))
    )
    padded = [str(c) for c in columns if re.fullmatch(rf"{prefix}0[0-9]+", str(c))]
    if padded:
        raise InputError(
            f"{source}: column {padded[0]!r} is numbered with a leading zero: the columns are numbered "
            f"{prefix}0, {prefix}1, .., {prefix}10 without padding; rename {padded[0]!r} to "
            f"'{prefix}{int(padded[0][len(prefix) :])}' ({len(padded)} padded column(s))"
        )
    missing = sorted(set(range(found[-1] + 1)) - set(found)) if found else []
    if missing:
        raise InputError(
            f"{source}: column {prefix}{missing[0]} is missing: the columns {prefix}0 .. "
            f"{prefix}{found[-1]} must all be there ({len(missing)} missing)"
        )
    return [f"{prefix}{j}" for j in found]


def _network_error(err, source, is_csv, columns):
    """The CLI's wording of a :class:`rejectopt.exceptions.NetworkOutputError`: the file's own row and column names."""
    if err.index is None:
        what = (
            f"column(s) {NETWORK_CSV[err.array]}*"
            if is_csv and err.array != "labels"
            else (f"column {columns['labels']!r}" if is_csv else f"array {columns[err.array]!r}")
        )
        return InputError(f"{source}: {what} {err.problem}")
    if is_csv:
        column = (
            f"{NETWORK_CSV[err.array]}{err.column}" if err.array != "labels" else columns["labels"]
        )
        return InputError(
            f"{source}: {err.problem} in column {column!r} at {row_label(err.index, True)}"
        )
    at = f"index {err.index}" + ("" if err.column is None else f", column {err.column}")
    return InputError(f"{source}: {err.problem} in array {columns[err.array]!r} at {at}")


def _refuse_table_options(
    source, pred_column, loss_column, loss, feature_columns, ood_column, feature_option
):
    """Options of a table of predictions that a network's outputs do not take, each with the reason.

    Only ``select`` and ``validate`` pass them; ``apply``'s options are the model's, and its feature
    columns are checked against the file's (:func:`network_apply_table`).
    """
    why = (
        f"{source} holds a network's outputs (logits): the prediction is the largest logit, the features are "
        "the embeddings (else the logits; the logits for the class-shared scores) and the loss is "
        "100 [label != prediction]"
    )
    if pred_column != "y_pred":
        raise InputError(f"--pred-column {pred_column} does not apply: {why}")
    if feature_columns is not None:
        raise InputError(f"{feature_option} does not apply: {why}")
    if loss_column is not None:
        raise InputError(f"--loss-column does not apply: {why}")
    if loss != "zero_one":
        raise InputError(f"--loss {loss} does not apply: {why}")
    if ood_column is not None:
        raise InputError(
            f"{source}: a TPR-FPR or precision-recall target is not available for a network's outputs "
            "yet; export a table of predictions (features, y_pred, y, is_ood) instead"
        )


def _names(is_csv, label_column):
    """The file's names of the logits, embeddings and labels: :data:`NETWORK_CSV` or :data:`NETWORK_ARRAYS`."""
    names = NETWORK_CSV if is_csv else NETWORK_ARRAYS
    return dict(names, labels=label_column or names["labels"])


def _csv_arrays(frame, source):
    """A CSV's logits and embeddings (None without ``emb_*`` columns), and the columns they were read from."""
    if "y_pred" in frame.columns or "X" in frame.columns:
        raise InputError(
            f"{source}: both logit columns (logit_0, ...) and a prediction column 'y_pred': is it a "
            "network's outputs or a table of predictions? Rename one"
        )
    if len(frame) == 0:
        raise InputError(f"{source}: no data rows (the file has only a header)")
    logit_columns = _numbered_columns(frame.columns, "logit_", source)
    emb_columns = _numbered_columns(frame.columns, "emb_", source)
    logits = np.column_stack(
        [_numeric_column(frame[c].to_numpy(), c, source, True) for c in logit_columns]
    )
    embeddings = (
        np.column_stack(
            [_numeric_column(frame[c].to_numpy(), c, source, True) for c in emb_columns]
        )
        if emb_columns
        else None
    )
    return logits, embeddings, logit_columns + emb_columns


def _refuse_npz_of_both(frame, source):
    """InputError for an NPZ with both a network's ``logits`` and a table of predictions' ``X`` or ``y_pred``."""
    if "X" in frame or "y_pred" in frame:
        raise InputError(
            f"{source}: both an array 'logits' and an array 'X' or 'y_pred': is it a network's "
            "outputs or a table of predictions? Keep one"
        )


def _log_ignored(frame, is_csv, source, names, read):
    """Log the columns (CSV) or arrays (NPZ) of the file that are not read."""
    if is_csv:
        known = set(read) | {names["labels"]}
        ignored = [str(c) for c in frame.columns if c not in known]
    else:
        ignored = [k for k in frame if k not in set(names.values())]
    if ignored:
        log.info("%s: a network's outputs; not read: %s", source, ", ".join(ignored))


def _checked(logits, labels, embeddings, source, is_csv, names):
    """:func:`rejectopt.logits.check_network_outputs` in the file's own row and column names."""
    try:
        return check_network_outputs(logits, labels, embeddings)
    except NetworkOutputError as err:
        raise _network_error(err, source, is_csv, names) from None


def _features(logits, embeddings, logit_features, source):
    """The features (the embeddings, else the logits; the logits for ``logit_features``) and their names."""
    if logit_features and embeddings is not None:
        log.info("%s: the score reads the logits: the embeddings are not read", source)
    X = embeddings if embeddings is not None and not logit_features else logits
    return X, [f"{'logit_' if X is logits else 'emb_'}{j}" for j in range(X.shape[1])]


def _table(
    frame, is_csv, source, X, feature_columns, logits, y_pred, loss, loss_bound, labels=None
):
    """The :class:`Table` of a network's outputs, whose predictions ``y_pred`` are the largest
    logits; with ``labels`` (``select``, ``validate``) also their keys and the softmax."""
    return Table(
        X=X,
        feature_columns=feature_columns,
        pred_keys=np.array([str(k) for k in y_pred], dtype=object),
        loss=loss,
        source=source,
        is_csv=is_csv,
        pred_raw=y_pred,
        is_ood=None,
        columns=[str(c) for c in frame],
        loss_bound=loss_bound,
        n_logits=int(logits.shape[1]),
        label_keys=None if labels is None else np.array([str(k) for k in labels], dtype=object),
        probabilities=None if labels is None else softmax(logits),
    )


def network_table(
    frame,
    is_csv,
    source,
    *,
    pred_column,
    label_column,
    loss_column,
    loss,
    feature_columns,
    ood_column,
    logit_features=False,
    feature_option="--feature-columns",
):
    """:class:`Table` of a network's outputs for ``select`` and ``validate``: with the labels and the 0/100 loss.

    A score that reads the logits (``logit_features``) gets them even when the file has
    embeddings: fed the embeddings, a class-shared score would take them for logits (softmax,
    margins, energy of the penultimate layer) and learn on meaningless features without a word.
    The logits are passed rather than the file refused: they are what the score needs, and a
    network's export commonly carries both. ``model.json`` records ``logit_*`` as its feature
    columns, and ``apply`` reads the logits of a file with embeddings for such a model.

    Parameters
    ----------
    frame : pandas.DataFrame or rejectopt._io.LazyNpz
        The file as read.
    is_csv : bool
        Whether it is a CSV.
    source : str
        The file's name, for the messages.
    pred_column, label_column, loss_column, loss, feature_columns, ood_column, feature_option
        The options of :func:`rejectopt.cli._table.load_table`; only ``label_column`` applies, the
        others are refused unless at their defaults.
    logit_features : bool, default=False
        The score reads the logits.

    Returns
    -------
    Table
    """
    _refuse_table_options(
        source, pred_column, loss_column, loss, feature_columns, ood_column, feature_option
    )
    names = _names(is_csv, label_column)
    read = []
    if is_csv:
        logits, embeddings, read = _csv_arrays(frame, source)
        _require_columns(frame.columns, [names["labels"]], source)
        labels = _numeric_column(frame[names["labels"]].to_numpy(), names["labels"], source, True)
    else:
        _refuse_npz_of_both(frame, source)
        _require_columns(frame, [names["labels"]], source)
        logits, embeddings = frame[names["logits"]], frame.get(names["embeddings"])
        labels = frame[names["labels"]]
    _log_ignored(frame, is_csv, source, names, read)
    logits, labels, embeddings = _checked(logits, labels, embeddings, source, is_csv, names)
    X, feature_columns = _features(logits, embeddings, logit_features, source)
    _check_range(X, feature_columns, source, is_csv)
    y_pred = predictions(logits)
    loss = per_example_loss("zero_one", labels, y_pred)
    return _table(
        frame, is_csv, source, X, feature_columns, logits, y_pred, loss, 100.0, labels=labels
    )


def network_apply_table(frame, is_csv, source, feature_columns=None):
    """:class:`Table` of a network's outputs for ``apply``: the features the model reads, no labels.

    The model's ``feature_columns`` (``logit_*`` or ``emb_*``) say which it was selected on, and
    must be the file's; values beyond the feature limit are left to ``apply``, which rejects
    their rows.

    Parameters
    ----------
    frame : pandas.DataFrame or rejectopt._io.LazyNpz
        The file as read.
    is_csv : bool
        Whether it is a CSV.
    source : str
        The file's name, for the messages.
    feature_columns : list of str or None, default=None
        The model's feature columns; None: the embeddings, else the logits.

    Returns
    -------
    Table
    """
    names = _names(is_csv, None)
    read = []
    if is_csv:
        logits, embeddings, read = _csv_arrays(frame, source)
    else:
        _refuse_npz_of_both(frame, source)
        logits, embeddings = frame[names["logits"]], frame.get(names["embeddings"])
    _log_ignored(frame, is_csv, source, names, read)
    logits, _, embeddings = _checked(logits, None, embeddings, source, is_csv, names)
    logit_features = bool(feature_columns) and str(list(feature_columns)[0]).startswith(
        NETWORK_CSV["logits"]
    )
    X, found = _features(logits, embeddings, logit_features, source)
    if feature_columns is not None and list(feature_columns) != found:
        given = (
            "embeddings"
            if X is not logits
            else "logits"
            if embeddings is not None
            else "logits, no embeddings"
        )
        raise InputError(
            f"{source}: the model reads {len(feature_columns)} features {_span(feature_columns)}, "
            f"this network's outputs give {len(found)} {_span(found)} "
            f"({given}): apply the model to outputs of the network it was selected on"
        )
    return _table(frame, is_csv, source, X, found, logits, predictions(logits), None, None)


def _span(columns):
    """``emb_0 .. emb_63`` for more than two columns, else the columns listed."""
    columns = list(columns)
    return f"{columns[0]} .. {columns[-1]}" if len(columns) > 2 else ", ".join(columns)
