"""The 300-W faces as a dataset: where they come from, their folder layouts, their ``.pts``
annotations, and the official archive fetched, verified and extracted safely.

The official archive (dlib.net, ~1.7 GB, 6,666 faces; the iBUG 68-point markup of [1]) and an
offline copy of the faces (the ``faces_mirror`` config option: a folder holding afw/,
helen_testset/ and helen_trainset/; the project's has 1,537 faces) differ in their folders
(:data:`ARCHIVE_SUBSETS`, :data:`MIRROR_SUBSETS`), not in their files: one image and one ``.pts``
per face. The archive has no pinned sha256: it is trusted (its hash recorded in
``checksums.lock``) only once it extracted safely with the official layout
(:func:`extract_official_archive`). The landmark model and its loss are
:mod:`rejectopt.landmarks`'s, the experiment :mod:`rejectopt.pipeline.experiments.landmarks`'s.

References
----------
.. [1] C. Sagonas, E. Antonakos, G. Tzimiropoulos, S. Zafeiriou, M. Pantic.
   300 faces in-the-wild challenge: database and results. Image and Vision
   Computing 47:3-18, 2016.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd

from ._archive import extract_archive
from ._fetch import fetch_file
from ._registry import RawFile
from ._trust import is_trusted, record_trusted, sha256_of_file

__all__ = [
    "ARCHIVE_SUBSETS",
    "ARCHIVE_TOP_FOLDER",
    "MIRROR_SUBSETS",
    "N_LANDMARKS",
    "OFFICIAL_SOURCES",
    "archive_raw_file",
    "check_archive_layout",
    "extract_official_archive",
    "fetch_archive",
    "list_faces",
    "read_pts",
]


#: Number of landmarks of the iBUG / 300-W markup.
N_LANDMARKS = 68


#: Official sources of 300-W, for users with internet access. The dlib.net archive is the
#: 6,666-face "large" set (afw, helen, ibug, lfpw with the 300-W markup, plus dlib's XML lists);
#: the iBUG pages hold the licence (research use only, commercial use prohibited).
OFFICIAL_SOURCES = {
    "archive_url": "http://dlib.net/files/data/ibug_300W_large_face_landmark_dataset.tar.gz",
    "archive_name": "ibug_300W_large_face_landmark_dataset.tar.gz",
    "ibug_300w_page": "https://ibug.doc.ic.ac.uk/resources/300-W/",
    "ibug_markup_page": "https://ibug.doc.ic.ac.uk/resources/facial-point-annotations/",
    "pretrained_68_model": "http://dlib.net/files/shape_predictor_68_face_landmarks.dat.bz2",
}


#: Face folders of the extracted official archive (relative to its top folder).
ARCHIVE_SUBSETS = (
    "afw",
    "helen/trainset",
    "helen/testset",
    "lfpw/trainset",
    "lfpw/testset",
    "ibug",
)


#: Face folders of an offline copy of the faces (the ``faces_mirror`` config option; the project's has 1,537 faces).
MIRROR_SUBSETS = ("afw", "helen_testset", "helen_trainset")


# --------------------------------------------------------------------------- annotations
def read_pts(path) -> np.ndarray:
    """Read a 300-W ``.pts`` file as 0-based pixel coordinates.

    Accepts the official header style (``version: 1`` / ``n_points: 68`` /
    ``{`` / 68 ``x y`` lines / ``}``) and bare files of 68 ``x y`` lines.
    300-W coordinates are 1-based (MATLAB; the top-left pixel centre is (1, 1)),
    so 1 is subtracted.

    Parameters
    ----------
    path : path-like
        The ``.pts`` file.

    Returns
    -------
    ndarray of shape (68, 2)
        ``(x, y)`` per landmark, 0-based, float64.

    Raises
    ------
    ValueError
        The file is malformed (unknown header line, a line that is not two
        numbers, a point count other than 68, a missing ``}``); the message
        names the file.
    """
    path = Path(path)
    lines = [line.strip() for line in path.read_text().splitlines()]
    lines = [line for line in lines if line]
    declared = None
    if lines and lines[0].lower().startswith("version"):
        header, lines = _split_pts_header(path, lines)
        declared = header
    points = []
    for line in lines:
        fields = line.split()
        try:
            if len(fields) != 2:
                raise ValueError
            points.append((float(fields[0]), float(fields[1])))
        except ValueError:
            raise ValueError(
                f"{path}: malformed point line {line!r} (expected two numbers 'x y')"
            ) from None
    if declared is not None and declared != len(points):
        raise ValueError(
            f"{path}: header declares n_points {declared} but the file holds {len(points)} points"
        )
    if len(points) != N_LANDMARKS:
        raise ValueError(f"{path}: expected {N_LANDMARKS} points, found {len(points)}")
    coords = np.asarray(points, dtype=np.float64) - 1.0
    if not np.all(np.isfinite(coords)):
        raise ValueError(f"{path}: non-finite coordinates")
    return coords


def _split_pts_header(path: Path, lines: list[str]) -> tuple[int, list[str]]:
    """Parse ``version / n_points / {`` ... ``}``; return (n_points, point lines)."""
    n_points = None
    for position, line in enumerate(lines):
        if line == "{":
            if lines[-1] != "}":
                raise ValueError(f"{path}: header style .pts without the closing '}}'")
            if n_points is None:
                raise ValueError(f"{path}: header without an 'n_points:' line")
            return n_points, lines[position + 1 : -1]
        key, _, value = line.partition(":")
        key = key.strip().lower()
        if key == "n_points":
            try:
                n_points = int(value)
            except ValueError:
                raise ValueError(f"{path}: malformed header line {line!r}") from None
        elif key != "version":
            raise ValueError(f"{path}: unknown header line {line!r}")
    raise ValueError(f"{path}: header style .pts without the opening '{{'")


def list_faces(folder, subsets=MIRROR_SUBSETS) -> pd.DataFrame:
    """List the annotated faces under ``folder`` (one image + one ``.pts`` per face).

    Parameters
    ----------
    folder : path-like
        Root folder: an offline copy of the faces laid out in :data:`MIRROR_SUBSETS` (the
        ``faces_mirror`` config option) or the top folder of the extracted official archive
        (then pass ``subsets=ARCHIVE_SUBSETS``).
    subsets : sequence of str, default=MIRROR_SUBSETS
        Sub-folders to scan, each holding ``<name>.pts`` beside ``<name>.jpg``
        (or ``.png``).

    Returns
    -------
    pandas.DataFrame
        Columns ``name, subset, image, pts`` (paths as str), sorted by
        ``(subset, name)``, index 0..n-1. Deterministic.

    Raises
    ------
    FileNotFoundError
        A subset folder is missing or a ``.pts`` has no image.
    """
    folder = Path(folder)
    rows = []
    for subset in subsets:
        directory = folder / subset
        if not directory.is_dir():
            raise FileNotFoundError(f"face subset folder {directory} not found")
        for pts in sorted(directory.glob("*.pts")):
            candidates = (pts.with_suffix(ext) for ext in (".jpg", ".png", ".jpeg"))
            image = next((candidate for candidate in candidates if candidate.exists()), None)
            if image is None:
                raise FileNotFoundError(f"{pts} has no image (.jpg/.png) beside it")
            rows.append({"name": pts.stem, "subset": subset, "image": str(image), "pts": str(pts)})
    faces = pd.DataFrame(rows, columns=["name", "subset", "image", "pts"])
    return faces.sort_values(["subset", "name"], kind="stable").reset_index(drop=True)


# --------------------------------------------------------------------------- official archive
#: Top folder of the official archive; the face folders ARCHIVE_SUBSETS lie under it.
ARCHIVE_TOP_FOLDER = "ibug_300W_large_face_landmark_dataset"


def archive_raw_file():
    """The official 300-W archive as a :class:`rejectopt.datasets.RawFile` (sha256 recorded on first fetch).

    Returns
    -------
    RawFile
        Dataset ``"300w"``, the dlib.net URL, no pinned sha256.
    """
    return RawFile(
        dataset="300w",
        name=OFFICIAL_SOURCES["archive_name"],
        url=OFFICIAL_SOURCES["archive_url"],
        sha256=None,
    )


def fetch_archive(
    dest_dir, mirror=None, allow_download: bool = True, download=None, record_lock: bool = True
) -> Path:
    """Fetch the official archive (~1.7 GB) with :func:`rejectopt.datasets.fetch_file`.

    ``download`` (a :class:`rejectopt.datasets.DownloadOptions` or mapping) sets the
    download base URL, retries, backoff and timeout. With ``record_lock=True`` its sha256 is
    recorded in ``dest_dir/checksums.lock`` at once; with False (the pipeline) only by
    :func:`extract_official_archive` once the archive extracted safely with the official layout.
    Later fetches are verified against the recorded hash.

    Parameters
    ----------
    dest_dir : path-like
        Destination folder of the archive and its ``checksums.lock``.
    mirror : path-like, optional
        A ``data_mirror`` folder holding ``300w/ibug_300W_large_face_landmark_dataset.tar.gz``.
    allow_download : bool, default True
        If False, an archive missing from the mirror raises instead of being downloaded.
    download : DownloadOptions or mapping, optional
        See :func:`rejectopt.datasets.fetch_file`.
    record_lock : bool, default True
        Whether the sha256 of a first fetch is recorded at once (see above).

    Returns
    -------
    pathlib.Path
        ``dest_dir/ibug_300W_large_face_landmark_dataset.tar.gz``.
    """
    return fetch_file(
        archive_raw_file(),
        dest_dir,
        mirror=mirror,
        allow_download=allow_download,
        download=download,
        record_lock=record_lock,
    )


def check_archive_layout(folder) -> pd.DataFrame:
    """Check an extracted official archive: every face folder of ARCHIVE_SUBSETS under
    ``ibug_300W_large_face_landmark_dataset/`` holds annotated faces whose ``.pts`` parse.

    Parameters
    ----------
    folder : path-like
        The folder the archive was extracted into (holding ``ibug_300W_large_face_landmark_dataset/``).

    Returns
    -------
    pandas.DataFrame
        The faces (:func:`list_faces` over :data:`ARCHIVE_SUBSETS`).

    Raises
    ------
    ValueError
        Naming what is missing: the top folder, a face folder, any annotated face in a folder;
        or from :func:`read_pts`, naming a malformed ``.pts``.
    """
    top = Path(folder) / ARCHIVE_TOP_FOLDER
    try:
        faces = list_faces(top, ARCHIVE_SUBSETS)
    except FileNotFoundError as error:
        raise ValueError(
            f"not the official 300-W layout ({ARCHIVE_TOP_FOLDER}/{{{', '.join(ARCHIVE_SUBSETS)}}}): {error}"
        ) from error
    empty = [subset for subset in ARCHIVE_SUBSETS if not (faces["subset"] == subset).any()]
    if empty:
        raise ValueError(f"not the official 300-W layout: no annotated face in {', '.join(empty)}")
    for pts in faces["pts"]:
        read_pts(pts)
    return faces


def extract_official_archive(tar_path, dest) -> Path:
    """Extract the official 300-W archive (:func:`extract_archive` + :func:`check_archive_layout`),
    then trust it: its sha256 goes to ``checksums.lock`` beside it (unless pinned or already there).

    An archive that is refused (unsafe member, corrupt, not the official layout) is
    never recorded: it is moved aside to ``<name>.rejected`` and the error says so.

    Parameters
    ----------
    tar_path : path-like
        The fetched archive (its ``checksums.lock`` is the one in the same folder).
    dest : path-like
        Destination folder; must not exist or be empty.

    Returns
    -------
    pathlib.Path
        ``dest``, holding ``ibug_300W_large_face_landmark_dataset/``.

    Raises
    ------
    ValueError, DecompressionError
        From :func:`extract_archive` or :func:`check_archive_layout`; an untrusted archive was
        moved aside.
    FileExistsError
        ``dest`` already holds files (the archive is left as it is).
    """
    tar_path = Path(tar_path)
    raw_file = archive_raw_file()
    trusted = is_trusted(raw_file, tar_path.parent)
    try:
        extract_archive(tar_path, dest, check=check_archive_layout)
    except FileExistsError:
        raise
    except (ValueError, OSError) as error:
        if trusted:
            raise
        rejected = tar_path.with_name(tar_path.name + ".rejected")
        os.replace(tar_path, rejected)
        raise type(error)(
            f"{str(error).strip().rstrip('.')}. The archive was not recorded in checksums.lock and "
            f"was moved aside to {rejected}; "
            "the next run downloads it again."
        ) from error
    if not trusted:
        record_trusted(tar_path.parent, {raw_file.name: sha256_of_file(tar_path)})
    return Path(dest)
