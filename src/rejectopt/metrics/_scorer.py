"""Internal: scikit-learn scorers of a fitted selective classifier (``scoring=`` of GridSearchCV, cross_val_score).

The metrics module sits below the estimator in the import layers, so the estimator is
duck-typed: what a scorer reads of it is listed in :func:`selective_scorer`.
"""

import math

import numpy as np

from ._losses import per_example_loss
from ._risk_coverage import aurc

#: Scorer metric -> (what it measures, sign: +1 greater is better, -1 lower is better).
_METRICS = {
    "aurc": ("the AuRC (eq. 27) of the learned uncertainty score", -1),
    "selective_risk": ("the selective risk of the accepted predictions at the fitted target", -1),
    "coverage": ("the share of the inputs accepted at the fitted target", +1),
}


def _classifier_predictions(estimator, X):
    """The wrapped classifier's prediction on every row, rejected or not (the loss of each prediction)."""
    classifier = getattr(estimator, "estimator_", None)
    if classifier is None or not hasattr(classifier, "predict"):
        raise TypeError(
            f"{type(estimator).__name__} has no fitted classifier estimator_ with predict: the risk-"
            "coverage metrics need the loss of every prediction, rejected ones included; pass a fitted "
            "rejectopt.SelectiveClassifier"
        )
    return np.asarray(classifier.predict(X))


def _losses(estimator, X, y):
    """Each row's loss under the estimator's own ``loss`` (the 0/100 loss when it names none)."""
    return per_example_loss(
        getattr(estimator, "loss", "zero_one"), np.asarray(y), _classifier_predictions(estimator, X)
    )


def _need(estimator, method, who="a selective scorer"):
    if not callable(getattr(estimator, method, None)):
        raise TypeError(
            f"{type(estimator).__name__} has no {method}(X): {who} needs a fitted selective classifier "
            "such as rejectopt.SelectiveClassifier"
        )


class _SelectiveScorer:
    """A scorer ``scorer(estimator, X, y) -> float``, greater is better (scikit-learn's convention)."""

    def __init__(self, metric):
        self.metric = metric

    def __repr__(self):
        return f"selective_scorer({self.metric!r})"

    def __call__(self, estimator, X, y, sample_weight=None):
        if sample_weight is not None:
            raise ValueError(
                f"{self!r}: sample_weight is not supported; the selective metrics weigh every row "
                "alike, as the targets do"
            )
        y = np.asarray(y)
        if self.metric == "aurc":
            _need(estimator, "predict_uncertainty")
            return -aurc(
                _losses(estimator, X, y),
                np.asarray(estimator.predict_uncertainty(X), dtype=np.float64),
            )
        _need(estimator, "accept")
        accept = np.asarray(estimator.accept(X), dtype=bool)
        if self.metric == "coverage":
            return float(accept.mean()) if accept.size else math.nan
        if not accept.any():
            return (
                math.nan
            )  # the selective risk of no prediction is undefined; GridSearchCV ranks it last
        return -float(_losses(estimator, X, y)[accept].mean())


def selective_scorer(metric):
    """A scorer of a selective classifier for ``scoring=`` in ``GridSearchCV`` or ``cross_val_score``.

    The default score of :class:`rejectopt.SelectiveClassifier` is the selective accuracy, which
    rises as coverage falls: a search over the target picks its lowest coverage. These scorers
    measure what a reject option is for. As scikit-learn's scorers, greater is better: a
    metric where lower is better is returned negated, like its ``neg_`` scorers
    (``"neg_log_loss"``), so ``best_score_`` is minus the best AuRC or risk.

    Parameters
    ----------
    metric : {"aurc", "selective_risk", "coverage"}
        ``"aurc"``: minus the AuRC (eq. 27 of [1]; ``rejectopt.metrics.aurc``, ties by index)
        of the learned uncertainty score on the rows scored, in loss units (percent for the
        0/100 loss); it does not depend on the target, so it chooses the classifier and the
        score (e.g. ``estimator__C``, ``C_grid``, ``uncertainty_score``). ``"selective_risk"``:
        minus the mean loss of the predictions accepted at the fitted target (NaN when none
        is). ``"coverage"``: the share of the rows accepted at the fitted target; with
        ``target="risk"`` it chooses the model that accepts most at the same risk.

    Returns
    -------
    callable
        ``scorer(estimator, X, y)``. It reads the estimator's fitted classifier
        ``estimator_.predict`` (the prediction on every row, rejected or not), its ``loss``
        (``"zero_one"`` or ``"mae"``; the 0/100 loss when absent), ``predict_uncertainty`` and
        ``accept``, as :class:`rejectopt.SelectiveClassifier` provides them.

    Raises
    ------
    ValueError
        An unknown metric.

    References
    ----------
    .. [1] V. Franc, D. Prusa and V. Voracek, "Optimal Strategies for Reject Option
       Classifiers", Journal of Machine Learning Research 24(11):1-49, 2023.

    Examples
    --------
    >>> from sklearn.datasets import load_breast_cancer
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn.model_selection import GridSearchCV
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import StandardScaler
    >>> from rejectopt import SelectiveClassifier
    >>> X, y = load_breast_cancer(return_X_y=True)
    >>> model = SelectiveClassifier(make_pipeline(StandardScaler(), LogisticRegression()), target="risk", value=2,
    ...                             uncertainty_score="reg", C_grid=(1.0,))
    >>> grid = {"estimator__logisticregression__C": [0.01, 0.1, 1.0]}
    >>> search = GridSearchCV(model, grid, scoring=selective_scorer("coverage"), cv=3).fit(X, y)
    >>> search.best_params_, round(float(search.best_score_), 3)  # the largest coverage at a 2 % risk
    ({'estimator__logisticregression__C': 0.01}, 0.972)
    """
    if metric not in _METRICS:
        raise ValueError(
            f"selective_scorer: metric must be one of {', '.join(map(repr, _METRICS))}, got {metric!r}"
        )
    return _SelectiveScorer(metric)
