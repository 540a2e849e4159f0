"""One call for the table a failure-detection paper reports: every registered metric, per score.

:data:`._registry.METRICS` (the risk-coverage areas) and :data:`._failure_registry.FAILURE_METRICS`
(the failure detector, the balanced-accuracy areas, the calibration) each name their inputs, so a
table needs only the arrays: a metric whose inputs are all given gets a row, one column per score.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from .._params import Options, validate_params
from ._conventions import CONVENTIONS
from ._failure_registry import FAILURE_METRICS, LOSS_INPUTS
from ._registry import METRICS

__all__ = ["TABLE_PARAMETERS", "metric_inputs", "metric_names", "metrics_table"]

#: The scalar options of :func:`metrics_table`.
TABLE_PARAMETERS: dict[str, Any] = {"convention": Options(*CONVENTIONS)}

#: The inputs of a :data:`METRICS` area.
AREA_INPUTS = ("loss", "uncertainty")


def metric_names():
    """Every registered metric's name: :data:`METRICS`' then :data:`FAILURE_METRICS`'."""
    return [*METRICS, *FAILURE_METRICS]


def metric_inputs(name):
    """The inputs ``name`` reads (``"uncertainty"`` is the score), from its registry."""
    return AREA_INPUTS if name in METRICS else FAILURE_METRICS[name].inputs


def _is_binary(loss):
    """Whether every loss is 0 or 1: the failure detector's metrics need a binary failure."""
    values = np.asarray(loss, dtype=float)
    return bool(np.all((values == 0) | (values == 1)))


def _chosen(metrics, given, binary):
    """The names to compute: the asked ones (refused if unknown or unfed), else all that apply."""
    names = metric_names()
    given = {*given, "uncertainty"}  # the scores, one column each
    if metrics is not None:
        asked = [metrics] if isinstance(metrics, str) else list(metrics)
        unknown = [name for name in asked if name not in names]
        if unknown:
            raise ValueError(
                f"metrics_table: unknown metric(s) {', '.join(map(repr, unknown))}; valid "
                f"names are {', '.join(map(repr, names))}"
            )
        for name in asked:
            missing = [k for k in metric_inputs(name) if k not in given]
            if missing:
                raise ValueError(
                    f"metrics_table: metric {name!r} needs {', '.join(missing)}, not given"
                )
        graded = [name for name in asked if _needs_binary(name) and not binary]
        if graded:
            raise ValueError(
                f"metrics_table: {', '.join(map(repr, graded))} need a 0/1 loss (1 = the "
                "prediction failed), got a graded loss; pass e.g. (loss > 0) to choose the cut"
            )
        return asked
    fed = [name for name in names if all(k in given for k in metric_inputs(name))]
    left_out = [name for name in fed if _needs_binary(name) and not binary]
    if left_out:
        warnings.warn(
            f"metrics_table: the loss is not 0/1, so {', '.join(map(repr, left_out))} are left "
            "out (a failure detector needs a binary failure); pass e.g. (loss > 0) to add them",
            UserWarning,
            stacklevel=3,
        )
    return [name for name in fed if name not in left_out]


def _needs_binary(name):
    """The failure detector's metrics of ``(loss, uncertainty)`` refuse a graded loss."""
    return name in FAILURE_METRICS and FAILURE_METRICS[name].inputs == LOSS_INPUTS


def _value(name, given, score, convention):
    """One cell: the metric's own function on the given arrays, ``score`` as the uncertainty."""
    arrays = {**given, "uncertainty": score}
    if name in METRICS:
        return float(METRICS[name].function(given["loss"], score, convention=convention))
    return float(FAILURE_METRICS[name].function(*[arrays[k] for k in FAILURE_METRICS[name].inputs]))


def metrics_table(
    loss,
    scores,
    *,
    y_true=None,
    y_pred=None,
    probabilities=None,
    metrics=None,
    convention="paper",
):
    """Every registered metric of every score, one row per metric and one column per score.

    The rows are the metrics of :data:`METRICS` and :data:`FAILURE_METRICS` whose inputs are
    given, in registry order: the areas and the failure detector's metrics read ``loss``, the
    balanced-accuracy areas ``y_true`` and ``y_pred``, the calibration metrics ``probabilities``
    and ``y_true``. A calibration metric does not read the score: its row holds the same value in
    every column. The failure detector's metrics need a 0/1 loss: with a graded loss they are
    left out with a warning naming them (refused if asked for in ``metrics``).

    Parameters
    ----------
    loss : array-like of shape (n,)
        Per-example losses of the predictions; 0/1 (or boolean) for the failure detector.
    scores : mapping of str to array-like of shape (n,)
        The uncertainties (larger = more uncertain) by column name.
    y_true, y_pred : array-like of shape (n,), optional
        The labels and the predictions, for the balanced-accuracy areas and the calibration.
    probabilities : array-like of shape (n, n_classes), optional
        The class probabilities, for the calibration metrics (with ``y_true``).
    metrics : str or list of str, optional
        Registered names to compute, in this order; a name whose inputs are missing raises
        ValueError naming them. None (the default): every metric whose inputs are given.
    convention : str, default="paper"
        The areas' convention (:data:`CONVENTIONS`), passed to the :data:`METRICS` functions.

    Returns
    -------
    pandas.DataFrame
        Indexed by the metrics' labels (``"metric"``); a column ``better`` (``"higher"`` or
        ``"lower"``), then one column per score, in the order of ``scores``.

    Examples
    --------
    >>> scores = {"s": [0.1, 0.9, 0.2, 0.8], "t": [0.9, 0.1, 0.2, 0.8]}
    >>> table = metrics_table([0, 1, 0, 1], scores, metrics=["aurc", "failure_auroc"])
    >>> print(table.round(4).to_string(index_names=False))
             better       s       t
    AuRC      lower  0.2083  0.6667
    AUROC_f  higher  1.0000  0.2500
    """
    validate_params("metrics_table", {"convention": convention}, TABLE_PARAMETERS)
    if not isinstance(scores, Mapping) or not scores:
        raise ValueError("metrics_table: scores must be a non-empty mapping of name -> array")
    optional = {"y_true": y_true, "y_pred": y_pred, "probabilities": probabilities}
    given = {"loss": loss, **{k: v for k, v in optional.items() if v is not None}}
    names = _chosen(metrics, given, _is_binary(loss))
    rows = {}
    for name in names:
        higher = name in FAILURE_METRICS and FAILURE_METRICS[name].higher_is_better
        label = METRICS[name].label if name in METRICS else FAILURE_METRICS[name].label
        if "uncertainty" in metric_inputs(name):
            cells = {column: _value(name, given, s, convention) for column, s in scores.items()}
        else:  # a calibration metric: one value, whatever the score
            value = _value(name, given, None, convention)
            cells = dict.fromkeys(scores, value)
        rows[label] = {"better": "higher" if higher else "lower", **cells}
    table = pd.DataFrame.from_dict(rows, orient="index", columns=["better", *scores])
    table.index.name = "metric"
    return table
