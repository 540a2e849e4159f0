"""The 7 download-only datasets and bikeshare, read from small excerpts through the pipeline's own code.

For covtype, codrna, ijcnn, sensorless, superconduct, msd and facebook no raw
file is in the project's offline mirror, so their readers never met real bytes
otherwise; bikeshare's hour.csv is in that mirror but not in the repository (the
demo mirror holds abalone, sattelite and shuttle), so a clone has only this.  The
excerpts in tests/data/excerpts/ (provenance in MANIFEST.tsv: "real" ones are
the beginning of public copies of the raw files, "format-faithful" ones follow
the published format where no copy exists) are packaged (tests/excerpts.py) exactly as the
official URL serves them (gzip, bzip2, zip with the official member names,
plain), served in place of the network, fetched with ``fetch_file`` (download,
member extraction / decompression, lock file) and parsed with ``parse_raw``;
``prepare_dataset`` then reads the cached raw files and refuses them only for
their size.  Every array is compared with an independent reading of the plain
text done here with the ``csv`` module and ``str.split``.
"""

from __future__ import annotations

import csv
import dataclasses
import hashlib
import io
import lzma
import re
import runpy
import urllib.error
import urllib.request
from pathlib import Path

import numpy as np
import pytest
from excerpts import (
    EXCERPT_SHAPES,
    EXCERPTS,
    UCI,
    crlf,
    edit_cell,
    excerpt,
    official_downloads,
    zipped,
)
from support import mirror_folder

from rejectopt.datasets import ChecksumError, DatasetSpec, _prepare, get_spec, prepare_dataset
from rejectopt.datasets._fetch import fetch_file
from rejectopt.datasets._parsers import equal_frequency_bins
from rejectopt.datasets._prepare import parse_raw
from rejectopt.datasets._trust import read_lock

DATASETS = (
    "covtype",
    "codrna",
    "ijcnn",
    "sensorless",
    "superconduct",
    "msd",
    "facebook",
    "bikeshare",
)
MAX_EXCERPT_BYTES = 200_000
#: Real excerpts cut from a file of the full data mirror (CR removed for storage) -> (mirror copy, sha256
#: of the excerpt with CRLF restored: that of the copy's first lines, as UCI's zips hold them).
MIRROR_PREFIXES = {
    "facebook/Features_TestSet.csv": (
        "facebook/Features_TestSet.csv.xz",
        "b20462638a7cf344761b217ae5926036c63fb6eba2c82ca893a315e446983cb4",
    ),
    "bikeshare/hour.csv": (
        "bikeshare/hour.csv.xz",
        "bbb0770d0762eed027851234ba622795e5fda68e7c5b8323846a74a141be4249",
    ),
}


@pytest.fixture
def network(monkeypatch, tmp_path):
    """Serve ``{url: bytes}`` put into the returned dict; any other URL fails like a dead link."""
    served: dict[str, bytes] = {}
    # prepare_dataset looks its spec up in the registry: give it the unpinned one (see unpinned)
    monkeypatch.setattr(_prepare, "get_spec", unpinned)
    real_open = urllib.request.OpenerDirector.open
    folder = tmp_path / "served"
    folder.mkdir()

    def open_served(opener, url, *args, timeout=None, **kwargs):
        # the downloader opens every URL through its own opener (a deadline watchdog on the socket)
        url = url if isinstance(url, str) else url.full_url
        if url not in served:
            raise urllib.error.URLError(f"no such URL in this test: {url}")
        path = folder / hashlib.sha256(url.encode()).hexdigest()
        path.write_bytes(served[url])
        return real_open(opener, path.as_uri(), timeout=timeout)

    monkeypatch.setattr(urllib.request.OpenerDirector, "open", open_served)
    return served


def unpinned(name: str) -> DatasetSpec:
    """The registry's spec without pinned hashes.

    The registry pins the sha256 of the full covtype.data.gz download and of the
    full Features_TestSet.csv; an excerpt cannot match them (the two
    ``..._pinned_hash`` tests show that these checks are active).  Without a
    pinned hash, fetch_file records the excerpt's hash in the lock file.
    """
    spec = get_spec(name)
    files = tuple(dataclasses.replace(f, sha256=None, download_sha256=None) for f in spec.files)
    return dataclasses.replace(spec, files=files)


def fetch_all(name: str, raw_dir: Path) -> dict[str, Path]:
    """Fetch every raw file of ``name`` from its URL, as the download_raw rule does."""
    return {
        f.name: fetch_file(f, raw_dir / name, mirror=None, progress=False)
        for f in unpinned(name).files
    }


# --------------------------------------------------------------------------- independent readers
def text_lines(relative: str) -> list[str]:
    return [line for line in excerpt(relative).decode("ascii").splitlines() if line.strip()]


def rank_codes(labels) -> np.ndarray:
    """Index of each label in the sorted list of distinct labels."""
    distinct = sorted(set(labels))
    return np.array([distinct.index(label) for label in labels], dtype=np.int64)


def svmlight_rows(relative: str, n_features: int) -> tuple[np.ndarray, list[int]]:
    rows, labels = [], []
    for line in text_lines(relative):
        label, *items = line.split()
        row = [0.0] * n_features
        for item in items:
            index, value = item.split(":")
            row[int(index) - 1] = float(value)
        rows.append(row)
        labels.append(int(float(label)))
    return np.array(rows), labels


def expected_covtype():
    rows = np.array(
        [[int(v) for v in line.split(",")] for line in text_lines("covtype/covtype.data")]
    )
    X, labels = rows[:, :54].astype(float), rows[:, 54].tolist()
    # covtype.info: 10 quantitative columns, then 4 wilderness-area and 40 soil-type indicators
    assert np.array_equal(X[:, 10:14].sum(axis=1), np.ones(len(X)))
    assert np.array_equal(X[:, 14:54].sum(axis=1), np.ones(len(X)))
    assert set(labels) <= set(range(1, 8))
    return X, rank_codes(labels), labels


def expected_sensorless():
    rows = [line.split() for line in text_lines("sensorless/Sensorless_drive_diagnosis.txt")]
    X = np.array([[float(v) for v in row[:48]] for row in rows])
    labels = [int(row[48]) for row in rows]
    assert all(len(row) == 49 for row in rows) and set(labels) <= set(range(1, 12))
    return X, rank_codes(labels), labels


def expected_codrna():
    X1, labels1 = svmlight_rows("codrna/cod-rna", 8)
    X2, labels2 = svmlight_rows("codrna/cod-rna.t", 8)
    labels = labels1 + labels2
    assert set(labels) == {-1, 1}
    return np.vstack([X1, X2]), rank_codes(labels), labels


def expected_ijcnn():
    X, labels = svmlight_rows("ijcnn/ijcnn1", 22)
    assert set(labels) == {-1, 1}
    return X, rank_codes(labels), labels


def expected_superconduct():
    make = runpy.run_path(str(EXCERPTS / "make_format_faithful.py"))
    reader = csv.reader(io.StringIO(excerpt("superconduct/train.csv").decode("ascii")))
    header, *rows = list(reader)
    assert (
        header == make["superconduct_columns"]() and len(header) == 82
    )  # UCI: 81 features + critical_temp
    values = np.array(rows, dtype=float)
    target = values[:, -1]
    # 50 distinct temperatures into 10 equal-frequency bins: the k-th smallest 5 form bin k
    assert len(np.unique(target)) == len(target) == 50
    y = (np.argsort(np.argsort(target)) // 5).astype(np.int64)
    return values[:, :-1], y, target.tolist()


def expected_msd():
    rows = [line.split(",") for line in text_lines("msd/YearPredictionMSD.txt")]
    assert all(len(row) == 91 for row in rows)  # UCI: year + 12 timbre averages + 78 covariances
    kept = [row for row in rows if 1970 <= int(row[0]) <= 2010]  # the authors' skipLabels rule
    assert 0 < len(kept) < len(rows)  # the excerpt has years on both sides of the range
    years = [int(row[0]) for row in kept]
    return np.array([[float(v) for v in row[1:]] for row in kept]), rank_codes(years), years


def expected_facebook():
    rows = []
    for name in ("facebook/Features_Variant_1.csv", "facebook/Features_TestSet.csv"):
        rows += list(csv.reader(io.StringIO(excerpt(name).decode("ascii"))))
    values = np.array(rows, dtype=float)
    assert values.shape[1] == 54  # UCI: 53 features + target (comments in the next H hours)
    # UCI layout: columns 40-46 and 47-53 are one-hot weekdays (post published, base date time)
    assert np.array_equal(values[:, 39:46].sum(axis=1), np.ones(len(values)))
    assert np.array_equal(values[:, 46:53].sum(axis=1), np.ones(len(values)))
    target = values[:, -1]
    return values[:, :-1], equal_frequency_bins(target, 10), target.tolist()


def expected_bikeshare():
    header, *rows = list(csv.reader(io.StringIO(excerpt("bikeshare/hour.csv").decode("ascii"))))
    assert header == [
        "instant",
        "dteday",
        "season",
        "yr",
        "mnth",
        "hr",
        "holiday",
        "weekday",
        "workingday",
        "weathersit",
        "temp",
        "atemp",
        "hum",
        "windspeed",
        "casual",
        "registered",
        "cnt",
    ]  # UCI's Readme
    table = [dict(zip(header, row)) for row in rows]
    assert all(int(r["casual"]) + int(r["registered"]) == int(r["cnt"]) for r in table)
    # Table 2's 11 features: the row id, the date, cnt's two parts and workingday (holiday and weekday give it) dropped
    kept = [
        "season",
        "yr",
        "mnth",
        "hr",
        "holiday",
        "weekday",
        "weathersit",
        "temp",
        "atemp",
        "hum",
        "windspeed",
    ]
    target = [float(r["cnt"]) for r in table]
    return (
        np.array([[float(r[c]) for c in kept] for r in table]),
        equal_frequency_bins(np.array(target), 10),
        target,
    )


EXPECTED = {
    "covtype": expected_covtype,
    "codrna": expected_codrna,
    "ijcnn": expected_ijcnn,
    "sensorless": expected_sensorless,
    "superconduct": expected_superconduct,
    "msd": expected_msd,
    "facebook": expected_facebook,
    "bikeshare": expected_bikeshare,
}


# --------------------------------------------------------------------------- the real path
@pytest.mark.parametrize("name", DATASETS)
def test_excerpt_fetched_and_parsed_like_the_pipeline(name, network, tmp_path):
    spec = get_spec(name)
    downloads = official_downloads(name)
    network.update(downloads)
    assert sorted({f.url for f in spec.files}) == sorted(downloads), (
        "registry URLs differ from the official ones"
    )

    raw_dir = tmp_path / "raw"
    paths = fetch_all(name, raw_dir)
    assert sorted(paths) == sorted(spec.file_names)
    assert sorted(read_lock(raw_dir / name)) == sorted(spec.file_names)

    X, y = parse_raw(spec, paths)
    X_expected, y_expected, targets = EXPECTED[name]()
    assert X.dtype == np.float64 and y.dtype == np.int64
    assert X.shape == (len(y_expected), spec.n_features) == X_expected.shape  # Table 2's d
    assert np.array_equal(X, X_expected)
    assert np.array_equal(y, y_expected)
    k = len(np.unique(y))
    assert set(np.unique(y)) == set(range(k)) and k <= spec.n_classes
    if spec.task == "ordinal" and spec.target_encoding == "equal_frequency":
        order = np.argsort(targets, kind="stable")
        assert np.all(np.diff(y[order]) >= 0)  # bins increase with the target
        assert k == min(spec.n_classes, len(set(targets)))

    # prepare_dataset reads the cached, verified raw files (no network) and refuses only the size
    out = tmp_path / "prepared" / f"{name}.npz"
    network.clear()
    found = f"({X.shape[0]}, {spec.n_features}, {int(y.max()) + 1})"
    expected = f"({spec.n_examples}, {spec.n_features}, {spec.n_classes})"
    with pytest.raises(ValueError, match=re.escape(f"prepared (n, d, K) = {found}")) as info:
        prepare_dataset(name, raw_dir, out, mirror=None, allow_download=False)
    assert expected in str(info.value)
    assert not out.exists()


@pytest.mark.parametrize("name", DATASETS)
def test_excerpt_sizes_and_classes_present(name):
    X, y, _ = EXPECTED[name]()
    assert (len(y), len(np.unique(y))) == EXCERPT_SHAPES[name]
    assert X.shape[1] == get_spec(name).table2[1]


def test_covtype_download_is_checked_against_the_pinned_hash(network, tmp_path):
    raw_file = get_spec("covtype").files[0]
    assert raw_file.download_sha256 is not None
    network.update(official_downloads("covtype"))
    dest = tmp_path / "raw" / "covtype"
    with pytest.raises(ChecksumError) as info:
        fetch_file(raw_file, dest, mirror=None, progress=False)
    served = hashlib.sha256(network[raw_file.url]).hexdigest()
    assert raw_file.download_sha256 in str(info.value) and served in str(info.value)
    assert list(dest.iterdir()) == []


def test_facebook_test_file_is_checked_against_the_pinned_hash(network, tmp_path):
    raw_file = get_spec("facebook").files[1]
    assert raw_file.name == "Features_TestSet.csv" and raw_file.sha256 is not None
    network.update(official_downloads("facebook"))
    dest = tmp_path / "raw" / "facebook"
    with pytest.raises(ChecksumError, match=raw_file.sha256):
        fetch_file(raw_file, dest, mirror=None, progress=False)
    assert list(dest.iterdir()) == []


def test_registry_url_typo_fails_with_the_url(network, tmp_path):
    """The fake network serves only the official URLs: a registry URL that differs fails loudly."""
    raw_file = dataclasses.replace(
        get_spec("sensorless").files[0], url=f"{UCI}/00325/sensorless.txt"
    )
    network.update(official_downloads("sensorless"))
    with pytest.raises(OSError, match="sensorless.txt"):
        fetch_file(raw_file, tmp_path / "raw", mirror=None, progress=False)


@pytest.mark.parametrize("relative", list(MIRROR_PREFIXES))
def test_excerpt_cut_from_a_mirrored_file_is_its_recorded_prefix(relative):
    assert hashlib.sha256(crlf(excerpt(relative))).hexdigest() == MIRROR_PREFIXES[relative][1]


@pytest.mark.mirror("REJECTOPT_DATA_MIRROR")
@pytest.mark.parametrize("relative", list(MIRROR_PREFIXES))
def test_excerpt_cut_from_a_mirrored_file_is_a_byte_prefix_of_the_official_file(relative):
    """The mirror's copy is the official file (its sha256 is the registry's pin) and begins with the
    excerpt, CRLF restored: the recorded prefix hash above is that of real bytes."""
    copy, _ = MIRROR_PREFIXES[relative]
    official = lzma.decompress((mirror_folder("REJECTOPT_DATA_MIRROR") / copy).read_bytes())
    dataset, name = copy.removesuffix(".xz").split("/")
    raw_file = next(f for f in get_spec(dataset).files if f.name == name)
    assert hashlib.sha256(official).hexdigest() == raw_file.sha256
    assert official.startswith(crlf(excerpt(relative)))


def test_line_endings_do_not_change_the_parse(network, tmp_path):
    """UCI's facebook files are CRLF; an LF copy must give the same arrays."""
    spec = get_spec("facebook")
    network.update(official_downloads("facebook"))
    X_crlf, y_crlf = parse_raw(spec, fetch_all("facebook", tmp_path / "crlf"))
    network.clear()
    lf = {
        f"{UCI}/00363/Dataset.zip": zipped(
            {
                "Dataset/Training/Features_Variant_1.csv": excerpt(
                    "facebook/Features_Variant_1.csv"
                ),
                "Dataset/Testing/Features_TestSet.csv": excerpt("facebook/Features_TestSet.csv"),
            }
        )
    }
    network.update(lf)
    X_lf, y_lf = parse_raw(spec, fetch_all("facebook", tmp_path / "lf"))
    assert np.array_equal(X_crlf, X_lf) and np.array_equal(y_crlf, y_lf)


# --------------------------------------------------------------------------- bad cells
def svm_item(relative: str, line: int, position: int, item: str) -> dict[str, bytes]:
    """Replace the ``position``-th token (0 = label) of line ``line`` of an svmlight excerpt."""
    return edit_cell(relative, line, position + 1, item, " ")


BAD_CELLS = [
    (
        "covtype",
        edit_cell("covtype/covtype.data", 7, 3, "abc", ","),
        r"covtype\.data: line 7, column 3: non-numeric value 'abc'",
    ),
    (
        "covtype",
        edit_cell("covtype/covtype.data", 5, 10, "", ","),
        r"covtype\.data: line 5, column 10: missing value",
    ),
    (
        "covtype",
        edit_cell("covtype/covtype.data", 9, 55, "", ","),
        r"covtype\.data: line 9, column 55: missing value",
    ),
    (
        "sensorless",
        edit_cell("sensorless/Sensorless_drive_diagnosis.txt", 2, 5, "NaN", " "),
        r"Sensorless_drive_diagnosis\.txt: line 2, column 5: missing value",
    ),
    (
        "sensorless",
        {
            "sensorless/Sensorless_drive_diagnosis.txt": excerpt(
                "sensorless/Sensorless_drive_diagnosis.txt"
            )
            + excerpt("sensorless/truncated_last_line.txt")
        },
        r"Sensorless_drive_diagnosis\.txt: line 43, column 38: missing value",
    ),
    (
        "superconduct",
        edit_cell("superconduct/train.csv", 4, 12, "?", ","),
        r"train\.csv: line 4, column 'mean_fie': non-numeric value '\?'",
    ),
    (
        "superconduct",
        edit_cell("superconduct/train.csv", 6, 82, "", ","),
        r"train\.csv: line 6, column 'critical_temp': missing value",
    ),
    (
        "msd",
        edit_cell("msd/YearPredictionMSD.txt", 6, 1, "20x1", ","),
        r"YearPredictionMSD\.txt: line 6, column 1: non-numeric value '20x1'",
    ),
    (
        "msd",
        edit_cell("msd/YearPredictionMSD.txt", 3, 40, "inf", ","),
        r"YearPredictionMSD\.txt: line 3, column 40: non-finite value",
    ),
    (
        "facebook",
        edit_cell("facebook/Features_TestSet.csv", 10, 20, "x", ","),
        r"Features_TestSet\.csv: line 10, column 20: non-numeric value 'x'",
    ),
    (
        "facebook",
        edit_cell("facebook/Features_Variant_1.csv", 12, 54, "", ","),
        r"Features_Variant_1\.csv: line 12, column 54: missing value",
    ),
    (
        "codrna",
        svm_item("codrna/cod-rna.t", 8, 3, "3:abc"),
        r"cod-rna\.t: line 8: bad feature '3:abc'",
    ),
    (
        "codrna",
        svm_item("codrna/cod-rna", 2, 8, "9:0.5"),
        r"cod-rna: line 2: bad feature '9:0\.5' \(expected index:value, index 1\.\.8\)",
    ),
    ("ijcnn", svm_item("ijcnn/ijcnn1", 4, 2, "11:nan"), r"ijcnn1: line 4: non-finite feature 11"),
    ("ijcnn", svm_item("ijcnn/ijcnn1", 5, 0, "?"), r"ijcnn1: line 5: bad label '\?'"),
]


@pytest.mark.parametrize(
    ("name", "files", "message"), BAD_CELLS, ids=[f"{c[0]}-{i}" for i, c in enumerate(BAD_CELLS)]
)
def test_bad_cell_error_names_file_line_and_column(name, files, message, network, tmp_path):
    network.update(official_downloads(name, files))
    paths = fetch_all(name, tmp_path / "raw")
    with pytest.raises(ValueError, match=message):
        parse_raw(get_spec(name), paths)


def test_bad_cell_edits_hit_the_intended_cells():
    """Guard against a test edit that silently changes nothing (e.g. a wrong column)."""
    for _, files, _ in BAD_CELLS:
        for relative, data in files.items():
            assert data != excerpt(relative), relative


# --------------------------------------------------------------------------- manifest and files
def manifest() -> list[dict[str, str]]:
    with open(EXCERPTS / "MANIFEST.tsv", newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle, delimiter="\t"))


def test_manifest_records_every_excerpt_with_its_provenance():
    rows = manifest()
    listed = {row["excerpt"] for row in rows}
    on_disk = {
        str(p.relative_to(EXCERPTS))
        for p in EXCERPTS.rglob("*")
        if p.is_file()
        and p.name not in ("MANIFEST.tsv", "README.md", "make_format_faithful.py")
        and "__pycache__" not in p.parts
    }
    assert listed == on_disk
    assert {row["dataset"] for row in rows} == set(DATASETS)
    for row in rows:
        data = excerpt(row["excerpt"])
        assert len(data) <= MAX_EXCERPT_BYTES, row["excerpt"]
        assert hashlib.sha256(data).hexdigest() == row["sha256"], row["excerpt"]
        assert int(row["bytes"]) == len(data)
        assert int(row["lines"]) == data.count(b"\n") + (0 if data.endswith(b"\n") else 1)
        assert row["kind"] in ("real", "format-faithful"), row["kind"]
        if row["kind"] == "real":
            assert row["source_repo"] and len(row["source_commit"]) == 40 and row["source_path"], (
                row["excerpt"]
            )
        assert row["official_url"].startswith("https://") and row["rows_kept"], row["excerpt"]


def test_format_faithful_files_are_reproduced_by_their_generator():
    make = runpy.run_path(str(EXCERPTS / "make_format_faithful.py"))
    generated = make["generate"]()
    kinds = {row["excerpt"]: row["kind"] for row in manifest()}
    assert {path for path, kind in kinds.items() if kind == "format-faithful"} == set(generated)
    for relative, text in generated.items():
        assert excerpt(relative) == text.encode("ascii"), relative
