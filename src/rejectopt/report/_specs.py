"""Display labels of the registered methods, classifiers and metrics: the one home of what a reader sees.

What a table holds (:class:`~rejectopt.experiments.paper.TableSpec`) is the experiment's; it is
re-exported here for the report's callers.
"""

from __future__ import annotations

from ..classifiers import get_classifier
from ..experiments.paper import TableSpec, landmarks_spec, table_specs
from ..metrics import METRICS
from ..scores import get_score

__all__ = ["TableSpec", "classifier_label", "label", "landmarks_spec", "metric_label", "table_specs"]


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

    Examples
    --------
    >>> label("sele"), label("mcp"), label("my_score")
    ('SELE', 'MCP', 'my_score')
    """
    try:
        return get_score(name).label
    except ValueError:
        return name


def metric_label(name: str) -> str:
    """Display label of a registered metric (``augrc`` -> ``AUGRC``).

    Parameters
    ----------
    name : str
        Name of a metric of :data:`rejectopt.metrics.METRICS`.

    Returns
    -------
    str
        The metric's label, or ``name`` itself for an unknown metric.

    Examples
    --------
    >>> metric_label("aurc"), metric_label("augrc"), metric_label("eaurc"), metric_label("other")
    ('AuRC', 'AUGRC', 'E-AuRC', 'other')
    """
    return METRICS[name].label if name in METRICS else name


def classifier_label(name: str) -> str:
    """Display label of a registered classifier (``lr`` -> ``LR``); unknown names print as they are.

    Parameters
    ----------
    name : str
        Registered name of the classifier (:mod:`rejectopt.classifiers`).

    Returns
    -------
    str
        The registry's label, or ``name`` itself when no classifier of that name is registered.

    Examples
    --------
    >>> classifier_label("lr"), classifier_label("xgb"), classifier_label("my_model")
    ('LR', 'XGBoost', 'my_model')
    """
    try:
        return get_classifier(name).label
    except ValueError:
        return name
