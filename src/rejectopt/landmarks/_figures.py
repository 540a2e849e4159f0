"""The landmark experiment's figures (the paper's Fig. 4a, 4b and 5)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ._faces import load_image, per_landmark, read_pts
from ._experiment import PRETRAINED_WARNING, _mean_std, _METHOD_LABELS, _METHODS, learning_curve_table

__all__ = [
    "rc_figure",
    "learning_curve_figure",
    "faces_figure",
]


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

    from ..metrics import rc_curve

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
