"""Per-example losses ``l(y, h(x))`` and the validation of ``(loss, uncertainty)`` pairs.

The one home of the loss for the pipeline, the CLI and the estimator (Section 5.2 of [1]).

[1] is listed in the references of :mod:`rejectopt.metrics`.
"""

import numpy as np

from .._checks import as_loss, as_loss_and_uncertainty

#: The per-example losses by name: ``zero_one`` = ``100 [y != y']`` (the paper's 0/100 loss, so
#: risks read in percent, Section 5.2) and ``mae`` = ``|y - y'|`` (ordinal labels, Table 4).
LOSSES = ("zero_one", "mae")

#: The loss of each task of the benchmark (Section 5.2): classification 0/100, ordinal MAE.
TASK_LOSS = {"classification": "zero_one", "ordinal": "mae"}


def per_example_loss(name, y_true, y_pred):
    """The loss ``name`` (``"zero_one"`` or ``"mae"``) of each prediction, as float64.

    ``zero_one`` compares labels of any type; ``mae`` needs numeric labels.

    Parameters
    ----------
    name : {"zero_one", "mae"}
        The loss: ``100 [y != y']`` (risks read in percent) or ``|y - y'|``.
    y_true : array-like of shape (n,)
        True labels.
    y_pred : array-like of shape (n,)
        Predicted labels, of the same shape as ``y_true``.

    Returns
    -------
    ndarray of float64, shape (n,)
        The loss of each prediction.

    Raises
    ------
    ValueError
        An unknown loss name, or labels of different lengths.

    Examples
    --------
    >>> per_example_loss("zero_one", [0, 1, 2], [0, 2, 2]).tolist()
    [0.0, 100.0, 0.0]
    >>> per_example_loss("mae", [0, 1, 3], [0, 2, 1]).tolist()
    [0.0, 1.0, 2.0]
    """
    y_true = np.asarray(y_true)
    y_pred = np.asarray(y_pred)
    if name not in LOSSES:
        raise ValueError(f"unknown loss {name!r}: expected one of {', '.join(map(repr, LOSSES))}")
    if y_true.shape != y_pred.shape:
        raise ValueError(
            f"labels of shape {y_true.shape} and predictions of shape {y_pred.shape} differ"
        )
    if name == "zero_one":
        return 100.0 * (y_true != y_pred)
    return np.abs(y_true - y_pred).astype(float)


def task_loss(task, y_true, y_pred):
    """Loss of each prediction for a benchmark ``task`` (:data:`TASK_LOSS`): 0/100 or absolute error.

    Parameters
    ----------
    task : {"classification", "ordinal"}
        The benchmark task; its loss is ``TASK_LOSS[task]`` (Section 5.2 of [1]).
    y_true, y_pred : array-like of shape (n,)
        True and predicted labels, as in :func:`per_example_loss`.

    Returns
    -------
    ndarray of float64, shape (n,)
        The loss of each prediction, as :func:`per_example_loss` computes it.

    Raises
    ------
    ValueError
        An unknown task, or labels of different lengths.

    Examples
    --------
    >>> task_loss("classification", ["a", "b"], ["a", "a"]).tolist()
    [0.0, 100.0]
    >>> task_loss("ordinal", [0, 1, 3], [0, 2, 1]).tolist()
    [0.0, 1.0, 2.0]
    """
    if task not in TASK_LOSS:
        raise ValueError(f"unknown task {task!r}: expected 'classification' or 'ordinal'")
    return per_example_loss(TASK_LOSS[task], y_true, y_pred)


#: The metrics modules' names for the one check of a loss and of a (loss, uncertainty) pair, which
#: the selection functions and the OOD metrics share (:mod:`rejectopt._checks`).
_as_loss = as_loss
_as_loss_and_uncertainty = as_loss_and_uncertainty
