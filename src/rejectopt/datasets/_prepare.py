"""From raw files to a verified ``.npz`` with the canonical arrays ``X`` (float64) and ``y`` (int64)."""

from __future__ import annotations

import hashlib
import logging
import os
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from .._io import save_npz
from ._fetch import fetch_file, find_in_mirror, read_lock
from ._parsers import encode_labels, equal_frequency_bins
from ._registry import DatasetSpec, get_spec

__all__ = [
    "available_in_mirror",
    "fingerprint",
    "load_prepared",
    "parse_raw",
    "prepare_dataset",
]

logger = logging.getLogger(__name__)


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


def prepare_dataset(
    name: str,
    raw_dir: str | os.PathLike,
    out_npz: str | os.PathLike,
    mirror: str | os.PathLike | None = None,
    allow_download: bool = True,
) -> dict:
    """Fetch, verify and parse a dataset, and write ``out_npz`` with arrays ``X`` and ``y``.

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

    Returns
    -------
    dict
        ``{"n": ..., "d": ..., "k": ..., "xy_sha256": ...}``.

    Raises
    ------
    ChecksumError, DataSourceError
        From fetching.
    ValueError
        If the shape or the pinned fingerprint of the prepared data differs.
    """
    spec = get_spec(name)
    dest = Path(raw_dir) / spec.name
    paths = {f.name: fetch_file(f, dest, mirror=mirror, allow_download=allow_download) for f in spec.files}
    X, y = parse_raw(spec, paths)
    digest = fingerprint(X, y)
    _check_against_spec(spec, X, y, digest)
    save_npz(out_npz, X=X, y=y)
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
