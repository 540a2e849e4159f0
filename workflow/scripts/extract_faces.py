"""Rule extract_faces: safely extract the official 300-W archive (members escaping the folder are refused)."""

from _logging import log_to

from rejectopt.landmarks import extract_archive

log_to(snakemake.log[0])
extract_archive(snakemake.input[0], snakemake.output[0])
