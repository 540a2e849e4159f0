"""The Snakemake pipeline's own code: the built-in experiments, their tables and statistics, the
report, the configuration and the resource estimates. None of it is the library's API (the API
reference lists that); the workflow's rules and scripts import it from here.

Everything below loads on first use (``lazy_loader``), so that reading the configuration while
Snakemake plans imports neither the experiments nor matplotlib.
"""

import lazy_loader as _lazy

#: The library's inner helpers that the workflow's scripts use (``_surface``).
_SURFACE = [
    "CAP_MESSAGE",
    "DownloadOptions",
    "MIRROR_SUBSETS",
    "aggregate_files",
    "custom_checksums",
    "dataset_checksums",
    "extract_official_archive",
    "fetch_archive",
    "fetch_file",
    "load_experiments",
    "load_or_detect_faces",
    "npz_checksum",
    "prepare_custom",
    "run_dataset",
    "run_rule",
    "save_csv",
    "save_figure",
    "write_csv",
    "write_text",
]
_SUBMODULES = ["config", "experiments", "report", "resources", "tables"]

__getattr__, _, _ = _lazy.attach(
    __name__, submodules=_SUBMODULES, submod_attrs={"_surface": _SURFACE}
)

__all__ = sorted(_SUBMODULES + _SURFACE)


def __dir__():
    """The names of ``__all__``: lazy_loader's own lists only what it loads, not the surface."""
    return list(__all__)
