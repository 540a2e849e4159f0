import numpy as np
import pytest

from rejectopt._checks import SPLIT_PARTS, check_ratios, derive_seed
from rejectopt._io import IntermediateFileError, save_npz
from rejectopt.splits import (
    DEFAULT_RATIOS,
    _stratified_partition,
    load_split,
    make_splits,
    save_splits,
)


@pytest.fixture
def labels():
    rng = np.random.default_rng(1)
    # imbalanced classes, including a tiny one (like shuttle's class with 6 examples)
    return np.concatenate([np.zeros(997), np.ones(250), np.full(6, 2), np.full(41, 3)]).astype(int)[
        rng.permutation(1294)
    ]


def test_parts_are_disjoint_and_cover_every_example(labels):
    splits = make_splits(labels, n_splits=3, seed=7, dataset="toy")
    for k in range(3):
        parts = [splits[f"{p}_{k}"] for p in SPLIT_PARTS]
        joined = np.concatenate(parts)
        assert len(joined) == len(labels)
        assert np.array_equal(np.sort(joined), np.arange(len(labels)))


@pytest.mark.parametrize(
    "ratios", [DEFAULT_RATIOS, (0.25, 0.05, 0.2, 0.2, 0.3), (0.28, 0.2, 0.02, 0.2, 0.3)]
)
def test_ratios_hold_within_one_example_per_class(labels, ratios):
    splits = make_splits(labels, ratios=ratios, n_splits=2, seed=3, dataset="toy")
    for k in range(2):
        for part, ratio in zip(SPLIT_PARTS, ratios):
            counts = np.bincount(labels[splits[f"{part}_{k}"]], minlength=4)
            expected = ratio * np.bincount(labels, minlength=4)
            assert np.all(np.abs(counts - expected) < 1.0), (part, counts, expected)


def test_same_seed_same_splits_bytes(labels, tmp_path):
    save_splits(tmp_path / "a.npz", make_splits(labels, n_splits=2, seed=11, dataset="toy"))
    save_splits(tmp_path / "b.npz", make_splits(labels, n_splits=2, seed=11, dataset="toy"))
    assert (tmp_path / "a.npz").read_bytes() == (tmp_path / "b.npz").read_bytes()


def test_splits_differ_across_repetitions_seeds_and_datasets(labels):
    a = make_splits(labels, n_splits=2, seed=11, dataset="toy")
    b = make_splits(labels, n_splits=1, seed=12, dataset="toy")
    c = make_splits(labels, n_splits=1, seed=11, dataset="other")
    assert not np.array_equal(a["trn1_0"], a["trn1_1"])
    assert not np.array_equal(a["trn1_0"], b["trn1_0"])
    assert not np.array_equal(a["trn1_0"], c["trn1_0"])


def test_derive_seed_is_stable_known_answer():
    # CRC32-based: independent of PYTHONHASHSEED and of the machine.
    assert derive_seed(0, "shuttle", "split", 0) == derive_seed(0, "shuttle", "split", 0)
    assert derive_seed(0, "shuttle") != derive_seed(1, "shuttle")
    assert derive_seed(0, "a", "b") != derive_seed(0, "b", "a")
    assert derive_seed(0, "iris", "split", 0) == 3710318630


def test_small_sample_known_answers(tmp_path):
    y = np.array([0] * 10 + [1] * 10)
    parts = _stratified_partition(y, DEFAULT_RATIOS, np.random.default_rng(0))
    assert parts["tst"].tolist() == [1, 8, 11, 15]
    assert {part: int((y[index] == 1).sum()) for part, index in parts.items()} == {
        "trn1": 3,
        "val1": 1,
        "trn2": 3,
        "val2": 1,
        "tst": 2,
    }
    save_splits(tmp_path / "splits.npz", make_splits(y, n_splits=2), y=y, ratios=DEFAULT_RATIOS)
    assert load_split(tmp_path / "splits.npz", 1)["val1"].tolist() == [4, 13]
    assert {part: len(index) for part, index in load_split(tmp_path / "splits.npz", 0).items()} == {
        "trn1": 6,
        "val1": 2,
        "trn2": 6,
        "val2": 2,
        "tst": 4,
    }
    with pytest.raises(
        KeyError,
        match=r"has no split 2 \(missing trn1_2, val1_2, trn2_2, val2_2, tst_2\); rerun "
        r"make_splits with n_splits > 2",
    ):
        load_split(tmp_path / "splits.npz", 2)
    with pytest.raises(ValueError, match="ratios must have 5 entries"):
        check_ratios([0.5, 0.5])


def test_index_arrays_are_named_and_typed_by_the_contract(labels, tmp_path):
    save_splits(tmp_path / "s.npz", make_splits(labels, n_splits=2, seed=0, dataset="toy"))
    with np.load(tmp_path / "s.npz", allow_pickle=False) as data:
        assert sorted(data.files) == sorted(f"{p}_{k}" for k in range(2) for p in SPLIT_PARTS)
        assert all(data[name].dtype == np.int64 for name in data.files)
    parts = load_split(tmp_path / "s.npz", 1)
    assert list(parts) == list(SPLIT_PARTS)
    with pytest.raises(KeyError, match="no split 2"):
        load_split(tmp_path / "s.npz", 2)


@pytest.mark.parametrize(
    "ratios, message",
    [
        ((0.5, 0.5), "5 entries"),
        ((0.3, 0.1, 0.3, 0.1, 0.3), "sum to 1"),
        ((0.5, -0.1, 0.3, 0.1, 0.2), "positive"),
    ],
)
def test_bad_ratios_are_rejected(labels, ratios, message):
    with pytest.raises(ValueError, match=message):
        make_splits(labels, ratios=ratios)


def test_a_split_whose_trn_and_tst_overlap_is_never_written(labels, tmp_path):
    path = tmp_path / "splits.npz"
    good = make_splits(labels, n_splits=2, seed=0, dataset="toy")
    save_splits(path, good, y=labels, ratios=DEFAULT_RATIOS)
    earlier = path.read_bytes()
    bad = dict(good, tst_1=np.sort(np.concatenate([good["tst_1"], good["trn1_1"][:3]])))
    with pytest.raises(
        ValueError, match=r"split 1: parts trn1 and tst overlap \(row \d+ is in both\)"
    ) as err:
        save_splits(path, bad, y=labels, ratios=DEFAULT_RATIOS)
    assert str(path) in str(err.value)
    assert path.read_bytes() == earlier  # the earlier file is kept, nothing half-written


def test_a_split_leaving_rows_out_or_off_its_ratios_is_refused(labels, tmp_path):
    splits = make_splits(labels, n_splits=1, seed=0, dataset="toy")
    dropped = dict(splits, val2_0=splits["val2_0"][1:])
    with pytest.raises(
        ValueError, match=f"the parts hold {len(labels) - 1} of the data's {len(labels)} rows"
    ):
        save_splits(tmp_path / "s.npz", dropped, y=labels)
    # all rows, disjoint, but 10 Tst rows moved to Trn1: no longer 20 % of every class up to one
    moved = dict(
        splits,
        trn1_0=np.sort(np.concatenate([splits["trn1_0"], splits["tst_0"][:10]])),
        tst_0=splits["tst_0"][10:],
    )
    with pytest.raises(ValueError, match="part trn1 holds .* expected 0.3 x"):
        save_splits(tmp_path / "s.npz", moved, y=labels, ratios=DEFAULT_RATIOS)
    save_splits(
        tmp_path / "s.npz", moved, y=labels
    )  # without ratios, only the partition is checked
    assert not (tmp_path / ".s.npz.part").exists()


def test_a_splits_file_edited_by_hand_is_refused(labels, tmp_path):
    path = tmp_path / "splits.npz"
    splits = make_splits(labels, n_splits=1, seed=0, dataset="toy")
    save_splits(path, splits, y=labels, ratios=DEFAULT_RATIOS)
    np.savez(path, **dict(splits, tst_0=np.concatenate([splits["tst_0"], splits["trn1_0"]])))
    with pytest.raises(IntermediateFileError, match="no content record") as err:
        load_split(path, 0)
    assert str(path) in str(err.value)


def test_overlapping_parts_are_refused_on_reading_too(labels, tmp_path):
    """A file with a valid record but overlapping parts (written by another tool through save_npz)."""
    path = tmp_path / "splits.npz"
    splits = make_splits(labels, n_splits=1, seed=0, dataset="toy")
    splits["tst_0"] = np.sort(np.concatenate([splits["tst_0"][5:], splits["trn1_0"][:5]]))
    save_npz(path, provenance={"n_rows": len(labels)}, **splits)
    with pytest.raises(IntermediateFileError, match="parts trn1 and tst overlap") as err:
        load_split(path, 0)
    assert str(path) in str(err.value) and f"snakemake --forcerun {path}" in str(err.value)


def test_splits_made_from_other_data_are_stale(labels, tmp_path):
    path = tmp_path / "splits.npz"
    save_splits(
        path, make_splits(labels, n_splits=1, seed=0, dataset="toy"), y=labels, data_sha256="a" * 64
    )
    assert load_split(path, 0, data_sha256="a" * 64)["tst"].size > 0
    with pytest.raises(IntermediateFileError, match="stale") as err:
        load_split(path, 0, data_sha256="b" * 64)
    assert str(path) in str(err.value)
