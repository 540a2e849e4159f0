"""Rule ood_split: the OOD benchmark on every split of one dataset (rejectopt.ood.run_ood_split)."""

from threadpoolctl import threadpool_limits

from _logging import log_to

from rejectopt.ood import ood_split_files

log_to(snakemake.log[0])
with threadpool_limits(limits=snakemake.threads):
    for split, csv, curves in zip(snakemake.params.splits, snakemake.output.csv, snakemake.output.curves):
        ood_split_files(
            snakemake.input.data,
            snakemake.input.splits,
            int(split),
            csv,
            curves,
            dataset=snakemake.wildcards.dataset,
            settings=snakemake.params.settings,
            C_classifier=snakemake.params.C_classifier,
            C_score=snakemake.params.C_score,
            sele_chunk_size=snakemake.params.sele_chunk_size,
            seed=snakemake.params.seed,
            threads=snakemake.threads,
        )
