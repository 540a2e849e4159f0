"""From raw files to a verified ``.npz`` with the canonical arrays ``X`` (float64) and ``y`` (int64).

Validate before trusting: the parsed arrays are checked (:func:`validate_arrays`:
2-D, Table 2's column count, finite values, integer labels) and compared with
the registry's shape and fingerprint before ``data.npz`` is written.  A raw file
without a pinned sha256 is recorded in ``checksums.lock`` only after all of this
passed; if anything fails, it is moved aside to ``<name>.rejected`` (so that no
untrusted file looks complete) and the error says so.
"""

from __future__ import annotations

import hashlib
import logging
import os
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from .._io import save_npz
from ._download import DownloadOptions
from ._fetch import fetch_file, find_in_mirror
from ._trust import is_trusted, read_lock, record_trusted, sha256_of_file
from ._parsers import encode_labels, equal_frequency_bins
from ._registry import DatasetSpec, get_spec

__all__ = [
    "available_in_mirror",
    "fingerprint",
    "load_prepared",
    "parse_raw",
    "prepare_dataset",
    "RawDataError",
    "REJECTED_SUFFIX",
    "validate_arrays",
]

logger = logging.getLogger(__name__)

#: Suffix of a raw file moved aside because its dataset failed parsing or validation.
REJECTED_SUFFIX = ".rejected"


class RawDataError(ValueError):
    """Parsed raw files that cannot be used: the message names the raw files and, where known, the row."""


def fingerprint(X: np.ndarray, y: np.ndarray) -> str:
    """sha256 identifying the content of (X, y), independent of file formats.

    Hashes, in this order: ``X`` as C-ordered little-endian float64 bytes,
    ``y`` as little-endian int64 bytes, then the shapes ``X.shape + y.shape``
    as little-endian int64.
    """
    X = np.ascontiguousarray(X, dtype="<f8")
    y = np.ascontiguousarray(y, dtype="<i8")
    hasher = hashlib.sha256()
    hasher.update(X.tobytes(order="C"))
    hasher.update(y.tobytes(order="C"))
    hasher.update(np.asarray(X.shape + y.shape, dtype="<i8").tobytes())
    return hasher.hexdigest()


def parse_raw(name: str | DatasetSpec, paths: Mapping[str, str | os.PathLike]) -> tuple[np.ndarray, np.ndarray]:
    """Read the raw files of a dataset into canonical ``X`` (float64) and ``y`` (int64, 0..K-1).

    Parameters
    ----------
    name : str or DatasetSpec
    paths : mapping
        ``{raw file name: local path}`` for every file of the spec.
    """
    spec = get_spec(name) if isinstance(name, str) else name
    X, target = spec.parser(paths)
    if spec.target_encoding == "equal_frequency":
        y = equal_frequency_bins(target, spec.n_classes)
    elif spec.target_encoding == "labels":
        y = encode_labels(target)
    else:
        raise ValueError(f"{spec.name}: unknown target encoding {spec.target_encoding!r}")
    return np.ascontiguousarray(X, dtype=np.float64), y.astype(np.int64)


def _check_against_spec(spec: DatasetSpec, X: np.ndarray, y: np.ndarray, digest: str) -> None:
    found = (X.shape[0], X.shape[1], int(y.max()) + 1 if len(y) else 0)
    expected = (spec.n_examples, spec.n_features, spec.n_classes)
    if found != expected or len(y) != X.shape[0] or len(np.unique(y)) != found[2]:
        raise ValueError(f"{spec.name}: prepared (n, d, K) = {found}, expected {expected}")
    if spec.xy_sha256 is not None and digest != spec.xy_sha256:
        raise ValueError(
            f"{spec.name}: fingerprint of the prepared data is {digest}, expected {spec.xy_sha256} "
            "(the raw content or the parser changed)"
        )


def validate_arrays(spec: DatasetSpec, X: np.ndarray, y: np.ndarray, paths: Mapping[str, str | os.PathLike]) -> None:
    """Check parsed arrays before anything is written: a 2-D ``X`` with the spec's column count,
    finite values, one integer label >= 0 per row.

    The readers already name the file, line and column of a bad cell; this is the
    net behind them (e.g. for a whole file with one column too few).

    Raises
    ------
    RawDataError
        Naming the dataset, its raw files and the first bad row (counted over the
        files in the order given, header and blank lines not counted).
    """
    files = " + ".join(Path(paths[name]).name for name in spec.file_names)
    where = f"{spec.name}: parsed from {files}"
    if X.ndim != 2:
        raise RawDataError(f"{where}: X has shape {X.shape}, expected a 2-D table")
    if X.shape[1] != spec.n_features:
        raise RawDataError(
            f"{where}: wrong column count: {X.shape[1]} feature columns, expected {spec.n_features} "
            "(Table 2); the file layout differs from the one the reader expects"
        )
    if y.ndim != 1 or len(y) != len(X):
        raise RawDataError(f"{where}: {len(y)} labels for {len(X)} rows")
    bad = ~np.isfinite(X)
    if bad.any():
        row = int(np.argmax(bad.any(axis=1)))
        column = int(np.argmax(bad[row]))
        raise RawDataError(
            f"{where}: data row {row + 1}, feature column {column + 1}: non-finite value {float(X[row, column])}"
        )
    if y.dtype.kind not in "iu" or (len(y) and int(y.min()) < 0):
        raise RawDataError(f"{where}: labels must be integers >= 0 (got dtype {y.dtype}, min {y.min() if len(y) else None})")


def _reject(dest: Path, pending: Mapping[str, str]) -> list[Path]:
    """Move the pending (untrusted) raw files aside to ``<name>.rejected``; their new paths."""
    moved = []
    for name in sorted(pending):
        path = dest / name
        if path.exists():
            target = path.with_name(name + REJECTED_SUFFIX)
            os.replace(path, target)
            moved.append(target)
    return moved


def prepare_dataset(
    name: str,
    raw_dir: str | os.PathLike,
    out_npz: str | os.PathLike,
    mirror: str | os.PathLike | None = None,
    allow_download: bool = True,
    download: DownloadOptions | Mapping | None = None,
) -> dict:
    """Fetch, verify, parse and validate a dataset, and write ``out_npz`` with arrays ``X`` and ``y``.

    Parameters
    ----------
    name : str
        Dataset name (see ``REGISTRY``).
    raw_dir : path-like
        Raw files go to ``raw_dir/<name>/`` (with its ``checksums.lock``).
    out_npz : path-like
        Output file, written atomically; load with :func:`load_prepared`.
    mirror : path-like, optional
        The ``data_mirror`` folder (see :func:`fetch_file`).
    allow_download : bool, default True
        Passed to :func:`fetch_file`.
    download : DownloadOptions or mapping, optional
        Download base URL, retries, backoff and timeout (see :class:`DownloadOptions`).

    Returns
    -------
    dict
        ``{"n": ..., "d": ..., "k": ..., "xy_sha256": ...}``.

    Raises
    ------
    ChecksumError, DownloadError, DecompressionError, DataSourceError
        From fetching.
    ValueError
        A reader's error naming the file, line and column of a bad cell;
        :class:`RawDataError` from :func:`validate_arrays`; a shape or pinned
        fingerprint differing from the registry's.  If a raw file without a
        pinned sha256 took part, it is moved to ``<name>.rejected``, never
        recorded in ``checksums.lock``, and the error is a :class:`RawDataError`
        saying so.
    """
    spec = get_spec(name)
    dest = Path(raw_dir) / spec.name
    paths = {
        f.name: fetch_file(f, dest, mirror=mirror, allow_download=allow_download, download=download, record_lock=False)
        for f in spec.files
    }
    # Files with neither a pinned nor a locked sha256: trusted only once everything below passed.
    pending = {f.name: sha256_of_file(paths[f.name]) for f in spec.files if not is_trusted(f, dest)}
    try:
        X, y = parse_raw(spec, paths)
        validate_arrays(spec, X, y, paths)
        digest = fingerprint(X, y)
        _check_against_spec(spec, X, y, digest)
    except Exception as exc:
        if not pending:
            raise
        moved = _reject(dest, pending)
        reason = str(exc).strip().rstrip(".") if isinstance(exc, ValueError) else f"{type(exc).__name__}: {exc}"
        raise RawDataError(
            f"{reason}. "
            f"Not trusted: {', '.join(sorted(pending))} (no pinned sha256) "
            f"{'was' if len(pending) == 1 else 'were'} not recorded in {dest / 'checksums.lock'} and "
            f"moved aside to {', '.join(str(p) for p in moved)} for inspection; the next run fetches "
            f"{'it' if len(pending) == 1 else 'them'} again."
        ) from exc
    save_npz(out_npz, X=X, y=y)
    record_trusted(dest, pending)
    logger.info("%s: wrote %s (n=%d, d=%d, K=%d, xy_sha256 %s)", name, out_npz, *X.shape, spec.n_classes, digest)
    return {"n": int(X.shape[0]), "d": int(X.shape[1]), "k": int(y.max()) + 1, "xy_sha256": digest}


def load_prepared(path: str | os.PathLike) -> tuple[np.ndarray, np.ndarray]:
    """Load ``(X, y)`` written by :func:`prepare_dataset` (no pickles allowed)."""
    with np.load(path, allow_pickle=False) as data:
        return data["X"], data["y"]


def available_in_mirror(name: str, mirror: str | os.PathLike | None) -> bool:
    """True if every raw file of dataset ``name`` is in the mirror (``<mirror>/<name>/<file>[.xz|...]``)."""
    if mirror is None:
        return False
    return all(find_in_mirror(f, mirror) is not None for f in get_spec(name).files)


def dataset_checksums(name: str, npz_path: str | os.PathLike, raw_dir: str | os.PathLike) -> dict:
    """What identifies a prepared dataset: n, d, K, the fingerprint of (X, y), each raw file's sha256.

    Raw hashes come from the registry where pinned, else from ``raw_dir/<name>/checksums.lock``.
    """
    X, y = load_prepared(npz_path)
    locked = read_lock(Path(raw_dir) / name)
    raw = {f.name: f.sha256 or locked.get(f.name, "unknown") for f in get_spec(name).files}
    return {"n": int(X.shape[0]), "d": int(X.shape[1]), "k": int(y.max()) + 1, "xy_sha256": fingerprint(X, y), "raw": raw}
