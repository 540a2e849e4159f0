"""Rule detect_faces: DLIB's HOG face detector once per face (box and score, the baseline uncertainty)."""

from _logging import log_to

from rejectopt.pipeline import load_or_detect_faces
from rejectopt.pipeline.experiments.landmarks import select_faces

log_to(snakemake.log[0])
faces = select_faces(**snakemake.params.faces)
# The output path doubles as the cache: Snakemake removed any stale file, so this always detects.
# The faces are split over the job's threads (worker processes); the result does not depend on them.
load_or_detect_faces(faces, snakemake.output[0], upsample=1, n_jobs=snakemake.threads)
