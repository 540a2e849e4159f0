"""Copying bytes in chunks: a sink that hashes what passes through it, a pump that tells a
failed read (bad data, a broken connection) from a failed write (a full disk) and stops at a
size cap, and the removal of the temporary files a killed run left behind.

Every way a raw file arrives (a mirror copy, a download, an archive member, a decompressed
stream) is pumped into a :class:`HashingWriter`, so its sha256 is known once it is written.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import IO

__all__ = [
    "CHUNK_BYTES",
    "HashingWriter",
    "OverLimit",
    "ProgressCallback",
    "ReadFailed",
    "discarded",
    "pump",
    "remove_stale_parts",
]

logger = logging.getLogger(__name__)

#: Bytes read at a time (files are streamed, never held whole).
CHUNK_BYTES = 1 << 20

#: ``progress(bytes_done, total_or_None)``, called after each chunk.
ProgressCallback = Callable[[int, "int | None"], None]


class HashingWriter:
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


def discarded(sink) -> str:
    """What an error says of the output of a failed copy into ``sink``: "nothing was written" only
    when no byte reached it; else how many did, and that they are deleted (every caller writes
    into a temporary file that :func:`rejectopt._io.atomic_path` or a scratch path removes)."""
    n_bytes = getattr(sink, "n_bytes", 0)
    return (
        "nothing was written"
        if n_bytes == 0
        else f"the {n_bytes} bytes written so far are deleted, nothing is kept"
    )


class ReadFailed(Exception):
    """Reading a source failed (as opposed to writing the sink)."""

    def __init__(self, error: BaseException):
        super().__init__(str(error))
        self.error = error


class OverLimit(Exception):
    """The source holds more than the pump's ``limit`` bytes (nothing past the limit was written)."""

    def __init__(self, limit: int):
        super().__init__(f"more than {limit} bytes")
        self.limit = limit


def pump(
    source: IO[bytes],
    sink,
    catch: tuple,
    progress: ProgressCallback | None = None,
    total: int | None = None,
    read=None,
    limit: int | None = None,
) -> None:
    """Copy ``source`` to ``sink`` in chunks (``read(n)``, default ``source.read``); an exception of
    ``catch`` raised by a read becomes :class:`ReadFailed` (errors of the sink, e.g. a full disk,
    pass through unchanged). A source longer than ``limit`` bytes raises :class:`OverLimit` as
    soon as a chunk would cross it, so a decompression bomb never reaches the disk whole."""
    read = read or source.read
    done = 0
    while True:
        try:
            chunk = read(CHUNK_BYTES)
        except catch as exc:
            raise ReadFailed(exc) from exc
        if not chunk:
            return
        if limit is not None and done + len(chunk) > limit:
            raise OverLimit(limit)
        sink.write(chunk)
        done += len(chunk)
        if progress is not None:
            progress(done, total)


# --------------------------------------------------------------------------- temporary files
def _pid_is_running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def remove_stale_parts(folder: Path, name: str) -> list[Path]:
    """Remove the temporary files and folders of ``name`` that a killed run left in ``folder``.

    Only the names this package writes are touched: ``.<name>.<pid>.part``
    (:func:`rejectopt._io.atomic_path`) and ``.<name>.download.<pid>.<random>.part`` (a download
    before it is unpacked), and only when process ``<pid>`` is no longer running or is this
    process (which, starting this fetch, writes no such file yet): a file or folder of the
    user's, or of a fetch running beside this one, is never removed. Returns what was removed.
    """
    pattern = re.compile(rf"\.{re.escape(name)}\.(?:(\d+)|download\.(\d+)\.[a-z0-9_]+)\.part")
    removed: list[Path] = []
    if not folder.is_dir():
        return removed
    for path in folder.iterdir():
        match = pattern.fullmatch(path.name)
        if match is None:
            continue
        pid = int(match.group(1) or match.group(2))
        if pid != os.getpid() and _pid_is_running(pid):
            continue
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)
        removed.append(path)
        logger.warning(
            "%s: removed %s, left by a run that was killed (process %d)", name, path, pid
        )
    return removed
