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
    """Display label of a registered score (``sele`` -> ``SELE``); unknown names print as they are."""
    try:
        return get_score(name).label
    except ValueError:
        return name


def metric_label(name: str) -> str:
    """Display label of a registered metric (``augrc`` -> ``AUGRC``)."""
    return METRICS[name].label if name in METRICS else name


def classifier_label(name: str) -> str:
    """Display label of a registered classifier (``lr`` -> ``LR``); unknown names print as they are."""
    try:
        return get_classifier(name).label
    except ValueError:
        return name
