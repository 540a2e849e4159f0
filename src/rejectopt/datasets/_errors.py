"""What fetching a raw file raises: one hierarchy, so that a caller catches a missing source,
a failed download and damaged bytes alike (:class:`DataSourceError`) or tells them apart.

The classes live in :mod:`rejectopt.exceptions` with every other exception of the library; the
fetching modules import them from here.
"""

from __future__ import annotations

from ..exceptions import (
    ChecksumError,
    DataSourceError,
    DecompressionError,
    DownloadError,
    UnpackLimitError,
)

__all__ = [
    "ChecksumError",
    "DataSourceError",
    "DecompressionError",
    "DownloadError",
    "UnpackLimitError",
]
