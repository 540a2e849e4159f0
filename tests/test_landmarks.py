"""Tests of rejectopt.landmarks and the 300-W faces it reads: parsing, the landmark loss, features,
worker processes, safe extraction, dlib's detector and shape predictor.

The experiment (one split, its files, the pipeline's rules) is tests/test_experiments_landmarks.py's,
its rendering tests/test_report_landmarks.py's; the official archive's download tests/test_download.py's.
"""

import io
import os
import tarfile

import numpy as np
import pandas as pd
import pytest
from support import FACES, forty_offline_faces, needs_faces, random_points, write_pts

from rejectopt import landmarks as L
from rejectopt.datasets._archive import extract_archive
from rejectopt.datasets._faces300w import list_faces, read_pts
from rejectopt.landmarks import _detect, _faces, _features, _parallel, _predictor


# ------------------------------------------------ .pts (the 300-W annotations, rejectopt.datasets)
@pytest.mark.parametrize("header", [True, False])
def test_read_pts_both_header_styles_are_zero_based(tmp_path, header):
    points = random_points()
    parsed = read_pts(write_pts(tmp_path / "face.pts", points, header=header))
    assert parsed.shape == (68, 2)
    np.testing.assert_allclose(parsed, points - 1)


@pytest.mark.parametrize(
    "text",
    [
        "version: 1\nn_points: 68\n{\n1 2\n}\n",  # too few points
        "1 2\n" * 67 + "1 x\n",  # not a number
        "version: 1\nn_points: 68\n" + "1 2\n" * 68,  # no braces
        "version: 1\nn_points: 67\n{\n" + "1 2\n" * 68 + "}\n",  # declared count differs
    ],
)
def test_read_pts_malformed_raises_naming_the_file(tmp_path, text):
    path = tmp_path / "broken.pts"
    path.write_text(text)
    with pytest.raises(ValueError, match="broken.pts"):
        read_pts(path)


def test_list_faces_is_sorted_and_pairs_images(tmp_path):
    for subset, names in {"b": ["z", "a"], "a": ["m"]}.items():
        (tmp_path / subset).mkdir()
        for name in names:
            write_pts(tmp_path / subset / f"{name}.pts", random_points())
            (tmp_path / subset / f"{name}.jpg").write_bytes(b"")
    faces = list_faces(tmp_path, subsets=("b", "a"))
    assert faces[["subset", "name"]].values.tolist() == [["a", "m"], ["b", "a"], ["b", "z"]]
    assert faces["image"].iloc[0].endswith("m.jpg")


# --------------------------------------------------------------------------- loss
def test_landmark_loss_of_a_constant_offset():
    truth = np.zeros((68, 2))
    truth[36] = (10, 20)
    truth[45] = (60, 20)  # iod 50
    loss = L.landmark_loss(truth, truth + (3, 4))
    np.testing.assert_allclose(loss, [100 / 50 * 68 * 5])
    np.testing.assert_allclose(L.per_landmark(loss), [100 / 50 * 5])


def test_landmark_loss_is_zero_on_the_truth_and_batched():
    truth = np.stack([random_points(0), random_points(1)])
    np.testing.assert_array_equal(L.landmark_loss(truth, truth), [0, 0])
    with pytest.raises(ValueError, match="shape"):
        L.landmark_loss(truth, truth[:, :67])


# --------------------------------------------------------------------------- features
def test_hog_features_have_the_papers_dimension_and_are_finite():
    rng = np.random.default_rng(0)
    image = rng.integers(0, 256, size=(120, 100), dtype=np.uint8)
    landmarks = random_points()
    landmarks[0] = (-30, 500)  # outside the image: border pixels
    psi = L.hog_features(image, landmarks)
    assert psi.shape == (_features.N_FEATURES,) == (2448,)
    assert np.all(np.isfinite(psi))
    both = L.face_features([image, image], np.stack([landmarks, landmarks]), with_coordinates=True)
    assert both.shape == (2, 2448 + 136)


def _skimage_hog(patch):
    from skimage.feature import hog

    return hog(
        patch,
        orientations=9,
        pixels_per_cell=(8, 8),
        cells_per_block=(2, 2),
        block_norm="L2-Hys",
        feature_vector=True,
    )


def test_hog_descriptors_equal_scikit_image_bit_for_bit():
    from rejectopt.landmarks._features import _hog_descriptors

    rng = np.random.default_rng(1)
    patches = [rng.uniform(0, 255, size=(16, 16)) for _ in range(40)]
    patches += [
        rng.integers(0, 256, size=(16, 16)).astype(float) for _ in range(40)
    ]  # many tied angles
    ramp = np.arange(16.0)
    patches += [
        np.zeros((16, 16)),
        np.full((16, 16), 7.0),  # no gradient: all zeros
        np.tile(ramp, (16, 1)),
        np.tile(ramp[:, None], (1, 16)),  # 0 and 90 degrees: bin edges
        np.add.outer(ramp, ramp),
        np.subtract.outer(ramp, ramp),
    ]  # 45 and 135 degrees
    # {0, 1, 1e-300}: some pixels get gradients (row -1e-300, col 1), whose angle mod 180 rounds to
    # exactly 180, in no orientation bin of scikit-image
    tiny = [rng.choice([0.0, 1.0, 1e-300], size=(16, 16)) for _ in range(20)]
    g_row = np.stack([t[2:, 1:-1] - t[:-2, 1:-1] for t in tiny])
    g_col = np.stack([t[1:-1, 2:] - t[1:-1, :-2] for t in tiny])
    assert np.any(np.arctan2(g_row, g_col) * (180 / np.pi) % 180 == 180)
    # magnitudes near float's smallest normal number: the cell mean (float / 64) is rounded in float
    patches += [rng.uniform(0, 1e-36, size=(16, 16)) for _ in range(10)]
    patches = np.stack(patches + tiny)
    expected = np.stack([_skimage_hog(patch) for patch in patches])
    got = _hog_descriptors(patches)
    assert got.shape == (len(patches), 36)
    np.testing.assert_array_equal(got, expected)


def test_face_features_equal_per_patch_scikit_image_hog():
    """face_features (batched) against the definition: map_coordinates patches, one skimage hog each."""
    from scipy.ndimage import map_coordinates

    rng = np.random.default_rng(2)
    images = [
        rng.integers(0, 256, size=(90, 110), dtype=np.uint8),
        rng.integers(0, 256, size=(120, 100, 3)),
    ]
    shapes = np.stack([random_points(3), random_points(4)])
    expected = []
    for image, shape in zip(images, shapes):
        gray = np.asarray(image, dtype=np.float64)
        gray = gray.mean(axis=2) if gray.ndim == 3 else gray
        eye = shape[45] - shape[36]
        iod = max(float(np.linalg.norm(eye)), 1.0)
        angle = float(np.arctan2(eye[1], eye[0]))
        offsets = (np.arange(16) + 0.5) / 16 * (0.3 * iod) - 0.3 * iod / 2
        u, v = np.meshgrid(offsets, offsets)
        cols = shape[:, 0, None, None] + (np.cos(angle) * u - np.sin(angle) * v)[None]
        rows = shape[:, 1, None, None] + (np.sin(angle) * u + np.cos(angle) * v)[None]
        patches = map_coordinates(
            gray, [rows.ravel(), cols.ravel()], order=1, mode="nearest"
        ).reshape(68, 16, 16)
        expected.append(np.concatenate([_skimage_hog(patch) for patch in patches]))
    np.testing.assert_array_equal(L.face_features(images, shapes), np.stack(expected))
    np.testing.assert_array_equal(L.hog_features(images[1], shapes[1]), expected[1])


# --------------------------------------------------------------------------- worker processes
class _NotPicklable:
    """Data that can reach a worker process only through the fork."""

    def __init__(self, value):
        self.value = value

    def __reduce__(self):
        raise TypeError("the shared data were pickled")


def _offset_in_process(shared, task):
    return shared.value + task, os.getpid()


def test_map_in_processes_keeps_the_order_and_forks_the_shared_data():
    """Serial (one job or one task: this process) and forked workers give the same results in task order;
    the data bound to the function reach the workers through the fork, not pickled with every task."""
    from functools import partial

    function = partial(_offset_in_process, _NotPicklable(100))
    tasks = [3, 1, 4, 1, 5, 9, 2]
    serial = list(_parallel.map_in_processes(function, tasks, 1))
    assert serial == [(100 + t, os.getpid()) for t in tasks]
    assert list(_parallel.map_in_processes(function, tasks[:1], 2)) == serial[:1]
    for chunksize in (1, 3):
        pooled = list(_parallel.map_in_processes(function, tasks, 2, chunksize=chunksize))
        assert [value for value, _ in pooled] == [value for value, _ in serial]
        assert os.getpid() not in {pid for _, pid in pooled}


# --------------------------------------------------------------------------- safe extraction (rejectopt.datasets)
def _tar_with(tmp_path, names):
    tar_path = tmp_path / "archive.tar.gz"
    with tarfile.open(tar_path, "w:gz") as archive:
        for name in names:
            data = b"x"
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return tar_path


def test_extract_archive_extracts_safe_members(tmp_path):
    dest = extract_archive(_tar_with(tmp_path, ["top/afw/a.pts", "top/b.jpg"]), tmp_path / "out")
    assert (dest / "top" / "afw" / "a.pts").read_bytes() == b"x"


def test_extract_archive_refuses_a_member_escaping_dest(tmp_path):
    tar_path = _tar_with(tmp_path, ["top/ok.pts", "top/../../evil.txt"])
    with pytest.raises(ValueError, match="evil.txt"):
        extract_archive(tar_path, tmp_path / "out")
    assert not (tmp_path / "evil.txt").exists()
    assert not (tmp_path / "out" / "top" / "ok.pts").exists()


# --------------------------------------------------------------------------- real faces (dlib)
@pytest.fixture(scope="module")
def real_faces():
    return forty_offline_faces()


@needs_faces
def test_list_faces_finds_the_offline_copy():
    faces = list_faces(FACES)
    assert faces.groupby("subset").size().to_dict() == {
        "afw": 337,
        "helen_testset": 330,
        "helen_trainset": 870,
    }


@needs_faces
def test_detection_overlaps_the_ground_truth(real_faces):
    few = real_faces.iloc[:4]
    detections = _detect.detect_faces(few)
    truths = np.stack([read_pts(p) for p in few["pts"]])
    ious = [
        _detect.box_iou(_detect.landmark_bbox(t)[0], b[None])[0]
        for t, b in zip(truths, detections["box"])
    ]
    assert min(ious) > 0.3
    assert detections["detected"].all() and np.all(np.isfinite(detections["score"]))
    in_processes = _detect.detect_faces(few, n_jobs=2)
    for key in ("box", "score", "detected", "iou", "name"):
        np.testing.assert_array_equal(in_processes[key], detections[key])


@pytest.mark.slow
@needs_faces
def test_tiny_shape_predictor_trains_and_predicts(real_faces, tmp_path):
    images = _faces.load_images(real_faces["image"])
    truths = np.stack([read_pts(p) for p in real_faces["pts"]])
    boxes = np.stack([_detect.fallback_box(t) for t in truths])
    options = {
        "cascade_depth": 3,
        "tree_depth": 3,
        "num_trees_per_cascade_level": 20,
        "oversampling_amount": 2,
    }
    model = _predictor.train_shape_predictor(
        images, boxes, truths, options, threads=2, seed=0, path=tmp_path / "sp.dat"
    )
    pred = _predictor.predict_landmarks(model, images[:5], boxes[:5])
    assert pred.shape == (5, 68, 2)
    import dlib

    np.testing.assert_array_equal(
        _predictor.predict_landmarks(dlib.shape_predictor(str(model)), images[:5], boxes[:5]), pred
    )
    assert np.median(L.per_landmark(L.landmark_loss(truths[:5], pred))) < 30


@pytest.mark.slow
@needs_faces
def test_shape_predictor_training_is_reproducible_for_a_seed(real_faces, tmp_path):
    images = _faces.load_images(real_faces["image"][:20])
    truths = np.stack([read_pts(p) for p in real_faces["pts"][:20]])
    boxes = np.stack([_detect.fallback_box(t) for t in truths])
    options = {
        "cascade_depth": 2,
        "tree_depth": 2,
        "num_trees_per_cascade_level": 10,
        "oversampling_amount": 2,
    }
    models = [
        _predictor.train_shape_predictor(
            images, boxes, truths, options, 2, 7, tmp_path / f"{k}.dat"
        )
        for k in range(2)
    ]
    runs = [_predictor.predict_landmarks(model, images, boxes) for model in models]
    np.testing.assert_array_equal(runs[0], runs[1])
    saved, in_memory = _predictor.train_shape_predictor(
        images, boxes, truths, options, 2, 7, tmp_path / "2.dat", return_predictor=True
    )
    np.testing.assert_array_equal(
        _predictor.predict_landmarks(in_memory, images, boxes), runs[0]
    )  # save/load is exact
    assert saved.read_bytes() == models[0].read_bytes()


@needs_faces
def test_load_or_detect_faces_caches_and_checks_the_face_list(real_faces, tmp_path):
    few = real_faces.iloc[:2]
    first = _detect.load_or_detect_faces(few, tmp_path / "det.npz")
    again = _detect.load_or_detect_faces(few, tmp_path / "det.npz")
    np.testing.assert_array_equal(first["box"], again["box"])
    other = _detect.load_or_detect_faces(
        real_faces.iloc[1:3].reset_index(drop=True), tmp_path / "det.npz"
    )
    assert other["name"].tolist() == real_faces["name"].iloc[1:3].tolist()


def test_the_pretrained_model_is_found_without_importing_its_package(monkeypatch, tmp_path):
    """face_recognition_models imports pkg_resources, gone from setuptools 81 on: the demo mode
    finds its model file by the package's location instead, and names the extra when it is absent."""
    import subprocess
    import sys

    path = _predictor.pretrained_predictor_path()
    assert path.name == "shape_predictor_68_face_landmarks.dat" and path.stat().st_size > 90e6
    probe = (
        "import sys; from rejectopt.landmarks._predictor import pretrained_predictor_path as p; p(); "
        "print('face_recognition_models' in sys.modules)"
    )
    assert (
        subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True).stdout.strip()
        == "False"
    )
    monkeypatch.setattr(_predictor.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(
        ModuleNotFoundError, match=r"landmarks.pretrained needs .* pip install -e '\.\[landmarks\]'"
    ):
        _predictor.pretrained_predictor_path()
    spec = type("Spec", (), {"submodule_search_locations": [str(tmp_path)]})()
    monkeypatch.setattr(_predictor.importlib.util, "find_spec", lambda name: spec)
    with pytest.raises(FileNotFoundError, match="holds no 68-point model"):
        _predictor.pretrained_predictor_path()


# --------------------------------------------------------------------------- known answers of the pipeline's steps
def test_known_answers_of_images_truths_and_boxes(tmp_path):
    from PIL import Image

    Image.fromarray(np.full((4, 6, 3), (255, 0, 0), dtype=np.uint8)).save(tmp_path / "red.png")
    image = _faces.load_image(tmp_path / "red.png")
    assert (image.shape, image.dtype, int(image[0, 0])) == (
        (4, 6),
        np.uint8,
        76,
    )  # luma 299 * 255 // 1000
    Image.fromarray(np.zeros((8, 3), dtype=np.uint8)).save(tmp_path / "black.png")
    assert [
        i.shape for i in _faces.load_images([tmp_path / "red.png", tmp_path / "black.png"])
    ] == [(4, 6), (8, 3)]
    (tmp_path / "face.pts").write_text("".join(f"{k} 1\n" for k in range(1, 69)))  # bare, 1-based
    truths = _faces.load_truths(pd.DataFrame({"pts": [str(tmp_path / "face.pts")] * 2}))
    assert truths.shape == (2, 68, 2) and truths[0, :2].tolist() == [[0.0, 0.0], [1.0, 0.0]]
    assert _faces.load_truths(pd.DataFrame({"pts": []})).shape == (0, 68, 2)
    shape = np.zeros((68, 2))
    shape[10], shape[20] = (40, 5), (-3, 60)
    assert _detect.landmark_bbox(shape).tolist() == [[-3.0, 0.0, 40.0, 60.0]]
    ious = _detect.box_iou([0, 0, 10, 10], [[0, 0, 10, 10], [5, 0, 15, 10], [20, 20, 30, 30]])
    np.testing.assert_allclose(ious, [1.0, 1 / 3, 0.0])
    shape = np.zeros((68, 2))
    shape[1] = (100, 50)  # a 100 x 50 landmark box gives a square of side 102.4
    np.testing.assert_allclose(_detect.fallback_box(shape), [-3.7, -29.1, 98.7, 73.3], atol=0.005)


def test_the_astronaut_is_detected_once_and_read_from_the_cache(tmp_path):
    from PIL import Image
    from skimage.data import astronaut

    (tmp_path / "afw").mkdir()
    Image.fromarray(astronaut()).save(tmp_path / "afw" / "astronaut.png")
    x, y = np.meshgrid(
        np.linspace(185, 255, 17), np.linspace(90, 160, 4)
    )  # a rough 17 x 4 grid over the face
    (tmp_path / "afw" / "astronaut.pts").write_text(
        "".join(f"{a + 1} {b + 1}\n" for a, b in zip(x.ravel(), y.ravel()))
    )
    faces = list_faces(tmp_path, ["afw"])
    first = _detect.load_or_detect_faces(faces, tmp_path / "detections.npz")
    assert first["box"].tolist() == [[175.0, 76.0, 265.0, 166.0]] and first[
        "detected"
    ].tolist() == [True]
    assert first["iou"].round(3).tolist() == [0.605]
    second = _detect.load_or_detect_faces(faces, tmp_path / "detections.npz")
    assert sorted(second) == ["box", "detected", "iou", "name", "score", "subset", "upsample"]
    assert np.array_equal(first["score"], second["score"])


def test_a_tiny_predictor_on_synthetic_faces_has_known_size_and_losses(tmp_path):
    rng = np.random.default_rng(0)
    base = np.c_[np.linspace(16, 48, 68), 32 + 10 * np.sin(np.linspace(0, 2 * np.pi, 68))]
    truths = np.stack([base + rng.normal(0, 1, 2) for _ in range(3)])
    images = [np.zeros((64, 64), dtype=np.uint8) for _ in truths]
    for image, truth in zip(images, truths):  # the 68 points drawn white on black
        image[truth[:, 1].round().astype(int), truth[:, 0].round().astype(int)] = 255
    boxes = np.stack([_detect.fallback_box(truth) for truth in truths])
    options = {
        "cascade_depth": 2,
        "tree_depth": 2,
        "num_trees_per_cascade_level": 5,
        "oversampling_amount": 1,
    }
    path = _predictor.train_shape_predictor(
        images, boxes, truths, options, path=tmp_path / "model.dat"
    )
    assert (path.name, path.stat().st_size) == ("model.dat", 38960)
    predictor = _predictor.load_predictor(path)
    assert type(predictor).__name__ == "shape_predictor"
    pred = _predictor.predict_landmarks(path, images, boxes)
    assert pred.shape == (3, 68, 2) and np.array_equal(
        pred, _predictor.predict_landmarks(predictor, images, boxes)
    )
    assert L.per_landmark(L.landmark_loss(truths, pred)).round(2).tolist() == [4.77, 4.83, 5.03]


def test_the_official_archive_is_trusted_once_it_extracted_with_its_layout(tmp_path):
    from rejectopt.datasets._faces300w import (
        ARCHIVE_SUBSETS,
        ARCHIVE_TOP_FOLDER,
        archive_raw_file,
        check_archive_layout,
        extract_official_archive,
        fetch_archive,
    )
    from rejectopt.datasets._trust import read_lock

    points = [(i, 2 * i) for i in range(68)]
    for subset in ARCHIVE_SUBSETS:  # one face in each folder of the official archive
        folder = tmp_path / "layout" / ARCHIVE_TOP_FOLDER / subset
        folder.mkdir(parents=True)
        write_pts(folder / "face.pts", points)
        (folder / "face.jpg").write_bytes(b"")
    assert check_archive_layout(tmp_path / "layout")["subset"].tolist() == [
        "afw",
        "helen/testset",
        "helen/trainset",
        "ibug",
        "lfpw/testset",
        "lfpw/trainset",
    ]
    (tmp_path / "mirror" / "300w").mkdir(parents=True)
    with tarfile.open(tmp_path / "mirror" / "300w" / archive_raw_file().name, "w:gz") as tar:
        tar.add(tmp_path / "layout" / ARCHIVE_TOP_FOLDER, arcname=ARCHIVE_TOP_FOLDER)
    archive = fetch_archive(
        tmp_path / "raw", mirror=tmp_path / "mirror", allow_download=False, record_lock=False
    )
    assert archive.name == archive_raw_file().name and read_lock(archive.parent) == {}  # pending
    out = extract_official_archive(archive, tmp_path / "faces")
    assert len(list_faces(out / ARCHIVE_TOP_FOLDER, ARCHIVE_SUBSETS)) == 6
    assert list(read_lock(archive.parent)) == [archive_raw_file().name]
    (tmp_path / "layout" / ARCHIVE_TOP_FOLDER / "ibug" / "face.pts").unlink()
    with pytest.raises(
        ValueError, match="^not the official 300-W layout: no annotated face in ibug$"
    ):
        check_archive_layout(tmp_path / "layout")
