"""Rule train_predictor: one shape predictor of the option grid on one split, trained on Trn1, with its Val1 error.

dlib's trainer threads (``trainer_threads``) are a fixed parameter, as the trained model depends on them.
"""

import json

from _logging import log_to

from rejectopt.landmarks import load_split_inputs, train_candidate_predictor
from rejectopt._io import write_text

log_to(snakemake.log[0])
params = snakemake.params
faces, detections, split_indices, seed = load_split_inputs(
    params.faces, snakemake.input.detections, snakemake.input.splits, int(snakemake.wildcards.split), params.seed
)
option = int(snakemake.wildcards.option)
options = dict(params.options_grid[option])
_, error = train_candidate_predictor(faces, detections, split_indices, options,
                                     threads=params.trainer_threads, seed=seed, path=snakemake.output.model)
write_text(json.dumps({"option": option, "options": options, "val1_error": error}, sort_keys=True) + "\n",
           snakemake.output.error)
