"""The experiment contract's types, its check, and the split loop every experiment shares."""

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

#: The names a module of the contract defines (see the package docstring).
CONTRACT = ("NAME", "settings", "run_split", "aggregate")


@dataclass
class SplitInputs:
    """What one split of one dataset starts from: the pipeline's staged files, opened on demand.

    Attributes
    ----------
    dataset : str
    split : int
    task : str
        ``"classification"`` or ``"ordinal"``.
    seed : int
        The run's master seed (derive a per-use seed with :func:`rejectopt.splits.derive_seed`).
    data_path, splits_path : path
        ``results/data/{dataset}/data.npz`` and ``splits.npz``.
    staged : dict
        Further staged files by role, e.g. ``{"classifier/lr": path, "scores/lr": path}``:
        what the experiment's rule declares as its inputs.
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
    """One split's tidy rows (one per method and setting) and optional named curves (arrays)."""

    rows: pd.DataFrame
    curves: dict[str, np.ndarray] = field(default_factory=dict)


def split_inputs(dataset: str, task: str, seed: int, data_path, splits_path, splits, staged=None) -> dict[int, SplitInputs]:
    """:class:`SplitInputs` of every split of ``splits`` for one dataset, the data read once for all.

    ``staged`` maps a split to its staged files by role (see :attr:`SplitInputs.staged`).
    """
    data = load_prepared(data_path)
    staged = staged or {}
    return {int(k): SplitInputs(dataset, int(k), task, seed, data_path, splits_path, dict(staged.get(k, {})), _data=data)
            for k in splits}


def check_experiment(experiment: Any, origin: str = "") -> Any:
    """``experiment`` if it has the contract's names, a ``TypeError`` naming what is missing otherwise."""
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

    Modules are looked up as the config's ``plugins`` are: by file path in ``search_dir`` (the
    working directory), else on ``sys.path`` (:func:`rejectopt._registry.import_user_module`;
    the folder is not put on ``sys.path``, where a stray ``sklearn.py`` would shadow scikit-learn).

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

    ``outputs`` maps a split to ``(rows_csv, curves_npz)`` (``curves_npz`` may be None). Rows
    without the columns ``dataset`` and ``split`` get them, first. Each
    file is written atomically, so an interrupted job leaves no half-written split behind, and
    the data are read once for all splits when the inputs share them.

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

    What the generic rule ``experiment_dataset`` runs for a user's experiment: the settings read
    from the config once, the data once, then :func:`run_splits`.
    """
    settings = experiment.settings(config)
    inputs = split_inputs(dataset, task, int(config.get("seed", 0)), data_path, splits_path, split_files, staged)
    return run_splits(lambda i: experiment.run_split(i, settings), inputs,
                      {k: (path, None) for k, path in split_files.items()}, label=f"{experiment.NAME} {dataset}")


def aggregate_files(experiment, config: dict, rows_paths, out_dir) -> dict[str, pd.DataFrame]:
    """Every split's rows to the experiment's tables, one ``<table>.csv`` (with its index) each in ``out_dir``.

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
