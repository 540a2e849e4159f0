"""What fetching a raw file raises: one hierarchy, so that a caller catches a missing source,
a failed download and damaged bytes alike (:class:`DataSourceError`) or tells them apart."""

from __future__ import annotations

__all__ = ["ChecksumError", "DataSourceError", "DecompressionError", "DownloadError", "UnpackLimitError"]


class ChecksumError(ValueError):
    """A fetched file's sha256 differs from the pinned or locked one.

    Examples
    --------
    A mirror copy whose bytes differ from the pinned sha256 is refused, and nothing is written:

    >>> import tempfile
    >>> from pathlib import Path
    >>> from rejectopt.datasets import ChecksumError, RawFile, fetch_file
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     Path(tmp, "mirror", "toy").mkdir(parents=True)
    ...     _ = Path(tmp, "mirror", "toy", "toy.csv").write_text("1,2,a\\n3,4,b\\n")
    ...     pinned = RawFile("toy", "toy.csv", "https://example.org/toy.csv", sha256="0" * 64)
    ...     try:
    ...         fetch_file(pinned, Path(tmp, "raw"), mirror=Path(tmp, "mirror"))
    ...     except ChecksumError as error:
    ...         print(str(error).split(" (")[0], "| found", str(error).split("found ")[1][:12])
    ...     print(sorted(p.name for p in Path(tmp, "raw").iterdir()))
    checksum mismatch for toy.csv | found e1f1cc69e93b
    []
    """


class DataSourceError(OSError):
    """A raw file could be found neither in the mirror nor at its URL.

    Examples
    --------
    A file missing from the mirror, with downloading disabled:

    >>> import tempfile
    >>> from pathlib import Path
    >>> from rejectopt.datasets import DataSourceError, RawFile, fetch_file
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     Path(tmp, "mirror", "toy").mkdir(parents=True)
    ...     missing = RawFile("toy", "toy.csv", "https://example.org/toy.csv")
    ...     try:
    ...         fetch_file(missing, Path(tmp, "raw"), mirror=Path(tmp, "mirror"), allow_download=False)
    ...     except DataSourceError as error:
    ...         print(str(error).split(" (")[0])
    toy.csv not found in the data mirror

    Failed downloads and damaged archives are data-source errors too:

    >>> from rejectopt.datasets import DecompressionError, DownloadError
    >>> issubclass(DownloadError, DataSourceError), issubclass(DecompressionError, DataSourceError)
    (True, True)
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
    A ``download_base`` folder (a ``file://`` URL) that lacks the file: no HTTP answer, so no
    status, and a missing file is not retried:

    >>> import tempfile
    >>> from pathlib import Path
    >>> from rejectopt.datasets import DownloadError, DownloadOptions, RawFile, fetch_file
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     options = DownloadOptions(base=Path(tmp, "copy").as_uri() + "/", retries=0)
    ...     raw = RawFile("toy", "toy.csv", "https://example.org/toy.csv")
    ...     try:
    ...         fetch_file(raw, Path(tmp, "raw"), download=options, progress=False)
    ...     except DownloadError as error:
    ...         print(error.url.endswith("/copy/example.org/toy.csv"), error.status, error.attempts)
    True None 1
    """

    def __init__(self, message: str, url: str = "", status: int | None = None, attempts: int = 1):
        super().__init__(message)
        self.url, self.status, self.attempts = url, status, attempts

    def __str__(self) -> str:
        return str(self.args[0])


class DecompressionError(DataSourceError):
    """A compressed file or archive (mirror copy or download) is corrupt or truncated.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> from rejectopt.datasets import DecompressionError, RawFile, fetch_file
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     Path(tmp, "mirror", "toy").mkdir(parents=True)
    ...     _ = Path(tmp, "mirror", "toy", "toy.csv.xz").write_bytes(b"not xz data")
    ...     raw = RawFile("toy", "toy.csv", "https://example.org/toy.csv")
    ...     try:
    ...         fetch_file(raw, Path(tmp, "raw"), mirror=Path(tmp, "mirror"))
    ...     except DecompressionError as error:
    ...         print(str(error).split(" /")[0])
    toy.csv: cannot decompress the data_mirror copy
    """


class UnpackLimitError(DecompressionError):
    """A compressed file or archive expands past its cap (``unpack_max_ratio`` times its compressed
    size, at least :data:`~rejectopt.datasets._decompress.MIN_UNPACK_CAP_BYTES`): a decompression
    bomb, or a file that compresses unusually well. Decompression stopped at the cap.

    Parameters
    ----------
    message : str
        What expanded too far, the cap and the option that raises it; ``str()`` of the error.
    limit : int or None
        The cap in bytes.

    Attributes
    ----------
    limit : int or None
        The cap in bytes.

    Examples
    --------
    65 MiB of zeros, gzipped to 67 kB, expand past the 64 MiB floor of the cap:

    >>> import gzip, tempfile
    >>> from pathlib import Path
    >>> from rejectopt.datasets import RawFile, UnpackLimitError, fetch_file
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     Path(tmp, "mirror", "toy").mkdir(parents=True)
    ...     _ = Path(tmp, "mirror", "toy", "big.bin.gz").write_bytes(65 * gzip.compress(bytes(1 << 20)))
    ...     raw = RawFile("toy", "big.bin", "https://example.org/big.bin")
    ...     try:
    ...         fetch_file(raw, Path(tmp, "raw"), mirror=Path(tmp, "mirror"))
    ...     except UnpackLimitError as error:
    ...         print(error.limit == 64 << 20, list(Path(tmp, "raw").iterdir()))
    True []
    """

    def __init__(self, message: str, limit: int | None = None):
        super().__init__(message)
        self.limit = limit

    def __str__(self) -> str:
        return str(self.args[0])
