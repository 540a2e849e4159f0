"""Rule prepare_dataset: parse the verified raw files (or a custom dataset's file) into X and y."""

from _logging import log_to

from rejectopt.datasets import prepare_custom, prepare_dataset

log_to(snakemake.log[0])
if snakemake.params.custom is not None:
    prepare_custom(snakemake.params.custom, snakemake.output[0])
else:
    # The raw files are already fetched and verified by download_raw; this re-verifies, then parses.
    prepare_dataset(snakemake.wildcards.dataset, snakemake.params.raw_dir, snakemake.output[0], allow_download=False)
