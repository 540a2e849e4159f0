"""Atomic file output: a step that fails or is killed never leaves a complete-looking file."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import numpy as np

__all__ = ["atomic_path", "save_npz"]


@contextlib.contextmanager
def atomic_path(path):
    """Yield a temporary path beside ``path``; rename it onto ``path`` on success.

    On any exception the temporary file is removed and ``path`` is untouched.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.part")
    try:
        yield tmp
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def save_npz(path, **arrays) -> None:
    """Write ``arrays`` to ``path`` as an uncompressed ``.npz``, atomically."""
    with atomic_path(path) as tmp, open(tmp, "wb") as handle:
        np.savez(handle, **arrays)
