"""A named registry of methods: one plain dict per kind, filled once by decorators.

An entry may name its class by import path (``"rejectopt.scores._sele:SELE"``) instead of
holding it: the class is imported on first use (:func:`load_class`). The built-in methods
are registered that way, so reading the registries (config checks, wildcard constraints,
table layouts) imports neither scikit-learn nor SciPy: a table or figure job starts in a
third of the time.

:meth:`Registry.decorator` is the one class decorator behind ``register_score`` and
``register_classifier``; :class:`ClassEntry` the one lazily loaded ``cls`` of their entries.
"""

from __future__ import annotations

import contextlib
import difflib
import functools
import importlib
import importlib.util
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Generic, TypeVar

from .exceptions import RegistryError

__all__ = [
    "ClassEntry",
    "ExitAtImport",
    "Registry",
    "RegistryError",
    "import_interruption",
    "import_user_module",
    "load_class",
]

T = TypeVar("T")


def load_class(path: str) -> type:
    """The class at ``"package.module:QualName"``, imported now.

    Raises
    ------
    RegistryError
        ``path`` has no ``module:QualName`` form, the module cannot be imported, or it
        has no such class (the message names the path and the cause).
    """
    module, _, qualname = str(path).partition(":")
    if not module or not qualname:
        raise RegistryError(f"class path {path!r} is not of the form 'package.module:QualName'")
    try:
        obj = importlib.import_module(module)
        for part in qualname.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError) as exc:
        raise RegistryError(
            f"cannot load the registered class {path!r}: {type(exc).__name__}: {exc}"
        ) from exc
    if not isinstance(obj, type):
        raise RegistryError(f"{path!r} is a {type(obj).__name__}, not a class")
    return obj


class ExitAtImport(BaseException):
    """``os._exit(status)`` called by a user's module while :func:`import_user_module` imports it.

    A ``BaseException``, as ``SystemExit``: the caller names the module and stops.

    Attributes
    ----------
    status : int
        The exit status the module asked for.
    """

    def __init__(self, status):
        super().__init__(status)
        self.status = status


@contextlib.contextmanager
def _exit_refused():
    """``os._exit`` raises :class:`ExitAtImport` in this process while the block runs.

    ``os._exit`` ends the process on the spot, with no exception: called by a user's module at
    import, it would end the planning (Snakemake itself) with its status, 0 ("success") included,
    and no word. It is looked up on ``os`` when called, so replacing it for the import catches the
    call. A process forked meanwhile (a pool started at import) still exits for real; ``posix._exit``
    or a signal are not caught.
    """
    real, pid = os._exit, os.getpid()

    def refuse(status):
        if os.getpid() != pid:  # a child forked during the import ends as it meant to
            real(status)
        raise ExitAtImport(status)

    os._exit = refuse
    try:
        yield
    finally:
        os._exit = real


def import_interruption(name: str, err: BaseException) -> str:
    """The sentence for a user's module whose import would end the process: ``os._exit`` or Ctrl-C.

    One wording for every loader of user modules (plugins, experiments), each prefixing where the
    module was listed.

    Parameters
    ----------
    name : str
        The module's name as the configuration lists it.
    err : ExitAtImport or KeyboardInterrupt
        What its import raised.

    Returns
    -------
    str
    """
    if isinstance(err, ExitAtImport):
        return (
            f"module {name!r} called os._exit({err.status}) while imported, which would end planning (Snakemake "
            f"itself) at once with exit status {err.status} and no message; a module is imported by the planning "
            "and by every job: take the call out of its top level"
        )
    return f"module {name!r} was interrupted while imported (KeyboardInterrupt); nothing was run"


def import_user_module(name: str, search_dir: str | os.PathLike = ".") -> ModuleType:
    """Import a user's module ``name`` (``my_scores`` or ``package.module``): from ``search_dir``
    by file path, else from ``sys.path``.

    The folder is never put on ``sys.path``: there, any file of the working directory named like
    an installed module (a stray ``sklearn.py``) would be imported in its place by every later
    ``import``. The module's top-level file (``<name>.py``, or the package ``<name>/__init__.py``)
    is loaded from ``search_dir`` by its path instead, and a package's submodules from the
    package's own folder. A module already imported (from the same file) is returned as it is.

    Raises
    ------
    ModuleNotFoundError
        Neither in ``search_dir`` nor on ``sys.path`` (``err.name`` is the missing module).
    ImportError
        A file in ``search_dir`` named like a module installed elsewhere (it would shadow it).
    ExitAtImport
        The module called ``os._exit`` while imported (refused: it would end the process).
    Exception
        Whatever the module raises while it is imported.
    """
    with _exit_refused():
        return _import_user_module(name, search_dir)


def _import_user_module(name: str, search_dir) -> ModuleType:
    top = name.split(".")[0]
    folder = Path(search_dir).resolve()
    candidates = [folder / f"{top}.py", folder / top / "__init__.py"]
    path = next((c for c in candidates if c.is_file()), None)
    if path is None:
        return importlib.import_module(name)
    loaded = sys.modules.get(top)
    if loaded is not None:
        origin = getattr(loaded, "__file__", None)
    else:
        installed = importlib.util.find_spec(top)
        origin = None if installed is None else installed.origin
    if origin is not None and Path(origin).resolve() != path:
        raise ImportError(
            f"{path} has the name of the installed module {top!r} ({origin}) and would shadow it; "
            "rename the file (and its entry in the config)",
            name=top,
            path=str(path),
        )
    if loaded is None:
        package = [str(path.parent)] if path.name == "__init__.py" else None
        spec = importlib.util.spec_from_file_location(top, path, submodule_search_locations=package)
        # a path to a .py file always has a spec with a loader (SourceFileLoader)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[top] = module
        try:
            spec.loader.exec_module(module)
        except BaseException:
            del sys.modules[top]  # a failed import leaves nothing half-registered under its name
            raise
    return importlib.import_module(name)


def origin_of(cls) -> str:
    """``module.QualName`` of a class or of an import path ``"module:QualName"`` (named in errors)."""
    if isinstance(cls, str):
        return cls.replace(":", ".")
    return f"{getattr(cls, '__module__', '?')}.{getattr(cls, '__qualname__', cls)}"


class ClassEntry:
    """Mixin of a registry entry whose ``source`` is its class or the class's import path.

    Subclasses define ``_check_class(cls, origin) -> type``, the check a class passes at
    registration (a class) or on first use (an import path).
    """

    source: type | str

    def _check_class(self, cls, origin: str) -> type:
        raise NotImplementedError

    @functools.cached_property
    def cls(self) -> type:
        """The registered class, imported and checked on first use."""
        if isinstance(self.source, type):
            return self.source
        return self._check_class(load_class(self.source), origin_of(self.source))


class Registry(Generic[T]):
    """Entries of one kind (scores, classifiers) keyed by their unique name.

    scikit-learn's ``_SCORERS`` pattern: a dict built in one place; lookups of an
    unknown name raise an error that lists the valid names (and the closest one).
    Everything else (config validation, wildcard constraints, CLI choices, table
    columns, labels) reads the registry and never types the names again.
    """

    def __init__(self, kind: str):
        self.kind = kind
        self._entries: dict[str, T] = {}
        self._origin: dict[str, str] = {}

    def add(self, name: str, entry: T, origin: str) -> None:
        """Register ``entry`` under ``name``; ``origin`` (a module) is named in errors."""
        if not isinstance(name, str) or not name.isidentifier() or name != name.lower():
            raise RegistryError(
                f"{origin}: {self.kind} name {name!r} is not valid: use a lower-case Python identifier "
                "(letters, digits, underscores), e.g. 'my_score'"
            )
        if name in self._entries:
            raise RegistryError(
                f"{origin}: {self.kind} {name!r} is already registered by {self._origin[name]}; "
                f"choose another name (registered {self.kind}s: {', '.join(self.names())})"
            )
        self._entries[name] = entry
        self._origin[name] = origin

    def decorator(
        self, name: str, make_entry: Callable[[type | str], T], check: Callable[[type, str], object]
    ) -> Callable:
        """A class decorator registering ``make_entry(cls)`` under ``name``.

        It takes a class, checked now by ``check(cls, origin)``, or the class's import path
        ``"package.module:QualName"``, checked when the entry's class is first loaded.
        """

        def decorate(cls):
            origin = origin_of(cls)
            if not isinstance(cls, str):
                check(cls, origin)
            self.add(name, make_entry(cls), origin=origin)
            return cls

        return decorate

    def remove(self, name: str) -> None:
        """Forget ``name`` (tests and interactive sessions re-registering a plugin)."""
        self._entries.pop(name, None)
        self._origin.pop(name, None)

    def get(self, name: str) -> T:
        """The entry named ``name``; a :class:`RegistryError` lists the valid names otherwise."""
        try:
            return self._entries[name]
        except (KeyError, TypeError):
            raise RegistryError(self.unknown_message(name)) from None

    def unknown_message(self, name) -> str:
        """``unknown score 'sel': did you mean 'sele'? registered scores: ...``."""
        close = difflib.get_close_matches(str(name), self.names(), n=1)
        hint = f"did you mean {close[0]!r}? " if close else ""
        return f"unknown {self.kind} {name!r}: {hint}registered {self.kind}s: {', '.join(self.names())}"

    def origin(self, name: str) -> str:
        """Where ``name`` was registered from: ``module.QualName`` of its class (named in errors)."""
        self.get(name)
        return self._origin[name]

    def names(self) -> list[str]:
        return list(self._entries)

    def items(self):
        return self._entries.items()

    def values(self):
        return self._entries.values()

    def __contains__(self, name) -> bool:
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)
