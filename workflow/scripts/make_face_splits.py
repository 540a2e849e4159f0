"""Rule make_face_splits: n_splits Trn1/Val1/Trn2/Val2/Tst splits of the faces, stratified by subset, seeded
(rejectopt.pipeline.experiments.landmarks.face_splits_file; the rule's params are its keyword arguments)."""

from _logging import log_to

from rejectopt.pipeline.experiments.landmarks import face_splits_file

log_to(snakemake.log[0])
face_splits_file(snakemake.output[0], **dict(snakemake.params.items()))
