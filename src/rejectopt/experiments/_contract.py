"""The experiment contract's types and its check (public, :mod:`rejectopt.experiments`), and what
the pipeline runs an experiment with: the split loop every experiment shares, a user's modules
loaded and checked, their rows and tables written."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping

import numpy as np
import pandas as pd

from .._io import atomic_path, save_npz, write_csv
from .._registry import import_user_module
from ..datasets import load_prepared
from ..splits import load_split

__all__ = ["BUILT_IN", "LOSS_SCALE", "SplitInputs", "SplitResult", "aggregate_files", "check_experiment",
           "load_experiments", "run_dataset", "run_splits", "split_inputs"]

log = logging.getLogger(__name__)

#: The classification loss is ``100 [y != h(x)]`` (:func:`rejectopt.metrics.task_loss`): risks read
#: in percent, as in the paper's tables, in every experiment.
LOSS_SCALE = 100.0

#: The built-in experiments' names: a user's experiment may not take them.
BUILT_IN = ("paper", "ood", "double_hinge", "landmarks")

#: The names a module of the contract defines (see :mod:`rejectopt.experiments`).
CONTRACT = ("NAME", "settings", "run_split", "aggregate")


@dataclass
class SplitInputs:
    """What one split of one dataset starts from: the staged files, read on first use (``X``, ``y``,
    ``parts``: :func:`rejectopt.splits.load_split`).

    Parameters
    ----------
    dataset : str
        The dataset's name.
    split : int
        The split's number.
    task : str
        ``"classification"`` or ``"ordinal"``.
    seed : int
        The run's master seed (derive each use's seed from it and the names of that use).
    data_path, splits_path : path
        ``results/data/{dataset}/data.npz`` and ``splits.npz``.
    staged : dict
        The rule's other inputs by role, e.g. ``{"classifier/lr": path, "scores/lr": path}``.
    _data : tuple, optional
        ``(X, y)`` already read, shared by the splits of one dataset (the pipeline sets it).
    _parts : dict, optional
        The split's row indices already read.

    Examples
    --------
    What a rule gives, by role; a role it does not give is named with those it does:

    >>> inputs = SplitInputs("iris", 1, "classification", 0, "data.npz", "splits.npz",
    ...                      staged={"classifier/lr": "lr.npz"})
    >>> inputs.staged_file("classifier/lr").name
    'lr.npz'
    >>> inputs.staged_file("scores/lr")
    Traceback (most recent call last):
    ...
    KeyError: "iris split 1: no staged file 'scores/lr' (the rule gives: classifier/lr)"
    """

    dataset: str
    split: int
    task: str
    seed: int
    data_path: Any
    splits_path: Any
    staged: Mapping[str, Any] = field(default_factory=dict)
    _data: tuple | None = field(default=None, repr=False)
    _parts: dict | None = field(default=None, repr=False)

    @property
    def X(self) -> np.ndarray:
        return self._load()[0]

    @property
    def y(self) -> np.ndarray:
        return self._load()[1]

    @property
    def parts(self) -> dict[str, np.ndarray]:
        """Row indices of Trn1 / Val1 / Trn2 / Val2 / Tst of this split."""
        if self._parts is None:
            self._parts = load_split(self.splits_path, self.split)
        return self._parts

    def staged_file(self, role: str) -> Path:
        """The staged file of ``role``; a ``KeyError`` names the roles the rule gave otherwise."""
        try:
            return Path(self.staged[role])
        except KeyError:
            raise KeyError(f"{self.dataset} split {self.split}: no staged file {role!r} "
                           f"(the rule gives: {', '.join(sorted(self.staged)) or 'none'})") from None

    def _load(self) -> tuple[np.ndarray, np.ndarray]:
        if self._data is None:
            self._data = load_prepared(self.data_path)
        return self._data


@dataclass
class SplitResult:
    """One split's tidy rows (one per method and setting) and optional named curves (arrays).

    Parameters
    ----------
    rows : pandas.DataFrame
        One row per method and setting; the pipeline adds ``dataset`` and ``split``.
    curves : dict of str to numpy.ndarray, optional
        Arrays written to the split's ``.npz`` (e.g. risk-coverage curves).

    Examples
    --------
    >>> import numpy as np
    >>> import pandas as pd
    >>> result = SplitResult(pd.DataFrame({"method": ["sele"], "aurc": [4.2]}),
    ...                      curves={"sele_risk": np.array([0.0, 2.5, 4.0])})
    >>> result.rows
      method  aurc
    0   sele   4.2
    """

    rows: pd.DataFrame
    curves: dict[str, np.ndarray] = field(default_factory=dict)


def split_inputs(dataset: str, task: str, seed: int, data_path, splits_path, splits, staged=None) -> dict[int, SplitInputs]:
    """:class:`SplitInputs` of every split of ``splits`` for one dataset, the data read once for all.

    Parameters
    ----------
    dataset : str
        The dataset's name.
    task : str
        ``"classification"`` or ``"ordinal"``.
    seed : int
        The run's master seed.
    data_path, splits_path : path-like
        The prepared data and its splits file.
    splits : iterable of int
        The splits' numbers.
    staged : dict, optional
        ``split -> {role: path}`` (:attr:`SplitInputs.staged`); a split not in it gets none.

    Returns
    -------
    dict of int to SplitInputs
    """
    data = load_prepared(data_path)
    staged = staged or {}
    return {int(k): SplitInputs(dataset, int(k), task, seed, data_path, splits_path, dict(staged.get(k, {})), _data=data)
            for k in splits}


def check_experiment(experiment: Any, origin: str = "") -> Any:
    """``experiment`` if it has the contract's names, a ``TypeError`` naming what is missing otherwise.

    Parameters
    ----------
    experiment : module or object
        What should define ``NAME``, ``settings``, ``run_split`` and ``aggregate``.
    origin : str, default ""
        What the error names (default: the module's name).

    Returns
    -------
    module or object
        ``experiment`` itself.

    Raises
    ------
    TypeError
        A name missing or not callable, or ``NAME`` not a lower-case identifier.

    Examples
    --------
    >>> import types
    >>> mine = types.SimpleNamespace(NAME="mine", settings=dict, run_split=print, aggregate=print)
    >>> check_experiment(mine).NAME
    'mine'
    >>> check_experiment(types.SimpleNamespace(NAME="mine", settings=dict), origin="my_experiment")
    Traceback (most recent call last):
    ...
    TypeError: experiment my_experiment: missing run_split, aggregate of the contract (NAME, settings, run_split, aggregate; see rejectopt.experiments)
    """
    where = origin or getattr(experiment, "__name__", repr(experiment))
    missing = [name for name in CONTRACT if not hasattr(experiment, name)]
    if missing:
        raise TypeError(f"experiment {where}: missing {', '.join(missing)} of the contract "
                        f"({', '.join(CONTRACT)}; see rejectopt.experiments)")
    name = experiment.NAME
    if not isinstance(name, str) or not name.isidentifier() or name != name.lower():
        raise TypeError(f"experiment {where}: NAME {name!r} is not a lower-case Python identifier")
    for attr in CONTRACT[1:]:
        if not callable(getattr(experiment, attr)):
            raise TypeError(f"experiment {where}: {attr} is not callable")
    return experiment


def load_experiments(paths, search_dir=".") -> dict[str, Any]:
    """Import a user's experiment modules (config key ``experiments``) and check them: ``NAME -> module``.

    Looked up as ``plugins`` are (:func:`rejectopt._registry.import_user_module`): by file in
    ``search_dir``, else on ``sys.path`` (the folder is not put on it: a stray ``sklearn.py`` would
    shadow scikit-learn).

    Parameters
    ----------
    paths : list of str or None
        Module names (``my_experiment``, ``package.module``).
    search_dir : path-like, default "."
        Where a module's file is looked up first.

    Returns
    -------
    dict of str to module
        By each module's ``NAME``.

    Raises
    ------
    ImportError
        A module that cannot be imported (its own error is named).
    TypeError
        A module that lacks a name of the contract, or whose ``NAME`` is taken.
    """
    loaded: dict[str, Any] = {}
    for path in paths or []:
        if not isinstance(path, str) or not all(part.isidentifier() for part in path.split(".")):
            raise ImportError(f"config experiments: {path!r} is not a module name (e.g. my_experiment or package.module)")
        try:
            module = import_user_module(path, search_dir)
        except Exception as err:  # the user's module's own error, reported with its name
            raise ImportError(f"config experiments: module {path!r} failed to import: "
                              f"{type(err).__name__}: {err}") from err
        check_experiment(module, origin=f"{path!r}")
        if module.NAME in BUILT_IN or module.NAME in loaded:
            raise TypeError(f"experiment {path!r}: NAME {module.NAME!r} is taken "
                            f"(built in: {', '.join(BUILT_IN)}; loaded: {', '.join(loaded) or 'none'})")
        loaded[module.NAME] = module
    return loaded


def run_splits(run_split: Callable[[SplitInputs], SplitResult], inputs: Mapping[int, SplitInputs],
               outputs: Mapping[int, tuple], *, label: str = "") -> dict[int, SplitResult]:
    """Run ``run_split`` on each split of ``inputs`` and write its files as soon as it is done.

    Rows lacking ``dataset`` and ``split`` get them, first. Files are written atomically, so an
    interrupted job leaves no half-written split.

    Parameters
    ----------
    run_split : callable
        ``SplitInputs -> SplitResult`` (an experiment's ``run_split`` with its settings bound).
    inputs : mapping of int to SplitInputs
        By split (:func:`split_inputs`).
    outputs : mapping of int to tuple
        By split: ``(rows_csv, curves_npz)`` (``curves_npz`` may be None).
    label : str, default ""
        What the log lines name.

    Returns
    -------
    dict
        ``split -> SplitResult``.
    """
    results = {}
    for split in sorted(inputs):
        start = time.perf_counter()
        result = run_split(inputs[split])
        for column, value in (("split", split), ("dataset", inputs[split].dataset)):
            if column not in result.rows.columns:
                result.rows.insert(0, column, value)
        rows_path, curves_path = outputs[split]
        write_csv(result.rows, rows_path)
        if curves_path is not None:
            save_npz(curves_path, **result.curves)
        log.info("%s split %d: %d rows in %.1f s", label, split, len(result.rows), time.perf_counter() - start)
        results[split] = result
    return results


def run_dataset(experiment, config: dict, dataset: str, task: str, data_path, splits_path, split_files: Mapping,
                staged: Mapping | None = None) -> dict[int, SplitResult]:
    """Every split of ``split_files`` (``split -> rows_csv``) of one dataset through ``experiment``.

    The generic rule ``experiment_dataset`` for a user's experiment: settings and data read once,
    then :func:`run_splits`.

    Parameters
    ----------
    experiment : module or object
        A module of the contract (:func:`check_experiment`).
    config : dict
        The whole pipeline config (its ``seed``, and what ``experiment.settings`` reads).
    dataset : str
        The dataset's name.
    task : str
        ``"classification"`` or ``"ordinal"``.
    data_path, splits_path : path-like
        The prepared data and its splits file.
    split_files : mapping of int to path-like
        ``split -> rows_csv``: the splits run and where their rows go.
    staged : mapping, optional
        ``split -> {role: path}`` (:attr:`SplitInputs.staged`).

    Returns
    -------
    dict of int to SplitResult
        By split.
    """
    settings = experiment.settings(config)
    inputs = split_inputs(dataset, task, int(config.get("seed", 0)), data_path, splits_path, split_files, staged)
    return run_splits(lambda i: experiment.run_split(i, settings), inputs,
                      {k: (path, None) for k, path in split_files.items()}, label=f"{experiment.NAME} {dataset}")


def aggregate_files(experiment, config: dict, rows_paths, out_dir) -> dict[str, pd.DataFrame]:
    """Every split's rows to the experiment's tables, one ``<table>.csv`` (with its index) each in ``out_dir``.

    Parameters
    ----------
    experiment : module or object
        A module of the contract (:func:`check_experiment`).
    config : dict
        The whole pipeline config (what ``experiment.settings`` reads).
    rows_paths : iterable of path-like
        Every split's rows (:func:`run_dataset`'s CSV files).
    out_dir : path-like
        The tables' folder, made if missing.

    Returns
    -------
    dict of str to pandas.DataFrame
        The tables by name, as written.

    Raises
    ------
    ValueError
        A table name that is not a file name (the experiment's ``aggregate`` is named).
    """
    rows = pd.concat([pd.read_csv(path) for path in rows_paths], ignore_index=True)
    tables = experiment.aggregate(rows, experiment.settings(config))
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    for name, table in tables.items():
        if not isinstance(name, str) or not name.isidentifier():
            raise ValueError(f"experiment {experiment.NAME}: aggregate returned table name {name!r}; "
                             "use Python identifiers (they become file names)")
        with atomic_path(out_dir / f"{name}.csv") as tmp:
            table.to_csv(tmp)
    return tables
