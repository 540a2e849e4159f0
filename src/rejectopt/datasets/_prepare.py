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

from .._io import IntermediateFileError, load_npz, recompute_hint, save_npz
from ..exceptions import ChecksumError, DataSourceError, RawDataError
from ._download import DownloadOptions
from ._fetch import check_mirror_folder, fetch_file, find_in_mirror
from ._parsers import encode_labels, equal_frequency_bins
from ._registry import DatasetSpec, get_spec
from ._trust import expected_sha256, is_trusted, read_lock, record_trusted, sha256_of_file

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


def fingerprint(X: np.ndarray, y: np.ndarray) -> str:
    """sha256 identifying the content of (X, y), independent of file formats.

    Hashes, in this order: ``X`` as C-ordered little-endian float64 bytes,
    ``y`` as little-endian int64 bytes, then the shapes ``X.shape + y.shape``
    as little-endian int64.

    Parameters
    ----------
    X : array-like, shape (n, d)
        Features; hashed as float64.
    y : array-like, shape (n,)
        Labels; hashed as int64.

    Returns
    -------
    str
        64 lower-case hex digits; the ``xy_sha256`` pinned in :class:`DatasetSpec`.
    """
    X = np.ascontiguousarray(X, dtype="<f8")
    y = np.ascontiguousarray(y, dtype="<i8")
    hasher = hashlib.sha256()
    hasher.update(X.tobytes(order="C"))
    hasher.update(y.tobytes(order="C"))
    hasher.update(np.asarray(X.shape + y.shape, dtype="<i8").tobytes())
    return hasher.hexdigest()


def parse_raw(
    name: str | DatasetSpec, paths: Mapping[str, str | os.PathLike]
) -> tuple[np.ndarray, np.ndarray]:
    """Read the raw files of a dataset into canonical ``X`` (float64) and ``y`` (int64, 0..K-1).

    Parameters
    ----------
    name : str or DatasetSpec
        The dataset (a name of ``REGISTRY``) or its specification.
    paths : mapping
        ``{raw file name: local path}`` for every file of the spec.

    Returns
    -------
    X : numpy.ndarray of float64, shape (n, d)
        The features.
    y : numpy.ndarray of int64, shape (n,)
        The classes 0..K-1 (``spec.target_encoding``); the shape is not checked against the
        registry here (:func:`prepare_dataset` does).
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


def validate_arrays(
    spec: DatasetSpec, X: np.ndarray, y: np.ndarray, paths: Mapping[str, str | os.PathLike]
) -> None:
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
        raise RawDataError(
            f"{where}: labels must be integers >= 0 (got dtype {y.dtype}, min {y.min() if len(y) else None})"
        )


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


def _fetch_verified(raw_file, dest: Path, mirror, allow_download: bool, download) -> Path:
    """:func:`fetch_file` for :func:`prepare_dataset`; a raw file that changed on disk is named as such.

    Without a mirror or downloading (the pipeline's prepare step, after its download step), a
    present raw file whose sha256 no longer matches cannot be fetched again here: the error
    says that this file changed, with the expected and found sha256, not that downloading is off.
    """
    try:
        return fetch_file(
            raw_file,
            dest,
            mirror=mirror,
            allow_download=allow_download,
            download=download,
            record_lock=False,
        )
    except DataSourceError:
        path = dest / raw_file.name
        expected, origin = expected_sha256(raw_file, dest)
        if expected is None or not path.is_file():
            raise
        found = sha256_of_file(path)
        if found == expected:
            raise
        raise ChecksumError(
            f"raw file {path} changed since it was verified: expected sha256 {expected} (from the "
            f"{origin}), found {found}. Fetch it again (from the `data_mirror` or {raw_file.url}, verified): "
            f"`snakemake --forcerun {path}` with the run's usual options, or, with the library, delete it and "
            "call prepare_dataset with a mirror or downloading allowed"
        ) from None


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
        The ``data_mirror`` folder: ``<mirror>/<name>/<file>``, optionally ``.xz`` / ``.gz`` /
        ``.bz2`` compressed.
    allow_download : bool, default True
        Download a file the mirror lacks from its official URL.
    download : DownloadOptions or mapping, optional
        Download base URL, retries, backoff and timeout (``datasets._download.DownloadOptions``
        or a mapping of its fields).

    Returns
    -------
    dict
        ``{"n": ..., "d": ..., "k": ..., "xy_sha256": ...}``.

    Raises
    ------
    ChecksumError, DownloadError, DecompressionError, DataSourceError
        From fetching; a ``mirror`` that is not a folder is a ``DataSourceError`` naming it.
    ValueError
        A reader's error naming the file, line and column of a bad cell;
        ``RawDataError`` from the array checks; a shape or pinned
        fingerprint differing from the registry's.  If a raw file without a
        pinned sha256 took part, it is moved to ``<name>.rejected``, never
        recorded in ``checksums.lock``, and the error is a :class:`RawDataError`
        saying so.

    Examples
    --------
    abalone from the demo mirror embedded in the repository, as the pipeline's step writes it
    (from the repository's root; it writes files, so it is shown, not run: the tests run it)::

        info = prepare_dataset("abalone", "results/raw", "results/data/abalone/data.npz",
                               mirror="workflow/resources/demo_mirror")
        info["n"], info["d"], info["k"]   # (4177, 10, 19)
    """
    spec = get_spec(name)
    check_mirror_folder(mirror)  # before a present raw file's check can hide the cause
    dest = Path(raw_dir) / spec.name
    paths = {f.name: _fetch_verified(f, dest, mirror, allow_download, download) for f in spec.files}
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
        reason = (
            str(exc).strip().rstrip(".")
            if isinstance(exc, ValueError)
            else f"{type(exc).__name__}: {exc}"
        )
        raise RawDataError(
            f"{reason}. "
            f"Not trusted: {', '.join(sorted(pending))} (no pinned sha256) "
            f"{'was' if len(pending) == 1 else 'were'} not recorded in {dest / 'checksums.lock'} and "
            f"moved aside to {', '.join(str(p) for p in moved)} for inspection; the next run fetches "
            f"{'it' if len(pending) == 1 else 'them'} again."
        ) from exc
    save_npz(out_npz, provenance={"dataset": spec.name, "xy_sha256": digest}, X=X, y=y)
    record_trusted(dest, pending)
    logger.info(
        "%s: wrote %s (n=%d, d=%d, K=%d, xy_sha256 %s)",
        name,
        out_npz,
        *X.shape,
        spec.n_classes,
        digest,
    )
    return {"n": int(X.shape[0]), "d": int(X.shape[1]), "k": int(y.max()) + 1, "xy_sha256": digest}


def load_prepared(path: str | os.PathLike) -> tuple[np.ndarray, np.ndarray]:
    """Load ``(X, y)`` written by :func:`prepare_dataset` (or for a custom dataset), verified.

    Parameters
    ----------
    path : path-like
        The ``.npz`` file.

    Returns
    -------
    X : numpy.ndarray of float64, shape (n, d)
        The features.
    y : numpy.ndarray of int64, shape (n,)
        The classes 0..K-1.

    Raises
    ------
    rejectopt.exceptions.IntermediateFileError
        The file is corrupt, was changed after it was written (its arrays no longer match the
        checksum it records), has no content record, or lacks ``X`` or ``y``; the message names
        it and says how to make it again.

    Examples
    --------
    The file of :func:`prepare_dataset`'s example (shown, not run: it reads a file)::

        X, y = load_prepared("results/data/abalone/data.npz")
        X.shape, X.dtype, int(y.max())   # ((4177, 10), dtype('float64'), 18)
    """
    data = load_npz(path)
    missing = [name for name in ("X", "y") if name not in data]
    if missing:
        raise IntermediateFileError(
            f"{path}: no array {' or '.join(missing)} (holds {', '.join(data) or 'nothing'}): "
            f"not a prepared dataset; {recompute_hint(path)}"
        )
    return data["X"], data["y"]


def available_in_mirror(name: str, mirror: str | os.PathLike | None) -> bool:
    """True if every raw file of dataset ``name`` is in the mirror (``<mirror>/<name>/<file>[.xz|...]``).

    Parameters
    ----------
    name : str
        Dataset name (see ``REGISTRY``).
    mirror : path-like or None
        The ``data_mirror`` folder; None (no mirror) gives False.

    Returns
    -------
    bool
        Whether :func:`prepare_dataset` can run from the mirror alone.
    """
    if mirror is None:
        return False
    return all(find_in_mirror(f, mirror) is not None for f in get_spec(name).files)


def dataset_checksums(name: str, npz_path: str | os.PathLike, raw_dir: str | os.PathLike) -> dict:
    """What identifies a prepared dataset: n, d, K, the fingerprint of (X, y), each raw file's sha256.

    Raw hashes come from the registry where pinned, else from ``raw_dir/<name>/checksums.lock``.

    Parameters
    ----------
    name : str
        Dataset name (see ``REGISTRY``).
    npz_path : path-like
        The file written by :func:`prepare_dataset`.
    raw_dir : path-like
        The ``raw_dir`` given to :func:`prepare_dataset` (raw files in ``raw_dir/<name>/``).

    Returns
    -------
    dict
        ``{"n", "d", "k", "xy_sha256", "raw": {file name: sha256 or "unknown"}}``.
    """
    X, y = load_prepared(npz_path)
    locked = read_lock(Path(raw_dir) / name)
    raw = {f.name: f.sha256 or locked.get(f.name, "unknown") for f in get_spec(name).files}
    return {
        "n": int(X.shape[0]),
        "d": int(X.shape[1]),
        "k": int(y.max()) + 1,
        "xy_sha256": fingerprint(X, y),
        "raw": raw,
    }
