"""rejectopt._io: atomic writes, and .npz files that carry and check a record of their content."""

import errno
import hashlib
import zipfile

import numpy as np
import pytest

from rejectopt._io import (
    IntermediateFileError,
    arrays_sha256,
    atomic_path,
    load_npz,
    npz_checksum,
    save_npz,
    write_text,
)


@pytest.fixture
def arrays():
    rng = np.random.default_rng(0)
    return {"y_pred": rng.integers(0, 3, 50), "baseline": rng.random(50), "C": np.float64(10.0),
            "note": np.array("a message")}


def test_save_then_load_gives_the_arrays_their_checksum_and_provenance(tmp_path, arrays):
    path = tmp_path / "clf.npz"
    save_npz(path, provenance={"data_sha256": "d" * 64, "split": 0}, **arrays)
    loaded = load_npz(path, expect={"data_sha256": "d" * 64, "split": 0})
    assert sorted(loaded.files) == sorted(arrays)
    for name, value in arrays.items():
        assert np.array_equal(loaded[name], value) and loaded[name].dtype == value.dtype
    assert loaded.provenance == {"data_sha256": "d" * 64, "split": 0}
    assert loaded.sha256 == npz_checksum(path) == arrays_sha256(arrays)
    with np.load(path, allow_pickle=False) as plain:  # numpy still reads it as before: no extra array
        assert sorted(plain.files) == sorted(arrays)


def test_checksum_known_answer():
    """The checksum of one array, recomputed by hand from its definition (name, dtype, shape, bytes)."""
    x = np.array([1.0, 2.0])
    header = b'["x", "<f8", [2]]'
    expected = hashlib.sha256(len(header).to_bytes(8, "little") + header + x.tobytes()).hexdigest()
    assert arrays_sha256({"x": x}) == expected
    assert arrays_sha256({"x": x.astype(np.float32)}) != expected  # the dtype counts
    assert arrays_sha256({"x": x.reshape(2, 1)}) != expected  # the shape counts


def test_a_file_rewritten_by_hand_is_refused_naming_it(tmp_path, arrays):
    path = tmp_path / "scores.npz"
    save_npz(path, **arrays)
    edited = dict(np.load(path))
    edited["baseline"] = -edited["baseline"]
    np.savez(path, **edited)  # what editing the file with numpy does: the record is gone
    with pytest.raises(IntermediateFileError, match="no content record") as err:
        load_npz(path)
    assert str(path) in str(err.value) and f"snakemake --forcerun {path}" in str(err.value)


def test_arrays_changed_under_a_kept_record_are_refused_with_both_checksums(tmp_path, arrays):
    path = tmp_path / "scores.npz"
    save_npz(path, **arrays)
    with zipfile.ZipFile(path) as archive:
        comment = archive.comment
    recorded = npz_checksum(path)
    edited = dict(arrays, baseline=arrays["baseline"] + 1e-9)
    np.savez(path, **edited)
    with zipfile.ZipFile(path, "a") as archive:  # the old record copied onto new arrays
        archive.comment = comment
    with pytest.raises(IntermediateFileError, match="changed after it was written") as err:
        load_npz(path)
    assert str(path) in str(err.value) and recorded in str(err.value) and arrays_sha256(edited) in str(err.value)


@pytest.mark.parametrize("damage", ["truncate", "flip"])
def test_a_corrupt_or_truncated_file_is_named_as_such(tmp_path, arrays, damage):
    path = tmp_path / "data.npz"
    save_npz(path, **arrays)
    data = bytearray(path.read_bytes())
    if damage == "truncate":
        data = data[: len(data) // 2]
    else:  # one byte of an array's data: the zip's CRC no longer matches
        with zipfile.ZipFile(path) as archive:
            info = archive.getinfo("baseline.npy")
        data[info.header_offset + 200] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.raises(IntermediateFileError, match="corrupt or truncated") as err:
        load_npz(path)
    assert str(path) in str(err.value) and f"snakemake --forcerun {path}" in str(err.value)


def test_a_file_made_from_other_inputs_is_stale(tmp_path, arrays):
    path = tmp_path / "clf.npz"
    save_npz(path, provenance={"data_sha256": "a" * 64, "split": 1}, **arrays)
    with pytest.raises(IntermediateFileError, match="stale") as err:
        load_npz(path, expect={"data_sha256": "b" * 64})
    assert str(path) in str(err.value) and "a" * 64 in str(err.value) and "b" * 64 in str(err.value)
    with pytest.raises(IntermediateFileError, match="split 1"):
        load_npz(path, expect={"split": 0})
    # a key the reader does not know, or the writer did not record, is not checked
    assert load_npz(path, expect={"data_sha256": None, "other": "x"}).provenance["split"] == 1


def test_a_missing_file_is_a_file_not_found_error(tmp_path):
    with pytest.raises(FileNotFoundError):
        load_npz(tmp_path / "nowhere.npz")


def test_a_full_file_system_names_the_file_and_keeps_the_earlier_one(tmp_path):
    """ENOSPC from the kernel (/dev/full) inside a write: the error names the target, the partial
    file is removed and the earlier file is untouched."""
    path = tmp_path / "summary.csv"
    write_text("earlier\n", path)
    with pytest.raises(OSError) as err, atomic_path(path) as tmp:
        tmp.write_text("partial")
        with open("/dev/full", "wb") as full:
            full.write(b"x" * 10)
    assert err.value.errno == errno.ENOSPC
    assert str(path) in str(err.value) and "nothing was written" in str(err.value)
    assert path.read_text() == "earlier\n"
    assert [p.name for p in tmp_path.iterdir()] == ["summary.csv"]


def test_other_os_errors_pass_through_unchanged(tmp_path):
    with pytest.raises(PermissionError) as err, atomic_path(tmp_path / "x.txt"):
        raise PermissionError(errno.EACCES, "denied", "somewhere")
    assert str(err.value) == "[Errno 13] denied: 'somewhere'"
