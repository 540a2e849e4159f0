"""What fetching a raw file raises: one hierarchy, so that a caller catches a missing source,
a failed download and damaged bytes alike (:class:`DataSourceError`) or tells them apart."""

from __future__ import annotations

__all__ = ["ChecksumError", "DataSourceError", "DecompressionError", "DownloadError", "UnpackLimitError"]


class ChecksumError(ValueError):
    """A fetched file's sha256 differs from the pinned or locked one.

    Examples
    --------
    Damaged bytes are a value error, not a missing source, so a caller can tell them apart:

    >>> from rejectopt.datasets import ChecksumError, DataSourceError
    >>> issubclass(ChecksumError, ValueError), issubclass(ChecksumError, DataSourceError)
    (True, False)
    """


class DataSourceError(OSError):
    """A raw file could be found neither in the mirror nor at its URL.

    Examples
    --------
    A failed download is a data-source error too, and both are ``OSError``:

    >>> from rejectopt.datasets import DataSourceError, DownloadError
    >>> [issubclass(error, OSError) for error in (DataSourceError, DownloadError)]
    [True, True]
    """


class DownloadError(DataSourceError):
    """A download failed for good (HTTP status not worth retrying, or every retry failed).

    Parameters
    ----------
    message : str
        What failed, naming the file, the URL and the attempts; ``str()`` of the error.
    url, status, attempts
        The attributes below.

    Attributes
    ----------
    url : str
        The URL requested (after ``download_base``).
    status : int or None
        The last HTTP status, None if no HTTP answer came (connection, timeout, short body).
    attempts : int
        Requests made.

    Examples
    --------
    >>> from rejectopt.datasets import DownloadError
    >>> error = DownloadError("toy.csv: HTTP 404", url="https://example.org/toy.csv", status=404)
    >>> str(error), error.status, error.attempts
    ('toy.csv: HTTP 404', 404, 1)
    """

    def __init__(self, message: str, url: str = "", status: int | None = None, attempts: int = 1):
        super().__init__(message)
        self.url, self.status, self.attempts = url, status, attempts

    def __str__(self) -> str:
        return str(self.args[0])


class DecompressionError(DataSourceError):
    """A compressed file or archive (mirror copy or download) is corrupt or truncated."""


class UnpackLimitError(DecompressionError):
    """A raw file holds more than the size the registry pins for it (a plain copy is refused before
    it is copied), or, without a pinned size, a compressed file or archive expands past its cap
    (``unpack_max_ratio`` times its compressed size, at least
    :data:`~rejectopt.datasets._decompress.MIN_UNPACK_CAP_BYTES`): a decompression bomb, another
    file, or one that compresses unusually well. Copying or decompression stopped at the limit.

    Parameters
    ----------
    message : str
        What expanded too far, the limit and what to do; ``str()`` of the error.
    limit : int or None
        The limit in bytes (the pinned size, or the cap).

    Attributes
    ----------
    limit : int or None
        The limit in bytes (the pinned size, or the cap).
    """

    def __init__(self, message: str, limit: int | None = None):
        super().__init__(message)
        self.limit = limit

    def __str__(self) -> str:
        return str(self.args[0])
