"""Input tables of ``select`` and ``apply``: reading, validation and predicted-class keys.

Row numbers in messages: for a CSV, ``row N`` is the N-th data row (the header is not
counted, so it is on line N + 1 of the file); for an NPZ, ``index i`` is the 0-based
array index.

Two kinds of file are read. A *table of predictions*: features, a predicted-class column and a
label or loss column (NPZ: arrays ``X``, ``y_pred``, ``y`` / ``loss``). A *deep network's
outputs* (:data:`NETWORK_ARRAYS`, :data:`NETWORK_CSV`): its logits, optionally its
penultimate-layer embeddings, and the labels; the prediction is the largest logit and the
features are the embeddings, or the logits when there are none or when the score reads the logits
(the class-shared scores; ``apply`` reads what ``model.json``'s feature columns name), as
:func:`rejectopt.logits.fit_logits` does.
"""

from __future__ import annotations

import bz2
import collections
import csv
import gzip
import io
import logging
import lzma
import math
import re
import zipfile
import zlib
from dataclasses import dataclass, field
from numbers import Real
from pathlib import Path

import numpy as np
import pandas as pd

from .._io import LazyNpz
from ..logits import NetworkOutputError, check_network_outputs, predictions
from ..metrics import per_example_loss
from ..model import _NO_PRED, _out_of_range, _out_of_range_message
from ._errors import InputError, one_line

__all__ = [
    "NETWORK_ARRAYS",
    "NETWORK_CSV",
    "Table",
    "class_indices",
    "class_vocabulary",
    "is_network_file",
    "load_table",
    "out_of_range_message",
    "row_label",
]

log = logging.getLogger(__name__)

#: Correctly rounded floats under pandas < 3 too, as the datasets' readers (datasets._parsers.EXACT_FLOATS):
#: the same file gives the same model.json bits under every supported pandas.
EXACT_FLOATS = {"float_precision": "round_trip"} if int(pd.__version__.split(".")[0]) < 3 else {}


@dataclass
class Table:
    """Validated input: features, predicted-class keys and, for ``select``, losses.

    Attributes
    ----------
    X : ndarray of shape (n, d), float64, finite
    feature_columns : list of str
    pred_keys : ndarray of str objects (n,) or None
        Normalised predicted classes (``"3"`` for 3, 3.0 and " 3"; other text as is).
    loss : ndarray (n,) or None
        NaN for the OOD rows (their loss is not read).
    source : str
        File name, for messages.
    is_csv : bool
    is_ood : ndarray of bool (n,) or None
        With an OOD column: True for the rows it marks OOD.
    columns : list of str
        Every column (CSV) or array (NPZ) of the file.
    loss_bound : float or None
        The largest loss a prediction can have, by the loss's definition: 100 for the 0/100
        loss, the span of the numeric labels and predictions (K - 1 on labels 0..K-1) for the
        MAE; None for a loss column (its bound is declared by ``--loss-bound``).
    n_logits : int or None
        A network's outputs: the width K of its logits (recorded in ``model.json``).

    Parameters
    ----------
    X, feature_columns, pred_keys, loss, source, is_csv, is_ood, columns, loss_bound, n_logits
        The attributes above.
    pred_raw : ndarray or None
        The predicted classes as read, before normalisation (for the ``mae`` loss).
    """

    X: np.ndarray
    feature_columns: list
    pred_keys: np.ndarray | None
    loss: np.ndarray | None
    source: str
    is_csv: bool = True
    pred_raw: object = field(default=None, repr=False)
    is_ood: np.ndarray | None = None
    columns: list = field(default_factory=list, repr=False)
    loss_bound: float | None = None
    n_logits: int | None = None

    def where(self, i):
        """Human-readable position of 0-based row ``i``."""
        return row_label(i, self.is_csv)


def row_label(i, is_csv):
    """``row N`` (1-based data row) for a CSV, ``index i`` for an NPZ."""
    return f"row {int(i) + 1}" if is_csv else f"index {int(i)}"


# --------------------------------------------------------------------------------------------
# Columns
# --------------------------------------------------------------------------------------------
def _class_key(value):
    """Canonical text of a class label: integral numbers as ``"3"``, other text stripped; None for NaN."""
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        return str(value).strip()
    if math.isnan(number):
        return None
    if number.is_integer():
        return str(int(number))
    return repr(number)


def _position(i, index):
    """Row ``i`` of a column, or of the subset of rows ``index`` (a row of the file)."""
    return i if index is None else index[i]


def _class_keys(values, column, source, is_csv, index=None):
    """Canonical class keys of a column; missing values raise InputError naming the row.

    ``index``: the file rows of ``values`` when they are a subset (for the messages).
    """
    codes, uniques = pd.factorize(pd.Series(values), use_na_sentinel=True)
    keys = [_class_key(u) for u in uniques]
    missing = np.flatnonzero(codes < 0)
    if missing.size == 0 and any(k is None for k in keys):
        missing = np.flatnonzero([keys[c] is None for c in codes])
    if missing.size:
        raise InputError(
            f"{source}: missing value (NaN) in column {column!r} at "
            f"{row_label(_position(missing[0], index), is_csv)} ({missing.size} row(s) in all)"
        )
    return np.array(keys, dtype=object)[codes]


def _numeric_column(values, column, source, is_csv, non_negative=False, index=None):
    """Column as float64; non-numeric, NaN, infinite (and negative) values raise InputError.

    ``index``: the file rows of ``values`` when they are a subset (for the messages).
    """
    series = pd.Series(values)
    numbers = pd.to_numeric(series, errors="coerce")
    non_numeric = np.flatnonzero(numbers.isna().to_numpy() & series.notna().to_numpy())
    if non_numeric.size:
        i = non_numeric[0]
        raise InputError(
            f"{source}: non-numeric value {series.iloc[i]!r} in column {column!r} at "
            f"{row_label(_position(i, index), is_csv)}"
        )
    numbers = numbers.to_numpy(dtype=float)
    missing = np.flatnonzero(np.isnan(numbers))
    if missing.size:
        raise InputError(
            f"{source}: missing value (NaN) in column {column!r} at "
            f"{row_label(_position(missing[0], index), is_csv)} ({missing.size} row(s) in all)"
        )
    infinite = np.flatnonzero(np.isinf(numbers))
    if infinite.size:
        raise InputError(
            f"{source}: infinite value in column {column!r} at "
            f"{row_label(_position(infinite[0], index), is_csv)}"
        )
    if non_negative and (numbers < 0).any():
        i = int(np.flatnonzero(numbers < 0)[0])
        raise InputError(
            f"{source}: negative loss {numbers[i]:g} in column {column!r} at "
            f"{row_label(_position(i, index), is_csv)}"
        )
    return numbers


#: Texts of an OOD column (case-insensitive, stripped) and their meaning.
_OOD_TEXT = {"1": True, "1.0": True, "true": True, "0": False, "0.0": False, "false": False}


def _ood_flag(value):
    """True / False for an OOD-column value, None if missing (NaN), ValueError otherwise."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (Real, np.number)):
        number = float(value)
        if math.isnan(number):
            return None
        if number in (0.0, 1.0):
            return number == 1.0
        raise ValueError(value)
    text = str(value).strip().lower()
    if text in _OOD_TEXT:
        return _OOD_TEXT[text]
    raise ValueError(value)


def _ood_column(values, column, source, is_csv):
    """The OOD column as a bool mask: 0/1 or false/true; NaN or another value raises InputError naming the row."""
    series = pd.Series(values, dtype=object)
    codes, uniques = pd.factorize(series, use_na_sentinel=True)
    flags = np.empty(len(uniques), dtype=np.int8)  # 0 ID, 1 OOD, -1 missing, -2 other
    for k, value in enumerate(uniques):
        try:
            flag = _ood_flag(value)
        except ValueError:
            flags[k] = -2
        else:
            flags[k] = -1 if flag is None else int(flag)
    per_row = np.where(codes < 0, -1, flags[np.maximum(codes, 0)] if len(uniques) else -1)
    bad = np.flatnonzero(per_row < 0)
    if bad.size:
        i = int(bad[0])
        if per_row[i] == -1:
            n_missing = int((per_row == -1).sum())
            raise InputError(
                f"{source}: missing value (NaN) in the OOD column {column!r} at {row_label(i, is_csv)} "
                f"({n_missing} row(s) in all): mark every row 0/false (ID) or 1/true (OOD)"
            )
        raise InputError(
            f"{source}: value {series.iloc[i]!r} in the OOD column {column!r} at {row_label(i, is_csv)} "
            "is not 0/false (ID) or 1/true (OOD)"
        )
    is_ood = per_row.astype(bool)
    if not is_ood.any():
        raise InputError(
            f"{source}: the OOD column {column!r} marks no row OOD (1/true): a TPR-FPR or "
            "precision-recall target needs OOD rows"
        )
    if is_ood.all():
        raise InputError(
            f"{source}: the OOD column {column!r} marks every row OOD (1/true): a TPR-FPR or "
            "precision-recall target needs ID rows"
        )
    return is_ood


def _require_columns(available, required, source):
    missing = [c for c in required if c not in available]
    if missing:
        raise InputError(
            f"{source}: missing column(s) {missing}; the file has columns {list(available)}"
        )


def out_of_range_message(source, X, first, columns, where):
    """``<file>: value 1e+308 in column 'f4' at row 7 is out of range: ...`` for the value at ``first`` (row, column)."""
    i, j = first
    return f"{source}: {_out_of_range_message(X[i, j], f'in column {columns[j]!r} at {where}')}"


def _check_range(X, columns, source, is_csv, index=None):
    """InputError naming the first value beyond :data:`rejectopt.model.FEATURE_LIMIT` (row-major order).

    ``index``: the file rows of ``X`` when they are a subset (for the message).
    """
    first = _out_of_range(X)[1]
    if first is not None:
        where = row_label(_position(first[0], index), is_csv)
        raise InputError(out_of_range_message(source, X, first, columns, where))


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


def _read_frame(path):
    path = Path(path)
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
        raise InputError(f"{path}: cannot parse CSV ({one_line(err)})") from None
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
    values = arrays[name]
    if values.ndim != 1:
        raise InputError(f"{source}: array {name!r} must be 1-D, got shape {values.shape}")
    return values


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


def load_table(
    path,
    *,
    pred_column="y_pred",
    label_column=None,
    loss_column=None,
    loss="zero_one",
    feature_columns=None,
    need_loss=True,
    ood_column=None,
    logit_features=False,
    feature_option="--feature-columns",
):
    """Read and validate a CSV or NPZ for ``select`` (``need_loss=True``) or ``apply``.

    Parameters
    ----------
    path : path-like
        ``.npz`` with arrays ``X``, ``y_pred`` and ``y`` or ``loss`` (and optionally
        ``feature_names``); anything else is read as a CSV with a header. A deep network's
        outputs (an NPZ with an array ``logits``, a CSV with columns ``logit_0``, ...) are read
        as :data:`NETWORK_ARRAYS` / :data:`NETWORK_CSV` describe.
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
        None: every column except the label, prediction and loss columns.
    need_loss : bool
        ``select``: the loss is read, and the label, prediction and loss columns must not
        be features; values beyond :data:`rejectopt.model.FEATURE_LIMIT` are refused (``apply`` rejects
        such rows instead, see :func:`rejectopt.cli._model.apply_model`).
    ood_column : str or None
        ``select`` with a TPR-FPR or precision-recall target: the column marking OOD rows
        (0/false = ID, 1/true = OOD; array ``is_ood`` of an NPZ); it is not a feature, and
        there must be both ID and OOD rows. The OOD rows need valid features and a predicted
        class (the score of a row depends on both); their label and loss are not read (they
        may be empty) and their ``loss`` is NaN.
    feature_option : str, default="--feature-columns"
        The option that named ``feature_columns``, for the messages (``validate`` reads its
        ``--uncertainty-column`` as the one feature).
    logit_features : bool
        ``select`` of a score that reads a network's logits (a class-shared score, whose
        ``reads_logits`` is True): a network's outputs give their logits as the features, even
        with embeddings. ``apply`` needs no flag: the model's ``feature_columns`` (``logit_*``
        or ``emb_*``) say which it reads. Ignored for a table of predictions.

    Returns
    -------
    Table

    Raises
    ------
    InputError
        Missing or duplicate columns, no rows, NaN, non-numeric or out-of-range values:
        naming the file, row and column.
    """
    frame, is_csv = _read_frame(path)
    source = str(path)
    if is_network_file(frame, is_csv):
        return _network_table(
            frame,
            is_csv,
            source,
            pred_column=pred_column,
            label_column=label_column,
            loss_column=loss_column,
            loss=loss,
            feature_columns=feature_columns,
            need_loss=need_loss,
            ood_column=ood_column,
            logit_features=logit_features,
            feature_option=feature_option,
        )
    label_column = "y" if label_column is None else label_column
    use_pred = pred_column != _NO_PRED
    special = [
        c
        for c in (
            pred_column if use_pred else None,
            (loss_column or label_column) if need_loss else None,
            ood_column,
        )
        if c
    ]
    if need_loss:
        _check_distinct_roles(pred_column if use_pred else None, label_column, loss_column)
    if ood_column is not None:
        roles = {
            label_column: "label",
            loss_column: "loss",
            pred_column if use_pred else None: "prediction",
        }
        if ood_column in roles:
            raise InputError(
                f"--ood-column {ood_column!r} is the {roles[ood_column]} column: the OOD indicator "
                "needs a column of its own"
            )
    if need_loss and feature_columns is not None:
        roles = {
            label_column: "label",
            loss_column: "loss",
            pred_column if use_pred else None: "prediction",
            ood_column: OOD_ROLE,
        }
        _check_feature_list(
            feature_columns,
            {c: r for c, r in roles.items() if c is not None},
            source,
            feature_option,
        )
    if is_csv:
        required = special + list(feature_columns or [])
        _require_columns(frame.columns, required, source)
        if len(frame) == 0:
            raise InputError(f"{source}: no data rows (the file has only a header)")
        inferred = feature_columns is None
        if inferred:
            excluded = {pred_column, label_column, loss_column, ood_column}
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
        column = frame.__getitem__
    else:
        npz_names = {
            pred_column: "y_pred",
            label_column: "y",
            loss_column: "loss",
            ood_column: "is_ood",
        }
        _require_columns(frame, [npz_names[c] for c in special], source)
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

        def column(name):
            return _npz_column(frame, npz_names[name], source)

    for name in special:
        if len(column(name)) != X.shape[0]:
            raise InputError(
                f"{source}: column {name!r} has {len(column(name))} rows, X has {X.shape[0]}"
            )
    if need_loss:
        _check_range(X, feature_columns, source, is_csv)
    is_ood = (
        _ood_column(column(ood_column), ood_column, source, is_csv)
        if ood_column is not None
        else None
    )
    pred_raw = column(pred_column) if use_pred else None
    pred_keys = _class_keys(pred_raw, pred_column, source, is_csv) if use_pred else None
    losses = loss_bound = None
    if need_loss:
        id_rows = None if is_ood is None else np.flatnonzero(~is_ood)
        losses, loss_bound = _losses(
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
            losses = _spread(losses, id_rows, X.shape[0])
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
    )


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

    Returns ``(losses, bound)``: the bound by the loss's definition (:attr:`Table.loss_bound`).
    """

    def part(values):
        return values if rows is None else np.asarray(values, dtype=object)[rows]

    if loss_column is not None:
        losses = _numeric_column(
            part(column(loss_column)), loss_column, source, is_csv, non_negative=True, index=rows
        )
        _check_range(losses[:, None], [loss_column], source, is_csv, index=rows)
        return losses, None
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
        return 100.0 * (labels != pred_keys).astype(float), 100.0
    if loss == "mae":
        y = _numeric_column(part(column(label_column)), label_column, source, is_csv, index=rows)
        y_pred = _numeric_column(part(pred_raw), pred_column, source, is_csv, index=rows)
        _check_range(
            np.column_stack([y, y_pred]), [label_column, pred_column], source, is_csv, index=rows
        )
        # ordinal labels 0..K-1 err by at most K - 1; one class seen: a one-step error is the least there is
        span = float(max(y.max(), y_pred.max()) - min(y.min(), y_pred.min()))
        return np.abs(y - y_pred), span if span > 0 else 1.0
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


# --------------------------------------------------------------------------------------------
# A deep network's outputs
# --------------------------------------------------------------------------------------------
#: The arrays of a network's outputs in an NPZ: ``logits`` (n x K, required), ``embeddings``
#: (n x d, the penultimate layer, optional), ``labels`` (n, true classes 0..K-1; ``select`` only).
NETWORK_ARRAYS = {"logits": "logits", "embeddings": "embeddings", "labels": "labels"}
#: The columns of a network's outputs in a CSV: ``logit_0`` .. ``logit_{K-1}``, ``emb_0`` ..
#: ``emb_{d-1}`` (optional), ``label`` (``select`` only). Features keep these names in
#: ``model.json``, so a model selected on an NPZ applies to a CSV and back.
NETWORK_CSV = {"logits": "logit_", "embeddings": "emb_", "labels": "label"}
_NUMBERED = {prefix: re.compile(rf"^{prefix}(0|[1-9][0-9]*)$") for prefix in ("logit_", "emb_")}


def is_network_file(frame, is_csv):
    """Whether a read file holds a network's outputs: an array ``logits`` (NPZ) or a column ``logit_0`` (CSV)."""
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
    source,
    pred_column,
    loss_column,
    loss,
    feature_columns,
    ood_column,
    need_loss,
    feature_option="--feature-columns",
):
    """Options of a table of predictions that a network's outputs do not take, each with the reason."""
    why = (
        f"{source} holds a network's outputs (logits): the prediction is the largest logit, the features are "
        "the embeddings (else the logits; the logits for the class-shared scores) and the loss is "
        "100 [label != prediction]"
    )
    if (
        not need_loss
    ):  # apply: the options are the model's; its feature columns are checked against the file's
        return
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


def _network_table(
    frame,
    is_csv,
    source,
    *,
    pred_column,
    label_column,
    loss_column,
    loss,
    feature_columns,
    need_loss,
    ood_column,
    logit_features=False,
    feature_option="--feature-columns",
):
    """:class:`Table` of a network's outputs (:data:`NETWORK_ARRAYS`, :data:`NETWORK_CSV`).

    ``select`` (``need_loss``) needs the labels; ``apply`` passes the model's ``feature_columns``,
    which must be the file's embedding or logit columns.

    A score that reads the logits (``logit_features``) gets them even when the file has
    embeddings: fed the embeddings, a class-shared score would take them for logits (softmax,
    margins, energy of the penultimate layer) and learn on meaningless features without a word.
    The logits are passed rather than the file refused: they are what the score needs, and a
    network's export commonly carries both. ``model.json`` records ``logit_*`` as its feature
    columns, and ``apply`` reads the logits of a file with embeddings for such a model.
    """
    _refuse_table_options(
        source,
        pred_column,
        loss_column,
        loss,
        feature_columns,
        ood_column,
        need_loss,
        feature_option,
    )
    if is_csv:
        names = dict(NETWORK_CSV, labels=label_column or NETWORK_CSV["labels"])
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
        if need_loss:
            _require_columns(frame.columns, [names["labels"]], source)
            labels = _numeric_column(
                frame[names["labels"]].to_numpy(), names["labels"], source, True
            )
        else:
            labels = None
        known = set(logit_columns) | set(emb_columns) | {names["labels"]}
        ignored = [str(c) for c in frame.columns if c not in known]
    else:
        names = dict(NETWORK_ARRAYS, labels=label_column or NETWORK_ARRAYS["labels"])
        if "X" in frame or "y_pred" in frame:
            raise InputError(
                f"{source}: both an array 'logits' and an array 'X' or 'y_pred': is it a network's "
                "outputs or a table of predictions? Keep one"
            )
        if need_loss:
            _require_columns(frame, [names["labels"]], source)
        logits, embeddings = frame[names["logits"]], frame.get(names["embeddings"])
        labels = frame[names["labels"]] if need_loss else None
        ignored = [k for k in frame if k not in set(names.values())]
    if ignored:
        log.info("%s: a network's outputs; not read: %s", source, ", ".join(ignored))
    try:
        logits, labels, embeddings = check_network_outputs(logits, labels, embeddings)
    except NetworkOutputError as err:
        raise _network_error(err, source, is_csv, names) from None
    if feature_columns is not None:  # apply: the model's columns say which it was selected on
        logit_features = bool(feature_columns) and str(list(feature_columns)[0]).startswith(
            NETWORK_CSV["logits"]
        )
    if logit_features and embeddings is not None:
        log.info("%s: the score reads the logits: the embeddings are not read", source)
    X = embeddings if embeddings is not None and not logit_features else logits
    feature_columns_found = [f"{'logit_' if X is logits else 'emb_'}{j}" for j in range(X.shape[1])]
    if feature_columns is not None and list(feature_columns) != feature_columns_found:
        given = (
            "embeddings"
            if X is not logits
            else "logits"
            if embeddings is not None
            else "logits, no embeddings"
        )
        raise InputError(
            f"{source}: the model reads {len(feature_columns)} features {_span(feature_columns)}, "
            f"this network's outputs give {len(feature_columns_found)} {_span(feature_columns_found)} "
            f"({given}): apply the model to outputs of the network it was selected on"
        )
    if need_loss:
        _check_range(X, feature_columns_found, source, is_csv)
    y_pred = predictions(logits)
    pred_keys = np.array([str(k) for k in y_pred], dtype=object)
    losses = per_example_loss("zero_one", labels, y_pred) if need_loss else None
    return Table(
        X=X,
        feature_columns=feature_columns_found,
        pred_keys=pred_keys,
        loss=losses,
        source=source,
        is_csv=is_csv,
        pred_raw=y_pred,
        is_ood=None,
        columns=[str(c) for c in frame],
        loss_bound=100.0 if need_loss else None,
        n_logits=int(logits.shape[1]),
    )


def _span(columns):
    columns = list(columns)
    return f"{columns[0]} .. {columns[-1]}" if len(columns) > 2 else ", ".join(columns)
