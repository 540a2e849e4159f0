"""The feature map psi(x) in R^2448: HOG descriptors around the predicted landmarks."""

from __future__ import annotations

import numpy as np

from ..datasets._faces300w import N_LANDMARKS
from ._faces import OUTER_EYE_CORNERS, _as_shapes, inter_ocular_distance

__all__ = [
    "N_FEATURES",
    "hog_features",
    "face_features",
]


#: HOG descriptor length per landmark: 9 orientations x 2 x 2 cells.
HOG_DIM_PER_LANDMARK = 36


#: Dimension of psi(x) in Section 5.2.3 of [1]: 68 x 36 = 2,448.
N_FEATURES = N_LANDMARKS * HOG_DIM_PER_LANDMARK


# HOG patch: side = _PATCH_FRACTION x (predicted) inter-ocular distance, resampled to a
# 16 x 16 grid = 2 x 2 cells of 8 x 8 px.
_PATCH_FRACTION = 0.3


_CELL_PX = 8


_HOG_ORIENTATIONS = 9


#: Faces whose 68 patches go through :func:`_hog_descriptors` together (keeps its buffers ~10 MB).
_FACES_PER_BATCH = 64


# --------------------------------------------------------------------------- features
def _patch_grid(
    landmarks: np.ndarray, side: float, angle: float, size: int
) -> tuple[np.ndarray, np.ndarray]:
    """Sampling coordinates (rows, cols) of shape (68, size, size) of rotated square patches."""
    offsets = (np.arange(size) + 0.5) / size * side - side / 2
    u, v = np.meshgrid(offsets, offsets)  # u along the patch x axis, v along its y axis
    cos, sin = np.cos(angle), np.sin(angle)
    dx = cos * u - sin * v
    dy = sin * u + cos * v
    cols = landmarks[:, 0, None, None] + dx[None]
    rows = landmarks[:, 1, None, None] + dy[None]
    return rows, cols


def _hog_descriptors(patches) -> np.ndarray:
    """HOG descriptors of many 16 x 16 patches at once, equal bit for bit to scikit-image's.

    Each row is ``skimage.feature.hog(patch, orientations=9, pixels_per_cell=(8, 8),
    cells_per_block=(2, 2), block_norm="L2-Hys", feature_vector=True)``, computed
    for a whole stack in a few array operations instead of one call per patch
    (68 per face). Every rounding step is scikit-image's (``_hoghistogram.pyx``,
    0.19 to 0.26; the tests compare with the installed version bit for bit):

    * gradients by central differences (zero on the border rows / columns),
      magnitude ``hypot(g_col, g_row)``, orientation ``arctan2(g_row, g_col)``
      in degrees modulo 180;
    * each cell's orientation bin ``[20 i, 20 (i + 1))`` sums the magnitudes of
      its pixels in row-major order in a C ``float`` accumulator (each double
      addition rounded to float32), then divided, in float too, by the 64
      pixels of the cell; an orientation of exactly 180 (a rounding artefact
      of the modulo) falls in no bin, as in scikit-image;
    * one L2-Hys block: ``v / sqrt(sum v^2 + 1e-10)``, clipped at 0.2, and
      normalised again, the sums over the 36 numbers of a row.

    Parameters
    ----------
    patches : array-like of shape (n, 16, 16)

    Returns
    -------
    ndarray of shape (n, 36), float64
        Per patch: cell (row, column) major, then the 9 orientation bins.
    """
    patches = np.ascontiguousarray(patches, dtype=np.float64)
    size = 2 * _CELL_PX
    if patches.ndim != 3 or patches.shape[1:] != (size, size):
        raise ValueError(f"patches must have shape (n, {size}, {size}), got {patches.shape}")
    n = len(patches)
    g_row = np.zeros_like(patches)
    g_col = np.zeros_like(patches)
    g_row[:, 1:-1, :] = patches[:, 2:, :] - patches[:, :-2, :]
    g_col[:, :, 1:-1] = patches[:, :, 2:] - patches[:, :, :-2]
    magnitude = np.hypot(g_col, g_row)
    orientation = np.arctan2(g_row, g_col) * (180 / np.pi) % 180
    edges = 180.0 / _HOG_ORIENTATIONS * np.arange(_HOG_ORIENTATIONS + 1)
    bins = (
        np.searchsorted(edges, orientation, side="right") - 1
    )  # edges[b] <= angle < edges[b + 1]; 9 = none

    # Pixel k of every (patch, cell), k in row-major order within the cell: shape (64, n * 4).
    def by_pixel(array):
        cells = array.reshape(n, 2, _CELL_PX, 2, _CELL_PX).transpose(2, 4, 0, 1, 3)
        return cells.reshape(_CELL_PX * _CELL_PX, n * 4)

    magnitude, bins = by_pixel(magnitude), by_pixel(bins)
    n_slots = n * 4 * _HOG_ORIENTATIONS
    totals = np.zeros(n_slots + 1, dtype=np.float32)  # the last slot collects the "no bin" pixels
    base = np.arange(n * 4) * _HOG_ORIENTATIONS
    for k in range(
        _CELL_PX * _CELL_PX
    ):  # sequential, as the C loop: each cell-bin gets <= 1 term per step
        slot = np.where(bins[k] < _HOG_ORIENTATIONS, base + bins[k], n_slots)
        totals[slot] = (totals[slot].astype(np.float64) + magnitude[k]).astype(np.float32)
    # the mean over the cell's pixels in float too (C: float / int), exact except below float's normal range
    blocks = (
        (totals[:n_slots] / np.float32(_CELL_PX * _CELL_PX))
        .astype(np.float64)
        .reshape(n, 4 * _HOG_ORIENTATIONS)
    )
    eps2 = 1e-5**2
    out = blocks / np.sqrt(np.sum(blocks**2, axis=1) + eps2)[:, None]
    out = np.minimum(out, 0.2)
    return out / np.sqrt(np.sum(out**2, axis=1) + eps2)[:, None]


def _landmark_patches(image, landmarks: np.ndarray) -> np.ndarray:
    """The 68 rotated, scale-normalised 16 x 16 patches of one face (bilinear, nearest border)."""
    # scipy.ndimage: heavy to import (benchmarks/import_costs_records.csv); features only
    from scipy.ndimage import map_coordinates

    gray = np.asarray(image, dtype=np.float64)
    if gray.ndim == 3:
        gray = gray.mean(axis=2)
    eye_vector = landmarks[OUTER_EYE_CORNERS[1]] - landmarks[OUTER_EYE_CORNERS[0]]
    iod = max(float(np.linalg.norm(eye_vector)), 1.0)
    angle = float(np.arctan2(eye_vector[1], eye_vector[0]))
    size = 2 * _CELL_PX
    rows, cols = _patch_grid(landmarks, _PATCH_FRACTION * iod, angle, size)
    samples = map_coordinates(gray, [rows.ravel(), cols.ravel()], order=1, mode="nearest")
    return samples.reshape(N_LANDMARKS, size, size)


def hog_features(image, landmarks) -> np.ndarray:
    """psi(x) of Section 5.2.3 of [1]: a 36-dim HOG descriptor around each of the 68 landmarks.

    Around each predicted landmark a square patch of side ``0.3 * iod`` (iod of
    the *predicted* landmarks, so no ground truth is used) is sampled with
    bilinear interpolation on a 16 x 16 grid aligned with the eye line (scale
    and in-plane rotation normalised); its HOG (Dalal & Triggs; 9 orientations,
    2 x 2 cells of 8 x 8 px, one L2-Hys normalised block, scikit-image's
    definition, computed by :func:`_hog_descriptors`) is 36 numbers. Pixels
    outside the image read as the nearest border pixel.

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

    Examples
    --------
    Landmarks on a line over a seeded noise image; each 36-number block is L2-Hys normalised:

    >>> image = np.random.default_rng(0).integers(0, 256, size=(64, 64)).astype(np.uint8)
    >>> features = hog_features(image, np.c_[np.linspace(16, 48, 68), np.full(68, 32.0)])
    >>> features.shape, round(float(np.linalg.norm(features[:36])), 6)
    ((2448,), 1.0)
    """
    landmarks = _as_shapes(landmarks, "landmarks")[0]
    return _hog_descriptors(_landmark_patches(image, landmarks)).ravel()


def _normalised_coordinates(landmarks: np.ndarray) -> np.ndarray:
    """Landmarks centred on their mean, divided by their iod, flattened: shape (136,)."""
    iod = max(float(inter_ocular_distance(landmarks)[0]), 1.0)
    return ((landmarks - landmarks.mean(axis=0)) / iod).ravel()


def face_features(images, landmarks, with_coordinates: bool = False) -> np.ndarray:
    """psi(x) for many faces: :func:`hog_features` of each, optionally + landmark positions.

    Parameters
    ----------
    images : sequence of ndarray
        One image per face, shape (H, W) or (H, W, 3).
    landmarks : array-like of shape (n, 68, 2)
        Predicted landmarks.
    with_coordinates : bool, default=False
        Append the 136 predicted coordinates centred on their mean and divided
        by the predicted iod (the paper's "+ their positions" reading; off by
        default so that the dimension is the paper's 2,448).

    Returns
    -------
    ndarray of shape (n, 2448) or (n, 2584)
        One row of :func:`hog_features` per face (then its 136 coordinates).

    Raises
    ------
    ValueError
        The numbers of images and landmark sets differ.

    Examples
    --------
    Two faces of random landmarks on a uniform grey image, with their 136 coordinates:

    >>> images = [np.full((80, 80), 128, dtype=np.uint8)] * 2
    >>> shapes = np.random.default_rng(1).uniform(20, 60, size=(2, 68, 2))
    >>> face_features(images, shapes, with_coordinates=True).shape
    (2, 2584)
    """
    landmarks = _as_shapes(landmarks, "landmarks")
    if len(images) != len(landmarks):
        raise ValueError(f"{len(images)} images but {len(landmarks)} landmark sets")
    dim = N_FEATURES + (2 * N_LANDMARKS if with_coordinates else 0)
    features = np.zeros((len(images), dim))
    for start in range(0, len(images), _FACES_PER_BATCH):  # HOG of a batch of faces in one go
        stop = min(start + _FACES_PER_BATCH, len(images))
        patches = np.concatenate(
            [_landmark_patches(images[k], landmarks[k]) for k in range(start, stop)]
        )
        features[start:stop, :N_FEATURES] = _hog_descriptors(patches).reshape(
            stop - start, N_FEATURES
        )
    if with_coordinates:
        for k, shape in enumerate(landmarks):
            features[k, N_FEATURES:] = _normalised_coordinates(shape)
    return features
