"""Rule download_faces: the official 300-W archive from dlib.net (sha256 recorded on first fetch)."""

from pathlib import Path

from _logging import log_to

from rejectopt.landmarks import fetch_archive

log_to(snakemake.log[0])
fetch_archive(Path(snakemake.output[0]).parent, mirror=None, allow_download=True)
