"""Internal: the pipeline's configuration (plugins, validation with one-line errors, the run's
plan); not part of the public API.

Used by ``workflow/rules/common.smk`` before any job runs, and usable without
Snakemake: ``plan_run(yaml.safe_load(open("config.yaml")))`` tells what a run
would compute. Method names are never listed here: they are read off the
registries of :mod:`rejectopt.classifiers` and :mod:`rejectopt.scores`, which
plugins extend.
"""

from __future__ import annotations

import difflib
import inspect
import logging
import math
import os
import platform
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from .._checks import check_ratios
from .._registry import ExitAtImport, import_interruption, import_user_module
from ..classifiers import CLASSIFIERS, get_classifier
from ..classifiers._registry import TASKS
from ..datasets import REGISTRY as DATASET_REGISTRY
from ..datasets._custom import custom_dataset, peek_custom
from ..datasets._prepare import available_in_mirror
from ..metrics import aurc
from ..scores import SCORES
from .tables import check_summary_metrics

__all__ = [
    "C_MAX",
    "ConfigError",
    "PluginError",
    "RunPlan",
    "blas_environment",
    "blas_kernels_run",
    "coerce_numbers",
    "load_plugins",
    "plan_run",
    "plugins_of",
    "validate_config",
]


class ConfigError(ValueError):
    """A configuration that cannot run; the message names the key and the fix.

    A :class:`ValueError`, raised before any job runs by :func:`validate_config` and
    :func:`plan_run`.
    """


class PluginError(ConfigError):
    """A plugin module that cannot be imported or registers something invalid.

    A :class:`ConfigError` raised by :func:`load_plugins`; the message names the module.
    """


#: The OpenBLAS kernels every job uses on an x86-64 CPU with AVX2 (``OPENBLAS_CORETYPE``).
BLAS_CORETYPE = "Haswell"

#: A product the jobs make, run with the kernels to pin before they are pinned: scikit-learn's
#: Hessian of the logistic loss, ``X.T @ (w * X)``, at one thread as a one-thread job runs it. The
#: OpenBLAS 0.3.34 of numpy 2.5.5's wheels dies in it (SIGSEGV) with the Haswell kernels on an
#: AVX-512 CPU, where numpy 2.4.6's OpenBLAS 0.3.31 runs it.
_KERNEL_PROBE = (
    "import numpy as np; x = np.ones((2000, 36)); w = np.ones(2000); (x.T @ (x * w[:, None])).sum()"
)


def blas_environment(environ=None, cpuinfo="/proc/cpuinfo", probe=True) -> dict[str, str]:
    r"""The environment variables that make the jobs' numbers the same on every x86-64 CPU with AVX2.

    OpenBLAS picks its kernels by CPU: the AVX-512 kernels sum in another order than the AVX2
    ones, a solver's iterates follow, and on the CI configuration SVOR then flips one abalone Tst
    prediction and SELE's AuRC moves in the fourth digit. Pinning the AVX2 (``Haswell``) kernels
    where the CPU has AVX2 gives the same bytes on an AVX2 and an AVX-512 machine. A value the
    user set wins; elsewhere (another architecture, no ``/proc/cpuinfo``) nothing is pinned.

    Before pinning, a child process runs a product the jobs make with those kernels; where it dies
    (an OpenBLAS release whose AVX2 kernels crash on this CPU), nothing is pinned and the
    ``rejectopt`` logger warns that the jobs' last bits may then differ from another machine's.

    .. versionchanged:: 0.5.2
       The kernels run once in a child process before they are pinned (``probe``): an OpenBLAS
       whose AVX2 kernels crash on the CPU had killed every job that multiplies matrices.

    Parameters
    ----------
    environ : mapping or None, default=None
        The environment the jobs inherit; None reads :data:`os.environ`. An
        ``OPENBLAS_CORETYPE`` set in it is kept (nothing is returned).
    cpuinfo : path-like, default="/proc/cpuinfo"
        File whose words include ``avx2`` when the CPU has AVX2 (Linux's format); a file
        that cannot be read pins nothing.
    probe : bool, default=True
        Whether to run the kernels once in a child process (a Python importing numpy) before pinning them.

        .. versionadded:: 0.5.2

    Returns
    -------
    dict of str to str
        ``{"OPENBLAS_CORETYPE": "Haswell"}`` on an x86-64 CPU with AVX2 whose environment does
        not set the variable and whose OpenBLAS runs those kernels, else empty. The caller adds it
        to the jobs' environment.
    """
    environ = os.environ if environ is None else environ
    if "OPENBLAS_CORETYPE" in environ or platform.machine().lower() not in ("x86_64", "amd64"):
        return {}
    try:
        flags = Path(cpuinfo).read_text()
    except OSError:
        return {}
    if "avx2" not in flags.split():
        return {}
    pinned = {"OPENBLAS_CORETYPE": BLAS_CORETYPE}
    if probe and not blas_kernels_run(BLAS_CORETYPE, environ):
        logging.getLogger("rejectopt").warning(
            "numpy's OpenBLAS crashes with the %s kernels on this CPU (a matrix product at one thread, as "
            "the jobs run it): they are not pinned, so the jobs use the kernels OpenBLAS picks for this CPU "
            "and a fit's last bits may differ from a run on another machine. The releases of the lock "
            "(requirements/pipeline.txt, README line 1) run them",
            BLAS_CORETYPE,
        )
        return {}
    return pinned


def blas_kernels_run(coretype, environ=None) -> bool:
    """Whether numpy's OpenBLAS runs a product the jobs make with ``coretype``'s kernels.

    The product runs in a child process of this Python, at one thread: a kernel that crashes
    takes its process with it.

    Parameters
    ----------
    coretype : str
        An ``OPENBLAS_CORETYPE`` value, such as ``"Haswell"``.
    environ : mapping or None, default=None
        The environment the child starts from; None reads :data:`os.environ`.

    Returns
    -------
    bool
        True when the child exits normally.
    """
    environ = dict(os.environ if environ is None else environ)
    environ.update(OPENBLAS_CORETYPE=coretype, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    child = subprocess.run(
        [sys.executable, "-c", _KERNEL_PROBE], env=environ, capture_output=True, timeout=300
    )
    return child.returncode == 0


def load_plugins(modules, search_dir=".") -> list:
    r"""Import the ``plugins:`` modules so that their scores / classifiers register.

    A module is read from its file in ``search_dir`` (the working directory), else from
    ``PYTHONPATH`` (:func:`rejectopt._registry.import_user_module`); the folder is not put on
    ``sys.path``, so a stray file there named like an installed module (``sklearn.py``) changes
    nothing. A module that fails to import, shadows an installed one, registers a name that is
    taken, whose class lacks ``fit`` / ``predict``, or that calls ``sys.exit`` or ``os._exit`` or is
    interrupted while imported raises one :class:`PluginError` naming the module.

    Parameters
    ----------
    modules : list of str or None
        Module names (``my_scores`` or ``package.module``), the config's ``plugins:``; None
        or empty loads nothing.
    search_dir : path-like, default="."
        Folder searched for ``<module>.py`` (or a package ``<module>/__init__.py``) before
        ``PYTHONPATH``.

    Returns
    -------
    list of module
        The imported modules, in the order of ``modules``. What they register is now in
        :data:`rejectopt.scores.SCORES` / :data:`rejectopt.classifiers.CLASSIFIERS`.

    Raises
    ------
    PluginError
        A name that is not a module name, a module not found, or one that fails to import
        (its own error, a taken name, a class without ``fit`` / ``predict``).
    """
    search_dir = str(Path(search_dir).resolve())
    loaded = []
    for name in modules or []:
        if not isinstance(name, str) or not all(part.isidentifier() for part in name.split(".")):
            raise PluginError(
                f"config plugins: {name!r} is not a module name (e.g. my_scores or package.module)"
            )
        try:
            loaded.append(import_user_module(name, search_dir))
        except ModuleNotFoundError as err:
            if err.name and name.startswith(err.name):
                raise PluginError(
                    f"config plugins: module {name!r} not found; put {name.replace('.', '/')}.py in the working "
                    f"directory ({search_dir}) or on PYTHONPATH"
                ) from None
            raise PluginError(f"config plugins: module {name!r} failed to import: {err}") from None
        except (
            ExitAtImport,
            KeyboardInterrupt,
        ) as err:  # one line naming the module, not a traceback or a silent exit
            raise PluginError(f"config plugins: {import_interruption(name, err)}") from None
        except (
            Exception,
            SystemExit,
        ) as err:  # a plugin's own error, reported with its module's name
            # SystemExit too: a plugin calling sys.exit() while imported would otherwise end the
            # planning process (Snakemake itself) without a word on which module did it
            raise PluginError(
                f"config plugins: module {name!r} failed to import: {type(err).__name__}: {err}"
            ) from None
    return loaded


def plugins_of(modules, methods) -> list:
    """The ``plugins:`` modules that define one of ``methods`` (classifiers, scores), in config order.

    A job loads the plugins of the methods it runs, and gets them as a param: a plugin added for
    one classifier's scores leaves the other classifiers' jobs (their params) as they were. A
    user's method whose class lives in no module of ``modules`` (a plugin registering a class it
    imports) cannot be traced to its plugin: then every module is returned, as all were loaded
    before.

    Parameters
    ----------
    modules : list of str or None
        The config's ``plugins:``.
    methods : iterable of str
        Registered classifier and score names (:func:`load_plugins` has run).

    Returns
    -------
    list of str
        A sub-list of ``modules``.
    """
    modules = list(modules or [])
    needed = set()
    for name in methods:
        registry = CLASSIFIERS if name in CLASSIFIERS else SCORES if name in SCORES else None
        if registry is None:
            continue
        source = registry.get(name).source  # the class, or its import path "module:Class"
        home = source.split(":")[0] if isinstance(source, str) else source.__module__
        if home.startswith("rejectopt."):
            continue
        if home not in modules:
            return modules
        needed.add(home)
    return [m for m in modules if m in needed]


_NUMBER = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")

#: Top-level keys whose value is a folder or URL, or null. Snakemake's ``--config key=null`` gives
#: the string ``"null"``: these spellings of it become None (a folder so named is ``./null``).
NULLABLE_PATHS = ("data_mirror", "download_base", "faces_mirror")
_NULL_SPELLINGS = ("null", "none", "~", "")


def coerce_numbers(value, _key=None):
    """Numbers and booleans given as text on the command line become numbers and booleans.

    Snakemake parses the items of a command-line list and the values of a
    command-line mapping as strings (``--config C_classifier='[1,10]'``,
    ``landmarks='{enabled: false}'``); a string that is exactly a decimal number
    is converted (``"10"`` -> 10, ``"-1"`` -> -1, ``"0.3"`` -> 0.3) and ``"true"``
    / ``"false"`` become booleans, so the schema then checks the value (and
    names it). Top-level strings and ``custom_datasets`` (paths, column names)
    are left alone, but for the folders and URLs that may be null
    (:data:`NULLABLE_PATHS`): there ``"null"``, ``"none"``, ``"~"`` and ``""`` (any case) become
    None, as ``--config data_mirror=null`` means (YAML's null; a folder of that name is
    written ``./null``).

    .. versionchanged:: 0.4.0
       ``"null"``, ``"none"``, ``"~"`` and ``""`` mean None for the folders and URLs that may be
       null; they were taken for a folder of that name.

    Parameters
    ----------
    value : object
        The config (a dict), or a part of it.
    _key : str or None, default=None
        The key ``value`` sits under, set by the recursion (None = ``value`` is the whole
        config); leave it unset.

    Returns
    -------
    object
        A new dict / list with the numbers and booleans converted; any other ``value``
        unchanged.
    """
    if isinstance(value, dict) and _key is None:
        return {
            k: None
            if k in NULLABLE_PATHS and _is_null(v)
            else v
            if k == "custom_datasets"
            else coerce_numbers(v, k)
            for k, v in value.items()
        }
    if isinstance(value, dict):
        return {
            k: _to_scalar(v) if isinstance(v, str) else coerce_numbers(v, k)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_to_scalar(v) if isinstance(v, str) else coerce_numbers(v, _key) for v in value]
    return value


def _is_null(value) -> bool:
    return isinstance(value, str) and value.strip().lower() in _NULL_SPELLINGS


def _to_number(text: str):
    if not _NUMBER.match(text.strip()):
        return text
    number = float(text)
    return int(number) if number.is_integer() and re.match(r"^[+-]?\d+$", text.strip()) else number


def _to_scalar(text: str):
    if text.strip().lower() in ("true", "false"):
        return text.strip().lower() == "true"
    return _to_number(text)


def validate_config(config: dict, schema: dict) -> None:
    """Check ``config`` against the JSON schema; one :class:`ConfigError` line per problem.

    Unlike a raw jsonschema message (which prints the whole schema), the error
    names the offending key path, its value and, for a misspelt key, the
    allowed keys closest to it.

    Parameters
    ----------
    config : dict
        The configuration (``config.yaml`` as loaded, after :func:`coerce_numbers`).
    schema : dict
        A JSON schema (draft 7): ``workflow/schemas/config.schema.yaml`` as loaded.

    Returns
    -------
    None
        The config is valid when the call returns.

    Raises
    ------
    ConfigError
        One line per problem (at most three, joined by ``"; "``).
    """
    import jsonschema  # jsonschema: only the pipeline's config check needs it (a pipeline extra)

    validator = jsonschema.Draft7Validator(schema)
    errors = sorted(
        validator.iter_errors(config), key=lambda e: (len(e.path), list(map(str, e.path)))
    )
    if errors:
        raise ConfigError("; ".join(_one_line(e) for e in errors[:3]))


def _one_line(error) -> str:
    where = "config " + (".".join(map(str, error.path)) or "(top level)")
    if error.validator == "additionalProperties":
        allowed = sorted(error.schema.get("properties", {}))
        extra = sorted(set(error.instance) - set(allowed))
        hints = []
        for key in extra:
            close = difflib.get_close_matches(str(key), allowed, n=3)
            hints.append(
                f"unknown key {key!r}"
                + (f" (did you mean {' or '.join(map(repr, close))}?)" if close else "")
            )
        return f"{where}: {'; '.join(hints)}; allowed keys: {', '.join(allowed)}"
    if (
        error.validator == "contains" and "const" in error.validator_value
    ):  # figure_formats must list png
        return (
            f"{where}: {error.instance!r} must list {error.validator_value['const']!r}"
            f" ({error.schema.get('description', 'required by the schema')})"
        )
    if error.validator in (
        "minimum",
        "exclusiveMinimum",
        "maximum",
        "exclusiveMaximum",
        "type",
        "enum",
    ):
        return f"{where}: {error.instance!r} is invalid: {error.message.split(chr(10))[0]}"
    return f"{where}: {error.message.splitlines()[0][:300]}"


@dataclass
class RunPlan:
    """What one run computes: datasets (with their task), classifiers per dataset, scores per classifier.

    Parameters
    ----------
    datasets, skipped : list of str
        The attributes below.
    task : dict
        The attribute below.
    custom, n_examples, classifiers, scores, n_classes, code_files : dict, default={}
        The attributes below.

    Attributes
    ----------
    datasets : list of str
        Datasets this run covers (configured ones the mirror holds, plus custom ones).
    skipped : list of str
        Configured paper datasets the mirror does not hold.
    task : dict
        Dataset -> task.
    custom : dict
        Custom dataset name -> :class:`~rejectopt.datasets.CustomDataset`.
    classifiers : dict
        Task -> classifier names (config ``classifiers``).
    scores : dict
        Classifier -> learned score names (config ``scores``).
    n_examples : dict
        Dataset -> number of examples (sizes the jobs' resources): the registry's, an NPZ's
        array header, or a CSV's estimate from its size (planning parses no data file).
    n_classes : dict
        Dataset -> number of classes: the registry's, or what ``custom_datasets.<name>.n_classes``
        declares (None when it declares none).
    code_files : dict
        Method (classifier or score) -> the file of a user's class behind it (a plugin's); the
        rules using the method take the file as an input, so that an edited plugin reruns them.
    """

    datasets: list
    skipped: list
    task: dict
    custom: dict = field(default_factory=dict)
    n_examples: dict = field(default_factory=dict)
    classifiers: dict = field(default_factory=dict)
    scores: dict = field(default_factory=dict)
    n_classes: dict = field(default_factory=dict)
    code_files: dict = field(default_factory=dict)

    def classifiers_of(self, dataset: str) -> list:
        return list(self.classifiers.get(self.task[dataset], []))

    def scores_of(self, classifier: str) -> list:
        return list(self.scores.get(classifier, []))

    def classifiers_run(self) -> list:
        """Classifiers trained on at least one dataset, in registry order."""
        used = {c for d in self.datasets for c in self.classifiers_of(d)}
        return [c for c in CLASSIFIERS if c in used]

    def scores_run(self) -> list:
        """Learned scores of this run, in registry order."""
        used = {s for c in self.classifiers_run() for s in self.scores_of(c)}
        return [s for s in SCORES if s in used]

    def code_files_of(self, classifier: str) -> list:
        """The files of the users' classes behind ``classifier`` and the scores it learns (sorted)."""
        methods = [classifier, *self.scores_of(classifier)]
        return sorted({self.code_files[m] for m in methods if m in self.code_files})


def _check_methods(config: dict) -> None:
    classifiers = config.get("classifiers", {})
    for task, names in classifiers.items():
        for name in names:
            if name not in CLASSIFIERS:
                raise ConfigError(f"config classifiers.{task}: {CLASSIFIERS.unknown_message(name)}")
            info = get_classifier(name)
            if info.task != task:
                raise ConfigError(
                    f"config classifiers.{task}: classifier {name!r} is for the {info.task} task"
                )
    for classifier, names in config.get("scores", {}).items():
        if classifier not in CLASSIFIERS:
            raise ConfigError(f"config scores: {CLASSIFIERS.unknown_message(classifier)}")
        info = get_classifier(classifier)
        for name in names:
            if name not in SCORES:
                raise ConfigError(
                    f"config scores.{classifier}: {SCORES.unknown_message(name)} "
                    "(a score of your own: list its module under plugins)"
                )
            score = SCORES.get(name)
            if score.baseline:
                raise ConfigError(
                    f"config scores.{classifier}: {name!r} is a baseline read off a classifier's "
                    "outputs, always reported; list only learned scores here"
                )
            if score.applies_to is not None and classifier not in score.applies_to:
                raise ConfigError(
                    f"config scores.{classifier}: score {name!r} applies to {', '.join(score.applies_to)} only"
                )
            if score.needs_posteriors and not info.posteriors:
                with_posteriors = [c for c, i in CLASSIFIERS.items() if i.posteriors]
                raise ConfigError(
                    f"config scores.{classifier}: score {name!r} learns from class posteriors, which classifier "
                    f"{classifier!r} does not give (classifiers with posteriors: {', '.join(with_posteriors)})"
                )


#: Largest value of a C grid (``C_classifier``, ``C_score``, ``double_hinge.C_grid``): a thousand
#: times the paper's largest C. Beyond it the data term ``C * sum(loss)`` swamps the regulariser
#: ``||w||^2 / 2`` below the solvers' tolerances (and 1e308 overflows the objective to inf).
C_MAX = 1e6


def _check_C_grids(config: dict) -> None:
    """Every C is finite and within ``[0, C_MAX]``; a classifier's C positive (at C = 0 its data
    would weigh nothing)."""
    grids = {
        "C_classifier": (config.get("C_classifier"), False),
        "C_score": (config.get("C_score"), True),
        "double_hinge.C_grid": ((config.get("double_hinge") or {}).get("C_grid"), False),
    }
    for key, (grid, zero_ok) in grids.items():
        if grid is None:
            continue
        if not isinstance(grid, list) or not grid:
            raise ConfigError(f"config {key}: {grid!r} is not a non-empty list of C values")
        allowed = f"[0, {C_MAX:g}] (0 = unregularised)" if zero_ok else f"(0, {C_MAX:g}]"
        for i, C in enumerate(grid):
            number = isinstance(C, (int, float)) and not isinstance(C, bool) and math.isfinite(C)
            if not (number and (0 <= C if zero_ok else 0 < C) and C <= C_MAX):
                raise ConfigError(
                    f"config {key}[{i}]: C = {C!r} is invalid; every C must be a finite number in {allowed}"
                )


def _check_classifier_lists(config: dict, task: dict) -> None:
    """Each task of the run's datasets has a classifier: an empty list would end the run with no table."""
    classifiers = config.get("classifiers") or {}
    for name in TASKS:
        datasets = [d for d, t in task.items() if t == name]
        if datasets and not classifiers.get(name):
            offered = [c for c, info in CLASSIFIERS.items() if info.task == name]
            raise ConfigError(
                f"config classifiers.{name}: no classifier, but the run's datasets {', '.join(datasets)} are {name} "
                f"datasets; list at least one ({', '.join(offered)}) or drop them from datasets"
            )


def _check_class_counts(config: dict, run: list, custom: dict, n_classes: dict) -> None:
    """A custom dataset in an experiment that needs its class count declares it; the double hinge's are binary.

    The registered datasets' counts are checked by the experiments' own ``covered_datasets``
    (and the OOD split by ``held_out_classes``) from :attr:`RunPlan.n_classes`.
    """
    for block, why in (("ood", "holds out its last classes as OOD"), ("double_hinge", "is binary")):
        for name in (config.get(block) or {}).get("datasets") or []:
            if name not in custom or name not in run:
                continue
            if custom[name].task != "classification":
                raise ConfigError(
                    f"config {block}.datasets: {name!r} is an {custom[name].task} dataset "
                    f"(custom_datasets.{name}.task); the experiment {why}"
                )
            if n_classes[name] is None:
                raise ConfigError(
                    f"config custom_datasets.{name}.n_classes: declare the number of classes of {name!r}, listed "
                    f"under {block}.datasets (the experiment {why}); it is checked against the file when prepared"
                )
            if block == "double_hinge" and n_classes[name] != 2:
                raise ConfigError(
                    f"config double_hinge.datasets: {name!r} has {n_classes[name]} classes "
                    f"(custom_datasets.{name}.n_classes); the double-hinge SVM is binary"
                )


#: Keys whose values are the user's own (paths, column names, a user's experiment's settings, which
#: its ``settings(config)`` checks): not walked by :func:`_check_finite`.
_NOT_WALKED = ("custom_datasets", "experiment_settings")


def _check_finite(value, key: str = "") -> None:
    """Every number of the config is finite: the schema's bounds let NaN pass (``nan < 1`` is False)
    and an infinite one (``unpack_max_ratio: .inf``) then fails deep in a job (an OverflowError)."""
    if isinstance(value, dict):
        for name, item in value.items():
            if not (key == "" and name in _NOT_WALKED):
                _check_finite(item, f"{key}.{name}" if key else str(name))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            _check_finite(item, f"{key}[{i}]")
    elif isinstance(value, float) and not math.isfinite(value):
        raise ConfigError(
            f"config {key}: {value!r} is not a finite number; give a finite value "
            "(a large one where you mean no limit)"
        )


def _check_convention(config: dict, task: dict) -> None:
    """The ``aurc_convention`` takes the loss of every task of the run; refused here, not after training.

    Probed on a tiny ordinal loss (absolute errors 0, 2, 1): a convention that refuses it (MAPIE's
    takes 0/1 losses only) would fail every ordinal dataset's summary once all jobs have run.
    """
    convention = config.get("aurc_convention", "paper")
    ordinal = [d for d, t in task.items() if t == "ordinal"]
    if convention == "paper" or not ordinal:
        return
    try:
        aurc([0.0, 2.0, 1.0], [0.0, 1.0, 2.0], convention=convention)
    except ValueError as err:
        raise ConfigError(
            f"config aurc_convention: {convention!r} cannot score the run's ordinal datasets "
            f"{', '.join(ordinal)} (their loss is the absolute error |y - h(x)|): {err}; choose another "
            "aurc_convention (paper is eq. (27)) or drop them from datasets"
        ) from None


def _check_table_intervals(config: dict) -> None:
    """``table_intervals`` are bootstrap intervals of eq. (27) AuRC: refused beside another convention
    here, not by every dataset's summary job after training."""
    convention = config.get("aurc_convention", "paper")
    if config.get("table_intervals", False) and convention != "paper":
        raise ConfigError(
            f"config table_intervals: the intervals are of the paper's AuRC (eq. (27)), but "
            f"aurc_convention is {convention!r}; set aurc_convention: paper or table_intervals: false"
        )


def _check_summary_metrics(config: dict) -> None:
    """``summary_metrics`` (schema: a failure metric's name) must be one a summary row can feed:
    refused here, not by every dataset's summary job after training."""
    try:
        check_summary_metrics(config.get("summary_metrics"))
    except ValueError as err:
        raise ConfigError(str(err)) from None


def _code_files(config: dict) -> dict:
    """Method -> file of the user's class behind it, for the classifiers and scores the config names."""
    names = [c for cs in (config.get("classifiers") or {}).values() for c in cs]
    names += [c for c in config.get("scores") or {}] + [
        s for ss in (config.get("scores") or {}).values() for s in ss
    ]
    files = {}
    for name in dict.fromkeys(names):
        registry = CLASSIFIERS if name in CLASSIFIERS else SCORES if name in SCORES else None
        source = None if registry is None else registry.get(name).source
        if isinstance(source, type) and not source.__module__.startswith("rejectopt."):
            try:
                path = inspect.getsourcefile(source)
            except TypeError:  # a class defined in no file (built in C, or made at run time)
                path = None
            if path is not None:
                files[name] = str(Path(path).resolve())
    return files


def plan_run(config: dict, base_dir=".") -> RunPlan:
    """Check the config's names against the registries; return the run's :class:`RunPlan`.

    Every check runs before any job, and none parses a data file (a dry run costs the same
    for a file of any size): unknown datasets, classifiers or scores (with the registered names
    listed), scores that do not apply to a classifier, split ratios, C grids, numbers that are
    NaN or infinite, a task of the run left without a classifier, an ``aurc_convention`` that
    cannot score a task of the run (or comes with ``table_intervals``), a ``summary_metrics``
    name a summary cannot compute, the class counts of the
    OOD and double-hinge datasets, and
    each custom dataset's entry, header (CSV) or array shapes (NPZ). The user's experiments are
    loaded and their settings checked beside it, by
    :func:`rejectopt.pipeline.experiments._contract.load_experiments` with the config. The content of a custom
    dataset's file is checked by the job that prepares it
    (``rejectopt.datasets._custom.prepare_custom``).

    Parameters
    ----------
    config : dict
        The configuration, already checked by :func:`validate_config` (``datasets`` is
        required; the other keys are optional here).
    base_dir : path-like, default="."
        Folder that a custom dataset's relative ``path`` is taken relative to (the working
        directory).

    Returns
    -------
    RunPlan
        The datasets the run covers (configured paper datasets that ``data_mirror`` lacks are
        in ``skipped``), their tasks and sizes, and the classifiers and scores it trains.

    Raises
    ------
    ConfigError
        The first problem found, naming the config key and the fix.
    """
    ratios = config.get("split_ratios", {})
    for name, value in ratios.items():
        try:
            check_ratios(value)
        except ValueError as err:
            raise ConfigError(f"config split_ratios.{name}: {err}") from None
    _check_methods(config)
    _check_C_grids(config)
    _check_finite(config)
    custom = {}
    for name, entry in (config.get("custom_datasets") or {}).items():
        if name in DATASET_REGISTRY:
            raise ConfigError(
                f"config custom_datasets.{name}: {name!r} is one of the paper's datasets; choose another name"
            )
        custom[name] = custom_dataset(
            name, entry, base_dir, ratios=ratios.get(name, ratios.get("default"))
        )
    for name in ratios:
        if name != "default" and name not in DATASET_REGISTRY and name not in custom:
            raise ConfigError(f"config split_ratios.{name}: unknown dataset {name!r}")
    wanted = list(config["datasets"])
    for name in wanted:
        if name not in DATASET_REGISTRY and name not in custom:
            close = difflib.get_close_matches(name, [*DATASET_REGISTRY, *custom], n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise ConfigError(
                f"config datasets: unknown dataset {name!r}{hint}; the paper's datasets are "
                f"{', '.join(DATASET_REGISTRY)}; a file of your own goes under custom_datasets"
            )
    mirror = config.get("data_mirror")
    if mirror is not None and not Path(mirror).is_dir():
        raise ConfigError(
            f"config data_mirror={mirror!r} is not a folder; point it at a folder laid out as "
            "<mirror>/<dataset>/<file>[.xz|.gz], or set it to null to download (data_mirror: null in the config "
            "file, --config data_mirror=null on the command line)"
        )
    run, skipped = [], []
    for name in wanted:
        if name in custom or mirror is None or available_in_mirror(name, mirror):
            run.append(name)
        else:
            skipped.append(name)
    if not run:
        raise ConfigError(
            f"none of the configured datasets {wanted} is available in data_mirror={mirror!r}"
        )
    n_examples, n_classes = {}, {}
    for name in run:
        if name in custom:
            n_examples[name] = peek_custom(custom[name])["n"]
            n_classes[name] = custom[name].n_classes
        else:
            n_examples[name] = DATASET_REGISTRY[name].n_examples
            n_classes[name] = DATASET_REGISTRY[name].n_classes
    task = {d: custom[d].task if d in custom else DATASET_REGISTRY[d].task for d in run}
    _check_classifier_lists(config, task)
    _check_convention(config, task)
    _check_table_intervals(config)
    _check_summary_metrics(config)
    _check_class_counts(config, run, custom, n_classes)
    classifiers = {t: list(config.get("classifiers", {}).get(t, [])) for t in TASKS}
    scores = {c: list(s) for c, s in config.get("scores", {}).items()}
    return RunPlan(
        run, skipped, task, custom, n_examples, classifiers, scores, n_classes, _code_files(config)
    )
