"""Rule train_landmarks: one split of the landmark experiment (shape predictor, SELE / REG, learning curve)."""

import numpy as np
from threadpoolctl import threadpool_limits

from _logging import log_to

from rejectopt.landmarks import run_landmark_split, save_landmark_result, select_faces
from rejectopt._io import write_csv
from rejectopt.splits import derive_seed, load_split

log_to(snakemake.log[0])
split = int(snakemake.wildcards.split)
faces = select_faces(**snakemake.params.faces)
with np.load(snakemake.input.detections, allow_pickle=False) as data:
    detections = {key: data[key] for key in data.files}
if detections["name"].tolist() != faces["name"].tolist():
    raise ValueError(f"{snakemake.input.detections} does not match the face list; rerun detect_faces")
with threadpool_limits(limits=snakemake.threads):
    result = run_landmark_split(
        faces,
        detections,
        load_split(snakemake.input.splits, split),
        options_grid=[dict(options) for options in snakemake.params.options_grid],
        C_grid=snakemake.params.C_grid,
        threads=snakemake.threads,
        seed=derive_seed(snakemake.params.seed, "300w", "landmarks", split),
        learning_curve_sizes=snakemake.params.learning_curve_sizes,
        with_coordinates=snakemake.params.with_coordinates,
        pretrained=snakemake.params.pretrained,
    )
write_csv(result["learning_curve"], snakemake.output.curve)
save_landmark_result(snakemake.output.result, result)
