"""A user's own dataset: one CSV or NPZ file named in the config's ``custom_datasets``."""

from __future__ import annotations

import csv
import logging
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .._io import save_npz
from ..splits import PARTS, _part_sizes, check_ratios
from ._prepare import fingerprint, load_prepared
from ._trust import sha256_of_file

__all__ = ["CustomDataset", "CustomDatasetError", "check_custom", "custom_checksums", "custom_dataset", "load_custom", "prepare_custom"]

logger = logging.getLogger(__name__)

#: The tasks a custom dataset can have (the loss follows: 0/1 x 100, or |rank difference|).
CUSTOM_TASKS = ("classification", "ordinal")


class CustomDatasetError(ValueError):
    """A custom dataset entry or file that cannot be used; the message names file, row and column."""


@dataclass(frozen=True)
class CustomDataset:
    """A validated ``custom_datasets`` entry.

    Attributes
    ----------
    name : str
        The name used under ``datasets:`` and in every output path.
    path : Path
        The CSV (a header, numeric feature columns, the target column) or NPZ
        (arrays ``X`` and ``y``) file.
    task : {"classification", "ordinal"}
    target : str or None
        The target column of a CSV (ignored for NPZ).
    """

    name: str
    path: Path
    task: str
    target: str | None

    @property
    def kind(self) -> str:
        return "npz" if self.path.suffix.lower() == ".npz" else "csv"


def custom_dataset(name: str, entry: dict, base_dir: str | os.PathLike = ".") -> CustomDataset:
    """Validate one ``custom_datasets: {name: {path, task, target}}`` entry (the file is not read).

    A relative ``path`` is taken relative to ``base_dir`` (the working directory).
    """
    where = f"config custom_datasets.{name}"
    if not isinstance(entry, dict):
        raise CustomDatasetError(f"{where}: expected a mapping with keys path, task, target; got {entry!r}")
    unknown = set(entry) - {"path", "task", "target"}
    if unknown:
        raise CustomDatasetError(f"{where}: unknown key(s) {sorted(unknown)}; allowed: path, task, target")
    if "path" not in entry:
        raise CustomDatasetError(f"{where}: 'path' is missing (a .csv or .npz file)")
    path = Path(base_dir) / Path(str(entry["path"])).expanduser()
    task = entry.get("task", "classification")
    if task not in CUSTOM_TASKS:
        raise CustomDatasetError(f"{where}.task: {task!r} is not one of {', '.join(CUSTOM_TASKS)}")
    if path.suffix.lower() not in (".csv", ".npz"):
        raise CustomDatasetError(f"{where}.path: {path} must end in .csv or .npz")
    if not path.is_file():
        raise CustomDatasetError(f"{where}.path: file {path} does not exist (relative paths are read from {Path(base_dir).resolve()})")
    target = entry.get("target")
    if path.suffix.lower() == ".csv" and not target:
        raise CustomDatasetError(f"{where}.target: name the target column of {path}")
    return CustomDataset(name=name, path=path, task=task, target=None if target is None else str(target))


def _csv_matrix(dataset: CustomDataset) -> tuple[np.ndarray, np.ndarray]:
    """Features (float64) and raw target strings of a CSV, each bad cell named by line and column."""
    path = dataset.path
    with open(path, newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    if not rows:
        raise CustomDatasetError(f"{path}: the file is empty; expected a header line and data rows")
    header = [h.strip() for h in rows[0]]
    seen = set()
    for column in header:
        if column in seen:
            raise CustomDatasetError(f"{path} line 1: column {column!r} appears twice in the header; rename one")
        seen.add(column)
    if dataset.target not in header:
        raise CustomDatasetError(
            f"{path}: target column {dataset.target!r} (custom_datasets.{dataset.name}.target) is not in the header "
            f"({', '.join(header)})"
        )
    data = rows[1:]
    if not data:
        raise CustomDatasetError(f"{path}: the header is the only line; no data rows")
    t = header.index(dataset.target)
    features = [c for c in range(len(header)) if c != t]
    if not features:
        raise CustomDatasetError(f"{path}: no feature columns besides the target {dataset.target!r}")
    X = np.empty((len(data), len(features)))
    targets = []
    for i, row in enumerate(data):
        line = i + 2
        if len(row) != len(header):
            raise CustomDatasetError(f"{path} line {line}: {len(row)} fields, the header has {len(header)}")
        for j, c in enumerate(features):
            X[i, j] = _number(row[c], path, line, header[c])
        value = row[t].strip()
        if value == "" or value.lower() == "nan":
            raise CustomDatasetError(f"{path} line {line}, column {header[t]!r}: the target is missing")
        targets.append(value)
    return X, np.asarray(targets)


def _number(text: str, path, line: int, column: str) -> float:
    text = text.strip()
    try:
        value = float(text)
    except ValueError:
        what = "empty" if text == "" else f"{text!r} is not a number"
        raise CustomDatasetError(
            f"{path} line {line}, column {column!r}: {what}; features must be numeric (one-hot encode text, "
            "impute or drop missing values)"
        ) from None
    if not np.isfinite(value):
        raise CustomDatasetError(f"{path} line {line}, column {column!r}: {text} is not a finite number")
    return value


def _npz_arrays(dataset: CustomDataset) -> tuple[np.ndarray, np.ndarray]:
    path = dataset.path
    try:
        with np.load(path, allow_pickle=False) as data:
            missing = [k for k in ("X", "y") if k not in data.files]
            if missing:
                raise CustomDatasetError(f"{path}: no array {' or '.join(missing)} (found {', '.join(data.files)})")
            X, y = data["X"], data["y"]
    except CustomDatasetError:
        raise
    except ValueError as err:  # object arrays need pickle, which is refused
        raise CustomDatasetError(f"{path}: cannot read arrays X and y without pickle ({err})") from None
    if X.ndim != 2 or y.ndim != 1 or X.shape[0] != y.shape[0]:
        raise CustomDatasetError(f"{path}: X must be 2-D and y 1-D with as many rows; got {X.shape} and {y.shape}")
    if not np.issubdtype(X.dtype, np.number):
        raise CustomDatasetError(f"{path}: X has dtype {X.dtype}; features must be numeric")
    X = X.astype(np.float64)
    bad = np.argwhere(~np.isfinite(X))
    if bad.size:
        row, column = bad[0]
        raise CustomDatasetError(f"{path}: X[{row}, {column}] is {X[row, column]}; features must be finite numbers")
    return X, y


def _encode_target(dataset: CustomDataset, raw: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Labels ``0..K-1`` and the class values in label order.

    Classification: sorted distinct values (numbers numerically, else as text).
    Ordinal: the values must be numbers; their ranks among the distinct sorted
    values are the labels, so the loss ``|y - y'|`` counts levels.
    """
    numeric = None
    try:
        numeric = raw.astype(np.float64)
    except ValueError:
        if dataset.task == "ordinal":
            bad = next(v for v in raw if not _is_number(v))
            raise CustomDatasetError(
                f"{dataset.path}: ordinal target {dataset.target or 'y'!r} holds {bad!r}; ordinal levels must be numbers"
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


def load_custom(dataset: CustomDataset) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(X, y, classes)`` of a custom dataset, validated; errors name file, line and column."""
    X, raw = _csv_matrix(dataset) if dataset.kind == "csv" else _npz_arrays(dataset)
    y, classes = _encode_target(dataset, raw)
    if len(classes) < 2:
        raise CustomDatasetError(f"{dataset.path}: the target has a single class ({classes[0]!r}); need at least 2")
    return X, y, classes


def min_class_size(ratios) -> int:
    """Smallest class size for which every part of ``ratios`` gets at least one example."""
    ratios = check_ratios(ratios)
    n = len(ratios)
    while np.any(_part_sizes(n, ratios) == 0):
        n += 1
    return n


def check_custom(dataset: CustomDataset, ratios) -> dict:
    """Read and validate a custom dataset before any job runs; returns its n, d, K and sha256.

    Besides the file checks of :func:`load_custom`, every class must be large
    enough for each of the five parts (Trn1, Val1, Trn2, Val2, Tst) to receive
    one of its examples under the stratified split.
    """
    X, y, classes = load_custom(dataset)
    counts = np.bincount(y, minlength=len(classes))
    need = min_class_size(ratios)
    small = [(classes[k].item(), int(counts[k])) for k in range(len(classes)) if counts[k] < need]
    if small:
        listed = ", ".join(f"{value!r} ({count})" for value, count in small[:5])
        raise CustomDatasetError(
            f"{dataset.path}: class(es) {listed} of target {dataset.target or 'y'!r} are too small to be split five "
            f"ways ({'/'.join(PARTS)} with ratios {check_ratios(ratios).tolist()}): every class needs at least {need} "
            "examples; merge or drop the small classes"
        )
    return {"n": int(X.shape[0]), "d": int(X.shape[1]), "k": len(classes), "sha256": sha256_of_file(dataset.path)}


def prepare_custom(dataset: CustomDataset, out_npz) -> dict:
    """Write ``out_npz`` (arrays ``X``, ``y``) from a custom dataset; returns n, d, K, sha256."""
    X, y, classes = load_custom(dataset)
    save_npz(out_npz, X=X, y=y)
    digest = fingerprint(X, y)
    logger.info(
        "%s: wrote %s from %s (n=%d, d=%d, K=%d, classes %s, xy_sha256 %s)",
        dataset.name, out_npz, dataset.path, *X.shape, len(classes), list(classes)[:10], digest,
    )
    return {"n": int(X.shape[0]), "d": int(X.shape[1]), "k": len(classes), "xy_sha256": digest,
            "raw": {dataset.path.name: sha256_of_file(dataset.path)}}


def custom_checksums(dataset: CustomDataset, npz_path) -> dict:
    """What identifies a prepared custom dataset (as :func:`~rejectopt.datasets.dataset_checksums`)."""
    X, y = load_prepared(npz_path)
    return {"n": int(X.shape[0]), "d": int(X.shape[1]), "k": int(y.max()) + 1, "xy_sha256": fingerprint(X, y),
            "raw": {f"{dataset.path.name} (custom)": sha256_of_file(dataset.path)}}
