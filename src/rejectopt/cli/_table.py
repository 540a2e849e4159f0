"""Input tables of ``select``, ``validate`` and ``apply``: reading, validation and predicted-class keys.

Row numbers in messages: for a CSV, ``row N`` is the N-th data row (the header is not
counted, so it is on line N + 1 of the file); for an NPZ, ``index i`` is the 0-based
array index.

Two kinds of file are read. A *table of predictions*: features, a predicted-class column and a
label or loss column (NPZ: arrays ``X``, ``y_pred``, ``y`` / ``loss``), read here. A *deep
network's outputs*: its logits, optionally its penultimate-layer embeddings, and the labels, read
by :mod:`rejectopt.cli._network`. ``select`` and ``validate`` read a file with
:func:`load_table` (losses, every role checked); ``apply`` with :func:`load_apply_table` (the
model's columns, no loss).
"""

from __future__ import annotations

import bz2
import collections
import contextlib
import csv
import gzip
import io
import logging
import lzma
import zipfile
import zlib
from pathlib import Path

import numpy as np
import pandas as pd

from .._checks import check_1d
from .._io import LazyNpz
from ._columns import (
    Table,
    _check_range,
    _class_keys,
    _numeric_column,
    _ood_column,
    _require_columns,
    has_prediction,
    row_label,
)
from ._errors import InputError, one_line
from ._groups import GROUP_OPTION, check_group_role, group_labels
from ._network import (
    NETWORK_ARRAYS,
    NETWORK_CSV,
    is_network_file,
    network_apply_table,
    network_table,
)

__all__ = [
    "EXACT_FLOATS",
    "class_indices",
    "class_vocabulary",
    "load_apply_table",
    "load_table",
]

log = logging.getLogger(__name__)

#: Correctly rounded floats under pandas < 3 too, as the datasets' readers (datasets._parsers.EXACT_FLOATS):
#: the same file gives the same model.json bits under every supported pandas.
EXACT_FLOATS = {"float_precision": "round_trip"} if int(pd.__version__.split(".")[0]) < 3 else {}


# --------------------------------------------------------------------------------------------
# Files
# --------------------------------------------------------------------------------------------
def _csv_header(source):
    """Header cells as written in the file (pandas renames duplicates to ``f0.1``); None if unreadable.

    ``source``: a path, or the bytes of a decompressed file (:func:`_csv_source`).
    """
    try:
        if isinstance(source, io.BytesIO):
            handle = io.TextIOWrapper(
                io.BytesIO(source.getvalue()), encoding="utf-8-sig", errors="replace", newline=""
            )
            return next(csv.reader(handle, skipinitialspace=True), [])
        with open(source, newline="", encoding="utf-8-sig", errors="replace") as handle:
            return next(csv.reader(handle, skipinitialspace=True), [])
    except csv.Error:
        return None


#: Delimiters a CSV exported with other settings may use: (character, its name, its Python literal).
_OTHER_DELIMITERS = ((";", "semicolon", "';'"), ("\t", "tab", "'\\t'"))


def _delimiter_hint(header, source):
    """Advice for a CSV whose header is one cell holding ``;`` or a tab, else ``""``.

    Such a file was saved with another delimiter (a spreadsheet in a locale whose decimal mark is
    the comma writes ``;``): read with commas, its header is one column named after all of them,
    and the error that follows (a missing column, text in a feature) would not say why.
    """
    if header is None or len(header) != 1:
        return ""
    for delimiter, name, literal in _OTHER_DELIMITERS:
        if delimiter in str(header[0]):
            path = Path(source)
            comma = path.with_name(f"{path.name.split('.')[0] or path.name}_comma.csv")
            decimal = (
                ", with decimal=',' in read_csv if its numbers have a decimal comma"
                if delimiter == ";"
                else ""
            )
            return (
                f". Its header is one column holding {name}s: the file looks {name}-separated, "
                "and rejectopt reads comma-separated CSV; save it as comma-separated, e.g. "
                f"pandas.read_csv({str(path)!r}, sep={literal}).to_csv({str(comma)!r}, "
                f"index=False){decimal}"
            )
    return ""


@contextlib.contextmanager
def _delimiter_advice(frame, is_csv, source):
    """Add :func:`_delimiter_hint` to an :class:`InputError` raised reading ``frame``'s columns."""
    hint = _delimiter_hint(list(frame.columns), source) if is_csv else ""
    try:
        yield
    except InputError as err:
        if not hint:
            raise
        raise InputError(f"{err}{hint}") from None


#: Decompressed size allowed for a compressed CSV: this many times its compressed size, at least
#: :data:`_DECOMPRESSED_FLOOR` bytes (the rule of the downloads for files without a pinned size).
_DECOMPRESSED_RATIO = 100
_DECOMPRESSED_FLOOR = 64 * 2**20
_OPENERS = {".gz": gzip.open, ".bz2": bz2.open, ".xz": lzma.open}
_CHUNK = 1 << 20


def _csv_source(path):
    """What pandas reads: the path of a plain file; a compressed one decompressed to memory under a cap.

    A few hundred KB of gzip can expand to gigabytes; the cap (``100 x`` the compressed size,
    at least 64 MiB) stops it at the first byte past and names the file. A file that is an
    archive or an array, not text, is refused here rather than parsed as a CSV.
    """
    path = Path(path)
    suffix = path.suffix.lower()
    with open(path, "rb") as handle:
        head = handle.read(8)
    if suffix not in _OPENERS and suffix != ".zip":
        if head.startswith(b"\x93NUMPY"):
            raise InputError(
                f"{path}: a .npy array, not a CSV; the data must be an .npz of named arrays "
                "(numpy.savez) or a CSV with a header"
            )
        if head.startswith(b"PK\x03\x04"):
            raise InputError(
                f"{path}: a zip archive (an .npz?), not a CSV; give an .npz of arrays the suffix .npz"
            )
        if suffix in (".zst", ".tar", ".tgz", ".7z"):
            raise InputError(
                f"{path}: a compressed archive that is not read directly; decompress it to a .csv first"
            )
        return path
    cap = max(_DECOMPRESSED_FLOOR, _DECOMPRESSED_RATIO * path.stat().st_size)
    try:
        if suffix == ".zip":
            with zipfile.ZipFile(path) as archive:
                names = [n for n in archive.namelist() if not n.endswith("/")]
                if len(names) != 1:
                    raise InputError(
                        f"{path}: a zip of a CSV must hold exactly one file, it holds {len(names)}"
                    )
                with archive.open(names[0]) as stream:
                    data = stream.read(cap + 1)
        else:
            with _OPENERS[suffix](path, "rb") as stream:
                buffer = io.BytesIO()
                while buffer.tell() <= cap:
                    chunk = stream.read(min(_CHUNK, cap + 1 - buffer.tell()))
                    if not chunk:
                        break
                    buffer.write(chunk)
                data = buffer.getvalue()
    except (OSError, EOFError, zipfile.BadZipFile, lzma.LZMAError, zlib.error) as err:
        raise InputError(f"{path}: cannot decompress ({one_line(err)})") from None
    if len(data) > cap:
        raise InputError(
            f"{path}: decompresses to more than {cap:,} bytes ({_DECOMPRESSED_RATIO} x its "
            f"{path.stat().st_size:,} compressed bytes, at least {_DECOMPRESSED_FLOOR:,}): refused as a "
            "decompression bomb; if the data are genuine, decompress the file yourself and pass the .csv"
        )
    return io.BytesIO(data)


#: What ``--data`` holds, for the message of a folder passed in its place.
_DATA_OF_SELECT = (
    "the features, predicted class and label (or loss) of each row, or a network's logits and "
    "labels"
)
_DATA_OF_APPLY = "the model's features and the predicted class of each row, or a network's logits"
_DATA_SUFFIXES = (".csv", ".npz", ".gz", ".bz2", ".xz", ".zip")


def _refuse_folder(path, expected):
    """InputError for a folder given as ``--data`` (``--data .``), with the data files it holds."""
    names = sorted(
        entry.name
        for entry in path.iterdir()
        if entry.is_file() and entry.suffix.lower() in _DATA_SUFFIXES
    )
    holds = f"; it holds {', '.join(names[:5])}{', ...' if len(names) > 5 else ''}" if names else ""
    raise InputError(
        f"{path}: a folder, not a file; --data takes one file, a CSV with a header or an NPZ, "
        f"with {expected}{holds}"
    )


def _read_frame(path, expected):
    path = Path(path)
    if path.is_dir():
        _refuse_folder(path, expected)
    if not path.is_file():
        raise InputError(f"{path}: no such file")
    suffix = path.suffix.lower()
    if suffix == ".npz":
        return LazyNpz(
            path, error=InputError
        ), False  # each array read when used: unused members never are
    if suffix == ".npy":
        raise InputError(
            f"{path}: a single .npy array; the data must be an .npz of named arrays (numpy.savez(path, "
            "logits=..., labels=...) or X=..., y_pred=..., y=...) or a CSV with a header"
        )
    source = _csv_source(path)
    try:
        frame = pd.read_csv(source, skipinitialspace=True, compression=None, **EXACT_FLOATS)
    except pd.errors.EmptyDataError:
        raise InputError(f"{path}: the file is empty") from None
    except (ValueError, OSError) as err:  # ParserError, UnicodeDecodeError, unreadable file
        hint = _delimiter_hint(_csv_header(source), str(path))
        raise InputError(f"{path}: cannot parse CSV ({one_line(err)}){hint}") from None
    header = _csv_header(source)
    duplicates = [
        name for name, count in collections.Counter(header or []).items() if count > 1 and name
    ]
    if duplicates:
        raise InputError(
            f"{path}: duplicate column name(s) {duplicates} in the header: every column needs its own "
            "name"
        )
    return frame, True


def _npz_column(arrays, name, source):
    """The 1-D array ``name`` of an NPZ (a column of the table)."""
    return check_1d(arrays[name], f"{source}: array {name!r}", error=InputError)


def _feature_matrix_from_npz(arrays, source, n_features=None):
    _require_columns(arrays, ["X"], source)
    X = arrays["X"]
    if X.ndim != 2:
        raise InputError(f"{source}: array 'X' must be 2-D, got shape {X.shape}")
    if not (np.issubdtype(X.dtype, np.integer) or np.issubdtype(X.dtype, np.floating)):
        raise InputError(f"{source}: array 'X' must hold real numbers, got dtype {X.dtype}")
    X = X.astype(float)
    bad = np.argwhere(~np.isfinite(X))
    if bad.size:
        i, j = bad[0]
        raise InputError(f"{source}: non-finite value {X[i, j]} in 'X' at index {i}, column {j}")
    if n_features is not None and X.shape[1] != n_features:
        raise InputError(f"{source}: 'X' has {X.shape[1]} columns, the model expects {n_features}")
    return X


def _check_feature_list(feature_columns, special, source, option="--feature-columns"):
    seen = set()
    for name in feature_columns:
        if name in seen:
            raise InputError(f"{option} lists {name!r} twice")
        seen.add(name)
    clash = [c for c in feature_columns if c in special]
    if clash:
        roles = (
            "the label, the prediction, the loss or the OOD indicator"
            if OOD_ROLE in special.values()
            else "the label, the prediction or the loss"
        )
        raise InputError(
            f"{source}: {option} includes {clash}, the {special[clash[0]]} column: a feature "
            f"must not be {roles}"
        )


def _check_distinct_roles(pred_column, label_column, loss_column):
    """InputError when the predicted class is read from the label or the loss column (``select``, ``validate``).

    A prediction read from the label column errs nowhere: every loss would be 0 and the score
    would learn nothing, which the user did not mean. ``pred_column`` is None without one.
    """
    if pred_column is None:
        return
    if loss_column is None and pred_column == label_column:
        raise InputError(
            f"--pred-column {pred_column!r} is the label column (--label-column, default y): the "
            "predicted class and the true label need columns of their own (read from one column, every "
            "prediction would be right and every loss 0); name your classifier's predictions with "
            "--pred-column"
        )
    if pred_column == loss_column:
        raise InputError(
            f"--pred-column {pred_column!r} is the loss column (--loss-column): the predicted class and "
            "the loss need columns of their own"
        )


#: Role of the OOD column in messages.
OOD_ROLE = "OOD indicator"


def _check_ood_role(ood_column, label_column, loss_column, pred_column):
    """InputError when the OOD column is the label, loss or prediction column (``pred_column`` None without one)."""
    if ood_column is None:
        return
    roles = {label_column: "label", loss_column: "loss", pred_column: "prediction"}
    if ood_column in roles:
        raise InputError(
            f"--ood-column {ood_column!r} is the {roles[ood_column]} column: the OOD indicator "
            "needs a column of its own"
        )


def _npz_names(pred_column, label_column, loss_column=None, ood_column=None):
    """The NPZ array of each named column: ``y_pred``, ``y``, ``loss`` and ``is_ood`` whatever the options say."""
    return {pred_column: "y_pred", label_column: "y", loss_column: "loss", ood_column: "is_ood"}


def _csv_features(frame, source, required, feature_columns, excluded):
    """A CSV's feature matrix and feature columns: ``feature_columns``, else every column not ``excluded``."""
    _require_columns(frame.columns, required + list(feature_columns or []), source)
    if len(frame) == 0:
        raise InputError(f"{source}: no data rows (the file has only a header)")
    inferred = feature_columns is None
    if inferred:
        feature_columns = [str(c) for c in frame.columns if c not in excluded]
    if not feature_columns:
        raise InputError(
            f"{source}: no feature columns (the file has columns {list(frame.columns)})"
        )
    X = np.empty((len(frame), len(feature_columns)))
    try:
        for j, name in enumerate(feature_columns):
            X[:, j] = _numeric_column(frame[name].to_numpy(), name, source, True)
    except InputError as err:
        hint = (
            " (feature columns were inferred: choose them with --feature-columns)"
            if inferred
            else ""
        )
        raise InputError(f"{err}{hint}") from None
    return X, feature_columns


def _npz_features(frame, source, required, feature_columns):
    """An NPZ's feature matrix ``X`` and its feature names.

    The names are ``feature_columns``, else the array ``feature_names``, else ``x0, x1, ..``.
    """
    _require_columns(frame, required, source)
    X = _feature_matrix_from_npz(
        frame, source, None if feature_columns is None else len(feature_columns)
    )
    if X.shape[0] == 0:
        raise InputError(f"{source}: no data rows (array 'X' has 0 rows)")
    if feature_columns is None:
        names = frame.get("feature_names")
        feature_columns = (
            [str(v) for v in names]
            if names is not None and len(names) == X.shape[1]
            else [f"x{j}" for j in range(X.shape[1])]
        )
    return X, feature_columns


def _read_predictions(frame, is_csv, source, special, feature_columns, npz_names):
    """The features, the feature columns and a reader of the ``special`` columns (checked to have X's rows).

    ``npz_names`` maps each named column to its NPZ array (:func:`_npz_names`); its keys are the
    columns a CSV's inferred features leave out.
    """
    if is_csv:
        X, feature_columns = _csv_features(frame, source, special, feature_columns, set(npz_names))
        column = frame.__getitem__
    else:
        X, feature_columns = _npz_features(
            frame, source, [npz_names[c] for c in special], feature_columns
        )

        def column(name):
            return _npz_column(frame, npz_names[name], source)

    for name in special:
        if len(column(name)) != X.shape[0]:
            raise InputError(
                f"{source}: column {name!r} has {len(column(name))} rows, X has {X.shape[0]}"
            )
    return X, feature_columns, column


def _prediction_table(
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
    feature_option,
    group_column=None,
):
    """:class:`Table` of a table of predictions for ``select`` and ``validate`` (:func:`load_table`)."""
    label_column = "y" if label_column is None else label_column
    use_pred = has_prediction(pred_column)
    pred = pred_column if use_pred else None
    special = [c for c in (pred, loss_column or label_column, ood_column) if c]
    _check_distinct_roles(pred, label_column, loss_column)
    _check_ood_role(ood_column, label_column, loss_column, pred)
    roles = {label_column: "label", loss_column: "loss", pred: "prediction", ood_column: OOD_ROLE}
    check_group_role(group_column, roles)
    if feature_columns is not None:
        roles[group_column] = "group (--group-column)"
        _check_feature_list(
            feature_columns,
            {c: r for c, r in roles.items() if c is not None},
            source,
            feature_option,
        )
    npz_names = _npz_names(pred_column, label_column, loss_column, ood_column)
    if group_column is not None:
        _require_group_column(frame, is_csv, source, group_column)
        npz_names[group_column] = group_column  # not a feature; an NPZ's array of that name
    X, feature_columns, column = _read_predictions(
        frame, is_csv, source, special, feature_columns, npz_names
    )
    _check_range(X, feature_columns, source, is_csv)
    groups = _read_groups(frame, is_csv, source, group_column, X.shape[0])
    is_ood = (
        _ood_column(column(ood_column), ood_column, source, is_csv)
        if ood_column is not None
        else None
    )
    pred_raw = column(pred_column) if use_pred else None
    pred_keys = _class_keys(pred_raw, pred_column, source, is_csv) if use_pred else None
    id_rows = None if is_ood is None else np.flatnonzero(~is_ood)
    losses, loss_bound, label_keys = _losses(
        column,
        pred_raw,
        pred_keys,
        pred_column,
        label_column,
        loss_column,
        loss,
        source,
        is_csv,
        id_rows,
    )
    if id_rows is not None:
        losses, label_keys = _spread(losses, id_rows, X.shape[0]), None
    return Table(
        X=X,
        feature_columns=list(feature_columns),
        pred_keys=pred_keys,
        loss=losses,
        source=source,
        is_csv=is_csv,
        pred_raw=pred_raw,
        is_ood=is_ood,
        columns=[str(c) for c in frame.keys()],
        loss_bound=loss_bound,
        label_keys=label_keys,
        groups=groups,
    )


def _network_roles(table, is_csv, label_column, loss_column):
    """The columns (arrays) of a network's outputs that cannot be the group column, by role."""
    names = NETWORK_CSV if is_csv else NETWORK_ARRAYS
    roles = dict.fromkeys(table.feature_columns, "feature")
    if not is_csv:
        roles.update({names["logits"]: "logits", names["embeddings"]: "embeddings"})
    roles[label_column or names["labels"]] = "label"
    return roles if loss_column is None else {**roles, loss_column: "loss"}


def _require_group_column(frame, is_csv, source, group_column, option=GROUP_OPTION):
    """InputError when ``--group-column`` (``option``) names no column (NPZ: array) of the file."""
    available = list(frame.keys())
    if group_column not in available:
        raise InputError(
            f"{source}: {option} {group_column!r}: no such {'column' if is_csv else 'array'}; "
            f"the file has {available}: name the one holding each row's group"
        )


def _read_groups(frame, is_csv, source, group_column, n_rows, option=GROUP_OPTION):
    """``--group-column``'s labels, one per row (None without the option)."""
    if group_column is None:
        return None
    _require_group_column(frame, is_csv, source, group_column, option)
    raw = frame[group_column] if is_csv else _npz_column(frame, group_column, source)
    if len(raw) != n_rows:
        raise InputError(
            f"{source}: {GROUP_OPTION} {group_column!r} has {len(raw)} rows, the data {n_rows}"
        )
    return group_labels(raw, group_column, source, is_csv, option)


def _apply_prediction_table(frame, is_csv, source, *, pred_column, feature_columns):
    """:class:`Table` of a table of predictions for ``apply`` (:func:`load_apply_table`): no loss is read.

    Values beyond :data:`rejectopt.model.FEATURE_LIMIT` are let through: ``apply`` rejects their rows.
    """
    use_pred = has_prediction(pred_column)
    special = [pred_column] if use_pred and pred_column else []
    X, feature_columns, column = _read_predictions(
        frame, is_csv, source, special, feature_columns, _npz_names(pred_column, "y")
    )
    pred_raw = column(pred_column) if use_pred else None
    return Table(
        X=X,
        feature_columns=list(feature_columns),
        pred_keys=_class_keys(pred_raw, pred_column, source, is_csv) if use_pred else None,
        loss=None,
        source=source,
        is_csv=is_csv,
        pred_raw=pred_raw,
        columns=[str(c) for c in frame.keys()],
    )


def load_table(
    path,
    *,
    pred_column="y_pred",
    label_column=None,
    loss_column=None,
    loss="zero_one",
    feature_columns=None,
    ood_column=None,
    logit_features=False,
    feature_option="--feature-columns",
    group_column=None,
):
    """Read and validate a CSV or NPZ for ``select`` and ``validate``: features, predictions and losses.

    The label, prediction, loss and OOD columns must not be features, and values beyond
    :data:`rejectopt.model.FEATURE_LIMIT` are refused (``apply`` rejects such rows instead, see
    :func:`load_apply_table` and :func:`rejectopt.cli._model.apply_model`).

    Parameters
    ----------
    path : path-like
        ``.npz`` with arrays ``X``, ``y_pred`` and ``y`` or ``loss`` (and optionally
        ``feature_names``); anything else is read as a CSV with a header. A deep network's
        outputs (an NPZ with an array ``logits``, a CSV with columns ``logit_0``, ...) are read
        as :data:`rejectopt.cli._network.NETWORK_ARRAYS` / ``NETWORK_CSV`` describe.
    pred_column : str
        Predicted class column; ``"none"`` for no predicted class (one score for all).
    label_column : str or None
        True label column, used with ``loss`` when ``loss_column`` is None; None = ``y``
        (``labels`` / ``label`` for a network's outputs).
    loss_column : str or None
        Column holding the loss of each prediction directly.
    loss : {"zero_one", "mae"}
        ``zero_one``: ``100 [y != y_pred]`` (the paper's 0/100 loss, in percent);
        ``mae``: ``|y - y_pred|`` (numeric labels).
    feature_columns : list of str or None
        None: every column except the label, prediction, loss and OOD columns.
    ood_column : str or None
        A TPR-FPR or precision-recall target: the column marking OOD rows (0/false = ID,
        1/true = OOD; array ``is_ood`` of an NPZ); it is not a feature, and there must be both
        ID and OOD rows. The OOD rows need valid features and a predicted class (the score of a
        row depends on both); their label and loss are not read (they may be empty) and their
        ``loss`` is NaN.
    group_column : str or None
        ``select --group-column``: the column (NPZ: array) of each row's group label, read
        into ``Table.groups``; it is not a feature and must not be the label, prediction, loss
        or OOD column. None: no groups.
    logit_features : bool
        A score that reads a network's logits (a class-shared score, whose ``reads_logits`` is
        True): a network's outputs give their logits as the features, even with embeddings.
        Ignored for a table of predictions.
    feature_option : str, default="--feature-columns"
        The option that named ``feature_columns``, for the messages (``validate`` reads its
        ``--uncertainty-column`` as the one feature).

    Returns
    -------
    Table

    Raises
    ------
    InputError
        Missing or duplicate columns, no rows, NaN, non-numeric or out-of-range values:
        naming the file, row and column.
    """
    frame, is_csv = _read_frame(path, _DATA_OF_SELECT)
    options = {
        "pred_column": pred_column,
        "label_column": label_column,
        "loss_column": loss_column,
        "loss": loss,
        "feature_columns": feature_columns,
        "ood_column": ood_column,
        "feature_option": feature_option,
    }
    with _delimiter_advice(frame, is_csv, str(path)):
        if is_network_file(frame, is_csv):
            table = network_table(
                frame, is_csv, str(path), logit_features=logit_features, **options
            )
            check_group_role(group_column, _network_roles(table, is_csv, label_column, loss_column))
            table.groups = _read_groups(frame, is_csv, str(path), group_column, table.X.shape[0])
            return table
        return _prediction_table(frame, is_csv, str(path), group_column=group_column, **options)


def load_apply_table(path, *, pred_column="y_pred", feature_columns=None, group_column=None):
    """Read and validate a CSV or NPZ for ``apply``: the model's features and predicted classes.

    No label or loss is read. Values beyond :data:`rejectopt.model.FEATURE_LIMIT` are let through:
    ``apply`` rejects their rows (:func:`rejectopt.cli._model.apply_model`).

    Parameters
    ----------
    path : path-like
        A CSV or NPZ as for :func:`load_table`, or a deep network's outputs.
    pred_column : str, default="y_pred"
        The model's predicted class column; ``"none"`` for none.
    feature_columns : list of str or None, default=None
        The model's feature columns; None: every column except ``y`` and the prediction (a
        network's outputs: the embeddings, else the logits).
    group_column : str or None, default=None
        A per-group model's group column (``model.json``'s ``groups.column``), read into
        ``Table.groups``; None: no groups.

    Returns
    -------
    Table

    Raises
    ------
    InputError
        Missing or duplicate columns, no rows, NaN or non-numeric values: naming the file, row
        and column.
    """
    frame, is_csv = _read_frame(path, _DATA_OF_APPLY)
    with _delimiter_advice(frame, is_csv, str(path)):
        if is_network_file(frame, is_csv):
            table = network_apply_table(frame, is_csv, str(path), feature_columns)
        else:
            table = _apply_prediction_table(
                frame, is_csv, str(path), pred_column=pred_column, feature_columns=feature_columns
            )
        option = "the model's group column (model.json groups.column)"
        table.groups = _read_groups(
            frame, is_csv, str(path), group_column, table.X.shape[0], option
        )
        return table


def _spread(values, rows, n):
    """Length-``n`` array holding ``values`` at ``rows`` and NaN elsewhere."""
    out = np.full(n, np.nan)
    out[rows] = values
    return out


def _losses(
    column,
    pred_raw,
    pred_keys,
    pred_column,
    label_column,
    loss_column,
    loss,
    source,
    is_csv,
    rows=None,
):
    """The loss of each row, or of the rows ``rows`` only (the ID rows: only they are read and checked).

    Returns ``(losses, bound, label_keys)``: the bound by the loss's definition
    (:attr:`Table.loss_bound`) and the labels' keys where the 0/100 loss compared them (None
    else).
    """

    def part(values):
        return values if rows is None else np.asarray(values, dtype=object)[rows]

    if loss_column is not None:
        losses = _numeric_column(
            part(column(loss_column)), loss_column, source, is_csv, non_negative=True, index=rows
        )
        _check_range(losses[:, None], [loss_column], source, is_csv, index=rows)
        return losses, None, None
    if pred_keys is None:
        raise InputError(
            "--pred-column none needs --loss-column (the loss cannot be computed without predictions)"
        )
    pred_keys = pred_keys if rows is None else pred_keys[rows]
    if loss == "zero_one":
        labels = _class_keys(part(column(label_column)), label_column, source, is_csv, index=rows)
        if not set(labels.tolist()) & set(pred_keys.tolist()):
            log.warning(
                "%s: no value of %r occurs in %r: every prediction counts as an error (label encodings "
                "differ?)",
                source,
                label_column,
                pred_column,
            )
        return 100.0 * (labels != pred_keys).astype(float), 100.0, labels
    if loss == "mae":
        y = _numeric_column(part(column(label_column)), label_column, source, is_csv, index=rows)
        y_pred = _numeric_column(part(pred_raw), pred_column, source, is_csv, index=rows)
        _check_range(
            np.column_stack([y, y_pred]), [label_column, pred_column], source, is_csv, index=rows
        )
        # ordinal labels 0..K-1 err by at most K - 1; one class seen: a one-step error is the least there is
        span = float(max(y.max(), y_pred.max()) - min(y.min(), y_pred.min()))
        return np.abs(y - y_pred), span if span > 0 else 1.0, None
    raise InputError(f"--loss must be zero_one or mae, got {loss!r}")


# --------------------------------------------------------------------------------------------
# Predicted classes
# --------------------------------------------------------------------------------------------
def class_vocabulary(keys):
    """Sorted distinct class keys: numerically when all are integers, else as text."""
    distinct = set(keys.tolist())
    if all(_is_integer_text(k) for k in distinct):
        return sorted(distinct, key=int)
    return sorted(distinct)


def _is_integer_text(text):
    try:
        int(text)
    except ValueError:
        return False
    return True


def class_indices(keys, vocabulary, source="", is_csv=True, column="y_pred", unseen="error"):
    """Map class keys to positions in ``vocabulary``.

    Returns ``(indices, unseen_mask)``; with ``unseen="error"`` a key not in the
    vocabulary raises InputError naming the first such row and its value.
    """
    lookup = {k: i for i, k in enumerate(vocabulary)}
    indices = np.array([lookup.get(k, -1) for k in keys], dtype=np.intp)
    unseen_mask = indices < 0
    if unseen_mask.any() and unseen == "error":
        i = int(np.flatnonzero(unseen_mask)[0])
        raise InputError(
            f"{source}: predicted class {keys[i]!r} in column {column!r} at {row_label(i, is_csv)} was not seen "
            f"when the model was built ({int(unseen_mask.sum())} row(s) in all; known classes {list(vocabulary)}); "
            f"pass --unseen-classes reject to reject such rows"
        )
    return np.where(unseen_mask, 0, indices), unseen_mask
