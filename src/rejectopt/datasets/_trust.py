"""Trusting a raw file: its sha256 against the pinned one or the one recorded in ``checksums.lock``.

Trust (``<dest_dir>/checksums.lock``, JSON ``{file name: sha256}``)
    A :class:`~rejectopt.datasets.RawFile` whose ``sha256`` is pinned is always
    verified against it.  An unpinned file is verified against the hash recorded
    in the lock file.  With ``record_lock=True`` (the default of
    :func:`~rejectopt.datasets.fetch_file`) the hash of a first fetch is recorded at
    once; with ``record_lock=False`` (the pipeline's ``download_raw`` rule,
    :func:`rejectopt.datasets.prepare_dataset`) the file stays *pending* until its
    dataset parsed and passed validation, and only then :func:`record_trusted`
    records it: a file that fails parsing or validation is never recorded as trusted.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import logging
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from .._io import write_text
from ..exceptions import ChecksumError
from ._stream import CHUNK_BYTES

if TYPE_CHECKING:  # pragma: no cover
    from ._registry import RawFile

__all__ = [
    "LOCK_FILE_NAME",
    "expected_sha256",
    "is_trusted",
    "read_lock",
    "record_trusted",
    "sha256_of_file",
    "verify_sha256",
]

logger = logging.getLogger(__name__)

#: Name of the file, in a raw-data folder, that records the sha256 of each trusted file without a
#: pinned hash (JSON ``{file name: sha256}``).
LOCK_FILE_NAME = "checksums.lock"


def sha256_of_file(path: str | os.PathLike) -> str:
    """Hex sha256 of a file's bytes, read in 1 MiB chunks.

    Parameters
    ----------
    path : path-like
        The file.

    Returns
    -------
    str
        64 lower-case hex digits.
    """
    hasher = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(CHUNK_BYTES), b""):
            hasher.update(chunk)
    return hasher.hexdigest()


def read_lock(dest_dir: str | os.PathLike) -> dict[str, str]:
    """Recorded hashes ``{file name: sha256}`` of ``dest_dir/checksums.lock`` ({} if absent).

    Parameters
    ----------
    dest_dir : path-like
        The raw-data folder that holds the lock file.

    Returns
    -------
    dict of str to str
        File name to hex sha256; empty if the folder has no lock file.
    """
    path = Path(dest_dir) / LOCK_FILE_NAME
    if not path.exists():
        return {}
    with open(path, encoding="utf-8") as handle:
        return dict(json.load(handle))


def record_trusted(dest_dir: str | os.PathLike, hashes: Mapping[str, str]) -> None:
    """Add ``{file name: sha256}`` to ``dest_dir/checksums.lock``: later fetches are verified against them.

    Call it only for files that passed every check (for a dataset: parsing and
    validation).  A lock on the folder serialises concurrent writers.
    """
    if not hashes:
        return
    dest_dir = Path(dest_dir)
    folder = os.open(dest_dir, os.O_RDONLY)
    try:
        fcntl.flock(folder, fcntl.LOCK_EX)  # released when the descriptor is closed
        lock = read_lock(dest_dir)
        lock.update(hashes)
        write_text(json.dumps(lock, indent=2, sort_keys=True) + "\n", dest_dir / LOCK_FILE_NAME)
    finally:
        os.close(folder)
    for name, sha256 in sorted(hashes.items()):
        logger.warning(
            "%s: no pinned sha256; recorded %s in %s, later fetches are verified against it",
            name,
            sha256,
            dest_dir / LOCK_FILE_NAME,
        )


def verify_sha256(label: str, expected: str | None, found: str, what: str = "the file") -> None:
    """Raise :class:`ChecksumError` naming ``label`` and both hashes if ``found`` is not ``expected``
    (None: nothing to verify against)."""
    if expected is not None and expected.lower() != found:
        raise ChecksumError(
            f"checksum mismatch for {label}: expected sha256 {expected.lower()}, found {found} "
            f"({what} was deleted, nothing was kept). If it came from a local copy set by the "
            f"`data_mirror` config option, replace that copy with the official file; otherwise "
            f"the download was corrupted or the upstream file changed."
        )


def expected_sha256(raw_file: RawFile, dest_dir: Path) -> tuple[str | None, str]:
    """(expected hash, where it comes from): pinned in the registry, else the lock file, else None."""
    if raw_file.sha256 is not None:
        return raw_file.sha256.lower(), "registry"
    locked = read_lock(dest_dir).get(raw_file.name)
    return (locked, LOCK_FILE_NAME) if locked else (None, "")


def is_trusted(raw_file: RawFile, dest_dir: str | os.PathLike) -> bool:
    """True if ``raw_file`` has a pinned sha256 or one recorded in ``dest_dir/checksums.lock``."""
    return expected_sha256(raw_file, Path(dest_dir))[0] is not None
