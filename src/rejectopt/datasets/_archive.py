"""Archives: one member of a downloaded zip / tar (a raw file packed with others), and a whole
tar archive extracted safely, all or nothing (the official 300-W faces).

Both stop at the cap of :func:`~rejectopt.datasets._decompress.unpack_cap` (``unpack_max_ratio``
times the archive's size), a member at its raw file's pinned size where the registry pins one: a
member, or the sum of the members, declared larger is refused before anything is extracted, and a
member that turns out larger than declared is stopped at the limit.
"""

from __future__ import annotations

import logging
import lzma
import os
import shutil
import tarfile
import zipfile
import zlib
from pathlib import Path
from typing import IO, TYPE_CHECKING, cast

from .._io import atomic_path
from ..exceptions import DataSourceError, DecompressionError, UnpackLimitError
from ._decompress import (
    DECODE_ERRORS,
    MAX_UNPACK_RATIO,
    check_stream,
    size_limit_error,
    unpack_cap,
    unpack_limit_error,
)
from ._stream import OverLimit, ReadFailed, discarded, pump, remove_stale_parts

if TYPE_CHECKING:  # pragma: no cover
    from ._registry import RawFile

__all__ = ["extract_archive", "extract_member", "resolve_member"]

logger = logging.getLogger(__name__)


# --------------------------------------------------------------------------- one member of a download
def extract_member(
    raw_file: RawFile,
    archive: Path,
    url: str,
    n_bytes: int,
    sink,
    hint: str,
    max_ratio: float = MAX_UNPACK_RATIO,
) -> None:
    """Copy member ``raw_file.archive_member`` of the downloaded zip / tar ``archive`` into ``sink``;
    a damaged archive raises :class:`DecompressionError` ending with ``hint`` (what to do), a member
    past the raw file's pinned size (``raw_file.size``), or else past the cap,
    :class:`~rejectopt.exceptions.UnpackLimitError`, a member that is a link or not a file
    :class:`DataSourceError`."""
    member = cast(str, raw_file.archive_member)  # called for a raw file inside an archive only
    what = f"the download of {url} ({n_bytes} bytes)"
    damaged = f"{raw_file.name}: {what} cannot be read as an archive"
    size = raw_file.size
    cap = size if size is not None else unpack_cap(n_bytes, max_ratio)

    def too_large(name: str):
        if size is not None:
            return size_limit_error(
                raw_file.name, f"member {name!r} of {what}", size, hint, discarded(sink)
            )
        return unpack_limit_error(
            raw_file.name,
            f"member {name!r} of {what}",
            cap,
            n_bytes,
            max_ratio,
            hint,
            discarded(sink),
        )

    try:
        if zipfile.is_zipfile(archive):
            with zipfile.ZipFile(archive) as zip_bundle:
                zip_info = zip_bundle.getinfo(resolve_member(zip_bundle.namelist(), member, url))
                if zip_info.file_size > cap:
                    raise too_large(zip_info.filename)
                with zip_bundle.open(zip_info) as source:
                    pump(source, sink, DECODE_ERRORS, limit=cap)
            return
        if tarfile.is_tarfile(archive):
            check_stream(archive, raw_file.name, what, hint, max_ratio)
            with tarfile.open(archive) as tar_bundle:
                tar_info = _regular_member(
                    tar_bundle,
                    resolve_member(tar_bundle.getnames(), member, url),
                    raw_file.name,
                    what,
                    hint,
                )
                if tar_info.size > cap:
                    raise too_large(tar_info.name)
                # a regular member (checked above) always has a file object
                with cast(IO[bytes], tar_bundle.extractfile(tar_info)) as tar_source:
                    pump(tar_source, sink, DECODE_ERRORS, limit=cap)
            return
    except OverLimit:
        raise too_large(member) from None
    except ReadFailed as exc:
        raise DecompressionError(
            f"{damaged}: member {member!r} is corrupt or truncated ({type(exc.error).__name__}: {exc.error}); "
            f"{discarded(sink)}. {hint}"
        ) from exc.error
    except (zipfile.BadZipFile, tarfile.TarError, EOFError, zlib.error, lzma.LZMAError) as exc:
        raise DecompressionError(
            f"{damaged}: the archive is corrupt or truncated ({type(exc).__name__}: {exc}); {discarded(sink)}. "
            f"{hint}"
        ) from exc
    raise DecompressionError(
        f"{damaged}: it is neither a zip nor a tar archive (corrupt or truncated, or the server sent "
        f"something else, such as an HTML page); nothing was written. {hint}"
    )


def _regular_member(
    bundle: tarfile.TarFile, name: str, raw_name: str, what: str, hint: str
) -> tarfile.TarInfo:
    """The tar member ``name`` if it is a regular file; a link, folder or special file is refused
    (a raw file is stored in the archive itself: a link could name another member, or none)."""
    info = bundle.getmember(name)
    if info.isfile():
        return info
    if info.issym() or info.islnk():
        kind = "a symbolic link" if info.issym() else "a hard link"
        described = f"{kind} to {info.linkname!r}"
    else:
        described = "a folder" if info.isdir() else "a special file (device or FIFO)"
    raise DataSourceError(
        f"{raw_name}: member {name!r} of {what} is {described}, not a regular file: refused, nothing was "
        f"written. {hint}"
    )


def resolve_member(names: list[str], member: str, url: str) -> str:
    """``member`` if present, else the single member with the same base name."""
    if member in names:
        return member
    base = member.rsplit("/", 1)[-1]
    same_base = [n for n in names if n.rsplit("/", 1)[-1] == base]
    if len(same_base) == 1:
        logger.info("%s: member %s found as %s", url, member, same_base[0])
        return same_base[0]
    raise DataSourceError(f"{url} has no member {member!r} (members: {names[:20]})")


# --------------------------------------------------------------------------- a whole tar archive
def _check_member(member: tarfile.TarInfo, dest: Path, tar_path, earlier_files: set[str]) -> None:
    """Raise if ``member`` would land (or link) outside ``dest``, is not a file, folder or link, or
    is a hard link to no earlier regular file of the archive (``earlier_files``: tarfile would
    stop on a KeyError)."""
    name = member.name
    target = (dest / name).resolve()
    if Path(name).is_absolute() or os.path.isabs(name) or not target.is_relative_to(dest):
        raise ValueError(
            f"{tar_path}: member {name!r} escapes the destination; nothing was extracted"
        )
    if not (member.isfile() or member.isdir() or member.issym() or member.islnk()):
        kind = (
            "a device file"
            if (member.ischr() or member.isblk())
            else "a FIFO"
            if member.isfifo()
            else "special"
        )
        raise ValueError(
            f"{tar_path}: member {name!r} is {kind}, not a regular file; nothing was extracted"
        )
    if member.issym() or member.islnk():
        base = target.parent if member.issym() else dest
        link = (base / member.linkname).resolve()
        if os.path.isabs(member.linkname) or not link.is_relative_to(dest):
            raise ValueError(
                f"{tar_path}: link {name!r} -> {member.linkname!r} points outside the destination; "
                "nothing was extracted"
            )
    if member.islnk() and member.linkname not in earlier_files:
        raise ValueError(
            f"{tar_path}: hard link {name!r} -> {member.linkname!r} names no regular file stored before it "
            "in the archive; nothing was extracted"
        )


def extract_archive(tar_path, dest, check=None, max_ratio: float = MAX_UNPACK_RATIO) -> Path:
    """Safely extract a (compressed) tar archive such as the official 300-W one, all or nothing.

    Every member is checked before anything is written: a member whose path or
    link target escapes ``dest`` (``../x``, an absolute path, a symlink or hard
    link pointing outside) or that is a device file or FIFO raises and nothing is
    extracted. Extraction goes into a temporary folder beside ``dest`` with
    tarfile's ``data`` filter (PEP 706, a second line of defence); ``check``
    (if given) is called with that folder; only then is the folder renamed to
    ``dest`` (:func:`rejectopt._io.atomic_path`). On any error ``dest`` is not created.
    Members whose declared sizes add up to more than :func:`~rejectopt.datasets._decompress.unpack_cap`
    of the archive's size (``max_ratio`` times it, at least 64 MiB) are refused before extraction.
    A temporary folder left beside ``dest`` by a killed run is removed first.

    Parameters
    ----------
    tar_path : path-like
        The tar archive, uncompressed or gzip, bzip2 or xz compressed.
    dest : path-like
        Destination folder; must not exist or be empty.
    check : callable, optional
        ``check(folder)`` raises if the extracted content is not acceptable.
    max_ratio : float, default=100
        The cap on the extracted bytes per byte of the archive (``unpack_max_ratio``).

    Returns
    -------
    pathlib.Path
        ``dest``.

    Raises
    ------
    ValueError
        An unsafe member (the message names it), or ``check`` refused the content.
    rejectopt.exceptions.DecompressionError
        The archive is corrupt or truncated, or expands past the cap (``UnpackLimitError``).
    FileExistsError
        ``dest`` already holds files.
    """
    dest = Path(dest)
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise FileExistsError(
            f"{dest} already exists and is not an empty folder: remove it to extract {tar_path}"
        )
    remove_stale_parts(dest.parent, dest.name)
    packed = Path(tar_path).stat().st_size
    cap = unpack_cap(packed, max_ratio)
    redo = "Nothing was extracted; delete it and run again to download it anew"
    # the whole compressed stream first: its CRC is at the end, past the tar's end marker
    check_stream(tar_path, Path(tar_path).name, f"the archive {tar_path}", redo + ".", max_ratio)
    with atomic_path(dest) as tmp:
        if tmp.exists():  # left by a killed run with the same pid
            shutil.rmtree(tmp)
        tmp.mkdir()
        try:
            root = tmp.resolve()
            try:
                with tarfile.open(tar_path, "r:*") as archive:
                    members = archive.getmembers()
                    files: set[str] = set()
                    for member in members:
                        _check_member(member, root, tar_path, files)
                        if member.isfile():
                            files.add(member.name)
                    declared = sum(member.size for member in members if member.isfile())
                    if declared > cap:
                        raise unpack_limit_error(
                            Path(tar_path).name,
                            f"the archive {tar_path} ({len(members)} members, {declared} bytes "
                            "declared)",
                            cap,
                            packed,
                            max_ratio,
                            redo,
                        )
                    archive.extractall(root, members=members, filter="data")
            except UnpackLimitError:
                raise
            except tarfile.FilterError as error:
                raise ValueError(
                    f"{tar_path}: unsafe member refused by the tar data filter: {error}; "
                    "nothing was extracted"
                ) from error
            except (tarfile.TarError, EOFError, zlib.error, lzma.LZMAError, OSError) as error:
                if isinstance(error, OSError) and error.errno is not None:
                    raise  # a real I/O error (disk full, permissions), not bad data
                # worded as check_stream's refusal above (the same redo), which a damaged compressed stream meets first
                raise DecompressionError(
                    f"{Path(tar_path).name}: the archive {tar_path} is corrupt or truncated "
                    f"({type(error).__name__}: {error}). {redo}."
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
