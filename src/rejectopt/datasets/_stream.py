"""Copying bytes in chunks: a sink that hashes what passes through it, and a pump that tells a
failed read (bad data, a broken connection) from a failed write (a full disk).

Every way a raw file arrives (a mirror copy, a download, an archive member, a decompressed
stream) is pumped into a :class:`HashingWriter`, so its sha256 is known once it is written.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import IO

__all__ = ["CHUNK_BYTES", "HashingWriter", "ProgressCallback", "ReadFailed", "pump"]

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


class ReadFailed(Exception):
    """Reading a source failed (as opposed to writing the sink)."""

    def __init__(self, error: BaseException):
        super().__init__(str(error))
        self.error = error


def pump(source: IO[bytes], sink, catch: tuple, progress: ProgressCallback | None = None,
         total: int | None = None, read=None) -> None:
    """Copy ``source`` to ``sink`` in chunks (``read(n)``, default ``source.read``); an exception of
    ``catch`` raised by a read becomes :class:`ReadFailed` (errors of the sink, e.g. a full disk,
    pass through unchanged)."""
    read = read or source.read
    done = 0
    while True:
        try:
            chunk = read(CHUNK_BYTES)
        except catch as exc:
            raise ReadFailed(exc) from exc
        if not chunk:
            return
        sink.write(chunk)
        done += len(chunk)
        if progress is not None:
            progress(done, total)
