"""Writing the outputs: never over an input, never over an existing file without ``--force``.

Every file is written to a temporary file beside it and renamed (:func:`rejectopt._io.atomic_path`);
``select``'s files are renamed only once all of them are written, so a failure leaves no
partial output and the previous outputs untouched.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from .._io import atomic_path
from ._errors import InputError, one_line

__all__ = [
    "check_output_file",
    "check_output_folder",
    "write_decisions",
    "write_folder",
    "write_outputs",
]


def _same_file(a, b):
    """Whether paths ``a`` and ``b`` name the same file (through links, ``..`` or a hard link)."""
    try:
        return os.path.samefile(a, b)
    except OSError:  # one of them does not exist
        return Path(a).resolve() == Path(b).resolve()


def _refuse_inputs(out, inputs):
    for option, path in inputs.items():
        if path is not None and _same_file(out, path):
            raise InputError(f"--out {out} is the {option} file: refusing to overwrite an input")
    if (
        out.exists() and not out.is_file()
    ):  # a device such as /dev/null, a pipe, a folder in select's --out
        raise InputError(f"--out {out} exists and is not a regular file: refusing to replace it")


def check_output_file(out, inputs, force):
    """Refuse ``out`` if it is a folder or one of ``inputs`` (``{option: path}``), or exists without ``force``."""
    out = Path(out)
    if out.is_dir():
        raise InputError(f"--out {out} is a folder; give a file name such as decisions.csv")
    _refuse_inputs(out, inputs)
    if out.exists() and not force:
        raise InputError(f"--out {out} exists; pass --force to replace it")


def check_output_folder(out_dir, names, inputs, force):
    """Refuse a folder ``out_dir`` whose files ``names`` would replace an input, or existing ones without ``force``."""
    out_dir = Path(out_dir)
    if out_dir.exists() and not out_dir.is_dir():
        raise InputError(f"--out {out_dir} exists and is not a folder")
    for name in names:
        _refuse_inputs(out_dir / name, inputs)
    existing = [name for name in names if (out_dir / name).exists()]
    if existing and not force:
        raise InputError(
            f"--out {out_dir} already holds {', '.join(existing)}; pass --force to replace "
            f"{'it' if len(existing) == 1 else 'them'}"
        )


def write_outputs(out_dir, files):
    """Write ``{name: bytes}`` into ``out_dir``: all files to temporary names first, then renamed.

    On failure nothing is renamed, the temporary files are removed, and so is ``out_dir``
    if this call created it.
    """
    out_dir = Path(out_dir)
    created = not out_dir.exists()
    try:
        with contextlib.ExitStack() as stack:
            for name, data in files.items():
                stack.enter_context(atomic_path(out_dir / name)).write_bytes(data)
    except BaseException:
        if created and out_dir.is_dir() and not any(out_dir.iterdir()):
            out_dir.rmdir()
        raise


def write_folder(out_dir, names, inputs, force, files):
    """Check ``out_dir`` again (:func:`check_output_folder`), then write ``files`` (:func:`write_outputs`).

    Checked again because the folder may have changed while the command ran; a failure to write
    is bad input (the folder's), named with ``--out``.
    """
    check_output_folder(out_dir, names, inputs, force)
    try:
        write_outputs(out_dir, files)
    except OSError as err:
        raise InputError(f"--out {out_dir}: cannot write ({one_line(err)})") from None


def write_decisions(frame, out):
    """Write ``apply``'s decisions to the CSV ``out`` (uncertainties with all 17 digits)."""
    try:
        with atomic_path(out) as tmp:
            frame.to_csv(tmp, index=False, float_format="%.17g")
    except OSError as err:
        raise InputError(f"--out {out}: cannot write ({one_line(err)})") from None
