"""Model selection on Val1 and the outputs (predictions, baseline scores) of section 5.2."""

import logging

import numpy as np
from sklearn.utils import check_array
from sklearn.utils.validation import check_consistent_length

from .._checks import check_1d
from ..scores import mcp, svm_margin
from ._crammer_singer import fit_crammer_singer_path
from ._linear import C_GRID, CS_TOL, BinaryHingeSVM, _fit_classifier, loss_weights
from ._registry import get_classifier
from ._xgb import XGB_GRID, train_xgb, xgb_outputs

__all__ = ["train_classifier", "classifier_outputs", "C_GRID"]

_LOSSES = ("zero_one", "mae")

log = logging.getLogger(__name__)


def _check_labels(y, n_classes, name):
    y = check_1d(y, name)
    if y.size and not np.all(np.equal(np.mod(y, 1), 0)):
        raise ValueError(f"{name} must hold integer labels 0..K-1")
    y = y.astype(np.int64)
    if y.size and (y.min() < 0 or (n_classes is not None and y.max() >= n_classes)):
        raise ValueError(
            f"{name} must lie in 0..{n_classes - 1 if n_classes else 'K-1'}, "
            f"got range [{y.min()}, {y.max()}]"
        )
    return y


def _error(y_true, y_pred, loss):
    if loss == "zero_one":
        return float(np.mean(y_true != y_pred))
    return float(np.mean(np.abs(y_true - y_pred)))


def train_classifier(
    kind,
    X_trn,
    y_trn,
    X_val,
    y_val,
    C_grid=None,
    random_state=0,
    loss=None,
    n_classes=None,
    c_scaling="sum",
    n_jobs=1,
):
    """Train one model per ``C`` on Trn1 and keep the best on Val1 (section 5.2).

    Parameters
    ----------
    kind : {"lr", "svm", "svor", "xgb"}
        Model; see :func:`~rejectopt.classifiers.make_classifier` for the exact
        objectives and the ``C`` convention (``C/n`` on the summed loss), and
        :func:`~rejectopt.classifiers._xgb.train_xgb` for ``"xgb"`` (XGBoost, no ``C``).
    X_trn, y_trn : arrays of shape (n, d) and (n,)
        Trn1; integer labels in ``0..n_classes-1``.
    X_val, y_val : arrays of shape (m, d) and (m,)
        Val1.
    C_grid : sequence or None, default=None
        Linear models: the values of ``C``; None -> ``C_GRID = (1, 10, 100, 1000)``.
        ``"xgb"``: None (-> ``XGB_GRID``) or a sequence of hyper-parameter dicts;
        numbers raise ValueError (XGBoost has no ``C``).
    random_state : int, default=0
        Seed of the models (and of XGBoost).
    loss : {"zero_one", "mae"} or None, default=None
        Validation error; None means ``"mae"`` for ``"svor"`` and ``"zero_one"``
        otherwise.
    n_classes : int or None, default=None
        Size of the global label space; None infers ``max(y_trn, y_val) + 1``.
        Pass it when a class may be absent from both splits.
    c_scaling : {"sum", "mean"}, default="sum"
        Loss weight ``C`` (default) or ``C/n``; see
        :func:`~rejectopt.classifiers.make_classifier`. Ignored by ``"xgb"``.
    n_jobs : int, default=1
        Threads of XGBoost; ignored by the linear models.

    Returns
    -------
    model : sklearn.pipeline.Pipeline or XGBLabelSpaceClassifier
        Fitted ``Pipeline(StandardScaler, model)`` for the chosen ``C``; for
        ``"xgb"`` the chosen booster (``model.best_params_`` = its
        hyper-parameters with the early-stopped number of rounds).
    C : float
        The chosen ``C``: smallest validation error; ties go to the smaller ``C``.
        For ``"xgb"``: the index of the chosen point of the grid, as a float
        (this is what the summary's ``C_classifier`` column holds for xgb);
        ties go to the earlier grid point.
    errors : dict
        ``C -> validation error`` (fraction misclassified, or MAE); for
        ``"xgb"`` ``float(grid index) -> validation error``.
    """
    info = get_classifier(kind)
    if loss is None:
        loss = info.loss
    if loss not in _LOSSES:
        raise ValueError(f"loss must be one of {_LOSSES}, got {loss!r}")
    X_trn = check_array(X_trn, dtype=float)
    X_val = check_array(X_val, dtype=float)
    check_consistent_length(X_trn, y_trn)
    check_consistent_length(X_val, y_val)
    if X_trn.shape[1] != X_val.shape[1]:
        raise ValueError(f"X_trn has {X_trn.shape[1]} features, X_val {X_val.shape[1]}")
    y_trn = _check_labels(y_trn, n_classes, "y_trn")
    y_val = _check_labels(y_val, n_classes, "y_val")
    if n_classes is None:
        n_classes = int(max(y_trn.max(), y_val.max())) + 1
    return info.cls.train(
        X_trn,
        y_trn,
        X_val,
        y_val,
        C_grid=C_grid,
        n_classes=n_classes,
        random_state=random_state,
        n_jobs=n_jobs,
        loss=loss,
        c_scaling=c_scaling,
    )


class _LinearModel:
    """Train / outputs of the linear models of section 5.2: one model per C, the best on Val1."""

    kind = ""

    @classmethod
    def train(
        cls,
        X_trn,
        y_trn,
        X_val,
        y_val,
        *,
        C_grid,
        n_classes,
        random_state,
        n_jobs,
        loss,
        c_scaling="sum",
    ):
        C_grid = C_GRID if C_grid is None else C_grid
        if len(C_grid) == 0:
            raise ValueError("C_grid is empty")
        best = None
        errors = {}
        models = cls._fit_grid(
            X_trn,
            y_trn,
            sorted(C_grid),
            n_classes=n_classes,
            random_state=random_state,
            c_scaling=c_scaling,
        )
        for C, model in zip(sorted(C_grid), models):
            _log_certificate(cls.kind, C, model[-1])
            y_hat = cls.outputs(model, X_val, n_classes=n_classes)["y_pred"]
            errors[C] = _error(y_val, y_hat, loss)
            if best is None or errors[C] < best[2]:
                best = (model, C, errors[C])
        return best[0], best[1], errors

    @classmethod
    def _fit_grid(cls, X_trn, y_trn, C_grid, *, n_classes, random_state, c_scaling):
        """One fitted ``Pipeline(StandardScaler, model)`` per C of ``C_grid`` (increasing)."""
        return [
            _fit_classifier(
                cls.kind,
                X_trn,
                y_trn,
                C=C,
                n_classes=n_classes,
                random_state=random_state,
                c_scaling=c_scaling,
            )
            for C in C_grid
        ]


#: The words a job's log uses for a fit that stopped at its iteration cap without its convergence
#: test passing; ``workflow/scripts/timing.py`` lists every such log line in ``timing.md``.
CAP_MESSAGE = "stopped at its iteration cap"


def _log_certificate(kind, C, est):
    """Log a solver's optimality certificate (SVOR, the SVMs: ``objective_``, ``rel_gap_``, ...), and warn
    with :data:`CAP_MESSAGE` when the fit stopped at its iteration cap (LR: scikit-learn's ``n_iter_`` at
    ``max_iter``; the certified solvers: ``converged_`` false) -- never silently."""
    if hasattr(est, "rel_gap_"):
        log.info(
            "%s C=%g: objective %.10g, relative duality gap %.2e, %d iterations, converged %s",
            kind,
            C,
            est.objective_,
            est.rel_gap_,
            est.n_iter_,
            est.converged_,
        )
        if not est.converged_:
            log.warning(
                "%s C=%g %s (%d iterations, relative duality gap %.2e above its tolerance)",
                kind,
                C,
                CAP_MESSAGE,
                est.n_iter_,
                est.rel_gap_,
            )
    elif hasattr(est, "max_iter") and np.max(getattr(est, "n_iter_", 0)) >= est.max_iter:
        log.warning(
            "%s C=%g %s (%d iterations, gradient tolerance %g not reached)",
            kind,
            C,
            CAP_MESSAGE,
            int(np.max(est.n_iter_)),
            est.tol,
        )


class LogisticRegressionModel(_LinearModel):
    """Multinomial logistic regression (:func:`~rejectopt.classifiers.make_classifier` ``"lr"``)."""

    kind = "lr"

    @staticmethod
    def outputs(model, X, n_classes=None):
        est, Z = model[-1], model[:-1].transform(X)
        classes, K = _label_space(est, n_classes)
        p = est.predict_proba(Z)
        proba = np.zeros((X.shape[0], K))
        proba[:, classes] = p
        return {"y_pred": classes[np.argmax(p, axis=1)], "baseline": mcp(p), "proba": proba}


class LinearSVMModel(_LinearModel):
    """Linear SVM: exact binary hinge, Crammer-Singer for K > 2 (:func:`make_classifier` ``"svm"``)."""

    kind = "svm"

    @staticmethod
    def outputs(model, X, n_classes=None):
        est, Z = model[-1], model[:-1].transform(X)
        if isinstance(est, BinaryHingeSVM):
            f = est.decision_function(Z)
            return {"y_pred": (f > 0).astype(np.int64), "baseline": svm_margin(f), "decision": f}
        classes, K = _label_space(est, n_classes)
        F = est.decision_function(Z)
        if F.ndim == 1:  # only two classes present in training
            F = np.column_stack([-F, F]) / 2.0
        D = np.full((X.shape[0], K), -np.inf)
        D[:, classes] = F
        return {"y_pred": classes[np.argmax(F, axis=1)], "baseline": svm_margin(F), "decision": D}

    @classmethod
    def _fit_grid(cls, X_trn, y_trn, C_grid, *, n_classes, random_state, c_scaling):
        """K > 2: one scaler and the Crammer-Singer path warm-started along C
        (:func:`fit_crammer_singer_path`; each fit certified to :data:`CS_TOL`), the same
        models as :func:`make_classifier` up to the solver tolerance; binary: as every linear model."""
        if n_classes == 2:
            return super()._fit_grid(
                X_trn,
                y_trn,
                C_grid,
                n_classes=n_classes,
                random_state=random_state,
                c_scaling=c_scaling,
            )
        # scikit-learn: heavy, reading the registry must not load it
        from sklearn.pipeline import Pipeline
        from sklearn.preprocessing import StandardScaler  # scikit-learn: as above

        scaler = StandardScaler().fit(X_trn)
        weights = [loss_weights(C, X_trn.shape[0], c_scaling)[0] for C in C_grid]
        path = fit_crammer_singer_path(
            scaler.transform(X_trn), y_trn, weights, tol=CS_TOL, random_state=random_state
        )
        return [Pipeline([("scaler", scaler), ("model", est)]) for est in path]


class SVORModel(_LinearModel):
    """Support vector ordinal regression, SVOR-IMC (:class:`~rejectopt.classifiers.SVOR`)."""

    kind = "svor"

    @staticmethod
    def outputs(model, X, n_classes=None):
        est, Z = model[-1], model[:-1].transform(X)
        return {
            "y_pred": est.predict(Z),
            "baseline": est.margin(Z),
            "decision": est.decision_function(Z),
        }


class XGBoostModel:
    """Gradient-boosted trees on their own hyper-parameter grid (:func:`~rejectopt.classifiers._xgb.train_xgb`)."""

    @staticmethod
    def train(
        X_trn,
        y_trn,
        X_val,
        y_val,
        *,
        C_grid,
        n_classes,
        random_state,
        n_jobs,
        loss,
        c_scaling="sum",
    ):
        return _train_xgb_on_grid(
            X_trn, y_trn, X_val, y_val, C_grid, random_state, loss, n_classes, n_jobs
        )

    @staticmethod
    def outputs(model, X, n_classes=None):
        if n_classes is not None and int(n_classes) != model.n_classes_:
            raise ValueError(
                f"model was trained for n_classes={model.n_classes_}, got n_classes={n_classes}"
            )
        return xgb_outputs(model, X)


def _label_space(est, n_classes):
    """The model's known classes (int64) and the size of the global label space."""
    classes = np.asarray(est.classes_).astype(np.int64)
    K = int(classes.max()) + 1 if n_classes is None else int(n_classes)
    if classes.max() >= K:
        raise ValueError(f"model knows class {classes.max()} >= n_classes={K}")
    return classes, K


def _train_xgb_on_grid(X_trn, y_trn, X_val, y_val, grid, random_state, loss, n_classes, n_jobs):
    if grid is None:
        grid = XGB_GRID
    elif any(not isinstance(point, dict) for point in grid):
        raise ValueError(
            "xgb has no C: pass C_grid=None (XGB_GRID) or a sequence of hyper-parameter dicts"
        )
    model, index, errors = train_xgb(
        X_trn,
        y_trn,
        X_val,
        y_val,
        grid=grid,
        random_state=random_state,
        n_classes=n_classes,
        error=lambda y_true, y_pred: _error(y_true, y_pred, loss),
        n_jobs=n_jobs,
    )
    if model.capped_:
        log.warning(
            "xgb grid point %d %s (%d boosting rounds, Val1 log-loss still falling)",
            model.grid_index_,
            CAP_MESSAGE,
            model.best_iteration_ + 1,
        )
    return model, index, errors


def classifier_outputs(kind, model, X, n_classes=None):
    """Predictions and baseline uncertainty scores of a fitted classifier.

    Parameters
    ----------
    kind : {"lr", "svm", "svor", "xgb"}
        The registered classifier the model is of.
    model : fitted Pipeline or XGBLabelSpaceClassifier
        As returned by :func:`train_classifier`.
    X : array-like of shape (n, d)
        Raw (unscaled) features; the pipeline applies the Trn1 scaling.
    n_classes : int or None, default=None
        Global label space ``0..n_classes-1``; None takes it from the model
        (``max(classes_) + 1`` for LR and multiclass SVM, which misses trailing
        classes absent from training: pass it explicitly).

    Returns
    -------
    dict
        ``y_pred`` : int64 (n,), labels in ``0..n_classes-1``.
        ``baseline`` : float (n,), baseline uncertainty (higher = more uncertain):
        LR and XGB ``MCP = 1 - max_y p(y|x)``; binary SVM ``-|<w,x> + b|``; multiclass SVM
        ``-max_y (<w_y, x> + b_y)``; SVOR ``-min_y |<x, w> - b_y|`` (section 5.2).
        ``proba`` : float (n, n_classes), LR and XGB only; classes absent from training get 0.
        ``decision`` : SVM ``<w,x> + b`` (n,) binary or (n, n_classes) multiclass
        with ``-inf`` for classes absent from training; SVOR ``<x, w>`` (n,).
    """
    info = get_classifier(kind)
    X = check_array(X, dtype=float)
    return info.cls.outputs(model, X, n_classes=n_classes)
