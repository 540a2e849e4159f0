"""Fetching raw files from a local mirror or the official URL, with checksum verification.

Every file is streamed into a temporary file beside its final name while its
sha256 is computed; only a verified file is moved to its final name
(:func:`rejectopt._io.atomic_path`).  On any failure the temporary files are
deleted and nothing is left under the final name; those of a run that was
killed (``.<name>.<pid>.part``) are removed when the file is next fetched.

Where a raw file comes from is the concern of this module (:func:`fetch_file`): a copy in the
data mirror (``<mirror>/<dataset>/<file>[.xz|.gz|.bz2]``), else a download (:mod:`._download`:
retries, ``download_base``); whether it is trusted, of :mod:`._trust` (``checksums.lock``);
unpacking it, of :mod:`._decompress` and :mod:`._archive`.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from .._io import atomic_path
from ..exceptions import DataSourceError
from ._decompress import TEST_COMMAND, compression_of_suffix, decompress_into, size_limit_error
from ._download import DownloadOptions, as_options, attempts_note, write_from_url
from ._stream import HashingWriter, ProgressCallback, remove_stale_parts
from ._trust import LOCK_FILE_NAME, expected_sha256, record_trusted, sha256_of_file, verify_sha256

if TYPE_CHECKING:  # pragma: no cover
    from ._registry import RawFile

__all__ = ["MIRROR_SUFFIXES", "check_mirror_folder", "fetch_file", "find_in_mirror"]

logger = logging.getLogger(__name__)

MIRROR_SUFFIXES = ("", ".xz", ".gz", ".bz2")


def check_mirror_folder(mirror: str | os.PathLike | None) -> None:
    """Refuse a data mirror that is not an existing folder.

    A mistyped or unmounted mirror would otherwise hold no file, and every raw file would be
    downloaded instead: offline that ends in a network error about host names that never names
    the mirror, online it fetches the data the mirror was meant to provide.

    Raises
    ------
    DataSourceError
        ``mirror`` is given and is not a folder; the message names it, the option and the fix.
    """
    if mirror is None or Path(mirror).is_dir():
        return
    state = "is not a folder" if Path(mirror).exists() else "does not exist"
    raise DataSourceError(
        f"data mirror {str(mirror)!r} {state} (resolved: {Path(mirror).absolute()}): `mirror=` "
        "(the pipeline's `data_mirror` config option) must be a folder laid out as "
        "<mirror>/<dataset>/<file>[.xz|.gz|.bz2]; correct the path, or pass mirror=None "
        "(data_mirror: null) to download the official files"
    )


def find_in_mirror(raw_file: RawFile, mirror: str | os.PathLike) -> Path | None:
    """Path of ``<mirror>/<dataset>/<name>[.xz|.gz|.bz2]`` (first existing), else None."""
    folder = Path(mirror) / raw_file.dataset
    for suffix in MIRROR_SUFFIXES:
        candidate = folder / (raw_file.name + suffix)
        if candidate.is_file():
            return candidate
    return None


def _write_from_mirror(
    raw_file: RawFile, mirror_path: Path, sink: HashingWriter, max_ratio: float
) -> None:
    """Copy (decompress) the mirror copy into ``sink``, never past the raw file's pinned size: a
    plain copy larger than it is refused before a byte is copied, a compressed one is stopped at it."""
    compression = compression_of_suffix(mirror_path.name[len(raw_file.name) :])
    what, hint = f"the data_mirror copy {mirror_path}", _mirror_hint(mirror_path, compression)
    if (
        compression is None
        and raw_file.size is not None
        and mirror_path.stat().st_size > raw_file.size
    ):
        raise size_limit_error(
            raw_file.name,
            f"{what} ({mirror_path.stat().st_size} bytes)",
            raw_file.size,
            hint,
            "nothing was written",
        )
    logger.info("%s: copying from mirror %s", raw_file.name, mirror_path)
    decompress_into(
        mirror_path, compression, sink, raw_file.name, what, hint, max_ratio, raw_file.size
    )


def _mirror_hint(path: Path, compression: str | None) -> str:
    check = (
        f" (`{TEST_COMMAND[compression]} {path}` checks a copy)"
        if compression in TEST_COMMAND
        else ""
    )
    return (
        f"Replace {path} with an intact copy of the official file{check}, or remove it from the "
        "data_mirror folder to download the official file instead."
    )


# --------------------------------------------------------------------------- public
def fetch_file(
    raw_file: RawFile,
    dest_dir: str | os.PathLike,
    mirror: str | os.PathLike | None = None,
    progress: bool | ProgressCallback = True,
    allow_download: bool = True,
    download: DownloadOptions | Mapping | None = None,
    record_lock: bool = True,
) -> Path:
    """Fetch one raw file into ``dest_dir/<raw_file.name>`` and verify its sha256.

    Parameters
    ----------
    raw_file : RawFile
        What to fetch (name, official URL, pinned sha256 or None, archive member,
        compression of the download).
    dest_dir : path-like
        Destination folder (created if needed); also holds ``checksums.lock``.
    mirror : path-like, optional
        Folder laid out as ``<mirror>/<dataset>/<file>[.xz|.gz|.bz2]`` holding the
        (member-extracted) file, possibly compressed; used before the URL.
    progress : bool or callable, default True
        True logs download progress every 16 MiB; a callable receives
        ``(bytes_done, total_or_None)``; False is silent.
    allow_download : bool, default True
        If False, a file missing from the mirror raises instead of being downloaded.
    download : DownloadOptions or mapping, optional
        Where from (``base``), retries, backoff, timeout and deadline of downloads,
        and the cap on decompressing (``max_ratio``, also for a mirror copy; see
        :class:`DownloadOptions`; a mapping holds its fields). Default: the
        official URLs, 3 retries, 5 s backoff, 60 s timeout, 7200 s deadline,
        100:1 cap.
    record_lock : bool, default True
        For a file without a pinned or locked sha256: True records its hash in
        ``checksums.lock`` at once; False leaves it pending (the caller records it
        with :func:`record_trusted` once the content passed validation), and a
        pending file already at ``dest_dir/<name>`` is returned as it is.

    Returns
    -------
    pathlib.Path
        The verified (or, with ``record_lock=False``, pending) file.

    Raises
    ------
    ChecksumError
        The content's sha256 differs from the pinned one (or from the one recorded in
        ``checksums.lock``); the message gives both hashes. Nothing is left in ``dest_dir``.
    DownloadError
        The download failed for good: the message names the file, the URL, the HTTP
        status or the last network error (or the deadline passed), and the attempts made.
    DecompressionError
        The mirror copy or the download cannot be decompressed / unpacked, or holds more
        than the raw file's pinned size (``raw_file.size``), or, without one, expands past the
        cap (:class:`~rejectopt.exceptions.UnpackLimitError`; the copy stops there).
    DataSourceError
        Neither the mirror nor the URL provided the file, or ``mirror`` is not a folder.
    """
    check_mirror_folder(mirror)
    options = as_options(download)
    dest_dir = Path(dest_dir)
    dest_dir.mkdir(parents=True, exist_ok=True)
    final_path = dest_dir / raw_file.name
    remove_stale_parts(dest_dir, raw_file.name)
    expected, origin = expected_sha256(raw_file, dest_dir)
    if final_path.exists():
        # a file of another size than the one pinned beside the registry's hash cannot have that
        # hash: not read whole (a hash from checksums.lock has no size beside it)
        sized = (
            origin != "registry"
            or raw_file.size is None
            or final_path.stat().st_size == raw_file.size
        )
        if expected is not None and sized and sha256_of_file(final_path) == expected:
            logger.debug("%s: already present and verified", final_path)
            return final_path
        if expected is None and not record_lock:
            logger.info(
                "%s: already present, pending (its sha256 is recorded once its dataset passed validation)",
                final_path,
            )
            return final_path

    mirror_path = find_in_mirror(raw_file, mirror) if mirror is not None else None
    if mirror is not None and mirror_path is None:
        tried = (
            Path(mirror)
            / raw_file.dataset
            / (raw_file.name + "[" + "|".join(MIRROR_SUFFIXES[1:]) + "]")
        )
        if not allow_download:
            raise DataSourceError(
                f"{raw_file.name} not found in the data mirror (tried {tried}); its official URL is "
                f"{raw_file.url}. Add the file to the `data_mirror` folder or allow downloading."
            )
        logger.info("%s: not in the mirror (%s), downloading instead", raw_file.name, tried)
    elif mirror is None and not allow_download:
        raise DataSourceError(
            f"{raw_file.name}: downloading disabled and no `data_mirror` given ({raw_file.url})"
        )

    with atomic_path(final_path) as tmp_path:
        if mirror_path is not None:
            with open(tmp_path, "wb") as handle:
                sink = HashingWriter(handle)
                _write_from_mirror(raw_file, mirror_path, sink, options.max_ratio)
            found, n_bytes, source = sink.hexdigest(), sink.n_bytes, str(mirror_path)
        else:
            found, n_bytes, attempts = write_from_url(
                raw_file, dest_dir, tmp_path, options, progress
            )
            source = f"{options.url_for(raw_file.url)}; {attempts_note(attempts)}"
        verify_sha256(
            f"{raw_file.name} (from {source}; expected hash from the {origin or 'registry'})",
            expected,
            found,
        )

    if expected is None and not record_lock:
        logger.info(
            "%s: written, pending (sha256 %s, %d bytes, no pinned hash): recorded in %s once its dataset "
            "passed validation",
            final_path,
            found,
            n_bytes,
            dest_dir / LOCK_FILE_NAME,
        )
        return final_path
    if expected is None:
        record_trusted(dest_dir, {raw_file.name: found})
    logger.info("%s: verified (sha256 %s, %d bytes)", final_path, found, n_bytes)
    return final_path
