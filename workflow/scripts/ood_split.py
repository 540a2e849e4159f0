"""Rule ood_split: the OOD benchmark on every split of one dataset
(rejectopt.pipeline.experiments.ood.run_dataset_files).

The rule's params other than ``splits`` are the library call's keyword arguments.
"""

from _logging import log_to
from threadpoolctl import threadpool_limits

from rejectopt.pipeline.experiments.ood import run_dataset_files

log_to(snakemake.log[0])
params = dict(snakemake.params.items())
outputs = zip(snakemake.output.csv, snakemake.output.curves)
with threadpool_limits(limits=snakemake.threads):
    run_dataset_files(
        snakemake.input.data,
        snakemake.input.splits,
        dict(zip(map(int, params.pop("splits")), outputs)),
        dataset=snakemake.wildcards.dataset,
        threads=snakemake.threads,
        **params,
    )
