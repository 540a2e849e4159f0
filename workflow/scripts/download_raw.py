"""Rule download_raw: fetch one raw file (official URL or data_mirror), verify its sha256.

A file with a pinned sha256 is verified here. A file without one is written but stays
pending: prepare_dataset records its hash in checksums.lock only once the dataset parsed
and passed validation. The download settings (download_base, download_retries,
download_backoff_s, download_timeout_s, download_deadline_s, unpack_max_ratio) and the
source (data_mirror) are read from the config, not passed as params: they say where the bytes
come from, how they travel and how far they may expand, not what they are (the sha256 says
that), so changing them must not make Snakemake delete verified files and fetch them again.
"""

from pathlib import Path

from _logging import log_to

from rejectopt.datasets import get_spec
from rejectopt.pipeline import DownloadOptions, fetch_file

log_to(snakemake.log[0])
spec = get_spec(snakemake.wildcards.dataset)
raw_file = next(f for f in spec.files if f.name == snakemake.wildcards.filename)
mirror = snakemake.config.get("data_mirror")
# With a mirror, never fall back to the network: a missing file is an error naming the mirror.
fetch_file(
    raw_file,
    Path(snakemake.output[0]).parent,
    mirror=mirror,
    allow_download=mirror is None,
    download=DownloadOptions.from_config(snakemake.config),
    record_lock=False,
)
