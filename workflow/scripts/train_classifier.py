"""Rule train_classifier: fit on Trn1, select C on Val1, save outputs on every example."""

from threadpoolctl import threadpool_limits

from _logging import log_to

from rejectopt.experiment import run_classifier

log_to(snakemake.log[0])
with threadpool_limits(limits=snakemake.threads):
    run_classifier(
        snakemake.input.data,
        snakemake.input.splits,
        split=int(snakemake.wildcards.split),
        kind=snakemake.wildcards.classifier,
        C_grid=snakemake.params.C_grid,
        seed=snakemake.params.seed,
        out_path=snakemake.output[0],
        dataset=snakemake.wildcards.dataset,
        threads=snakemake.threads,
    )
