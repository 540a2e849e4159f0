"""The feature map psi(x) in R^2448: HOG descriptors around the predicted landmarks."""

from __future__ import annotations

import numpy as np

from ._faces import N_FEATURES, N_LANDMARKS, OUTER_EYE_CORNERS, _CELL_PX, _HOG_ORIENTATIONS, _PATCH_FRACTION, _as_shapes, inter_ocular_distance

__all__ = [
    "hog_features",
    "face_features",
]


# --------------------------------------------------------------------------- features
def _patch_grid(landmarks: np.ndarray, side: float, angle: float, size: int) -> tuple[np.ndarray, np.ndarray]:
    """Sampling coordinates (rows, cols) of shape (68, size, size) of rotated square patches."""
    offsets = (np.arange(size) + 0.5) / size * side - side / 2
    u, v = np.meshgrid(offsets, offsets)  # u along the patch x axis, v along its y axis
    cos, sin = np.cos(angle), np.sin(angle)
    dx = cos * u - sin * v
    dy = sin * u + cos * v
    cols = landmarks[:, 0, None, None] + dx[None]
    rows = landmarks[:, 1, None, None] + dy[None]
    return rows, cols


def hog_features(image, landmarks) -> np.ndarray:
    """psi(x) of Section 5.2.3 of [1]: a 36-dim HOG descriptor around each of the 68 landmarks.

    Around each predicted landmark a square patch of side ``0.3 * iod`` (iod of
    the *predicted* landmarks, so no ground truth is used) is sampled with
    bilinear interpolation on a 16 x 16 grid aligned with the eye line (scale
    and in-plane rotation normalised); its HOG (Dalal & Triggs; 9 orientations,
    2 x 2 cells of 8 x 8 px, one L2-Hys normalised block, scikit-image) is 36
    numbers. Pixels outside the image read as the nearest border pixel.

    Parameters
    ----------
    image : ndarray of shape (H, W) or (H, W, 3)
        The image (RGB is converted to its mean intensity).
    landmarks : array-like of shape (68, 2)
        Predicted 0-based landmarks.

    Returns
    -------
    ndarray of shape (2448,)
        The concatenated descriptors, float64, finite.
    """
    from scipy.ndimage import map_coordinates
    from skimage.feature import hog

    landmarks = _as_shapes(landmarks, "landmarks")[0]
    gray = np.asarray(image, dtype=np.float64)
    if gray.ndim == 3:
        gray = gray.mean(axis=2)
    eye_vector = landmarks[OUTER_EYE_CORNERS[1]] - landmarks[OUTER_EYE_CORNERS[0]]
    iod = max(float(np.linalg.norm(eye_vector)), 1.0)
    angle = float(np.arctan2(eye_vector[1], eye_vector[0]))
    size = 2 * _CELL_PX
    rows, cols = _patch_grid(landmarks, _PATCH_FRACTION * iod, angle, size)
    samples = map_coordinates(gray, [rows.ravel(), cols.ravel()], order=1, mode="nearest")
    patches = samples.reshape(N_LANDMARKS, size, size)
    descriptors = [
        hog(patch, orientations=_HOG_ORIENTATIONS, pixels_per_cell=(_CELL_PX, _CELL_PX), cells_per_block=(2, 2),
            block_norm="L2-Hys", feature_vector=True)
        for patch in patches
    ]
    return np.concatenate(descriptors)


def _normalised_coordinates(landmarks: np.ndarray) -> np.ndarray:
    """Landmarks centred on their mean, divided by their iod, flattened: shape (136,)."""
    iod = max(float(inter_ocular_distance(landmarks)[0]), 1.0)
    return ((landmarks - landmarks.mean(axis=0)) / iod).ravel()


def face_features(images, landmarks, with_coordinates: bool = False) -> np.ndarray:
    """psi(x) for many faces: :func:`hog_features` of each, optionally + landmark positions.

    Parameters
    ----------
    images : sequence of ndarray
    landmarks : array-like of shape (n, 68, 2)
        Predicted landmarks.
    with_coordinates : bool, default=False
        Append the 136 predicted coordinates centred on their mean and divided
        by the predicted iod (the paper's "+ their positions" reading; off by
        default so that the dimension is the paper's 2,448).

    Returns
    -------
    ndarray of shape (n, 2448) or (n, 2584)
    """
    landmarks = _as_shapes(landmarks, "landmarks")
    if len(images) != len(landmarks):
        raise ValueError(f"{len(images)} images but {len(landmarks)} landmark sets")
    dim = N_FEATURES + (2 * N_LANDMARKS if with_coordinates else 0)
    features = np.zeros((len(images), dim))
    for k, (image, shape) in enumerate(zip(images, landmarks)):
        features[k, :N_FEATURES] = hog_features(image, shape)
        if with_coordinates:
            features[k, N_FEATURES:] = _normalised_coordinates(shape)
    return features
