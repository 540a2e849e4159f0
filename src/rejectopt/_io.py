"""Atomic file output: a step that fails or is killed never leaves a complete-looking file.

The one home of atomic writes in rejectopt: every writer of the library and the
pipeline goes through :func:`atomic_path`.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import numpy as np

__all__ = ["atomic_path", "save_npz", "write_bytes", "write_text", "write_csv", "save_figure"]


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
