"""The 22 benchmark datasets of the paper's Table 2 (registry, verified fetching, parsing), users' own,
and the 300-W faces of the landmark experiment.

Typical use::

    from rejectopt.datasets import prepare_dataset, load_prepared
    info = prepare_dataset("letter", "results/raw", "results/data/letter.npz", mirror=None)
    X, y = load_prepared("results/data/letter.npz")

One module per concept: ``_registry`` (the datasets and their raw files), ``_fetch`` (a raw file
from the data mirror or its URL), ``_download`` (HTTP with retries, backoff, timeouts,
``download_base``), ``_trust`` (sha256 pinned or recorded in ``checksums.lock``),
``_decompress`` (xz, gzip, bzip2, unix compress), ``_archive`` (a member of a zip / tar, a tar
extracted safely), ``_stream`` (chunked, hashed copies), ``_errors``, ``_parsers`` / ``_prepare``
(raw files to verified arrays), ``_custom`` (a user's file), ``_faces300w`` (the 300-W faces:
layouts, ``.pts`` annotations, the official archive).
"""

from ._archive import extract_archive
from ._download import DownloadOptions
from ._errors import ChecksumError, DataSourceError, DecompressionError, DownloadError, UnpackLimitError
from ._fetch import fetch_file
from ._trust import LOCK_FILE_NAME, read_lock, sha256_of_file
from ._custom import (
    CustomDataset,
    CustomDatasetError,
    check_custom,
    custom_checksums,
    custom_dataset,
    load_custom,
    peek_custom,
    prepare_custom,
)
from ._parsers import encode_labels, equal_frequency_bins
from ._prepare import available_in_mirror, dataset_checksums, fingerprint, load_prepared, parse_raw, prepare_dataset
from ._registry import CLASSIFICATION, ORDINAL, REGISTRY, DatasetSpec, RawFile, get_spec
from ._faces300w import (
    ARCHIVE_SUBSETS,
    ARCHIVE_TOP_FOLDER,
    MIRROR_SUBSETS,
    N_LANDMARKS,
    OFFICIAL_SOURCES,
    archive_raw_file,
    check_archive_layout,
    extract_official_archive,
    fetch_archive,
    list_faces,
    read_pts,
)

__all__ = [
    "ARCHIVE_SUBSETS",
    "ARCHIVE_TOP_FOLDER",
    "CLASSIFICATION",
    "LOCK_FILE_NAME",
    "MIRROR_SUBSETS",
    "N_LANDMARKS",
    "OFFICIAL_SOURCES",
    "ORDINAL",
    "REGISTRY",
    "ChecksumError",
    "CustomDataset",
    "CustomDatasetError",
    "check_custom",
    "custom_checksums",
    "custom_dataset",
    "load_custom",
    "peek_custom",
    "prepare_custom",
    "DataSourceError",
    "DatasetSpec",
    "DecompressionError",
    "UnpackLimitError",
    "DownloadError",
    "DownloadOptions",
    "RawFile",
    "archive_raw_file",
    "available_in_mirror",
    "check_archive_layout",
    "dataset_checksums",
    "encode_labels",
    "equal_frequency_bins",
    "extract_archive",
    "extract_official_archive",
    "fetch_archive",
    "fetch_file",
    "fingerprint",
    "get_spec",
    "list_faces",
    "load_prepared",
    "parse_raw",
    "prepare_dataset",
    "read_lock",
    "read_pts",
    "sha256_of_file",
]
