"""Facial landmark detection for the reject option: DLIB's detector and shape predictor, the loss, psi(x).

The library of the structured-output experiment of [1] (Section 5.2.3, Fig. 4-5): DLIB's HOG
frontal face detector run once per face and matched to its annotation (:func:`detect_faces`,
:func:`load_or_detect_faces`), DLIB's 68-point shape predictor (an ensemble of regression trees,
Kazemi & Sullivan 2014 [3]) trained, loaded and applied in the detector's box
(:func:`train_shape_predictor`, :func:`load_predictor`, :func:`predict_landmarks`), the normalised
localisation error ``l(y, y') = 100 / iod(y) * sum_i ||l_i - l'_i||`` (:func:`landmark_loss`,
:func:`per_landmark`) and the feature map ``psi(x)`` in R^2448, HOG descriptors (36 per landmark)
around the 68 predicted landmarks (:func:`face_features`).

The 300-W faces (folders, ``.pts`` annotations, the official archive [2]) are a dataset,
:mod:`rejectopt.datasets`'; the experiment (one split, the summary) is
:mod:`rejectopt.experiments.landmarks`', its rendering (note, Fig. 4-5) :mod:`rejectopt.report.landmarks`'.

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
    OUTER_EYE_CORNERS,
    load_image,
    load_images,
    load_truths,
    inter_ocular_distance,
    landmark_loss,
    per_landmark,
)
from ._parallel import map_in_processes
from ._detect import (
    MISS_IOU_THRESHOLD,
    landmark_bbox,
    box_iou,
    fallback_box,
    detect_faces,
    load_or_detect_faces,
)
from ._predictor import (
    train_shape_predictor,
    pretrained_predictor_path,
    load_predictor,
    predict_landmarks,
)
from ._features import (
    N_FEATURES,
    hog_features,
    face_features,
)

__all__ = [
    "N_FEATURES",
    "OUTER_EYE_CORNERS",
    "MISS_IOU_THRESHOLD",
    "load_image",
    "load_images",
    "load_truths",
    "landmark_bbox",
    "inter_ocular_distance",
    "landmark_loss",
    "per_landmark",
    "map_in_processes",
    "box_iou",
    "fallback_box",
    "detect_faces",
    "load_or_detect_faces",
    "train_shape_predictor",
    "pretrained_predictor_path",
    "load_predictor",
    "predict_landmarks",
    "hog_features",
    "face_features",
]
