"""The experiment contract's types and its check (public, :mod:`rejectopt.pipeline.experiments`), and what
the pipeline runs an experiment with: the split loop every experiment shares, a user's modules
loaded and checked, their rows and tables written."""

from __future__ import annotations

import difflib
import importlib
import logging
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, TypeVar, runtime_checkable

import numpy as np
import pandas as pd

from ..._io import save_csv, save_npz
from ..._registry import ExitAtImport, import_interruption, import_user_module
from ...datasets import load_prepared
from ...splits import load_split
from ..tables import load_split_rows

__all__ = [
    "BUILT_IN",
    "BUILT_IN_MODULES",
    "Experiment",
    "LOSS_SCALE",
    "SplitInputs",
    "SplitResult",
    "aggregate_files",
    "built_in_experiments",
    "check_experiment",
    "load_experiments",
    "rule_config",
    "run_dataset",
    "run_dataset_files",
    "run_splits",
    "split_inputs",
]

log = logging.getLogger(__name__)

#: The classification loss is ``100 [y != h(x)]`` (:func:`rejectopt.metrics.task_loss`): risks read
#: in percent, as in the paper's tables, in every experiment.
LOSS_SCALE = 100.0

#: The built-in experiments' names: a user's experiment may not take them.
BUILT_IN = ("paper", "ood", "double_hinge", "landmarks")

#: Every built-in experiment by ``NAME``: the module that implements :class:`Experiment`. The paper's,
#: OOD's, double hinge's and landmarks' rules predate the generic ones and keep their result paths;
#: guarantees runs through the generic rules.
BUILT_IN_MODULES = {
    "paper": "rejectopt.pipeline.experiments.paper",
    "guarantees": "rejectopt.pipeline.experiments.guarantees",
    "ood": "rejectopt.pipeline.experiments.ood",
    "double_hinge": "rejectopt.pipeline.experiments.double_hinge",
    "landmarks": "rejectopt.pipeline.experiments.landmarks",
}

#: The built-in experiments that keep the contract and are listed under ``experiments:`` like a
#: user's, by ``NAME``: that name is theirs even when they are not listed, or a user's module of the
#: same ``NAME`` would take their rules, their files (``results/experiments/<NAME>/``) and their report.
CONTRACT_BUILT_IN = {"guarantees": BUILT_IN_MODULES["guarantees"]}

#: The names a module of the contract defines (see :mod:`rejectopt.pipeline.experiments`).
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
            raise KeyError(
                f"{self.dataset} split {self.split}: no staged file {role!r} "
                f"(the rule gives: {', '.join(sorted(self.staged)) or 'none'})"
            ) from None

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
        One row per method and setting; the pipeline adds ``dataset`` and ``split`` (a row that
        carries either column must hold this split's value in it).
    curves : dict of str to numpy.ndarray, optional
        Numeric arrays written to the split's ``.npz`` beside its rows (a user's experiment:
        ``results/experiments/<NAME>/<dataset>/split_<k>.npz``), e.g. risk-coverage curves.

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


@runtime_checkable
class Experiment(Protocol):
    """What an experiment provides: a module (or any object) with these four names.

    Every built-in experiment (:data:`BUILT_IN_MODULES`) and a user's is one; a module satisfies
    the protocol by its module-level names, so a type checker reads ``experiment: Experiment =
    my_module`` as a check of the whole contract, and :func:`check_experiment` makes it at run time.

    Parameters
    ----------
    *args, **kwargs
        None: a protocol is not instantiated; a module or an object with the four names is one.

    Examples
    --------
    A built-in experiment's module is one; an object missing a name of the contract is not:

    >>> import types
    >>> from rejectopt.pipeline.experiments import guarantees
    >>> isinstance(guarantees, Experiment)
    True
    >>> isinstance(types.SimpleNamespace(NAME="half", settings=dict), Experiment)
    False
    """

    #: A lower-case identifier: the folder of the results (``results/experiments/<NAME>/``).
    NAME: str

    def settings(self, config: dict) -> dict:
        """The settings read from the whole pipeline config, defaults filled in, values checked."""
        ...

    def run_split(self, inputs: SplitInputs, settings: dict) -> SplitResult:
        """One split of one dataset: tidy rows and optional curves."""
        ...

    def aggregate(self, rows: pd.DataFrame, settings: dict) -> dict[str, pd.DataFrame]:
        """Every split's rows to the experiment's tables, as numbers."""
        ...


_Result = TypeVar("_Result", bound=SplitResult)


def split_inputs(
    dataset: str, task: str, seed: int, data_path, splits_path, splits, staged=None
) -> dict[int, SplitInputs]:
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
    return {
        int(k): SplitInputs(
            dataset, int(k), task, seed, data_path, splits_path, dict(staged.get(k, {})), _data=data
        )
        for k in splits
    }


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
    >>> half = types.SimpleNamespace(NAME="mine", settings=dict)
    >>> check_experiment(half, origin="my_experiment")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    TypeError: experiment my_experiment: missing run_split, aggregate of the contract (NAME, ...)
    """
    where = origin or getattr(experiment, "__name__", repr(experiment))
    missing = [name for name in CONTRACT if not hasattr(experiment, name)]
    if missing:
        raise TypeError(
            f"experiment {where}: missing {', '.join(missing)} of the contract "
            f"({', '.join(CONTRACT)}; see rejectopt.pipeline.experiments)"
        )
    name = experiment.NAME
    if not isinstance(name, str) or not name.isidentifier() or name != name.lower():
        raise TypeError(f"experiment {where}: NAME {name!r} is not a lower-case Python identifier")
    for attr in CONTRACT[1:]:
        if not callable(getattr(experiment, attr)):
            raise TypeError(f"experiment {where}: {attr} is not callable")
    return experiment


def built_in_experiments() -> dict[str, Experiment]:
    """Every built-in experiment, imported and checked against the contract: ``NAME -> module``.

    Returns
    -------
    dict of str to Experiment
        In the order of :data:`BUILT_IN_MODULES`.
    """
    return {
        name: check_experiment(importlib.import_module(path), origin=path)
        for name, path in BUILT_IN_MODULES.items()
    }


def load_experiments(
    paths, search_dir=".", config: Mapping | None = None, *, built_in: bool = False
) -> dict[str, Any]:
    """Import a user's experiment modules (config key ``experiments``) and check them: ``NAME -> module``.

    Looked up as ``plugins`` are (:func:`rejectopt._registry.import_user_module`): by file in
    ``search_dir``, else on ``sys.path`` (the folder is not put on it: a stray ``sklearn.py`` would
    shadow scikit-learn). With ``config`` (the run's plan, :func:`rejectopt.pipeline.config.plan_run`),
    also what would otherwise surface only after every training job: each key of
    ``experiment_settings`` must be the ``NAME`` of a loaded experiment, and each experiment's
    ``settings(config)`` must return a dict without raising.

    Parameters
    ----------
    paths : list of str or None
        Module names (``my_experiment``, ``package.module``).
    search_dir : path-like, default "."
        Where a module's file is looked up first.
    config : mapping, optional
        The whole pipeline config: its ``experiment_settings`` and each ``settings(config)`` are
        checked.
    built_in : bool, default False
        Also every built-in experiment (:func:`built_in_experiments`), first: the registry of all
        the run's experiments. Their settings are not checked here (each reads its own block).

    Returns
    -------
    dict of str to module
        By each module's ``NAME``.

    Raises
    ------
    ImportError
        A module that cannot be imported, that calls ``sys.exit`` or ``os._exit`` while imported,
        or whose import is interrupted (``KeyboardInterrupt``): one line naming the module (and
        its own error).
    TypeError
        A module that lacks a name of the contract, whose ``NAME`` is taken (by a built-in
        experiment, listed or not, or by a module listed before it: both modules are named), or
        whose ``settings`` returns something else than a dict.
    ValueError
        A key of ``experiment_settings`` that names no loaded experiment (the closest ``NAME`` is
        suggested), or a ``settings(config)`` that raises (its error is named).
    """
    loaded: dict[str, Any] = {}
    for path in paths or []:
        if not isinstance(path, str) or not all(part.isidentifier() for part in path.split(".")):
            raise ImportError(
                f"config experiments: {path!r} is not a module name (e.g. my_experiment or package.module)"
            )
        try:
            module = import_user_module(path, search_dir)
        # one line naming the module, not a traceback or a silent exit
        except (ExitAtImport, KeyboardInterrupt) as err:
            raise ImportError(f"config experiments: {import_interruption(path, err)}") from None
        # the user's module's own error, reported with its name
        except (Exception, SystemExit) as err:
            # SystemExit too: a module calling sys.exit() while imported would otherwise end the
            # planning process (Snakemake itself) with no job, no output and no word of which module did it
            moved = ""
            # the built-in experiments' home before 0.3.0
            if path.startswith("rejectopt.experiments."):
                new_path = "rejectopt.pipeline." + path[len("rejectopt.") :]
                moved = (
                    "; the built-in experiments moved to rejectopt.pipeline.experiments: "
                    f"write {new_path!r}"
                )
            raise ImportError(
                f"config experiments: module {path!r} failed to import: "
                f"{type(err).__name__}: {err}{moved}"
            ) from err
        check_experiment(module, origin=f"{path!r}")
        owner = CONTRACT_BUILT_IN.get(module.NAME)
        if owner is not None and module.__name__ != owner:
            raise TypeError(
                f"experiment {path!r} (module {module.__name__!r}, {getattr(module, '__file__', '?')}): "
                f"NAME {module.NAME!r} is the built-in experiment's of module {owner!r}, listed or not; "
                "rename your experiment's NAME"
            )
        if module.NAME in loaded:
            raise TypeError(
                f"experiment {path!r}: NAME {module.NAME!r} is taken by module "
                f"{loaded[module.NAME].__name__!r}, listed before it; give one of them another NAME"
            )
        if module.NAME in BUILT_IN:
            raise TypeError(
                f"experiment {path!r}: NAME {module.NAME!r} is taken "
                f"(built in: {', '.join(BUILT_IN)}; loaded: {', '.join(loaded) or 'none'})"
            )
        loaded[module.NAME] = module
    if config is not None:
        _check_settings(loaded, config)
    return {**built_in_experiments(), **loaded} if built_in else loaded


def _check_settings(loaded: Mapping[str, Any], config: Mapping) -> None:
    """Every key of ``experiment_settings`` names a loaded experiment; every ``settings(config)`` works."""
    for key in config.get("experiment_settings") or {}:
        if key in loaded:
            continue
        if key in BUILT_IN:
            block = (
                "its top-level keys (C_classifier, scores, ...)"
                if key == "paper"
                else f"its own block {key}:"
            )
            raise ValueError(
                f"config experiment_settings.{key}: {key!r} is a built-in experiment, set by {block}; "
                "experiment_settings holds the settings of your own experiments only"
            )
        close = difflib.get_close_matches(str(key), list(loaded), n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise ValueError(
            f"config experiment_settings: unknown experiment {key!r}{hint}; its keys are the NAMEs of the "
            f"experiments listed under experiments (loaded: {', '.join(loaded) or 'none'})"
        )
    for name, module in loaded.items():
        try:
            chosen = module.settings(config)
        # the user's check of its settings, named before any job
        except (Exception, SystemExit) as err:
            raise ValueError(
                f"experiment {name} (module {module.__name__!r}): settings(config) raised "
                f"{type(err).__name__}: {err}; fix config experiment_settings.{name}"
            ) from err
        if not isinstance(chosen, Mapping):
            raise TypeError(
                f"experiment {name} (module {module.__name__!r}): settings(config) returned "
                f"{_kind(chosen)}, not a dict (the contract: see rejectopt.pipeline.experiments)"
            )


def _kind(value: Any) -> str:
    """What an error says ``value`` is: ``None``, ``a DataFrame``, ``a float`` ..."""
    return "None" if value is None else f"a {type(value).__name__}"


def _check_result(result: Any, name: str, inputs: SplitInputs) -> SplitResult:
    """``result`` of a user's ``run_split`` if it keeps the contract; else an error naming the experiment.

    A NaN cell is kept (it becomes an empty cell of the CSV file) but warned about, naming the
    columns: a metric that could not be computed should be noticed before it is averaged away.
    """
    where = f"experiment {name}: run_split on {inputs.dataset} split {inputs.split}"
    contract = (
        "the contract (see rejectopt.pipeline.experiments) is SplitResult(rows, curves={...}) with rows a pandas "
        "DataFrame, one row per method and setting"
    )
    if not isinstance(result, SplitResult):
        raise TypeError(f"{where} returned {_kind(result)}, not a SplitResult; {contract}")
    if not isinstance(result.rows, pd.DataFrame):
        raise TypeError(
            f"{where} returned SplitResult(rows={_kind(result.rows)}), not a DataFrame; {contract}"
        )
    for column, value in (("dataset", inputs.dataset), ("split", inputs.split)):
        if column in result.rows.columns:
            found = list(dict.fromkeys(result.rows[column].tolist()))
            if any(v != value for v in found):
                raise ValueError(
                    f"{where}: its rows carry their own {column!r} column (values {found[:5]}), which is not "
                    f"{value!r}; drop or rename that column: the pipeline adds {column!r} to every row"
                )
    if not isinstance(result.curves, Mapping):
        raise TypeError(
            f"{where} returned curves={_kind(result.curves)}, not a dict of arrays by name; {contract}"
        )
    for key, array in result.curves.items():
        if not isinstance(key, str) or not key or key in ("path", "provenance"):
            raise TypeError(
                f"{where}: curve name {key!r} is not a non-empty string other than 'path' and "
                "'provenance' (it names an array of the .npz, whose writer takes those two)"
            )
        kind = np.asarray(array).dtype.kind
        if kind not in "biuf":
            raise TypeError(
                f"{where}: curve {key!r} is an array of dtype {np.asarray(array).dtype}, not numbers "
                "(the .npz is read without pickles)"
            )
    missing = result.rows.isna()
    if missing.to_numpy().any():
        columns = [c for c in result.rows.columns if missing[c].any()]
        counts = ", ".join(
            f"{c!r} ({int(missing[c].sum())} of {len(missing)} rows)" for c in columns
        )
        warnings.warn(
            f"{where}: NaN in {counts}; written as empty cells, which aggregate reads back as NaN "
            "(pandas' mean and count skip them)",
            RuntimeWarning,
            stacklevel=2,
        )
    return result


def run_splits(
    run_split: Callable[[SplitInputs], _Result],
    inputs: Mapping[int, SplitInputs],
    outputs: Mapping[int, tuple],
    *,
    label: str = "",
    provenance: Mapping | None = None,
) -> dict[int, _Result]:
    """Run ``run_split`` on each split of ``inputs`` and write its files as soon as it is done.

    Rows lacking ``dataset`` and ``split`` get them, first. Files are written atomically, so an
    interrupted job leaves no half-written split, and with their content record (the rows'
    ``<file>.csv.record``, the curves' in the ``.npz``), so a file edited afterwards is refused
    by its reader. The record also names the split's dataset and number (and ``provenance``):
    a file copied with its record over another split's is refused by a reader that expects its
    own (:func:`rejectopt.pipeline.tables.split_file_role`).

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
    provenance : mapping, optional
        Recorded in every split's files beside its dataset and split (e.g. the experiment's name).

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
        role = {**(provenance or {}), "dataset": inputs[split].dataset, "split": int(split)}
        # with its content record: an edited row is refused when read, a copied one too
        save_csv(result.rows, rows_path, provenance=role)
        if curves_path is not None:
            arrays: dict[str, Any] = dict(result.curves)
            save_npz(curves_path, provenance=role, **arrays)
        log.info(
            "%s split %d: %d rows in %.1f s",
            label,
            split,
            len(result.rows),
            time.perf_counter() - start,
        )
        results[split] = result
    return results


def run_dataset(
    experiment,
    config: dict,
    dataset: str,
    task: str,
    data_path,
    splits_path,
    split_files: Mapping,
    staged: Mapping | None = None,
) -> dict[int, SplitResult]:
    """Every split of ``split_files`` of one dataset through ``experiment``: its rows and its curves.

    The generic rule ``experiment_dataset`` for a user's experiment: settings and data read once,
    then :func:`run_splits`, each split's result checked against the contract first (an error
    names the experiment, the dataset and the split; a NaN cell is warned about).

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
    split_files : mapping of int to path-like or pair
        ``split -> (rows_csv, curves_npz)``: the splits run, where their rows and their curves
        (:attr:`SplitResult.curves`, written even when there are none) go; a lone ``rows_csv``
        puts the curves beside it (``split_<k>.csv`` -> ``split_<k>.npz``).
    staged : mapping, optional
        ``split -> {role: path}`` (:attr:`SplitInputs.staged`).

    Returns
    -------
    dict of int to SplitResult
        By split.

    Raises
    ------
    TypeError
        ``run_split`` returned something else than a :class:`SplitResult` of a DataFrame and
        numeric arrays.
    ValueError
        Rows that carry their own ``dataset`` or ``split`` column with another value.
    """
    settings = experiment.settings(config)
    inputs = split_inputs(
        dataset, task, int(config.get("seed", 0)), data_path, splits_path, split_files, staged
    )
    outputs = {}
    for k, paths in split_files.items():
        rows_path, curves_path = (
            (paths, Path(paths).with_suffix(".npz")) if isinstance(paths, (str, Path)) else paths
        )
        outputs[k] = (rows_path, curves_path)
    return run_splits(
        lambda i: _check_result(experiment.run_split(i, settings), experiment.NAME, i),
        inputs,
        outputs,
        label=f"{experiment.NAME} {dataset}",
        provenance={"experiment": experiment.NAME},
    )


def aggregate_files(
    experiment, config: dict, rows_paths, out_dir, *, expect: Callable | None = None
) -> dict[str, pd.DataFrame]:
    """Every split's rows to the experiment's tables, one ``<table>.csv`` (with its index) each in ``out_dir``.

    Each table is written with its content record (:func:`rejectopt._io.save_csv`), which names
    the experiment and the table, so that the rule reading it (the guarantees report) refuses it
    edited, truncated or copied over another; the CSV's bytes are those of ``table.to_csv``.

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
    expect : callable, optional
        ``path -> mapping``: what the record of each file of ``rows_paths`` must say (the
        pipeline's: the experiment and :func:`rejectopt.pipeline.tables.split_file_role`).

    Returns
    -------
    dict of str to pandas.DataFrame
        The tables by name, as written.

    Raises
    ------
    TypeError
        ``aggregate`` returned something else than a dict of DataFrames (the experiment and the
        contract are named); nothing is written then.
    ValueError
        A table name that is not a file name (the experiment's ``aggregate`` is named).
    rejectopt.exceptions.IntermediateFileError
        A split's rows without their content record, or changed since :func:`run_dataset` wrote
        them (a number edited, a row deleted), or recorded as other than ``expect`` says (another
        dataset's or split's): the file and ``snakemake --forcerun`` are named.
    """
    rows = load_split_rows(rows_paths, expect)
    tables = experiment.aggregate(rows, experiment.settings(config))
    out_dir = Path(out_dir)
    where = f"experiment {experiment.NAME}: aggregate"
    contract = (
        f"the contract (see rejectopt.pipeline.experiments) is a dict of pandas DataFrames by table name, e.g. "
        f"{{'risk': table}}; nothing was written to {out_dir}"
    )
    # every table checked before any file is written: a refused result leaves the folder as it was
    if not isinstance(tables, Mapping):
        raise TypeError(f"{where} returned {_kind(tables)}, not a dict of tables; {contract}")
    for name, table in tables.items():
        if not isinstance(name, str) or not name.isidentifier():
            raise ValueError(
                f"{where} returned table name {name!r}; "
                "use Python identifiers (they become file names)"
            )
        if not isinstance(table, pd.DataFrame):
            raise TypeError(
                f"{where} returned table {name!r} as {_kind(table)}, not a DataFrame; {contract}"
            )
    out_dir.mkdir(parents=True, exist_ok=True)
    for name, table in tables.items():
        role = {"experiment": experiment.NAME, "table": name}
        save_csv(table, out_dir / f"{name}.csv", provenance=role, index=True)
    return dict(tables)


def rule_config(name: str, block: Mapping | None, **keys: Any) -> dict:
    """The pipeline config a built-in experiment's rule params stand for: ``{name: block, **keys}``.

    A rule passes the experiment's block and the few top-level keys it reads as params (so that a
    change elsewhere in the config does not rerun it); a key given as None is left out, which
    leaves it to the experiment's default.

    Examples
    --------
    >>> rule_config("ood", None, C_score=[1.0], sele_chunk_size=None)
    {'ood': None, 'C_score': [1.0]}
    """
    return {name: block, **{key: value for key, value in keys.items() if value is not None}}


def run_dataset_files(
    name: str,
    run_split: Callable[[SplitInputs], _Result],
    data_path,
    splits_path,
    split_files: Mapping[int, Sequence],
    *,
    dataset: str,
    seed: int = 0,
    staged: Mapping | None = None,
) -> dict[int, _Result]:
    """A built-in experiment's rule: ``run_split`` on every split of ``split_files`` of one dataset.

    The data are read once; each split's rows and curves are written atomically when it is done
    (:func:`run_splits`), so they depend on that split alone.

    Parameters
    ----------
    name : str
        The experiment's ``NAME`` (the log lines').
    run_split : callable
        ``SplitInputs -> SplitResult``: the experiment's ``run_split`` with its settings bound.
    data_path, splits_path : path-like or None
        The prepared data and its splits file; None for a dataset the job builds itself in
        ``run_split`` (double hinge's breast cancer).
    split_files : mapping of int to sequence
        ``split -> (rows_csv, curves_npz, ...)``: the first two are written here, the rest are
        ``run_split``'s own.
    dataset : str
        The dataset's name.
    seed : int, default 0
        The run's master seed.
    staged : mapping, optional
        ``split -> {role: path}`` (:attr:`SplitInputs.staged`).

    Returns
    -------
    dict of int to SplitResult
        By split, as written.
    """
    if data_path is None:
        staged_of = {k: dict(roles) for k, roles in (staged or {}).items()}
        task, master = "classification", int(seed)
        inputs = {
            int(k): SplitInputs(dataset, int(k), task, master, None, None, staged_of.get(k, {}))
            for k in split_files
        }
    else:
        inputs = split_inputs(
            dataset, "classification", int(seed), data_path, splits_path, split_files, staged
        )
    outputs = {int(k): (paths[0], paths[1]) for k, paths in split_files.items()}
    return run_splits(
        run_split, inputs, outputs, label=f"{name} {dataset}", provenance={"experiment": name}
    )
