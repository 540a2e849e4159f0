"""Rule double_hinge_split: the double-hinge experiment on every split of one dataset
(rejectopt.double_hinge_experiment.double_hinge_splits_files).

The rule's params other than ``splits`` are the library call's keyword arguments.
"""

from threadpoolctl import threadpool_limits

from _logging import log_to

from rejectopt.double_hinge_experiment import double_hinge_splits_files

log_to(snakemake.log[0])
inputs = dict(snakemake.input.items())  # none for breast cancer, built from scikit-learn in the job
params = dict(snakemake.params.items())
outputs = zip(snakemake.output.csv, snakemake.output.curves, snakemake.output.timing)
with threadpool_limits(limits=snakemake.threads):
    double_hinge_splits_files(
        inputs.get("data"),
        inputs.get("splits"),
        dict(zip(map(int, params.pop("splits")), outputs)),
        dataset=snakemake.wildcards.dataset,
        **params,
    )
