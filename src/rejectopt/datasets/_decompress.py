"""Decompressing a raw file: xz, gzip, bzip2 and unix compress (.Z, LZW, decoded here), with a cap.

A mirror copy may be stored compressed (``<file>.xz|.gz|.bz2``) and a download may come
compressed (:attr:`RawFile.compression <rejectopt.datasets.RawFile>`, ``.Z`` included); corrupt or
truncated data raises :class:`~rejectopt.exceptions.DecompressionError` naming the file, where it
came from and what to do. The standard library has no ``.Z`` decoder, so :func:`unlzw` is ours.

The cap
    A raw file whose size the registry pins beside its sha256 (:attr:`RawFile.size
    <rejectopt.datasets.RawFile>`) is never written past that size: the copy stops before the
    first chunk that would cross it, since no longer file can have the pinned hash. Any other
    file is not decompressed past :func:`unpack_cap` bytes: ``max_ratio`` (the
    ``unpack_max_ratio`` config key, default :data:`MAX_UNPACK_RATIO` = 100) times the compressed
    size, and never less than :data:`MIN_UNPACK_CAP_BYTES` (64 MiB); the raw files of the
    benchmark expand 1 to 36 times (phishing under xz, the most compressible), so a factor of 100
    leaves them room while a bomb (gzip reaches 1,000:1, bzip2 and LZW far more) is stopped after
    at most 100 times what was downloaded. A file over either raises
    :class:`~rejectopt.exceptions.UnpackLimitError` naming the file, the limit, how many
    bytes were written (and deleted) and what to do.
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import os
import tarfile
import zipfile
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import IO, cast

from ..exceptions import DecompressionError, UnpackLimitError
from ._stream import CHUNK_BYTES, OverLimit, ReadFailed, discarded, pump

__all__ = [
    "DECODE_ERRORS",
    "MAX_UNPACK_RATIO",
    "MIN_UNPACK_CAP_BYTES",
    "TEST_COMMAND",
    "check_stream",
    "compression_of_suffix",
    "decompress_into",
    "iter_unlzw",
    "open_decompressed",
    "size_limit_error",
    "unlzw",
    "unpack_cap",
    "unpack_limit_error",
]

#: What a decompressor or archive reader raises on corrupt or truncated data.
DECODE_ERRORS = (
    EOFError,
    OSError,
    ValueError,
    lzma.LZMAError,
    zlib.error,
    zipfile.BadZipFile,
    tarfile.TarError,
)

#: Default of the ``unpack_max_ratio`` config key: decompressed bytes per compressed byte allowed.
MAX_UNPACK_RATIO = 100.0
#: The cap is never below this (a small file may compress far better than a large one).
MIN_UNPACK_CAP_BYTES = 64 << 20


def unpack_cap(packed_bytes: int, max_ratio: float = MAX_UNPACK_RATIO) -> int:
    """Most bytes a file of ``packed_bytes`` compressed bytes may expand to."""
    return max(MIN_UNPACK_CAP_BYTES, int(max_ratio * packed_bytes))


def unpack_limit_error(
    name: str,
    what: str,
    cap: int,
    packed_bytes: int,
    max_ratio: float,
    hint: str,
    outcome: str = "nothing was written",
) -> UnpackLimitError:
    """The error of a file expanding past its cap: names the file, the cap, what became of the
    bytes written (``outcome``: :func:`._stream.discarded`) and how to raise the cap."""
    return UnpackLimitError(
        f"{name}: {what} expands past the cap of {cap} bytes ({cap / 2**20:.0f} MiB: unpack_max_ratio="
        f"{max_ratio:g} times its {packed_bytes} compressed bytes, at least {MIN_UNPACK_CAP_BYTES >> 20} MiB); "
        f"decompression stopped there and {outcome}. Either it is a decompression bomb or damaged "
        f"({hint}), or the file legitimately expands more than {max_ratio:g}:1: then raise the "
        f"`unpack_max_ratio` config option (or DownloadOptions(max_ratio=...)) above {max_ratio:g}.",
        limit=cap,
    )


def size_limit_error(name: str, what: str, size: int, hint: str, outcome: str) -> UnpackLimitError:
    """The error of a file holding more than the size the registry pins for it (beside its sha256)."""
    return UnpackLimitError(
        f"{name}: {what} holds more than the {size} bytes the registry pins for {name} (the official file's "
        f"size, beside its sha256): stopped before the first byte past them and {outcome}. It is not the "
        f"official file (a decompression bomb, a damaged copy or another file). {hint}",
        limit=size,
    )


def open_decompressed(path: Path, compression: str | None) -> IO[bytes]:
    """Binary stream of ``path`` decompressed with 'xz', 'gz', 'bz2', 'Z' (unix compress) or None."""
    if compression in (None, ""):
        return open(path, "rb")
    if compression == "xz":
        return lzma.open(path, "rb")
    if compression == "gz":
        return cast(IO[bytes], gzip.open(path, "rb"))
    if compression == "bz2":
        return bz2.open(path, "rb")
    if compression == "Z":
        return io.BufferedReader(_ChunkStream(iter_unlzw(path.read_bytes())), CHUNK_BYTES)
    raise ValueError(f"unknown compression {compression!r}")


def compression_of_suffix(suffix: str) -> str | None:
    """The compression of a mirror copy's suffix (``".gz"`` -> ``"gz"``; ``""`` -> None)."""
    return {"": None, ".xz": "xz", ".gz": "gz", ".bz2": "bz2", ".Z": "Z"}[suffix]


#: The shell command that checks a compressed copy, named in the hint of a decompression error.
TEST_COMMAND = {
    "xz": "xz -t",
    "gz": "gzip -t",
    "bz2": "bzip2 -t",
    "Z": "uncompress -c > /dev/null <",
}


def decompress_into(
    path: Path,
    compression: str | None,
    sink,
    name: str,
    what: str,
    hint: str,
    max_ratio: float = MAX_UNPACK_RATIO,
    size: int | None = None,
) -> None:
    """Decompress ``path`` into ``sink``: at most ``size`` bytes (the raw file's pinned size), else at
    most :func:`unpack_cap` bytes of a compressed file; corrupt or truncated data raises
    :class:`DecompressionError`, data past the limit :class:`UnpackLimitError`, each naming
    ``name`` (the raw file), ``what`` (the mirror copy or the download), the bytes written and
    what to do. A plain file (``compression`` None) is copied as it is, up to ``size``."""
    packed = path.stat().st_size
    compressed = compression not in (None, "")
    cap = size if size is not None else unpack_cap(packed, max_ratio) if compressed else None
    as_what = f"{what}, decompressed as .{compression}," if compressed else what
    try:
        with open_decompressed(path, compression) as source:
            pump(source, sink, DECODE_ERRORS, limit=cap)
    except OverLimit:
        if size is not None:
            raise size_limit_error(name, as_what, size, hint, discarded(sink)) from None
        # only a compressed file has a cap without a size, and only a cap stops the pump
        raise unpack_limit_error(
            name, as_what, cast(int, cap), packed, max_ratio, hint, discarded(sink)
        ) from None
    except (ReadFailed, ValueError) as exc:  # ValueError: an unknown compression
        error = exc.error if isinstance(exc, ReadFailed) else exc
        raise DecompressionError(
            f"{name}: cannot decompress {what} as .{compression} ({type(error).__name__}: {error}): "
            f"the file is corrupt or truncated; {discarded(sink)}. {hint}"
        ) from error


#: Leading bytes of the compressed formats a tar archive may come in.
_MAGIC = ((b"\x1f\x8b", "gz"), (b"BZh", "bz2"), (b"\xfd7zXZ\x00", "xz"))


class _NullSink:
    def write(self, chunk: bytes) -> int:
        return len(chunk)


def check_stream(
    path: str | os.PathLike, name: str, what: str, hint: str, max_ratio: float = MAX_UNPACK_RATIO
) -> None:
    """Decompress a gzip / bzip2 / xz file once, discarding the output, so that its end-of-stream
    checks (CRC, size) run: a tar reader stops at the archive's end marker and never reaches them.
    A plain file passes; corrupt or truncated data raises :class:`DecompressionError`, a stream
    past the cap :class:`UnpackLimitError` (see :func:`decompress_into`)."""
    with open(path, "rb") as handle:
        head = handle.read(6)
    compression = next((kind for magic, kind in _MAGIC if head.startswith(magic)), None)
    if compression is not None:
        decompress_into(Path(path), compression, _NullSink(), name, what, hint, max_ratio)


class _ChunkStream(io.RawIOBase):
    """A readable stream over an iterator of byte chunks (the .Z decoder's output as it comes)."""

    def __init__(self, chunks: Iterator[bytes]):
        self._chunks, self._pending = chunks, b""

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        while not self._pending:
            chunk = next(self._chunks, None)
            if chunk is None:
                self._pending = b""
                return 0
            self._pending = chunk
        n = min(len(buffer), len(self._pending))
        buffer[:n] = self._pending[:n]
        self._pending = self._pending[n:]
        return n


def unlzw(data: bytes) -> bytes:
    """Decompress the unix ``compress`` (.Z, LZW) format (all of it; see :func:`iter_unlzw`)."""
    return b"".join(iter_unlzw(data))


def iter_unlzw(data: bytes, chunk_bytes: int = CHUNK_BYTES) -> Iterator[bytes]:
    """Decompress the unix ``compress`` (.Z, LZW) format, yielding chunks of about ``chunk_bytes``.

    Reads what gzip's ``unlzw.c`` (and ``compress -d``) reads: codes start at
    9 bits and grow while the table fills; whenever the code width changes or a
    CLEAR code (256, in block mode) is read, the reader skips to the end of the
    current group of 8 codes (``n_bits`` bytes) counted from where the width
    last changed. The width grows when the table holds more entries than the
    current ``maxcode``, which is ``2**n_bits - 1`` except at the header's
    maximum width, where it is the table size ``2**max_bits`` (so the width
    stops growing). At the start, and after each CLEAR, ``maxcode`` is
    ``2**9 - 1`` even when the header's maximum is 9: a 9-bit stream whose
    table fills switches to 10-bit codes. That is how gzip 1.12, ncompress
    4.2.4.6's ``compress -d`` and unlzw3 0.2.3 all read it (ncompress's
    ``compress -b9`` writes 9-bit codes there, which none of them can read,
    its own decoder included: ``tests/data/lzw/README.md``), so a stream is
    accepted here exactly when gzip accepts it. Output is yielded as it is
    decoded, so a caller that stops reading (a size cap) stops the work.
    """
    if len(data) < 3 or data[0] != 0x1F or data[1] != 0x9D:
        raise ValueError("not a unix compress (.Z) stream")
    max_bits, block_mode = data[2] & 0x1F, bool(data[2] & 0x80)
    if not 9 <= max_bits <= 16:
        raise ValueError(f"unsupported maximum code width {max_bits}")
    body = data[3:] + b"\x00\x00\x00"
    total_bits = (len(data) - 3) * 8
    max_entries = 1 << max_bits
    first_maxcode = (1 << 9) - 1

    def reset_table():
        return [bytes([i]) for i in range(256)] + ([b""] if block_mode else [])

    def skip_to_group_end(bit_pos, segment_start, n_bits):
        group = n_bits * 8
        used = bit_pos - segment_start
        return segment_start + -(-used // group) * group

    table = reset_table()
    out = bytearray()
    n_bits, maxcode, bit_pos, segment_start, previous = 9, first_maxcode, 0, 0, None
    while True:
        if len(table) > maxcode:
            bit_pos = skip_to_group_end(bit_pos, segment_start, n_bits)
            segment_start, n_bits = bit_pos, n_bits + 1
            maxcode = max_entries if n_bits == max_bits else (1 << n_bits) - 1
        if bit_pos + n_bits > total_bits:
            break
        byte = bit_pos >> 3
        word = body[byte] | (body[byte + 1] << 8) | (body[byte + 2] << 16)
        code = (word >> (bit_pos & 7)) & ((1 << n_bits) - 1)
        bit_pos += n_bits
        if block_mode and code == 256 and previous is not None:
            bit_pos = skip_to_group_end(bit_pos, segment_start, n_bits)
            segment_start, n_bits, maxcode = bit_pos, 9, first_maxcode
            table, previous = reset_table(), None
            continue
        if code < len(table) and (code != 256 or not block_mode):
            entry = table[code]
        elif code == len(table) and previous is not None:
            entry = previous + previous[:1]
        else:
            raise ValueError(
                f"corrupt .Z stream: code {code} with {len(table)} table entries ({n_bits}-bit codes)"
            )
        out += entry
        if len(out) >= chunk_bytes:
            yield bytes(out)
            out.clear()
        if previous is not None and len(table) < max_entries:
            table.append(previous + entry[:1])
        previous = entry
    if out:
        yield bytes(out)
