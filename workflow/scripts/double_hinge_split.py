"""Rules double_hinge_split (every split of one dataset) and double_hinge_one_split (one split of a
costly dataset): the double-hinge experiment (rejectopt.pipeline.experiments.double_hinge.run_dataset_files).

The rule's params other than ``splits`` are the library call's keyword arguments; its input ``lr``
(where given) holds the staged LR classifier file of each split, in the order of ``splits``.
"""

from _logging import log_to
from threadpoolctl import threadpool_limits

from rejectopt.pipeline.experiments.double_hinge import STAGED_LR, run_dataset_files

log_to(snakemake.log[0])
inputs = dict(snakemake.input.items())  # none for breast cancer, built from scikit-learn in the job
params = dict(snakemake.params.items())
splits = list(map(int, params.pop("splits")))


def as_list(files):
    """A named input or output as a list: one file (the one-split rule's) comes as a plain string."""
    return [files] if isinstance(files, str) else list(files)


outputs = zip(*(as_list(snakemake.output[name]) for name in ("csv", "curves", "timing")))
staged = {k: {STAGED_LR: path} for k, path in zip(splits, as_list(inputs.get("lr", [])))}
with threadpool_limits(limits=snakemake.threads):
    run_dataset_files(
        inputs.get("data"),
        inputs.get("splits"),
        dict(zip(splits, outputs)),
        dataset=snakemake.wildcards.dataset,
        staged=staged,
        **params,
    )
