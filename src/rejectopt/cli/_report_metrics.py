"""Internal (the command line's report): ``select --metrics``, the registered metrics of the
learned score on the report rows, for ``report.json`` (``report.md``'s table of them:
:func:`rejectopt.cli._report.metrics_lines`)."""

from __future__ import annotations

import numpy as np

from ..metrics import FAILURE_METRICS, METRICS, metrics_table

__all__ = ["metrics_dict"]


#: The inputs of the failure detector's metrics: the graded loss's refusal is metrics_table's own.
_DETECTOR_INPUTS = ("loss", "uncertainty")


def _unavailable(name, labels, probabilities):
    """Why the table cannot feed the failure metric ``name``'s labels or probabilities (None: it
    can, or the metric reads the loss only)."""
    inputs = FAILURE_METRICS[name].inputs
    if "probabilities" in inputs and probabilities is None:
        return "a network's class probabilities (an NPZ or CSV of logits)"
    if "y_pred" in inputs and labels is None:
        return "the labels, which a table read with --loss-column or --loss mae does not give"
    return None


def metrics_dict(
    loss, uncertainty, names, loss_name, log_warning, *, labels=None, probabilities=None
):
    """``report.json``'s ``"metrics"``: each registered metric of the learned score, by name.

    ``loss`` and ``uncertainty`` are the report rows'; ``names`` a list of registered names or
    ``"all"`` (:func:`rejectopt.cli._options.report_metric_names`). The areas read the loss in its
    units, as ``aurc_report``; the failure detector reads the failures, ``loss > 0`` for the 0/100
    loss and the loss itself otherwise, whose graded values it refuses (ValueError for a named
    metric; ``"all"`` leaves them out and ``log_warning`` says so); the balanced-accuracy areas
    read ``labels`` (``(y_true, y_pred)`` of the report rows), the calibration metrics
    ``probabilities`` with the labels. A named metric whose inputs the table lacks is refused
    (ValueError saying which); ``"all"`` leaves it out.

    .. versionchanged:: 0.8.0
       The balanced-accuracy areas and the calibration metrics, where the table holds their
       inputs.
    """
    failed = loss > 0 if loss_name == "zero_one" else loss
    binary = bool(np.all((failed == 0) | (failed == 1)))
    missing = {n: _unavailable(n, labels, probabilities) for n in FAILURE_METRICS}
    if names == "all":
        detector = [n for n, m in FAILURE_METRICS.items() if m.inputs == _DETECTOR_INPUTS]
        if not binary:
            log_warning(
                f"the loss {loss_name} is not 0/1, so the failure detector's metrics "
                f"{', '.join(detector)} are left out of --metrics all"
            )
        left_out = set(detector) if not binary else set()
        names = [
            *METRICS,
            *(n for n in FAILURE_METRICS if missing[n] is None and n not in left_out),
        ]
    for name in names:
        if missing.get(name) is not None:
            raise ValueError(f"{name!r} needs {missing[name]}")
    areas = [n for n in names if n in METRICS]
    detected = [n for n in names if n not in METRICS]
    scores = {"learned_score": uncertainty}
    y_true, y_pred = (None, None) if labels is None else labels
    tables = [
        metrics_table(
            loss_of,
            scores,
            metrics=chosen,
            y_true=y_true,
            y_pred=y_pred,
            probabilities=probabilities,
        )
        for loss_of, chosen in ((loss, areas), (failed, detected))
        if chosen
    ]
    values = {
        name: table.loc[(METRICS.get(name) or FAILURE_METRICS[name]).label, "learned_score"]
        for table, chosen in zip(tables, [c for c in (areas, detected) if c])
        for name in chosen
    }
    return {
        name: {
            "label": (METRICS.get(name) or FAILURE_METRICS[name]).label,
            "higher_is_better": name in FAILURE_METRICS and FAILURE_METRICS[name].higher_is_better,
            "learned_score": float(values[name]),
        }
        for name in names
    }
