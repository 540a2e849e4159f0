"""Rule ood_split: the OOD benchmark on every split of one dataset (rejectopt.ood.ood_splits_files)."""

from threadpoolctl import threadpool_limits

from _logging import log_to

from rejectopt.ood import ood_splits_files

log_to(snakemake.log[0])
outputs = zip(snakemake.output.csv, snakemake.output.curves)
with threadpool_limits(limits=snakemake.threads):
    ood_splits_files(
        snakemake.input.data,
        snakemake.input.splits,
        dict(zip(map(int, snakemake.params.splits), outputs)),
        dataset=snakemake.wildcards.dataset,
        settings=snakemake.params.settings,
        C_classifier=snakemake.params.C_classifier,
        C_score=snakemake.params.C_score,
        sele_chunk_size=snakemake.params.sele_chunk_size,
        seed=snakemake.params.seed,
        threads=snakemake.threads,
    )
