"""Rule make_face_splits: n_splits Trn1/Val1/Trn2/Val2/Tst splits of the faces, stratified by subset, seeded."""

from _logging import log_to

from rejectopt.landmarks import select_faces
from rejectopt.splits import make_splits, save_splits

log_to(snakemake.log[0])
faces = select_faces(**snakemake.params.faces)
splits = make_splits(
    faces["subset"].to_numpy(),
    ratios=snakemake.params.ratios,
    n_splits=snakemake.params.n_splits,
    seed=snakemake.params.seed,
    dataset="300w",
)
save_splits(snakemake.output[0], splits)
