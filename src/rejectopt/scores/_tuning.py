"""Selection of the regularisation constant C of a score learner by validation AuRC."""

from ..metrics import aurc
from ._registry import call_score

__all__ = ["SCORE_C_GRID", "select_C"]

#: The score learners' C grid of Section 5.1 ({0, 1, 10, 100, 1000}; 0 = unregularised).
SCORE_C_GRID = (0, 1, 10, 100, 1000)


def _with_C(estimator, C):
    """An unfitted copy of ``estimator`` with ``C``: ``clone`` for scikit-learn estimators, else
    ``type(estimator)(C=C)`` (the plugin contract of :func:`~rejectopt.scores.register_score`)."""
    if hasattr(estimator, "get_params") and hasattr(estimator, "set_params"):
        # here, not at the top: reading the score registry needs no scikit-learn
        from sklearn.base import clone

        return clone(estimator).set_params(C=C)
    return type(estimator)(C=C)


def _fit_per_C(estimator, X_trn, y_pred_trn, target_trn, C_grid):
    """One fitted estimator per C: the learner's warm-started path when it has one, else copies."""
    if hasattr(estimator, "fit_path"):
        return call_score(estimator, "fit_path", X_trn, y_pred_trn, target_trn, C_grid)
    fitted = []
    for C in C_grid:
        fitted.append(call_score(_with_C(estimator, C), "fit", X_trn, y_pred_trn, target_trn))
    return fitted


def select_C(
    estimator, X_trn, y_pred_trn, target_trn, X_val, y_pred_val, loss_val, C_grid=SCORE_C_GRID
):
    """Fit ``estimator`` for each C and keep the one with the smallest validation AuRC.

    Section 5.1 of [1]: C is chosen from {0, 1, 10, 100, 1000} by the AuRC
    (eq. 27) on the validation sample (Val2). Learners with a ``fit_path``
    method (:class:`SELE`) fit the whole grid sharing their precomputations,
    warm-started from the largest C down; the others are cloned per C.

    Parameters
    ----------
    estimator : SELE, REG, TCP or a registered plugin score
        Unfitted template; its ``C`` is overridden.
    X_trn, y_pred_trn, target_trn
        Training data; ``target_trn`` is the loss (SELE, REG) or the
        probability of the true class (TCP).
    X_val, y_pred_val : array-like
        Validation features and predicted classes.
    loss_val : array-like of shape (n_val,)
        Validation losses of the classifier (the selection criterion always
        uses the classification loss, also for TCP).
    C_grid : sequence of float, default=SCORE_C_GRID

    Returns
    -------
    best_estimator : estimator
        The fitted estimator with the smallest validation AuRC. Ties go to
        the larger C (the more regularised, more stable score).
    val_aurc : dict
        ``C -> validation AuRC``.

    Raises
    ------
    ScoreError
        The learner's ``fit`` or ``predict`` fails, or its uncertainty is not finite
        (``call_score`` of the registry), naming the score and its file.

    Examples
    --------
    Errors (loss 100) become likelier with the first feature; REG is fitted on 100 rows per C:

    >>> import numpy as np
    >>> from rejectopt.scores import REG
    >>> rng = np.random.default_rng(0)
    >>> X, y_pred = rng.normal(size=(200, 2)), np.zeros(200, dtype=int)
    >>> loss = 100.0 * (rng.random(200) < 1 / (1 + np.exp(-3 * X[:, 0])))
    >>> best, val_aurc = select_C(REG(), X[:100], y_pred[:100], loss[:100],
    ...                           X[100:], y_pred[100:], loss[100:])
    >>> best, {C: round(aurc, 2) for C, aurc in val_aurc.items()}  # random ranking: 46.0
    (REG(C=0), {0: 17.36, 1: 17.69, 10: 18.36, 100: 18.49, 1000: 18.43})
    """
    C_grid = list(C_grid)
    if not C_grid:
        raise ValueError("C_grid must contain at least one value")
    fitted = _fit_per_C(estimator, X_trn, y_pred_trn, target_trn, C_grid)
    n_val = len(loss_val)
    val_aurc = {
        C: aurc(loss_val, call_score(est, "predict", X_val, y_pred_val, n_rows=n_val))
        for C, est in zip(C_grid, fitted)
    }
    best = min(range(len(C_grid)), key=lambda k: (val_aurc[C_grid[k]], -C_grid[k]))
    return fitted[best], val_aurc
