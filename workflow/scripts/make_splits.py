"""Rule make_splits: n_splits stratified Trn1/Val1/Trn2/Val2/Tst index sets, seeded.

Each split is checked (disjoint parts covering every row, the ratios per class) before the file
is written, and the file records the checksum of the data it was made from.
"""

from _logging import log_to

from rejectopt.datasets import load_prepared
from rejectopt.pipeline import npz_checksum
from rejectopt.splits import make_splits, save_splits

log_to(snakemake.log[0])
_, y = load_prepared(snakemake.input[0])
splits = make_splits(
    y,
    ratios=snakemake.params.ratios,
    n_splits=snakemake.params.n_splits,
    seed=snakemake.params.seed,
    dataset=snakemake.wildcards.dataset,
)
save_splits(
    snakemake.output[0],
    splits,
    y=y,
    ratios=snakemake.params.ratios,
    data_sha256=npz_checksum(snakemake.input[0]),
)
