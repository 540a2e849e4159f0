"""Tests of rejectopt.landmarks: 300-W parsing, the landmark loss, features, safe extraction, dlib."""

import io
import os
import tarfile
from pathlib import Path

import numpy as np
import pytest

from rejectopt import landmarks as L

DEFAULT_FACES = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "faces"
FACES = Path(os.environ.get("REJECTOPT_FACES_MIRROR", DEFAULT_FACES))
needs_faces = pytest.mark.skipif(not (FACES / "afw").is_dir(), reason=f"300-W face copy not found at {FACES}")


def _points(seed=0):
    rng = np.random.default_rng(seed)
    return rng.uniform(10, 90, size=(68, 2)).round(3)


def _write_pts(path, points, header=True):
    body = "\n".join(f"{x:.3f} {y:.3f}" for x, y in points)
    text = f"version: 1\nn_points:  68\n{{\n{body}\n}}\n" if header else body + "\n"
    path.write_text(text)
    return path


# --------------------------------------------------------------------------- .pts
@pytest.mark.parametrize("header", [True, False])
def test_read_pts_both_header_styles_are_zero_based(tmp_path, header):
    points = _points()
    parsed = L.read_pts(_write_pts(tmp_path / "face.pts", points, header=header))
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
        L.read_pts(path)


def test_list_faces_is_sorted_and_pairs_images(tmp_path):
    for subset, names in {"b": ["z", "a"], "a": ["m"]}.items():
        (tmp_path / subset).mkdir()
        for name in names:
            _write_pts(tmp_path / subset / f"{name}.pts", _points())
            (tmp_path / subset / f"{name}.jpg").write_bytes(b"")
    faces = L.list_faces(tmp_path, subsets=("b", "a"))
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
    truth = np.stack([_points(0), _points(1)])
    np.testing.assert_array_equal(L.landmark_loss(truth, truth), [0, 0])
    with pytest.raises(ValueError, match="shape"):
        L.landmark_loss(truth, truth[:, :67])


# --------------------------------------------------------------------------- features
def test_hog_features_have_the_papers_dimension_and_are_finite():
    rng = np.random.default_rng(0)
    image = rng.integers(0, 256, size=(120, 100), dtype=np.uint8)
    landmarks = _points()
    landmarks[0] = (-30, 500)  # outside the image: border pixels
    psi = L.hog_features(image, landmarks)
    assert psi.shape == (L.N_FEATURES,) == (2448,)
    assert np.all(np.isfinite(psi))
    both = L.face_features([image, image], np.stack([landmarks, landmarks]), with_coordinates=True)
    assert both.shape == (2, 2448 + 136)


def _skimage_hog(patch):
    from skimage.feature import hog

    return hog(patch, orientations=9, pixels_per_cell=(8, 8), cells_per_block=(2, 2), block_norm="L2-Hys",
               feature_vector=True)


def test_hog_descriptors_equal_scikit_image_bit_for_bit():
    from rejectopt.landmarks._features import _hog_descriptors

    rng = np.random.default_rng(1)
    patches = [rng.uniform(0, 255, size=(16, 16)) for _ in range(40)]
    patches += [rng.integers(0, 256, size=(16, 16)).astype(float) for _ in range(40)]  # many tied angles
    ramp = np.arange(16.0)
    patches += [np.zeros((16, 16)), np.full((16, 16), 7.0),  # no gradient: all zeros
                np.tile(ramp, (16, 1)), np.tile(ramp[:, None], (1, 16)),  # 0 and 90 degrees: bin edges
                np.add.outer(ramp, ramp), np.subtract.outer(ramp, ramp)]  # 45 and 135 degrees
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
    images = [rng.integers(0, 256, size=(90, 110), dtype=np.uint8), rng.integers(0, 256, size=(120, 100, 3))]
    shapes = np.stack([_points(3), _points(4)])
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
        patches = map_coordinates(gray, [rows.ravel(), cols.ravel()], order=1, mode="nearest").reshape(68, 16, 16)
        expected.append(np.concatenate([_skimage_hog(patch) for patch in patches]))
    np.testing.assert_array_equal(L.face_features(images, shapes), np.stack(expected))
    np.testing.assert_array_equal(L.hog_features(images[1], shapes[1]), expected[1])


def test_importing_landmarks_imports_no_scikit_learn():
    """Jobs that only detect or train predictors do not import scikit-learn; the constants still match."""
    import subprocess
    import sys

    code = ("import sys, rejectopt.landmarks as L; print('sklearn' in sys.modules); "
            "from rejectopt.landmarks import _experiment as E; print(E.LEARNED_SCORES, E._METHODS)")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    from rejectopt.scores import get_score, score_names

    learned = tuple(n for n in score_names(learned=True) if get_score(n).learns_from == "loss")
    assert run.stdout.split("\n")[:2] == ["False", f"{learned} {('face_score', *learned)}"]
    assert set(learned) == {"sele", "reg"}


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

    from rejectopt.landmarks._faces import _map_in_processes

    function = partial(_offset_in_process, _NotPicklable(100))
    tasks = [3, 1, 4, 1, 5, 9, 2]
    serial = list(_map_in_processes(function, tasks, 1))
    assert serial == [(100 + t, os.getpid()) for t in tasks]
    assert list(_map_in_processes(function, tasks[:1], 2)) == serial[:1]
    for chunksize in (1, 3):
        pooled = list(_map_in_processes(function, tasks, 2, chunksize=chunksize))
        assert [value for value, _ in pooled] == [value for value, _ in serial]
        assert os.getpid() not in {pid for _, pid in pooled}


# --------------------------------------------------------------------------- archive
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
    dest = L.extract_archive(_tar_with(tmp_path, ["top/afw/a.pts", "top/b.jpg"]), tmp_path / "out")
    assert (dest / "top" / "afw" / "a.pts").read_bytes() == b"x"


def test_extract_archive_refuses_a_member_escaping_dest(tmp_path):
    tar_path = _tar_with(tmp_path, ["top/ok.pts", "top/../../evil.txt"])
    with pytest.raises(ValueError, match="evil.txt"):
        L.extract_archive(tar_path, tmp_path / "out")
    assert not (tmp_path / "evil.txt").exists()
    assert not (tmp_path / "out" / "top" / "ok.pts").exists()


# --------------------------------------------------------------------------- real faces (dlib)
@pytest.fixture(scope="module")
def real_faces():
    faces = L.list_faces(FACES)
    return faces.iloc[np.linspace(0, len(faces) - 1, 40).astype(int)].reset_index(drop=True)


@needs_faces
def test_list_faces_finds_the_offline_copy():
    faces = L.list_faces(FACES)
    assert faces.groupby("subset").size().to_dict() == {"afw": 337, "helen_testset": 330, "helen_trainset": 870}


@needs_faces
def test_detection_overlaps_the_ground_truth(real_faces):
    few = real_faces.iloc[:4]
    detections = L.detect_faces(few)
    truths = np.stack([L.read_pts(p) for p in few["pts"]])
    ious = [L.box_iou(L.landmark_bbox(t)[0], b[None])[0] for t, b in zip(truths, detections["box"])]
    assert min(ious) > 0.3
    assert detections["detected"].all() and np.all(np.isfinite(detections["score"]))
    in_processes = L.detect_faces(few, n_jobs=2)
    for key in ("box", "score", "detected", "iou", "name"):
        np.testing.assert_array_equal(in_processes[key], detections[key])


@needs_faces
def test_tiny_shape_predictor_trains_and_predicts(real_faces, tmp_path):
    images = L.load_images(real_faces["image"])
    truths = np.stack([L.read_pts(p) for p in real_faces["pts"]])
    boxes = np.stack([L.fallback_box(t) for t in truths])
    options = {"cascade_depth": 3, "tree_depth": 3, "num_trees_per_cascade_level": 20, "oversampling_amount": 2}
    model = L.train_shape_predictor(images, boxes, truths, options, threads=2, seed=0, path=tmp_path / "sp.dat")
    pred = L.predict_landmarks(model, images[:5], boxes[:5])
    assert pred.shape == (5, 68, 2)
    import dlib

    np.testing.assert_array_equal(L.predict_landmarks(dlib.shape_predictor(str(model)), images[:5], boxes[:5]), pred)
    assert np.median(L.per_landmark(L.landmark_loss(truths[:5], pred))) < 30


@needs_faces
def test_shape_predictor_training_is_reproducible_for_a_seed(real_faces, tmp_path):
    images = L.load_images(real_faces["image"][:20])
    truths = np.stack([L.read_pts(p) for p in real_faces["pts"][:20]])
    boxes = np.stack([L.fallback_box(t) for t in truths])
    options = {"cascade_depth": 2, "tree_depth": 2, "num_trees_per_cascade_level": 10, "oversampling_amount": 2}
    models = [L.train_shape_predictor(images, boxes, truths, options, 2, 7, tmp_path / f"{k}.dat") for k in range(2)]
    runs = [L.predict_landmarks(model, images, boxes) for model in models]
    np.testing.assert_array_equal(runs[0], runs[1])
    saved, in_memory = L.train_shape_predictor(images, boxes, truths, options, 2, 7, tmp_path / "2.dat",
                                               return_predictor=True)
    np.testing.assert_array_equal(L.predict_landmarks(in_memory, images, boxes), runs[0])  # save/load is exact
    assert saved.read_bytes() == models[0].read_bytes()


@needs_faces
def test_load_or_detect_faces_caches_and_checks_the_face_list(real_faces, tmp_path):
    few = real_faces.iloc[:2]
    first = L.load_or_detect_faces(few, tmp_path / "det.npz")
    again = L.load_or_detect_faces(few, tmp_path / "det.npz")
    np.testing.assert_array_equal(first["box"], again["box"])
    other = L.load_or_detect_faces(real_faces.iloc[1:3].reset_index(drop=True), tmp_path / "det.npz")
    assert other["name"].tolist() == real_faces["name"].iloc[1:3].tolist()


@needs_faces
def test_run_landmark_split_end_to_end_on_a_tiny_split(real_faces):
    detections = L.detect_faces(real_faces)
    pieces = np.array_split(np.arange(len(real_faces)), [12, 16, 28, 32])
    parts = dict(zip(("trn1", "val1", "trn2", "val2", "tst"), pieces))
    options = ({"cascade_depth": 2, "tree_depth": 2, "num_trees_per_cascade_level": 10, "oversampling_amount": 2},)
    out = L.run_landmark_split(real_faces, detections, parts, options_grid=options, C_grid=(100,), threads=2,
                               seed=0, learning_curve_sizes=(6,))
    n_tst = len(parts["tst"])
    assert out["loss"].shape == out["uncertainty_sele"].shape == out["uncertainty_reg"].shape == (n_tst,)
    np.testing.assert_array_equal(out["uncertainty_face_score"], -detections["score"][parts["tst"]])
    assert set(out["aurc"]) == {"face_score", "sele", "reg"} and out["C"] == {"sele": 100, "reg": 100}
    assert sorted(out["learning_curve"]["m"].unique()) == [6, 12]


@needs_faces
def test_grid_jobs_and_workers_give_the_same_split(real_faces, tmp_path):
    """The pipeline's way (grid cells trained as separate jobs, worker processes) = the serial call."""
    import pandas as pd

    detections = L.detect_faces(real_faces)
    pieces = np.array_split(np.arange(len(real_faces)), [12, 16, 28, 32])
    parts = dict(zip(("trn1", "val1", "trn2", "val2", "tst"), pieces))
    grid = ({"cascade_depth": 2, "tree_depth": 2, "num_trees_per_cascade_level": 10, "oversampling_amount": 2},
            {"cascade_depth": 2, "tree_depth": 2, "num_trees_per_cascade_level": 10, "oversampling_amount": 3})
    common = dict(options_grid=grid, C_grid=(1, 100), threads=2, seed=3, learning_curve_sizes=(6, 9))
    serial = L.run_landmark_split(real_faces, detections, parts, **common)
    candidates = [L.train_candidate_predictor(real_faces, detections, parts, options, threads=2, seed=3,
                                              path=tmp_path / f"p{k}.dat") for k, options in enumerate(grid)]
    assert [error for _, error in candidates] == [serial["val1_error"][k] for k in range(len(grid))]
    for kwargs in ({"candidates": candidates, "workers": 2}, {"workers": 2}):
        out = L.run_landmark_split(real_faces, detections, parts, **common, **kwargs)
        for key, value in serial.items():
            if isinstance(value, pd.DataFrame):
                pd.testing.assert_frame_equal(out[key], value)
            elif isinstance(value, np.ndarray):
                np.testing.assert_array_equal(out[key], value)
            else:
                assert out[key] == value, key
    with pytest.raises(ValueError, match="candidate"):
        L.run_landmark_split(real_faces, detections, parts, **common, candidates=candidates[:1])


# --------------------------------------------------------------------------- pipeline helpers
def _fake_result(n=24, seed=0, index_offset=0):
    rng = np.random.default_rng(seed)
    truth = _points(seed)
    loss = rng.gamma(2.0, 100.0, size=n)
    return {
        "tst_index": np.arange(n) + index_offset,
        "loss": loss,
        "pred": np.repeat(truth[None], n, axis=0) + rng.normal(0, 1, size=(n, 68, 2)),
        "uncertainty_face_score": rng.normal(size=n),
        "uncertainty_sele": loss + rng.normal(0, 50, size=n),
        "uncertainty_reg": loss + rng.normal(0, 80, size=n),
        "aurc": {"face_score": 3.5, "sele": 2.6, "reg": 2.8},
        "risk_full": float(L.per_landmark(loss).mean()),
        "C": {"sele": 10.0, "reg": 100.0},
        "val_aurc": {"sele": {"10.0": 1.0}, "reg": {"100.0": 1.0}},
        "predictor_options": {"oversampling_amount": 5, "tree_depth": 4},
        "val1_error": {"0": 5.0},
        "mean_error": {"tst": 5.0},
    }


def _fake_faces(tmp_path, n=24):
    from PIL import Image

    rows = []
    for k in range(n):
        image = tmp_path / f"f{k}.png"
        Image.fromarray(np.full((100, 100), 40 + k, dtype=np.uint8)).save(image)
        pts = _write_pts(tmp_path / f"f{k}.pts", _points(0))
        rows.append({"name": f"f{k}", "subset": "s", "image": str(image), "pts": str(pts)})
    import pandas as pd

    return pd.DataFrame(rows)


SUMMARY_COLUMNS = ["task", "dataset", "split", "classifier", "score", "C_classifier", "C_score", "aurc",
                   "risk_full", "n_test"]


def test_landmark_result_round_trips_and_summarises(tmp_path):
    result = _fake_result()
    L.save_landmark_result(tmp_path / "r.npz", result)
    back = L.load_landmark_result(tmp_path / "r.npz")
    np.testing.assert_array_equal(back["pred"], result["pred"])
    assert back["aurc"] == result["aurc"] and back["predictor_options"] == result["predictor_options"]
    summary = L.landmark_summary({0: back, 1: _fake_result(seed=1)})
    assert list(summary.columns) == SUMMARY_COLUMNS
    assert set(summary["score"]) == {"face_score", "sele", "reg"} and len(summary) == 6
    assert (summary["task"] == "landmarks").all() and (summary["classifier"] == "dlib").all()
    assert summary["C_classifier"].eq(5).all() and summary.loc[summary.score == "face_score", "C_score"].isna().all()
    pretrained = dict(result, predictor_options={"pretrained": True})
    assert L.landmark_summary({0: pretrained})["C_classifier"].isna().all()


def test_select_faces_thins_evenly_and_deterministically(tmp_path):
    for subset in ("a", "b"):
        (tmp_path / subset).mkdir()
        for k in range(10):
            _write_pts(tmp_path / subset / f"{k}.pts", _points(k))
            (tmp_path / subset / f"{k}.jpg").write_bytes(b"")
    few = L.select_faces(tmp_path, subsets=("a", "b"), max_faces=6)
    assert len(few) == 6 and few["subset"].value_counts().to_dict() == {"a": 3, "b": 3}
    assert few.equals(L.select_faces(tmp_path, subsets=("a", "b"), max_faces=6))
    assert len(L.select_faces(tmp_path, subsets=("a", "b"))) == 20


def test_figures_and_note_render(tmp_path):
    import pandas as pd
    from matplotlib.figure import Figure

    results = {0: _fake_result(seed=0), 1: _fake_result(seed=1)}
    summary = L.landmark_summary(results)
    curve = lambda s: pd.DataFrame({"m": [10, 10, 10, 24, 24, 24], "method": ["sele", "reg", "face_score"] * 2,  # noqa: E731
                                    "C": 1.0, "test_aurc": np.arange(6.0) + s})
    curves = {0: curve(0), 1: curve(1)}
    faces = _fake_faces(tmp_path)
    for pretrained in (False, True):
        figures = [L.rc_figure(results[0], 0, summary, pretrained=pretrained),
                   L.learning_curve_figure(curves, pretrained=pretrained),
                   L.faces_figure(faces, results[0], 0, pretrained=pretrained)]
        for k, figure in enumerate(figures):
            assert isinstance(figure, Figure)
            figure.savefig(tmp_path / f"{k}.png", format="png", dpi=50)
            titles = [ax.get_title() for ax in figure.axes] + [figure._suptitle.get_text() if figure._suptitle else ""]
            assert any("optimistic" in t for t in titles) == pretrained
        note = L.landmarks_note(summary, curves, results, n_faces=24, pretrained=pretrained)
        assert ("optimistic" in note) == pretrained and "| mean ± std |" in note
    assert len([ax for ax in figures[2].axes if ax.images]) == 20
    assert "split 0" in figures[0].axes[0].get_title()
    # every cell of the per-split table sits under its own method's label (a hard-coded header once
    # swapped SELE and REG when the registry's order changed)
    lines = note.splitlines()
    header = next(line for line in lines if line.startswith("| split |"))
    columns = [c.strip() for c in header.strip("|").split("|")]
    row = [c.strip() for c in next(line for line in lines if line.startswith("| 0 |")).strip("|").split("|")]
    assert len(row) == len(columns)
    for score, label in (("sele", "SELE"), ("reg", "REG"), ("face_score", "Face score")):
        aurc = summary[(summary.split == 0) & (summary.score == score)]["aurc"].item()
        assert row[columns.index(label)] == f"{aurc:.2f}", (score, header, row)
        if score != "face_score":
            assert row[columns.index(f"C {label}")] == f"{results[0]['C'][score]:g}"


def test_paper_comparison_handles_the_landmark_rows_without_paper_std():
    import pandas as pd

    from rejectopt.report import comparison_markdown, landmarks_spec, paper_comparison

    summary = L.landmark_summary({0: _fake_result(seed=0), 1: _fake_result(seed=1)})
    summary.loc[summary.score == "sele", "aurc"] = [2.7, 2.7]  # within 10% of 2.6
    summary.loc[summary.score == "reg", "aurc"] = [3.5, 3.5]  # 25% off 2.8
    reference = pd.read_csv(Path(__file__).resolve().parents[1] / "workflow/resources/reference_results.csv")
    comparison = paper_comparison(summary, reference)
    cells = comparison[comparison.task == "landmarks"].set_index("score")
    assert cells["paper_std"].isna().all()
    assert bool(cells.loc["sele", "agrees"]) and not bool(cells.loc["reg", "agrees"])
    assert bool(cells.loc["face_score", "agrees"])
    markdown = comparison_markdown(comparison, [], ["300w"], [])
    assert landmarks_spec(["sele", "reg"]).title in markdown and "landmarks / dlib: 2 of 3 cells agree" in markdown


# --------------------------------------------------------------------------- the Snakemake rules
REPO = Path(__file__).resolve().parents[1]


def _snakemake(workdir, *args, timeout=600):
    import subprocess
    import sys

    cmd = [sys.executable, "-m", "snakemake", "--snakefile", str(REPO / "Snakefile"), "--directory", str(workdir), *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)


def _rule_counts(text):
    return {line.split()[0]: int(line.split()[1]) for line in text.splitlines()
            if len(line.split()) == 2 and line.split()[1].isdigit()}


@needs_faces
def test_snakemake_plans_the_landmark_rules_from_faces_mirror(tmp_path):
    run = _snakemake(tmp_path, "-n", "--quiet", "rules", "--config", f"faces_mirror={FACES}", "datasets=[shuttle]",
                     "n_splits=1")
    assert run.returncode == 0, run.stderr
    counts = _rule_counts(run.stdout + run.stderr)
    assert {r: counts.get(r) for r in ("detect_faces", "make_face_splits", "train_landmarks", "summarize_landmarks",
                                       "landmark_figures")} == dict.fromkeys(
        ("detect_faces", "make_face_splits", "train_landmarks", "summarize_landmarks", "landmark_figures"), 1)
    assert counts.get("train_predictor") == 2  # one job per option set of the grid
    assert "download_faces" not in counts


@needs_faces
def test_snakemake_trains_no_predictor_in_pretrained_mode(tmp_path):
    (tmp_path / "pretrained.yaml").write_text("landmarks:\n  pretrained: true\n")
    run = _snakemake(tmp_path, "-n", "--quiet", "rules", "--configfile", str(tmp_path / "pretrained.yaml"),
                     "--config", f"faces_mirror={FACES}", "datasets=[shuttle]", "n_splits=2")
    assert run.returncode == 0, run.stderr
    counts = _rule_counts(run.stdout + run.stderr)
    assert counts.get("train_landmarks") == 2 and "train_predictor" not in counts


def test_snakemake_skips_landmarks_loudly_with_data_mirror_only(tmp_path):
    mirror = REPO / "workflow" / "resources" / "demo_mirror"
    run = _snakemake(tmp_path, "-n", "--quiet", "rules", "--config", f"data_mirror={mirror}", "datasets=[sattelite]",
                     "n_splits=1")
    assert run.returncode == 0, run.stderr
    assert "faces_mirror" in run.stdout + run.stderr
    assert "train_landmarks" not in _rule_counts(run.stdout + run.stderr)


def test_snakemake_plans_the_official_download_without_mirrors(tmp_path):
    run = _snakemake(tmp_path, "-n", "--quiet", "rules", "--config", "datasets=[shuttle]", "n_splits=2")
    assert run.returncode == 0, run.stderr
    counts = _rule_counts(run.stdout + run.stderr)
    assert counts["download_faces"] == counts["extract_faces"] == 1 and counts["train_landmarks"] == 2
    assert counts["train_predictor"] == 4


def test_snakemake_names_a_missing_faces_mirror(tmp_path):
    run = _snakemake(tmp_path, "-n", "--config", f"faces_mirror={tmp_path / 'nowhere'}", "datasets=[shuttle]")
    assert run.returncode != 0 and "faces_mirror" in run.stdout + run.stderr and "nowhere" in run.stdout + run.stderr


LANDMARK_TARGETS = [
    "results/datasets/300w/summary.csv",
    "results/tables/landmarks_note.md",
    "results/figures/rc_300w.png",
    "results/figures/learning_curve_300w.png",
    "results/figures/faces_300w.png",
]


@needs_faces
def test_landmark_rules_run_end_to_end_on_a_few_faces(tmp_path):
    """The landmark rules only (targets), 100 faces, 1 split, a tiny predictor: ~30 s on 2 cores."""
    import pandas as pd

    (tmp_path / "small.yaml").write_text(
        "landmarks:\n  max_faces: 100\n  learning_curve_sizes: [10]\n  predictor_options_grid:\n"
        "    - {cascade_depth: 4, tree_depth: 3, num_trees_per_cascade_level: 50, oversampling_amount: 2}\n"
        "C_score: [1, 100]\n"
    )
    run = _snakemake(tmp_path, *LANDMARK_TARGETS, "--cores", "2", "--configfile", str(tmp_path / "small.yaml"),
                     "--config", f"faces_mirror={FACES}", "datasets=[shuttle]", "n_splits=1")
    assert run.returncode == 0, run.stderr[-5000:]
    for path in LANDMARK_TARGETS:
        assert (tmp_path / path).is_file(), path
    summary = pd.read_csv(tmp_path / "results/datasets/300w/summary.csv")
    assert list(summary.columns) == SUMMARY_COLUMNS
    assert sorted(summary["score"]) == ["face_score", "reg", "sele"] and (summary["dataset"] == "300w").all()
    assert summary["aurc"].between(0, 100).all() and summary["n_test"].between(17, 23).all()
    assert (tmp_path / "results/benchmarks/train_landmarks/300w/split_0.tsv").is_file()
    assert (tmp_path / "results/benchmarks/train_predictor/300w/split_0_option_0.tsv").is_file()
    assert not list((tmp_path / "results/landmarks/300w").glob("predictor_*"))  # temporary models removed
