"""Internal: RiskCoverageDisplay, scikit-learn's Display API for risk-coverage curves.

Follows ``sklearn.metrics.RocCurveDisplay``: the constructor stores the computed curve,
:meth:`RiskCoverageDisplay.plot` draws it (and returns the display with ``ax_``, ``figure_``
and ``line_``), and the class methods compute and draw in one call. The metrics module sits
below the estimator in the import layers, so the estimator is duck-typed.
"""

import hashlib

import numpy as np

from ._bands import risk_coverage_band
from ._losses import per_example_loss
from ._risk_coverage import aurc, rc_curve
from ._scorer import _classifier_predictions, _need

#: Axis label of the risk for the losses of ``rejectopt.metrics.per_example_loss``.
_RISK_LABELS = {"zero_one": "Selective risk (%)", "mae": "Selective risk (mean absolute error)"}


def _field(result, name):
    """A field of a result given as a mapping or as an object with attributes."""
    return np.asarray(
        result[name] if isinstance(result, dict) else getattr(result, name), dtype=np.float64
    )


def _band(loss, uncertainty, confidence, simultaneous, loss_bound):
    """``(coverage, lower, upper)`` of :func:`rejectopt.metrics.risk_coverage_band`."""
    result = risk_coverage_band(
        loss, uncertainty, confidence=confidence, simultaneous=simultaneous, loss_bound=loss_bound
    )
    return _field(result, "coverage"), _field(result, "lower"), _field(result, "upper")


def _digest(*arrays):
    """A short hash of the arrays: a reference curve drawn once per axes, however many curves share it."""
    h = hashlib.sha1()
    for a in arrays:
        h.update(np.ascontiguousarray(a, dtype=np.float64).tobytes())
    return h.hexdigest()[:16]


class RiskCoverageDisplay:
    """Risk-coverage curve of a selective classifier: scikit-learn's Display API.

    Create it with :meth:`from_estimator` or :meth:`from_predictions` (or :meth:`from_losses`),
    which compute the curve and draw it; draw more curves on the same axes with
    ``ax=display.ax_``. All parameters are stored as attributes. The curve is
    :func:`rejectopt.metrics.rc_curve`: the selective risk of the ``i`` most certain rows
    against the coverage ``i / n``. Two references are drawn: the *oracle*, which ranks
    the rows by their own loss (the lowest curve any score reaches on these predictions), and
    *random* order, whose expected risk is the full-coverage risk at every coverage.

    Parameters
    ----------
    coverage, risk : ndarray of shape (n,)
        The curve's points.
    aurc : float or None, default=None
        Its AuRC (eq. 27 of [1]), shown in the legend.
    name : str or None, default=None
        Name of the curve in the legend.
    oracle_risk : ndarray of shape (n,) or None, default=None
        The oracle's risk at the same coverages.
    random_risk : float or None, default=None
        The full-coverage risk: random order's expected risk at every coverage.
    band : tuple of three ndarray or None, default=None
        ``(coverage, lower, upper)``: a confidence band of the curve
        (:func:`rejectopt.metrics.risk_coverage_band`).
    risk_label : str, default="Selective risk"
        The y axis label (the risk's unit).

    Attributes
    ----------
    line_ : matplotlib Line2D
        The curve.
    oracle_line_, random_line_ : matplotlib Line2D or None
        The references, shared by the curves that have the same ones.
    band_ : matplotlib PolyCollection or None
        The band.
    ax_ : matplotlib Axes
    figure_ : matplotlib Figure

    References
    ----------
    .. [1] V. Franc, D. Prusa and V. Voracek, "Optimal Strategies for Reject Option
       Classifiers", Journal of Machine Learning Research 24(11):1-49, 2023.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> y_true, y_pred = [0, 1, 1, 0, 1], [0, 1, 0, 0, 0]
    >>> display = RiskCoverageDisplay.from_predictions(y_true, y_pred, [0.1, 0.2, 0.9, 0.3, 0.5], name="score")
    >>> display.risk.round(1).tolist()
    [0.0, 0.0, 0.0, 25.0, 40.0]
    >>> round(display.aurc, 2), display.random_risk, display.line_.get_label()
    (13.0, 40.0, 'score (AuRC 13)')
    """

    def __init__(
        self,
        *,
        coverage,
        risk,
        aurc=None,
        name=None,
        oracle_risk=None,
        random_risk=None,
        band=None,
        risk_label="Selective risk",
    ):
        self.coverage = coverage
        self.risk = risk
        self.aurc = aurc
        self.name = name
        self.oracle_risk = oracle_risk
        self.random_risk = random_risk
        self.band = band
        self.risk_label = risk_label

    def plot(
        self,
        ax=None,
        *,
        name=None,
        plot_oracle=True,
        plot_random=True,
        plot_band=True,
        oracle_kw=None,
        random_kw=None,
        band_kw=None,
        **kwargs,
    ):
        """Draw the curve, its references and its band.

        Parameters
        ----------
        ax : matplotlib Axes or None, default=None
            Axes to draw on (e.g. another display's ``ax_``); None opens a new figure.
        name : str or None, default=None
            Name in the legend; None keeps :attr:`name`.
        plot_oracle, plot_random : bool, default=True
            Draw the oracle and the random-order references (once per axes when curves share them).
        plot_band : bool, default=True
            Draw the band, when the display has one.
        oracle_kw, random_kw, band_kw : dict or None, default=None
            Keyword arguments of the references' ``plot`` and of the band's ``fill_between``.
        **kwargs : dict
            Keyword arguments of the curve's ``plot``.

        Returns
        -------
        RiskCoverageDisplay
            ``self``, with ``ax_``, ``figure_``, ``line_``, ``oracle_line_``, ``random_line_``
            and ``band_``.
        """
        import matplotlib.pyplot as plt  # matplotlib: heavy, loaded only when a figure is drawn

        if ax is None:
            _, ax = plt.subplots()
        name = self.name if name is None else name
        label = name
        if self.aurc is not None:
            label = (
                f"{name} (AuRC {self.aurc:.3g})" if name is not None else f"AuRC {self.aurc:.3g}"
            )
        (self.line_,) = ax.plot(self.coverage, self.risk, **{"label": label, **kwargs})
        self.band_ = None
        if plot_band and self.band is not None:
            coverage, lower, upper = self.band
            self.band_ = ax.fill_between(
                coverage,
                lower,
                upper,
                **{
                    "color": self.line_.get_color(),
                    "alpha": 0.2,
                    "linewidth": 0,
                    "label": f"{name} band" if name is not None else "band",
                    **(band_kw or {}),
                },
            )
        self.oracle_line_ = self.random_line_ = None
        if plot_oracle and self.oracle_risk is not None:
            self.oracle_line_ = self._reference(
                ax,
                f"rejectopt-oracle-{_digest(self.coverage, self.oracle_risk)}",
                self.coverage,
                self.oracle_risk,
                {"label": "oracle", "color": "black", "linestyle": ":", **(oracle_kw or {})},
            )
        if plot_random and self.random_risk is not None:
            self.random_line_ = self._reference(
                ax,
                f"rejectopt-random-{_digest([self.random_risk])}",
                [0.0, 1.0],
                [self.random_risk, self.random_risk],
                {"label": "random order", "color": "grey", "linestyle": "--", **(random_kw or {})},
            )
        ax.set(xlabel="Coverage", ylabel=self.risk_label, xlim=(0.0, 1.0))
        ax.legend(loc="best")
        self.ax_, self.figure_ = ax, ax.figure
        return self

    @staticmethod
    def _reference(ax, gid, x, y, kw):
        """A reference line, drawn once per axes: an existing line with the same ``gid`` is reused."""
        for line in ax.get_lines():
            if line.get_gid() == gid:
                return line
        (line,) = ax.plot(x, y, **kw)
        line.set_gid(gid)
        return line

    @classmethod
    def from_losses(
        cls,
        loss,
        uncertainty,
        *,
        name=None,
        band=False,
        confidence=0.95,
        simultaneous=False,
        loss_bound=None,
        risk_label="Selective risk",
        ax=None,
        **kwargs,
    ):
        """Draw the curve of per-row losses ordered by an uncertainty score.

        Parameters
        ----------
        loss : array-like of shape (n,)
            Non-negative loss of each prediction.
        uncertainty : array-like of shape (n,)
            Uncertainty of each prediction (larger = more uncertain).
        name : str or None, default=None
            Name of the curve.
        band : bool, default=False
            Also draw the confidence band of :func:`rejectopt.metrics.risk_coverage_band`.
        confidence : float, default=0.95
            The band's level.
        simultaneous : bool, default=False
            A band holding over the whole curve at once, rather than at each coverage.
        loss_bound : float or None, default=None
            The largest loss the loss's definition allows, for the band (100 for the 0/100
            loss, ``K - 1`` for the absolute error on ``K`` ordered classes); None when the
            losses take both 0 and 1, or 0 and 100.
        risk_label : str, default="Selective risk"
            The y axis label (the risk's unit).
        ax : matplotlib Axes or None, default=None
            Axes to draw on.
        **kwargs : dict
            Keyword arguments of :meth:`plot`.

        Returns
        -------
        RiskCoverageDisplay
        """
        coverage, risk = rc_curve(loss, uncertainty)
        loss = np.asarray(loss, dtype=np.float64)
        _, oracle_risk = rc_curve(loss, loss)
        display = cls(
            coverage=coverage,
            risk=risk,
            aurc=aurc(loss, uncertainty),
            name=name,
            oracle_risk=oracle_risk,
            random_risk=float(loss.mean()),
            risk_label=risk_label,
            band=_band(loss, uncertainty, confidence, simultaneous, loss_bound) if band else None,
        )
        return display.plot(ax=ax, **kwargs)

    @classmethod
    def from_predictions(cls, y_true, y_pred, uncertainty, *, loss="zero_one", **kwargs):
        """Draw the curve of a classifier's predictions ordered by an uncertainty score.

        Parameters
        ----------
        y_true, y_pred : array-like of shape (n,)
            True and predicted labels.
        uncertainty : array-like of shape (n,)
            Uncertainty of each prediction (larger = more uncertain).
        loss : {"zero_one", "mae"}, default="zero_one"
            Loss of a prediction (:func:`rejectopt.metrics.per_example_loss`): the 0/100 loss
            (risk in percent) or the absolute error.
        **kwargs : dict
            Keyword arguments of :meth:`from_losses` (``name``, ``band``, ``ax``, ...).

        Returns
        -------
        RiskCoverageDisplay
        """
        kwargs.setdefault("risk_label", _RISK_LABELS.get(loss, "Selective risk"))
        losses = per_example_loss(loss, y_true, y_pred)
        if (
            "loss_bound" not in kwargs
        ):  # the bound from the loss's definition, not from the errors seen
            labels = np.concatenate([np.asarray(y_true).ravel(), np.asarray(y_pred).ravel()])
            kwargs["loss_bound"] = (
                100.0 if loss == "zero_one" else float(np.ptp(labels.astype(np.float64)))
            )
        return cls.from_losses(losses, uncertainty, **kwargs)

    @classmethod
    def from_estimator(cls, estimator, X, y, *, name=None, **kwargs):
        """Draw the curve of a fitted selective classifier on labelled rows.

        Parameters
        ----------
        estimator : object
            A fitted selective classifier such as :class:`rejectopt.SelectiveClassifier`: the
            curve orders the predictions of its classifier (``estimator_.predict``, every row,
            rejected or not) by its ``predict_uncertainty``, under its ``loss``.
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        name : str or None, default=None
            Name of the curve; None takes the classifier's class name.
        **kwargs : dict
            Keyword arguments of :meth:`from_losses` (``band``, ``ax``, ...).

        Returns
        -------
        RiskCoverageDisplay
        """
        _need(estimator, "predict_uncertainty", "RiskCoverageDisplay.from_estimator")
        y_pred = _classifier_predictions(estimator, X)
        if name is None:
            name = type(estimator.estimator_).__name__
        uncertainty = np.asarray(estimator.predict_uncertainty(X), dtype=np.float64)
        return cls.from_predictions(
            np.asarray(y),
            y_pred,
            uncertainty,
            loss=getattr(estimator, "loss", "zero_one"),
            name=name,
            **kwargs,
        )
