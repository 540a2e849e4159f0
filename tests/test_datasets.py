"""Tests of rejectopt.datasets against the shared raw-data mirror (xz copies of the official files)."""

from __future__ import annotations

import lzma
import os
from pathlib import Path

import numpy as np
import pytest

from rejectopt.datasets import (
    CLASSIFICATION,
    LOCK_FILE_NAME,
    ORDINAL,
    REGISTRY,
    ChecksumError,
    CustomDatasetError,
    DataSourceError,
    RawFile,
    available_in_mirror,
    custom_dataset,
    equal_frequency_bins,
    fetch_file,
    fingerprint,
    get_spec,
    load_prepared,
    prepare_custom,
    prepare_dataset,
    read_lock,
    sha256_of_file,
)
from rejectopt.datasets._custom import peek_custom

REPO_ROOT = Path(__file__).resolve().parents[1]
MIRRORED = (
    "avila", "letter", "marketing", "pendigit", "phishing", "sattelite", "shuttle",
    "abalone", "bank", "bikeshare", "california", "ccpp", "cpu", "gpu", "metro",
)


@pytest.fixture(scope="session")
def mirror() -> Path:
    path = Path(os.environ.get("REJECTOPT_DATA_MIRROR", REPO_ROOT.parent / "shared" / "data" / "raw"))
    if not path.is_dir():
        pytest.skip(f"data mirror not found at {path} (set REJECTOPT_DATA_MIRROR)")
    return path


@pytest.fixture(scope="session")
def prepared(mirror, tmp_path_factory) -> dict:
    """Prepare every mirrored dataset once per session: {name: (info, npz path)}."""
    raw_dir = tmp_path_factory.mktemp("raw")
    out_dir = tmp_path_factory.mktemp("prepared")
    result = {}
    for name in MIRRORED:
        out = out_dir / f"{name}.npz"
        result[name] = (prepare_dataset(name, raw_dir, out, mirror=mirror, allow_download=False), out)
    return result


# --------------------------------------------------------------------------- registry
def test_registry_lists_the_22_datasets_of_table2():
    assert CLASSIFICATION == ("avila", "codrna", "covtype", "ijcnn", "letter", "marketing",
                              "pendigit", "phishing", "sattelite", "sensorless", "shuttle")
    assert ORDINAL == ("abalone", "bank", "bikeshare", "california", "ccpp", "cpu", "facebook",
                       "gpu", "metro", "msd", "superconduct")
    assert set(REGISTRY) == set(CLASSIFICATION) | set(ORDINAL)
    for name, spec in REGISTRY.items():
        assert spec.name == name
        assert all(f.dataset == name for f in spec.files)
        assert (spec.n_examples, spec.n_features, spec.n_classes) == spec.table2


def test_get_spec_unknown_name_lists_valid_names():
    with pytest.raises(ValueError, match="unknown dataset 'iris'") as info:
        get_spec("iris")
    assert "avila" in str(info.value) and "superconduct" in str(info.value)


def test_available_in_mirror(mirror):
    for name in REGISTRY:
        assert available_in_mirror(name, mirror) == (name in MIRRORED), name
    assert not available_in_mirror("facebook", mirror)  # only the test file is mirrored
    assert not available_in_mirror("avila", None)


# --------------------------------------------------------------------------- prepared data
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


def test_equal_frequency_ordinal_targets_are_balanced(prepared):
    for name in ("california", "ccpp", "gpu", "metro", "bikeshare"):
        _, path = prepared[name]
        counts = np.bincount(load_prepared(path)[1])
        assert counts.max() <= 1.1 * counts.min(), (name, counts)


def test_prepare_is_repeatable_from_cached_raw_files(prepared, mirror, tmp_path):
    out = tmp_path / "abalone.npz"
    raw_dir = tmp_path / "raw"
    first = prepare_dataset("abalone", raw_dir, out, mirror=mirror, allow_download=False)
    second = prepare_dataset("abalone", raw_dir, out, mirror=None, allow_download=False)
    assert first == second == prepared["abalone"][0]


# --------------------------------------------------------------------------- checksums
def _mirror_with_content(tmp_path: Path, raw_file: RawFile, content: bytes) -> Path:
    folder = tmp_path / "mirror" / raw_file.dataset
    folder.mkdir(parents=True)
    with lzma.open(folder / (raw_file.name + ".xz"), "wb") as handle:
        handle.write(content)
    return tmp_path / "mirror"


@pytest.mark.parametrize("damage", ["flip_one_byte", "truncate"])
def test_damaged_mirror_file_is_refused(mirror, tmp_path, damage):
    raw_file = get_spec("abalone").files[0]
    content = bytearray(lzma.decompress((mirror / "abalone" / "abalone.data.xz").read_bytes()))
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
    assert raw_file.url in message and "data_mirror" in message and str(tmp_path / "mirror") in message


def test_unpinned_file_is_recorded_in_lock_then_verified(tmp_path, caplog):
    raw_file = RawFile(dataset="toy", name="toy.csv", url="https://example.invalid/toy.csv", sha256=None)
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
    assert fetch_file(raw_file, dest, mirror=toy_mirror, allow_download=False).read_bytes() == content

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


def test_equal_frequency_bins_ties_share_a_bin_and_all_bins_nonempty(mirror):
    rings = np.loadtxt(
        lzma.open(mirror / "abalone" / "abalone.data.xz", "rt"), delimiter=",", usecols=8
    )
    assert len(np.unique(rings)) == 28
    y = equal_frequency_bins(rings, 19)
    assert len(np.unique(y)) == 19 and y.max() == 18
    for value in np.unique(rings):
        assert len(np.unique(y[rings == value])) == 1
    assert np.array_equal(equal_frequency_bins([3, 1, 2, 2], 10), [2, 0, 1, 1])  # fewer values than bins


def test_abalone_classes_follow_the_authors_merge_rule(prepared, mirror):
    rings = np.loadtxt(lzma.open(mirror / "abalone" / "abalone.data.xz", "rt"), delimiter=",", usecols=8)
    y = load_prepared(prepared["abalone"][1])[1]
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
        ("1e300", ("1e300 lies beyond +-1e+150, the bound on feature values (beyond it, standardising the "
                   "features overflows float64)")),
        ("-1e400", "-1e400 is not finite (infinite, or beyond float64's range)"),
        ("nan", "nan is NaN (a missing value)"),
        ("", "empty; features must be numeric"),
        ("12,5", "'12,5' is not a number; features must be numeric"),  # a decimal comma, quoted
    ],
    ids=["overflowing", "beyond-float64", "nan", "empty", "decimal-comma"],
)
def test_a_bad_custom_cell_is_named_by_file_line_and_column_and_nothing_is_written(tmp_path, text, found):
    dataset = _wine(tmp_path, edit=(41, "magnesium", text))
    with pytest.raises(CustomDatasetError) as err:
        prepare_custom(dataset, tmp_path / "data.npz", feature_limit=FEATURE_LIMIT)
    assert str(err.value).startswith(f"{tmp_path / 'wine.csv'} line 43, column 'magnesium': {found}")
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
    assert str(err.value).startswith(f"{tmp_path / 'cancer.npz'}: X[7, 3] = 1e+300 lies beyond +-1e+150")
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
        "as UTF-8: save the file as UTF-8 (e.g. iconv -f latin1 -t utf-8)")
    (tmp_path / "latin_header.csv").write_bytes("goût,y\n1,a\n".encode("latin-1"))
    with pytest.raises(CustomDatasetError, match="latin_header.csv line 1: byte 0xfb"):
        peek_custom(custom_dataset("h", {"path": str(tmp_path / "latin_header.csv"), "target": "y"}))


def test_prepare_custom_checks_the_declared_classes_and_their_sizes(tmp_path):
    path = str(tmp_path / "wine.csv")
    _wine(tmp_path)
    declared = custom_dataset("wine", {"path": path, "target": "cultivar", "n_classes": 2})
    with pytest.raises(CustomDatasetError) as err:
        prepare_custom(declared, tmp_path / "data.npz", feature_limit=FEATURE_LIMIT)
    assert str(err.value) == (f"{path}: target 'cultivar' holds 3 classes (0.0, 1.0, 2.0), but config "
                              "custom_datasets.wine.n_classes declares 2; correct the config")
    # ratios giving Val1 a 0.5 % share: a class needs 61 examples to reach it (cultivars: 59, 71, 48)
    tiny_val = custom_dataset("wine", {"path": path, "target": "cultivar"}, ratios=[0.495, 0.005, 0.3, 0.1, 0.1])
    with pytest.raises(CustomDatasetError, match=r"class\(es\) 0.0 \(59\), 2.0 \(48\) of target 'cultivar' are too "
                                                 r"small to be split five ways .* every class needs at least 61"):
        prepare_custom(tiny_val, tmp_path / "data.npz", feature_limit=FEATURE_LIMIT)
    assert not (tmp_path / "data.npz").exists()
