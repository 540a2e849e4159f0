"""Rule summarize_landmarks: the 300-W rows of the summary (per-landmark AuRC, R@100) and a note."""

import pandas as pd

from _logging import log_to

from rejectopt.landmarks import landmark_summary, landmarks_note, load_landmark_result, select_faces
from rejectopt._io import write_csv, write_text

log_to(snakemake.log[0])
splits = snakemake.params.splits
results = {k: load_landmark_result(path) for k, path in zip(splits, snakemake.input.results)}
curves = {k: pd.read_csv(path) for k, path in zip(splits, snakemake.input.curves)}
summary = landmark_summary(results)
n_faces = len(select_faces(**snakemake.params.faces))
write_csv(summary, snakemake.output.summary)
write_text(landmarks_note(summary, curves, results, n_faces, snakemake.params.pretrained), snakemake.output.note)
