"""Intermediate CSV files carry a record of their content (rejectopt._io.save_csv), and what reads them
refuses one that changed: an experiment's rows, a dataset's summary, the run's results/summary.csv. A
summary with a gap is named by what it lacks (rejectopt.pipeline.tables.metric_table)."""

import hashlib

import numpy as np
import pandas as pd
import pytest
from support import REPO

from rejectopt._io import (
    IntermediateFileError,
    csv_record_path,
    load_csv_bytes,
    save_csv,
    write_csv,
)
from rejectopt.pipeline.report import rankings_markdown, read_summary
from rejectopt.pipeline.tables import TableSpec, load_csv, metric_table

#: The demo run's summary (two datasets, one split), as the pipeline writes it.
BASELINE = REPO / "tests" / "data" / "pipeline_baseline" / "summary.csv"


@pytest.fixture
def frame():
    rng = np.random.default_rng(0)
    return pd.DataFrame(
        {
            "dataset": ["iris"] * 4,
            "split": [0, 0, 1, 1],
            "method": ["a", "b", "a", "b"],
            "value": rng.random(4),
            "note": ["x", "", "z,w", None],
        }
    )


def test_the_csv_is_byte_for_byte_what_pandas_writes_and_its_record_is_its_sha256(tmp_path, frame):
    """The outputs stay as before (the demo's summary and tables are compared byte for byte): the record
    lives beside the file, and is the sha256 of its bytes."""
    save_csv(frame, tmp_path / "rows.csv", provenance={"split": 1})
    write_csv(frame, tmp_path / "plain.csv")
    data = (tmp_path / "rows.csv").read_bytes()
    assert data == (tmp_path / "plain.csv").read_bytes()
    assert csv_record_path(tmp_path / "rows.csv") == tmp_path / "rows.csv.record"
    assert hashlib.sha256(data).hexdigest() in (tmp_path / "rows.csv.record").read_text()
    assert load_csv_bytes(tmp_path / "rows.csv", expect={"split": 1}) == data
    pd.testing.assert_frame_equal(
        load_csv(tmp_path / "rows.csv"), pd.read_csv(tmp_path / "plain.csv")
    )


@pytest.mark.parametrize("damage", ["edit", "truncate", "delete_row", "empty"])
def test_a_changed_csv_is_refused_naming_it_both_checksums_and_forcerun(tmp_path, frame, damage):
    path = tmp_path / "split_0.csv"
    save_csv(frame, path)
    text = path.read_text()
    recorded = hashlib.sha256(text.encode()).hexdigest()
    lines = text.splitlines(keepends=True)
    damaged = {
        "edit": text.replace(str(frame["value"][2])[:6], "0.9999", 1),
        "truncate": text[: len(text) - 7],  # mid-row, as a full disk leaves it
        "delete_row": "".join(lines[:2] + lines[3:]),
        "empty": "",
    }[damage]
    assert damaged != text
    path.write_text(damaged)
    with pytest.raises(IntermediateFileError) as err:
        load_csv(path)
    message = str(err.value)
    assert message.startswith(
        f"{path}: its content changed after it was written (recorded sha256 {recorded}, found "
        f"{hashlib.sha256(damaged.encode()).hexdigest()}, {len(damaged.encode())} bytes)"
    )
    assert f"snakemake --forcerun {path}" in message


def test_a_csv_without_its_record_or_with_an_unreadable_one_or_made_from_other_inputs_is_refused(
    tmp_path, frame
):
    path = tmp_path / "rows.csv"
    frame.to_csv(path, index=False)  # written by hand: no record
    with pytest.raises(
        IntermediateFileError,
        match=r"rows.csv: no content record \(rows.csv.record is missing beside "
        r"it\).*snakemake --forcerun",
    ):
        load_csv(path)
    save_csv(frame, path, provenance={"data_sha256": "a" * 64})
    with pytest.raises(
        IntermediateFileError,
        match=r"made from data_sha256 'a+', but this step's is 'b+': the file is "
        "stale",
    ):
        load_csv(path, expect={"data_sha256": "b" * 64})
    csv_record_path(path).write_text("{}")
    with pytest.raises(
        IntermediateFileError, match=r"its content record .*rows.csv.record is unreadable"
    ):
        load_csv(path)
    with pytest.raises(FileNotFoundError):
        load_csv(tmp_path / "missing.csv")


# --- the run's summary: damaged after it was written, then the tables made again ----------------------


@pytest.fixture
def summary_file(tmp_path):
    """The demo's summary, written as collect_summary writes it (with its record)."""
    path = tmp_path / "summary.csv"
    save_csv(
        pd.read_csv(BASELINE, float_precision="round_trip"), path
    )  # exact on every pandas version
    assert path.read_bytes() == BASELINE.read_bytes()  # the bytes are the recorded baseline's
    return path


def _spec(summary):
    """The table of the baseline's classification classifier: its methods as the summary has them."""
    rows = summary[summary["dataset"] == "sattelite"]
    classifier = rows["classifier"].iloc[0]
    return TableSpec(
        "t",
        "classification",
        classifier,
        tuple(dict.fromkeys(rows.loc[rows.classifier == classifier, "score"])),
        "T",
        False,
    )


def test_a_summary_truncated_mid_row_or_missing_a_score_is_refused_by_the_table_rules(summary_file):
    """What make_table, rankings, plot_table and paper_comparison read (read_summary(recorded=True)): a
    damaged summary is named with the fix, not met as KeyError 'reg' in a table."""
    text = summary_file.read_text()
    spec = _spec(pd.read_csv(summary_file))
    assert read_summary(summary_file, recorded=True).equals(pd.read_csv(BASELINE))
    dropped = spec.methods[-1]
    for damaged in (
        text[: len(text) - 5],
        "".join(line for line in text.splitlines(keepends=True) if f",{dropped}," not in line),
    ):
        summary_file.write_text(damaged)
        with pytest.raises(
            IntermediateFileError,
            match=rf"^{summary_file}: its content changed after it was written.*"
            rf"snakemake --forcerun {summary_file}",
        ):
            read_summary(summary_file, recorded=True)


def test_a_summary_lacking_a_score_or_a_split_is_named_by_what_it_lacks(summary_file):
    """The library's route (no record asked): metric_table names the gap, not KeyError or 'need at least 2'."""
    summary = pd.read_csv(summary_file)
    spec = _spec(summary)
    complete = metric_table(summary, spec)
    assert [m for m, _ in complete.columns[::2]][: len(spec.methods)] == list(spec.methods)
    dropped = spec.methods[1]
    gap = summary[
        ~(
            (summary.dataset == "sattelite")
            & (summary.classifier == spec.classifier)
            & (summary.score == dropped)
        )
    ]
    expected = (
        f"summary lacks rows of classifier {spec.classifier!r} (t): sattelite {dropped} split(s) 0; the "
        "summary is incomplete (truncated, or a score's rows deleted): make it again from the dataset "
        "summaries (in the pipeline: `snakemake --forcerun results/summary.csv` and the run's usual options)"
    )
    with pytest.raises(ValueError) as err:
        metric_table(gap, spec)
    assert str(err.value) == expected
    with pytest.raises(ValueError, match=f"sattelite {dropped} split"):
        rankings_markdown(gap, [spec], ["aurc"])
    # two splits, one of them lost for one method: the mean would quietly be over one split
    two = pd.concat([summary, summary.assign(split=1)], ignore_index=True)
    assert metric_table(two, spec)[("n_splits", "")].loc["sattelite"] == 2
    lost = two.drop(
        two.index[
            (two.split == 1)
            & (two.score == spec.methods[0])
            & (two.dataset == "sattelite")
            & (two.classifier == spec.classifier)
        ]
    )
    with pytest.raises(ValueError, match=rf"sattelite {spec.methods[0]} split\(s\) 1;"):
        metric_table(lost, spec)
