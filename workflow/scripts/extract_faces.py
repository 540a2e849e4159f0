"""Rule extract_faces: safely extract the official 300-W archive, all or nothing.

Members escaping the folder, links pointing outside and device files are refused; the
faces' layout is checked; only then is the archive's sha256 recorded in checksums.lock.
A refused archive is moved aside to <name>.rejected.
"""

from _logging import log_to

from rejectopt.pipeline import extract_official_archive

log_to(snakemake.log[0])
extract_official_archive(snakemake.input[0], snakemake.output[0])
