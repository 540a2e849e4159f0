"""Rule download_faces: the official 300-W archive from dlib.net.

Its sha256 is recorded in checksums.lock by extract_faces, once the archive extracted
safely with the official layout. Download settings (download_base, download_retries,
download_backoff_s, download_timeout_s, download_deadline_s) come from the config (see
download_raw.py).
"""

from pathlib import Path

from _logging import log_to

from rejectopt.pipeline import DownloadOptions, fetch_archive

log_to(snakemake.log[0])
fetch_archive(
    Path(snakemake.output[0]).parent,
    mirror=None,
    allow_download=True,
    download=DownloadOptions.from_config(snakemake.config),
    record_lock=False,
)
