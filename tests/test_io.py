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
    return {
        "y_pred": rng.integers(0, 3, 50),
        "baseline": rng.random(50),
        "C": np.float64(10.0),
        "note": np.array("a message"),
    }


def test_save_then_load_gives_the_arrays_their_checksum_and_provenance(tmp_path, arrays):
    path = tmp_path / "clf.npz"
    save_npz(path, provenance={"data_sha256": "d" * 64, "split": 0}, **arrays)
    loaded = load_npz(path, expect={"data_sha256": "d" * 64, "split": 0})
    assert sorted(loaded.files) == sorted(arrays)
    for name, value in arrays.items():
        assert np.array_equal(loaded[name], value) and loaded[name].dtype == value.dtype
    assert loaded.provenance == {"data_sha256": "d" * 64, "split": 0}
    assert loaded.sha256 == npz_checksum(path) == arrays_sha256(arrays)
    with np.load(
        path, allow_pickle=False
    ) as plain:  # numpy still reads it as before: no extra array
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
    assert (
        str(path) in str(err.value)
        and recorded in str(err.value)
        and arrays_sha256(edited) in str(err.value)
    )


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


# --------------------------------------------------------------------------------------------
# A user's .npz (LazyNpz) and the command line's reader of input files (rejectopt.cli._table)
# --------------------------------------------------------------------------------------------
def _npy_bytes(shape, dtype="<f8", data=b""):
    """An .npy member: a version 1.0 header declaring ``shape`` and ``dtype``, then ``data`` as given."""
    import io

    buffer = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        buffer, {"descr": dtype, "fortran_order": False, "shape": shape}
    )
    return buffer.getvalue() + data


def _network_npz(path, extra=()):
    rng = np.random.default_rng(0)
    logits = rng.normal(size=(40, 3))
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, array in (("logits", logits), ("labels", rng.integers(0, 3, 40))):
            import io

            buffer = io.BytesIO()
            np.save(buffer, array)
            archive.writestr(f"{name}.npy", buffer.getvalue())
        for name, data in extra:
            archive.writestr(name, data)
    return logits


def test_unused_member_of_an_npz_is_never_decompressed(tmp_path):
    """An unused 2e9-byte member would cost 2 GB: it stands here as a member whose data are not deflate at all."""
    import tracemalloc

    from rejectopt.cli._table import load_table

    path = tmp_path / "outputs.npz"
    logits = _network_npz(path, [("junk.npy", np.zeros(2_000_000).tobytes())])
    raw = bytearray(
        path.read_bytes()
    )  # spoil junk's compressed stream: decompressing it would fail
    with zipfile.ZipFile(path) as archive:
        info = archive.getinfo("junk.npy")
    start = info.header_offset + 30 + len(info.filename) + len(info.extra)
    raw[start : start + info.compress_size] = b"\xff" * info.compress_size
    path.write_bytes(bytes(raw))
    tracemalloc.start()
    table = load_table(path)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    np.testing.assert_array_equal(table.X, logits)
    assert "junk" in table.columns and peak < 4_000_000  # junk would be 16 MB read


def test_npz_member_declaring_a_huge_shape_is_refused_before_allocating(tmp_path):
    from rejectopt._io import LazyNpz
    from rejectopt.cli._errors import InputError
    from rejectopt.cli._table import load_table

    path = tmp_path / "forged.npz"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("logits.npy", _npy_bytes((10**7, 10**6), data=b"\0" * 16))
        archive.writestr("labels.npy", _npy_bytes((2,), "<i8", b"\0" * 16))
    with pytest.raises(
        InputError,
        match=r"forged.npz: member 'logits.npy' \(array 'logits'\) declares shape "
        r"\(10000000, 1000000\) of float64, 8e\+13 bytes, over the limit",
    ):
        load_table(path)
    # within the limit, a header that does not match the data it holds is refused too
    with pytest.raises(
        ValueError,
        match=r"declares shape \(10000000, 1000000\) of float64 \(80000000000000 bytes\) "
        r"but holds 16 bytes",
    ):
        LazyNpz(path, max_bytes=10**15)["logits"]


@pytest.mark.parametrize(
    "content, fragment",
    [
        (lambda tmp: np.save(tmp, np.zeros((3, 2))), "a single .npy array renamed .npz"),
        (
            lambda tmp: open(tmp, "w").write("logit_0,logit_1,label\n0,1,1\n"),
            r"not an .npz \(zip\) archive: text \(a CSV",
        ),
    ],
)
def test_a_file_named_npz_that_is_no_archive_is_named(tmp_path, content, fragment):
    from rejectopt.cli._errors import InputError
    from rejectopt.cli._table import load_table
    from rejectopt.datasets._custom import CustomDataset, CustomDatasetError, load_custom

    raw = tmp_path / "raw.npy"
    content(str(raw))
    path = tmp_path / "outputs.npz"
    raw.rename(path)
    with pytest.raises(InputError, match=rf"^{path}: {fragment}"):
        load_table(path)
    with pytest.raises(
        CustomDatasetError, match=rf"^{path}: {fragment}"
    ):  # the custom datasets' route alike
        load_custom(CustomDataset("grades", path, "classification", None), feature_limit=1e150)


def test_npz_members_that_are_not_numeric_npy_arrays_are_named(tmp_path):
    from rejectopt._io import LazyNpz

    path = tmp_path / "odd.npz"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("logits", b"1,2,3")
        archive.writestr("notes.npy", b"plain text, not an array")
        archive.writestr("objects.npy", _npy_bytes((1,), "|O", b"\0" * 8))
    data = LazyNpz(path)
    assert sorted(data) == ["logits", "notes", "objects"]
    with pytest.raises(
        ValueError,
        match=r"member 'logits' \(array 'logits'\) is not an .npy array \(numpy.savez "
        r"writes 'logits.npy'\)",
    ):
        data["logits"]
    with pytest.raises(
        ValueError, match=r"member 'notes.npy' \(array 'notes'\) is not a readable .npy array"
    ):
        data["notes"]
    with pytest.raises(
        ValueError, match=r"member 'objects.npy' \(array 'objects'\) holds Python objects"
    ):
        data["objects"]


def test_cli_reader_refuses_npy_data_and_caps_a_compressed_csv(tmp_path):
    import gzip

    import pandas as pd

    from rejectopt.cli._errors import InputError
    from rejectopt.cli._table import load_table

    npy = tmp_path / "x.npy"
    np.save(npy, np.zeros((3, 2)))
    with pytest.raises(
        InputError, match=rf"^{npy}: a single .npy array; the data must be an .npz of named arrays"
    ):
        load_table(npy)
    rows = pd.DataFrame(
        {"logit_0": [0.0, 1.0, 2.0], "logit_1": [1.0, 0.0, 0.5], "label": [1, 0, 0]}
    )
    small = tmp_path / "outputs.csv.gz"
    small.write_bytes(gzip.compress(rows.to_csv(index=False).encode()))
    np.testing.assert_array_equal(load_table(small).X, rows[["logit_0", "logit_1"]].to_numpy())
    bomb = (
        tmp_path / "bomb.csv.gz"
    )  # 65 MiB of one repeated row: beyond 100 x its size and the 64 MiB floor
    bomb.write_bytes(gzip.compress(b"logit_0,logit_1,label\n" + b"0,1,1\n" * (65 * 2**20 // 6), 9))
    with pytest.raises(
        InputError,
        match=rf"^{bomb}: decompresses to more than 67,108,864 bytes .* refused as a "
        "decompression bomb",
    ):
        load_table(bomb)


def test_cli_reader_names_padded_columns_and_fractional_labels(tmp_path):
    import pandas as pd

    from rejectopt.cli._errors import InputError
    from rejectopt.cli._table import load_table

    padded = tmp_path / "padded.csv"
    pd.DataFrame(
        {
            "logit_0": [0.0, 1.0],
            "logit_1": [1.0, 0.0],
            "emb_00": [0.5, 0.1],
            "emb_01": [1.0, 2.0],
            "label": [1, 0],
        }
    ).to_csv(padded, index=False)
    with pytest.raises(
        InputError,
        match=r"column 'emb_00' is numbered with a leading zero: .* rename 'emb_00' to "
        r"'emb_0' \(2 padded column\(s\)\)",
    ):
        load_table(padded)
    fractional = tmp_path / "fractional.csv"
    pd.DataFrame(
        {
            "logit_0": [0.0, 1.0, 2.0, 0.0],
            "logit_1": [1.0, 0.0, 0.5, 3.0],
            "logit_2": [0.0] * 4,
            "logit_3": [0.0] * 4,
            "label": [1, 0, 3.0000000001, 2],
        }
    ).to_csv(fractional, index=False)
    with pytest.raises(
        InputError,
        match=r"label 3.0000000001 is not a class of the 4 logits \(0..3; a class is a whole "
        r"number\) in column 'label' at row 3",
    ):
        load_table(fractional)
