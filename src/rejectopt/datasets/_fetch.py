"""Fetching raw files from a local mirror or the official URL, with checksum verification.

Every file is streamed into a temporary file beside its final name while its
sha256 is computed; only a verified file is moved to its final name
(:func:`rejectopt._io.atomic_path`).  On any failure the temporary files are
deleted and nothing is left under the final name.

Downloads (:class:`DownloadOptions`, the pipeline's ``download_*`` config keys)
    ``base`` (``download_base``) fetches every official URL from another server
    or folder: ``<scheme>://<host>/<path>[?<query>]`` is read from
    ``<base>/<host>/<path>[?<query>]`` (the scheme is dropped, the host becomes
    the first folder, path and query are kept), e.g. with
    ``base = "http://127.0.0.1:8000/"`` the URL
    ``https://archive.ics.uci.edu/ml/machine-learning-databases/letter-recognition/letter-recognition.data``
    is fetched from ``http://127.0.0.1:8000/archive.ics.uci.edu/ml/machine-learning-databases/letter-recognition/letter-recognition.data``;
    a ``file:///folder/`` base reads a local copy of that tree.
    Transient failures are retried ``retries`` times (``download_retries``),
    waiting ``backoff_s * 2**(k-1)`` seconds before retry ``k``
    (``download_backoff_s``): a refused, reset or dropped connection, a body
    shorter than its ``Content-Length``, no data for ``timeout_s`` seconds
    (``download_timeout_s``), HTTP 408, 425, 429 and 5xx.  Never retried: other
    HTTP statuses (404, 403, ...), a checksum mismatch, data that cannot be
    decompressed.  A final failure is one error naming the file, the URL, the
    HTTP status or the expected and found sha256, and the attempts made.

Trust (``<dest_dir>/checksums.lock``, JSON ``{file name: sha256}``)
    A :class:`~rejectopt.datasets.RawFile` whose ``sha256`` is pinned is always
    verified against it.  An unpinned file is verified against the hash recorded
    in the lock file.  With ``record_lock=True`` (the default) the hash of a
    first fetch is recorded at once; with ``record_lock=False`` (the pipeline's
    ``download_raw`` rule, :func:`rejectopt.datasets.prepare_dataset`) the file
    stays *pending* until its dataset parsed and passed validation, and only
    then :func:`record_trusted` records it: a file that fails parsing or
    validation is never recorded as trusted.
"""

from __future__ import annotations

import bz2
import fcntl
import gzip
import hashlib
import http.client
import json
import logging
import lzma
import os
import socket
import ssl
import tarfile
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
import zipfile
import zlib
from collections.abc import Callable, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
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
    "check_stream",
    "DecompressionError",
    "DownloadError",
    "DownloadOptions",
    "fetch_file",
    "find_in_mirror",
    "is_trusted",
    "read_lock",
    "record_trusted",
    "resolve_url",
    "sha256_of_file",
]

logger = logging.getLogger(__name__)

LOCK_FILE_NAME = "checksums.lock"
MIRROR_SUFFIXES = ("", ".xz", ".gz", ".bz2")
CHUNK_BYTES = 1 << 20
PROGRESS_EVERY_BYTES = 16 << 20
#: Defaults of the ``download_timeout_s``, ``download_retries`` and ``download_backoff_s`` config keys.
DOWNLOAD_TIMEOUT_S = 60.0
DOWNLOAD_RETRIES = 3
DOWNLOAD_BACKOFF_S = 5.0
#: HTTP statuses worth another attempt (the server is busy or failed for the moment).
TRANSIENT_HTTP_STATUSES = frozenset({408, 425, 429, 500, 502, 503, 504})
MIRROR_HINT = (
    "Set the `data_mirror` config option to a folder laid out as "
    "<mirror>/<dataset>/<file>[.xz|.gz|.bz2] to use local copies instead of downloading."
)

ProgressCallback = Callable[[int, "int | None"], None]

#: Waits between attempts (replaced in tests that check the delays).
_sleep = time.sleep


class ChecksumError(ValueError):
    """A fetched file's sha256 differs from the pinned or locked one."""


class DataSourceError(OSError):
    """A raw file could be found neither in the mirror nor at its URL."""


class DownloadError(DataSourceError):
    """A download failed for good (HTTP status not worth retrying, or every retry failed).

    Attributes
    ----------
    url : str
        The URL requested (after ``download_base``).
    status : int or None
        The last HTTP status, None if no HTTP answer came (connection, timeout, short body).
    attempts : int
        Requests made.
    """

    def __init__(self, message: str, url: str = "", status: int | None = None, attempts: int = 1):
        super().__init__(message)
        self.url, self.status, self.attempts = url, status, attempts

    def __str__(self) -> str:
        return str(self.args[0])


class DecompressionError(DataSourceError):
    """A compressed file or archive (mirror copy or download) is corrupt or truncated."""


# --------------------------------------------------------------------------- download options
def resolve_url(url: str, base: str | None) -> str:
    """Where ``url`` is fetched from with ``download_base = base`` (None: ``url`` itself).

    ``<scheme>://<host>/<path>[?<query>]`` maps to ``<base>/<host>/<path>[?<query>]``.

    Examples
    --------
    >>> resolve_url("https://dlib.net/files/a.tar.gz", "http://127.0.0.1:8000/")
    'http://127.0.0.1:8000/dlib.net/files/a.tar.gz'
    >>> resolve_url("https://dlib.net/files/a.tar.gz", None)
    'https://dlib.net/files/a.tar.gz'
    """
    if base is None:
        return url
    parts = urllib.parse.urlsplit(url)
    mapped = f"{base.rstrip('/')}/{parts.netloc}{parts.path}"
    return f"{mapped}?{parts.query}" if parts.query else mapped


@dataclass(frozen=True)
class DownloadOptions:
    """How downloads are made: where from, how often retried, how long waited.

    Attributes
    ----------
    base : str or None
        ``download_base``: None fetches the official URLs; else a ``http://``,
        ``https://`` or ``file://`` URL under which the official hosts are
        folders (see :func:`resolve_url`).
    retries : int
        ``download_retries``: further attempts after a transient failure.
    backoff_s : float
        ``download_backoff_s``: the wait before retry ``k`` is ``backoff_s * 2**(k-1)`` s.
    timeout_s : float
        ``download_timeout_s``: a connection or read with no data for this long fails (and is retried).
    """

    base: str | None = None
    retries: int = DOWNLOAD_RETRIES
    backoff_s: float = DOWNLOAD_BACKOFF_S
    timeout_s: float = DOWNLOAD_TIMEOUT_S

    def __post_init__(self):
        if self.base is not None and urllib.parse.urlsplit(self.base).scheme not in ("http", "https", "file"):
            raise ValueError(f"download_base must be an http://, https:// or file:// URL, got {self.base!r}")
        if isinstance(self.retries, bool) or not isinstance(self.retries, int) or self.retries < 0:
            raise ValueError(f"download_retries must be an integer >= 0, got {self.retries!r}")
        if not self.backoff_s >= 0:
            raise ValueError(f"download_backoff_s must be >= 0, got {self.backoff_s!r}")
        if not self.timeout_s > 0:
            raise ValueError(f"download_timeout_s must be > 0, got {self.timeout_s!r}")

    @classmethod
    def from_config(cls, config: Mapping) -> "DownloadOptions":
        """The options of a pipeline config (keys ``download_base``, ``download_retries``,
        ``download_backoff_s``, ``download_timeout_s``; absent keys take the defaults)."""
        return cls(
            base=config.get("download_base"),
            retries=config.get("download_retries", DOWNLOAD_RETRIES),
            backoff_s=config.get("download_backoff_s", DOWNLOAD_BACKOFF_S),
            timeout_s=config.get("download_timeout_s", DOWNLOAD_TIMEOUT_S),
        )

    def url_for(self, url: str) -> str:
        """The URL actually requested for the official ``url``."""
        return resolve_url(url, self.base)

    def delay(self, retry: int) -> float:
        """Seconds waited before retry number ``retry`` (1-based)."""
        return self.backoff_s * 2 ** (retry - 1)


def _as_options(download: "DownloadOptions | Mapping | None") -> DownloadOptions:
    if download is None:
        return DownloadOptions()
    if isinstance(download, DownloadOptions):
        return download
    return DownloadOptions(**dict(download))


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
            name, sha256, dest_dir / LOCK_FILE_NAME,
        )


@contextmanager
def _scratch_path(folder: Path, stem: str):
    """A fresh ``folder/.<stem>.<random>.part`` (a downloaded archive before extraction);
    always deleted afterwards. Final files are written by :func:`rejectopt._io.atomic_path`."""
    fd, tmp_name = tempfile.mkstemp(prefix=f".{stem}.", suffix=".part", dir=folder)
    os.close(fd)
    try:
        yield Path(tmp_name)
    finally:
        Path(tmp_name).unlink(missing_ok=True)


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


class _ReadFailed(Exception):
    """Reading a source failed (as opposed to writing the sink)."""

    def __init__(self, error: BaseException):
        super().__init__(str(error))
        self.error = error


#: What a decompressor or archive reader raises on corrupt or truncated data.
_DECODE_ERRORS = (EOFError, OSError, ValueError, lzma.LZMAError, zlib.error, zipfile.BadZipFile, tarfile.TarError)


def _pump(source: IO[bytes], sink, catch: tuple, progress: ProgressCallback | None = None,
          total: int | None = None, read=None) -> None:
    """Copy ``source`` to ``sink`` in chunks (``read(n)``, default ``source.read``); an exception of
    ``catch`` raised by a read becomes :class:`_ReadFailed` (errors of the sink, e.g. a full disk,
    pass through unchanged)."""
    read = read or source.read
    done = 0
    while True:
        try:
            chunk = read(CHUNK_BYTES)
        except catch as exc:
            raise _ReadFailed(exc) from exc
        if not chunk:
            return
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


_TEST_COMMAND = {"xz": "xz -t", "gz": "gzip -t", "bz2": "bzip2 -t", "Z": "uncompress -c > /dev/null <"}


def _decompress_into(path: Path, compression: str | None, sink, name: str, what: str, hint: str) -> None:
    """Decompress ``path`` into ``sink``; corrupt or truncated data raises :class:`DecompressionError`
    naming ``name`` (the raw file), ``what`` (the mirror copy or the download) and what to do."""
    try:
        with _open_decompressed(path, compression) as source:
            _pump(source, sink, _DECODE_ERRORS)
    except (_ReadFailed, ValueError) as exc:  # ValueError: unlzw on open
        error = exc.error if isinstance(exc, _ReadFailed) else exc
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
        _decompress_into(Path(path), compression, _NullSink(), name, what, hint)


def _mirror_hint(path: Path, compression: str | None) -> str:
    check = f" (`{_TEST_COMMAND[compression]} {path}` checks a copy)" if compression in _TEST_COMMAND else ""
    return (
        f"Replace {path} with an intact copy of the official file{check}, or remove it from the "
        "data_mirror folder to download the official file instead."
    )


def _download_hint(raw_file: "RawFile", url: str) -> str:
    return (
        f"Run again to download it anew; if this happens again the file served at {url} is damaged: "
        f"put an intact copy at <data_mirror>/{raw_file.dataset}/{raw_file.name}[.xz|.gz|.bz2] and set "
        "the `data_mirror` config option."
    )


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
    _decompress_into(
        mirror_path, compression, sink, raw_file.name, f"the data_mirror copy {mirror_path}",
        _mirror_hint(mirror_path, compression),
    )


class _Transient(Exception):
    """One attempt failed in a way worth retrying."""

    def __init__(self, reason: str, status: int | None = None):
        super().__init__(reason)
        self.reason, self.status = reason, status


class _Final(_Transient):
    """One attempt failed in a way no retry can fix (e.g. HTTP 404)."""


#: What reading an HTTP response raises when the connection breaks or stalls.
_NETWORK_ERRORS = (OSError, http.client.HTTPException)


def _is_transient(error: BaseException) -> bool:
    """Whether a failure to get a response is worth another attempt: a refused, reset or timed-out
    connection or a temporary name-resolution failure is; an unknown host, a missing file under a
    file:// base, a certificate that does not verify or a malformed URL is not."""
    if isinstance(error, urllib.error.URLError):
        error = error.reason
    if not isinstance(error, OSError):
        return isinstance(error, http.client.HTTPException)
    if isinstance(error, socket.gaierror):
        return error.errno == socket.EAI_AGAIN
    if isinstance(error, (FileNotFoundError, PermissionError, IsADirectoryError, ssl.SSLCertVerificationError)):
        return False
    return True


def _network_reason(error: BaseException, timeout_s: float) -> str:
    if isinstance(error, urllib.error.URLError) and not isinstance(error, urllib.error.HTTPError):
        error = error.reason if isinstance(error.reason, BaseException) else error
    if isinstance(error, TimeoutError):
        return f"no data for {timeout_s:g} s (timeout; download_timeout_s={timeout_s:g})"
    if isinstance(error, ConnectionRefusedError):
        return "connection refused"
    if isinstance(error, (ConnectionResetError, http.client.RemoteDisconnected)):
        return f"connection dropped by the server ({type(error).__name__})"
    if isinstance(error, socket.gaierror):
        return f"cannot resolve the host name ({error}; no network?)"
    if isinstance(error, urllib.error.URLError):
        return f"cannot connect: {error.reason}"
    return f"{type(error).__name__}: {error}"


def _attempt(url: str, path: Path, timeout_s: float, progress: ProgressCallback | None) -> tuple[str, int]:
    """One GET of ``url`` into ``path`` (truncated first); (sha256, bytes) or _Transient / _Final."""
    try:
        response = urllib.request.urlopen(url, timeout=timeout_s)  # noqa: S310 (registry URLs / download_base)
    except urllib.error.HTTPError as exc:
        exc.close()
        reason = f"HTTP {exc.code} {exc.reason}"
        raise (_Transient if exc.code in TRANSIENT_HTTP_STATUSES else _Final)(reason, exc.code) from exc
    except (urllib.error.URLError, *_NETWORK_ERRORS) as exc:
        kind = _Transient if _is_transient(exc) else _Final
        raise kind(_network_reason(exc, timeout_s)) from exc
    with response:
        declared = response.headers.get("Content-Length")
        total = int(declared) if declared and declared.strip().isdigit() else None
        with open(path, "wb") as handle:
            sink = _HashingWriter(handle)
            try:
                # read1: whatever has arrived, so that a failure reports the bytes really received
                _pump(response, sink, _NETWORK_ERRORS, progress, total, read=getattr(response, "read1", None))
            except _ReadFailed as exc:
                of = f" of the {total} announced" if total is not None else ""
                raise _Transient(f"{_network_reason(exc.error, timeout_s)} after {sink.n_bytes} bytes{of}") from exc.error
    # http.client stops quietly at a closed connection: compare with the announced length.
    if total is not None and sink.n_bytes != total:
        raise _Transient(f"the server announced Content-Length {total} but sent {sink.n_bytes} bytes")
    return sink.hexdigest(), sink.n_bytes


def _download(raw_file: "RawFile", path: Path, dest_dir: Path, options: DownloadOptions,
              progress: ProgressCallback | None) -> tuple[str, int, int]:
    """Download ``raw_file.url`` (after ``download_base``) into ``path`` with retries;
    (sha256, bytes, attempts made) or :class:`DownloadError`."""
    url = options.url_for(raw_file.url)
    official = "" if url == raw_file.url else f" (official URL {raw_file.url})"
    attempts = options.retries + 1
    last = None
    for attempt in range(1, attempts + 1):
        try:
            sha256, n_bytes = _attempt(url, path, options.timeout_s, progress)
        except _Final as exc:
            raise DownloadError(
                f"{raw_file.name}: cannot download {url}{official}: {exc.reason}; not retried "
                f"(attempt {attempt} of {attempts}, download_retries={options.retries}: only dropped or refused "
                f"connections, timeouts, short bodies and HTTP {'/'.join(map(str, sorted(TRANSIENT_HTTP_STATUSES)))} "
                f"are retried). Nothing was written to {dest_dir}. {MIRROR_HINT}",
                url=url, status=exc.status, attempts=attempt,
            ) from exc
        except _Transient as exc:
            last = exc
            if attempt < attempts:
                delay = options.delay(attempt)
                logger.warning(
                    "%s: attempt %d of %d failed (%s: %s); retrying in %g s",
                    raw_file.name, attempt, attempts, url, exc.reason, delay,
                )
                _sleep(delay)
            continue
        if attempt > 1:
            logger.info("%s: downloaded on attempt %d of %d", raw_file.name, attempt, attempts)
        return sha256, n_bytes, attempt
    raise DownloadError(
        f"{raw_file.name}: download of {url}{official} failed after {attempts} attempts "
        f"(download_retries={options.retries}); last error: {last.reason}. Nothing was written to "
        f"{dest_dir}. {MIRROR_HINT}",
        url=url, status=last.status, attempts=attempts,
    ) from last


def _logging_progress(label: str) -> ProgressCallback:
    state = {"next": PROGRESS_EVERY_BYTES}

    def report(done: int, total: int | None) -> None:
        if done < state["next"] - PROGRESS_EVERY_BYTES:  # a new attempt started over
            state["next"] = PROGRESS_EVERY_BYTES
        if done >= state["next"]:
            state["next"] += PROGRESS_EVERY_BYTES
            of_total = f" of {total / 2**20:.1f}" if total else ""
            logger.info("%s: %.1f%s MiB downloaded", label, done / 2**20, of_total)

    return report


def _write_from_url(raw_file: "RawFile", dest_dir: Path, out_path: Path, options: DownloadOptions,
                    progress) -> tuple[str, int, int]:
    """Download ``raw_file`` into ``out_path``, extracting its member / decompressing it;
    (sha256 of ``out_path``, its bytes, download attempts)."""
    url = options.url_for(raw_file.url)
    callback = _logging_progress(url) if progress is True else (progress or None)
    needs_unpacking = bool(raw_file.archive_member or raw_file.compression)
    logger.info("%s: downloading %s", raw_file.name, url)
    if not needs_unpacking and raw_file.download_sha256 is None:
        return _download(raw_file, out_path, dest_dir, options, callback)
    with _scratch_path(dest_dir, raw_file.name + ".download") as tmp_path:
        download_sha256, n_bytes, attempts = _download(raw_file, tmp_path, dest_dir, options, callback)
        _verify(
            f"{url} (the download of {raw_file.name}; {_attempts_note(attempts)})",
            raw_file.download_sha256, download_sha256, "the download",
        )
        with open(out_path, "wb") as handle:
            sink = _HashingWriter(handle)
            if raw_file.archive_member:
                _extract_member(raw_file, tmp_path, url, n_bytes, sink)
            else:
                _decompress_into(
                    tmp_path, raw_file.compression, sink, raw_file.name,
                    f"the download of {url} ({n_bytes} bytes)", _download_hint(raw_file, url),
                )
        return sink.hexdigest(), sink.n_bytes, attempts


def _attempts_note(attempts: int) -> str:
    return f"{attempts} download attempt{'s' if attempts > 1 else ''}; a checksum mismatch is not retried"


def _extract_member(raw_file: "RawFile", archive: Path, url: str, n_bytes: int, sink) -> None:
    """Copy member ``raw_file.archive_member`` of the downloaded zip / tar ``archive`` into ``sink``."""
    member = raw_file.archive_member
    damaged = (
        f"{raw_file.name}: the download of {url} ({n_bytes} bytes) cannot be read as an archive"
    )
    hint = _download_hint(raw_file, url)
    try:
        if zipfile.is_zipfile(archive):
            with zipfile.ZipFile(archive) as bundle:
                with bundle.open(_resolve_member(bundle.namelist(), member, url)) as source:
                    _pump(source, sink, _DECODE_ERRORS)
            return
        if tarfile.is_tarfile(archive):
            check_stream(archive, raw_file.name, f"the download of {url} ({n_bytes} bytes)", hint)
            with tarfile.open(archive) as bundle:
                source = bundle.extractfile(_resolve_member(bundle.getnames(), member, url))
                if source is None:
                    raise DataSourceError(f"{member} is not a regular file in {url}")
                with source:
                    _pump(source, sink, _DECODE_ERRORS)
            return
    except _ReadFailed as exc:
        raise DecompressionError(
            f"{damaged}: member {member!r} is corrupt or truncated ({type(exc.error).__name__}: {exc.error}); "
            f"nothing was written. {hint}"
        ) from exc.error
    except (zipfile.BadZipFile, tarfile.TarError, EOFError, zlib.error, lzma.LZMAError) as exc:
        raise DecompressionError(
            f"{damaged}: the archive is corrupt or truncated ({type(exc).__name__}: {exc}); nothing was "
            f"written. {hint}"
        ) from exc
    raise DecompressionError(
        f"{damaged}: it is neither a zip nor a tar archive (corrupt or truncated, or the server sent "
        f"something else, such as an HTML page); nothing was written. {hint}"
    )


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


def is_trusted(raw_file: "RawFile", dest_dir: str | os.PathLike) -> bool:
    """True if ``raw_file`` has a pinned sha256 or one recorded in ``dest_dir/checksums.lock``."""
    return _expected_sha256(raw_file, Path(dest_dir))[0] is not None


# --------------------------------------------------------------------------- public
def fetch_file(
    raw_file: "RawFile",
    dest_dir: str | os.PathLike,
    mirror: str | os.PathLike | None = None,
    progress: bool | ProgressCallback = True,
    allow_download: bool = True,
    download: "DownloadOptions | Mapping | None" = None,
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
        Where from (``base``), retries, backoff and timeout of downloads (see
        :class:`DownloadOptions`; a mapping holds its fields). Default: the
        official URLs, 3 retries, 5 s backoff, 60 s timeout.
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
        status or the last network error, and the attempts made.
    DecompressionError
        The mirror copy or the download cannot be decompressed / unpacked.
    DataSourceError
        Neither the mirror nor the URL provided the file.
    """
    options = _as_options(download)
    dest_dir = Path(dest_dir)
    dest_dir.mkdir(parents=True, exist_ok=True)
    final_path = dest_dir / raw_file.name
    expected, origin = _expected_sha256(raw_file, dest_dir)
    if final_path.exists():
        if expected is not None and sha256_of_file(final_path) == expected:
            logger.debug("%s: already present and verified", final_path)
            return final_path
        if expected is None and not record_lock:
            logger.info("%s: already present, pending (its sha256 is recorded once its dataset passed validation)",
                        final_path)
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
        if mirror_path is not None:
            with open(tmp_path, "wb") as handle:
                sink = _HashingWriter(handle)
                _write_from_mirror(raw_file, mirror_path, sink)
            found, n_bytes, source = sink.hexdigest(), sink.n_bytes, str(mirror_path)
        else:
            found, n_bytes, attempts = _write_from_url(raw_file, dest_dir, tmp_path, options, progress)
            source = f"{options.url_for(raw_file.url)}; {_attempts_note(attempts)}"
        _verify(f"{raw_file.name} (from {source}; expected hash from the {origin or 'registry'})", expected, found)

    if expected is None and not record_lock:
        logger.info(
            "%s: written, pending (sha256 %s, %d bytes, no pinned hash): recorded in %s once its dataset "
            "passed validation", final_path, found, n_bytes, dest_dir / LOCK_FILE_NAME,
        )
        return final_path
    if expected is None:
        record_trusted(dest_dir, {raw_file.name: found})
    logger.info("%s: verified (sha256 %s, %d bytes)", final_path, found, n_bytes)
    return final_path
