"""Internal (the pipeline's report): display labels of the registered methods, classifiers and
metrics, the one home of what a reader sees.

What a table holds (:class:`rejectopt.pipeline.tables.TableSpec`) is imported from there, not re-exported.
"""

from __future__ import annotations

from ...classifiers import get_classifier
from ...metrics import FAILURE_METRICS, METRICS
from ...scores import get_score

__all__ = ["classifier_label", "label", "metric_label"]


def label(name: str) -> str:
    """Display label of a registered score (``sele`` -> ``SELE``); unknown names print as they are.

    Parameters
    ----------
    name : str
        Registered name of the score (:mod:`rejectopt.scores`).

    Returns
    -------
    str
        The registry's label, or ``name`` itself when no score of that name is registered.
    """
    return _registered_label(get_score, name)


def metric_label(name: str) -> str:
    """Display label of a metric of :data:`rejectopt.metrics.METRICS` (``augrc`` -> ``AUGRC``) or
    of :data:`rejectopt.metrics.FAILURE_METRICS` (``failure_auroc`` -> ``AUROC_f``).

    Parameters
    ----------
    name : str
        Key of the metric in either registry.

    Returns
    -------
    str
        The metric's label, or ``name`` itself for an unknown metric.
    """
    if name in METRICS:
        return METRICS[name].label
    return FAILURE_METRICS[name].label if name in FAILURE_METRICS else name


def classifier_label(name: str) -> str:
    """Display label of a registered classifier (``lr`` -> ``LR``).

    Parameters
    ----------
    name : str
        Registered name of the classifier (:mod:`rejectopt.classifiers`).

    Returns
    -------
    str
        The classifier's label, or ``name`` itself when none of that name is registered.
    """
    return _registered_label(get_classifier, name)


def _registered_label(lookup, name: str) -> str:
    try:
        return lookup(name).label
    except ValueError:  # not registered: the name as it is
        return name
