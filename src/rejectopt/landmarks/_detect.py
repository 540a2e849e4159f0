"""DLIB's HOG face detector, run once per face set and cached (Section 5.2.3)."""

from __future__ import annotations

import logging
import time
from pathlib import Path

import numpy as np
import pandas as pd

from .._io import save_npz
from ..datasets._faces300w import read_pts
from ._faces import _as_shapes, load_image
from ._parallel import map_in_processes

__all__ = [
    "MISS_IOU_THRESHOLD",
    "landmark_bbox",
    "box_iou",
    "fallback_box",
    "detect_faces",
    "load_or_detect_faces",
]

logger = logging.getLogger(__name__)

#: A face counts as detected when its best detection overlaps the ground-truth landmark box
#: with at least this IoU (the typical dlib box covers brows-to-chin, IoU ~0.7 with that box).
MISS_IOU_THRESHOLD = 0.3

# Typical dlib HOG detector box relative to the ground-truth landmark bounding box (centre
# offset as a fraction of the landmark box width / height, side as a fraction of its larger
# side), the medians over the 1,537 offline 300-W faces detected with IoU >= 0.3
# (``upsample=1``). Used only for the faces the detector misses.
_DLIB_BOX_DX, _DLIB_BOX_DY, _DLIB_BOX_SIDE = -0.025, -0.058, 1.024


# --------------------------------------------------------------------------- face detection
def landmark_bbox(landmarks) -> np.ndarray:
    """Bounding boxes ``(left, top, right, bottom)`` of landmark sets, shape (n, 4).

    Parameters
    ----------
    landmarks : array-like of shape (n, 68, 2) or (68, 2)
        The sets (pixels, 0-based).

    Returns
    -------
    ndarray of shape (n, 4)
        The smallest and largest ``x`` and ``y`` of each set.
    """
    shapes = _as_shapes(landmarks, "landmarks")
    return np.concatenate([shapes.min(axis=1), shapes.max(axis=1)], axis=1)


def box_iou(box, boxes) -> np.ndarray:
    """Intersection over union of one box with each of ``boxes`` (``left, top, right, bottom``).

    Parameters
    ----------
    box : array-like of shape (4,)
        ``left, top, right, bottom``.
    boxes : array-like of shape (m, 4) or (4,)
        The boxes to compare ``box`` with.

    Returns
    -------
    ndarray of shape (m,)
        ``area(box & b) / area(box | b)`` per box ``b``; 0 where the union is empty.
    """
    box = np.asarray(box, dtype=np.float64)
    boxes = np.atleast_2d(np.asarray(boxes, dtype=np.float64))
    width = np.clip(np.minimum(box[2], boxes[:, 2]) - np.maximum(box[0], boxes[:, 0]), 0, None)
    height = np.clip(np.minimum(box[3], boxes[:, 3]) - np.maximum(box[1], boxes[:, 1]), 0, None)
    inter = width * height

    def area(b):
        return np.clip(b[..., 2] - b[..., 0], 0, None) * np.clip(b[..., 3] - b[..., 1], 0, None)

    union = area(box) + area(boxes) - inter
    return np.where(union > 0, inter / np.where(union > 0, union, 1), 0.0)


def fallback_box(truth) -> np.ndarray:
    """A dlib-like box for a missed face, derived from its ground-truth landmark box.

    A square of side ``_DLIB_BOX_SIDE * max(w, h)`` centred at the landmark box
    centre shifted by ``(_DLIB_BOX_DX * w, _DLIB_BOX_DY * h)``; the constants are
    the medians of the detected faces of the offline 300-W copy, so the box
    looks like the detector's typical box. This uses the ground truth, so it
    slightly favours the shape predictor on the (few) missed faces.

    Parameters
    ----------
    truth : array-like of shape (68, 2)
        The face's ground-truth landmarks, 0-based ``(x, y)``.

    Returns
    -------
    ndarray of shape (4,)
        ``left, top, right, bottom`` (float, not rounded).
    """
    left, top, right, bottom = landmark_bbox(truth)[0]
    width, height = right - left, bottom - top
    cx = (left + right) / 2 + _DLIB_BOX_DX * width
    cy = (top + bottom) / 2 + _DLIB_BOX_DY * height
    half = _DLIB_BOX_SIDE * max(width, height) / 2
    return np.array([cx - half, cy - half, cx + half, cy + half])


def _hog_detector():
    import dlib  # dlib: optional (the landmarks extra), only the detection job needs it

    return dlib.get_frontal_face_detector()


def _best_detection(detector, image, truth_box, upsample):
    """(box, score, iou) of the detection overlapping ``truth_box`` most; None if none."""
    rects, scores, _ = detector.run(image, int(upsample), -1.0)
    if len(rects) == 0:
        return None
    boxes = np.array([[r.left(), r.top(), r.right(), r.bottom()] for r in rects], dtype=np.float64)
    ious = box_iou(truth_box, boxes)
    best = int(np.argmax(ious))
    return boxes[best], float(scores[best]), float(ious[best])


_WORKER_DETECTOR = None  # one detector per worker process (dlib objects are not picklable)


def _detect_one(task):
    """Worker task: ``(truth, best detection or None)`` of one ``(image path, pts path, upsample)``."""
    global _WORKER_DETECTOR
    image_path, pts_path, upsample = task
    if _WORKER_DETECTOR is None:
        _WORKER_DETECTOR = _hog_detector()
    truth = read_pts(pts_path)
    return truth, _best_detection(
        _WORKER_DETECTOR, load_image(image_path), landmark_bbox(truth)[0], upsample
    )


def detect_faces(
    faces_df: pd.DataFrame,
    upsample: int = 1,
    iou_threshold: float = MISS_IOU_THRESHOLD,
    n_jobs: int = 1,
) -> dict:
    """Run DLIB's HOG frontal face detector once per face and match it to the annotation.

    Each image is scanned with ``detector.run(image, upsample, -1)`` (threshold
    -1, so weak detections are kept); the detection with the largest IoU with
    the ground-truth landmark bounding box is the face's detection, and its SVM
    score the face-detector score (the baseline uncertainty of Section 5.2.3
    of [1] is its negative).

    Missed faces (no detection with IoU >= ``iou_threshold``) get the box of
    :func:`fallback_box` (dlib-like box from the ground-truth landmarks) and a
    score equal to the lowest matched score of the detected faces, i.e. they
    are ranked as uncertain as the worst detected face (ties among them are
    broken by example index in the RC curve). With ``upsample=1`` this affects
    a handful of the 1,537 offline faces (see the log).

    Parameters
    ----------
    faces_df : pandas.DataFrame
        From :func:`list_faces` (needs ``image`` and ``pts``).
    upsample : int, default=1
        Image pyramid up-sampling of the detector (1 finds faces down to ~40 px).
    iou_threshold : float, default=MISS_IOU_THRESHOLD
        A face whose best detection overlaps its landmark box less is missed.
    n_jobs : int, default=1
        Worker processes (the faces are independent; the result does not
        depend on ``n_jobs``).

    Returns
    -------
    dict
        ``box`` (n, 4) float ``left, top, right, bottom``; ``score`` (n,);
        ``detected`` (n,) bool; ``iou`` (n,) of the matched detection (0 if
        none); ``name`` and ``subset`` (n,) str and ``upsample`` (scalar), to
        check a cache against a face list and settings.

    Raises
    ------
    RuntimeError
        The detector matched none of the faces.
    """
    n = len(faces_df)
    box = np.zeros((n, 4))
    score = np.full(n, np.nan)
    iou = np.zeros(n)
    start = time.perf_counter()
    truths = []
    tasks = [(image, pts, int(upsample)) for image, pts in zip(faces_df["image"], faces_df["pts"])]
    for k, (truth, found) in enumerate(map_in_processes(_detect_one, tasks, n_jobs, chunksize=8)):
        truths.append(truth)
        if found is not None:
            box[k], score[k], iou[k] = found
        if (k + 1) % 100 == 0 or k + 1 == n:
            logger.info("detect_faces: %d/%d faces, %.1f s", k + 1, n, time.perf_counter() - start)
    detected = iou >= iou_threshold
    if not detected.any():
        raise RuntimeError("the face detector matched none of the faces")
    floor = float(score[detected].min())
    for k in np.flatnonzero(~detected).tolist():
        box[k] = fallback_box(truths[k])
        score[k] = floor
    logger.info(
        "detect_faces: %d of %d faces missed (IoU < %.2f): fallback box and score %.4f",
        int((~detected).sum()),
        n,
        iou_threshold,
        floor,
    )
    return {
        "box": box,
        "score": score,
        "detected": detected,
        "iou": iou,
        "name": faces_df["name"].to_numpy(dtype=str),
        "subset": faces_df["subset"].to_numpy(dtype=str),
        "upsample": np.array(int(upsample)),
    }


def load_or_detect_faces(
    faces_df: pd.DataFrame, cache_path, upsample: int = 1, n_jobs: int = 1
) -> dict:
    """:func:`detect_faces` cached in an ``.npz`` (detection runs once per face set).

    The cache is reused only when its ``name``/``subset`` columns equal the
    face list's and it was made with the same ``upsample``; otherwise detection reruns and the cache is replaced
    atomically.

    Parameters
    ----------
    faces_df : pandas.DataFrame
        From :func:`rejectopt.datasets.list_faces` (needs ``name``, ``subset``, ``image``, ``pts``).
    cache_path : path-like
        The ``.npz`` cache, read if it matches and written otherwise.
    upsample : int, default=1
        Image pyramid up-sampling of the detector.
    n_jobs : int, default=1
        Worker processes of :func:`detect_faces`.

    Returns
    -------
    dict
        The arrays of :func:`detect_faces`.
    """
    cache_path = Path(cache_path)
    if cache_path.exists():
        with np.load(cache_path, allow_pickle=False) as data:
            cached = {key: data[key] for key in data.files}
        same = (
            len(cached.get("name", [])) == len(faces_df)
            and np.array_equal(cached["name"], faces_df["name"].to_numpy(dtype=str))
            and np.array_equal(cached["subset"], faces_df["subset"].to_numpy(dtype=str))
            and int(cached.get("upsample", -1)) == int(upsample)
        )
        if same:
            logger.info("detections loaded from %s", cache_path)
            return cached
        logger.info("%s does not match the face list; detecting again", cache_path)
    detections = detect_faces(faces_df, upsample=upsample, n_jobs=n_jobs)
    save_npz(cache_path, **detections)
    return detections
