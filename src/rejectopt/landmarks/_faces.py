"""A face for the landmark model: its image, its ground-truth landmarks, the landmark loss (Section 5.2.3).

The 300-W faces themselves (folders, ``.pts`` annotations, the official archive) are a dataset:
:mod:`rejectopt.datasets` (``read_pts``, ``list_faces``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..datasets._faces300w import N_LANDMARKS, read_pts

__all__ = [
    "OUTER_EYE_CORNERS",
    "load_image",
    "load_images",
    "load_truths",
    "inter_ocular_distance",
    "landmark_loss",
    "per_landmark",
]


#: 0-based indices of the outer eye corners (points 37 and 46 of the 1-based markup).
OUTER_EYE_CORNERS = (36, 45)


# --------------------------------------------------------------------------- images and truths
def load_image(path) -> np.ndarray:
    """Load an image as a grayscale ``uint8`` array (both dlib models work on intensities).

    Parameters
    ----------
    path : path-like
        An image file pillow reads (``.jpg``, ``.png``, ...); colour is converted to
        pillow's luma ``L``.

    Returns
    -------
    ndarray of shape (H, W), uint8
        C-contiguous, as dlib expects.
    """
    # pillow: optional (the landmarks extra), only the jobs reading images need it
    from PIL import Image

    with Image.open(path) as image:
        return np.ascontiguousarray(np.asarray(image.convert("L"), dtype=np.uint8))


def load_images(paths) -> list[np.ndarray]:
    """:func:`load_image` for each path.

    Parameters
    ----------
    paths : iterable of path-like
        Image files, e.g. the ``image`` column of :func:`rejectopt.datasets.list_faces`.

    Returns
    -------
    list of ndarray
        One grayscale ``uint8`` array per path, in order.
    """
    return [load_image(path) for path in paths]


def load_truths(faces: pd.DataFrame) -> np.ndarray:
    """Ground-truth landmarks (n, 68, 2) of the rows of ``faces`` (their ``pts`` column).

    Parameters
    ----------
    faces : pandas.DataFrame
        Rows of :func:`rejectopt.datasets.list_faces`; only the ``pts`` column (paths of 300-W
        ``.pts`` files) is read.

    Returns
    -------
    ndarray of shape (n, 68, 2)
        0-based ``(x, y)`` per face and landmark (:func:`rejectopt.datasets.read_pts`); shape
        (0, 68, 2) for no rows.
    """
    return (
        np.stack([read_pts(path) for path in faces["pts"]])
        if len(faces)
        else np.zeros((0, N_LANDMARKS, 2))
    )


# --------------------------------------------------------------------------- loss
def _as_shapes(landmarks, name: str) -> np.ndarray:
    array = np.asarray(landmarks, dtype=np.float64)
    if array.ndim == 2:
        array = array[None]
    if array.ndim != 3 or array.shape[1:] != (N_LANDMARKS, 2):
        raise ValueError(
            f"{name} must have shape (n, {N_LANDMARKS}, 2) or ({N_LANDMARKS}, 2), got {np.shape(landmarks)}"
        )
    return array


def inter_ocular_distance(landmarks) -> np.ndarray:
    """Distance between the outer eye corners (0-based points 36 and 45), shape (n,).

    The normaliser ``iod(y)`` of the landmark loss (Section 5.2.3 of [1]).

    Parameters
    ----------
    landmarks : array-like of shape (n, 68, 2) or (68, 2)
        Landmark sets, 0-based ``(x, y)``.

    Returns
    -------
    ndarray of shape (n,)
        The inter-ocular distance of each set (n = 1 for a single set).

    Examples
    --------
    >>> shape = np.zeros((68, 2)); shape[36] = (10, 20); shape[45] = (40, 60)
    >>> inter_ocular_distance(shape)
    array([50.])
    """
    shapes = _as_shapes(landmarks, "landmarks")
    return np.linalg.norm(shapes[:, OUTER_EYE_CORNERS[0]] - shapes[:, OUTER_EYE_CORNERS[1]], axis=1)


def landmark_loss(truth, pred) -> np.ndarray:
    """Normalised localisation error of Section 5.2.3 of [1].

    ``l(y, y') = 100 / iod(y) * sum_{i=1}^{68} ||l_i - l'_i||`` with ``iod``
    the distance of the ground-truth outer eye corners.

    Parameters
    ----------
    truth, pred : array-like of shape (n, 68, 2) or (68, 2)
        Ground-truth and predicted landmarks (same pixel convention).

    Returns
    -------
    ndarray of shape (n,)
        The loss per face (a sum over landmarks; :func:`per_landmark` gives the
        scale of Fig. 4 of [1]).

    Examples
    --------
    >>> truth = np.zeros((68, 2)); truth[45] = (50, 0)
    >>> float(landmark_loss(truth, truth + (3, 4))[0])
    680.0
    """
    truth = _as_shapes(truth, "truth")
    pred = _as_shapes(pred, "pred")
    if truth.shape != pred.shape:
        raise ValueError(f"truth and pred shapes differ: {truth.shape} vs {pred.shape}")
    iod = inter_ocular_distance(truth)
    if np.any(iod <= 0):
        raise ValueError(
            f"ground-truth inter-ocular distance must be positive (face {int(np.argmin(iod))})"
        )
    return 100.0 / iod * np.linalg.norm(truth - pred, axis=2).sum(axis=1)


def per_landmark(loss):
    """The loss averaged over the 68 landmarks (``loss / 68``): the scale of Fig. 4 of [1].

    AuRC values on this scale are the paper's 2.6 (SELE), 2.8 (REG) and 3.5
    (face score).

    Parameters
    ----------
    loss : array-like
        Losses of :func:`landmark_loss` (a sum over the 68 landmarks).

    Returns
    -------
    ndarray
        ``loss / 68``, float64, same shape.

    Examples
    --------
    >>> per_landmark([680.0, 136.0])
    array([10.,  2.])
    """
    return np.asarray(loss, dtype=np.float64) / N_LANDMARKS
