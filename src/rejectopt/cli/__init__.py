"""Selective prediction for your own classifier: ``python -m rejectopt select|apply``.

``select`` learns an uncertainty score (SELE or REG, eq. 37 of Franc, Prusa &
Voracek, 2023) from the features, predictions and losses of *your* classifier
on labelled data, and fits the paper's randomized Bayes selection function
(eq. 25) for a target coverage, a target selective risk or a reject cost.
``apply`` uses the resulting ``model.json`` to accept or reject new predictions.

With out-of-distribution (OOD) rows marked in a column (``--ood-column``, default
``is_ood``: 0/false = ID, 1/true = OOD), ``select`` also takes the targets of the OOD
reject-option models of :mod:`rejectopt.ood`: ``tpr=0.8,fpr=0.2`` (bounded TPR-FPR,
Theorem 3) or ``precision=0.9,recall=0.7`` (bounded precision-recall, Theorem 5)
(:class:`rejectopt.targets.OODTarget`). OOD rows need features and a predicted class
but no label or loss: the score learns from the ID rows, and the OOD rows are split
between the calibration and report rows only (:func:`rejectopt.fitting.split_ood_rows`).
The report gives TPR, FPR, precision, recall, coverage and the selective risk of the
accepted ID rows with intervals, and whether each bound is met. ``apply`` is the same
for such a model and does not read the OOD column.

A deep network's outputs are read as they are exported: an NPZ with arrays ``logits``,
``labels`` and optionally ``embeddings``, or a CSV with columns ``logit_0..``, ``label`` and
optionally ``emb_0..``; the prediction is the largest logit, the features are the embeddings
(else the logits), with the checks of :func:`rejectopt.logits.check_network_outputs`.

This package is a thin shell: argument parsing (``_main``), input tables
(``_table``), the model file (``_model``), output files (``_files``) and the
report texts (``_report``). The work is done by the library:
:func:`rejectopt.fitting.split_rows`, :func:`rejectopt.fitting.fit_selective`,
:func:`rejectopt.targets.parse_target`, :func:`rejectopt.selective.operating_point`,
the intervals of :mod:`rejectopt.stats`, the score registry and
``PerClassLinearScore.to_dict`` / ``from_dict``, and :func:`rejectopt.report.rc_figure`.

Row scheme of ``select`` (seeded permutation of the input rows)::

    train        1 - calibration - report  (default 50 %): fits the score;
                 its last ``validation`` share (default 30 % of it) picks C by AuRC,
                 then the score is refitted on the whole train part with that C
    calibration  --calibration-fraction    (default 30 %): fits the selection function
    report       --report-fraction         (default 20 %): held out; achieved coverage
                 and selective risk with 95 % confidence intervals

The model file is plain JSON (no pickle): loading a model from elsewhere cannot
run code, and every field is validated on load. Errors in the input exit with
status 2 and a one-line message naming the file, row and column (or the model
field); no partial output is left behind, an input is never overwritten, and an
existing output only with ``--force``.

Predicted classes not seen by ``select`` are an error at ``apply`` time by
default (a new value usually means a different label encoding); with
``--unseen-classes reject`` such rows are rejected and get uncertainty ``inf``
(stricter than the score's own rule, which gives them the largest training
uncertainty and could still accept them at a tie). Rows with a feature value
beyond +-1e150 are rejected the same way (``--extreme-values error`` stops instead).
"""

from ._errors import InputError
from ._main import build_parser, main
from ._model import MODEL_FORMAT, apply_model, load_model
from ._table import Table, load_table

__all__ = ["InputError", "MODEL_FORMAT", "Table", "apply_model", "build_parser", "load_model", "load_table", "main"]
