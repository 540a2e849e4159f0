"""The 22 benchmark datasets of the paper's Table 2 (registry, verified fetching, parsing) and users' own.

Typical use::

    from rejectopt.datasets import prepare_dataset, load_prepared
    info = prepare_dataset("letter", "results/raw", "results/data/letter.npz", mirror=None)
    X, y = load_prepared("results/data/letter.npz")

One module per concept: ``_registry`` (the datasets and their raw files), ``_fetch`` (a raw file
from the data mirror or its URL), ``_download`` (HTTP with retries, backoff, timeouts,
``download_base``), ``_trust`` (sha256 pinned or recorded in ``checksums.lock``),
``_decompress`` (xz, gzip, bzip2, unix compress), ``_archive`` (a member of a zip / tar, a tar
extracted safely), ``_stream`` (chunked, hashed copies), ``_parsers`` / ``_prepare``
(raw files to verified arrays), ``_custom`` (a user's file), ``_faces300w`` (the 300-W faces of
the landmark experiment: layouts, ``.pts`` annotations, the official archive). Their errors live in
:mod:`rejectopt.exceptions` with every other exception of the library. The pipeline
imports its steps (fetching, locking, the faces) from these modules directly.
"""

# the data sources' errors and CustomDatasetError stay importable from here (old import paths)
from ..exceptions import ChecksumError as ChecksumError
from ..exceptions import DataSourceError as DataSourceError
from ..exceptions import DownloadError as DownloadError
from ._custom import CustomDataset, load_custom, peek_custom
from ._custom import CustomDatasetError as CustomDatasetError
from ._prepare import load_prepared, prepare_dataset
from ._registry import REGISTRY, DatasetSpec, get_spec

__all__ = [
    "REGISTRY",
    "CustomDataset",
    "DatasetSpec",
    "get_spec",
    "load_custom",
    "load_prepared",
    "peek_custom",
    "prepare_dataset",
]


def __dir__():
    """The names of ``__all__``, not the private submodules and helpers the imports above add."""
    return list(__all__)
