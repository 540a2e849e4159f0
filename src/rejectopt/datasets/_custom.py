"""A user's own dataset: one CSV or NPZ file named in the config's ``custom_datasets``."""

from __future__ import annotations

import array
import csv
import logging
import os
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import cast

import numpy as np

from .._checks import SPLIT_PARTS, check_ratios
from .._io import LazyNpz, save_npz
from ..exceptions import CustomDatasetError
from ..splits import DEFAULT_RATIOS, part_sizes
from ._prepare import fingerprint, load_prepared
from ._trust import sha256_of_file

__all__ = [
    "CustomDataset",
    "CustomDatasetError",
    "check_custom",
    "custom_checksums",
    "custom_dataset",
    "load_custom",
    "peek_custom",
    "prepare_custom",
]

logger = logging.getLogger(__name__)

#: The tasks a custom dataset can have (the loss follows: 0/1 x 100, or |rank difference|).
CUSTOM_TASKS = ("classification", "ordinal")
#: Bytes of a CSV read at planning time to estimate its number of rows (the file is not parsed).
_SAMPLE_BYTES = 1 << 16


@dataclass(frozen=True)
class CustomDataset:
    """A validated ``custom_datasets`` entry.

    Attributes
    ----------
    name : str
        The name used under ``datasets:`` and in every output path.
    path : Path
        The CSV (a header, numeric feature columns, the target column; UTF-8) or NPZ
        (arrays ``X`` and ``y``) file.
    task : {"classification", "ordinal"}
    target : str or None
        The target column of a CSV (ignored for NPZ).
    n_classes : int or None
        Classes the config declares, so experiments needing a class count (OOD, double hinge)
        are checked at planning time; the file must hold exactly as many when prepared.
    ratios : tuple of float or None
        Split ratios; every class must reach each of the five parts. None:
        :data:`rejectopt.splits.DEFAULT_RATIOS`.

    Parameters
    ----------
    name, path, task, target, n_classes, ratios
        The attributes above (``n_classes``, ``ratios`` default None).

    Examples
    --------
    The pipeline makes one from each ``custom_datasets`` entry; the suffix sets the format:

    >>> from pathlib import Path
    >>> from rejectopt.datasets import CustomDataset
    >>> fruit = CustomDataset("fruit", Path("fruit.csv"), "classification", "fruit", n_classes=2)
    >>> fruit.kind, CustomDataset("grades", Path("grades.npz"), "ordinal", None).kind
    ('csv', 'npz')
    """

    name: str
    path: Path
    task: str
    target: str | None
    n_classes: int | None = None
    ratios: tuple | None = None

    @property
    def kind(self) -> str:
        return "npz" if self.path.suffix.lower() == ".npz" else "csv"


def custom_dataset(
    name: str, entry: dict, base_dir: str | os.PathLike = ".", ratios=None
) -> CustomDataset:
    """Validate one ``custom_datasets: {name: {path, task, target, n_classes}}`` entry (the file is not read).

    Parameters
    ----------
    name : str
        The key of the entry under ``custom_datasets``.
    entry : dict
        ``path`` (required; ``.csv`` or ``.npz``), ``task`` (default ``"classification"``),
        ``target`` (required for a CSV), ``n_classes`` (optional, an integer >= 2).
    base_dir : path-like, default "."
        The folder a relative ``path`` is read from.
    ratios : sequence of float, optional
        See :class:`CustomDataset`.

    Returns
    -------
    CustomDataset
        With ``path`` joined to ``base_dir``.

    Raises
    ------
    CustomDatasetError
        An unknown or missing key, a bad value or a missing file, named as
        ``config custom_datasets.<name>.<key>``.
    """
    where = f"config custom_datasets.{name}"
    if not isinstance(entry, dict):
        raise CustomDatasetError(
            f"{where}: expected a mapping with keys path, task, target, n_classes; got {entry!r}"
        )
    unknown = set(entry) - {"path", "task", "target", "n_classes"}
    if unknown:
        raise CustomDatasetError(
            f"{where}: unknown key(s) {sorted(unknown)}; allowed: path, task, target, n_classes"
        )
    if "path" not in entry:
        raise CustomDatasetError(f"{where}: 'path' is missing (a .csv or .npz file)")
    path = Path(base_dir) / Path(str(entry["path"])).expanduser()
    task = entry.get("task", "classification")
    if task not in CUSTOM_TASKS:
        raise CustomDatasetError(f"{where}.task: {task!r} is not one of {', '.join(CUSTOM_TASKS)}")
    if path.suffix.lower() not in (".csv", ".npz"):
        raise CustomDatasetError(f"{where}.path: {path} must end in .csv or .npz")
    if not path.is_file():
        raise CustomDatasetError(
            f"{where}.path: file {path} does not exist (relative paths are read from {Path(base_dir).resolve()})"
        )
    target = entry.get("target")
    if path.suffix.lower() == ".csv" and not target:
        raise CustomDatasetError(f"{where}.target: name the target column of {path}")
    n_classes = entry.get("n_classes")
    if n_classes is not None and (
        isinstance(n_classes, bool) or not isinstance(n_classes, int) or n_classes < 2
    ):
        raise CustomDatasetError(
            f"{where}.n_classes: {n_classes!r} is not a number of classes (an integer >= 2)"
        )
    return CustomDataset(
        name=name,
        path=path,
        task=task,
        target=None if target is None else str(target),
        n_classes=n_classes,
        ratios=None if ratios is None else tuple(float(r) for r in ratios),
    )


def _decoded_lines(handle, path):
    """The lines of a CSV opened in binary, decoded as UTF-8 one by one, so a bad byte is named by its line."""
    for number, raw in enumerate(handle, start=1):
        try:
            yield raw.decode("utf-8-sig" if number == 1 else "utf-8")
        except UnicodeDecodeError as err:
            raise CustomDatasetError(
                f"{path} line {number}: byte 0x{raw[err.start]:02x} "
                f"(position {err.start + 1} of the line) is not UTF-8; "
                "custom CSV files are read as UTF-8: save the file as UTF-8 (e.g. iconv -f latin1 -t utf-8)"
            ) from None


def _csv_header(dataset: CustomDataset, header: list) -> tuple[list, int]:
    """The stripped header and the target's index; duplicated names and a missing target column are refused."""
    path = dataset.path
    header = [h.strip() for h in header]
    seen = set()
    for column in header:
        if column in seen:
            raise CustomDatasetError(
                f"{path} line 1: column {column!r} appears twice in the header; rename one"
            )
        seen.add(column)
    if dataset.target not in header:
        raise CustomDatasetError(
            f"{path}: target column {dataset.target!r} (custom_datasets.{dataset.name}.target) is not in the header "
            f"({', '.join(header)})"
        )
    if len(header) < 2:
        raise CustomDatasetError(
            f"{path}: no feature columns besides the target {dataset.target!r}"
        )
    return header, header.index(dataset.target)


def _csv_matrix(dataset: CustomDataset, feature_limit: float) -> tuple[np.ndarray, np.ndarray]:
    """Features (float64) and raw target strings of a CSV, each bad cell named by line and column.

    The rows are converted as they are read (8 bytes a value), not held as text.
    """
    path = dataset.path
    with open(path, "rb") as handle:
        reader = csv.reader(_decoded_lines(handle, path))
        header = next(reader, None)
        if header is None:
            raise CustomDatasetError(
                f"{path}: the file is empty; expected a header line and data rows"
            )
        header, t = _csv_header(dataset, header)
        features = [c for c in range(len(header)) if c != t]
        values = array.array("d")
        targets = []
        for row in reader:
            line = reader.line_num
            if len(row) != len(header):
                raise CustomDatasetError(
                    f"{path} line {line}: {len(row)} fields, the header has {len(header)}"
                )
            values.extend(_number(row[c], path, line, header[c], feature_limit) for c in features)
            value = row[t].strip()
            if value == "" or value.lower() == "nan":
                raise CustomDatasetError(
                    f"{path} line {line}, column {header[t]!r}: the target is missing"
                )
            targets.append(value)
    if not targets:
        raise CustomDatasetError(f"{path}: the header is the only line; no data rows")
    X = np.frombuffer(values, dtype=np.float64).reshape(len(targets), len(features)).copy()
    return X, np.asarray(targets)


def _beyond(value: float, feature_limit: float) -> str | None:
    """What is wrong with a feature value, or None: NaN, infinite (an overflowing number included), beyond the bound."""
    if np.isnan(value):
        return "is NaN (a missing value)"
    if not np.isfinite(value):
        return "is not finite (infinite, or beyond float64's range)"
    if abs(value) > feature_limit:
        return (
            f"lies beyond +-{feature_limit:g}, the bound on feature values (beyond it, standardising the "
            "features overflows float64); rescale the column, e.g. to log units"
        )
    return None


def _number(text: str, path, line: int, column: str, feature_limit: float) -> float:
    text = text.strip()
    try:
        value = float(text)
    except ValueError:
        what = "empty" if text == "" else f"{text!r} is not a number"
        raise CustomDatasetError(
            f"{path} line {line}, column {column!r}: {what}; features must be numeric (one-hot encode text, "
            "impute or drop missing values)"
        ) from None
    problem = _beyond(value, feature_limit)
    if problem is not None:
        raise CustomDatasetError(f"{path} line {line}, column {column!r}: {text} {problem}")
    return value


def _npz_arrays(dataset: CustomDataset, feature_limit: float) -> tuple[np.ndarray, np.ndarray]:
    path = dataset.path
    data = LazyNpz(
        path, error=CustomDatasetError
    )  # reads X and y only, each checked against its declared size
    missing = [k for k in ("X", "y") if k not in data.files]
    if missing:
        raise CustomDatasetError(
            f"{path}: no array {' or '.join(missing)} (found {', '.join(data.files)})"
        )
    X, y = data["X"], data["y"]
    if X.ndim != 2 or y.ndim != 1 or X.shape[0] != y.shape[0]:
        raise CustomDatasetError(
            f"{path}: X must be 2-D and y 1-D with as many rows; got {X.shape} and {y.shape}"
        )
    if not np.issubdtype(X.dtype, np.number):
        raise CustomDatasetError(f"{path}: X has dtype {X.dtype}; features must be numeric")
    X = X.astype(np.float64)
    with np.errstate(invalid="ignore"):
        bad = np.argwhere(~(np.abs(X) <= feature_limit))
    if bad.size:
        row, column = bad[0]
        raise CustomDatasetError(
            f"{path}: X[{row}, {column}] = {X[row, column]:g} {_beyond(X[row, column], feature_limit)} "
            f"({len(np.unique(bad[:, 0]))} row(s) in all)"
        )
    return X, y


def _encode_target(dataset: CustomDataset, raw: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Labels ``0..K-1`` and the class values in label order.

    Classification: sorted distinct values (numbers numerically, else as text). Ordinal: numbers
    only, labelled by rank so that the loss ``|y - y'|`` counts levels.
    """
    numeric = None
    try:
        numeric = raw.astype(np.float64)
    except ValueError:
        if dataset.task == "ordinal":
            bad = next(v for v in raw if not _is_number(v))
            raise CustomDatasetError(
                f"{dataset.path}: ordinal target {dataset.target or 'y'!r} holds {bad!r}; "
                "ordinal levels must be numbers"
            ) from None
    if numeric is not None:
        if not np.all(np.isfinite(numeric)):
            row = int(np.flatnonzero(~np.isfinite(numeric))[0])
            raise CustomDatasetError(f"{dataset.path}: target row {row} is {numeric[row]}")
        classes, y = np.unique(numeric, return_inverse=True)
    else:
        classes, y = np.unique(raw.astype(str), return_inverse=True)
    return y.astype(np.int64), classes


def _is_number(text) -> bool:
    try:
        float(text)
    except (TypeError, ValueError):
        return False
    return True


def peek_custom(dataset: CustomDataset) -> dict:
    """What planning needs of a custom dataset, without parsing its data: ``n`` rows (``exact`` or not), ``d`` features.

    A CSV's rows are estimated from its size and first lines; an NPZ's shapes are read off its
    array headers. Content is checked by :func:`prepare_custom`, so a dry run costs the same for
    any file size.

    Parameters
    ----------
    dataset : CustomDataset
        The entry (:func:`custom_dataset`).

    Returns
    -------
    dict
        ``{"n", "d", "exact"}`` (``exact``: n counted, not estimated).

    Raises
    ------
    CustomDatasetError
        An empty CSV, a header not UTF-8 or without the target column, an NPZ without 2-D ``X``
        and 1-D ``y`` of as many rows.

    Examples
    --------
    A CSV of 20 rows, two feature columns and the target (shown, not run: it reads a file)::

        fruit = CustomDataset("fruit", Path("fruit.csv"), "classification", "fruit")
        peek_custom(fruit)   # {'n': 20, 'd': 2, 'exact': True}
    """
    path = dataset.path
    if dataset.kind == "csv":
        with open(path, "rb") as handle:
            first = handle.readline()  # the header, whole however wide
            sample = handle.read(_SAMPLE_BYTES)
        header = next(csv.reader(_decoded_lines(iter([first]), path)), None)
        if header is None:
            raise CustomDatasetError(
                f"{path}: the file is empty; expected a header line and data rows"
            )
        d = len(_csv_header(dataset, header)[0]) - 1
        rows = sample.splitlines(keepends=True)
        if len(sample) < _SAMPLE_BYTES:  # the whole file was read: the count is exact
            return {"n": sum(1 for line in rows if line.strip()), "d": d, "exact": True}
        complete = rows[:-1] or rows  # the sample's last row may be cut
        per_row = sum(map(len, complete)) / len(complete)
        return {"n": round((path.stat().st_size - len(first)) / per_row), "d": d, "exact": False}
    try:
        with zipfile.ZipFile(path) as archive:
            shapes = {key: _npy_shape(archive, key) for key in ("X", "y")}
    except (OSError, ValueError, zipfile.BadZipFile) as err:
        raise CustomDatasetError(
            f"{path}: not a readable .npz file of arrays X and y ({err})"
        ) from None
    missing = [k for k, shape in shapes.items() if shape is None]
    if missing:
        raise CustomDatasetError(f"{path}: no array {' or '.join(missing)}")
    x_shape, y_shape = cast(tuple, shapes["X"]), cast(tuple, shapes["y"])  # neither is missing
    if len(x_shape) != 2 or len(y_shape) != 1 or x_shape[0] != y_shape[0]:
        raise CustomDatasetError(
            f"{path}: X must be 2-D and y 1-D with as many rows; got {x_shape} and {y_shape}"
        )
    return {"n": int(y_shape[0]), "d": int(x_shape[1]), "exact": True}


def _npy_shape(archive: zipfile.ZipFile, key: str) -> tuple | None:
    """The shape in the header of array ``key`` of an NPZ archive (its data are not read), None if absent."""
    if f"{key}.npy" not in archive.namelist():
        return None
    with archive.open(f"{key}.npy") as member:
        version = np.lib.format.read_magic(member)
        read = (
            np.lib.format.read_array_header_1_0
            if version == (1, 0)
            else np.lib.format.read_array_header_2_0
        )
        return tuple(read(member)[0])


def load_custom(
    dataset: CustomDataset, *, feature_limit: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(X, y, classes)`` of a custom dataset, validated; errors name file, line and column.

    Parameters
    ----------
    dataset : CustomDataset
        The entry (see :func:`custom_dataset`).
    feature_limit : float
        The models' bound on a feature's magnitude (:data:`rejectopt.model.FEATURE_LIMIT`):
        beyond it, NaN or infinite is refused here rather than turning into a NaN inside a job.

    Returns
    -------
    X : numpy.ndarray of float64, shape (n, d)
        In file order.
    y : numpy.ndarray of int64, shape (n,)
        Labels 0..K-1, ranks among the sorted distinct target values (numbers numerically).
    classes : numpy.ndarray, shape (K,)
        The target value of each label.

    Raises
    ------
    CustomDatasetError
        A cell not a number, NaN, infinite or beyond ``feature_limit``, a ragged row, a missing
        target, a single class.

    Examples
    --------
    An ordinal NPZ whose ``y`` is ``[3, 1, 3]`` keeps the order of its levels (shown, not run:
    it reads a file)::

        grades = CustomDataset("grades", Path("grades.npz"), "ordinal", None)
        X, y, classes = load_custom(grades, feature_limit=1e150)
        y.tolist(), classes.tolist()   # ([1, 0, 1], [1.0, 3.0])
    """
    X, raw = (
        _csv_matrix(dataset, feature_limit)
        if dataset.kind == "csv"
        else _npz_arrays(dataset, feature_limit)
    )
    y, classes = _encode_target(dataset, raw)
    if len(classes) < 2:
        raise CustomDatasetError(
            f"{dataset.path}: the target has a single class ({classes[0]!r}); need at least 2"
        )
    return X, y, classes


def min_class_size(ratios) -> int:
    """Smallest class size for which every part of ``ratios`` gets at least one example."""
    ratios = check_ratios(ratios)
    n = len(ratios)
    while np.any(part_sizes(n, ratios) == 0):
        n += 1
    return n


def _check_classes(dataset: CustomDataset, y: np.ndarray, classes: np.ndarray) -> None:
    """The declared number of classes holds, and every class can reach each of the five parts."""
    if dataset.n_classes is not None and len(classes) != dataset.n_classes:
        shown = ", ".join(map(repr, classes.tolist()[:10])) + (", ..." if len(classes) > 10 else "")
        raise CustomDatasetError(
            f"{dataset.path}: target {dataset.target or 'y'!r} holds {len(classes)} classes ({shown}), but "
            f"config custom_datasets.{dataset.name}.n_classes declares {dataset.n_classes}; correct the config"
        )
    ratios = DEFAULT_RATIOS if dataset.ratios is None else dataset.ratios
    counts = np.bincount(y, minlength=len(classes))
    need = min_class_size(ratios)
    small = [(classes[k].item(), int(counts[k])) for k in range(len(classes)) if counts[k] < need]
    if small:
        listed = ", ".join(f"{value!r} ({count})" for value, count in small[:5])
        raise CustomDatasetError(
            f"{dataset.path}: class(es) {listed} of target {dataset.target or 'y'!r} are too small to be split five "
            f"ways ({'/'.join(SPLIT_PARTS)} with ratios {check_ratios(ratios).tolist()}): "
            f"every class needs at least {need} "
            "examples; merge or drop the small classes"
        )


def check_custom(dataset: CustomDataset, *, feature_limit: float) -> dict:
    """Read and validate a custom dataset's content; returns its n, d, K and sha256.

    Beyond :func:`load_custom`'s checks, the declared ``n_classes`` must hold and the stratified
    split must give every class a row in each of the five parts (Trn1, Val1, Trn2, Val2, Tst).

    Parameters
    ----------
    dataset : CustomDataset
        The entry (see :func:`custom_dataset`).
    feature_limit : float
        The largest feature magnitude accepted (see :func:`load_custom`).

    Returns
    -------
    dict
        ``{"n", "d", "k", "sha256"}``: rows, features, classes, and the file's sha256.

    Raises
    ------
    CustomDatasetError
        From :func:`load_custom`, a wrong ``n_classes``, a class too small for the five parts.
    """
    X, y, classes = load_custom(dataset, feature_limit=feature_limit)
    _check_classes(dataset, y, classes)
    return {
        "n": int(X.shape[0]),
        "d": int(X.shape[1]),
        "k": len(classes),
        "sha256": sha256_of_file(dataset.path),
    }


def prepare_custom(dataset: CustomDataset, out_npz, *, feature_limit: float) -> dict:
    """Write ``out_npz`` (arrays ``X``, ``y``) from a custom dataset checked as by :func:`check_custom`.

    Nothing is written when a check fails.

    Parameters
    ----------
    dataset : CustomDataset
        The entry (see :func:`custom_dataset`).
    out_npz : path-like
        Output file, written atomically; load with :func:`load_prepared`.
    feature_limit : float
        The largest feature magnitude accepted (see :func:`load_custom`).

    Returns
    -------
    dict
        ``{"n", "d", "k", "xy_sha256", "raw": {file name: sha256}}``, as :func:`prepare_dataset`.

    Raises
    ------
    CustomDatasetError
        As :func:`check_custom`.
    """
    X, y, classes = load_custom(dataset, feature_limit=feature_limit)
    _check_classes(dataset, y, classes)
    save_npz(out_npz, X=X, y=y)
    digest = fingerprint(X, y)
    logger.info(
        "%s: wrote %s from %s (n=%d, d=%d, K=%d, classes %s, xy_sha256 %s)",
        dataset.name,
        out_npz,
        dataset.path,
        *X.shape,
        len(classes),
        list(classes)[:10],
        digest,
    )
    return {
        "n": int(X.shape[0]),
        "d": int(X.shape[1]),
        "k": len(classes),
        "xy_sha256": digest,
        "raw": {dataset.path.name: sha256_of_file(dataset.path)},
    }


def custom_checksums(dataset: CustomDataset, npz_path) -> dict:
    """What identifies a prepared custom dataset (as :func:`~rejectopt.datasets.dataset_checksums`).

    Parameters
    ----------
    dataset : CustomDataset
        The entry (see :func:`custom_dataset`).
    npz_path : path-like
        The file written by :func:`prepare_custom`.

    Returns
    -------
    dict
        ``{"n", "d", "k", "xy_sha256", "raw": {"<file name> (custom)": sha256}}``.
    """
    X, y = load_prepared(npz_path)
    return {
        "n": int(X.shape[0]),
        "d": int(X.shape[1]),
        "k": int(y.max()) + 1,
        "xy_sha256": fingerprint(X, y),
        "raw": {f"{dataset.path.name} (custom)": sha256_of_file(dataset.path)},
    }
