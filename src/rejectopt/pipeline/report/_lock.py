"""Internal (the pipeline's report): the lock behind README lines 1 and 2 (``requirements/*.txt``,
written by ``requirements/lock.sh``) read back, and the installed packages held against it.

Standard library only, so that ``requirements/lock_inputs.py`` (in uv's scratch environment) and the
test suite's support read locks with this one parser. A pin is ``name==version`` with an optional
environment marker; a package may appear once per marker. The installed packages match the lock
when each one the lock names has a version the lock lists for it: that is what fixes the numbers of a
run. A package of the lock that is not installed (another platform's, an extra left out) is no
difference.
"""

from __future__ import annotations

import hashlib
import re
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

__all__ = ["canonical_name", "lock_pins", "lock_differences", "lock_sha256"]

_PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;\\]+)\s*(?:;\s*(.*?))?\s*\\?$")


def canonical_name(name: str) -> str:
    """PEP 503's normal form of a distribution's name (``Scikit_Learn`` -> ``scikit-learn``).

    .. versionadded:: 0.5.2
    """
    return re.sub(r"[-_.]+", "-", name).lower()


def lock_pins(path) -> list[tuple[str, str, str | None]]:
    """Every pin of a lock file, in its order: (canonical name, version, marker text or None).

    Raises ValueError naming the file when it holds no pin (not a lock, or an empty one).

    .. versionadded:: 0.5.2
    """
    text = Path(path).read_text(encoding="utf-8")
    pins = []
    for line in text.splitlines():
        match = _PIN.match(line)
        if match:
            name, pinned, marker = match.groups()
            pins.append((canonical_name(name), pinned, marker or None))
    if not pins:
        raise ValueError(
            f"{path}: no 'name==version' line; a lock is written by `bash requirements/lock.sh`"
        )
    return pins


def lock_differences(path) -> list[str]:
    """The installed packages whose version the lock at ``path`` does not list, as
    ``"numpy 2.5.0 (lock: 2.4.6)"``; empty when this environment is the lock's.

    .. versionadded:: 0.5.2
    """
    allowed: dict[str, list[str]] = {}
    for name, pinned, _ in lock_pins(path):
        allowed.setdefault(name, []).append(pinned)
    differences = []
    for name, versions in allowed.items():
        try:
            installed = version(name)
        except PackageNotFoundError:
            continue
        if installed not in versions:
            differences.append(f"{name} {installed} (lock: {' or '.join(versions)})")
    return differences


def lock_sha256(path) -> str:
    """sha256 of the lock file's bytes: the name of the environment a run was installed from.

    .. versionadded:: 0.5.2
    """
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()
