"""The landmark experiment rendered (rejectopt.pipeline.report.landmarks): the note, Fig. 4a, 4b and 5, in the
normal and the demo mode; and its rows beside the paper's (rejectopt.pipeline.report.paper_comparison).

The numbers are tests/test_experiments_landmarks.py's.
"""

from pathlib import Path

import numpy as np
import pandas as pd
from support import fake_faces, fake_result

from rejectopt._io import save_csv
from rejectopt.landmarks import per_landmark
from rejectopt.pipeline.experiments.landmarks import (
    landmark_summary,
    load_landmark_result,
    save_landmark_result,
)
from rejectopt.pipeline.report import comparison_markdown, format_number, paper_comparison
from rejectopt.pipeline.report import landmarks as R
from rejectopt.pipeline.tables import landmarks_spec


def test_figures_and_note_render(tmp_path):
    from matplotlib.figure import Figure

    results = {0: fake_result(seed=0), 1: fake_result(seed=1)}
    summary = landmark_summary(results)

    def curve(s):
        return pd.DataFrame(
            {
                "m": [10, 10, 10, 24, 24, 24],
                "method": ["sele", "reg", "face_score"] * 2,
                "C": 1.0,
                "test_aurc": np.arange(6.0) + s,
            }
        )

    curves = {0: curve(0), 1: curve(1)}
    faces = fake_faces(tmp_path)
    for pretrained in (False, True):
        figures = [
            R.landmark_rc_figure(results[0], 0, summary, pretrained=pretrained),
            R.learning_curve_figure(curves, pretrained=pretrained),
            R.faces_figure(faces, results[0], 0, pretrained=pretrained),
        ]
        for k, figure in enumerate(figures):
            assert isinstance(figure, Figure)
            figure.savefig(tmp_path / f"{k}.png", format="png", dpi=50)
            titles = [ax.get_title() for ax in figure.axes] + [
                figure._suptitle.get_text() if figure._suptitle else ""
            ]
            assert any("optimistic" in t for t in titles) == pretrained
        note = R.landmarks_note(summary, curves, results, n_faces=24, pretrained=pretrained)
        assert ("optimistic" in note) == pretrained and "| mean ± std |" in note
    assert len([ax for ax in figures[2].axes if ax.images]) == 20
    assert "split 0" in figures[0].axes[0].get_title()
    # every cell of the per-split table sits under its own method's label (a hard-coded header once
    # swapped SELE and REG when the registry's order changed)
    lines = note.splitlines()
    header = next(line for line in lines if line.startswith("| split |"))
    columns = [c.strip() for c in header.strip("|").split("|")]
    row = [
        c.strip()
        for c in next(line for line in lines if line.startswith("| 0 |")).strip("|").split("|")
    ]
    assert len(row) == len(columns)
    for score, label in (("sele", "SELE"), ("reg", "REG"), ("face_score", "Face score")):
        aurc = summary[(summary.split == 0) & (summary.score == score)]["aurc"].item()
        assert row[columns.index(label)] == f"{aurc:.2f}", (score, header, row)
        if score != "face_score":
            assert row[columns.index(f"C {label}")] == f"{results[0]['C'][score]:g}"


def test_paper_comparison_handles_the_landmark_rows_without_paper_std():
    summary = landmark_summary({0: fake_result(seed=0), 1: fake_result(seed=1)})
    summary.loc[summary.score == "sele", "aurc"] = [2.7, 2.7]  # within 10% of 2.6
    summary.loc[summary.score == "reg", "aurc"] = [3.5, 3.5]  # 25% off 2.8
    reference = pd.read_csv(
        Path(__file__).resolve().parents[1] / "workflow/resources/reference_results.csv"
    )
    comparison = paper_comparison(summary, reference)
    cells = comparison[comparison.task == "landmarks"].set_index("score")
    assert cells["paper_std"].isna().all()
    assert bool(cells.loc["sele", "agrees"]) and not bool(cells.loc["reg", "agrees"])
    assert bool(cells.loc["face_score", "agrees"])
    markdown = comparison_markdown(comparison, [], ["300w"], [])
    assert (
        landmarks_spec(["sele", "reg"]).title in markdown
        and "landmarks / dlib: 2 of 3 cells agree" in markdown
    )


def _curve(seed):
    return pd.DataFrame(
        {
            "m": [10, 10, 10, 24, 24, 24],
            "method": ["sele", "reg", "face_score"] * 2,
            "C": 1.0,
            "test_aurc": np.arange(6.0) + seed,
        }
    )


def test_the_rules_files_hold_the_rendered_numbers(tmp_path):
    """summarize_landmarks and landmark_figures' library calls: the summary and the note of the saved
    results, and three PNG figures."""
    (tmp_path / "faces" / "s").mkdir(parents=True)
    fake_faces(tmp_path / "faces" / "s")
    faces = {"folder": str(tmp_path / "faces"), "subsets": ["s"], "max_faces": None}
    result_paths = [tmp_path / f"split_{k}.npz" for k in (0, 1)]
    curve_paths = [tmp_path / f"curve_{k}.csv" for k in (0, 1)]
    for k in (0, 1):
        save_landmark_result(result_paths[k], fake_result(seed=k))
        save_csv(
            _curve(k), curve_paths[k]
        )  # as the landmark job writes it, with its content record
    summary = R.landmarks_summary_files(
        result_paths,
        curve_paths,
        tmp_path / "summary.csv",
        tmp_path / "note.md",
        splits=[0, 1],
        faces=faces,
        pretrained=False,
    )
    results = {k: load_landmark_result(result_paths[k]) for k in (0, 1)}
    pd.testing.assert_frame_equal(summary, landmark_summary(results))
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "summary.csv"), summary, check_dtype=False)
    curves = {k: pd.read_csv(curve_paths[k]) for k in (0, 1)}
    assert (tmp_path / "note.md").read_text() == R.landmarks_note(
        summary, curves, results, 24, False
    )
    outputs = {name: tmp_path / f"{name}.png" for name in ("rc", "learning_curve", "faces")}
    R.landmark_figure_files(
        tmp_path / "summary.csv",
        result_paths,
        curve_paths,
        outputs,
        splits=[0, 1],
        faces=faces,
        pretrained=True,
    )
    for path in outputs.values():
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_faces_figure_puts_the_highest_faces_on_their_own_rows_for_any_n(tmp_path):
    """With n not a multiple of the 5 columns (fewer test faces, max_faces), the title once read
    'rows 1-0 ... rows 1-1'; the lowest faces fill the top rows, the highest start a new row."""
    result, faces = fake_result(seed=0), fake_faces(tmp_path)
    order = np.argsort(np.asarray(result["uncertainty_sele"]), kind="stable")
    for n, rows_each in [(2, 1), (7, 2), (10, 2)]:
        figure = R.faces_figure(faces, result, 0, n=n)
        grid = [ax for ax in figure.axes if ax.get_subplotspec() is not None]
        assert len(grid) == 2 * rows_each * 5
        shown = [i for i, ax in enumerate(grid) if ax.images]
        assert shown == list(range(n)) + list(range(rows_each * 5, rows_each * 5 + n))
        title = figure._suptitle.get_text()
        assert f"rows 1-{rows_each} the {n} faces with the lowest" in title
        assert f"rows {rows_each + 1}-{2 * rows_each} the {n} with the highest" in title
        losses = per_landmark(result["loss"])  # the highest rows start with the most uncertain face
        assert grid[rows_each * 5].get_title() == f"loss {format_number(losses[order[-1]])}"
        assert grid[0].get_title() == f"loss {format_number(losses[order[0]])}"
