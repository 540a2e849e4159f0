"""Rule landmark_figures: RC curves (Fig. 4a), learning curve (Fig. 4b), most / least certain faces (Fig. 5)."""

import pandas as pd

from _logging import log_to

from rejectopt._io import atomic_path
from rejectopt.landmarks import faces_figure, learning_curve_figure, load_landmark_result, rc_figure, select_faces

log_to(snakemake.log[0])
splits = snakemake.params.splits
pretrained = snakemake.params.pretrained
first = load_landmark_result(snakemake.input.results[0])  # Fig. 4a and 5 show the first split
curves = {k: pd.read_csv(path) for k, path in zip(splits, snakemake.input.curves)}
figures = {
    "rc": rc_figure(first, splits[0], pd.read_csv(snakemake.input.summary), pretrained=pretrained),
    "learning_curve": learning_curve_figure(curves, pretrained=pretrained),
    "faces": faces_figure(select_faces(**snakemake.params.faces), first, splits[0], pretrained=pretrained),
}
for name, figure in figures.items():
    with atomic_path(snakemake.output[name]) as tmp:
        figure.savefig(tmp, format="png", dpi=150)
