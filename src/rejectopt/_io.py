"""Atomic file output, and ``.npz`` and ``.csv`` files that carry a record of their own content.

The one home of atomic writes in rejectopt: every writer of the library and the
pipeline goes through :func:`atomic_path`.

The one home of intermediate ``.npz`` files too (the prepared data, the splits, the
classifiers' outputs, the learned scores, the experiments' curves): :func:`save_npz` writes,
in the zip archive's comment, a record of what the file holds (a sha256 of its arrays) and of
what it was made from (its provenance, e.g. the checksum of the data); :func:`load_npz` reads
the arrays back only if they still match that record. A file edited by hand, truncated,
corrupted, or made from other inputs is refused with an :class:`IntermediateFileError` that
names it and says how to make it again, instead of being used silently. The record lives in
the zip comment so that ``numpy.load`` still reads the arrays as before.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import zipfile
import zlib
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from .exceptions import IntermediateFileError

__all__ = [
    "NPZ_ARRAY_LIMIT",
    "IntermediateFileError",
    "LazyNpz",
    "NpzArrays",
    "arrays_sha256",
    "atomic_path",
    "csv_record_path",
    "load_csv_bytes",
    "load_npz",
    "npz_checksum",
    "recompute_hint",
    "save_figure",
    "save_csv",
    "save_npz",
    "write_bytes",
    "write_csv",
    "write_text",
]

#: Errors of a full or read-only file system: :func:`atomic_path` names the file it was writing.
_NO_ROOM = {errno.ENOSPC, errno.EDQUOT, errno.EROFS}

#: The zip comment of a file written by :func:`save_npz`: this tag, then the record as JSON.
_RECORD_TAG = b"rejectopt-npz "
_RECORD_FORMAT = 1
#: The record file of a CSV written by :func:`save_csv`: this tag, then the record as JSON.
_CSV_RECORD_TAG = b"rejectopt-csv "


def recompute_hint(path) -> str:
    """How to make the intermediate file ``path`` again, said by every :class:`IntermediateFileError`.

    Snakemake's ``--forcerun`` takes a file: it remakes that file and everything made from it.
    Deleting the file is not enough: Snakemake does not remake a missing intermediate file while
    the files made from it are present and newer than their other inputs.
    """
    return (
        f"remake it with `snakemake --forcerun {path}` and the run's usual options (it remakes the file "
        "and everything made from it), or, with the library, rerun the step that wrote it"
    )


@contextlib.contextmanager
def atomic_path(path):
    """Yield a temporary path beside ``path``; rename it onto ``path`` on success.

    On any exception the temporary file is removed and ``path`` is untouched. A full or
    read-only file system (``ENOSPC``, ``EDQUOT``, ``EROFS``) is re-raised as an ``OSError`` of
    the same ``errno`` whose message names ``path``: the system's own error names no file when
    it comes from a write.
    """
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.part")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        yield tmp
        os.replace(tmp, path)
    except OSError as err:
        if err.errno not in _NO_ROOM:
            raise
        raise OSError(
            err.errno,
            f"{err.strerror} while writing {path}; nothing was written there (the partial "
            f"file was removed): free space on (or make writable) the file system of {path.parent}, "
            "or write the results elsewhere, then run again",
            str(path),
        ) from err
    finally:
        with contextlib.suppress(OSError):  # never hide the error above behind a failed clean-up
            tmp.unlink(missing_ok=True)


def arrays_sha256(arrays: Mapping[str, np.ndarray]) -> str:
    """sha256 identifying named arrays: for each name in sorted order, its name, dtype, shape and bytes.

    Independent of the file format (and of the zip's timestamps): two files hold the same
    arrays if and only if (up to sha256 collisions) their checksums are equal.
    """
    hasher = hashlib.sha256()
    for name in sorted(arrays):
        array = np.ascontiguousarray(arrays[name])
        header = json.dumps([name, array.dtype.str, list(array.shape)]).encode()
        hasher.update(len(header).to_bytes(8, "little"))
        hasher.update(header)
        hasher.update(array.tobytes(order="C"))
    return hasher.hexdigest()


def _jsonable(value):
    """``value`` as it reads back from JSON (tuples become lists), so records compare equal."""
    return json.loads(json.dumps(value))


def save_npz(path, *, provenance: Mapping | None = None, **arrays) -> None:
    """Write ``arrays`` to ``path`` as an uncompressed ``.npz``, atomically, with its content record.

    Parameters
    ----------
    path : path-like
    provenance : mapping, optional
        What the arrays were made from (JSON values: e.g. the checksum of the data, the split),
        checked by the readers with :func:`load_npz` ``(expect=...)``.
    **arrays : array-like
        The arrays by name (no object arrays: files are read without pickles).
    """
    arrays = {name: np.asarray(value) for name, value in arrays.items()}
    record = {
        "format": _RECORD_FORMAT,
        "sha256": arrays_sha256(arrays),
        "provenance": _jsonable(dict(provenance or {})),
    }
    comment = _RECORD_TAG + json.dumps(record, sort_keys=True).encode()
    if len(comment) > 65535:  # the zip format's bound on a comment
        raise ValueError(
            f"{path}: provenance too large for the file's record ({len(comment)} bytes, at most 65535)"
        )
    with atomic_path(path) as tmp:
        with open(tmp, "wb") as handle:
            np.savez(handle, **arrays)
        with zipfile.ZipFile(tmp, "a") as archive:
            archive.comment = comment


class NpzArrays(dict):
    """The arrays of a verified ``.npz`` by name (:func:`load_npz`).

    Also ``files``, and use in a ``with`` block, as numpy's ``NpzFile``, so a reader written for
    ``numpy.load`` reads it unchanged.

    Attributes
    ----------
    path : pathlib.Path
    sha256 : str
        The checksum of the arrays (:func:`arrays_sha256`), as recorded and verified.
    provenance : dict
        What the arrays were made from, as given to :func:`save_npz`.
    """

    def __init__(self, arrays, path, sha256: str, provenance: dict):
        super().__init__(arrays)
        self.path, self.sha256, self.provenance = Path(path), sha256, provenance

    @property
    def files(self) -> list[str]:
        return list(self)

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        return False


def _corrupt(path, err) -> IntermediateFileError:
    return IntermediateFileError(
        f"{path}: corrupt or truncated .npz, cannot be read ({type(err).__name__}: {err}); "
        f"{recompute_hint(path)}"
    )


def _read_record(path: Path) -> dict | None:
    """The record in the zip comment of ``path`` (None when there is none); corrupt files raise."""
    try:
        with zipfile.ZipFile(path) as archive:
            comment = archive.comment
    except (zipfile.BadZipFile, EOFError, ValueError, zlib.error) as err:
        raise _corrupt(path, err) from err
    if not comment.startswith(_RECORD_TAG):
        return None
    try:
        record = json.loads(comment[len(_RECORD_TAG) :])
    except ValueError as err:
        raise _corrupt(path, err) from err
    if (
        not isinstance(record, dict)
        or record.get("format") != _RECORD_FORMAT
        or "sha256" not in record
    ):
        raise _corrupt(path, ValueError(f"unreadable content record {comment[:80]!r}"))
    return record


def npz_checksum(path) -> str:
    """The checksum of the arrays recorded in ``path`` (:func:`arrays_sha256`), without reading them.

    What a file made from ``path`` records as its provenance; :func:`load_npz` verifies it when
    the arrays are read.

    Raises
    ------
    IntermediateFileError
        The file is corrupt or has no content record.
    """
    path = Path(path)
    record = _read_record(path)
    if record is None:
        raise _unrecorded(path)
    return record["sha256"]


def _unrecorded(path) -> IntermediateFileError:
    return IntermediateFileError(
        f"{path}: no content record, so what it holds cannot be verified (it was not written by rejectopt's "
        f"save_npz: written or edited by hand, or made by an older version); {recompute_hint(path)}"
    )


def load_npz(path, *, expect: Mapping | None = None) -> NpzArrays:
    """Read every array of an ``.npz`` written by :func:`save_npz`, verified against its record.

    Parameters
    ----------
    path : path-like
    expect : mapping, optional
        Provenance the file must have been made from: each key's recorded value must equal
        the given one. A key given as None, or that the writer did not record (a file written
        through the library without that provenance), is not checked.

    Returns
    -------
    NpzArrays
        The arrays by name, with the verified checksum and the provenance.

    Raises
    ------
    FileNotFoundError
        No file at ``path``.
    IntermediateFileError
        The file is corrupt or truncated, has no content record, its arrays differ from the
        recorded checksum (edited after it was written), or its provenance differs from
        ``expect`` (made from other inputs: stale). The message names the file, what differs,
        and how to make it again.
    """
    path = Path(path)
    record = _read_record(path)
    if record is None:
        raise _unrecorded(path)
    try:
        with np.load(path, allow_pickle=False) as data:
            arrays = {name: data[name] for name in data.files}
    except (zipfile.BadZipFile, EOFError, ValueError, zlib.error) as err:
        raise _corrupt(path, err) from err
    found = arrays_sha256(arrays)
    if found != record["sha256"]:
        raise IntermediateFileError(
            f"{path}: its arrays changed after it was written (recorded sha256 {record['sha256']}, found {found}): "
            f"edited by hand? {recompute_hint(path)}"
        )
    provenance = record.get("provenance") or {}
    _check_provenance(path, provenance, expect)
    return NpzArrays(arrays, path, found, provenance)


def _check_provenance(path: Path, provenance: Mapping, expect: Mapping | None) -> None:
    """Refuse a file whose recorded provenance differs from what the reader ``expect``s (stale).

    Also what a file's record says it is (its role: the dataset, split, table it belongs to): a
    file copied with its record over another's is refused, naming both. A key the writer did not
    record is accepted as unknown: a run finished by an earlier release wrote records without a
    role, and the content checksum still guards those files against edits; refusing them would
    rerun every finished job whose rule did not change, for no damage found. Every file written
    since records its role, so a copy of one of them is always caught.
    """
    for key, value in (expect or {}).items():
        recorded = provenance.get(key)
        if (
            value is None or recorded is None
        ):  # not known to the reader, or not stated by the writer (an earlier release's record)
            continue
        if recorded != _jsonable(value):
            raise IntermediateFileError(
                f"{path}: made from {key} {recorded!r}, but this step's is {_jsonable(value)!r}: the file is stale "
                f"(made from other inputs) or copied from another {key}'s file; {recompute_hint(path)}"
            )


#: Largest array (bytes, as its ``.npy`` header declares it) that :class:`LazyNpz` reads from a
#: user's ``.npz``: a forged header cannot make the reader allocate more.
NPZ_ARRAY_LIMIT = 8 * 2**30
#: Bytes one read of a ``.npz`` member asks for (16 MiB): the zip reader holds that much twice, not the array.
READ_CHUNK = 1 << 24
_NPY_MAGIC = b"\x93NUMPY"


class LazyNpz(Mapping):
    """The arrays of a user's ``.npz`` by name, each read from the archive only when it is used.

    ``numpy.load`` of an ``.npz`` is lazy too, but a caller that lists every array reads them all;
    this mapping reads an array on first access (then keeps it), so an unused member of any size
    is never decompressed. Before reading, the member's ``.npy`` header is checked: its declared
    size ``prod(shape) x itemsize`` must not exceed ``max_bytes`` and must equal the data the
    member holds (a forged header is refused before any allocation), and object arrays (pickle)
    are refused. Every problem raises ``error`` (a ``ValueError`` subclass of the caller's, e.g. the
    command line's ``InputError``) naming the file and the member.

    Parameters
    ----------
    path : path-like
    error : type, default=ValueError
        The exception raised, with one message argument.
    max_bytes : int, default=NPZ_ARRAY_LIMIT
        Largest array read.
    """

    def __init__(self, path, *, error=ValueError, max_bytes=NPZ_ARRAY_LIMIT):
        self.path, self.error, self.max_bytes = Path(path), error, int(max_bytes)
        self._cache: dict = {}
        try:
            with open(self.path, "rb") as handle:
                head = handle.read(64)
        except OSError as err:
            raise error(f"{self.path}: cannot read the file ({err.strerror or err})") from None
        if head.startswith(_NPY_MAGIC):
            raise error(
                f"{self.path}: a single .npy array renamed .npz, not an .npz archive of named arrays; save "
                "the arrays by name with numpy.savez(path, logits=..., labels=...) (or X=..., y=...)"
            )
        try:
            with zipfile.ZipFile(self.path) as archive:
                infos = archive.infolist()
        except (zipfile.BadZipFile, OSError, EOFError, ValueError) as err:
            kind = (
                "text (a CSV? give it the suffix .csv)"
                if head and _looks_like_text(head)
                else f"it begins with {head[:16]!r}"
            )
            raise error(
                f"{self.path}: not an .npz (zip) archive: {kind} ({type(err).__name__}: {err}); "
                "write it with numpy.savez"
            ) from None
        self._members = {}
        for info in infos:
            name = info.filename
            self._members.setdefault(name[:-4] if name.endswith(".npy") else name, info)

    def __iter__(self):
        return iter(self._members)

    def __len__(self):
        return len(self._members)

    def __contains__(self, key):
        return key in self._members

    @property
    def files(self) -> list[str]:
        """The array names, as ``numpy.load``'s ``files``."""
        return list(self._members)

    def __getitem__(self, key):
        if key not in self._cache:
            if key not in self._members:
                raise KeyError(key)
            self._cache[key] = self._read(self._members[key], key)
        return self._cache[key]

    def _read(self, info, key):
        where = f"{self.path}: member {info.filename!r} (array {key!r})"
        if not info.filename.endswith(".npy"):
            raise self.error(
                f"{where} is not an .npy array (numpy.savez writes '{key}.npy'); save the array with "
                "numpy.savez"
            )
        try:
            with zipfile.ZipFile(self.path) as archive, archive.open(info) as member:
                try:
                    version = np.lib.format.read_magic(member)
                    read_header = {
                        (1, 0): np.lib.format.read_array_header_1_0,
                        (2, 0): np.lib.format.read_array_header_2_0,
                    }.get(version)
                    if read_header is None:
                        raise ValueError(f"unsupported .npy format version {version}")
                    shape, fortran, dtype = read_header(member)
                except ValueError as err:
                    raise self.error(f"{where} is not a readable .npy array ({err})") from None
                if dtype.hasobject:
                    raise self.error(
                        f"{where} holds Python objects (dtype {dtype}), which need pickle and are not "
                        "read: save numbers (or fixed-width text)"
                    )
                n_bytes = int(np.prod([int(v) for v in shape], dtype=object)) * dtype.itemsize
                if n_bytes > self.max_bytes:
                    raise self.error(
                        f"{where} declares shape {tuple(shape)} of {dtype}, {n_bytes:.4g} bytes, over the "
                        f"limit of {self.max_bytes:.4g} bytes for one array: nothing was allocated"
                    )
                held = info.file_size - member.tell()
                if n_bytes != held:
                    raise self.error(
                        f"{where} declares shape {tuple(shape)} of {dtype} ({n_bytes} bytes) but holds "
                        f"{held} bytes of data: the file is corrupt or was edited"
                    )
                buffer = bytearray(n_bytes)
                view, filled = memoryview(buffer), 0
                while filled < n_bytes:
                    # A zip member's readinto reads the whole request into a bytes object first and
                    # copies it: slices of READ_CHUNK bytes keep that temporary small, not two more
                    # copies of a 1 GB array.
                    got = member.readinto(view[filled : filled + READ_CHUNK])
                    if not got:
                        break
                    filled += got
        except (zipfile.BadZipFile, OSError, EOFError, zlib.error) as err:
            raise self.error(
                f"{where}: cannot be read ({type(err).__name__}: {err}); the file is corrupt or "
                "truncated"
            ) from None
        if filled != n_bytes:
            raise self.error(
                f"{where}: {filled} of its {n_bytes} bytes could be read; the file is truncated"
            )
        array = np.frombuffer(buffer, dtype=dtype)
        return array.reshape(shape, order="F" if fortran else "C")

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        return False


def _looks_like_text(head: bytes) -> bool:
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return all(c.isprintable() or c in "\r\n\t" for c in text)


def write_bytes(data: bytes, path) -> None:
    """Write ``data`` to ``path`` atomically."""
    with atomic_path(path) as tmp:
        Path(tmp).write_bytes(data)


def write_text(text: str, path) -> None:
    """Write ``text`` to ``path`` atomically."""
    with atomic_path(path) as tmp:
        Path(tmp).write_text(text)


def write_csv(frame, path) -> None:
    """Write a DataFrame to ``path`` as CSV (no index), atomically."""
    with atomic_path(path) as tmp:
        frame.to_csv(tmp, index=False)


def save_figure(figure, path, dpi: int = 150) -> None:
    """Save a matplotlib figure to ``path`` as PNG, atomically."""
    with atomic_path(path) as tmp:
        figure.savefig(tmp, format="png", dpi=dpi)


def csv_record_path(path) -> Path:
    """Where the content record of the CSV ``path`` lives (:func:`save_csv`): ``<name>.csv.record`` beside it."""
    path = Path(path)
    return path.with_name(path.name + ".record")


def save_csv(frame, path, *, provenance: Mapping | None = None, index: bool = False) -> None:
    """Write a DataFrame to ``path`` as CSV, atomically, with its content record beside it.

    The CSV's bytes are exactly those of :func:`write_csv` (``frame.to_csv``); the record, the
    sha256 of those bytes and ``provenance``, goes to :func:`csv_record_path`, written before
    the CSV is renamed into place: an interrupted write leaves a CSV that its record refuses,
    never one taken for what it is not.

    Parameters
    ----------
    frame : pandas.DataFrame
    path : path-like
    provenance : mapping, optional
        What the rows were made from (JSON values), checked by :func:`load_csv_bytes`
        ``(expect=...)``.
    index : bool, default False
        Write the frame's index too.
    """
    path = Path(path)
    with atomic_path(path) as tmp:
        frame.to_csv(tmp, index=index)
        record = {
            "format": _RECORD_FORMAT,
            "sha256": hashlib.sha256(Path(tmp).read_bytes()).hexdigest(),
            "provenance": _jsonable(dict(provenance or {})),
        }
        write_bytes(
            _CSV_RECORD_TAG + json.dumps(record, sort_keys=True).encode(), csv_record_path(path)
        )


def load_csv_bytes(path, *, expect: Mapping | None = None) -> bytes:
    """The bytes of a CSV written by :func:`save_csv`, verified against its record.

    The bytes are read once and checked, so what the caller parses
    (``pandas.read_csv(io.BytesIO(...))``) is what was checked.

    Parameters
    ----------
    path : path-like
    expect : mapping, optional
        Provenance the file must have been made from, as for :func:`load_npz`.

    Returns
    -------
    bytes
        The file's content, as written.

    Raises
    ------
    FileNotFoundError
        No file at ``path``.
    IntermediateFileError
        No record beside the file (written by hand, or by an older version), an unreadable
        record, bytes that differ from the recorded checksum (edited, truncated or emptied
        after it was written), or provenance that differs from ``expect`` (stale). The message
        names the file, what differs, and how to make it again.
    """
    path = Path(path)
    data = path.read_bytes()
    record_path = csv_record_path(path)
    try:
        raw = record_path.read_bytes()
    except FileNotFoundError:
        raise IntermediateFileError(
            f"{path}: no content record ({record_path.name} is missing beside it), so what it holds cannot be "
            f"verified (written or replaced by hand, or made by an older version); {recompute_hint(path)}"
        ) from None
    try:
        record = (
            json.loads(raw[len(_CSV_RECORD_TAG) :]) if raw.startswith(_CSV_RECORD_TAG) else None
        )
    except ValueError:
        record = None
    if (
        not isinstance(record, dict)
        or record.get("format") != _RECORD_FORMAT
        or "sha256" not in record
    ):
        raise IntermediateFileError(
            f"{path}: its content record {record_path} is unreadable ({raw[:80]!r}); "
            f"{recompute_hint(path)}"
        )
    found = hashlib.sha256(data).hexdigest()
    if found != record["sha256"]:
        raise IntermediateFileError(
            f"{path}: its content changed after it was written (recorded sha256 {record['sha256']}, found {found}, "
            f"{len(data)} bytes): edited by hand, truncated, or rows deleted? {recompute_hint(path)}"
        )
    _check_provenance(path, record.get("provenance") or {}, expect)
    return data
