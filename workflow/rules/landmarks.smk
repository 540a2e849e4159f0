# Facial landmarks with a reject option (Section 5.2.3, Fig. 4-5): DLIB's 68-point shape
# predictor on 300-W, baseline = negated face-detector score, SELE / REG on HOG features
# (rejectopt.pipeline.experiments.landmarks; rendering: rejectopt.pipeline.report.landmarks).
#
# When it runs: faces_mirror set -> from that folder; no mirror at all -> the official archive
# (download_faces + extract_faces); data_mirror set, or only custom datasets, without faces_mirror
# -> skipped, with a warning.

from rejectopt.pipeline import MIRROR_SUBSETS
from rejectopt.pipeline.experiments import landmarks as landmarks_experiment

# The block landmarks: with its defaults, the faces the run uses (faces_mirror, else the extracted
# official archive) and the experiment's fixed thread counts.
LANDMARKS = landmarks_experiment.settings(config)
FACES_MIRROR = config.get("faces_mirror")
if FACES_MIRROR is not None and not Path(FACES_MIRROR).is_dir():
    raise ValueError(
        f"config faces_mirror={FACES_MIRROR!r} is not a folder; point it at a folder holding the 300-W faces "
        f"in {', '.join(f'{s}/' for s in MIRROR_SUBSETS)} (<name>.jpg + <name>.pts), or set it to null to download "
        "the official archive"
    )


LANDMARKS_MODE = landmarks_mode(
    LANDMARKS["enabled"],
    FACES_MIRROR,
    MIRROR,
    custom_only=all(d in PLAN.custom for d in DATASETS),
)
FACES_ARCHIVE_DIR = LANDMARKS["archive_dir"]
FACES = LANDMARKS["faces"]
FACES_INPUT = [] if LANDMARKS_MODE == "mirror" else [FACES_ARCHIVE_DIR]
LANDMARK_DIR = "results/landmarks/300w"
# dlib's trainer threads and SELE's n_jobs (with the BLAS thread limit): fixed, not the job's cores,
# as the results depend on them (rejectopt.pipeline.experiments.landmarks.TRAINER_THREADS / SCORE_JOBS).
# Parallelism comes from the jobs and their worker processes instead (results independent of --cores).
LANDMARK_TRAINER_THREADS = LANDMARKS["trainer_threads"]
LANDMARK_SCORE_JOBS = LANDMARKS["score_jobs"]
# One predictor per split and option set of the grid (train_predictor), unless the pretrained model is used.
PREDICTOR_OPTIONS = range(
    0 if LANDMARKS["pretrained"] else len(LANDMARKS["predictor_options_grid"])
)


# Scheduling (priority, higher first): the longest trainings first (so that no long one is left for
# the end), and a split's train_landmarks as soon as its predictors are there (it interleaves with the
# other trainings and frees their ~65 MB models). A priority function needs a Snakemake with
# Rule.expand_priority (9.27 has it); without, every training gets 1 (same results, other order).
TRAIN_PREDICTOR_PRIORITY = (
    train_predictor_priority if hasattr(snakemake.rules.Rule, "expand_priority") else 1
)

if LANDMARKS_MODE:
    SUMMARIES += ["results/datasets/300w/summary.csv"]
    BENCHMARKS += (
        ["results/benchmarks/detect_faces/300w/detect.tsv"]
        + [
            f"results/benchmarks/train_predictor/300w/split_{k}_option_{o}.tsv"
            for k in SPLITS
            for o in PREDICTOR_OPTIONS
        ]
        + [f"results/benchmarks/train_landmarks/300w/split_{k}.tsv" for k in SPLITS]
    )
    TARGETS += [
        "results/datasets/300w/summary.csv",
        "results/tables/landmarks_note.md",
        "results/figures/rc_300w.png",
        "results/figures/learning_curve_300w.png",
        "results/figures/faces_300w.png",
    ]


rule download_faces:
    output:
        f"{RAW_DIR}/300w/ibug_300W_large_face_landmark_dataset.tar.gz",
    log:
        "logs/download_faces/300w.log",
    conda:
        "../../envs/rejectopt.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=120,
    script:
        "../scripts/download_faces.py"


rule extract_faces:
    input:
        f"{RAW_DIR}/300w/ibug_300W_large_face_landmark_dataset.tar.gz",
    output:
        directory(FACES_ARCHIVE_DIR),
    log:
        "logs/extract_faces/300w.log",
    conda:
        "../../envs/rejectopt.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=30,
    script:
        "../scripts/extract_faces.py"


rule detect_faces:
    input:
        FACES_INPUT,
    output:
        f"{LANDMARK_DIR}/detections.npz",
    log:
        "logs/detect_faces/300w.log",
    benchmark:
        "results/benchmarks/detect_faces/300w/detect.tsv"
    conda:
        "../../envs/rejectopt.yaml"
    # Worker processes over the faces (dlib's detector is single-threaded; results do not depend on it).
    threads: 2
    resources:
        mem_mb=2000,
        runtime=lambda w: 30 if LANDMARKS_MODE == "mirror" else 240,
    params:
        faces=FACES,
    script:
        "../scripts/detect_faces.py"


rule make_face_splits:
    input:
        FACES_INPUT,
    output:
        "results/data/300w/splits.npz",
    log:
        "logs/make_face_splits/300w.log",
    conda:
        "../../envs/rejectopt.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        faces=FACES,
        ratios=LANDMARKS["split_ratios"],
        n_splits=config["n_splits"],
        seed=config["seed"],
    script:
        "../scripts/make_face_splits.py"


# One cell of the shape-predictor option grid on one split: train on Trn1, error on Val1. The cells
# are separate jobs so that a machine with more cores trains the grids of all splits side by side.
# threads = dlib's LANDMARK_TRAINER_THREADS (1): dlib's trainer keeps a second thread busy only in
# part (2 threads: 40 s and 57 CPU-s for one training; 1 thread: 44 s and 45 CPU-s), so the
# grid's jobs run side by side on one core each.
# The model (~65 MB) is temporary: train_landmarks keeps the best one's results.
rule train_predictor:
    input:
        FACES_INPUT,
        detections=f"{LANDMARK_DIR}/detections.npz",
        splits="results/data/300w/splits.npz",
    output:
        model=temp(f"{LANDMARK_DIR}/predictor_split_{{split}}_option_{{option}}.dat"),
        error=temp(f"{LANDMARK_DIR}/predictor_split_{{split}}_option_{{option}}.json"),
    log:
        "logs/train_predictor/300w/split_{split}_option_{option}.log",
    benchmark:
        "results/benchmarks/train_predictor/300w/split_{split}_option_{option}.tsv"
    wildcard_constraints:
        option=r"\d+",
    priority: TRAIN_PREDICTOR_PRIORITY
    conda:
        "../../envs/rejectopt.yaml"
    threads: LANDMARK_TRAINER_THREADS
    resources:
        mem_mb=lambda w: 2000 if LANDMARKS_MODE == "mirror" else 12000,
        runtime=lambda w: 30 if LANDMARKS_MODE == "mirror" else 480,
    params:
        # the keyword arguments of the library call
        # (rejectopt.pipeline.experiments.landmarks.run_rule)
        faces=FACES,
        options_grid=LANDMARKS["predictor_options_grid"],
        trainer_threads=LANDMARK_TRAINER_THREADS,
        seed=config["seed"],
    script:
        "../scripts/train_predictor.py"


use rule experiment_split from experiment_template as train_landmarks with:
    input:
        FACES_INPUT,
        detections=f"{LANDMARK_DIR}/detections.npz",
        splits="results/data/300w/splits.npz",
        models=expand(
            f"{LANDMARK_DIR}/predictor_split_{{{{split}}}}_option_{{option}}.dat",
            option=PREDICTOR_OPTIONS,
        ),
        errors=expand(
            f"{LANDMARK_DIR}/predictor_split_{{{{split}}}}_option_{{option}}.json",
            option=PREDICTOR_OPTIONS,
        ),
    output:
        result=f"{LANDMARK_DIR}/split_{{split}}.npz",
        curve=f"{LANDMARK_DIR}/learning_curve_split_{{split}}.csv",
    log:
        "logs/train_landmarks/300w/split_{split}.log",
    benchmark:
        "results/benchmarks/train_landmarks/300w/split_{split}.tsv"
    priority: 10
    # threads = worker processes fitting the learned scores of the learning-curve points side by
    # side (results independent of their number); inside each, SELE's fixed LANDMARK_SCORE_JOBS
    # threads add a second core only in its short parallel sections.
    threads: 2
    resources:
        mem_mb=lambda w: 4000 if LANDMARKS_MODE == "mirror" else 16000,
        runtime=lambda w: 30 if LANDMARKS_MODE == "mirror" else 480,
    params:
        faces=FACES,
        options_grid=LANDMARKS["predictor_options_grid"],
        C_grid=LANDMARKS["C_grid"],
        learning_curve_sizes=LANDMARKS["learning_curve_sizes"],
        with_coordinates=LANDMARKS["with_coordinates"],
        pretrained=LANDMARKS["pretrained"],
        score_jobs=LANDMARK_SCORE_JOBS,
        seed=config["seed"],


rule summarize_landmarks:
    input:
        results=expand(f"{LANDMARK_DIR}/split_{{split}}.npz", split=SPLITS),
        curves=expand(
            f"{LANDMARK_DIR}/learning_curve_split_{{split}}.csv", split=SPLITS
        ),
    output:
        summary="results/datasets/300w/summary.csv",
        note=report(
            "results/tables/landmarks_note.md",
            caption="../report/landmarks.rst",
            category="Landmarks (300-W)",
            labels={"item": "note"},
        ),
    log:
        "logs/summarize_landmarks/300w.log",
    conda:
        "../../envs/rejectopt.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        splits=SPLITS,
        faces=FACES,
        pretrained=LANDMARKS["pretrained"],
    script:
        "../scripts/summarize_landmarks.py"


rule landmark_figures:
    input:
        FACES_INPUT,
        summary="results/datasets/300w/summary.csv",
        results=expand(f"{LANDMARK_DIR}/split_{{split}}.npz", split=SPLITS),
        curves=expand(
            f"{LANDMARK_DIR}/learning_curve_split_{{split}}.csv", split=SPLITS
        ),
    output:
        rc=report(
            "results/figures/rc_300w.png",
            caption="../report/landmarks.rst",
            category="Landmarks (300-W)",
            labels={"item": "RC curves (Fig. 4a)"},
        ),
        learning_curve=report(
            "results/figures/learning_curve_300w.png",
            caption="../report/landmarks.rst",
            category="Landmarks (300-W)",
            labels={"item": "learning curve (Fig. 4b)"},
        ),
        faces=report(
            "results/figures/faces_300w.png",
            caption="../report/landmarks.rst",
            category="Landmarks (300-W)",
            labels={"item": "most / least uncertain faces (Fig. 5)"},
        ),
        copies=[
            path
            for name in ("rc", "learning_curve", "faces")
            for path in figure_copies(f"results/figures/{name}_300w.png")
        ],
    log:
        "logs/landmark_figures/300w.log",
    conda:
        "../../envs/rejectopt.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=5,
    params:
        splits=SPLITS,
        faces=FACES,
        pretrained=LANDMARKS["pretrained"],
        formats=FIGURE_FORMATS,
    script:
        "../scripts/landmark_figures.py"
