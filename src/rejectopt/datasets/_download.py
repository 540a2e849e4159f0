"""Downloading a raw file from its official URL (or a ``download_base`` copy of the official
hosts), with retries, backoff and timeouts; the download unpacked (an archive member, a
compressed file) and verified before anything is written under the final name.

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
    The whole download of one file, every attempt and wait included, ends by
    ``deadline_s`` seconds (``download_deadline_s``): a server that sends a
    byte now and then never trips the timeout, so a watchdog shuts the
    connection at the deadline, whatever it is doing (connecting, sending
    headers or the body); the error names the file, the URL, the bytes
    received and the key to raise.  The download is then decompressed or
    unpacked with the cap of ``max_ratio`` (``unpack_max_ratio``, see
    :mod:`._decompress`).
"""

from __future__ import annotations

import http.client
import logging
import math
import os
import socket
import ssl
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from ..exceptions import DownloadError
from ._archive import extract_member
from ._decompress import MAX_UNPACK_RATIO, decompress_into, size_limit_error
from ._stream import HashingWriter, OverLimit, ProgressCallback, ReadFailed, discarded, pump
from ._trust import verify_sha256

if TYPE_CHECKING:  # pragma: no cover
    from ._registry import RawFile

__all__ = [
    "DOWNLOAD_BACKOFF_S",
    "DOWNLOAD_DEADLINE_S",
    "DOWNLOAD_RETRIES",
    "DOWNLOAD_TIMEOUT_S",
    "MIRROR_HINT",
    "TRANSIENT_HTTP_STATUSES",
    "DownloadOptions",
    "as_options",
    "attempts_note",
    "download_with_retries",
    "resolve_url",
    "write_from_url",
]

logger = logging.getLogger(__name__)

PROGRESS_EVERY_BYTES = 16 << 20
#: Defaults of the ``download_timeout_s``, ``download_retries`` and ``download_backoff_s`` config keys.
DOWNLOAD_TIMEOUT_S = 60.0
DOWNLOAD_RETRIES = 3
DOWNLOAD_BACKOFF_S = 5.0
#: Default of the ``download_deadline_s`` config key: the longest one file's download may take,
#: all attempts included. The largest download, the 1.7 GB 300-W archive, needs 2 h at 240 kB/s.
DOWNLOAD_DEADLINE_S = 7200.0
#: HTTP statuses worth another attempt (the server is busy or failed for the moment).
TRANSIENT_HTTP_STATUSES = frozenset({408, 425, 429, 500, 502, 503, 504})
MIRROR_HINT = (
    "Set the `data_mirror` config option to a folder laid out as "
    "<mirror>/<dataset>/<file>[.xz|.gz|.bz2] to use local copies instead of downloading."
)

#: Waits between attempts (replaced in tests that check the delays).
_sleep = time.sleep


def resolve_url(url: str, base: str | None) -> str:
    """Where ``url`` is fetched from with ``download_base = base`` (None: ``url`` itself).

    ``<scheme>://<host>/<path>[?<query>]`` maps to ``<base>/<host>/<path>[?<query>]``.
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
    deadline_s : float
        ``download_deadline_s``: the whole download of one file (every attempt and wait) ends by
        then, however slowly the data keeps coming; not retried.
    max_ratio : float
        ``unpack_max_ratio``: a download or mirror copy is decompressed / unpacked to at most this
        many times its size (at least 64 MiB; see :func:`._decompress.unpack_cap`).

    Parameters
    ----------
    base : str or None, default None
        The attribute above.
    retries : int, default 3
        The attribute above.
    backoff_s : float, default 5.0
        The attribute above.
    timeout_s : float, default 60.0
        The attribute above.
    deadline_s : float, default 7200.0
        The attribute above.
    max_ratio : float, default 100.0
        The attribute above.

    Raises
    ------
    ValueError
        A value out of range; the message names its config key.
    """

    base: str | None = None
    retries: int = DOWNLOAD_RETRIES
    backoff_s: float = DOWNLOAD_BACKOFF_S
    timeout_s: float = DOWNLOAD_TIMEOUT_S
    deadline_s: float = DOWNLOAD_DEADLINE_S
    max_ratio: float = MAX_UNPACK_RATIO

    def __post_init__(self):
        if self.base is not None and urllib.parse.urlsplit(self.base).scheme not in (
            "http",
            "https",
            "file",
        ):
            raise ValueError(
                f"download_base must be an http://, https:// or file:// URL, got {self.base!r}"
            )
        if isinstance(self.retries, bool) or not isinstance(self.retries, int) or self.retries < 0:
            raise ValueError(f"download_retries must be an integer >= 0, got {self.retries!r}")
        # finite too: NaN fails every comparison, and an infinite wait or ratio overflows where used
        if not (self.backoff_s >= 0 and math.isfinite(self.backoff_s)):
            raise ValueError(
                f"download_backoff_s must be a finite number >= 0, got {self.backoff_s!r}"
            )
        if not (self.timeout_s > 0 and math.isfinite(self.timeout_s)):
            raise ValueError(
                f"download_timeout_s must be a finite number > 0, got {self.timeout_s!r}"
            )
        if not (self.deadline_s > 0 and math.isfinite(self.deadline_s)):
            raise ValueError(
                f"download_deadline_s must be a finite number > 0, got {self.deadline_s!r}"
            )
        if not (self.max_ratio >= 1 and math.isfinite(self.max_ratio)):
            raise ValueError(
                f"unpack_max_ratio must be a finite number >= 1, got {self.max_ratio!r}"
            )

    @classmethod
    def from_config(cls, config: Mapping) -> DownloadOptions:
        """The options of a pipeline config (keys ``download_base``, ``download_retries``,
        ``download_backoff_s``, ``download_timeout_s``, ``download_deadline_s``,
        ``unpack_max_ratio``; absent keys take the defaults)."""
        return cls(
            base=config.get("download_base"),
            retries=config.get("download_retries", DOWNLOAD_RETRIES),
            backoff_s=config.get("download_backoff_s", DOWNLOAD_BACKOFF_S),
            timeout_s=config.get("download_timeout_s", DOWNLOAD_TIMEOUT_S),
            deadline_s=config.get("download_deadline_s", DOWNLOAD_DEADLINE_S),
            max_ratio=config.get("unpack_max_ratio", MAX_UNPACK_RATIO),
        )

    def url_for(self, url: str) -> str:
        """The URL actually requested for the official ``url``."""
        return resolve_url(url, self.base)

    def delay(self, retry: int) -> float:
        """Seconds waited before retry number ``retry`` (1-based)."""
        return self.backoff_s * 2 ** (retry - 1)


def as_options(download: DownloadOptions | Mapping | None) -> DownloadOptions:
    """``download`` as :class:`DownloadOptions` (None: the defaults; a mapping: its fields)."""
    if download is None:
        return DownloadOptions()
    if isinstance(download, DownloadOptions):
        return download
    return DownloadOptions(**dict(download))


@contextmanager
def _scratch_path(folder: Path, stem: str):
    """A fresh ``folder/.<stem>.<pid>.<random>.part`` (a downloaded archive before extraction);
    always deleted afterwards, and by :func:`._stream.remove_stale_parts` once process ``<pid>``
    was killed. Final files are written by :func:`rejectopt._io.atomic_path`."""
    fd, tmp_name = tempfile.mkstemp(prefix=f".{stem}.{os.getpid()}.", suffix=".part", dir=folder)
    os.close(fd)
    try:
        yield Path(tmp_name)
    finally:
        Path(tmp_name).unlink(missing_ok=True)


class _Transient(Exception):
    """One attempt failed in a way worth retrying."""

    def __init__(self, reason: str, status: int | None = None):
        super().__init__(reason)
        self.reason, self.status = reason, status


class _Final(_Transient):
    """One attempt failed in a way no retry can fix (e.g. HTTP 404)."""


class _PastDeadline(Exception):
    """The download's deadline came during an attempt, after ``n_bytes`` bytes of ``total``."""

    def __init__(self, n_bytes: int, total: int | None):
        super().__init__(f"deadline after {n_bytes} bytes")
        self.n_bytes, self.total = n_bytes, total


class _Watchdog:
    """Shuts down the sockets of one attempt when the download's deadline comes.

    A socket timeout fires only after a silence; a server that sends a byte now and then (while
    connecting, in its headers or its body) never trips it. Shutting the socket down from this
    timer thread ends the read that blocks in the downloading thread, wherever it is.
    """

    def __init__(self, remaining_s: float):
        self.fired = False
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._timer = threading.Timer(max(remaining_s, 0.0), self._fire)
        self._timer.daemon = True

    def track(self, sock: socket.socket) -> None:
        with self._lock:
            self._sockets.append(sock)
            if self.fired:
                self._shut(sock)

    def _fire(self) -> None:
        with self._lock:
            self.fired = True
            for sock in self._sockets:
                self._shut(sock)

    @staticmethod
    def _shut(sock: socket.socket) -> None:
        try:  # the plain socket's shutdown, also under TLS: it only wakes the reader
            socket.socket.shutdown(sock, socket.SHUT_RDWR)
        except OSError:
            pass

    def __enter__(self) -> _Watchdog:
        self._timer.start()
        return self

    def __exit__(self, *exc_info) -> None:
        self._timer.cancel()


class _Watched:
    """A connection whose socket, once connected (and wrapped in TLS), its watchdog can shut."""

    def __init__(self, *args, watchdog: _Watchdog, **kwargs):
        super().__init__(*args, **kwargs)
        self._watchdog = watchdog

    def connect(self):
        super().connect()
        self._watchdog.track(self.sock)


class _WatchedHTTPConnection(_Watched, http.client.HTTPConnection):
    pass


class _WatchedHTTPSConnection(_Watched, http.client.HTTPSConnection):
    pass


class _WatchedHTTPHandler(urllib.request.HTTPHandler):
    def __init__(self, watchdog: _Watchdog):
        super().__init__()
        self._watchdog = watchdog

    def http_open(self, req):
        return self.do_open(partial(_WatchedHTTPConnection, watchdog=self._watchdog), req)


class _WatchedHTTPSHandler(urllib.request.HTTPSHandler):
    def __init__(self, watchdog: _Watchdog):
        super().__init__()
        self._watchdog = watchdog

    def https_open(self, req):
        return self.do_open(
            partial(_WatchedHTTPSConnection, watchdog=self._watchdog), req, context=self._context
        )


#: What reading an HTTP response raises when the connection breaks or stalls.
_NETWORK_ERRORS = (OSError, http.client.HTTPException)


def _is_transient(error: BaseException | str) -> bool:
    """Whether a failure to get a response is worth another attempt: a refused, reset or timed-out
    connection or a temporary name-resolution failure is; an unknown host, a missing file under a
    file:// base, a certificate that does not verify or a malformed URL is not."""
    if isinstance(error, urllib.error.URLError):
        error = error.reason
    if not isinstance(error, OSError):
        return isinstance(error, http.client.HTTPException)
    if isinstance(error, socket.gaierror):
        return error.errno == socket.EAI_AGAIN
    if isinstance(
        error, (FileNotFoundError, PermissionError, IsADirectoryError, ssl.SSLCertVerificationError)
    ):
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


class _PastSize(Exception):
    """The body holds more than the raw file's pinned size; ``outcome`` says what was written."""

    def __init__(self, outcome: str):
        super().__init__(outcome)
        self.outcome = outcome


def _attempt(
    url: str,
    path: Path,
    timeout_s: float,
    deadline: float,
    progress: ProgressCallback | None,
    limit: int | None = None,
) -> tuple[str, int]:
    """One GET of ``url`` into ``path`` (truncated first), ended by a watchdog at ``deadline``
    (:func:`time.monotonic`) and before the first byte past ``limit``; (sha256, bytes) or
    _Transient / _Final / _PastDeadline / _PastSize."""
    state: dict[str, Any] = {"n_bytes": 0, "total": None}
    remaining_s = deadline - time.monotonic()
    with _Watchdog(remaining_s) as watchdog:
        try:
            # a silence longer than what is left of the deadline is the deadline too
            return _get(
                url,
                path,
                min(timeout_s, max(remaining_s, 0.001)),
                timeout_s,
                watchdog,
                progress,
                state,
                limit,
            )
        except (_Transient, urllib.error.URLError, *_NETWORK_ERRORS):
            if watchdog.fired or time.monotonic() >= deadline:
                raise _PastDeadline(state["n_bytes"], state["total"]) from None
            raise


def _get(
    url: str,
    path: Path,
    socket_timeout_s: float,
    timeout_s: float,
    watchdog: _Watchdog,
    progress: ProgressCallback | None,
    state: dict,
    limit: int | None = None,
) -> tuple[str, int]:
    opener = urllib.request.build_opener(
        _WatchedHTTPHandler(watchdog), _WatchedHTTPSHandler(watchdog)
    )
    try:
        response = opener.open(url, timeout=socket_timeout_s)
    except urllib.error.HTTPError as exc:
        exc.close()
        reason = f"HTTP {exc.code} {exc.reason}"
        raise (_Transient if exc.code in TRANSIENT_HTTP_STATUSES else _Final)(
            reason, exc.code
        ) from exc
    except (urllib.error.URLError, *_NETWORK_ERRORS) as exc:
        if watchdog.fired:
            raise
        kind = _Transient if _is_transient(exc) else _Final
        raise kind(_network_reason(exc, timeout_s)) from exc
    with response:
        declared = response.headers.get("Content-Length")
        total = int(declared) if declared and declared.strip().isdigit() else None
        state["total"] = total
        with open(path, "wb") as handle:
            sink = HashingWriter(handle)

            def counted(done: int, of: int | None) -> None:
                state["n_bytes"] = done
                if progress is not None:
                    progress(done, of)

            try:
                # read1: whatever has arrived, so that a failure reports the bytes really received
                pump(
                    response,
                    sink,
                    _NETWORK_ERRORS,
                    counted,
                    total,
                    read=getattr(response, "read1", None),
                    limit=limit,
                )
            except OverLimit:
                raise _PastSize(discarded(sink)) from None
            except ReadFailed as exc:
                of = f" of the {total} announced" if total is not None else ""
                raise _Transient(
                    f"{_network_reason(exc.error, timeout_s)} after {sink.n_bytes} bytes{of}"
                ) from exc.error
    # the watchdog's shutdown looks like the end of the body to http.client
    if watchdog.fired and (total is None or sink.n_bytes != total):
        raise _PastDeadline(sink.n_bytes, total)
    # http.client stops quietly at a closed connection: compare with the announced length.
    if total is not None and sink.n_bytes != total:
        raise _Transient(
            f"the server announced Content-Length {total} but sent {sink.n_bytes} bytes"
        )
    return sink.hexdigest(), sink.n_bytes


def download_with_retries(
    raw_file: RawFile,
    path: Path,
    dest_dir: Path,
    options: DownloadOptions,
    progress: ProgressCallback | None,
) -> tuple[str, int, int]:
    """Download ``raw_file.url`` (after ``download_base``) into ``path`` with retries, all within
    ``options.deadline_s``; (sha256, bytes, attempts made) or :class:`DownloadError`. A download
    that is the stored file itself (no archive member, no compression) stops before the first
    byte past the raw file's pinned size (:class:`~rejectopt.exceptions.UnpackLimitError`,
    not retried)."""
    url = options.url_for(raw_file.url)
    official = "" if url == raw_file.url else f" (official URL {raw_file.url})"
    attempts = options.retries + 1
    limit = None if raw_file.archive_member or raw_file.compression else raw_file.size
    deadline = time.monotonic() + options.deadline_s
    last: _Transient | None = None

    def past_deadline(attempt: int, where: str) -> DownloadError:
        return DownloadError(
            f"{raw_file.name}: download of {url}{official} stopped at its deadline of {options.deadline_s:g} s "
            f"(download_deadline_s={options.deadline_s:g}; attempt {attempt} of {attempts}, {where}): "
            f"the server sends too slowly or never ends. Nothing was kept in "
            f"{dest_dir}. If the server is only slow, raise download_deadline_s. {MIRROR_HINT}",
            url=url,
            status=None,
            attempts=attempt,
        )

    for attempt in range(1, attempts + 1):
        try:
            sha256, n_bytes = _attempt(url, path, options.timeout_s, deadline, progress, limit)
        except _PastSize as exc:
            raise size_limit_error(
                raw_file.name,
                f"the download of {url}{official}",
                cast(int, limit),  # only a pinned size sets a limit
                _download_hint(raw_file, url),
                exc.outcome,
            ) from None
        except _PastDeadline as exc:
            of = f" of the {exc.total} announced" if exc.total is not None else ""
            raise past_deadline(attempt, f"{exc.n_bytes} bytes{of} received") from None
        except _Final as exc:
            raise DownloadError(
                f"{raw_file.name}: cannot download {url}{official}: {exc.reason}; not retried "
                f"(attempt {attempt} of {attempts}, download_retries={options.retries}: only dropped or refused "
                f"connections, timeouts, short bodies and HTTP {'/'.join(map(str, sorted(TRANSIENT_HTTP_STATUSES)))} "
                f"are retried). Nothing was kept in {dest_dir}. {MIRROR_HINT}",
                url=url,
                status=exc.status,
                attempts=attempt,
            ) from exc
        except _Transient as exc:
            last = exc
            if attempt < attempts:
                delay = options.delay(attempt)
                if time.monotonic() + delay >= deadline:
                    raise past_deadline(
                        attempt,
                        f"the wait of {delay:g} s before a retry would pass it; last "
                        f"error: {exc.reason}",
                    ) from exc
                logger.warning(
                    "%s: attempt %d of %d failed (%s: %s); retrying in %g s",
                    raw_file.name,
                    attempt,
                    attempts,
                    url,
                    exc.reason,
                    delay,
                )
                _sleep(delay)
            continue
        if attempt > 1:
            logger.info("%s: downloaded on attempt %d of %d", raw_file.name, attempt, attempts)
        return sha256, n_bytes, attempt
    last = cast(_Transient, last)  # every attempt failed transiently, else it returned or raised
    raise DownloadError(
        f"{raw_file.name}: download of {url}{official} failed after {attempts} attempts "
        f"(download_retries={options.retries}); last error: {last.reason}. Nothing was kept in "
        f"{dest_dir}. {MIRROR_HINT}",
        url=url,
        status=last.status,
        attempts=attempts,
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


def write_from_url(
    raw_file: RawFile, dest_dir: Path, out_path: Path, options: DownloadOptions, progress
) -> tuple[str, int, int]:
    """Download ``raw_file`` into ``out_path``, extracting its member / decompressing it;
    (sha256 of ``out_path``, its bytes, download attempts)."""
    url = options.url_for(raw_file.url)
    callback = _logging_progress(url) if progress is True else (progress or None)
    needs_unpacking = bool(raw_file.archive_member or raw_file.compression)
    logger.info("%s: downloading %s", raw_file.name, url)
    if not needs_unpacking and raw_file.download_sha256 is None:
        return download_with_retries(raw_file, out_path, dest_dir, options, callback)
    with _scratch_path(dest_dir, raw_file.name + ".download") as tmp_path:
        download_sha256, n_bytes, attempts = download_with_retries(
            raw_file, tmp_path, dest_dir, options, callback
        )
        verify_sha256(
            f"{url} (the download of {raw_file.name}; {attempts_note(attempts)})",
            raw_file.download_sha256,
            download_sha256,
            "the download",
        )
        with open(out_path, "wb") as handle:
            sink = HashingWriter(handle)
            if raw_file.archive_member:
                extract_member(
                    raw_file,
                    tmp_path,
                    url,
                    n_bytes,
                    sink,
                    _download_hint(raw_file, url),
                    options.max_ratio,
                )
            else:
                decompress_into(
                    tmp_path,
                    raw_file.compression,
                    sink,
                    raw_file.name,
                    f"the download of {url} ({n_bytes} bytes)",
                    _download_hint(raw_file, url),
                    options.max_ratio,
                    raw_file.size,
                )
        return sink.hexdigest(), sink.n_bytes, attempts


def attempts_note(attempts: int) -> str:
    """How many attempts a download took, for an error or log message."""
    return f"{attempts} download attempt{'s' if attempts > 1 else ''}; a checksum mismatch is not retried"


def _download_hint(raw_file: RawFile, url: str) -> str:
    return (
        f"Run again to download it anew; if this happens again the file served at {url} is damaged: "
        f"put an intact copy at <data_mirror>/{raw_file.dataset}/{raw_file.name}[.xz|.gz|.bz2] and set "
        "the `data_mirror` config option."
    )
