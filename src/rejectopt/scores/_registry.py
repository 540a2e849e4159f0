"""The score registry: every uncertainty score, learned or baseline, registered once by name."""

from __future__ import annotations

import inspect
from dataclasses import dataclass

import numpy as np

from .._registry import ClassEntry, Registry, RegistryError

__all__ = [
    "LEARNS_FROM",
    "SCORES",
    "ScoreInfo",
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
        The class, or its import path ``"package.module:QualName"`` (imported on first
        use of :attr:`cls`; the built-in scores, so that reading the registry needs no
        scikit-learn).
    cls : type
        The class (property; loads ``source``). Learned scores: ``cls(C=...)``, ``fit(X, y_pred, target)``
        returning ``self`` and ``predict(X, y_pred)`` returning the uncertainty
        (larger = more uncertain). Baselines: a ``compute`` static method.
    label : str
        Display label in tables and figures.
    learns_from : {"loss", "true_class_posterior", "classifier"}
        See :data:`LEARNS_FROM`.
    applies_to : tuple of str or None
        Classifier names the score applies to; None = every classifier (that
        has posteriors, when ``learns_from="true_class_posterior"``).
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

        ``context`` holds what the pipeline knows (``n_classes``,
        ``random_state``, ``chunk_size``, ``n_jobs``); only the keywords that the
        class's ``__init__`` accepts are passed, so a plugin with
        ``__init__(self, C=1.0)`` gets ``C`` alone.
        """
        if self.baseline:
            raise RegistryError(f"score {self.name!r} is a baseline of the classifier's outputs: it is not learned")
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
        raise RegistryError(f"score {self.name!r} is a baseline of the classifier's outputs: it is not learned")


def _init_keywords(cls) -> set[str]:
    params = inspect.signature(cls.__init__).parameters.values()
    names = {p.name for p in params if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)}
    if any(p.kind is p.VAR_KEYWORD for p in params):
        names.add("**")
    return names


SCORES: Registry[ScoreInfo] = Registry("score")


def register_score(name: str, *, label: str | None = None, learns_from: str = "loss", applies_to=None):
    """Class decorator registering an uncertainty score under ``name``.

    A user's score is one Python file::

        import rejectopt

        @rejectopt.scores.register_score("knn_loss")
        class KNNLoss:
            def __init__(self, C=1.0): ...
            def fit(self, X, y_pred, loss): ...; return self
            def predict(self, X, y_pred): ...  # uncertainty, larger = reject first

    listed under ``plugins:`` in the config, after which ``knn_loss`` is valid
    under ``scores:`` (see :func:`rejectopt.plugins.load_plugins`).

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

    The decorator also takes the class's import path,
    ``register_score("sele", ...)("rejectopt.scores._sele:SELE")``: the class is then
    imported and checked on first use (the built-in scores, see :mod:`rejectopt.scores`).

    Raises
    ------
    RegistryError
        The name is taken (the message names the module that took it), is not
        an identifier, or the class lacks ``fit`` / ``predict`` / a ``C``
        argument (learned scores) or ``compute`` (baselines).
    """
    if learns_from not in LEARNS_FROM:
        raise RegistryError(f"register_score({name!r}): learns_from must be one of {LEARNS_FROM}, got {learns_from!r}")

    def entry(cls) -> ScoreInfo:
        return ScoreInfo(name=name, source=cls, label=label or name, learns_from=learns_from,
                         applies_to=None if applies_to is None else tuple(applies_to))

    return SCORES.decorator(name, entry, lambda cls, origin: _check_class(name, learns_from, cls, origin))


def _check_class(name: str, learns_from: str, cls, origin: str) -> type:
    """``cls`` if it has what a score registered with ``learns_from`` needs; else a RegistryError."""
    if not isinstance(cls, type):
        raise RegistryError(f"{origin}: @register_score({name!r}) decorates a class, got {type(cls).__name__}")
    if learns_from == "classifier":
        missing = [m for m in ("compute",) if not callable(getattr(cls, m, None))]
    else:
        missing = [m for m in ("fit", "predict") if not callable(getattr(cls, m, None))]
        if "C" not in _init_keywords(cls) and "**" not in _init_keywords(cls):
            missing.append("__init__(self, C=...)")
    if missing:
        raise RegistryError(f"{origin}: score {name!r} lacks {', '.join(missing)} (see rejectopt.scores.register_score)")
    return cls


def get_score(name: str) -> ScoreInfo:
    """The registered score ``name``; the error lists the registered names."""
    return SCORES.get(name)


def score_names(*, learned: bool | None = None) -> list[str]:
    """Registered score names; ``learned=True`` only learned ones, ``False`` only baselines."""
    return [n for n, info in SCORES.items() if learned is None or info.baseline != learned]


def make_score(name: str, C, **context):
    """A new unfitted learner of score ``name`` (see :meth:`ScoreInfo.make`)."""
    return get_score(name).make(C, **context)
