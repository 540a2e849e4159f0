"""The 22 benchmark datasets of the paper's Table 2 (registry, verified fetching, parsing) and users' own.

Typical use::

    from rejectopt.datasets import prepare_dataset, load_prepared
    info = prepare_dataset("letter", "results/raw", "results/data/letter.npz", mirror=None)
    X, y = load_prepared("results/data/letter.npz")
"""

from ._fetch import (
    LOCK_FILE_NAME,
    ChecksumError,
    DataSourceError,
    fetch_file,
    read_lock,
    sha256_of_file,
)
from ._custom import (
    CustomDataset,
    CustomDatasetError,
    check_custom,
    custom_checksums,
    custom_dataset,
    load_custom,
    prepare_custom,
)
from ._parsers import encode_labels, equal_frequency_bins
from ._prepare import available_in_mirror, dataset_checksums, fingerprint, load_prepared, parse_raw, prepare_dataset
from ._registry import CLASSIFICATION, ORDINAL, REGISTRY, DatasetSpec, RawFile, get_spec

__all__ = [
    "CLASSIFICATION",
    "LOCK_FILE_NAME",
    "ORDINAL",
    "REGISTRY",
    "ChecksumError",
    "CustomDataset",
    "CustomDatasetError",
    "check_custom",
    "custom_checksums",
    "custom_dataset",
    "load_custom",
    "prepare_custom",
    "DataSourceError",
    "DatasetSpec",
    "RawFile",
    "available_in_mirror",
    "dataset_checksums",
    "encode_labels",
    "equal_frequency_bins",
    "fetch_file",
    "fingerprint",
    "get_spec",
    "load_prepared",
    "parse_raw",
    "prepare_dataset",
    "read_lock",
    "sha256_of_file",
]
