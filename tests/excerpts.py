"""The excerpts of tests/data/excerpts, packaged as their official URLs serve them: what
tests/test_excerpts.py fetches and parses, and tests/http_server.py serves. They are of the 7
download-only datasets and of bikeshare, whose raw file the repository does not ship either (the
demo mirror holds abalone, sattelite and shuttle only)."""

from __future__ import annotations

import bz2
import gzip
import io
import zipfile
from pathlib import Path

EXCERPTS = Path(__file__).resolve().parent / "data" / "excerpts"
UCI = "https://archive.ics.uci.edu/ml/machine-learning-databases"
LIBSVM = "https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets"
EXCERPT_SHAPES = {  # (rows after parsing, classes present) of the stored excerpts
    "covtype": (118, 3),
    "codrna": (70, 2),
    "ijcnn": (60, 2),
    "sensorless": (42, 2),
    "superconduct": (50, 10),
    "msd": (56, 13),
    "facebook": (109, 10),
    "bikeshare": (120, 10),
}


def excerpt(relative: str) -> bytes:
    """The stored excerpt ``relative`` (to tests/data/excerpts), plain."""
    return (EXCERPTS / relative).read_bytes()


def crlf(data: bytes) -> bytes:
    """``data`` with CRLF line ends, as UCI's facebook files have."""
    return data.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")


def zipped(members: dict[str, bytes]) -> bytes:
    """A deterministic zip archive (fixed time stamps, deflate) holding ``members`` in order."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in members.items():
            info = zipfile.ZipInfo(name, date_time=(2018, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, data)
    return buffer.getvalue()


def official_downloads(name: str, files: dict[str, bytes] | None = None) -> dict[str, bytes]:
    """{official URL: bytes served there} for dataset ``name``, built from the plain excerpts.

    The URLs and the packaging are those of the UCI / LIBSVM pages (independent
    of the registry, so that a wrong registry URL, member name or compression
    makes the fetch fail).  ``files`` overrides plain excerpt contents by path.
    """
    files = files or {}

    def plain(relative: str) -> bytes:
        return files.get(relative, excerpt(relative) if (EXCERPTS / relative).exists() else b"")

    if name == "covtype":
        return {
            f"{UCI}/covtype/covtype.data.gz": gzip.compress(plain("covtype/covtype.data"), mtime=0)
        }
    if name == "codrna":
        return {
            f"{LIBSVM}/binary/cod-rna": plain("codrna/cod-rna"),
            f"{LIBSVM}/binary/cod-rna.t": plain("codrna/cod-rna.t"),
        }
    if name == "ijcnn":
        return {f"{LIBSVM}/binary/ijcnn1.bz2": bz2.compress(plain("ijcnn/ijcnn1"))}
    if name == "sensorless":
        return {
            f"{UCI}/00325/Sensorless_drive_diagnosis.txt": plain(
                "sensorless/Sensorless_drive_diagnosis.txt"
            )
        }
    if name == "superconduct":
        return {
            f"{UCI}/00464/superconduct.zip": zipped(
                {
                    "train.csv": plain("superconduct/train.csv"),
                    "unique_m.csv": plain("superconduct/unique_m.csv"),
                }
            )
        }
    if name == "msd":
        member = plain("msd/YearPredictionMSD.txt")
        return {f"{UCI}/00203/YearPredictionMSD.txt.zip": zipped({"YearPredictionMSD.txt": member})}
    if name == "facebook":
        variant_1 = crlf(plain("facebook/Features_Variant_1.csv"))
        return {
            f"{UCI}/00363/Dataset.zip": zipped(
                {
                    "Dataset/Training/Features_Variant_1.csv": variant_1,
                    # a decoy with the same columns: the reader must take Variant_1
                    "Dataset/Training/Features_Variant_2.csv": b"".join(
                        variant_1.splitlines(keepends=True)[:10]
                    ),
                    "Dataset/Testing/Features_TestSet.csv": crlf(
                        plain("facebook/Features_TestSet.csv")
                    ),
                }
            )
        }
    if (
        name == "bikeshare"
    ):  # UCI's zip also holds day.csv: a decoy (hour.csv's first rows) the reader must pass by
        hour = crlf(plain("bikeshare/hour.csv"))
        return {
            f"{UCI}/00275/Bike-Sharing-Dataset.zip": zipped(
                {
                    "day.csv": b"".join(hour.splitlines(keepends=True)[:5]),
                    "hour.csv": hour,
                }
            )
        }
    raise KeyError(name)


def edit_cell(relative: str, line: int, column: int, value: str, sep: str) -> dict[str, bytes]:
    """The excerpt with cell (line, column) (1-based, as in an editor) replaced by ``value``."""
    lines = excerpt(relative).decode("ascii").split("\n")
    cells = lines[line - 1].split(sep)
    cells[column - 1] = value
    lines[line - 1] = sep.join(cells)
    return {relative: "\n".join(lines).encode("ascii")}
