"""The classifier registry: every classifier of the benchmark, registered once by name."""

from __future__ import annotations

from dataclasses import dataclass

from .._registry import ClassEntry, Registry, RegistryError

__all__ = [
    "CLASSIFIERS",
    "TASKS",
    "ClassifierInfo",
    "classifier_names",
    "get_classifier",
    "register_classifier",
]

#: Prediction tasks of the benchmark: the loss is ``100 [y != y']`` or ``|y - y'|``.
TASKS = ("classification", "ordinal")


@dataclass(frozen=True)
class ClassifierInfo(ClassEntry):
    """A registered classifier and what the pipeline needs to know about it.

    Made by :func:`register_classifier`; the parameters are its attributes.

    Parameters
    ----------
    name : str
        Unique name (config, wildcards, file paths, summary rows).
    source : type or str
        The class, or its import path ``"package.module:QualName"`` (imported on first
        use of :attr:`cls`; the built-in classifiers, so that reading the registry needs
        no scikit-learn).
    task : {"classification", "ordinal"}
        The prediction task (:data:`TASKS`); sets the validation error :attr:`loss`.
    baseline : str
        Name of the registered baseline score its outputs carry (``mcp``, ``margin``).
    posteriors : bool
        Whether ``outputs`` holds class posteriors (needed by TCP-like scores).
    uses_C : bool
        Whether the config's ``C_classifier`` grid applies (XGBoost has its own grid).
    threads : int
        Threads one training job uses (the rule's ``threads``).
    label : str
        Display label.
    table, title : str
        Name and title of its results table.
    extension : bool
        True for models beyond the paper (left out of the paper comparison).

    Attributes
    ----------
    cls : type
        The class (property; loads ``source``): a class with ``train(X_trn, y_trn, X_val, y_val, *,
        C_grid, n_classes, random_state, n_jobs, loss)`` returning ``(model, C, val_errors)`` and
        ``outputs(model, X, n_classes)`` returning a dict with ``y_pred``, ``baseline`` and, with
        posteriors, ``proba``.
    loss : str
        Validation error on Val1: ``"zero_one"`` (classification) or ``"mae"`` (ordinal).
    """

    name: str
    source: type | str
    task: str
    baseline: str
    posteriors: bool
    uses_C: bool
    threads: int
    label: str
    table: str
    title: str
    extension: bool

    def _check_class(self, cls, origin: str) -> type:
        return _check_class(self.name, cls, origin)

    @property
    def loss(self) -> str:
        """Validation error on Val1: ``"zero_one"`` (classification) or ``"mae"`` (ordinal)."""
        return "mae" if self.task == "ordinal" else "zero_one"


#: The classifier registry: name -> :class:`ClassifierInfo` (built-ins and ``register_classifier`` plugins).
CLASSIFIERS: Registry[ClassifierInfo] = Registry("classifier")


def register_classifier(
    name: str,
    *,
    task: str,
    baseline: str,
    posteriors: bool,
    uses_C: bool = True,
    threads: int = 1,
    label: str | None = None,
    table: str | None = None,
    title: str | None = None,
    extension: bool = True,
):
    """Class decorator registering a classifier under ``name`` (see :class:`ClassifierInfo`).

    ``table`` defaults to ``"table_<name>"``; ``extension`` to True (only the
    paper's own models set it to False). The decorator also takes the class's import
    path, ``register_classifier("lr", ...)("rejectopt.classifiers._training:LogisticRegressionModel")``:
    the class is then imported and checked on first use.

    Parameters
    ----------
    name : str
        Unique name (config, wildcards, file paths, summary rows).
    task : {"classification", "ordinal"}
        The prediction task.
    baseline : str
        The registered baseline score its outputs carry (``mcp``, ``margin``).
    posteriors : bool
        Whether ``outputs`` holds class posteriors ``proba``.
    uses_C : bool, default=True
        Whether the config's ``C_classifier`` grid applies.
    threads : int, default=1
        Threads one training job uses.
    label : str, optional
        Display label; default ``name``.
    table : str, optional
        Name of its results table; default ``"table_<name>"``.
    title : str, optional
        Title of its results table; default ``"<label> (extension, not in the paper)"``.
    extension : bool, default=True
        Whether the model goes beyond the paper (left out of the paper comparison).

    Returns
    -------
    callable
        The decorator: it registers a class (checked now for ``train`` and ``outputs``) or an
        import path (checked on first use) and returns it unchanged.

    Raises
    ------
    rejectopt.exceptions.RegistryError
        An unknown task, a name already registered, or a class without ``train`` / ``outputs``.

    Examples
    --------
    >>> import numpy as np
    >>> from rejectopt.classifiers import CLASSIFIERS, get_classifier, register_classifier
    >>> @register_classifier("nearest_mean", task="classification", baseline="margin", posteriors=False)
    ... class NearestMean:  # train: (model, C, validation errors); outputs: a dict
    ...     @staticmethod
    ...     def train(X_trn, y_trn, X_val, y_val, *, C_grid, n_classes, random_state, n_jobs, loss, c_scaling):
    ...         return np.stack([X_trn[y_trn == k].mean(axis=0) for k in range(n_classes)]), 1.0, {1.0: 0.0}
    ...     @staticmethod
    ...     def outputs(model, X, n_classes=None):
    ...         distance = np.linalg.norm(X[:, None, :] - model[None], axis=2)
    ...         return {"y_pred": distance.argmin(axis=1), "baseline": distance.min(axis=1)}
    >>> get_classifier("nearest_mean").table, get_classifier("nearest_mean").extension
    ('table_nearest_mean', True)
    >>> CLASSIFIERS.remove("nearest_mean")  # forget it again (tests, interactive sessions)
    """
    if task not in TASKS:
        raise RegistryError(
            f"register_classifier({name!r}): task must be one of {TASKS}, got {task!r}"
        )

    def entry(cls) -> ClassifierInfo:
        return ClassifierInfo(
            name=name,
            source=cls,
            task=task,
            baseline=baseline,
            posteriors=bool(posteriors),
            uses_C=bool(uses_C),
            threads=int(threads),
            label=label or name,
            table=table or f"table_{name}",
            title=title or f"{label or name} (extension, not in the paper)",
            extension=bool(extension),
        )

    return CLASSIFIERS.decorator(name, entry, lambda cls, origin: _check_class(name, cls, origin))


def _check_class(name: str, cls, origin: str) -> type:
    missing = [m for m in ("train", "outputs") if not callable(getattr(cls, m, None))]
    if missing:
        raise RegistryError(f"{origin}: classifier {name!r} lacks {', '.join(missing)}")
    return cls


def get_classifier(name: str) -> ClassifierInfo:
    """The registered classifier ``name``; the error lists the registered names.

    Parameters
    ----------
    name : str
        A registered name (:func:`classifier_names`).

    Returns
    -------
    ClassifierInfo
        Its entry: task, baseline score, posteriors, threads, table and the class.

    Raises
    ------
    rejectopt.exceptions.RegistryError
        ``name`` is not registered; the message lists the registered names.

    Examples
    --------
    >>> info = get_classifier("lr")
    >>> info.label, info.baseline, info.posteriors, info.loss
    ('LR', 'mcp', True, 'zero_one')
    >>> get_classifier("rf")
    Traceback (most recent call last):
    ...
    rejectopt.exceptions.RegistryError: unknown classifier 'rf': registered classifiers: lr, svm, svor, xgb
    """
    return CLASSIFIERS.get(name)


def classifier_names(task: str | None = None) -> list[str]:
    """Registered classifier names, optionally of one task.

    Parameters
    ----------
    task : {"classification", "ordinal"} or None, default=None
        Keep only the classifiers of this task; None keeps all.

    Returns
    -------
    list of str
        In registration order (the built-ins first).

    Examples
    --------
    >>> classifier_names(), classifier_names("ordinal")
    (['lr', 'svm', 'svor', 'xgb'], ['svor'])
    """
    return [n for n, info in CLASSIFIERS.items() if task is None or info.task == task]
