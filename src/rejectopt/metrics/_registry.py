"""The registry of metrics of ``(loss, uncertainty)`` that tables, figures and the bootstrap name."""

from collections.abc import Callable
from typing import NamedTuple

from ._risk_coverage import augrc, aurc, eaugrc, eaurc


class Metric(NamedTuple):
    """A registered metric: ``function(loss, uncertainty) -> float``, its display label and meaning.

    Parameters
    ----------
    function : callable
        ``function(loss, uncertainty) -> float``, in loss units, lower is better.
    label : str
        The name tables and figures show, e.g. ``"AuRC"``.
    description : str
        One line saying what the metric measures and where it is defined.

    Examples
    --------
    >>> metric = METRICS["aurc"]
    >>> metric.label, metric.function([0, 0, 1], [0, 1, 2])
    ('AuRC', 0.1111111111111111)
    """

    function: Callable
    label: str
    description: str


#: Metrics of ``(loss, uncertainty)`` by name; all are areas in loss units, lower is better.
METRICS = {
    "aurc": Metric(
        aurc, "AuRC", "area under the risk-coverage curve (eq. 27 of Franc et al. 2023)"
    ),
    "augrc": Metric(
        augrc, "AUGRC", "area under the generalized risk-coverage curve (Traub et al. 2024)"
    ),
    "eaurc": Metric(eaurc, "E-AuRC", "AuRC minus the AuRC of the oracle ordering"),
    "eaugrc": Metric(eaugrc, "E-AUGRC", "AUGRC minus the AUGRC of the oracle ordering"),
}


def get_metric(name):
    """The metric function registered under ``name`` in :data:`METRICS`.

    Parameters
    ----------
    name : str or callable
        A key of :data:`METRICS`; a callable is returned unchanged.

    Returns
    -------
    callable
        ``function(loss, uncertainty) -> float``.

    Raises
    ------
    ValueError
        For an unknown name; the message lists the valid names.

    Examples
    --------
    >>> get_metric("augrc") is augrc
    True
    """
    if callable(name) and not isinstance(name, str):
        return name
    if isinstance(name, str) and name in METRICS:
        return METRICS[name].function
    raise ValueError(
        f"{name!r} is not a valid metric name; valid names are {', '.join(map(repr, METRICS))}"
    )
