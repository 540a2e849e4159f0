"""Tests of rejectopt.datasets: the registry, fetching and checksums, the parsers and custom datasets.

They run on the demo mirror the repository ships (abalone, sattelite, shuttle) and on files they
write; those marked ``mirror`` read every dataset of the full raw-data mirror (xz copies of the
official files) that $REJECTOPT_DATA_MIRROR names, and skip without it.
"""

from __future__ import annotations

import lzma
from pathlib import Path

import numpy as np
import pytest
from support import DEMO_MIRROR, mirror_folder, needs_data_mirror

from rejectopt.datasets import (
    REGISTRY,
    ChecksumError,
    CustomDatasetError,
    DataSourceError,
    get_spec,
    load_prepared,
    peek_custom,
    prepare_dataset,
)
from rejectopt.datasets._custom import custom_dataset, prepare_custom
from rejectopt.datasets._fetch import fetch_file
from rejectopt.datasets._parsers import equal_frequency_bins
from rejectopt.datasets._prepare import available_in_mirror, fingerprint
from rejectopt.datasets._registry import CLASSIFICATION, ORDINAL, RawFile
from rejectopt.datasets._trust import LOCK_FILE_NAME, read_lock, sha256_of_file

MIRRORED = (
    "avila",
    "letter",
    "marketing",
    "pendigit",
    "phishing",
    "sattelite",
    "shuttle",
    "abalone",
    "bank",
    "bikeshare",
    "california",
    "ccpp",
    "cpu",
    "gpu",
    "metro",
)


@pytest.fixture(scope="session")
def mirror() -> Path:
    """The full raw-data mirror, $REJECTOPT_DATA_MIRROR (a test using it is marked ``mirror``: it
    skips before this runs when the variable is unset)."""
    path = mirror_folder("REJECTOPT_DATA_MIRROR")
    assert path is not None, (
        "a test that reads the full data mirror must be marked needs_data_mirror"
    )
    return path


@pytest.fixture(scope="session")
def prepared(mirror, tmp_path_factory) -> dict:
    """Prepare every mirrored dataset once per session: {name: (info, npz path)}."""
    raw_dir = tmp_path_factory.mktemp("raw")
    out_dir = tmp_path_factory.mktemp("prepared")
    result = {}
    for name in MIRRORED:
        out = out_dir / f"{name}.npz"
        result[name] = (
            prepare_dataset(name, raw_dir, out, mirror=mirror, allow_download=False),
            out,
        )
    return result


# --------------------------------------------------------------------------- registry
def test_registry_lists_the_22_datasets_of_table2():
    assert CLASSIFICATION == (
        "avila",
        "codrna",
        "covtype",
        "ijcnn",
        "letter",
        "marketing",
        "pendigit",
        "phishing",
        "sattelite",
        "sensorless",
        "shuttle",
    )
    assert ORDINAL == (
        "abalone",
        "bank",
        "bikeshare",
        "california",
        "ccpp",
        "cpu",
        "facebook",
        "gpu",
        "metro",
        "msd",
        "superconduct",
    )
    assert set(REGISTRY) == set(CLASSIFICATION) | set(ORDINAL)
    for name, spec in REGISTRY.items():
        assert spec.name == name
        assert all(f.dataset == name for f in spec.files)
        assert (spec.n_examples, spec.n_features, spec.n_classes) == spec.table2


def test_every_pinned_hash_has_its_size_and_the_demo_mirror_holds_those_sizes():
    """The size beside each sha256 (a copy is stopped at it) is the decompressed demo copy's, which
    has that hash; a file without a pinned hash has no pinned size (its cap is unpack_max_ratio)."""
    import hashlib

    files = [f for spec in REGISTRY.values() for f in spec.files]
    assert [f.name for f in files if (f.sha256 is None) != (f.size is None)] == []
    assert sum(f.size is not None for f in files) == 21
    checked = 0
    for raw_file in files:
        copy = DEMO_MIRROR / raw_file.dataset / f"{raw_file.name}.xz"
        if copy.is_file():
            data = lzma.decompress(copy.read_bytes())
            assert (len(data), hashlib.sha256(data).hexdigest()) == (
                raw_file.size,
                raw_file.sha256,
            ), raw_file.name
            checked += 1
    assert checked == 5  # abalone.data, sat.trn, sat.tst, shuttle.trn, shuttle.tst
    with pytest.raises(
        ValueError, match=r"RawFile toy/t.csv: size must be a number of bytes >= 0 or None, got -1"
    ):
        RawFile(dataset="toy", name="t.csv", url="https://example.invalid/t.csv", size=-1)


@needs_data_mirror
def test_the_pinned_sizes_are_the_manifests(mirror):
    """The full mirror's MANIFESTs give each file's uncompressed bytes beside its sha256."""
    import csv

    listed = {}
    for manifest in sorted(mirror.glob("MANIFEST*.tsv")):
        with open(manifest, newline="") as handle:
            for row in csv.DictReader(handle, delimiter="\t"):
                listed[row["sha256_of_uncompressed"]] = row["bytes_uncompressed"]
    pinned = {
        f.sha256: f.size for spec in REGISTRY.values() for f in spec.files if f.sha256 is not None
    }
    assert {h: int(listed[h]) for h in pinned} == pinned


def test_get_spec_unknown_name_lists_valid_names():
    with pytest.raises(ValueError, match="unknown dataset 'iris'") as info:
        get_spec("iris")
    assert "avila" in str(info.value) and "superconduct" in str(info.value)


@needs_data_mirror
def test_available_in_mirror(mirror):
    for name in REGISTRY:
        assert available_in_mirror(name, mirror) == (name in MIRRORED), name
    assert not available_in_mirror("facebook", mirror)  # only the test file is mirrored
    assert not available_in_mirror("avila", None)


# --------------------------------------------------------------------------- prepared data
@needs_data_mirror
@pytest.mark.pipeline  # the prepared fixture reads ccpp's .xlsx (openpyxl)
@pytest.mark.parametrize("name", MIRRORED)
def test_prepared_dataset_matches_table2(prepared, name):
    info, path = prepared[name]
    spec = get_spec(name)
    assert (info["n"], info["d"], info["k"]) == spec.table2
    X, y = load_prepared(path)
    assert X.dtype == np.float64 and y.dtype == np.int64
    assert X.shape == (spec.n_examples, spec.n_features)
    assert np.isfinite(X).all()
    assert set(np.unique(y)) == set(range(spec.n_classes))
    assert fingerprint(X, y) == info["xy_sha256"] == spec.xy_sha256
    with np.load(path, allow_pickle=False) as data:
        assert sorted(data.files) == ["X", "y"]


@needs_data_mirror
@pytest.mark.pipeline  # the prepared fixture reads ccpp's .xlsx (openpyxl)
def test_equal_frequency_ordinal_targets_are_balanced(prepared):
    for name in ("california", "ccpp", "gpu", "metro", "bikeshare"):
        _, path = prepared[name]
        counts = np.bincount(load_prepared(path)[1])
        assert counts.max() <= 1.1 * counts.min(), (name, counts)


def test_prepare_is_repeatable_from_cached_raw_files(tmp_path):
    out = tmp_path / "abalone.npz"
    raw_dir = tmp_path / "raw"
    first = prepare_dataset("abalone", raw_dir, out, mirror=DEMO_MIRROR, allow_download=False)
    second = prepare_dataset("abalone", raw_dir, out, mirror=None, allow_download=False)
    assert first == second and first["xy_sha256"] == get_spec("abalone").xy_sha256


# --------------------------------------------------------------------------- checksums
def _mirror_with_content(tmp_path: Path, raw_file: RawFile, content: bytes) -> Path:
    folder = tmp_path / "mirror" / raw_file.dataset
    folder.mkdir(parents=True)
    with lzma.open(folder / (raw_file.name + ".xz"), "wb") as handle:
        handle.write(content)
    return tmp_path / "mirror"


@pytest.mark.parametrize("damage", ["flip_one_byte", "truncate"])
def test_damaged_mirror_file_is_refused(tmp_path, damage):
    raw_file = get_spec("abalone").files[0]
    content = bytearray(lzma.decompress((DEMO_MIRROR / "abalone" / "abalone.data.xz").read_bytes()))
    if damage == "flip_one_byte":
        content[1000] ^= 0x01
    else:
        content = content[: len(content) // 2]
    bad_mirror = _mirror_with_content(tmp_path, raw_file, bytes(content))
    found = __import__("hashlib").sha256(bytes(content)).hexdigest()
    dest = tmp_path / "dest"
    with pytest.raises(ChecksumError) as info:
        fetch_file(raw_file, dest, mirror=bad_mirror, allow_download=False)
    message = str(info.value)
    assert raw_file.sha256 in message and found in message
    assert "abalone.data" in message and "data_mirror" in message
    assert list(dest.iterdir()) == []


def test_missing_file_in_mirror_names_path_url_and_option(tmp_path):
    raw_file = get_spec("covtype").files[0]
    (tmp_path / "mirror").mkdir()
    with pytest.raises(DataSourceError) as info:
        fetch_file(raw_file, tmp_path / "dest", mirror=tmp_path / "mirror", allow_download=False)
    message = str(info.value)
    assert (
        raw_file.url in message and "data_mirror" in message and str(tmp_path / "mirror") in message
    )


def test_unpinned_file_is_recorded_in_lock_then_verified(tmp_path, caplog):
    raw_file = RawFile(
        dataset="toy", name="toy.csv", url="https://example.invalid/toy.csv", sha256=None
    )
    content = b"1,2,3\n4,5,6\n"
    toy_mirror = _mirror_with_content(tmp_path, raw_file, content)
    dest = tmp_path / "dest"
    with caplog.at_level("WARNING", logger="rejectopt.datasets._trust"):
        path = fetch_file(raw_file, dest, mirror=toy_mirror, allow_download=False)
    assert path.read_bytes() == content
    recorded = read_lock(dest)["toy.csv"]
    assert recorded == sha256_of_file(path)
    assert LOCK_FILE_NAME in caplog.text and recorded in caplog.text

    path.unlink()  # refetch: verified against the lock
    assert (
        fetch_file(raw_file, dest, mirror=toy_mirror, allow_download=False).read_bytes() == content
    )

    path.unlink()
    changed = tmp_path / "changed"
    changed_mirror = _mirror_with_content(changed, raw_file, b"1,2,3\n4,5,7\n")
    with pytest.raises(ChecksumError, match=recorded):
        fetch_file(raw_file, dest, mirror=changed_mirror, allow_download=False)
    assert sorted(p.name for p in dest.iterdir()) == [LOCK_FILE_NAME]


# --------------------------------------------------------------------------- binning
def test_equal_frequency_bins_balanced_on_continuous_data():
    rng = np.random.default_rng(0)
    for n, k in [(1000, 10), (1003, 10), (20640, 10), (57, 7)]:
        target = rng.normal(size=n)
        y = equal_frequency_bins(target, k)
        counts = np.bincount(y, minlength=k)
        assert len(counts) == k and counts.max() - counts.min() <= 1
        order = np.argsort(target)
        assert np.all(np.diff(y[order]) >= 0)  # monotone in the target
        assert np.array_equal(y, equal_frequency_bins(target, k))  # deterministic


def test_equal_frequency_bins_ties_share_a_bin_and_all_bins_nonempty():
    rings = np.loadtxt(
        lzma.open(DEMO_MIRROR / "abalone" / "abalone.data.xz", "rt"), delimiter=",", usecols=8
    )
    assert len(np.unique(rings)) == 28
    y = equal_frequency_bins(rings, 19)
    assert len(np.unique(y)) == 19 and y.max() == 18
    for value in np.unique(rings):
        assert len(np.unique(y[rings == value])) == 1
    assert np.array_equal(
        equal_frequency_bins([3, 1, 2, 2], 10), [2, 0, 1, 1]
    )  # fewer values than bins


def test_abalone_classes_follow_the_authors_merge_rule(tmp_path):
    rings = np.loadtxt(
        lzma.open(DEMO_MIRROR / "abalone" / "abalone.data.xz", "rt"), delimiter=",", usecols=8
    )
    prepare_dataset(
        "abalone",
        tmp_path / "raw",
        tmp_path / "abalone.npz",
        mirror=DEMO_MIRROR,
        allow_download=False,
    )
    y = load_prepared(tmp_path / "abalone.npz")[1]
    counts = np.bincount(y)
    assert len(counts) == 19 and counts.min() > 0
    assert counts[0] == np.sum(rings <= 3) and counts[-1] == np.sum(rings >= 21)
    assert np.array_equal(y, np.clip(rings, 3, 21).astype(int) - 3)


# --- custom datasets: planned from metadata, checked when prepared ----------------------------

#: The models' bound on a feature's magnitude (rejectopt.model.FEATURE_LIMIT; the model layer sits
#: above datasets, so the pipeline's preparation passes it in).
FEATURE_LIMIT = 1e150


def _wine(tmp_path, name="wine.csv", edit=None):
    """scikit-learn's wine data (178 x 13, 3 cultivars) as a user's CSV, optionally with one cell edited."""
    from sklearn.datasets import load_wine

    frame = load_wine(as_frame=True).frame.rename(columns={"target": "cultivar"})
    if edit is not None:
        row, column, text = edit
        frame = frame.astype({column: object})
        frame.loc[row, column] = text
    frame.to_csv(tmp_path / name, index=False)
    return custom_dataset("wine", {"path": str(tmp_path / name), "target": "cultivar"})


def test_prepare_custom_writes_the_csv_values(tmp_path):
    from sklearn.datasets import load_wine

    X, y = load_wine(return_X_y=True)
    info = prepare_custom(_wine(tmp_path), tmp_path / "data.npz", feature_limit=FEATURE_LIMIT)
    assert (info["n"], info["d"], info["k"]) == (178, 13, 3)
    prepared_X, prepared_y = load_prepared(tmp_path / "data.npz")
    np.testing.assert_array_equal(prepared_X, X)  # the CSV's decimal text round-trips exactly
    np.testing.assert_array_equal(prepared_y, y)
    assert peek_custom(_wine(tmp_path)) == {"n": 178, "d": 13, "exact": True}


@pytest.mark.parametrize(
    "text, found",
    [
        (
            "1e300",
            (
                "1e300 lies beyond +-1e+150, the bound on feature values (beyond it, standardising the "
                "features overflows float64)"
            ),
        ),
        ("-1e400", "-1e400 is not finite (infinite, or beyond float64's range)"),
        ("nan", "nan is NaN (a missing value)"),
        ("", "empty; features must be numeric"),
        ("12,5", "'12,5' is not a number; features must be numeric"),  # a decimal comma, quoted
    ],
    ids=["overflowing", "beyond-float64", "nan", "empty", "decimal-comma"],
)
def test_a_bad_custom_cell_is_named_by_file_line_and_column_and_nothing_is_written(
    tmp_path, text, found
):
    dataset = _wine(tmp_path, edit=(41, "magnesium", text))
    with pytest.raises(CustomDatasetError) as err:
        prepare_custom(dataset, tmp_path / "data.npz", feature_limit=FEATURE_LIMIT)
    assert str(err.value).startswith(
        f"{tmp_path / 'wine.csv'} line 43, column 'magnesium': {found}"
    )
    assert not (tmp_path / "data.npz").exists()


def test_an_overflowing_npz_feature_is_named_by_row_and_column(tmp_path):
    from sklearn.datasets import load_breast_cancer

    X, y = load_breast_cancer(return_X_y=True)
    X[[7, 9], 3] = 1e300
    np.savez(tmp_path / "cancer.npz", X=X, y=y)
    dataset = custom_dataset("cancer", {"path": str(tmp_path / "cancer.npz")})
    assert peek_custom(dataset) == {"n": 569, "d": 30, "exact": True}  # read off the array headers
    with pytest.raises(CustomDatasetError) as err:
        prepare_custom(dataset, tmp_path / "data.npz", feature_limit=FEATURE_LIMIT)
    assert str(err.value).startswith(
        f"{tmp_path / 'cancer.npz'}: X[7, 3] = 1e+300 lies beyond +-1e+150"
    )
    assert "(2 row(s) in all)" in str(err.value)


def test_a_latin1_csv_is_named_with_its_line(tmp_path):
    rows = ["taste,acidity,y"] + [f"{i},{i % 5},{'doux' if i % 2 else 'sec'}" for i in range(40)]
    rows[12] = "11,1,crémeux"
    (tmp_path / "latin.csv").write_bytes("\n".join(rows).encode("latin-1") + b"\n")
    dataset = custom_dataset("latin", {"path": str(tmp_path / "latin.csv"), "target": "y"})
    assert peek_custom(dataset)["n"] == 40  # planning reads the header only
    with pytest.raises(CustomDatasetError) as err:
        prepare_custom(dataset, tmp_path / "data.npz", feature_limit=FEATURE_LIMIT)
    assert str(err.value) == (
        f"{tmp_path / 'latin.csv'} line 13: byte 0xe9 (position 8 of the line) is not UTF-8; custom CSV files are read "
        "as UTF-8: save the file as UTF-8 (e.g. iconv -f latin1 -t utf-8)"
    )
    (tmp_path / "latin_header.csv").write_bytes("goût,y\n1,a\n".encode("latin-1"))
    with pytest.raises(CustomDatasetError, match="latin_header.csv line 1: byte 0xfb"):
        peek_custom(
            custom_dataset("h", {"path": str(tmp_path / "latin_header.csv"), "target": "y"})
        )


def test_prepare_custom_checks_the_declared_classes_and_their_sizes(tmp_path):
    path = str(tmp_path / "wine.csv")
    _wine(tmp_path)
    declared = custom_dataset("wine", {"path": path, "target": "cultivar", "n_classes": 2})
    with pytest.raises(CustomDatasetError) as err:
        prepare_custom(declared, tmp_path / "data.npz", feature_limit=FEATURE_LIMIT)
    assert str(err.value) == (
        f"{path}: target 'cultivar' holds 3 classes (0.0, 1.0, 2.0), but config "
        "custom_datasets.wine.n_classes declares 2; correct the config"
    )
    # ratios giving Val1 a 0.5 % share: a class needs 61 examples to reach it (cultivars: 59, 71, 48)
    tiny_val = custom_dataset(
        "wine", {"path": path, "target": "cultivar"}, ratios=[0.495, 0.005, 0.3, 0.1, 0.1]
    )
    with pytest.raises(
        CustomDatasetError,
        match=r"class\(es\) 0.0 \(59\), 2.0 \(48\) of target 'cultivar' are too "
        r"small to be split five ways .* every class needs at least 61",
    ):
        prepare_custom(tiny_val, tmp_path / "data.npz", feature_limit=FEATURE_LIMIT)
    assert not (tmp_path / "data.npz").exists()


# --------------------------------------------------------------------------- known answers of the small steps
UCI_URL = "https://archive.ics.uci.edu/ml/machine-learning-databases"


def test_known_answers_of_the_encoders_hashes_and_options():
    from rejectopt.datasets._decompress import MIN_UNPACK_CAP_BYTES, unpack_cap
    from rejectopt.datasets._download import DownloadOptions, resolve_url
    from rejectopt.datasets._faces300w import archive_raw_file
    from rejectopt.datasets._parsers import encode_labels

    assert encode_labels(["b", "a", "c", "a"]).tolist() == [1, 0, 2, 0]
    assert encode_labels([4, 1, 4, 7]).tolist() == [1, 0, 1, 2]
    assert equal_frequency_bins([5.0, 1.0, 3.0, 2.0, 4.0, 6.0], 3).tolist() == [2, 0, 1, 0, 1, 2]
    assert equal_frequency_bins([1, 1, 1, 2, 3, 4], 3).tolist() == [
        0,
        0,
        0,
        1,
        2,
        2,
    ]  # ties share a bin
    assert unpack_cap(10 << 20) == 1000 << 20 and unpack_cap(1000) == MIN_UNPACK_CAP_BYTES
    digest = (
        "e10e9580944b2e26ebbac56487c151dcff2437c7126a80a0d46c0f0c465d80c9"  # whatever the dtypes
    )
    assert fingerprint(np.array([[0.0, 1.0], [2.0, 3.0]]), np.array([0, 1])) == digest
    assert fingerprint(np.array([[0, 1], [2, 3]]), np.array([0.0, 1.0])) == digest
    assert resolve_url("https://dlib.net/files/a.tar.gz", "http://127.0.0.1:8000/") == (
        "http://127.0.0.1:8000/dlib.net/files/a.tar.gz"
    )
    assert resolve_url("https://dlib.net/files/a.tar.gz", None) == "https://dlib.net/files/a.tar.gz"
    options = DownloadOptions(base="file:///srv/copy/", retries=2, backoff_s=1.0)
    assert options.url_for(f"{UCI_URL}/abalone/abalone.data") == (
        "file:///srv/copy/archive.ics.uci.edu/ml/machine-learning-databases/abalone/abalone.data"
    )
    assert [options.delay(k) for k in (1, 2)] == [1.0, 2.0]
    assert repr(DownloadOptions.from_config({"download_retries": 0})) == (
        "DownloadOptions(base=None, retries=0, backoff_s=5.0, timeout_s=60.0, deadline_s=7200.0, max_ratio=100.0)"
    )
    shuttle = get_spec("shuttle").files[0]
    assert (shuttle.name, shuttle.compression, shuttle.sha256[:12]) == (
        "shuttle.trn",
        "Z",
        "87b24ee9fb51",
    )
    assert shuttle.url == f"{UCI_URL}/statlog/shuttle/shuttle.trn.Z"
    assert (
        RawFile("toy", "toy.csv", "https://example.org/toy.csv.gz", compression="gz").sha256 is None
    )
    faces = archive_raw_file()
    assert (faces.name, faces.sha256) == ("ibug_300W_large_face_landmark_dataset.tar.gz", None)
    assert faces.url == "http://dlib.net/files/data/ibug_300W_large_face_landmark_dataset.tar.gz"


def test_parse_raw_reads_three_shuttle_rows_and_encodes_the_labels(tmp_path):
    from rejectopt.datasets._prepare import parse_raw

    (tmp_path / "shuttle.trn").write_text("50 21 77 0 28 0 27 48 22 2\n55 0 92 0 0 26 36 92 56 4\n")
    (tmp_path / "shuttle.tst").write_text("53 0 82 0 52 -5 29 30 2 1\n")
    X, y = parse_raw("shuttle", {name: tmp_path / name for name in ("shuttle.trn", "shuttle.tst")})
    assert X.shape == (3, 9) and X[2, :6].tolist() == [53.0, 0.0, 82.0, 0.0, 52.0, -5.0]
    assert y.tolist() == [1, 2, 0]


def test_a_toy_file_from_an_xz_mirror_or_a_file_url_is_locked_on_first_fetch(tmp_path):
    from rejectopt.datasets._download import DownloadOptions

    raw = RawFile("toy", "toy.csv", "https://example.org/toy.csv")
    (tmp_path / "mirror" / "toy").mkdir(parents=True)
    (tmp_path / "mirror" / "toy" / "toy.csv.xz").write_bytes(lzma.compress(b"abc"))
    assert read_lock(tmp_path / "raw") == {}
    path = fetch_file(raw, tmp_path / "raw", mirror=tmp_path / "mirror", allow_download=False)
    abc = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    assert (path.name, path.read_bytes(), read_lock(path.parent)) == (
        "toy.csv",
        b"abc",
        {"toy.csv": abc},
    )
    assert sha256_of_file(path) == abc
    (tmp_path / "copy" / "example.org").mkdir(parents=True)
    (tmp_path / "copy" / "example.org" / "toy.csv").write_bytes(b"abc")
    options = DownloadOptions(base=(tmp_path / "copy").as_uri())
    assert (
        fetch_file(raw, tmp_path / "raw2", download=options, progress=False).read_bytes() == b"abc"
    )


def test_the_demo_mirror_prepares_abalone_and_sattelite_with_their_checksums(tmp_path):
    from support import DEMO_MIRROR

    from rejectopt.datasets._prepare import dataset_checksums

    assert [available_in_mirror(n, DEMO_MIRROR) for n in ("shuttle", "letter")] == [True, False]
    assert not available_in_mirror("shuttle", None)
    info = prepare_dataset(
        "abalone",
        tmp_path / "raw",
        tmp_path / "abalone.npz",
        mirror=DEMO_MIRROR,
        allow_download=False,
    )
    assert sorted(p.name for p in (tmp_path / "raw" / "abalone").iterdir()) == ["abalone.data"]
    assert (info["n"], info["d"], info["k"], info["xy_sha256"]) == (
        4177,
        10,
        19,
        get_spec("abalone").xy_sha256,
    )
    sums = dataset_checksums("abalone", tmp_path / "abalone.npz", tmp_path / "raw")
    assert (
        sums["n"],
        sums["d"],
        sums["k"],
        sums["xy_sha256"][:12],
        sums["raw"]["abalone.data"][:12],
    ) == (4177, 10, 19, "37a9a595b02c", "de37cdcdcaaa")
    prepare_dataset("sattelite", tmp_path / "raw", tmp_path / "sat.npz", mirror=DEMO_MIRROR)
    X, y = load_prepared(tmp_path / "sat.npz")
    assert (X.shape, X.dtype, y[:5].tolist(), int(y.max())) == ((6435, 36), np.float64, [2] * 5, 5)


def test_known_answers_of_a_small_custom_csv_and_npz(tmp_path):
    from rejectopt.datasets import load_custom
    from rejectopt.datasets._custom import check_custom, custom_checksums

    rows = ["size,weight,fruit"] + [
        f"{i},{i % 3 + 0.5},{'apple' if i % 2 else 'pear'}" for i in range(20)
    ]
    (tmp_path / "fruit.csv").write_text("\n".join(rows) + "\n")
    entry = {"path": "fruit.csv", "task": "classification", "target": "fruit", "n_classes": 2}
    fruit = custom_dataset("fruit", entry, base_dir=tmp_path)
    assert (fruit.path, fruit.kind, fruit.task, fruit.target, fruit.n_classes, fruit.ratios) == (
        tmp_path / "fruit.csv",
        "csv",
        "classification",
        "fruit",
        2,
        None,
    )
    with pytest.raises(
        CustomDatasetError,
        match=r"^config custom_datasets.fruit.task: 'regression' is not one of "
        r"classification, ordinal$",
    ):
        custom_dataset("fruit", {**entry, "task": "regression"}, base_dir=tmp_path)
    assert peek_custom(fruit) == {"n": 20, "d": 2, "exact": True}
    X, y, classes = load_custom(fruit, feature_limit=FEATURE_LIMIT)
    assert (X.shape, X[:3].tolist(), y[:4].tolist(), classes.tolist()) == (
        (20, 2),
        [[0.0, 0.5], [1.0, 1.5], [2.0, 2.5]],
        [1, 0, 1, 0],
        ["apple", "pear"],
    )
    info = check_custom(fruit, feature_limit=FEATURE_LIMIT)
    assert (info["n"], info["d"], info["k"], info["sha256"][:12]) == (20, 2, 2, "f8cf5ebaacbc")
    info = prepare_custom(fruit, tmp_path / "fruit.npz", feature_limit=FEATURE_LIMIT)
    assert (info["n"], info["d"], info["k"], info["xy_sha256"][:12]) == (20, 2, 2, "f3dbe5970d10")
    sums = custom_checksums(fruit, tmp_path / "fruit.npz")
    assert (sums["n"], sums["k"], sums["xy_sha256"][:12]) == (20, 2, "f3dbe5970d10")
    assert {k: v[:12] for k, v in sums["raw"].items()} == {"fruit.csv (custom)": "f8cf5ebaacbc"}
    (tmp_path / "bad.csv").write_text("size,fruit\n1,apple\nbig,pear\n")
    bad = custom_dataset("bad", {"path": "bad.csv", "target": "fruit"}, base_dir=tmp_path)
    with pytest.raises(
        CustomDatasetError, match="bad.csv line 3, column 'size': 'big' is not a number"
    ):
        load_custom(bad, feature_limit=FEATURE_LIMIT)
    np.savez(tmp_path / "grades.npz", X=np.arange(6.0).reshape(3, 2), y=np.array([3, 1, 3]))
    grades = custom_dataset("grades", {"path": "grades.npz", "task": "ordinal"}, base_dir=tmp_path)
    _, y, classes = load_custom(grades, feature_limit=FEATURE_LIMIT)
    assert (y.tolist(), classes.tolist()) == ([1, 0, 1], [1.0, 3.0])


def test_toy_mirror_faults_raise_the_data_source_errors(tmp_path):
    import gzip

    from rejectopt.exceptions import DecompressionError, UnpackLimitError

    (tmp_path / "mirror" / "toy").mkdir(parents=True)
    (tmp_path / "mirror" / "toy" / "toy.csv").write_text("1,2,a\n3,4,b\n")
    pinned = RawFile("toy", "toy.csv", "https://example.org/toy.csv", sha256="0" * 64)
    with pytest.raises(ChecksumError, match=r"^checksum mismatch for toy.csv .*found e1f1cc69e93b"):
        fetch_file(pinned, tmp_path / "raw", mirror=tmp_path / "mirror")
    assert list((tmp_path / "raw").iterdir()) == []
    missing = RawFile("toy", "gone.csv", "https://example.org/gone.csv")
    with pytest.raises(DataSourceError, match="^gone.csv not found in the data mirror"):
        fetch_file(missing, tmp_path / "raw", mirror=tmp_path / "mirror", allow_download=False)
    (tmp_path / "mirror" / "toy" / "broken.csv.xz").write_bytes(b"not xz data")
    with pytest.raises(
        DecompressionError, match="^broken.csv: cannot decompress the data_mirror copy"
    ):
        fetch_file(
            RawFile("toy", "broken.csv", "https://example.org/broken.csv"),
            tmp_path / "raw",
            mirror=tmp_path / "mirror",
        )
    (tmp_path / "mirror" / "toy" / "big.bin.gz").write_bytes(65 * gzip.compress(bytes(1 << 20)))
    with pytest.raises(UnpackLimitError) as err:  # 65 MiB of zeros pass the 64 MiB floor of the cap
        fetch_file(
            RawFile("toy", "big.bin", "https://example.org/big.bin"),
            tmp_path / "raw",
            mirror=tmp_path / "mirror",
        )
    assert err.value.limit == 64 << 20 and list((tmp_path / "raw").iterdir()) == []
