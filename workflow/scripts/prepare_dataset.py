"""Rule prepare_dataset: parse the verified raw files into X (float64) and y (int), fingerprinted."""

from _logging import log_to

from rejectopt.datasets import prepare_dataset

log_to(snakemake.log[0])
# The raw files are already fetched and verified by download_raw; this re-verifies, then parses.
prepare_dataset(snakemake.wildcards.dataset, snakemake.params.raw_dir, snakemake.output[0], allow_download=False)
