"""300-W faces: constants, annotations, images, the landmark loss, the official archive."""

from __future__ import annotations

import logging
import lzma
import multiprocessing
import os
import tarfile
import zlib
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
import pandas as pd


__all__ = [
    "N_LANDMARKS",
    "N_FEATURES",
    "OUTER_EYE_CORNERS",
    "OFFICIAL_SOURCES",
    "ARCHIVE_SUBSETS",
    "MIRROR_SUBSETS",
    "DEFAULT_RATIOS",
    "DEFAULT_OPTIONS_GRID",
    "DEFAULT_LEARNING_CURVE_SIZES",
    "MISS_IOU_THRESHOLD",
    "read_pts",
    "list_faces",
    "load_image",
    "load_images",
    "inter_ocular_distance",
    "landmark_loss",
    "per_landmark",
    "archive_raw_file",
    "fetch_archive",
    "extract_archive",
    "ARCHIVE_TOP_FOLDER",
    "check_archive_layout",
    "extract_official_archive",
]

logger = logging.getLogger(__name__)


#: Number of landmarks of the iBUG / 300-W markup.
N_LANDMARKS = 68


#: HOG descriptor length per landmark: 9 orientations x 2 x 2 cells.
HOG_DIM_PER_LANDMARK = 36


#: Dimension of psi(x) in Section 5.2.3 of [1]: 68 x 36 = 2,448.
N_FEATURES = N_LANDMARKS * HOG_DIM_PER_LANDMARK


#: 0-based indices of the outer eye corners (points 37 and 46 of the 1-based markup).
OUTER_EYE_CORNERS = (36, 45)


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
ARCHIVE_SUBSETS = ("afw", "helen/trainset", "helen/testset", "lfpw/trainset", "lfpw/testset", "ibug")


#: Face folders of the project's offline copy (``shared/data/faces``); 1,537 faces.
MIRROR_SUBSETS = ("afw", "helen_testset", "helen_trainset")


#: Trn1 / Val1 / Trn2 / Val2 / Tst for the 1,537 offline faces (538 / 77 / 461 / 154 / 307, stratified by subset).
#: See :func:`run_landmark_split` for the reasons.
DEFAULT_RATIOS = (0.35, 0.05, 0.30, 0.10, 0.20)


#: Shape-predictor options tried on Val1 (dlib's defaults except nu / oversampling, kept tiny:
#: one training takes ~20 s (oversampling 5) to ~40 s (10) for ~540 faces on 2 cores).
DEFAULT_OPTIONS_GRID = (
    {"cascade_depth": 10, "tree_depth": 4, "nu": 0.1, "num_trees_per_cascade_level": 500, "oversampling_amount": 5},
    {"cascade_depth": 10, "tree_depth": 4, "nu": 0.1, "num_trees_per_cascade_level": 500, "oversampling_amount": 10},
)


#: Sizes m of the Trn2 prefixes of the learning curve (Fig. 4b of [1]); sizes above |Trn2| are dropped
#: and the full Trn2 is always added.
DEFAULT_LEARNING_CURVE_SIZES = (50, 100, 200, 300)


#: A face counts as detected when its best detection overlaps the ground-truth landmark box
#: with at least this IoU (the typical dlib box covers brows-to-chin, IoU ~0.7 with that box).
MISS_IOU_THRESHOLD = 0.3


# HOG patch: side = _PATCH_FRACTION x (predicted) inter-ocular distance, resampled to a
# 16 x 16 grid = 2 x 2 cells of 8 x 8 px.
_PATCH_FRACTION = 0.3


_CELL_PX = 8


_HOG_ORIENTATIONS = 9


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
    for number, line in enumerate(lines, 1):
        fields = line.split()
        try:
            if len(fields) != 2:
                raise ValueError
            points.append((float(fields[0]), float(fields[1])))
        except ValueError:
            raise ValueError(f"{path}: malformed point line {line!r} (expected two numbers 'x y')") from None
    if declared is not None and declared != len(points):
        raise ValueError(f"{path}: header declares n_points {declared} but the file holds {len(points)} points")
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
        Root folder: the offline copy (``shared/data/faces``) or the top folder
        of the extracted official archive (then pass ``subsets=ARCHIVE_SUBSETS``).
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


def load_image(path) -> np.ndarray:
    """Load an image as a grayscale ``uint8`` array (both dlib models work on intensities)."""
    from PIL import Image

    with Image.open(path) as image:
        return np.ascontiguousarray(np.asarray(image.convert("L"), dtype=np.uint8))


def load_images(paths) -> list[np.ndarray]:
    """:func:`load_image` for each path."""
    return [load_image(path) for path in paths]


def _load_truths(faces: pd.DataFrame) -> np.ndarray:
    """Ground-truth landmarks (n, 68, 2) of the rows of ``faces``."""
    return np.stack([read_pts(path) for path in faces["pts"]]) if len(faces) else np.zeros((0, N_LANDMARKS, 2))


# --------------------------------------------------------------------------- parallel map
_worker_function = None  # in a worker process of _map_in_processes: the function it maps


def _init_worker(function) -> None:
    """Pool initializer: keep ``function`` (and the data it binds) in this worker process."""
    global _worker_function
    _worker_function = function


def _call_worker_function(task):
    return _worker_function(task)


def _map_in_processes(function, tasks, n_jobs: int, chunksize: int = 1):
    """``map(function, tasks)`` in order, over ``n_jobs`` forked worker processes (1: in this process).

    Processes, not threads: dlib holds the GIL, and the score learners run
    single-threaded BLAS. The workers are forked, and ``function`` reaches them
    through the fork (the pool's initializer), not pickled: bind the large
    inputs shared by all tasks to it (:func:`functools.partial`), and only the
    tasks and the results are pickled. No re-import of the package in each
    worker. Each task is computed exactly as in the serial loop, so the results
    do not depend on ``n_jobs``.
    """
    n_jobs = max(1, min(int(n_jobs), len(tasks)))
    if n_jobs == 1:
        yield from map(function, tasks)
        return
    context = multiprocessing.get_context("fork")
    with ProcessPoolExecutor(n_jobs, mp_context=context, initializer=_init_worker, initargs=(function,)) as pool:
        yield from pool.map(_call_worker_function, tasks, chunksize=chunksize)


# --------------------------------------------------------------------------- loss
def _as_shapes(landmarks, name: str) -> np.ndarray:
    array = np.asarray(landmarks, dtype=np.float64)
    if array.ndim == 2:
        array = array[None]
    if array.ndim != 3 or array.shape[1:] != (N_LANDMARKS, 2):
        raise ValueError(
            f"{name} must have shape (n, {N_LANDMARKS}, 2) or ({N_LANDMARKS}, 2), got {np.shape(landmarks)}"
        )
    return array


def inter_ocular_distance(landmarks) -> np.ndarray:
    """Distance between the outer eye corners (0-based points 36 and 45), shape (n,)."""
    shapes = _as_shapes(landmarks, "landmarks")
    return np.linalg.norm(shapes[:, OUTER_EYE_CORNERS[0]] - shapes[:, OUTER_EYE_CORNERS[1]], axis=1)


def landmark_loss(truth, pred) -> np.ndarray:
    """Normalised localisation error of Section 5.2.3 of [1].

    ``l(y, y') = 100 / iod(y) * sum_{i=1}^{68} ||l_i - l'_i||`` with ``iod``
    the distance of the ground-truth outer eye corners.

    Parameters
    ----------
    truth, pred : array-like of shape (n, 68, 2) or (68, 2)
        Ground-truth and predicted landmarks (same pixel convention).

    Returns
    -------
    ndarray of shape (n,)
        The loss per face (a sum over landmarks; :func:`per_landmark` gives the
        scale of Fig. 4 of [1]).

    Examples
    --------
    >>> truth = np.zeros((68, 2)); truth[45] = (50, 0)
    >>> float(landmark_loss(truth, truth + (3, 4))[0])
    680.0
    """
    truth = _as_shapes(truth, "truth")
    pred = _as_shapes(pred, "pred")
    if truth.shape != pred.shape:
        raise ValueError(f"truth and pred shapes differ: {truth.shape} vs {pred.shape}")
    iod = inter_ocular_distance(truth)
    if np.any(iod <= 0):
        raise ValueError(f"ground-truth inter-ocular distance must be positive (face {int(np.argmin(iod))})")
    return 100.0 / iod * np.linalg.norm(truth - pred, axis=2).sum(axis=1)


def per_landmark(loss):
    """The loss averaged over the 68 landmarks (``loss / 68``): the scale of Fig. 4 of [1].

    AuRC values on this scale are the paper's 2.6 (SELE), 2.8 (REG) and 3.5
    (face score).
    """
    return np.asarray(loss, dtype=np.float64) / N_LANDMARKS


# --------------------------------------------------------------------------- official archive
#: Top folder of the official archive; the face folders ARCHIVE_SUBSETS lie under it.
ARCHIVE_TOP_FOLDER = "ibug_300W_large_face_landmark_dataset"


def archive_raw_file():
    """The official 300-W archive as a :class:`rejectopt.datasets.RawFile` (sha256 recorded on first fetch)."""
    from ..datasets import RawFile

    return RawFile(
        dataset="300w", name=OFFICIAL_SOURCES["archive_name"], url=OFFICIAL_SOURCES["archive_url"], sha256=None
    )


def fetch_archive(dest_dir, mirror=None, allow_download: bool = True, download=None, record_lock: bool = True) -> Path:
    """Fetch the official archive (~1.7 GB) with :func:`rejectopt.datasets.fetch_file`.

    ``download`` (a :class:`rejectopt.datasets._fetch.DownloadOptions` or mapping) sets the
    download base URL, retries, backoff and timeout. With ``record_lock=True`` its sha256 is
    recorded in ``dest_dir/checksums.lock`` at once; with False (the pipeline) only by
    :func:`extract_official_archive` once the archive extracted safely with the official layout.
    Later fetches are verified against the recorded hash.
    """
    from ..datasets import fetch_file

    return fetch_file(
        archive_raw_file(), dest_dir, mirror=mirror, allow_download=allow_download, download=download,
        record_lock=record_lock,
    )


def _check_member(member: tarfile.TarInfo, dest: Path, tar_path) -> None:
    """Raise if ``member`` would land (or link) outside ``dest`` or is not a file, folder or link."""
    name = member.name
    target = (dest / name).resolve()
    if Path(name).is_absolute() or os.path.isabs(name) or not target.is_relative_to(dest):
        raise ValueError(f"{tar_path}: member {name!r} escapes the destination; nothing was extracted")
    if not (member.isfile() or member.isdir() or member.issym() or member.islnk()):
        kind = "a device file" if (member.ischr() or member.isblk()) else "a FIFO" if member.isfifo() else "special"
        raise ValueError(f"{tar_path}: member {name!r} is {kind}, not a regular file; nothing was extracted")
    if member.issym() or member.islnk():
        base = target.parent if member.issym() else dest
        link = (base / member.linkname).resolve()
        if os.path.isabs(member.linkname) or not link.is_relative_to(dest):
            raise ValueError(
                f"{tar_path}: link {name!r} -> {member.linkname!r} points outside the destination; "
                "nothing was extracted"
            )


def extract_archive(tar_path, dest, check=None) -> Path:
    """Safely extract a (gzipped) tar archive such as the official 300-W one, all or nothing.

    Every member is checked before anything is written: a member whose path or
    link target escapes ``dest`` (``../x``, an absolute path, a symlink or hard
    link pointing outside) or that is a device file or FIFO raises and nothing is
    extracted. Extraction goes into a temporary folder beside ``dest`` with
    tarfile's ``data`` filter (PEP 706, a second line of defence); ``check``
    (if given) is called with that folder; only then is the folder renamed to
    ``dest`` (:func:`rejectopt._io.atomic_path`). On any error ``dest`` is not created.

    Parameters
    ----------
    tar_path : path-like
    dest : path-like
        Destination folder; must not exist or be empty.
    check : callable, optional
        ``check(folder)`` raises if the extracted content is not acceptable.

    Returns
    -------
    pathlib.Path
        ``dest``.

    Raises
    ------
    ValueError
        An unsafe member (the message names it), or ``check`` refused the content.
    rejectopt.datasets.DecompressionError
        The archive is corrupt or truncated.
    FileExistsError
        ``dest`` already holds files.
    """
    import shutil

    from .._io import atomic_path
    from ..datasets._fetch import DecompressionError, check_stream

    dest = Path(dest)
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise FileExistsError(f"{dest} already exists and is not an empty folder: remove it to extract {tar_path}")
    # the whole compressed stream first: its CRC is at the end, past the tar's end marker
    check_stream(tar_path, Path(tar_path).name, f"the archive {tar_path}",
                 "Nothing was extracted; delete it and run again to download it anew.")
    with atomic_path(dest) as tmp:
        if tmp.exists():  # left by a killed run with the same pid
            shutil.rmtree(tmp)
        tmp.mkdir()
        try:
            root = tmp.resolve()
            try:
                with tarfile.open(tar_path, "r:*") as archive:
                    members = archive.getmembers()
                    for member in members:
                        _check_member(member, root, tar_path)
                    archive.extractall(root, members=members, filter="data")
            except tarfile.FilterError as error:
                raise ValueError(f"{tar_path}: unsafe member refused by the tar data filter: {error}; "
                                 "nothing was extracted") from error
            except (tarfile.TarError, EOFError, zlib.error, lzma.LZMAError, OSError) as error:
                if isinstance(error, OSError) and error.errno is not None:
                    raise  # a real I/O error (disk full, permissions), not bad data
                raise DecompressionError(
                    f"{tar_path}: the archive is corrupt or truncated ({type(error).__name__}: {error}); "
                    "nothing was extracted. Delete it and run again to download it anew."
                ) from error
            if check is not None:
                check(root)
            if dest.is_dir():
                dest.rmdir()  # empty (checked above); the rename replaces it
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
    logger.info("extracted %d members of %s into %s", len(members), tar_path, dest)
    return dest


def check_archive_layout(folder) -> pd.DataFrame:
    """Check an extracted official archive: every face folder of ARCHIVE_SUBSETS under
    ``ibug_300W_large_face_landmark_dataset/`` holds annotated faces whose ``.pts`` parse.

    Returns the faces (:func:`list_faces`); raises ValueError naming what is missing.
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
    """
    from ..datasets._fetch import is_trusted, record_trusted, sha256_of_file

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
            f"{str(error).strip().rstrip('.')}. The archive was not recorded in checksums.lock and was moved aside to {rejected}; "
            "the next run downloads it again."
        ) from error
    if not trusted:
        record_trusted(tar_path.parent, {raw_file.name: sha256_of_file(tar_path)})
    return Path(dest)
