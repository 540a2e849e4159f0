"""Facial landmark detection for the reject option: the loss and the feature map psi(x).

The library of the structured-output experiment of [1] (Section 5.2.3, Fig. 4-5): the normalised
localisation error ``l(y, y') = 100 / iod(y) * sum_i ||l_i - l'_i||`` (:func:`landmark_loss`,
:func:`inter_ocular_distance`, :func:`per_landmark`) and the feature map ``psi(x)`` in R^2448,
HOG descriptors (36 per landmark) around the 68 predicted landmarks (:func:`hog_features`,
:func:`face_features`).

DLIB's HOG frontal face detector, run once per face and matched to its annotation (``_detect``),
and DLIB's 68-point shape predictor (Kazemi & Sullivan's ensemble of regression trees, CVPR 2014),
trained, loaded and applied in the detector's box (``_predictor``), are the pipeline's steps; it
imports them from those modules. The 300-W faces (Sagonas et al., Image and Vision Computing
2016) are a dataset (``rejectopt.datasets._faces300w``); the experiment (one split, the summary)
is ``rejectopt.pipeline.experiments.landmarks``, its rendering ``rejectopt.pipeline.report.landmarks``.

References
----------
.. [1] V. Franc, D. Prusa, V. Voracek. Optimal Strategies for Reject Option
   Classifiers. JMLR 24(11):1-49, 2023.
"""

from ._faces import inter_ocular_distance, landmark_loss, per_landmark
from ._features import face_features, hog_features

__all__ = [
    "inter_ocular_distance",
    "landmark_loss",
    "per_landmark",
    "hog_features",
    "face_features",
]


def __dir__():
    """The names of ``__all__``, not the private submodules and helpers the imports above add."""
    return list(__all__)
