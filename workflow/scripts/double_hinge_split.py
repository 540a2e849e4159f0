"""Rule double_hinge_split: the double-hinge experiment on every split of one dataset
(rejectopt.experiments.double_hinge.run_dataset_files).

The rule's params other than ``splits`` are the library call's keyword arguments; its input ``lr``
(where given) holds the staged LR classifier file of each split, in the order of ``splits``.
"""

from threadpoolctl import threadpool_limits

from _logging import log_to

from rejectopt.experiments.double_hinge import STAGED_LR, run_dataset_files

log_to(snakemake.log[0])
inputs = dict(snakemake.input.items())  # none for breast cancer, built from scikit-learn in the job
params = dict(snakemake.params.items())
splits = list(map(int, params.pop("splits")))
outputs = zip(snakemake.output.csv, snakemake.output.curves, snakemake.output.timing)
staged = {k: {STAGED_LR: path} for k, path in zip(splits, inputs.get("lr", []))}
with threadpool_limits(limits=snakemake.threads):
    run_dataset_files(
        inputs.get("data"),
        inputs.get("splits"),
        dict(zip(splits, outputs)),
        dataset=snakemake.wildcards.dataset,
        staged=staged,
        **params,
    )
