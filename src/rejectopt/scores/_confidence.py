"""A classifier's own confidence as a fitted score: what ``uncertainty_score="mcp"`` decides with.

A baseline (MCP, margin, entropy ...) learns nothing, but the estimator, ``select`` and
``apply`` decide through a fitted score's ``predict(X, y_pred)`` (:func:`rejectopt.model.decide`).
:class:`ConfidenceScore` is that score: its ``X`` is the classifier's outputs (the class
probabilities of ``predict_proba``, or a network's logits), not the features, and its formula is
the baseline's. Each formula of the probabilities has its one home here; the logits are read
through their softmax (:func:`rejectopt.scores._shared.log_softmax`, the one home of it), so
``select --score mcp`` on a network's logits ranks rows as
:func:`rejectopt.logits.baseline_uncertainties` does.
"""

from __future__ import annotations

import numpy as np

from ._baselines import mcp, svm_margin
from ._shared import log_softmax

__all__ = ["AUTO", "INPUTS", "ConfidenceScore", "baseline_names", "confidence_label"]

#: The score option that picks, among the candidates, the one of least validation AuRC
#: (:func:`rejectopt.fitting.choose_score`): the default of :class:`rejectopt.SelectiveClassifier`
#: and ``select``. Here, with the baselines' names that the command line's parser offers.
AUTO = "auto"


def _entropy(proba):
    """Entropy of the posterior in nats; ``0 log 0 = 0`` (a probability of 0 adds nothing)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(proba > 0, proba * np.log(np.where(proba > 0, proba, 1.0)), 0.0)
    return -terms.sum(axis=1)


def _margin(proba):
    """Negated gap between the two largest probabilities (one class: no rival, gap 1)."""
    if proba.shape[1] < 2:
        return -np.ones(proba.shape[0])
    top = np.sort(proba, axis=1)
    return -(top[:, -1] - top[:, -2])


def _doctor(proba):
    """DOCTOR's ``1 - sum_y p(y|x)^2``."""
    return 1.0 - (proba * proba).sum(axis=1)


#: Baselines of a posterior: name -> (formula of the probabilities, display label).
_OF_PROBA = {
    "mcp": (mcp, "MCP"),
    "margin": (_margin, "Margin"),
    "entropy": (_entropy, "Entropy"),
    "doctor": (_doctor, "DOCTOR"),
}
#: Baselines of the logits themselves (no softmax): name -> (formula, display label).
_OF_LOGITS = {
    "max_logit": (svm_margin, "Max-logit"),
    "energy": (lambda logits: -_logsumexp(logits), "Energy"),
}
#: What a confidence score reads: ``"proba"`` (a classifier's ``predict_proba``, one column per
#: class) or ``"logits"`` (a network's pre-softmax outputs).
INPUTS = ("proba", "logits")


def _logsumexp(logits):
    top = logits.max(axis=1)
    return top + np.log(np.exp(logits - top[:, None]).sum(axis=1))


def baseline_names(inputs):
    """The baselines a score reading ``inputs`` offers, in the order ``"auto"`` tries them.

    Parameters
    ----------
    inputs : {"proba", "logits"}

    Returns
    -------
    list of str

    Examples
    --------
    >>> baseline_names("proba"), baseline_names("logits")[-2:]
    (['mcp', 'margin', 'entropy', 'doctor'], ['max_logit', 'energy'])
    """
    _check_inputs(inputs)
    return list(_OF_PROBA) + (list(_OF_LOGITS) if inputs == "logits" else [])


def confidence_label(name):
    """Display label of baseline ``name`` (``"MCP"``)."""
    return {**_OF_PROBA, **_OF_LOGITS}[name][1]


def _check_inputs(inputs):
    if inputs not in INPUTS:
        raise ValueError(f"inputs must be one of {INPUTS}, got {inputs!r}")


class ConfidenceScore:
    """A baseline of the classifier's outputs, with the fitted score's interface.

    Parameters
    ----------
    name : str, default="mcp"
        One of :func:`baseline_names` of ``inputs``.
    inputs : {"proba", "logits"}, default="proba"
        What its ``X`` holds: class probabilities, or a network's logits.
    n_classes : int or None, default=None
        Predicted classes K of the model; None: the largest predicted index + 1 at ``fit``.

    Attributes
    ----------
    n_features_in_ : int
        Columns of the outputs it was fitted on (the number of classes K).
    n_classes_ : int
        Predicted classes (the model's ``classes``).
    class_seen_ : ndarray of bool
        All true: a baseline scores every class alike.

    Examples
    --------
    >>> score = ConfidenceScore("mcp").fit([[0.9, 0.1], [0.6, 0.4]], [0, 0], None)
    >>> score.predict([[0.5, 0.5], [1.0, 0.0]], None).tolist()
    [0.5, 0.0]
    """

    #: Not learned: ``fit`` only records the shape, and C has no meaning (``C`` is NaN).
    learned = False

    def __init__(self, name="mcp", inputs="proba", n_classes=None):
        self.name = name
        self.inputs = inputs
        self.n_classes = n_classes

    def __repr__(self):
        return f"ConfidenceScore(name={self.name!r}, inputs={self.inputs!r})"

    def get_params(self, deep=True):
        """The parameters, as scikit-learn's estimators give them."""
        return {"name": self.name, "inputs": self.inputs, "n_classes": self.n_classes}

    def set_params(self, **params):
        """Set parameters (``name``, ``inputs``, ``n_classes``); returns self."""
        for key, value in params.items():
            if key not in self.get_params():
                raise ValueError(f"ConfidenceScore has no parameter {key!r}")
            setattr(self, key, value)
        return self

    def _formula(self):
        _check_inputs(self.inputs)
        if self.name not in baseline_names(self.inputs):
            raise ValueError(
                f"baseline {self.name!r} does not read {self.inputs}: choose one of "
                f"{', '.join(baseline_names(self.inputs))}"
            )
        return {**_OF_PROBA, **_OF_LOGITS}[self.name][0]

    @property
    def reads_logits(self):
        """True when ``X`` is a network's logits (``select`` then reads them, not the embeddings)."""
        return self.inputs == "logits"

    def fit(self, X, y_pred, loss=None):
        """Record the outputs' width and the number of predicted classes; nothing is learned."""
        self._formula()
        X = np.asarray(X, dtype=np.float64)
        self.n_features_in_ = int(X.shape[1])
        y = None if y_pred is None else np.asarray(y_pred)
        seen = 1 if y is None or y.size == 0 else int(y.max()) + 1
        self.n_classes_ = seen if self.n_classes is None else max(int(self.n_classes), seen)
        self.class_seen_ = np.ones(self.n_classes_, dtype=bool)
        return self

    def predict(self, X, y_pred=None):
        """The baseline's uncertainty of each row of outputs ``X`` (larger = more uncertain)."""
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2:
            raise ValueError(f"X must be 2-D (one row of outputs per input), got shape {X.shape}")
        formula = self._formula()
        if self.name in _OF_LOGITS:
            return np.asarray(formula(X), dtype=np.float64)
        if self.inputs == "logits":
            X = np.exp(log_softmax(X))
        proba = X
        return np.asarray(formula(proba), dtype=np.float64)

    def to_dict(self):
        """``model.json``'s ``score`` of a baseline: ``{"kind": "baseline", "name": ..., ...}``."""
        return {
            "kind": "baseline",
            "name": self.name,
            "inputs": self.inputs,
            "n_classes": int(self.n_classes_),
            "n_features": int(self.n_features_in_),
        }

    @classmethod
    def from_dict(cls, data, *, name="score"):
        """Rebuild a score from :meth:`to_dict`, checking every field (a ValueError names the first bad one)."""
        keys = {"kind", "name", "inputs", "n_classes", "n_features"}
        if not isinstance(data, dict) or set(data) != keys:
            got = sorted(map(str, data)) if isinstance(data, dict) else type(data).__name__
            raise ValueError(
                f"{name}: a baseline score has exactly the keys {sorted(keys)}, got {got}"
            )
        if data["inputs"] not in INPUTS:
            raise ValueError(f"{name}.inputs must be one of {INPUTS}, got {data['inputs']!r}")
        if data["name"] not in baseline_names(data["inputs"]):
            raise ValueError(
                f"{name}.name: {data['name']!r} is not a baseline of {data['inputs']} "
                f"({', '.join(baseline_names(data['inputs']))})"
            )
        for field in ("n_classes", "n_features"):
            value = data[field]
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name}.{field} must be an integer >= 1, got {value!r}")
        score = cls(data["name"], data["inputs"])
        score.n_classes_, score.n_features_in_ = data["n_classes"], data["n_features"]
        score.class_seen_ = np.ones(score.n_classes_, dtype=bool)
        return score
