"""Internal: the pipeline's landmark experiment; not part of the public API (see
:mod:`rejectopt.pipeline.experiments` for the experiment contract).

Facial landmarks with a reject option on 300-W (Section 5.2.3, Fig. 4-5 of [1]).

``h(x)`` is DLIB's 68-point shape predictor (regression-tree ensemble [3]) in the box of DLIB's
HOG face detector; the loss is ``l(y, y') = 100 / iod(y) * sum_i ||l_i - l'_i||``
(:func:`rejectopt.landmarks.landmark_loss`); the baseline uncertainty is the negated
face-detector score; the learned ones (:data:`LEARNED_SCORES`: SELE, REG) are linear on
``psi(x)`` in R^2448, 36 HOG values around each predicted landmark
(:func:`rejectopt.landmarks.face_features`). Faces: ``list_faces`` of :mod:`rejectopt.datasets`
(offline copy or official archive [2]).

One split (:func:`run_landmark_split`): shape predictor trained on Trn1, options chosen on Val1
(each option set its own job, :func:`train_candidate_predictor`); SELE and REG learned on Trn2,
C chosen on Val2; Tst losses, uncertainties and a learning curve (Fig. 4b).

Contract (:mod:`rejectopt.pipeline.experiments`): :data:`NAME`, :func:`settings`, :func:`run_split`,
:func:`aggregate`. The jobs call :func:`face_splits_file`, :func:`train_predictor_file`,
:func:`run_split_files` and :func:`summary_file`; rendering (Fig. 4a, 4b, 5) is
:mod:`rejectopt.pipeline.report.landmarks`'s.

References
----------
.. [1] V. Franc, D. Prusa, V. Voracek. Optimal Strategies for Reject Option
   Classifiers. JMLR 24(11):1-49, 2023.
.. [2] C. Sagonas, E. Antonakos, G. Tzimiropoulos, S. Zafeiriou, M. Pantic.
   300 faces in-the-wild challenge: database and results. Image and Vision
   Computing 47:3-18, 2016.
.. [3] V. Kazemi, J. Sullivan. One millisecond face alignment with an ensemble
   of regression trees. CVPR 2014.
"""

from __future__ import annotations

from ._files import (
    face_splits_file,
    load_landmark_result,
    run_rule,
    run_split_files,
    save_landmark_result,
    split_role,
    summary_file,
    train_predictor_file,
)
from ._setup import (
    DATASET,
    DEFAULT_LEARNING_CURVE_SIZES,
    DEFAULT_OPTIONS_GRID,
    DEFAULT_RATIOS,
    DEFAULTS,
    LEARNED_SCORES,
    METHODS,
    NAME,
    SCORE_JOBS,
    STAGED_DETECTIONS,
    SUMMARY_COLUMNS,
    TRAINER_THREADS,
    load_detections,
    load_split_inputs,
    select_faces,
    settings,
    split_seed,
)
from ._split import (
    LandmarkSplitResult,
    choose_predictor_options,
    run_landmark_split,
    run_split,
    train_candidate_predictor,
)
from ._tables import aggregate, landmark_summary, learning_curve_table

__all__ = [
    "NAME",
    "DATASET",
    "DEFAULTS",
    "DEFAULT_RATIOS",
    "DEFAULT_OPTIONS_GRID",
    "DEFAULT_LEARNING_CURVE_SIZES",
    "LEARNED_SCORES",
    "METHODS",
    "SCORE_JOBS",
    "STAGED_DETECTIONS",
    "SUMMARY_COLUMNS",
    "TRAINER_THREADS",
    "LandmarkSplitResult",
    "settings",
    "select_faces",
    "split_seed",
    "load_detections",
    "load_split_inputs",
    "choose_predictor_options",
    "train_candidate_predictor",
    "run_landmark_split",
    "run_split",
    "face_splits_file",
    "train_predictor_file",
    "run_rule",
    "run_split_files",
    "save_landmark_result",
    "load_landmark_result",
    "landmark_summary",
    "learning_curve_table",
    "aggregate",
    "summary_file",
    "split_role",
]


def __dir__():
    """The names of ``__all__``, not the private submodules the imports above add."""
    return list(__all__)
