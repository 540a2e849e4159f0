"""Rule train_predictor: one shape predictor of the option grid on one split, trained on Trn1, with its Val1 error
(rejectopt.pipeline.experiments.landmarks.train_predictor_file).

The rule's params are the library call's keyword arguments; dlib's trainer threads (``trainer_threads``)
are a fixed parameter, as the trained model depends on them.
"""

from _logging import log_to

from rejectopt.pipeline.experiments.landmarks import train_predictor_file

log_to(snakemake.log[0])
train_predictor_file(
    snakemake.input.detections,
    snakemake.input.splits,
    int(snakemake.wildcards.split),
    int(snakemake.wildcards.option),
    snakemake.output.model,
    snakemake.output.error,
    **dict(snakemake.params.items()),
)
