"""Facial landmark detection with a reject option: 300-W, DLIB and learned scores (Section 5.2.3).

The structured-output experiment of [1] (Section 5.2.3, Fig. 4-5): the
classifier ``h(x)`` is DLIB's 68-point shape predictor (an ensemble of
regression trees, Kazemi & Sullivan 2014) placed in a box found by DLIB's HOG
frontal face detector; the loss is the normalised localisation error
``l(y, y') = 100 / iod(y) * sum_i ||l_i - l'_i||``; the baseline uncertainty
is the negated face-detector score; the learned uncertainties (SELE, REG) are
linear on ``psi(x)`` in R^2448, HOG descriptors (36 per landmark) around the
68 predicted landmarks.

Pipeline for one split (:func:`run_landmark_split`): detect once per face set
(:func:`load_or_detect_faces`), train the shape predictor on Trn1 and choose
its options on Val1 (:func:`train_shape_predictor`, :func:`predict_landmarks`;
the pipeline trains each option set as its own job, :func:`train_candidate_predictor`),
predict on Trn2 / Val2 / Tst, extract features (:func:`face_features`), learn
SELE and REG on Trn2 with C chosen on Val2, and report test losses and
uncertainties, plus a learning curve (Fig. 4b).

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

from ._faces import (
    N_LANDMARKS,
    N_FEATURES,
    OUTER_EYE_CORNERS,
    OFFICIAL_SOURCES,
    ARCHIVE_SUBSETS,
    MIRROR_SUBSETS,
    DEFAULT_RATIOS,
    DEFAULT_OPTIONS_GRID,
    DEFAULT_LEARNING_CURVE_SIZES,
    MISS_IOU_THRESHOLD,
    read_pts,
    list_faces,
    load_image,
    load_images,
    inter_ocular_distance,
    landmark_loss,
    per_landmark,
    archive_raw_file,
    fetch_archive,
    extract_archive,
)
from ._detect import (
    landmark_bbox,
    box_iou,
    fallback_box,
    detect_faces,
    load_or_detect_faces,
)
from ._predictor import (
    train_shape_predictor,
    pretrained_predictor_path,
    predict_landmarks,
)
from ._features import (
    hog_features,
    face_features,
)
from ._experiment import (
    load_split_inputs,
    choose_predictor_options,
    train_candidate_predictor,
    run_landmark_split,
    PRETRAINED_WARNING,
    select_faces,
    save_landmark_result,
    load_landmark_result,
    landmark_summary,
    learning_curve_table,
    landmarks_note,
)
from ._figures import (
    rc_figure,
    learning_curve_figure,
    faces_figure,
)

__all__ = [
    "N_LANDMARKS",
    "N_FEATURES",
    "OUTER_EYE_CORNERS",
    "OFFICIAL_SOURCES",
    "ARCHIVE_SUBSETS",
    "MIRROR_SUBSETS",
    "DEFAULT_RATIOS",
    "DEFAULT_OPTIONS_GRID",
    "DEFAULT_LEARNING_CURVE_SIZES",
    "MISS_IOU_THRESHOLD",
    "read_pts",
    "list_faces",
    "load_image",
    "load_images",
    "landmark_bbox",
    "inter_ocular_distance",
    "landmark_loss",
    "per_landmark",
    "box_iou",
    "fallback_box",
    "detect_faces",
    "load_or_detect_faces",
    "train_shape_predictor",
    "pretrained_predictor_path",
    "predict_landmarks",
    "hog_features",
    "face_features",
    "archive_raw_file",
    "fetch_archive",
    "extract_archive",
    "load_split_inputs",
    "choose_predictor_options",
    "train_candidate_predictor",
    "run_landmark_split",
    "PRETRAINED_WARNING",
    "select_faces",
    "save_landmark_result",
    "load_landmark_result",
    "landmark_summary",
    "learning_curve_table",
    "landmarks_note",
    "rc_figure",
    "learning_curve_figure",
    "faces_figure",
]
