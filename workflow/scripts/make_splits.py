"""Rule make_splits: n_splits stratified Trn1/Val1/Trn2/Val2/Tst index sets, seeded."""

from _logging import log_to

from rejectopt.datasets import load_prepared
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
save_splits(snakemake.output[0], splits)
