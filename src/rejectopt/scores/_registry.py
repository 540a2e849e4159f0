"""The score registry: every uncertainty score, learned or baseline, registered once by name.

Also the pipeline's wrapper around a score learner's own code (:func:`call_score`), which turns
a plugin's failure into a :class:`ScoreError` naming the score and its file.
"""

from __future__ import annotations

import inspect
import sys
from dataclasses import dataclass

import numpy as np

from .._registry import ClassEntry, Registry, origin_of
from ..exceptions import RegistryError, ScoreError

__all__ = [
    "LEARNS_FROM",
    "SCORES",
    "ScoreError",
    "ScoreInfo",
    "call_score",
    "constant_score_message",
    "describe_score",
    "get_score",
    "make_score",
    "register_score",
    "score_names",
]

#: What a score is fitted to. ``"loss"``: the classifier's loss on Trn2 (SELE, REG, a plugin's
#: default); ``"true_class_posterior"``: the classifier's posterior of the true class (TCP; only
#: for classifiers with posteriors); ``"classifier"``: nothing, it is read off the classifier's own
#: outputs (the baselines MCP, margin, face score).
LEARNS_FROM = ("loss", "true_class_posterior", "classifier")


@dataclass(frozen=True)
class ScoreInfo(ClassEntry):
    """A registered score: its class and what the pipeline needs to know about it.

    Attributes
    ----------
    name : str
        Unique name (config, file paths, summary rows).
    source : type or str
        The class, or its import path ``"package.module:QualName"`` imported on first use of
        :attr:`cls` (the built-ins: reading the registry then needs no scikit-learn).
    cls : type
        The class (property; loads ``source``). Learned: ``cls(C=...)``, ``fit(X, y_pred, target)``
        -> ``self``, ``predict(X, y_pred)`` -> uncertainty (larger = more uncertain).
        Baselines: a ``compute`` static method.
    label : str
        Display label in tables and figures.
    learns_from : {"loss", "true_class_posterior", "classifier"}
        See :data:`LEARNS_FROM`.
    applies_to : tuple of str or None
        Classifier names the score applies to; None = every classifier (with posteriors, for
        ``learns_from="true_class_posterior"``).

    Parameters
    ----------
    name, label, learns_from, source, applies_to
        The attributes above.

    """

    name: str
    source: type | str
    label: str
    learns_from: str
    applies_to: tuple[str, ...] | None

    def _check_class(self, cls, origin: str) -> type:
        return _check_class(self.name, self.learns_from, cls, origin)

    @property
    def baseline(self) -> bool:
        """True for the classifiers' own scores (not learned)."""
        return self.learns_from == "classifier"

    @property
    def needs_posteriors(self) -> bool:
        return self.learns_from == "true_class_posterior"

    def make(self, C, **context):
        """A new unfitted learner with regularisation ``C``.

        Of ``context`` (``n_classes``, ``random_state``, ``chunk_size``, ``n_jobs``) only the
        keywords ``__init__`` accepts are passed: ``__init__(self, C=1.0)`` gets ``C`` alone.
        """
        if self.baseline:
            raise RegistryError(
                f"score {self.name!r} is a baseline of the classifier's outputs: it is not learned"
            )
        accepted = _init_keywords(self.cls)
        kwargs = {k: v for k, v in context.items() if k in accepted or "**" in accepted}
        return self.cls(C=C, **kwargs)

    def target(self, loss, y_true, proba) -> np.ndarray:
        """What the learner is fitted to: the loss, or the true class's posterior (TCP)."""
        if self.learns_from == "loss":
            return np.asarray(loss, dtype=float)
        if self.learns_from == "true_class_posterior":
            if proba is None:
                raise ValueError(
                    f"score {self.name!r} learns from the posterior of the true class, but the classifier's "
                    "outputs hold no class posteriors ('proba'); use a classifier with posteriors"
                )
            y_true = np.asarray(y_true)
            return np.asarray(proba, dtype=float)[np.arange(len(y_true)), y_true]
        raise RegistryError(
            f"score {self.name!r} is a baseline of the classifier's outputs: it is not learned"
        )


def _init_keywords(cls) -> set[str]:
    params = inspect.signature(cls.__init__).parameters.values()
    names = {p.name for p in params if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)}
    if any(p.kind is p.VAR_KEYWORD for p in params):
        names.add("**")
    return names


#: Every registered score by name, in the order of registration (the built-in ones first, in
#: the order of :mod:`rejectopt.scores`): what the pipeline, the CLI and the reports read.
SCORES: Registry[ScoreInfo] = Registry("score")


def register_score(
    name: str, *, label: str | None = None, learns_from: str = "loss", applies_to=None
):
    """Class decorator registering an uncertainty score under ``name``.

    A user's score is one Python file::

        import rejectopt

        @rejectopt.scores.register_score("knn_loss")
        class KNNLoss:
            def __init__(self, C=1.0): ...
            def fit(self, X, y_pred, loss): ...; return self
            def predict(self, X, y_pred): ...  # uncertainty, larger = reject first

    listed under ``plugins:`` in the config makes ``knn_loss`` valid under ``scores:``
    (:func:`rejectopt.pipeline.config.load_plugins`). Given an import path instead,
    ``register_score("sele", ...)("rejectopt.scores._sele:SELE")``, the class is imported and
    checked on first use (the built-ins, :mod:`rejectopt.scores`).

    Parameters
    ----------
    name : str
        Unique lower-case identifier.
    label : str or None, default=None
        Display label; None uses ``name``.
    learns_from : {"loss", "true_class_posterior", "classifier"}, default="loss"
        See :data:`LEARNS_FROM`.
    applies_to : sequence of str or None, default=None
        Classifiers the score applies to; None = all.

    Returns
    -------
    callable
        Registers the class (or import path) and returns it unchanged.

    Raises
    ------
    RegistryError
        The name is taken (naming the module that took it) or not an identifier, or the class
        lacks ``fit`` / ``predict`` / a ``C`` argument (learned) or ``compute`` (baselines).

    Examples
    --------
    >>> import numpy as np
    >>> from rejectopt.scores import SCORES, make_score, register_score
    >>> @register_score("nearest_loss", label="1-NN loss")  # the loss of the nearest training row
    ... class NearestLoss:
    ...     def __init__(self, C=1.0):
    ...         self.C = C
    ...     def fit(self, X, y_pred, loss):
    ...         self.X_, self.loss_ = np.asarray(X, dtype=float), np.asarray(loss, dtype=float)
    ...         return self
    ...     def predict(self, X, y_pred):
    ...         return self.loss_[np.abs(np.asarray(X) - self.X_.T).argmin(axis=1)]
    >>> make_score("nearest_loss", 10.0).fit([[0.0], [1.0]], None, [0.0, 100.0]).predict([[0.9]], None)
    array([100.])
    >>> SCORES.remove("nearest_loss")  # forget it again (tests, interactive sessions)
    """
    if learns_from not in LEARNS_FROM:
        raise RegistryError(
            f"register_score({name!r}): learns_from must be one of {LEARNS_FROM}, got {learns_from!r}"
        )

    def entry(cls) -> ScoreInfo:
        return ScoreInfo(
            name=name,
            source=cls,
            label=label or name,
            learns_from=learns_from,
            applies_to=None if applies_to is None else tuple(applies_to),
        )

    return SCORES.decorator(
        name, entry, lambda cls, origin: _check_class(name, learns_from, cls, origin)
    )


def _check_class(name: str, learns_from: str, cls, origin: str) -> type:
    """``cls`` if it has what a score registered with ``learns_from`` needs; else a RegistryError."""
    if not isinstance(cls, type):
        raise RegistryError(
            f"{origin}: @register_score({name!r}) decorates a class, got {type(cls).__name__}"
        )
    if learns_from == "classifier":
        missing = [m for m in ("compute",) if not callable(getattr(cls, m, None))]
    else:
        missing = [m for m in ("fit", "predict") if not callable(getattr(cls, m, None))]
        if "C" not in _init_keywords(cls) and "**" not in _init_keywords(cls):
            missing.append("__init__(self, C=...)")
    if missing:
        raise RegistryError(
            f"{origin}: score {name!r} lacks {', '.join(missing)} (see rejectopt.scores.register_score)"
        )
    return cls


def get_score(name: str) -> ScoreInfo:
    """The registry entry of score ``name``: its class, label and what it learns from.

    Parameters
    ----------
    name : str
        A registered name (:func:`score_names`).

    Returns
    -------
    ScoreInfo

    Raises
    ------
    RegistryError
        An unknown name; the message suggests the closest registered one.

    Examples
    --------
    >>> get_score("sele")
    ScoreInfo(name='sele', source='rejectopt.scores._sele:SELE', label='SELE', learns_from='loss', applies_to=None)
    >>> get_score("sel")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    rejectopt.exceptions.RegistryError: unknown score 'sel': did you mean 'sele'? registered scores: mcp, ...
    """
    return SCORES.get(name)


def score_names(
    *, learned: bool | None = None, learns_from: str | None = None, general: bool = False
) -> list[str]:
    """Registered score names; ``learned=True`` only learned ones, ``False`` only baselines.

    The one place a default list of methods comes from: a score registered later (a user's
    plugin) joins the defaults that ask for its kind, and no list of names is typed elsewhere.

    Parameters
    ----------
    learned : bool or None, default=None
        None: all.
    learns_from : {"loss", "true_class_posterior", "classifier"} or None, default=None
        Only the scores that learn from this target (``register_score``'s ``learns_from``).
    general : bool, default=False
        Only the scores registered without ``applies_to``, which work on any features (not,
        say, the class-shared scores that read a network's logits only).

    Returns
    -------
    list of str
        In registration order.

    Examples
    --------
    >>> score_names(learned=True), score_names(learned=False)
    (['reg', 'tcp', 'sele', 'reg_shared', 'sele_shared'], ['mcp', 'margin', 'face_score'])
    >>> score_names(learns_from="loss", general=True)
    ['reg', 'sele']
    """
    return [
        n
        for n, info in SCORES.items()
        if (learned is None or info.baseline != learned)
        and (learns_from is None or info.learns_from == learns_from)
        and not (general and info.applies_to is not None)
    ]


def make_score(name: str, C, **context):
    """A new unfitted learner of score ``name`` (see :meth:`ScoreInfo.make`).

    Parameters
    ----------
    name : str
        A registered learned score.
    C : float
        Its regularisation constant.
    **context
        ``n_classes``, ``random_state``, ``chunk_size``, ``n_jobs``, as :meth:`ScoreInfo.make`.

    Returns
    -------
    object

    Examples
    --------
    >>> make_score("sele", 10, n_classes=3, chunk_size=200, n_jobs=1)
    SELE(C=10, chunk_size=200, n_classes=3, n_jobs=1)
    >>> make_score("reg", 1.0, n_classes=3, chunk_size=200)  # REG takes no chunk_size
    REG(C=1.0, n_classes=3)
    """
    return get_score(name).make(C, **context)


# --------------------------------------------------------------------------------------------
# Calling a score learner: its own failures and its outputs, named after the score and its file
# --------------------------------------------------------------------------------------------


def _source_file(cls) -> str | None:
    """The file defining ``cls``: its module's, else that of its methods' code (a module loaded by path)."""
    module = sys.modules.get(getattr(cls, "__module__", ""))
    path = getattr(module, "__file__", None)
    if path is None:
        codes = [getattr(member, "__code__", None) for member in vars(cls).values()]
        path = next((code.co_filename for code in codes if code is not None), None)
    return path


def _built_in(learner) -> bool:
    cls = learner if isinstance(learner, type) else type(learner)
    return origin_of(cls).startswith("rejectopt.")


def describe_score(learner) -> str:
    """``score 'knn_loss' (class my_scores.KNNLoss in /work/my_scores.py)`` for messages.

    Built-ins are matched by import path, unloaded; an unregistered class is named by class.

    Parameters
    ----------
    learner : object or type
        A score learner or its class.

    Returns
    -------
    str

    """
    cls = learner if isinstance(learner, type) else type(learner)
    origin = origin_of(cls)
    names = [
        name
        for name, info in SCORES.items()
        if info.source is cls or origin_of(info.source) == origin
    ]
    what = f"score {names[0]!r}" if names else "uncertainty score"
    if _built_in(cls):
        return f"{what} ({origin})"
    path = _source_file(cls)
    return f"{what} (class {origin} in {path})" if path else f"{what} (class {origin})"


def call_score(learner, method: str, *args, n_rows: int | None = None):
    """``learner.<method>(*args)``; what the learner's own code does wrong becomes a :class:`ScoreError`.

    A user's learner's exception (built-ins' own errors pass unchanged) or ``SystemExit`` (else
    the process would end silently and Snakemake report a missing output naming no culprit) is
    reported naming the score and its file. With ``n_rows`` the result must be ``n_rows``
    finite reals: NaN cannot be ranked, and ``-inf`` / ``+inf`` would be accepted first /
    rejected last whatever the loss, a defect of the score, not a decision.

    Parameters
    ----------
    learner : object
        The score learner.
    method : str
        The method to call (``"fit"``, ``"predict"``, ``"fit_path"``).
    *args
        Its arguments.
    n_rows : int or None, default=None
        Rows of the uncertainty to check.

    Returns
    -------
    object
        What the method returns; with ``n_rows``, as a float ndarray of shape ``(n_rows,)``.

    Raises
    ------
    ScoreError
        The user's learner raised or exited, ``fit`` returned None, or a bad uncertainty.

    """
    try:
        result = getattr(learner, method)(*args)
    except (Exception, SystemExit) as err:
        if isinstance(err, Exception) and _built_in(learner):
            raise  # the library's own scores validate their inputs: their errors name the data already
        cause = (
            f"SystemExit({err.code!r})"
            if isinstance(err, SystemExit)
            else f"{type(err).__name__}: {err}"
        )
        raise ScoreError(f"{describe_score(learner)} failed in {method}: {cause}") from err
    if method == "fit" and result is None:
        raise ScoreError(f"{describe_score(learner)}: fit must return self, got None")
    if n_rows is None:
        return result
    try:
        values = np.asarray(result, dtype=np.float64)
    except (TypeError, ValueError) as err:
        raise ScoreError(
            f"{describe_score(learner)}: {method} returned values that are not real numbers "
            f"({type(err).__name__}: {err})"
        ) from None
    if values.shape != (n_rows,):
        raise ScoreError(
            f"{describe_score(learner)}: {method} returned shape {values.shape} for {n_rows} rows; "
            f"an uncertainty is one number per row, shape ({n_rows},)"
        )
    bad = ~np.isfinite(values)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ScoreError(
            f"{describe_score(learner)}: {method} returned the uncertainty {values[i]} at row index {i} "
            f"({int(bad.sum())} non-finite value(s) of {n_rows}); an uncertainty must be a finite "
            "number (NaN cannot be ranked, -inf would be accepted first whatever the loss)"
        )
    return values


def constant_score_message(uncertainty, learner, where: str) -> str | None:
    """A warning's text when ``uncertainty`` is one value on every row of ``where``, else None.

    A constant score orders nothing: all rows tie at the threshold and are accepted at random.

    Parameters
    ----------
    uncertainty : array_like of float
    learner : object
        Named by :func:`describe_score`.
    where : str
        What the rows are (``"the validation rows"``).

    Returns
    -------
    str or None
        None for two values or more, or fewer than two rows.

    """
    values = np.asarray(uncertainty, dtype=np.float64)
    if values.size < 2 or np.ptp(values) != 0:
        return None
    return (
        f"{describe_score(learner)} gives the same uncertainty {values[0]:g} to all {values.size} rows of "
        f"{where}: it orders nothing, and every row is accepted at random with one probability"
    )
