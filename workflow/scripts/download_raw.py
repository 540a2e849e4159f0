"""Rule download_raw: fetch one raw file (official URL or data_mirror), verify its sha256."""

from pathlib import Path

from _logging import log_to

from rejectopt.datasets import fetch_file, get_spec

log_to(snakemake.log[0])
spec = get_spec(snakemake.wildcards.dataset)
raw_file = next(f for f in spec.files if f.name == snakemake.wildcards.filename)
mirror = snakemake.params.mirror
# With a mirror, never fall back to the network: a missing file is an error naming the mirror.
fetch_file(raw_file, Path(snakemake.output[0]).parent, mirror=mirror, allow_download=mirror is None)
