"""Decompressing a raw file: xz, gzip, bzip2 and unix compress (.Z, LZW, decoded here).

A mirror copy may be stored compressed (``<file>.xz|.gz|.bz2``) and a download may come
compressed (:attr:`RawFile.compression <rejectopt.datasets.RawFile>`, ``.Z`` included); corrupt or
truncated data raises :class:`~rejectopt.datasets.DecompressionError` naming the file, where it
came from and what to do. The standard library has no ``.Z`` decoder, so :func:`unlzw` is ours.
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
from pathlib import Path
from typing import IO

from ._errors import DecompressionError
from ._stream import ReadFailed, pump

__all__ = ["DECODE_ERRORS", "TEST_COMMAND", "check_stream", "compression_of_suffix", "decompress_into",
           "open_decompressed", "unlzw"]

#: What a decompressor or archive reader raises on corrupt or truncated data.
DECODE_ERRORS = (EOFError, OSError, ValueError, lzma.LZMAError, zlib.error, zipfile.BadZipFile, tarfile.TarError)


def open_decompressed(path: Path, compression: str | None) -> IO[bytes]:
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
        return io.BytesIO(unlzw(path.read_bytes()))
    raise ValueError(f"unknown compression {compression!r}")


def compression_of_suffix(suffix: str) -> str | None:
    """The compression of a mirror copy's suffix (``".gz"`` -> ``"gz"``; ``""`` -> None)."""
    return {"": None, ".xz": "xz", ".gz": "gz", ".bz2": "bz2", ".Z": "Z"}[suffix]


#: The shell command that checks a compressed copy, named in the hint of a decompression error.
TEST_COMMAND = {"xz": "xz -t", "gz": "gzip -t", "bz2": "bzip2 -t", "Z": "uncompress -c > /dev/null <"}


def decompress_into(path: Path, compression: str | None, sink, name: str, what: str, hint: str) -> None:
    """Decompress ``path`` into ``sink``; corrupt or truncated data raises :class:`DecompressionError`
    naming ``name`` (the raw file), ``what`` (the mirror copy or the download) and what to do."""
    try:
        with open_decompressed(path, compression) as source:
            pump(source, sink, DECODE_ERRORS)
    except (ReadFailed, ValueError) as exc:  # ValueError: unlzw on open
        error = exc.error if isinstance(exc, ReadFailed) else exc
        raise DecompressionError(
            f"{name}: cannot decompress {what} as .{compression} ({type(error).__name__}: {error}): "
            f"the file is corrupt or truncated; nothing was written. {hint}"
        ) from error


#: Leading bytes of the compressed formats a tar archive may come in.
_MAGIC = ((b"\x1f\x8b", "gz"), (b"BZh", "bz2"), (b"\xfd7zXZ\x00", "xz"))


class _NullSink:
    def write(self, chunk: bytes) -> int:
        return len(chunk)


def check_stream(path: str | os.PathLike, name: str, what: str, hint: str) -> None:
    """Decompress a gzip / bzip2 / xz file once, discarding the output, so that its end-of-stream
    checks (CRC, size) run: a tar reader stops at the archive's end marker and never reaches them.
    A plain file passes; corrupt or truncated data raises :class:`DecompressionError`."""
    with open(path, "rb") as handle:
        head = handle.read(6)
    compression = next((kind for magic, kind in _MAGIC if head.startswith(magic)), None)
    if compression is not None:
        decompress_into(Path(path), compression, _NullSink(), name, what, hint)


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
