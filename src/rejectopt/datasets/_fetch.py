"""Fetching raw files from a local mirror or the official URL, with checksum verification.

Every file is streamed into a temporary file inside the destination folder
while its sha256 is computed; only a verified file is moved to its final name
(``os.replace``, atomic on one file system).  On any failure the temporary
files are deleted and nothing is left under the final name.

Where a :class:`~rejectopt.datasets.RawFile` has no pinned ``sha256``, the
hash found on the first fetch is recorded in ``<dest_dir>/checksums.lock``
(JSON, ``{file name: sha256}``) and later fetches are verified against it.
"""

from __future__ import annotations

import bz2
import fcntl
import gzip
import hashlib
import json
import logging
import lzma
import os
import tarfile
import tempfile
import urllib.error
import urllib.request
import zipfile
from collections.abc import Callable
from contextlib import contextmanager
from pathlib import Path
from typing import IO, TYPE_CHECKING

from .._io import atomic_path, write_text

if TYPE_CHECKING:  # pragma: no cover
    from ._registry import RawFile

__all__ = [
    "LOCK_FILE_NAME",
    "MIRROR_SUFFIXES",
    "ChecksumError",
    "DataSourceError",
    "fetch_file",
    "find_in_mirror",
    "read_lock",
    "sha256_of_file",
]

logger = logging.getLogger(__name__)

LOCK_FILE_NAME = "checksums.lock"
MIRROR_SUFFIXES = ("", ".xz", ".gz", ".bz2")
CHUNK_BYTES = 1 << 20
PROGRESS_EVERY_BYTES = 16 << 20
DOWNLOAD_TIMEOUT_S = 60
MIRROR_HINT = (
    "Set the `data_mirror` config option to a folder laid out as "
    "<mirror>/<dataset>/<file>[.xz|.gz|.bz2] to use local copies instead of downloading."
)

ProgressCallback = Callable[[int, "int | None"], None]


class ChecksumError(ValueError):
    """A fetched file's sha256 differs from the pinned or locked one."""


class DataSourceError(OSError):
    """A raw file could be found neither in the mirror nor at its URL."""


# --------------------------------------------------------------------------- hashing / lock
def sha256_of_file(path: str | os.PathLike) -> str:
    """Hex sha256 of a file's bytes, read in 1 MiB chunks."""
    hasher = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(CHUNK_BYTES), b""):
            hasher.update(chunk)
    return hasher.hexdigest()


def read_lock(dest_dir: str | os.PathLike) -> dict[str, str]:
    """Recorded hashes ``{file name: sha256}`` of ``dest_dir/checksums.lock`` ({} if absent)."""
    path = Path(dest_dir) / LOCK_FILE_NAME
    if not path.exists():
        return {}
    with open(path, encoding="utf-8") as handle:
        return dict(json.load(handle))


def _record_in_lock(dest_dir: Path, name: str, sha256: str) -> None:
    """Add ``name: sha256`` to the lock file; a lock on the folder serialises concurrent fetches."""
    folder = os.open(dest_dir, os.O_RDONLY)
    try:
        fcntl.flock(folder, fcntl.LOCK_EX)  # released when the descriptor is closed
        lock = read_lock(dest_dir)
        lock[name] = sha256
        write_text(json.dumps(lock, indent=2, sort_keys=True) + "\n", dest_dir / LOCK_FILE_NAME)
    finally:
        os.close(folder)


@contextmanager
def _scratch_file(folder: Path, stem: str):
    """Open ``folder/.<stem>.<random>.part`` for binary writing (a downloaded archive before
    extraction); always deleted afterwards. Final files are written by :func:`rejectopt._io.atomic_path`."""
    fd, tmp_name = tempfile.mkstemp(prefix=f".{stem}.", suffix=".part", dir=folder)
    handle = os.fdopen(fd, "wb")
    try:
        yield Path(tmp_name), handle
    finally:
        handle.close()
        if os.path.exists(tmp_name):
            os.unlink(tmp_name)


class _HashingWriter:
    """File-like sink that writes to ``handle`` and hashes what passes through."""

    def __init__(self, handle: IO[bytes]):
        self.handle = handle
        self.hasher = hashlib.sha256()
        self.n_bytes = 0

    def write(self, chunk: bytes) -> int:
        self.hasher.update(chunk)
        self.n_bytes += len(chunk)
        return self.handle.write(chunk)

    def hexdigest(self) -> str:
        return self.hasher.hexdigest()


def _copy_stream(source: IO[bytes], sink, progress: ProgressCallback | None = None, total: int | None = None) -> None:
    done = 0
    for chunk in iter(lambda: source.read(CHUNK_BYTES), b""):
        sink.write(chunk)
        done += len(chunk)
        if progress is not None:
            progress(done, total)


# --------------------------------------------------------------------------- decompression
def _open_decompressed(path: Path, compression: str | None) -> IO[bytes]:
    """Binary stream of ``path`` decompressed with 'xz', 'gz', 'bz2', 'Z' (unix compress) or None."""
    if compression in (None, ""):
        return open(path, "rb")
    if compression == "xz":
        return lzma.open(path, "rb")
    if compression == "gz":
        return gzip.open(path, "rb")
    if compression == "bz2":
        return bz2.open(path, "rb")
    if compression == "Z":
        import io

        return io.BytesIO(unlzw(path.read_bytes()))
    raise ValueError(f"unknown compression {compression!r}")


def _compression_of_suffix(suffix: str) -> str | None:
    return {"": None, ".xz": "xz", ".gz": "gz", ".bz2": "bz2", ".Z": "Z"}[suffix]


def unlzw(data: bytes) -> bytes:
    """Decompress the unix ``compress`` (.Z, LZW) format.

    Follows gzip's ``unlzw.c``: codes start at 9 bits and grow up to the
    header's maximum; whenever the code width changes or a CLEAR code (256, in
    block mode) is read, the reader skips to the end of the current group of
    8 codes (``n_bits`` bytes) counted from where the width last changed.
    """
    if len(data) < 3 or data[0] != 0x1F or data[1] != 0x9D:
        raise ValueError("not a unix compress (.Z) stream")
    max_bits, block_mode = data[2] & 0x1F, bool(data[2] & 0x80)
    if not 9 <= max_bits <= 16:
        raise ValueError(f"unsupported maximum code width {max_bits}")
    body = data[3:] + b"\x00\x00\x00"
    total_bits = (len(data) - 3) * 8
    max_entries = 1 << max_bits

    def reset_table():
        return [bytes([i]) for i in range(256)] + ([b""] if block_mode else [])

    def skip_to_group_end(bit_pos, segment_start, n_bits):
        group = n_bits * 8
        used = bit_pos - segment_start
        return segment_start + -(-used // group) * group

    table = reset_table()
    out = bytearray()
    n_bits, bit_pos, segment_start, previous = 9, 0, 0, None
    while True:
        if len(table) > (1 << n_bits) - 1 and n_bits < max_bits:
            bit_pos = skip_to_group_end(bit_pos, segment_start, n_bits)
            segment_start, n_bits = bit_pos, n_bits + 1
        if bit_pos + n_bits > total_bits:
            break
        byte = bit_pos >> 3
        word = body[byte] | (body[byte + 1] << 8) | (body[byte + 2] << 16)
        code = (word >> (bit_pos & 7)) & ((1 << n_bits) - 1)
        bit_pos += n_bits
        if block_mode and code == 256 and previous is not None:
            bit_pos = skip_to_group_end(bit_pos, segment_start, n_bits)
            segment_start, n_bits = bit_pos, 9
            table, previous = reset_table(), None
            continue
        if code < len(table) and (code != 256 or not block_mode):
            entry = table[code]
        elif code == len(table) and previous is not None:
            entry = previous + previous[:1]
        else:
            raise ValueError(f"corrupt .Z stream: code {code} with {len(table)} table entries")
        out += entry
        if previous is not None and len(table) < max_entries:
            table.append(previous + entry[:1])
        previous = entry
    return bytes(out)


# --------------------------------------------------------------------------- sources
def find_in_mirror(raw_file: "RawFile", mirror: str | os.PathLike) -> Path | None:
    """Path of ``<mirror>/<dataset>/<name>[.xz|.gz|.bz2]`` (first existing), else None."""
    folder = Path(mirror) / raw_file.dataset
    for suffix in MIRROR_SUFFIXES:
        candidate = folder / (raw_file.name + suffix)
        if candidate.is_file():
            return candidate
    return None


def _write_from_mirror(raw_file: "RawFile", mirror_path: Path, sink: _HashingWriter) -> None:
    compression = _compression_of_suffix(mirror_path.name[len(raw_file.name):])
    logger.info("%s: copying from mirror %s", raw_file.name, mirror_path)
    with _open_decompressed(mirror_path, compression) as source:
        _copy_stream(source, sink)


def _download(url: str, sink, progress: ProgressCallback | None) -> None:
    try:
        response = urllib.request.urlopen(url, timeout=DOWNLOAD_TIMEOUT_S)  # noqa: S310 (https/http URLs from the registry)
    except (urllib.error.URLError, OSError) as exc:
        raise DataSourceError(f"cannot download {url}: {exc}. {MIRROR_HINT}") from exc
    with response:
        length = response.headers.get("Content-Length")
        try:
            _copy_stream(response, sink, progress, int(length) if length else None)
        except OSError as exc:
            raise DataSourceError(f"download of {url} failed: {exc}. {MIRROR_HINT}") from exc


def _logging_progress(label: str) -> ProgressCallback:
    state = {"next": PROGRESS_EVERY_BYTES}

    def report(done: int, total: int | None) -> None:
        if done >= state["next"]:
            state["next"] += PROGRESS_EVERY_BYTES
            of_total = f" of {total / 2**20:.1f}" if total else ""
            logger.info("%s: %.1f%s MiB downloaded", label, done / 2**20, of_total)

    return report


def _write_from_url(raw_file: "RawFile", dest_dir: Path, sink: _HashingWriter, progress) -> None:
    """Download ``raw_file.url``; extract the member / decompress into ``sink``."""
    callback = _logging_progress(raw_file.url) if progress is True else (progress or None)
    needs_unpacking = bool(raw_file.archive_member or raw_file.compression)
    logger.info("%s: downloading %s", raw_file.name, raw_file.url)
    if not needs_unpacking and raw_file.download_sha256 is None:
        _download(raw_file.url, sink, callback)
        return
    with _scratch_file(dest_dir, raw_file.name + ".download") as (tmp_path, handle):
        download_sink = _HashingWriter(handle)
        _download(raw_file.url, download_sink, callback)
        handle.close()
        _verify(raw_file.url, raw_file.download_sha256, download_sink.hexdigest(), "the download")
        if raw_file.archive_member:
            _extract_member(tmp_path, raw_file.url, raw_file.archive_member, sink)
        else:
            with _open_decompressed(tmp_path, raw_file.compression) as source:
                _copy_stream(source, sink)


def _extract_member(archive: Path, url: str, member: str, sink) -> None:
    if zipfile.is_zipfile(archive):
        with zipfile.ZipFile(archive) as bundle:
            with bundle.open(_resolve_member(bundle.namelist(), member, url)) as source:
                _copy_stream(source, sink)
        return
    if tarfile.is_tarfile(archive):
        with tarfile.open(archive) as bundle:
            source = bundle.extractfile(_resolve_member(bundle.getnames(), member, url))
            if source is None:
                raise DataSourceError(f"{member} is not a regular file in {url}")
            with source:
                _copy_stream(source, sink)
        return
    raise DataSourceError(f"{url} is neither a zip nor a tar archive")


def _resolve_member(names: list[str], member: str, url: str) -> str:
    """``member`` if present, else the single member with the same base name."""
    if member in names:
        return member
    base = member.rsplit("/", 1)[-1]
    same_base = [n for n in names if n.rsplit("/", 1)[-1] == base]
    if len(same_base) == 1:
        logger.info("%s: member %s found as %s", url, member, same_base[0])
        return same_base[0]
    raise DataSourceError(f"{url} has no member {member!r} (members: {names[:20]})")


# --------------------------------------------------------------------------- verification
def _verify(label: str, expected: str | None, found: str, what: str = "the file") -> None:
    if expected is not None and expected.lower() != found:
        raise ChecksumError(
            f"checksum mismatch for {label}: expected sha256 {expected.lower()}, found {found} "
            f"({what} was deleted, nothing was written). If it came from a local copy set by the "
            f"`data_mirror` config option, replace that copy with the official file; otherwise "
            f"the download was corrupted or the upstream file changed."
        )


def _expected_sha256(raw_file: "RawFile", dest_dir: Path) -> tuple[str | None, str]:
    """(expected hash, where it comes from): pinned in the registry, else the lock file, else None."""
    if raw_file.sha256 is not None:
        return raw_file.sha256.lower(), "registry"
    locked = read_lock(dest_dir).get(raw_file.name)
    return (locked, LOCK_FILE_NAME) if locked else (None, "")


# --------------------------------------------------------------------------- public
def fetch_file(
    raw_file: "RawFile",
    dest_dir: str | os.PathLike,
    mirror: str | os.PathLike | None = None,
    progress: bool | ProgressCallback = True,
    allow_download: bool = True,
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

    Returns
    -------
    pathlib.Path
        The verified file.

    Raises
    ------
    ChecksumError
        The content's sha256 differs from the pinned one (or from the one recorded in
        ``checksums.lock``); the message gives both hashes. Nothing is left in ``dest_dir``.
    DataSourceError
        Neither the mirror nor the URL provided the file.
    """
    dest_dir = Path(dest_dir)
    dest_dir.mkdir(parents=True, exist_ok=True)
    final_path = dest_dir / raw_file.name
    expected, origin = _expected_sha256(raw_file, dest_dir)
    if final_path.exists() and expected is not None and sha256_of_file(final_path) == expected:
        logger.debug("%s: already present and verified", final_path)
        return final_path

    mirror_path = find_in_mirror(raw_file, mirror) if mirror is not None else None
    if mirror is not None and mirror_path is None:
        tried = Path(mirror) / raw_file.dataset / (raw_file.name + "[" + "|".join(MIRROR_SUFFIXES[1:]) + "]")
        if not allow_download:
            raise DataSourceError(
                f"{raw_file.name} not found in the data mirror (tried {tried}); its official URL is "
                f"{raw_file.url}. Add the file to the `data_mirror` folder or allow downloading."
            )
        logger.info("%s: not in the mirror (%s), downloading instead", raw_file.name, tried)
    elif mirror is None and not allow_download:
        raise DataSourceError(f"{raw_file.name}: downloading disabled and no `data_mirror` given ({raw_file.url})")

    with atomic_path(final_path) as tmp_path:
        with open(tmp_path, "wb") as handle:
            sink = _HashingWriter(handle)
            if mirror_path is not None:
                _write_from_mirror(raw_file, mirror_path, sink)
            else:
                _write_from_url(raw_file, dest_dir, sink, progress)
        found = sink.hexdigest()
        source = str(mirror_path) if mirror_path is not None else raw_file.url
        _verify(f"{raw_file.name} (from {source}; expected hash from the {origin or 'registry'})", expected, found)

    if expected is None:
        _record_in_lock(dest_dir, raw_file.name, found)
        logger.warning(
            "%s: no pinned sha256; recorded %s in %s, later fetches are verified against it",
            raw_file.name, found, dest_dir / LOCK_FILE_NAME,
        )
    logger.info("%s: verified (sha256 %s, %d bytes)", final_path, found, sink.n_bytes)
    return final_path
