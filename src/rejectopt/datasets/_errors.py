"""What fetching a raw file raises: one hierarchy, so that a caller catches a missing source,
a failed download and damaged bytes alike (:class:`DataSourceError`) or tells them apart."""

from __future__ import annotations

__all__ = ["ChecksumError", "DataSourceError", "DecompressionError", "DownloadError", "UnpackLimitError"]


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


class UnpackLimitError(DecompressionError):
    """A compressed file or archive expands past its cap (``unpack_max_ratio`` times its compressed
    size, at least :data:`~rejectopt.datasets._decompress.MIN_UNPACK_CAP_BYTES`): a decompression
    bomb, or a file that compresses unusually well. Decompression stopped at the cap.

    Attributes
    ----------
    limit : int or None
        The cap in bytes.
    """

    def __init__(self, message: str, limit: int | None = None):
        super().__init__(message)
        self.limit = limit

    def __str__(self) -> str:
        return str(self.args[0])
