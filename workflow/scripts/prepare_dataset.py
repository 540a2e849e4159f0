"""Rule prepare_dataset: parse the verified raw files (or a custom dataset's file) into X and y.

The arrays are validated before data.npz is written; only then are the hashes of raw files
without a pinned sha256 recorded in checksums.lock (a file that fails is moved aside to
<name>.rejected and never trusted).
"""

from _logging import log_to

from rejectopt.datasets import prepare_dataset
from rejectopt.pipeline import prepare_custom

log_to(snakemake.log[0])
if snakemake.params.custom is not None:
    # the content is checked here, not at planning time (a dry run never parses a data file), with
    # the models' bound on feature values (rejectopt.model imports scikit-learn: custom datasets only)
    from rejectopt.model import FEATURE_LIMIT

    prepare_custom(snakemake.params.custom, snakemake.output[0], feature_limit=FEATURE_LIMIT)
else:
    # The raw files are already fetched by download_raw; this re-verifies, parses and validates.
    prepare_dataset(
        snakemake.wildcards.dataset,
        snakemake.params.raw_dir,
        snakemake.output[0],
        allow_download=False,
    )
