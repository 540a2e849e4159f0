"""The landmark experiment (rejectopt.pipeline.experiments.landmarks, workflow/rules/landmarks.smk).

1. The contract: settings from the pipeline config, the faces they choose; no scikit-learn on import.
2. One split on a few real faces (dlib): the library call, the grid trained as separate jobs and in
   worker processes, and the pipeline's files (train_predictor_file, run_split_files) give the same.
3. The rows, their file round trip, the faces thinned for smoke tests, the aggregated table.
4. The pipeline plans and runs the rules.

The detector, shape predictor, loss and features are tests/test_landmarks.py's; rendering (the note,
Fig. 4-5) tests/test_report_landmarks.py's.
"""

import json

import numpy as np
import pandas as pd
import pytest
from support import (
    DEMO_MIRROR,
    FACES,
    fake_result,
    forty_offline_faces,
    needs_faces,
    random_points,
    rule_counts,
    snakemake,
    write_pts,
)

from rejectopt._io import IntermediateFileError, save_csv
from rejectopt.datasets._faces300w import ARCHIVE_SUBSETS, MIRROR_SUBSETS
from rejectopt.landmarks._detect import detect_faces, load_or_detect_faces
from rejectopt.pipeline.experiments import SplitInputs, check_experiment
from rejectopt.pipeline.experiments import landmarks as E
from rejectopt.pipeline.experiments.paper import BASE_SUMMARY_COLUMNS
from rejectopt.pipeline.tables import dataset_summary_role, load_csv
from rejectopt.scores._tuning import SCORE_C_GRID
from rejectopt.splits import save_splits


# --------------------------------------------------------------------------------------------
# 1. The contract, settings
# --------------------------------------------------------------------------------------------
def test_the_module_keeps_the_contract():
    assert check_experiment(E) is E and E.NAME == "landmarks"


def test_settings_fill_defaults_and_reject_bad_values():
    s = E.settings({})
    for key, value in E.DEFAULTS.items():
        assert s[key] == value, key
    assert s["split_ratios"] == list(E.DEFAULT_RATIOS) and s["learning_curve_sizes"] == [
        50,
        100,
        200,
        300,
    ]
    assert s["predictor_options_grid"] == [dict(o) for o in E.DEFAULT_OPTIONS_GRID]
    assert s["trainer_threads"] == E.TRAINER_THREADS == 1 and s["score_jobs"] == E.SCORE_JOBS == 2
    assert s["seed"] == 0 and list(s["C_grid"]) == list(SCORE_C_GRID)
    # the pipeline's values as the config gives them (the rules pass them on as params)
    config = {
        "landmarks": {"max_faces": 40, "learning_curve_sizes": [10]},
        "C_score": [1, 100],
        "seed": 7,
    }
    s = E.settings(config)
    assert (
        s["max_faces"] == 40
        and s["learning_curve_sizes"] is config["landmarks"]["learning_curve_sizes"]
    )
    assert s["C_grid"] is config["C_score"] and s["seed"] == 7
    assert s["predictor_options_grid"] == E.DEFAULTS["predictor_options_grid"]
    for bad in (
        {"max_face": 40},
        {"split_ratios": [0.5, 0.5]},
        {"predictor_options_grid": []},
        {"learning_curve_sizes": [1]},
        {"max_faces": 0},
        {"pretrained": "yes"},
    ):
        with pytest.raises(ValueError, match="landmarks"):
            E.settings({"landmarks": bad})


def test_settings_choose_the_mirror_or_the_extracted_archive():
    mirror = E.settings({"faces_mirror": "/data/faces", "landmarks": {"max_faces": 60}})
    assert mirror["faces"] == {
        "folder": "/data/faces",
        "subsets": list(MIRROR_SUBSETS),
        "max_faces": 60,
    }
    archive = E.settings({"raw_dir": "raw"})
    assert archive["archive_dir"] == "raw/300w/extracted"
    assert archive["faces"] == {
        "folder": "raw/300w/extracted/ibug_300W_large_face_landmark_dataset",
        "subsets": list(ARCHIVE_SUBSETS),
        "max_faces": None,
    }
    assert E.settings({})["archive_dir"] == "results/raw/300w/extracted"


def test_importing_landmarks_imports_no_scikit_learn():
    """Jobs that only detect or train predictors do not import scikit-learn; the constants still match."""
    import subprocess
    import sys

    code = (
        "import sys, rejectopt.landmarks, rejectopt.pipeline.experiments.landmarks as E; "
        "print('sklearn' in sys.modules); print(E.LEARNED_SCORES, E.METHODS)"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    from rejectopt.scores import get_score, score_names

    learned = tuple(
        n
        for n in score_names(learned=True)
        if get_score(n).learns_from == "loss" and get_score(n).applies_to is None
    )
    assert run.stdout.split("\n")[:2] == ["False", f"{learned} {('face_score', *learned)}"]
    assert set(learned) == {"sele", "reg"}


# --------------------------------------------------------------------------------------------
# 2. One split on real faces (dlib)
# --------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def real_faces():
    return forty_offline_faces()


@pytest.mark.slow
@needs_faces
def test_run_landmark_split_end_to_end_on_a_tiny_split(real_faces):
    detections = detect_faces(real_faces)
    pieces = np.array_split(np.arange(len(real_faces)), [12, 16, 28, 32])
    parts = dict(zip(("trn1", "val1", "trn2", "val2", "tst"), pieces))
    options = (
        {
            "cascade_depth": 2,
            "tree_depth": 2,
            "num_trees_per_cascade_level": 10,
            "oversampling_amount": 2,
        },
    )
    out = E.run_landmark_split(
        real_faces,
        detections,
        parts,
        options_grid=options,
        C_grid=(100,),
        threads=2,
        seed=0,
        learning_curve_sizes=(6,),
    )
    n_tst = len(parts["tst"])
    assert (
        out["loss"].shape
        == out["uncertainty_sele"].shape
        == out["uncertainty_reg"].shape
        == (n_tst,)
    )
    np.testing.assert_array_equal(out["uncertainty_face_score"], -detections["score"][parts["tst"]])
    assert set(out["aurc"]) == {"face_score", "sele", "reg"} and out["C"] == {
        "sele": 100,
        "reg": 100,
    }
    assert sorted(out["learning_curve"]["m"].unique()) == [6, 12]


@pytest.mark.slow
@needs_faces
def test_grid_jobs_and_workers_give_the_same_split(real_faces, tmp_path):
    """The pipeline's way (grid cells trained as separate jobs, worker processes) = the serial call."""
    detections = detect_faces(real_faces)
    pieces = np.array_split(np.arange(len(real_faces)), [12, 16, 28, 32])
    parts = dict(zip(("trn1", "val1", "trn2", "val2", "tst"), pieces))
    grid = (
        {
            "cascade_depth": 2,
            "tree_depth": 2,
            "num_trees_per_cascade_level": 10,
            "oversampling_amount": 2,
        },
        {
            "cascade_depth": 2,
            "tree_depth": 2,
            "num_trees_per_cascade_level": 10,
            "oversampling_amount": 3,
        },
    )
    common = dict(
        options_grid=grid, C_grid=(1, 100), threads=2, seed=3, learning_curve_sizes=(6, 9)
    )
    serial = E.run_landmark_split(real_faces, detections, parts, **common)
    candidates = [
        E.train_candidate_predictor(
            real_faces, detections, parts, options, threads=2, seed=3, path=tmp_path / f"p{k}.dat"
        )
        for k, options in enumerate(grid)
    ]
    assert [error for _, error in candidates] == [serial["val1_error"][k] for k in range(len(grid))]
    for kwargs in ({"candidates": candidates, "workers": 2}, {"workers": 2}):
        out = E.run_landmark_split(real_faces, detections, parts, **common, **kwargs)
        for key, value in serial.items():
            if isinstance(value, pd.DataFrame):
                pd.testing.assert_frame_equal(out[key], value)
            elif isinstance(value, np.ndarray):
                np.testing.assert_array_equal(out[key], value)
            else:
                assert out[key] == value, key
    with pytest.raises(ValueError, match="candidate"):
        E.run_landmark_split(real_faces, detections, parts, **common, candidates=candidates[:1])


@pytest.mark.slow
@needs_faces
def test_the_pipeline_files_give_the_split_of_the_library_call(tmp_path):
    """train_predictor_file per option set, then run_split_files (rules train_predictor, train_landmarks),
    = run_split from the staged files = run_landmark_split on the same faces, detections, split and seed."""
    faces = {"folder": str(FACES), "subsets": list(MIRROR_SUBSETS), "max_faces": 40}
    faces_df = E.select_faces(**faces)
    detections = load_or_detect_faces(faces_df, tmp_path / "detections.npz")
    pieces = np.array_split(np.arange(len(faces_df)), [12, 16, 28, 32])
    save_splits(
        tmp_path / "splits.npz",
        {f"{p}_1": piece for p, piece in zip(("trn1", "val1", "trn2", "val2", "tst"), pieces)},
    )
    grid = [
        {
            "cascade_depth": 2,
            "tree_depth": 2,
            "num_trees_per_cascade_level": 10,
            "oversampling_amount": 2,
        },
        {
            "cascade_depth": 2,
            "tree_depth": 2,
            "num_trees_per_cascade_level": 10,
            "oversampling_amount": 3,
        },
    ]
    models = [tmp_path / f"predictor_{k}.dat" for k in range(2)]
    errors = [tmp_path / f"predictor_{k}.json" for k in range(2)]
    for k in range(2):
        E.train_predictor_file(
            tmp_path / "detections.npz",
            tmp_path / "splits.npz",
            1,
            k,
            models[k],
            errors[k],
            faces=faces,
            options_grid=grid,
            trainer_threads=2,
            seed=5,
        )
    params = dict(
        faces=faces,
        seed=5,
        options_grid=grid,
        C_grid=[1, 100],
        learning_curve_sizes=[6],
        with_coordinates=False,
        pretrained=False,
        score_jobs=2,
    )
    out = E.run_split_files(
        tmp_path / "detections.npz",
        tmp_path / "splits.npz",
        1,
        tmp_path / "split_1.npz",
        tmp_path / "curve_1.csv",
        models=models,
        errors=errors,
        workers=2,
        **params,
    )
    parts = dict(zip(("trn1", "val1", "trn2", "val2", "tst"), pieces))
    direct = E.run_landmark_split(
        faces_df,
        detections,
        parts,
        options_grid=grid,
        C_grid=[1, 100],
        threads=2,
        seed=E.split_seed(5, 1),
        learning_curve_sizes=[6],
    )
    saved = E.load_landmark_result(tmp_path / "split_1.npz", E.split_role(1))
    # both files record the split they are of: read as split 0's, they are refused, naming both
    with pytest.raises(IntermediateFileError, match=r"made from split 1, but this step's is 0"):
        E.load_landmark_result(tmp_path / "split_1.npz", E.split_role(0))
    with pytest.raises(IntermediateFileError, match=r"made from split 1, but this step's is 0"):
        load_csv(tmp_path / "curve_1.csv", expect=E.split_role(0))
    for key in (
        "tst_index",
        "loss",
        "pred",
        "uncertainty_sele",
        "uncertainty_reg",
        "uncertainty_face_score",
    ):
        np.testing.assert_array_equal(saved[key], direct[key])
    for key in ("aurc", "C", "predictor_options", "val1_error", "mean_error"):
        assert saved[key] == json.loads(json.dumps(direct[key])), (
            key
        )  # saved as JSON: keys become text
    pd.testing.assert_frame_equal(
        pd.read_csv(tmp_path / "curve_1.csv"), direct["learning_curve"], check_dtype=False
    )
    pd.testing.assert_frame_equal(out.rows, E.landmark_summary({1: direct}))
    # the contract's run_split from the same staged files
    staged = {E.STAGED_DETECTIONS: tmp_path / "detections.npz"}
    staged.update({f"predictor/{k}": models[k] for k in range(2)})
    staged.update({f"val1_error/{k}": errors[k] for k in range(2)})
    inputs = SplitInputs("300w", 1, "landmarks", 5, None, tmp_path / "splits.npz", staged)
    chosen = E.settings(
        {
            "landmarks": {
                "predictor_options_grid": grid,
                "learning_curve_sizes": [6],
                "max_faces": 40,
            },
            "C_score": [1, 100],
            "seed": 5,
            "faces_mirror": str(FACES),
        }
    )
    contract = E.run_split(inputs, chosen)
    pd.testing.assert_frame_equal(contract.rows, out.rows)


# --------------------------------------------------------------------------------------------
# 3. The rows, their files, the faces, the table
# --------------------------------------------------------------------------------------------
SUMMARY_COLUMNS = [
    "task",
    "dataset",
    "split",
    "classifier",
    "score",
    "C_classifier",
    "C_score",
    "aurc",
    "risk_full",
    "n_test",
]


def test_landmark_result_round_trips_and_summarises(tmp_path):
    result = fake_result()
    E.save_landmark_result(tmp_path / "r.npz", result)
    back = E.load_landmark_result(tmp_path / "r.npz")
    np.testing.assert_array_equal(back["pred"], result["pred"])
    assert (
        back["aurc"] == result["aurc"] and back["predictor_options"] == result["predictor_options"]
    )
    summary = E.landmark_summary({0: back, 1: fake_result(seed=1)})
    assert list(summary.columns) == SUMMARY_COLUMNS
    assert set(summary["score"]) == {"face_score", "sele", "reg"} and len(summary) == 6
    assert (summary["task"] == "landmarks").all() and (summary["classifier"] == "dlib").all()


def test_summary_file_refuses_a_split_copied_over_another_naming_both(tmp_path):
    """Each split's result and learning curve record their split (as run_split_files writes them):
    summarize_landmarks refuses split 0's files copied over split 1's."""
    paths = {}
    for k in (0, 1):
        result, role = fake_result(seed=k), E.split_role(k)
        E.save_landmark_result(tmp_path / f"split_{k}.npz", result, provenance=role)
        save_csv(
            pd.DataFrame({"n": [6], "aurc": [0.1 * k]}), tmp_path / f"c_{k}.csv", provenance=role
        )
        paths[k] = (tmp_path / f"split_{k}.npz", tmp_path / f"c_{k}.csv")
    results, curves = [paths[k][0] for k in (0, 1)], [paths[k][1] for k in (0, 1)]
    _, _, summary = E.summary_file(results, curves, [0, 1], tmp_path / "summary.csv")
    assert sorted(set(summary["split"])) == [0, 1]
    assert load_csv(tmp_path / "summary.csv", expect=dataset_summary_role("300w")).equals(summary)
    paths[1][0].write_bytes(paths[0][0].read_bytes())  # the record is inside the .npz
    with pytest.raises(
        IntermediateFileError, match=r"split_1.npz: made from split 0, but this step's is 1"
    ):
        E.summary_file(results, curves, [0, 1], tmp_path / "again.csv")
    E.save_landmark_result(paths[1][0], fake_result(seed=1), provenance=E.split_role(1))
    for suffix in ("", ".record"):
        (tmp_path / f"c_1.csv{suffix}").write_bytes((tmp_path / f"c_0.csv{suffix}").read_bytes())
    with pytest.raises(
        IntermediateFileError, match=r"c_1.csv: made from split 0, but this step's is 1"
    ):
        E.summary_file(results, curves, [0, 1], tmp_path / "again.csv")
    assert (
        summary["C_classifier"].eq(5).all()
        and summary.loc[summary.score == "face_score", "C_score"].isna().all()
    )
    pretrained = dict(result, predictor_options={"pretrained": True})
    assert E.landmark_summary({0: pretrained})["C_classifier"].isna().all()


def test_select_faces_thins_evenly_and_deterministically(tmp_path):
    for subset in ("a", "b"):
        (tmp_path / subset).mkdir()
        for k in range(10):
            write_pts(tmp_path / subset / f"{k}.pts", random_points(k))
            (tmp_path / subset / f"{k}.jpg").write_bytes(b"")
    few = E.select_faces(tmp_path, subsets=("a", "b"), max_faces=6)
    assert len(few) == 6 and few["subset"].value_counts().to_dict() == {"a": 3, "b": 3}
    assert few.equals(E.select_faces(tmp_path, subsets=("a", "b"), max_faces=6))
    assert len(E.select_faces(tmp_path, subsets=("a", "b"))) == 20


def test_aggregate_is_the_mean_and_std_over_splits():
    rows = E.landmark_summary(
        {0: fake_result(seed=0), 1: fake_result(seed=1), 2: fake_result(seed=2)}
    )
    assert list(rows.columns) == E.SUMMARY_COLUMNS == BASE_SUMMARY_COLUMNS
    tables = E.aggregate(rows, E.settings({}))
    table = tables["landmarks"]
    assert list(tables) == ["landmarks"] and list(table.index) == ["300w"]
    for method in E.METHODS:
        values = rows.loc[rows.score == method, "aurc"]
        assert table.loc["300w", (method, "mean")] == pytest.approx(values.mean())
        assert table.loc["300w", (method, "std")] == pytest.approx(values.std())
    assert table.loc["300w", ("n_splits", "")] == 3


# --------------------------------------------------------------------------------------------
# 4. The Snakemake rules
# --------------------------------------------------------------------------------------------
@pytest.mark.pipeline
@needs_faces
def test_snakemake_plans_the_landmark_rules_from_faces_mirror(tmp_path):
    run = snakemake(
        tmp_path,
        "-n",
        "--quiet",
        "rules",
        "--config",
        f"faces_mirror={FACES}",
        "datasets=[shuttle]",
        "n_splits=1",
    )
    assert run.returncode == 0, run.stderr
    counts = rule_counts(run.stdout + run.stderr)
    assert {
        r: counts.get(r)
        for r in (
            "detect_faces",
            "make_face_splits",
            "train_landmarks",
            "summarize_landmarks",
            "landmark_figures",
        )
    } == dict.fromkeys(
        (
            "detect_faces",
            "make_face_splits",
            "train_landmarks",
            "summarize_landmarks",
            "landmark_figures",
        ),
        1,
    )
    assert counts.get("train_predictor") == 2  # one job per option set of the grid
    assert "download_faces" not in counts


@pytest.mark.pipeline
@needs_faces
def test_snakemake_trains_no_predictor_in_pretrained_mode(tmp_path):
    (tmp_path / "pretrained.yaml").write_text("landmarks:\n  pretrained: true\n")
    run = snakemake(
        tmp_path,
        "-n",
        "--quiet",
        "rules",
        "--configfile",
        str(tmp_path / "pretrained.yaml"),
        "--config",
        f"faces_mirror={FACES}",
        "datasets=[shuttle]",
        "n_splits=2",
    )
    assert run.returncode == 0, run.stderr
    counts = rule_counts(run.stdout + run.stderr)
    assert counts.get("train_landmarks") == 2 and "train_predictor" not in counts


@pytest.mark.pipeline
def test_snakemake_skips_landmarks_loudly_with_data_mirror_only(tmp_path):
    run = snakemake(
        tmp_path,
        "-n",
        "--quiet",
        "rules",
        "--config",
        f"data_mirror={DEMO_MIRROR}",
        "datasets=[sattelite]",
        "n_splits=1",
    )
    assert run.returncode == 0, run.stderr
    assert "faces_mirror" in run.stdout + run.stderr
    assert "train_landmarks" not in rule_counts(run.stdout + run.stderr)


@pytest.mark.pipeline
def test_snakemake_plans_the_official_download_without_mirrors(tmp_path):
    run = snakemake(
        tmp_path, "-n", "--quiet", "rules", "--config", "datasets=[shuttle]", "n_splits=2"
    )
    assert run.returncode == 0, run.stderr
    counts = rule_counts(run.stdout + run.stderr)
    assert (
        counts["download_faces"] == counts["extract_faces"] == 1 and counts["train_landmarks"] == 2
    )
    assert counts["train_predictor"] == 4


@pytest.mark.pipeline
def test_snakemake_names_a_missing_faces_mirror(tmp_path):
    run = snakemake(
        tmp_path, "-n", "--config", f"faces_mirror={tmp_path / 'nowhere'}", "datasets=[shuttle]"
    )
    assert (
        run.returncode != 0
        and "faces_mirror" in run.stdout + run.stderr
        and "nowhere" in run.stdout + run.stderr
    )


LANDMARK_TARGETS = [
    "results/datasets/300w/summary.csv",
    "results/tables/landmarks_note.md",
    "results/figures/rc_300w.png",
    "results/figures/learning_curve_300w.png",
    "results/figures/faces_300w.png",
]


@pytest.mark.slow
@needs_faces
def test_landmark_rules_run_end_to_end_on_a_few_faces(tmp_path):
    """The landmark rules only (targets), 100 faces, 1 split, a tiny predictor: ~30 s on 2 cores."""
    (tmp_path / "small.yaml").write_text(
        "landmarks:\n  max_faces: 100\n  learning_curve_sizes: [10]\n  predictor_options_grid:\n"
        "    - {cascade_depth: 4, tree_depth: 3, num_trees_per_cascade_level: 50, oversampling_amount: 2}\n"
        "C_score: [1, 100]\n"
    )
    run = snakemake(
        tmp_path,
        *LANDMARK_TARGETS,
        "--cores",
        "2",
        "--configfile",
        str(tmp_path / "small.yaml"),
        "--config",
        f"faces_mirror={FACES}",
        "datasets=[shuttle]",
        "n_splits=1",
    )
    assert run.returncode == 0, run.stderr[-5000:]
    for path in LANDMARK_TARGETS:
        assert (tmp_path / path).is_file(), path
    summary = pd.read_csv(tmp_path / "results/datasets/300w/summary.csv")
    assert list(summary.columns) == SUMMARY_COLUMNS
    assert (
        sorted(summary["score"]) == ["face_score", "reg", "sele"]
        and (summary["dataset"] == "300w").all()
    )
    assert summary["aurc"].between(0, 100).all() and summary["n_test"].between(17, 23).all()
    assert (tmp_path / "results/benchmarks/train_landmarks/300w/split_0.tsv").is_file()
    assert (tmp_path / "results/benchmarks/train_predictor/300w/split_0_option_0.tsv").is_file()
    assert not list(
        (tmp_path / "results/landmarks/300w").glob("predictor_*")
    )  # temporary models removed


@pytest.fixture(scope="module")
def synthetic_faces(tmp_path_factory):
    """Twenty synthetic 64 x 64 faces in a 300-W-like folder (the 68 points drawn white on noise),
    stand-in detections (the HOG detector finds no face in them: each face's fallback box and a
    seeded score) and one split: what the rules detect_faces and make_face_splits stage."""
    from PIL import Image

    from rejectopt._io import save_npz
    from rejectopt.landmarks._detect import fallback_box

    root = tmp_path_factory.mktemp("synthetic_faces")
    (root / "afw").mkdir()
    rng = np.random.default_rng(0)
    base = np.c_[np.linspace(16, 48, 68), 32 + 10 * np.sin(np.linspace(0, 2 * np.pi, 68))]
    truths = [base + rng.normal(0, 2, 2) for _ in range(20)]
    for k, truth in enumerate(truths):
        image = rng.integers(0, 64, size=(64, 64)).astype(np.uint8)
        image[truth[:, 1].round().astype(int), truth[:, 0].round().astype(int)] = 255
        Image.fromarray(image).save(root / "afw" / f"{k:02d}.png")
        write_pts(root / "afw" / f"{k:02d}.pts", truth + 1)
    faces = {"folder": str(root), "subsets": ["afw"], "max_faces": None}
    faces_df = E.select_faces(**faces)
    save_npz(
        root / "detections.npz",
        box=np.stack([fallback_box(t) for t in truths]),
        score=rng.normal(size=20),
        name=faces_df["name"].to_numpy(str),
        subset=faces_df["subset"].to_numpy(str),
    )
    splits = E.face_splits_file(
        root / "splits.npz", faces=faces, ratios=(0.3, 0.1, 0.3, 0.1, 0.2), n_splits=1, seed=0
    )
    assert sorted(splits) == [f"{p}_0" for p in ("trn1", "trn2", "tst", "val1", "val2")]
    return root, faces


def test_split_inputs_are_the_staged_faces_detections_and_split(synthetic_faces):
    root, faces = synthetic_faces
    faces_df, detections, parts, seed = E.load_split_inputs(
        faces, root / "detections.npz", root / "splits.npz", 0, master_seed=0
    )
    assert len(faces_df) == 20 and seed == E.split_seed(0, 0)
    assert {part: len(rows) for part, rows in parts.items()} == {
        "trn1": 6,
        "val1": 2,
        "trn2": 6,
        "val2": 2,
        "tst": 4,
    }
    assert sorted(detections) == ["box", "name", "score", "subset"]
    with pytest.raises(
        ValueError, match="detections.npz does not match the face list; rerun detect_faces"
    ):
        E.load_detections(root / "detections.npz", faces_df.iloc[::-1])


def test_the_pipeline_files_on_synthetic_faces_give_the_contracts_split(synthetic_faces, tmp_path):
    """Without the 300-W copy: the option grid trained as separate jobs (train_predictor_file), then
    run_split_files, equal the contract's run_split from the same staged files."""
    root, faces = synthetic_faces
    grid = [
        {
            "cascade_depth": 2,
            "tree_depth": 2,
            "num_trees_per_cascade_level": 5,
            "oversampling_amount": k,
        }
        for k in (1, 2)
    ]
    models = [tmp_path / f"model_{k}.dat" for k in range(2)]
    errors = [tmp_path / f"error_{k}.json" for k in range(2)]
    for k in range(2):
        error = E.train_predictor_file(
            root / "detections.npz",
            root / "splits.npz",
            0,
            k,
            models[k],
            errors[k],
            faces=faces,
            options_grid=grid,
            trainer_threads=1,
            seed=0,
        )
        written = json.loads(errors[k].read_text())
        assert (
            sorted(written) == ["option", "options", "val1_error"]
            and written["val1_error"] == error
        )
    out = E.run_split_files(
        root / "detections.npz",
        root / "splits.npz",
        0,
        tmp_path / "result.npz",
        tmp_path / "curve.csv",
        faces=faces,
        seed=0,
        options_grid=grid,
        C_grid=[1.0],
        learning_curve_sizes=[],
        with_coordinates=False,
        pretrained=False,
        score_jobs=1,
        models=models,
        errors=errors,
    )
    assert (
        out.rows["score"].tolist() == ["face_score", "reg", "sele"]
        and (out.rows["n_test"] == 4).all()
    )
    assert E.load_landmark_result(tmp_path / "result.npz")["aurc"] == out.result["aurc"]
    # rule train_landmarks' one script: run_rule by the rule's name writes the very same bytes
    from rejectopt.pipeline import run_rule

    run_rule(
        "train_landmarks",
        {
            "detections": str(root / "detections.npz"),
            "splits": str(root / "splits.npz"),
            "models": [str(m) for m in models],
            "errors": [str(e) for e in errors],
        },
        {"result": str(tmp_path / "rule.npz"), "curve": str(tmp_path / "rule.csv")},
        {"split": "0"},
        1,
        {
            "faces": faces,
            "options_grid": grid,
            "C_grid": [1.0],
            "learning_curve_sizes": [],
            "with_coordinates": False,
            "pretrained": False,
            "score_jobs": 1,
            "seed": 0,
        },
    )
    for made, direct in (("rule.npz", "result.npz"), ("rule.csv", "curve.csv")):
        assert (tmp_path / made).read_bytes() == (tmp_path / direct).read_bytes(), made
    chosen = E.settings(
        {
            "C_score": [1.0],
            "landmarks": {"predictor_options_grid": grid, "learning_curve_sizes": []},
        }
    )
    chosen["faces"], chosen["score_jobs"] = faces, 1
    staged = {E.STAGED_DETECTIONS: root / "detections.npz"}
    staged.update({f"predictor/{k}": models[k] for k in range(2)})
    staged.update({f"val1_error/{k}": errors[k] for k in range(2)})
    contract = E.run_split(
        SplitInputs(E.DATASET, 0, E.NAME, 0, None, root / "splits.npz", staged), chosen
    )
    pd.testing.assert_frame_equal(contract.rows, out.rows)


def test_learning_curve_table_is_the_mean_and_std_over_splits():
    def curve(sele, reg):
        return pd.DataFrame(
            {
                "m": [50, 50, 100, 100],
                "method": ["sele", "reg"] * 2,
                "C": 1.0,
                "test_aurc": sele + reg,
            }
        )

    table = E.learning_curve_table(
        {0: curve([4.0, 3.0], [5.0, 3.5]), 1: curve([5.0, 3.2], [6.0, 3.6])}
    )
    assert table[["method", "m", "count"]].values.tolist() == [
        ["reg", 50, 2],
        ["reg", 100, 2],
        ["sele", 50, 2],
        ["sele", 100, 2],
    ]
    np.testing.assert_allclose(table["mean"], [3.1, 3.55, 4.5, 5.5])
    np.testing.assert_allclose(table["std"], [0.141421, 0.070711, 0.707107, 0.707107], atol=1e-6)
