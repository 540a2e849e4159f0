"""The real download path, run against a local HTTP server: faults, trust, 300-W and the pipeline end to end.

tests/http_server.py serves the official files at ``/<host>/<path>`` on
127.0.0.1, the layout the ``download_base`` config key maps the official URLs
to, with faults on demand.  What the repository ships is served: the demo
mirror's datasets (abalone, sattelite, shuttle) as their real bytes packaged as
the official URLs serve them (zip, tar.gz, gzip, unix compress .Z, plain); the
7 download-only datasets and bikeshare as the excerpts of tests/data/excerpts
(packaged by tests/excerpts.py); a 300-W archive of synthetic faces.  The end to
end test runs a second time, marked ``mirror``, on the full offline copies
($REJECTOPT_DATA_MIRROR, $REJECTOPT_FACES_MIRROR): every mirrored dataset's real
bytes and real faces.

* Faults (library level, the code download_raw runs): each fault, persistent,
  ends in one error naming the file, the URL, the status or hashes and the
  attempts, with nothing left in the raw or data folder; transient faults that
  clear are retried with the configured backoff.
* Validate before trusting: a raw file without a pinned hash that fails parsing
  or validation is never recorded in checksums.lock; decompression errors name
  the file and say what to do.
* 300-W: a small archive of real faces in the official layout; malicious
  archives are refused with nothing extracted.
* End to end: one Snakemake run of download_raw / prepare_dataset for all 22
  datasets and download_faces / extract_faces through the server (see
  test_pipeline_end_to_end_through_the_local_server for how excerpt-served
  datasets are judged).
"""

from __future__ import annotations

import bz2
import dataclasses
import gzip
import hashlib
import io
import lzma
import os
import re
import subprocess
import sys
import tarfile
import time
import zipfile
from pathlib import Path

import numpy as np
import pytest
import yaml
from excerpts import EXCERPT_SHAPES, edit_cell, excerpt, official_downloads
from http_server import (
    FACES_URL,
    LIBSVM,
    MIRRORED_PACKAGING,
    TOP,
    UCI,
    LocalServer,
    facebook_downloads,
    faces_members,
    lzw_bomb,
    lzw_compress,
    mirrored_downloads,
    served_path,
    tar_gz,
)
from support import DEMO_MIRROR, mirror_folder, snakemake

from rejectopt.datasets import (
    REGISTRY,
    ChecksumError,
    DataSourceError,
    DownloadError,
    _download,
    _fetch,
    _prepare,
    get_spec,
    load_prepared,
    prepare_dataset,
)
from rejectopt.datasets._decompress import MIN_UNPACK_CAP_BYTES, unlzw
from rejectopt.datasets._download import DownloadOptions, resolve_url
from rejectopt.datasets._faces300w import (
    ARCHIVE_SUBSETS,
    extract_official_archive,
    fetch_archive,
    list_faces,
)
from rejectopt.datasets._fetch import fetch_file
from rejectopt.datasets._prepare import RawDataError, fingerprint
from rejectopt.datasets._registry import RawFile
from rejectopt.datasets._trust import LOCK_FILE_NAME, read_lock
from rejectopt.exceptions import DecompressionError, UnpackLimitError
from rejectopt.pipeline.config import ConfigError, validate_config

REPO = Path(__file__).resolve().parents[1]
ABALONE_URL = f"{UCI}/abalone/abalone.data"
BIKESHARE_URL = f"{UCI}/00275/Bike-Sharing-Dataset.zip"
SENSORLESS_URL = f"{UCI}/00325/Sensorless_drive_diagnosis.txt"
#: Fast settings for the fault tests: 2 retries, waits of 0.01 and 0.02 s, a 0.3 s stall is a timeout.
FAST = dict(retries=2, backoff_s=0.01, timeout_s=0.3)


# --------------------------------------------------------------------------- fixtures
def files_to_serve(mirror: Path, faces: Path | None) -> dict:
    """{official URL: bytes} of the 22 datasets and the 300-W archive from the raw-data mirror
    ``mirror`` and the offline faces ``faces`` (None: synthetic faces), and how each dataset is served:
    "real" (the mirror's bytes), "excerpt" (tests/data/excerpts), "excerpt+real" (facebook with the
    mirror's test file) or "unavailable" (in neither: a 404)."""
    downloads, kinds = {}, {}
    for name in REGISTRY:
        if name in MIRRORED_PACKAGING:
            served = mirrored_downloads(name, mirror)
            kinds[name] = (
                "real"
                if served is not None
                else "excerpt"
                if name == "bikeshare"
                else "unavailable"
            )
            if kinds[name] == "excerpt":
                served = official_downloads(name)
            downloads.update(served or {})
        elif name == "facebook":
            served, real_test_file = facebook_downloads(mirror)
            kinds[name] = "excerpt+real" if real_test_file else "excerpt"
            downloads.update(served)
        else:
            kinds[name] = "excerpt"
            downloads.update(official_downloads(name))
    downloads[FACES_URL] = tar_gz(faces_members(faces))
    return {"downloads": downloads, "kinds": kinds, "mirror": mirror}


@pytest.fixture(scope="session")
def official_files():
    """What the repository ships, served (see files_to_serve): the demo mirror's 3 datasets real, the
    7 download-only ones and bikeshare as excerpts, the 11 others unavailable, synthetic faces."""
    return files_to_serve(DEMO_MIRROR, None)


@pytest.fixture
def server(official_files):
    local = LocalServer()
    local.serve_all(official_files["downloads"])
    yield local
    local.close()


@pytest.fixture
def sleeps(monkeypatch):
    """The waits between attempts (recorded, not slept)."""
    waited = []
    monkeypatch.setattr(_download, "_sleep", waited.append)
    return waited


def files_in(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir()) if folder.exists() else []


# --------------------------------------------------------------------------- URL mapping and config
def test_download_base_maps_the_host_to_a_folder():
    assert resolve_url(ABALONE_URL, None) == ABALONE_URL
    expected = "http://127.0.0.1:8000/archive.ics.uci.edu/ml/machine-learning-databases/abalone/abalone.data"
    assert resolve_url(ABALONE_URL, "http://127.0.0.1:8000/") == expected
    assert resolve_url(ABALONE_URL, "http://127.0.0.1:8000") == expected
    assert (
        resolve_url(FACES_URL, "file:///srv/m/")
        == "file:///srv/m/dlib.net/files/data/ibug_300W_large_face_landmark_dataset.tar.gz"
    )
    assert resolve_url("https://h.org/a/b?x=1", "http://l/") == "http://l/h.org/a/b?x=1"
    local = LocalServer()
    try:
        assert resolve_url(ABALONE_URL, local.base) == local.url(ABALONE_URL)
    finally:
        local.close()
    for bad in (
        dict(base="ftp://x/"),
        dict(retries=-1),
        dict(backoff_s=-1),
        dict(timeout_s=0),
        dict(deadline_s=0),
    ):
        with pytest.raises(ValueError, match="download_"):
            DownloadOptions(**bad)
    with pytest.raises(ValueError, match="unpack_max_ratio must be a finite number >= 1"):
        DownloadOptions(max_ratio=0.5)


@pytest.mark.pipeline
def test_config_keys_are_in_the_schema_and_checked():
    schema = yaml.safe_load((REPO / "workflow/schemas/config.schema.yaml").read_text())
    config = yaml.safe_load((REPO / "config.yaml").read_text())
    assert (
        DownloadOptions.from_config(config) == DownloadOptions()
    )  # config.yaml holds the library defaults
    validate_config(
        {**config, "download_base": "http://127.0.0.1:1/", "download_retries": 0}, schema
    )
    assert DownloadOptions.from_config(
        {"download_deadline_s": 2, "unpack_max_ratio": 500}
    ) == DownloadOptions(deadline_s=2, max_ratio=500)
    for key, value in [
        ("download_base", "ftp://x/"),
        ("download_retries", -1),
        ("download_timeout_s", 0),
        ("download_deadline_s", 0),
        ("unpack_max_ratio", 0.5),
    ]:
        with pytest.raises(ConfigError, match=key):
            validate_config({**config, key: value}, schema)


# --------------------------------------------------------------------------- faults
def fetch_through(server, name, tmp_path, **overrides):
    """prepare_dataset downloading from ``server`` (the library path the download_raw rule runs)."""
    options = DownloadOptions(base=server.base, **{**FAST, **overrides})
    return prepare_dataset(
        name, tmp_path / "raw", tmp_path / "data" / name / "data.npz", download=options
    )


def assert_nothing_looks_complete(tmp_path, name):
    assert files_in(tmp_path / "raw" / name) == []  # no raw file, no .part, no lock
    assert not (tmp_path / "data" / name / "data.npz").exists()


FINAL_FAULTS = {  # fault -> (queued faults, requests made, error type, message pattern after "<file>: ")
    "drop": (
        ["drop"] * 3,
        3,
        DownloadError,
        r"download of {url} \(official URL {official}\) failed after 3 attempts \(download_retries=2\); last "
        r"error: (connection dropped by the server \(ConnectionResetError\) after \d+ bytes of the \d+ announced"
        r"|the server announced Content-Length (\d+) but sent \d+ bytes)\. Nothing was kept in ",
    ),
    "404": (
        ["404"],
        1,
        DownloadError,
        r"cannot download {url} \(official URL {official}\): HTTP 404 Not Found; not retried \(attempt 1 of 3, "
        r"download_retries=2: only dropped or refused connections, timeouts, short bodies and HTTP "
        r"408/425/429/500/502/503/504 are retried\)\. Nothing was kept in ",
    ),
    "500": (
        ["500"] * 3,
        3,
        DownloadError,
        r"download of {url} \(official URL {official}\) failed after 3 attempts \(download_retries=2\); last "
        r"error: HTTP 500 Internal Server Error\. Nothing was kept in ",
    ),
    "stall": (
        ["stall"] * 3,
        3,
        DownloadError,
        r"download of {url} \(official URL {official}\) failed after 3 attempts \(download_retries=2\); last "
        r"error: no data for 0\.3 s \(timeout; download_timeout_s=0\.3\) after 1024 bytes of the \d+ "
        r"announced\. Nothing was kept in ",
    ),
    "length_long": (
        ["length_long"] * 3,
        3,
        DownloadError,
        r"download of {url} \(official URL {official}\) failed after 3 attempts \(download_retries=2\); "
        r"last error: the server announced Content-Length (\d+) but sent (\d+) bytes\. Nothing was "
        r"kept in ",
    ),
    "wrong_bytes": (["wrong_bytes"], 1, ChecksumError, r"checksum mismatch for "),
    "length_short": (["length_short"], 1, ChecksumError, r"checksum mismatch for "),
}


@pytest.mark.parametrize("fault", sorted(FINAL_FAULTS))
@pytest.mark.parametrize(
    ("name", "official"), [("abalone", ABALONE_URL), ("bikeshare", BIKESHARE_URL)]
)
def test_persistent_fault_is_one_clear_error_and_leaves_nothing(
    fault, name, official, server, sleeps, tmp_path
):
    """abalone.data is served plain, hour.csv as a member of Bike-Sharing-Dataset.zip (a scratch file)."""
    queued, n_requests, error, pattern = FINAL_FAULTS[fault]
    if name == "bikeshare" and error is ChecksumError:
        error = DecompressionError  # a zip with changed or missing bytes cannot be read
    server.fail(official, *queued)
    with pytest.raises(error) as info:
        fetch_through(server, name, tmp_path)
    message = str(info.value)
    raw_file = get_spec(name).files[0]
    url = server.url(official)
    assert message.startswith(
        f"{raw_file.name}: " if error is not ChecksumError else "checksum mismatch for "
    )
    if error is DownloadError:
        rest = message[len(raw_file.name) + 2 :]
        assert re.match(pattern.format(url=re.escape(url), official=re.escape(official)), rest), (
            message
        )
        assert info.value.attempts == n_requests and info.value.url == url
        assert info.value.status == {"404": 404, "500": 500}.get(fault)
    elif error is ChecksumError:  # the pinned hash and the one of what was served
        sent = server.files[served_path(official)]
        middle = len(sent) // 2
        sent = (
            sent[:middle] + bytes([sent[middle] ^ 0xFF]) + sent[middle + 1 :]
            if fault == "wrong_bytes"
            else sent[:middle]
        )
        assert message.startswith(
            f"checksum mismatch for abalone.data (from {url}; 1 download attempt; a checksum mismatch is not "
            f"retried; expected hash from the registry): expected sha256 {raw_file.sha256}, found "
            f"{hashlib.sha256(sent).hexdigest()} (the file was deleted, nothing was kept)."
        ), message
    else:
        assert f"the download of {url} (" in message and "corrupt or truncated" in message, message
    assert server.requests_of(official) == queued[:n_requests]
    assert sleeps == [0.01, 0.02][: n_requests - 1]
    assert_nothing_looks_complete(tmp_path, name)


@pytest.mark.parametrize("fault", ["drop", "500", "stall", "length_long"])
def test_transient_fault_is_retried_with_backoff(fault, server, sleeps, tmp_path, caplog):
    server.fail(ABALONE_URL, fault)
    with caplog.at_level("WARNING", logger="rejectopt.datasets._download"):
        info = fetch_through(server, "abalone", tmp_path, backoff_s=0.25)
    assert info["xy_sha256"] == get_spec("abalone").xy_sha256
    assert server.requests_of(ABALONE_URL) == [fault, "ok"]
    assert sleeps == [0.25]
    assert f"abalone.data: attempt 1 of 3 failed ({server.url(ABALONE_URL)}: " in caplog.text
    assert "retrying in 0.25 s" in caplog.text


def test_no_retries_means_one_attempt(server, sleeps, tmp_path):
    server.fail(ABALONE_URL, "500")
    with pytest.raises(DownloadError, match=r"failed after 1 attempts \(download_retries=0\)"):
        fetch_through(server, "abalone", tmp_path, retries=0)
    assert sleeps == [] and server.requests_of(ABALONE_URL) == ["500"]


def test_refused_connection_is_retried_a_missing_local_file_is_not(server, sleeps, tmp_path):
    raw_file = get_spec("abalone").files[0]
    closed = LocalServer()
    closed.close()  # nothing listens on its port any more
    with pytest.raises(
        DownloadError,
        match=r"failed after 3 attempts \(download_retries=2\); last error: connection refused",
    ):
        fetch_file(raw_file, tmp_path / "a", download=DownloadOptions(base=closed.base, **FAST))
    assert sleeps == [0.01, 0.02]
    # a file:// base: the official tree in a folder; a file missing there is final at once
    tree = tmp_path / "tree"
    with pytest.raises(
        DownloadError, match=r"abalone\.data: cannot download file://.*not retried \(attempt 1 of 3"
    ):
        fetch_file(raw_file, tmp_path / "b", download=DownloadOptions(base=tree.as_uri(), **FAST))
    target = tree / served_path(ABALONE_URL).lstrip("/")
    target.parent.mkdir(parents=True)
    target.write_bytes(server.files[served_path(ABALONE_URL)])
    path = fetch_file(
        raw_file, tmp_path / "b", download=DownloadOptions(base=tree.as_uri(), **FAST)
    )
    assert hashlib.sha256(path.read_bytes()).hexdigest() == raw_file.sha256
    assert sleeps == [0.01, 0.02] and files_in(tmp_path / "a") == []


# --------------------------------------------------------------------------- validate before trusting
def unpinned_spec(name, **shape):
    """The registry's spec without pinned hashes (an excerpt cannot match them), with ``shape`` overrides."""
    spec = get_spec(name)
    files = tuple(dataclasses.replace(f, sha256=None, download_sha256=None) for f in spec.files)
    return dataclasses.replace(spec, files=files, **shape)


def pipeline_steps(server, name, tmp_path):
    """download_raw (fetch, record_lock=False) for each file, then prepare_dataset (no download)."""
    raw = tmp_path / "raw" / name
    options = DownloadOptions(base=server.base, **FAST)
    for raw_file in _prepare.get_spec(name).files:
        fetch_file(raw_file, raw, download=options, record_lock=False, progress=False)
    assert LOCK_FILE_NAME not in files_in(raw)  # downloaded, not yet trusted
    return prepare_dataset(
        name, tmp_path / "raw", tmp_path / "data" / name / "data.npz", allow_download=False
    )


def test_unpinned_file_is_trusted_only_after_it_parsed(server, monkeypatch, tmp_path):
    spec = unpinned_spec("sensorless", n_examples=42, n_classes=2)  # the excerpt's shape
    monkeypatch.setattr(_prepare, "get_spec", lambda name: spec)
    info = pipeline_steps(server, "sensorless", tmp_path)
    path = tmp_path / "raw" / "sensorless" / "Sensorless_drive_diagnosis.txt"
    assert read_lock(path.parent) == {path.name: hashlib.sha256(path.read_bytes()).hexdigest()}
    X, y = load_prepared(tmp_path / "data" / "sensorless" / "data.npz")
    assert X.shape == (42, 48) and info["xy_sha256"] == fingerprint(X, y)


SENSORLESS = "sensorless/Sensorless_drive_diagnosis.txt"


def _drop_last_field(text: bytes) -> bytes:
    return (
        b"\n".join(
            b" ".join(line.split(b" ")[:-2] + line.split(b" ")[-1:])
            for line in text.split(b"\n")
            if line
        )
        + b"\n"
    )


def _extra_field(text: bytes, line: int) -> bytes:
    lines = text.split(b"\n")
    lines[line - 1] += b" 7"
    return b"\n".join(lines)


BAD_RAW = {  # case -> (served bytes, message pattern naming the raw file and the row)
    "nan": (
        edit_cell(SENSORLESS, 3, 7, "NaN", " ")[SENSORLESS],
        r"Sensorless_drive_diagnosis\.txt: line 3, column 7: missing value",
    ),
    "inf": (
        edit_cell(SENSORLESS, 5, 2, "inf", " ")[SENSORLESS],
        r"Sensorless_drive_diagnosis\.txt: line 5, column 2: non-finite value (np\.float64\()?inf",
    ),
    "text": (
        edit_cell(SENSORLESS, 9, 48, "0.5e", " ")[SENSORLESS],
        r"Sensorless_drive_diagnosis\.txt: line 9, column 48: non-numeric value '0\.5e'",
    ),
    "extra field": (
        _extra_field(excerpt(SENSORLESS), 11),
        r"Sensorless_drive_diagnosis\.txt: Error tokenizing data\. C error: Expected 49 fields in line 11, saw 50",
    ),
    "a column too few": (
        _drop_last_field(excerpt(SENSORLESS)),
        r"sensorless: parsed from Sensorless_drive_diagnosis\.txt: wrong column count: 47 feature "
        r"columns, expected 48",
    ),
    # Content-Length half the file: the client stops there, mid-line (line 21 of the excerpt)
    "cut by a short Content-Length": (
        None,
        r"Sensorless_drive_diagnosis\.txt: line {last}, column \d+: "
        r"(missing value|non-numeric value)",
    ),
}


@pytest.mark.parametrize("case", list(BAD_RAW))
def test_bad_unpinned_raw_file_is_never_trusted(case, server, monkeypatch, tmp_path):
    served, pattern = BAD_RAW[case]
    spec = unpinned_spec("sensorless", n_examples=42, n_classes=2)
    monkeypatch.setattr(_prepare, "get_spec", lambda name: spec)
    if served is None:
        server.fail(SENSORLESS_URL, "length_short")
        pattern = pattern.format(
            last=excerpt(SENSORLESS)[: len(excerpt(SENSORLESS)) // 2].count(b"\n") + 1
        )
    else:
        server.serve(SENSORLESS_URL, served)
    with pytest.raises(RawDataError, match=pattern) as info:
        pipeline_steps(server, "sensorless", tmp_path)
    raw = tmp_path / "raw" / "sensorless"
    assert files_in(raw) == ["Sensorless_drive_diagnosis.txt.rejected"]  # moved aside, no lock file
    message = str(info.value)
    assert f"was not recorded in {raw / LOCK_FILE_NAME}" in message
    assert f"moved aside to {raw / 'Sensorless_drive_diagnosis.txt.rejected'}" in message
    assert not (tmp_path / "data" / "sensorless" / "data.npz").exists()


def test_array_validation_names_the_files_and_row():
    spec = get_spec("codrna")
    paths = {"cod-rna": "/x/cod-rna", "cod-rna.t": "/x/cod-rna.t"}
    X, y = np.zeros((5, 8)), np.zeros(5, dtype=np.int64)
    _prepare.validate_arrays(spec, X, y, paths)
    X[3, 6] = np.inf
    with pytest.raises(
        RawDataError,
        match=r"codrna: parsed from cod-rna \+ cod-rna\.t: data row 4, feature column 7: non-finite value inf",
    ):
        _prepare.validate_arrays(spec, X, y, paths)
    with pytest.raises(RawDataError, match="wrong column count: 7 feature columns, expected 8"):
        _prepare.validate_arrays(spec, np.zeros((5, 7)), y, paths)
    with pytest.raises(RawDataError, match="labels must be integers >= 0"):
        _prepare.validate_arrays(spec, np.zeros((5, 8)), np.full(5, -1), paths)


# --------------------------------------------------------------------------- decompression errors
def _damage(data: bytes, how: str) -> bytes:
    if how == "truncated":
        return data[: len(data) // 2]
    middle = len(data) // 2
    return data[:middle] + bytes(b ^ 0x5A for b in data[middle : middle + 64]) + data[middle + 64 :]


COMPRESSORS = {"xz": lzma.compress, "gz": lambda d: gzip.compress(d, mtime=0), "bz2": bz2.compress}
TEST_COMMANDS = {"xz": "xz -t", "gz": "gzip -t", "bz2": "bzip2 -t"}


@pytest.mark.parametrize("how", ["truncated", "corrupt"])
@pytest.mark.parametrize("suffix", sorted(COMPRESSORS))
def test_damaged_mirror_copy_names_the_file_and_what_to_do(suffix, how, tmp_path):
    raw_file = RawFile(dataset="toy", name="toy.csv", url="https://example.invalid/toy.csv")
    mirror_copy = tmp_path / "mirror" / "toy" / f"toy.csv.{suffix}"
    mirror_copy.parent.mkdir(parents=True)
    mirror_copy.write_bytes(_damage(COMPRESSORS[suffix](excerpt("msd/YearPredictionMSD.txt")), how))
    with pytest.raises(DecompressionError) as info:
        fetch_file(raw_file, tmp_path / "raw", mirror=tmp_path / "mirror", allow_download=False)
    message = str(info.value)
    assert message.startswith(
        f"toy.csv: cannot decompress the data_mirror copy {mirror_copy} as .{suffix} ("
    )
    outcome = re.search(
        r"the file is corrupt or truncated; (nothing was written|the (\d+) bytes written so far are "
        r"deleted, nothing is kept)\. ",
        message,
    )
    assert outcome, (
        message
    )  # what was written before the damage is said (and is no more than the file)
    assert outcome.group(2) is None or 0 < int(outcome.group(2)) <= len(
        excerpt("msd/YearPredictionMSD.txt")
    )
    assert (
        f"Replace {mirror_copy} with an intact copy of the official file (`{TEST_COMMANDS[suffix]} {mirror_copy}`"
        in message
    )
    assert files_in(tmp_path / "raw") == []


MSD_EXCERPT = "msd/YearPredictionMSD.txt"
TOY_TGZ = RawFile(
    dataset="toy",
    name="data.txt",
    url="https://example.org/files/toy.tgz",
    archive_member="toy/data.txt",
)
DAMAGED_DOWNLOADS = {  # packaging -> (raw file, official URL, served bytes before damage)
    ".gz": (
        dataclasses.replace(get_spec("covtype").files[0], download_sha256=None),
        f"{UCI}/covtype/covtype.data.gz",
        gzip.compress(excerpt("covtype/covtype.data"), mtime=0),
    ),
    ".bz2": (
        get_spec("ijcnn").files[0],
        f"{LIBSVM}/binary/ijcnn1.bz2",
        bz2.compress(excerpt("ijcnn/ijcnn1")),
    ),
    ".zip": (
        get_spec("superconduct").files[0],
        f"{UCI}/00464/superconduct.zip",
        official_downloads("superconduct")[f"{UCI}/00464/superconduct.zip"],
    ),
    ".tgz": (
        TOY_TGZ,
        TOY_TGZ.url,
        tar_gz({"toy/README": b"x", "toy/data.txt": excerpt(MSD_EXCERPT)}),
    ),
}


@pytest.mark.parametrize("how", ["truncated", "corrupt"])
@pytest.mark.parametrize("packaging", sorted(DAMAGED_DOWNLOADS))
def test_damaged_download_names_the_file_and_what_to_do(packaging, how, server, sleeps, tmp_path):
    raw_file, official, intact = DAMAGED_DOWNLOADS[packaging]
    served = _damage(intact, how)
    server.serve(official, served)  # served as is: a Content-Length that matches, a damaged file
    with pytest.raises(DecompressionError) as info:
        fetch_file(
            raw_file,
            tmp_path / "raw",
            download=DownloadOptions(base=server.base, **FAST),
            progress=False,
        )
    message = str(info.value)
    url = server.url(official)
    assert message.startswith(f"{raw_file.name}: ")
    assert f"the download of {url} ({len(served)} bytes)" in message
    assert "corrupt or truncated" in message
    assert re.search(
        r"; (nothing was written|the \d+ bytes written so far are deleted, nothing is kept)\. ",
        message,
    )
    assert (
        f"Run again to download it anew; if this happens again the file served at {url} is damaged"
        in message
    )
    assert (
        files_in(tmp_path / "raw") == [] and server.requests_of(official) == ["ok"] and sleeps == []
    )


# --------------------------------------------------------------------------- 300-W archive
def _tar(tmp_path, add) -> Path:
    """A .tar.gz with one real face, then what ``add(archive)`` adds."""
    path = tmp_path / "ibug_300W_large_face_landmark_dataset.tar.gz"
    with tarfile.open(path, "w:gz") as archive:
        for name, data in list(faces_members().items())[:2]:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
        add(archive)
    return path


def _member(name, kind=tarfile.REGTYPE, linkname="", data=b"x"):
    def add(archive):
        info = tarfile.TarInfo(name)
        info.type, info.linkname = kind, linkname
        if kind == tarfile.REGTYPE:
            info.size = len(data)
        archive.addfile(info, io.BytesIO(data) if kind == tarfile.REGTYPE else None)

    return add


MALICIOUS = {  # case -> (member adder, message pattern)
    "path traversal": (
        _member(f"{TOP}/../../evil.txt"),
        r"member '.*evil\.txt' escapes the destination",
    ),
    "absolute path": (
        _member("/tmp/rejectopt-evil.txt"),
        r"member '/tmp/rejectopt-evil\.txt' escapes the destination",
    ),
    "symlink outside": (
        _member(f"{TOP}/afw/link", tarfile.SYMTYPE, "../../../../etc/passwd"),
        r"link '.*afw/link' -> '\.\./\.\./\.\./\.\./etc/passwd' points outside the destination",
    ),
    "absolute symlink": (
        _member(f"{TOP}/afw/link", tarfile.SYMTYPE, "/etc/passwd"),
        r"link '.*afw/link' -> '/etc/passwd' points outside the destination",
    ),
    "hard link outside": (
        _member(f"{TOP}/afw/hard", tarfile.LNKTYPE, "../outside.txt"),
        r"link '.*afw/hard' -> '\.\./outside\.txt' points outside the destination",
    ),
    "hard link to no member": (
        _member(f"{TOP}/afw/hard", tarfile.LNKTYPE, f"{TOP}/afw/missing.jpg"),
        r"hard link '.*afw/hard' -> '.*afw/missing\.jpg' names no regular file stored before "
        r"it in the archive",
    ),
    "device file": (
        _member(f"{TOP}/afw/null", tarfile.CHRTYPE),
        r"member '.*afw/null' is a device file",
    ),
    "fifo": (_member(f"{TOP}/afw/pipe", tarfile.FIFOTYPE), r"member '.*afw/pipe' is a FIFO"),
}


@pytest.mark.parametrize("case", list(MALICIOUS))
def test_malicious_archive_is_refused_with_nothing_extracted(case, tmp_path):
    add, pattern = MALICIOUS[case]
    work = tmp_path / "raw" / "300w"
    work.mkdir(parents=True)
    archive = _tar(work, add)
    before = sorted(p for p in tmp_path.rglob("*"))
    with pytest.raises(ValueError, match=pattern) as info:
        extract_official_archive(archive, work / "extracted")
    assert "nothing was extracted" in str(
        info.value
    ) and "was not recorded in checksums.lock" in str(info.value)
    rejected = archive.with_name(archive.name + ".rejected")
    after = sorted(p for p in tmp_path.rglob("*"))
    assert after == sorted(
        rejected if p == archive else p for p in before
    )  # only the archive moved aside
    assert not Path("/tmp/rejectopt-evil.txt").exists()


def _cut_tar() -> bytes:
    """The small 300-W archive uncompressed, cut in the middle of its last file's data."""
    tar = gzip.decompress(tar_gz(faces_members()))
    with tarfile.open(fileobj=io.BytesIO(tar)) as archive:
        last = [member for member in archive.getmembers() if member.isfile()][-1]
    assert last.size > 1
    return tar[: last.offset_data + last.size // 2]


DAMAGED_ARCHIVES = {  # case -> (archive bytes, what the message says went wrong)
    # the gzip stream is read whole before the tar: a cut one is refused there (check_stream)
    "gzip stream cut": (
        lambda: _damage(tar_gz(faces_members()), "truncated"),
        r"cannot decompress the archive \S+ as \.gz \(EOFError: .*\): the file is corrupt or "
        r"truncated; nothing was written\. ",
    ),
    # no compression to check: the tar reader refuses it
    "tar cut in a member": (
        _cut_tar,
        r"the archive \S+ is corrupt or truncated \(ReadError: unexpected end of data\)\. ",
    ),
    "empty file": (
        lambda: b"",
        r"the archive \S+ is corrupt or truncated \(ReadError: file could not be opened ",
    ),
}


@pytest.mark.parametrize("case", list(DAMAGED_ARCHIVES))
def test_damaged_archive_is_refused_in_one_wording(case, tmp_path):
    """A damaged archive is refused where it is found damaged -- its gzip stream (read whole first)
    or its tar -- and both refusals say the same: nothing was extracted, what to do, moved aside."""
    build, pattern = DAMAGED_ARCHIVES[case]
    work = tmp_path / "300w"
    work.mkdir()
    archive = work / "ibug_300W_large_face_landmark_dataset.tar.gz"
    archive.write_bytes(build())
    with pytest.raises(DecompressionError) as info:
        extract_official_archive(archive, work / "extracted")
    message = str(info.value)
    assert message.startswith(f"{archive.name}: "), message
    assert re.search(pattern, message, re.DOTALL), message
    assert (
        ". Nothing was extracted; delete it and run again to download it anew. The archive was not recorded in "
        f"checksums.lock and was moved aside to {archive}.rejected; the next run downloads it again."
    ) in message
    assert files_in(work) == [archive.name + ".rejected"]


def test_foreign_archive_is_refused(tmp_path):
    work = tmp_path / "300w"
    work.mkdir()
    archive = work / "ibug_300W_large_face_landmark_dataset.tar.gz"
    archive.write_bytes(tar_gz({"top/afw/a.jpg": b"x"}))
    with pytest.raises(ValueError, match=r"not the official 300-W layout .*afw.* not found"):
        extract_official_archive(archive, work / "extracted")
    assert files_in(work) == [archive.name + ".rejected"]


def test_faces_download_fault_leaves_nothing(server, sleeps, tmp_path):
    server.fail(FACES_URL, "drop", "drop", "drop")
    with pytest.raises(
        DownloadError,
        match=r"ibug_300W_large_face_landmark_dataset\.tar\.gz: download of .* failed after 3 attempts",
    ):
        fetch_archive(
            tmp_path / "300w", download=DownloadOptions(base=server.base, **FAST), record_lock=False
        )
    assert files_in(tmp_path / "300w") == []


# --------------------------------------------------------------------------- deadline
@pytest.mark.parametrize("fault", ["drip", "drip_head"])
def test_slow_drip_ends_at_the_deadline_and_leaves_nothing(fault, server, sleeps, tmp_path):
    """One byte every 0.05 s never trips the 0.3 s read timeout; the 2 s deadline ends it, in the
    body (``drip``) or in the status line and headers (``drip_head``), and is not retried."""
    server.fail(ABALONE_URL, fault)
    url = server.url(ABALONE_URL)
    start = time.monotonic()
    with pytest.raises(DownloadError) as info:
        fetch_through(server, "abalone", tmp_path, deadline_s=2)
    elapsed = time.monotonic() - start
    assert 1.9 <= elapsed < 4.0, elapsed
    size = len(server.files[served_path(ABALONE_URL)])
    received = (
        rf"\d+ bytes of the {size} announced received" if fault == "drip" else "0 bytes received"
    )
    assert re.fullmatch(
        rf"abalone\.data: download of {re.escape(url)} \(official URL {re.escape(ABALONE_URL)}\) stopped at its "
        rf"deadline of 2 s \(download_deadline_s=2; attempt 1 of 3, {received}\): the server sends too slowly or "
        rf"never ends\. Nothing was kept in {re.escape(str(tmp_path / 'raw' / 'abalone'))}\. If the server is "
        rf"only slow, raise download_deadline_s\. Set the `data_mirror` .*",
        str(info.value),
    ), str(info.value)
    if fault == "drip":
        assert (
            20 <= int(re.search(r"(\d+) bytes of", str(info.value)).group(1)) <= 45
        )  # 2 s at 20 bytes/s
    assert info.value.attempts == 1 and info.value.status is None and info.value.url == url
    assert server.requests_of(ABALONE_URL) == [fault] and sleeps == []
    assert_nothing_looks_complete(tmp_path, "abalone")


def test_no_retry_waits_past_the_deadline(server, sleeps, tmp_path):
    server.fail(ABALONE_URL, "500")
    with pytest.raises(
        DownloadError,
        match=r"stopped at its deadline of 2 s \(download_deadline_s=2; attempt 1 of 3, "
        r"the wait of 5 s before a retry would pass it; last error: HTTP 500 "
        r"Internal Server Error\)",
    ):
        fetch_through(server, "abalone", tmp_path, deadline_s=2, backoff_s=5)
    assert server.requests_of(ABALONE_URL) == ["500"] and sleeps == []
    assert_nothing_looks_complete(tmp_path, "abalone")


def test_a_killed_download_leaves_a_part_file_the_next_fetch_removes(server, tmp_path):
    """kill -9 during a download leaves ``.<file>.<pid>.part``; the next fetch of that file removes
    it (its process is gone) and leaves alone what is not ours: another file's, a running
    process's, names of the user's own."""
    server.fail(ABALONE_URL, "drip")
    raw = tmp_path / "raw" / "abalone"
    code = (
        "import sys; sys.path.insert(0, 'src'); from rejectopt.datasets import get_spec; "
        "from rejectopt.datasets._download import DownloadOptions; from rejectopt.datasets._fetch import fetch_file; "
        f"fetch_file(get_spec('abalone').files[0], {str(raw)!r}, progress=False, "
        f"download=DownloadOptions(base={server.base!r}, retries=0, deadline_s=60))"
    )
    child = subprocess.Popen([sys.executable, "-c", code], cwd=REPO)
    try:
        for _ in range(400):  # the child imports the package, then the drip starts
            parts = [p for p in files_in(raw) if p.endswith(".part")]
            if parts:
                break
            time.sleep(0.05)
    finally:
        child.kill()
        child.wait()
    assert parts == [f".abalone.data.{child.pid}.part"]
    others = [
        f".abalone.data.{os.getppid()}.part",
        ".abalone.data.part",
        "abalone.data.123.part",
        f".abalone.names.{child.pid}.part",
        f".abalone.data.download.{os.getppid()}.x1_y.part",
    ]
    for name in others:
        (raw / name).write_bytes(b"keep")
    stale_download = f".abalone.data.download.{child.pid}.k2j_x9.part"
    (raw / stale_download).write_bytes(b"stale")
    path = fetch_file(
        get_spec("abalone").files[0],
        raw,
        download=DownloadOptions(base=server.base, **FAST),
        progress=False,
    )
    assert hashlib.sha256(path.read_bytes()).hexdigest() == get_spec("abalone").files[0].sha256
    assert files_in(raw) == sorted(["abalone.data", *others])  # pinned sha256: no checksums.lock


# --------------------------------------------------------------------------- decompression bombs
BOMB_MIB = 80  # past the 64 MiB floor of the cap; each bomb is under 400 KB


def _zeros_tgz(size: int) -> bytes:
    class Zeros(io.RawIOBase):
        left = size

        def readable(self):
            return True

        def readinto(self, buffer):
            n = min(len(buffer), self.left)
            buffer[:n] = bytes(n)
            self.left -= n
            return n

    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz", compresslevel=1) as archive:
        info = tarfile.TarInfo("toy/data.txt")
        info.size = size
        archive.addfile(info, Zeros())
    return buffer.getvalue()


def _zeros_zip(size: int) -> bytes:
    buffer = io.BytesIO()
    with (
        zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as bundle,
        bundle.open("toy/data.txt", "w") as member,
    ):
        for _ in range(size >> 20):
            member.write(bytes(1 << 20))
    return buffer.getvalue()


BOMBS = {  # packaging -> (RawFile fields, builder of the served bytes): each expands to >= 64 MiB of zeros
    ".gz": ({"compression": "gz"}, lambda: gzip.compress(bytes(1 << 20), mtime=0) * BOMB_MIB),
    ".bz2": ({"compression": "bz2"}, lambda: bz2.compress(bytes(1 << 20)) * BOMB_MIB),
    ".xz": ({"compression": "xz"}, lambda: lzma.compress(bytes(1 << 20)) * BOMB_MIB),
    ".Z": ({"compression": "Z"}, lambda: lzw_bomb(12_000)),  # 72 MB
    ".zip": ({"archive_member": "toy/data.txt"}, lambda: _zeros_zip(BOMB_MIB << 20)),
    ".tgz": ({"archive_member": "toy/data.txt"}, lambda: _zeros_tgz(BOMB_MIB << 20)),
}


@pytest.mark.parametrize("packaging", list(BOMBS))
def test_decompression_bomb_stops_at_the_cap(packaging, server, sleeps, tmp_path):
    fields, build = BOMBS[packaging]
    raw_file = RawFile(
        dataset="toy", name="data.txt", url=f"https://example.org/files/bomb{packaging}", **fields
    )
    served = build()
    server.serve(raw_file.url, served)
    url = server.url(raw_file.url)
    start = time.monotonic()
    with pytest.raises(UnpackLimitError) as info:
        fetch_file(
            raw_file,
            tmp_path / "raw",
            download=DownloadOptions(base=server.base, **FAST),
            progress=False,
        )
    assert time.monotonic() - start < 10
    message = str(info.value)
    assert info.value.limit == MIN_UNPACK_CAP_BYTES and isinstance(info.value, DecompressionError)
    assert message.startswith("data.txt: "), message
    assert f"the download of {url} ({len(served)} bytes)" in message
    assert (
        f"expands past the cap of {MIN_UNPACK_CAP_BYTES} bytes (64 MiB: unpack_max_ratio=100 times its "
        f"{len(served)} compressed bytes, at least 64 MiB); decompression stopped there and "
    ) in message, message
    written = re.search(
        r"stopped there and (nothing was written|the (\d+) bytes written so far are deleted, nothing "
        r"is kept)\. Either",
        message,
    )
    assert written and (
        written.group(2) is None or int(written.group(2)) <= MIN_UNPACK_CAP_BYTES
    ), message
    assert (
        "raise the `unpack_max_ratio` config option (or DownloadOptions(max_ratio=...)) above 100."
        in message
    )
    assert files_in(tmp_path / "raw") == []
    # a legitimate file that compresses that well passes with a higher ratio (here: any ratio, the floor)
    small = RawFile(
        dataset="toy", name="ok.txt", url="https://example.org/files/ok.gz", compression="gz"
    )
    server.serve(
        small.url, gzip.compress(bytes(10 << 20), mtime=0)
    )  # 10 MiB at 1000:1, under the 64 MiB floor
    assert (
        fetch_file(
            small,
            tmp_path / "raw",
            download=DownloadOptions(base=server.base, **FAST),
            progress=False,
        )
        .stat()
        .st_size
        == 10 << 20
    )


def test_mirror_copy_bomb_names_the_copy_and_a_higher_ratio_lets_it_through(tmp_path):
    raw_file = RawFile(dataset="toy", name="toy.csv", url="https://example.invalid/toy.csv")
    copy = tmp_path / "mirror" / "toy" / "toy.csv.gz"
    copy.parent.mkdir(parents=True)
    copy.write_bytes(gzip.compress(bytes(1 << 20), mtime=0) * 70)  # 70 MiB from ~70 KB: 1000:1
    with pytest.raises(
        UnpackLimitError,
        match=re.escape(
            f"toy.csv: the data_mirror copy {copy}, decompressed as .gz, expands past the cap of "
            f"{MIN_UNPACK_CAP_BYTES} bytes"
        ),
    ):
        fetch_file(raw_file, tmp_path / "raw", mirror=tmp_path / "mirror", allow_download=False)
    assert files_in(tmp_path / "raw") == []
    path = fetch_file(
        raw_file,
        tmp_path / "raw",
        mirror=tmp_path / "mirror",
        allow_download=False,
        download=DownloadOptions(max_ratio=2000),
    )
    assert path.stat().st_size == 70 << 20


def test_archive_bomb_is_refused_before_extraction(tmp_path):
    work = tmp_path / "raw" / "300w"
    work.mkdir(parents=True)
    archive = work / "ibug_300W_large_face_landmark_dataset.tar.gz"
    archive.write_bytes(_zeros_tgz(BOMB_MIB << 20))
    with pytest.raises(
        UnpackLimitError, match=re.escape(f"expands past the cap of {MIN_UNPACK_CAP_BYTES} bytes")
    ) as info:
        extract_official_archive(archive, work / "extracted")
    assert f"the archive {archive}" in str(info.value) and "unpack_max_ratio" in str(info.value)
    assert files_in(work) == [archive.name + ".rejected"]


# --------------------------------------------------------------------------- pinned sizes
#: The official file of a toy raw file whose size is pinned beside its hash: 3 MiB and 17 bytes of text.
OFFICIAL = (b"a,b,c\n1,2,3\n" * ((3 << 20) // 12 + 2))[: (3 << 20) + 17]
PINNED = RawFile(
    dataset="toy",
    name="toy.csv",
    url="https://example.org/files/toy.csv",
    sha256=hashlib.sha256(OFFICIAL).hexdigest(),
    size=len(OFFICIAL),
)
#: The bytes a copy stopped at the pinned size had written, as its message says them.
WRITTEN = re.compile(
    r"stopped before the first byte past them and (nothing was written|the (\d+) bytes written so "
    r"far are deleted, nothing is kept)\. It is not the official file"
)


def written_before_stop(message: str) -> int:
    match = WRITTEN.search(message)
    assert match, message
    return int(match.group(2) or 0)


@pytest.mark.parametrize("suffix", ["gz", "bz2"])
def test_a_bomb_in_the_mirror_stops_at_the_pinned_size(suffix, tmp_path):
    """80 MiB of zeros from ~80 KB (gzip) or ~4 KB (bzip2): before, 64 MiB or more reached the raw
    folder under a message saying nothing had; now the copy stops at the 3 MiB the registry pins,
    whatever unpack_max_ratio allows, and the message says what was written and deleted."""
    from rejectopt.datasets._decompress import decompress_into
    from rejectopt.datasets._stream import HashingWriter

    copy = tmp_path / "mirror" / "toy" / f"toy.csv.{suffix}"
    copy.parent.mkdir(parents=True)
    copy.write_bytes(COMPRESSORS[suffix](bytes(1 << 20)) * BOMB_MIB)
    start = time.monotonic()
    with pytest.raises(UnpackLimitError) as info:
        fetch_file(
            PINNED,
            tmp_path / "raw",
            mirror=tmp_path / "mirror",
            allow_download=False,
            download=DownloadOptions(max_ratio=1e6),
        )
    assert time.monotonic() - start < 5
    message = str(info.value)
    assert message.startswith(
        f"toy.csv: the data_mirror copy {copy}, decompressed as .{suffix}, holds more than the {len(OFFICIAL)} bytes "
        "the registry pins for toy.csv (the official file's size, beside its sha256): stopped before the first "
        "byte past them and "
    ), message
    assert f"Replace {copy} with an intact copy of the official file" in message
    assert info.value.limit == len(OFFICIAL) and files_in(tmp_path / "raw") == []
    # the bytes the message names are those that reached the file, and no more than the pinned size
    with open(tmp_path / "count", "wb") as handle:
        sink = HashingWriter(handle)
        with pytest.raises(UnpackLimitError):
            decompress_into(copy, suffix, sink, "toy.csv", "the copy", "", size=PINNED.size)
    assert 0 < sink.n_bytes == written_before_stop(message) <= len(OFFICIAL)
    assert (tmp_path / "count").stat().st_size == sink.n_bytes
    # the official file, compressed the same way, still passes
    copy.write_bytes(COMPRESSORS[suffix](OFFICIAL))
    path = fetch_file(PINNED, tmp_path / "raw", mirror=tmp_path / "mirror", allow_download=False)
    assert path.read_bytes() == OFFICIAL


def test_a_plain_mirror_copy_larger_than_the_pinned_size_is_not_copied(tmp_path):
    """A 1 GiB file (sparse: no disk used) was copied whole before its checksum failed; now its size
    is compared with the pinned one first, and not a byte is copied."""
    copy = tmp_path / "mirror" / "toy" / "toy.csv"
    copy.parent.mkdir(parents=True)
    with open(copy, "wb") as handle:
        handle.truncate(1 << 30)
    start = time.monotonic()
    with pytest.raises(UnpackLimitError) as info:
        fetch_file(PINNED, tmp_path / "raw", mirror=tmp_path / "mirror", allow_download=False)
    assert time.monotonic() - start < 2
    assert str(info.value).startswith(
        f"toy.csv: the data_mirror copy {copy} ({1 << 30} bytes) holds more than the {len(OFFICIAL)} bytes the "
        "registry pins for toy.csv (the official file's size, beside its sha256): stopped before the first byte "
        "past them and nothing was written. It is not the official file"
    ), str(info.value)
    assert files_in(tmp_path / "raw") == []
    copy.write_bytes(OFFICIAL)  # the official file passes, and one already fetched is kept as it is
    path = fetch_file(PINNED, tmp_path / "raw", mirror=tmp_path / "mirror", allow_download=False)
    assert path.read_bytes() == OFFICIAL and fetch_file(PINNED, tmp_path / "raw") == path


def _no_download(*args, **kwargs):
    raise AssertionError("a download was attempted")


def test_prepare_dataset_refuses_a_mirror_folder_that_does_not_exist(monkeypatch, tmp_path):
    """A mistyped mirror was taken for an empty one: every file was downloaded instead, which
    offline ended in a DownloadError about host names that never named the mirror."""
    monkeypatch.setattr(_fetch, "write_from_url", _no_download)
    missing = tmp_path / "mirorr"
    with pytest.raises(DataSourceError) as info:
        prepare_dataset("abalone", tmp_path / "raw", tmp_path / "abalone.npz", mirror=str(missing))
    assert str(info.value) == (
        f"data mirror {str(missing)!r} does not exist (resolved: {missing}): `mirror=` (the "
        "pipeline's `data_mirror` config option) must be a folder laid out as "
        "<mirror>/<dataset>/<file>[.xz|.gz|.bz2]; correct the path, or pass mirror=None "
        "(data_mirror: null) to download the official files"
    )
    assert files_in(tmp_path / "raw") == [] and not (tmp_path / "abalone.npz").exists()
    info = prepare_dataset(
        "abalone", tmp_path / "raw", tmp_path / "abalone.npz", mirror=DEMO_MIRROR
    )
    assert (info["n"], info["d"]) == (4177, 10)  # the same call with the folder that exists


def test_the_download_step_refuses_a_data_mirror_that_is_a_file(monkeypatch, tmp_path):
    """The pipeline's download_raw calls fetch_file with the config's data_mirror and downloading
    off: a data_mirror that stopped being a folder after the run was planned is named as such,
    not as a file missing from the mirror, and a raw file already fetched does not hide it."""
    monkeypatch.setattr(_fetch, "write_from_url", _no_download)
    not_a_folder = tmp_path / "mirror.tar"
    not_a_folder.write_bytes(b"")
    (tmp_path / "mirror" / "toy").mkdir(parents=True)
    (tmp_path / "mirror" / "toy" / "toy.csv").write_bytes(OFFICIAL)
    fetch_file(PINNED, tmp_path / "raw", mirror=tmp_path / "mirror", allow_download=False)
    for allow_download in (False, True):
        with pytest.raises(DataSourceError, match=r"data mirror '.*mirror\.tar' is not a folder"):
            fetch_file(PINNED, tmp_path / "raw", mirror=not_a_folder, allow_download=allow_download)
    assert files_in(tmp_path / "raw") == ["toy.csv"]


def test_a_download_past_the_pinned_size_stops_there_and_is_not_retried(server, sleeps, tmp_path):
    server.serve(PINNED.url, OFFICIAL + bytes(8 << 20))
    url = server.url(PINNED.url)
    with pytest.raises(UnpackLimitError) as info:
        fetch_file(
            PINNED,
            tmp_path / "raw",
            download=DownloadOptions(base=server.base, **FAST),
            progress=False,
        )
    message = str(info.value)
    assert message.startswith(
        f"toy.csv: the download of {url} (official URL {PINNED.url}) holds more than the "
        f"{len(OFFICIAL)} bytes the registry pins for toy.csv"
    ), message
    assert written_before_stop(message) <= len(OFFICIAL)
    assert (
        f"Run again to download it anew; if this happens again the file served at {url} is damaged"
        in message
    )
    assert (
        files_in(tmp_path / "raw") == []
        and server.requests_of(PINNED.url) == ["ok"]
        and sleeps == []
    )
    server.serve(PINNED.url, OFFICIAL)
    path = fetch_file(
        PINNED, tmp_path / "raw", download=DownloadOptions(base=server.base, **FAST), progress=False
    )
    assert path.read_bytes() == OFFICIAL


@pytest.mark.parametrize("packaging", [".gz", ".zip"])
def test_a_packed_download_stops_at_the_pinned_size(packaging, server, sleeps, tmp_path):
    """A gzip bomb stops at the pinned size as it is decompressed; a zip member declaring more is
    refused before a byte is extracted."""
    fields = {"compression": "gz"} if packaging == ".gz" else {"archive_member": "toy/data.txt"}
    raw_file = dataclasses.replace(
        PINNED, url=f"https://example.org/files/toy{packaging}", **fields
    )
    server.serve(
        raw_file.url, BOMBS[".gz"][1]() if packaging == ".gz" else _zeros_zip(4 << 20)
    )  # 4 MiB declared
    with pytest.raises(UnpackLimitError) as info:
        fetch_file(
            raw_file,
            tmp_path / "raw",
            download=DownloadOptions(base=server.base, **FAST),
            progress=False,
        )
    message = str(info.value)
    assert f"holds more than the {len(OFFICIAL)} bytes the registry pins for toy.csv" in message, (
        message
    )
    written = written_before_stop(message)
    assert (written == 0) if packaging == ".zip" else (0 < written <= len(OFFICIAL))
    assert files_in(tmp_path / "raw") == []
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as bundle:
        bundle.writestr("toy/data.txt", OFFICIAL)
    official = gzip.compress(OFFICIAL, mtime=0) if packaging == ".gz" else buffer.getvalue()
    server.serve(raw_file.url, official)
    path = fetch_file(
        raw_file,
        tmp_path / "raw",
        download=DownloadOptions(base=server.base, **FAST),
        progress=False,
    )
    assert path.read_bytes() == OFFICIAL


# --------------------------------------------------------------------------- links in archives
def test_tar_member_that_is_a_link_is_refused_by_name(server, sleeps, tmp_path):
    raw_file = RawFile(
        dataset="toy",
        name="data.txt",
        url="https://example.org/files/links.tar",
        archive_member="toy/data.txt",
    )
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        info = tarfile.TarInfo("toy/data.txt")
        info.type, info.linkname = tarfile.SYMTYPE, "missing.txt"
        archive.addfile(info)
    server.serve(raw_file.url, buffer.getvalue())
    with pytest.raises(DataSourceError) as info:
        fetch_file(
            raw_file,
            tmp_path / "raw",
            download=DownloadOptions(base=server.base, **FAST),
            progress=False,
        )
    assert str(info.value).startswith(
        f"data.txt: member 'toy/data.txt' of the download of {server.url(raw_file.url)} ({len(buffer.getvalue())} "
        "bytes) is a symbolic link to 'missing.txt', not a regular file: refused, nothing was written. Run again"
    ), str(info.value)
    assert files_in(tmp_path / "raw") == []


# --------------------------------------------------------------------------- unix compress (.Z)
LZW = REPO / "tests" / "data" / "lzw"
LZW_KNOWN = {  # file written by ncompress 4.2.4.6 (tests/data/lzw/README.md) -> (what it holds, max bits)
    "covtype.data.Z": (excerpt("covtype/covtype.data"), 16),
    "covtype.data.head400.b9.Z": (excerpt("covtype/covtype.data")[:400], 9),
    "train.csv.head25000.b10.Z": (excerpt("superconduct/train.csv")[:25000], 10),
}


@pytest.mark.parametrize("name", list(LZW_KNOWN))
def test_lzw_decoder_reads_what_compress_wrote(name):
    data, max_bits = LZW_KNOWN[name]
    written = (LZW / name).read_bytes()
    assert written[2] == 0x80 | max_bits
    assert unlzw(written) == data
    if (
        name != "train.csv.head25000.b10.Z"
    ):  # compress emitted a CLEAR there, our encoder never does
        assert lzw_compress(data, max_bits) == written


def test_full_9_bit_table_is_read_as_gzip_reads_it():
    """``compress -b9`` keeps 9-bit codes once its table is full, but gzip, ``compress -d`` and
    unlzw3 read 10-bit codes from there: they all refuse that file, and so does our decoder. Our
    encoder writes the 10-bit codes, which gzip reads back."""
    data = excerpt("covtype/covtype.data")
    with pytest.raises(
        ValueError, match=r"corrupt \.Z stream: code \d+ with 512 table entries \(10-bit codes\)"
    ):
        unlzw((LZW / "covtype.data.b9.Z").read_bytes())
    ours = lzw_compress(data, 9)
    assert unlzw(ours) == data
    assert (
        subprocess.run(["gzip", "-dc"], input=ours, capture_output=True, check=True).stdout == data
    )


# --------------------------------------------------------------------------- end to end
def count_rows(data: bytes) -> int:
    return sum(1 for line in data.splitlines() if line.strip())


@pytest.mark.slow
@pytest.mark.parametrize(
    "served_from",
    [
        pytest.param("shipped", id="shipped data"),
        pytest.param(
            "mirrors",
            id="full mirrors",
            marks=pytest.mark.mirror("REJECTOPT_DATA_MIRROR", "REJECTOPT_FACES_MIRROR"),
        ),
    ],
)
def test_pipeline_end_to_end_through_the_local_server(served_from, official_files, tmp_path):
    """download_raw -> prepare_dataset for the 22 datasets and download_faces -> extract_faces,
    in one Snakemake run with ``download_base`` pointing at the local server (no data_mirror),
    serving what the repository ships or (marked ``mirror``) the full offline copies.

    How each dataset is judged (the pins stay as in the registry, nothing is lifted):
    * served as a mirror's real bytes: data.npz is written and its fingerprint is the pinned one
      (prepare_dataset checks it; the test checks it again), the raw files have their pinned sha256;
    * served as excerpts: their download and extraction run for real, and each must stop at the
      expected, named check -- covtype at download_raw, on the pinned sha256 of covtype.data.gz,
      bikeshare and facebook (without the mirror's test file) there too, on the pinned sha256 of
      hour.csv and Features_TestSet.csv; the others at prepare_dataset, after parsing, on Table 2's
      row count (the message gives the excerpt's (n, d, K)); their raw files are then not trusted
      (no checksums.lock entry, moved aside);
    * in neither (only from the shipped data): download_raw's HTTP 404.
    Each failing rule's log file must hold its error. Transient faults on 5 URLs must be retried.
    """
    if served_from == "mirrors":
        official_files = files_to_serve(
            mirror_folder("REJECTOPT_DATA_MIRROR"), mirror_folder("REJECTOPT_FACES_MIRROR")
        )
    real = (
        sorted(MIRRORED_PACKAGING)
        if served_from == "mirrors"
        else ["abalone", "sattelite", "shuttle"]
    )
    assert sorted(n for n, kind in official_files["kinds"].items() if kind == "real") == real
    server = LocalServer()
    server.serve_all(official_files["downloads"])
    try:
        _run_end_to_end(server, official_files, tmp_path)
    finally:
        server.close()


def _run_end_to_end(server, official_files, tmp_path):
    """The Snakemake run of test_pipeline_end_to_end_through_the_local_server and its checks."""
    kinds = official_files["kinds"]
    transient = {  # URL -> a fault that clears after one retry
        f"{UCI}/letter-recognition/letter-recognition.data": "500",
        f"{UCI}/00459/avila.zip": "drop",
        f"{UCI}/pendigits/pendigits.tra": "stall",
        ABALONE_URL: "length_long",
        FACES_URL: "drop",
    }
    for url, fault in transient.items():
        if url in official_files["downloads"]:
            server.fail(url, fault)
    targets = [f"results/data/{name}/data.npz" for name in REGISTRY] + [
        "results/raw/300w/extracted"
    ]
    run = snakemake(
        tmp_path,
        *targets,
        "--cores",
        "2",
        "--keep-going",
        "--config",
        f"download_base={server.base}",
        "download_retries=2",
        "download_backoff_s=0.05",
        "download_timeout_s=2",
    )
    output = run.stdout + run.stderr
    assert run.returncode != 0  # the excerpt-served datasets fail, as they must

    outcomes = {}
    for name, spec in REGISTRY.items():
        raw, npz = tmp_path / "results/raw" / name, tmp_path / f"results/data/{name}/data.npz"
        assert not [p for p in files_in(raw) if p.endswith(".part")], name
        if kinds[name] == "real":
            assert npz.is_file(), (name, output[-3000:])
            X, y = load_prepared(npz)
            assert fingerprint(X, y) == spec.xy_sha256, name
            for raw_file in spec.files:
                assert (
                    hashlib.sha256((raw / raw_file.name).read_bytes()).hexdigest()
                    == raw_file.sha256
                )
            outcomes[name] = "prepared, pinned fingerprint"
            continue
        assert not npz.exists(), name
        if (
            name == "covtype"
            or (name in ("facebook", "bikeshare") and kinds[name] == "excerpt")
            or kinds[name] == "unavailable"
        ):
            raw_file = spec.files[0] if name != "facebook" else spec.files[1]
            log = (tmp_path / f"logs/download_raw/{name}/{raw_file.name}.log").read_text()
            if kinds[name] == "unavailable":
                assert "DownloadError" in log and "HTTP 404 Not Found; not retried" in log, log
            else:
                official = {
                    "covtype": f"{UCI}/covtype/covtype.data.gz",
                    "facebook": f"{UCI}/00363/Dataset.zip",
                    "bikeshare": BIKESHARE_URL,
                }[name]
                served = official_files["downloads"][official]
                expected = raw_file.download_sha256 or raw_file.sha256
                found = hashlib.sha256(
                    served
                    if raw_file.download_sha256
                    else _zip_member(served, raw_file.archive_member)
                ).hexdigest()
                assert "ChecksumError: checksum mismatch for " in log, log
                assert f"expected sha256 {expected}, found {found}" in log
            assert raw_file.name not in files_in(raw)
            outcomes[name] = "download_raw refused"
            continue
        # excerpt datasets that reach prepare_dataset
        log = (tmp_path / f"logs/prepare_dataset/{name}.log").read_text()
        if name == "facebook":
            n = count_rows(excerpt("facebook/Features_Variant_1.csv")) + count_rows(
                lzma.decompress(
                    (official_files["mirror"] / "facebook/Features_TestSet.csv.xz").read_bytes()
                )
            )
            found = rf"\({n}, {spec.n_features}, \d+\)"
        else:
            n, k = EXCERPT_SHAPES[name]
            found = re.escape(f"({n}, {spec.n_features}, {k})")
        expected = re.escape(f"expected ({spec.n_examples}, {spec.n_features}, {spec.n_classes})")
        assert re.search(
            rf"RawDataError: {name}: prepared \(n, d, K\) = {found}, {expected}", log
        ), log[-2000:]
        pending = [f.name for f in spec.files if f.sha256 is None]
        assert "not recorded in" in log and all(
            f"{p}{_prepare.REJECTED_SUFFIX}" in files_in(raw) for p in pending
        )
        assert not set(read_lock(raw)) & set(pending)
        outcomes[name] = "prepare_dataset refused on Table 2's shape"
    assert len(outcomes) == 22
    assert sorted(n for n, o in outcomes.items() if o.startswith("prepared")) == sorted(
        n for n, kind in kinds.items() if kind == "real"
    )

    # 300-W: downloaded (after a dropped connection), extracted with the official layout, then trusted
    extracted = tmp_path / "results/raw/300w/extracted" / TOP
    faces = list_faces(extracted, ARCHIVE_SUBSETS)
    members = _tar_members(official_files["downloads"][FACES_URL])
    assert len(faces) == sum(1 for m in members if m.endswith(".pts"))
    for path in faces["image"]:
        assert Path(path).read_bytes() == members[str(Path(path).relative_to(extracted.parent))]
    archive = official_files["downloads"][FACES_URL]
    assert read_lock(tmp_path / "results/raw/300w") == {
        "ibug_300W_large_face_landmark_dataset.tar.gz": hashlib.sha256(archive).hexdigest()
    }

    for url, fault in transient.items():
        if url in official_files["downloads"]:
            # one request per raw file of the URL (avila.zip holds two), the first one faulty
            n_files = sum(f.url == url for spec in REGISTRY.values() for f in spec.files) or 1
            assert server.requests_of(url) == [fault] + ["ok"] * n_files, url
    abalone_log = (tmp_path / "logs/download_raw/abalone/abalone.data.log").read_text()
    assert re.search(
        r"abalone\.data: attempt 1 of 3 failed \(.*: the server announced Content-Length \d+ but "
        r"sent \d+ bytes\); retrying in 0\.05 s",
        abalone_log,
    ), abalone_log
    if kinds["letter"] == "real":
        letter_log = (tmp_path / "logs/download_raw/letter/letter-recognition.data.log").read_text()
        assert "HTTP 500 Internal Server Error); retrying in 0.05 s" in letter_log
    assert "retrying in 0.05 s" in (tmp_path / "logs/download_faces/300w.log").read_text()


def _tar_members(data: bytes) -> dict[str, bytes]:
    """{member: bytes} of the regular files of a .tar.gz."""
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as archive:
        return {m.name: archive.extractfile(m).read() for m in archive.getmembers() if m.isfile()}


def _zip_member(data: bytes, member: str) -> bytes:
    import zipfile

    with zipfile.ZipFile(io.BytesIO(data)) as bundle:
        return bundle.read(member)
