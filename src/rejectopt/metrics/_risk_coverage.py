"""Risk-coverage curve and its areas: AuRC, AUGRC, excess areas, risk at coverage, coverage at risk.

Every area goes through :class:`._weighted._Sample` (sorted once, evaluated under multiplicity weights), so
:func:`rejectopt.metrics.bootstrap_ci` runs a block of resamples with the single sample's code.
[1] and [2]: the references of :mod:`rejectopt.metrics`.
"""

import collections.abc
import numbers

import numpy as np
import pandas as pd

from ..selective import SelectionFunction, empirical_risk_coverage
from . import _bands, _conventions, _parameters
from ._losses import _as_loss, _as_loss_and_uncertainty
from ._weighted import (
    _augrc_of_groups,
    _augrc_rows,
    _aurc_rows,
    _coverage_at_risk_rows,
    _eaugrc_rows,
    _eaurc_rows,
    _one_row,
    _risk_at_coverage_rows,
    _Sample,
)


def rc_curve(loss, uncertainty, *, groups=None):
    """Risk-coverage curve of a selective classifier on a finite sample.

    Sorted by ``uncertainty`` ascending, ties by index (stable); with ``L(i)`` the sum of the
    first ``i`` sorted losses, the points are ``(i/n, L(i)/i)``, ``i = 1..n`` ([1], Sec. 2.4).

    Parameters
    ----------
    loss : array-like of shape (n,)
        Non-negative losses of the classifier's predictions.
    uncertainty : array-like of shape (n,)
        Uncertainty scores, larger = more uncertain.
    groups : array-like of shape (n,), optional
        A group label per row; then each group's own curve (see :func:`selective_report`).

    Returns
    -------
    coverage, risk : ndarray of shape (n,)
        ``i / n`` and the selective risk ``L(i) / i``; with ``groups`` a dict from each label
        to its ``(coverage, risk)``.

    Examples
    --------
    >>> cov, risk = rc_curve([0, 1, 0], [0.1, 0.9, 0.2])
    >>> risk.tolist()
    [0.0, 0.0, 0.3333333333333333]
    """
    if groups is not None:
        return _by_group(rc_curve, loss, uncertainty, groups)
    loss, uncertainty = _as_loss_and_uncertainty(loss, uncertainty)
    order = np.argsort(uncertainty, kind="stable")
    counts = np.arange(1, loss.size + 1, dtype=np.float64)
    risk = np.cumsum(loss[order]) / counts
    return counts / loss.size, risk


def aurc(loss, uncertainty, ties="index", convention="paper", *, coverage_range=None, groups=None):
    """Area under the risk-coverage curve.

    Eq. (27) of [1]: ``AuRC = (1/n) sum_i L(i)/i``, ``L(i)`` as in :func:`rc_curve`.

    Parameters
    ----------
    loss, uncertainty : array-like of shape (n,)
        The losses of the classifier's predictions and their uncertainty scores (:func:`rc_curve`).
    ties : {"index", "average"}, default="index"
        How examples with equal uncertainty are ordered.

        * ``"index"``: by example index (stable sort), the paper's convention.
        * ``"average"``: the exact expected AuRC over a random order inside each tie group;
          a group of ``m`` examples, loss sum ``S``, after ``a`` examples contributes
          ``sum_{j=1..m} (L(a) + j S/m) / (a + j)`` (AuRC is linear in the ``L(i)``).
          Invariant to the order of the examples.

        Also for the order-dependent conventions (``"torch-uncertainty"``, ``"geifman"``,
        ``"fd-shifts-legacy"``, ``"mapie"``, ``"probly"``): ``"index"`` is the library's sort made stable
        (its unstable sort varies by platform and length). fd-shifts' AURC is order-invariant.
        fd-shifts-legacy gives 0.0 for a single example whatever its loss: its curve has one
        point and its area sums over pairs of points (the library's own value, kept).
    convention : str, default="paper"
        ``"paper"`` or a library's (:data:`CONVENTIONS`; ``docs/guide/metric_conventions.md``),
        in loss units; ValueError when it does not define this metric.
    coverage_range : (float, float), optional
        ``(a, b)``, ``0 <= a < b <= 1``: the area over coverages in ``[a, b]`` only (not divided by
        ``b - a``). ``"paper"``: the integral of the step curve ``r(c) = L(i)/i`` for
        ``c in ((i-1)/n, i/n]``, whose full integral is eq. (27), so ``(0, 1)`` gives the AuRC;
        ``"fd-shifts"``: fd-shifts' ``evaluate_auc(cov_min=a, cov_max=b,
        interpolation="non-linear")``, the accepted loss linear in the coverage between its
        points (its only partial area; see ``docs/guide/metric_conventions.md`` for a quirk kept).
        Other conventions raise ValueError.
    groups : array-like of shape (n,), optional
        A group label per row: the metric of each group's own rows (see :func:`selective_report`).

    Returns
    -------
    float
        The AuRC, in loss units; with ``groups`` a dict from each label to its AuRC.

    Examples
    --------
    >>> aurc([0, 0, 1], [0, 1, 2])  # (0 + 0 + 1/3) / 3
    0.1111111111111111
    >>> aurc([1, 0], [0, 0]), aurc([1, 0], [0, 0], ties="average")
    (0.75, 0.5)
    >>> aurc([0, 1, 0, 1], [-0.9, -0.8, -0.7, -0.1], convention="torch-uncertainty")
    0.3611111111111111
    >>> aurc([0, 0, 1, 1], [1, 2, 3, 4], coverage_range=(0, 0.5))  # risks 0, 0 over the first half
    0.0
    >>> aurc([0, 1, 0, 1], [1, 2, 3, 4], groups=["a", "a", "b", "b"])
    {'a': 0.25, 'b': 0.25}
    """
    _parameters.check("aurc", ties=ties, convention=convention)
    if groups is not None:
        return _by_group(
            aurc,
            loss,
            uncertainty,
            groups,
            ties=ties,
            convention=convention,
            coverage_range=coverage_range,
        )
    if coverage_range is not None:
        return _partial_area("aurc", loss, uncertainty, coverage_range, convention, ties)
    if convention != "paper":
        return _by_convention("aurc", loss, uncertainty, convention, ties)
    if ties == "average":
        return _one_row(_aurc_rows, loss, uncertainty, ties="average")
    _, risk = rc_curve(loss, uncertainty)
    return float(np.mean(risk))


def risk_full(loss):
    """Risk of the non-selective classifier (coverage 1), ``L(n)/n``.

    Parameters
    ----------
    loss : array-like of shape (n,)
        The losses of all predictions.

    Returns
    -------
    float
        The mean loss, in loss units.

    Examples
    --------
    >>> risk_full([0, 100, 0, 0])  # one error in four under the 0/100 loss: 25 %
    25.0
    """
    return float(np.mean(_as_loss(loss)))


def selective_risk_coverage(loss, uncertainty, threshold):
    """Selective risk and coverage when accepting examples with ``s <= threshold``.

    Parameters
    ----------
    loss, uncertainty : array-like of shape (n,)
        Per-example losses and uncertainties (:func:`rc_curve`).
    threshold : float
        Examples with ``uncertainty <= threshold`` are accepted.

    Returns
    -------
    risk : float
        Mean accepted loss; NaN when nothing is accepted.
    coverage : float
        Fraction of accepted examples.

    Notes
    -----
    :func:`rejectopt.selective.empirical_risk_coverage` with ``SelectionFunction(threshold, 1.0)``.

    Examples
    --------
    >>> risk, coverage = selective_risk_coverage([0, 100, 0, 100], [0.1, 0.2, 0.3, 0.9], 0.3)
    >>> round(risk, 4), coverage  # one error among the three accepted
    (33.3333, 0.75)
    >>> selective_risk_coverage([0, 100], [0.5, 0.9], 0.1)  # nothing accepted
    (nan, 0.0)
    """
    loss, uncertainty = _as_loss_and_uncertainty(loss, uncertainty, exact_order=False)
    threshold = float(threshold)
    if np.isnan(threshold):
        raise ValueError("threshold must not be NaN")
    return empirical_risk_coverage(loss, uncertainty, SelectionFunction(threshold, 1.0))


def _paper_only(convention, option):
    if convention != "paper":
        _conventions.check(convention, "aurc")
        raise ValueError(
            f"{option} is computed for the convention 'paper' only, got convention {convention!r}"
        )


def _group_labels(groups, n):
    """Validated group labels: 1-D, one per row, no missing value; returns ``(labels, inverse)`` sorted.

    The one reader of every ``groups=``. ``labels`` is the sorted list of distinct labels (numpy
    scalars as Python values) and ``inverse`` the index of each row's label in it, as
    ``np.unique(groups, return_inverse=True)``. A list, an array and a Series of the same labels
    give the same groups or the same refusal (:func:`_label_array`). Integer labels spanning a
    range of at most a few times ``n`` are counted instead of sorted (same result in O(n)); the
    missing-label check is one vectorised pass.
    """
    raw = _label_array(groups, n)
    missing = _missing_labels(raw)
    if missing.any():
        raise ValueError(
            f"groups has a missing label (None or NaN) at row {int(np.argmax(missing))} "
            f"({int(np.count_nonzero(missing))} in all); label every row, e.g. 'unknown'"
        )
    if raw.dtype == object:
        raw = _one_kind(raw)
    if raw.dtype.kind in "iu" and raw.size and int(raw.max()) - int(raw.min()) <= 4 * raw.size:
        low = raw.min()
        shifted = (raw - low).astype(np.intp)
        present = np.bincount(shifted) > 0
        labels = (np.flatnonzero(present) + low).astype(raw.dtype)
        inverse = (np.cumsum(present) - 1)[shifted]
    else:
        try:
            labels, inverse = np.unique(raw, return_inverse=True)
        except TypeError:
            raise ValueError(
                f"groups holds labels that cannot be sorted ({type(raw[0]).__name__}); convert "
                "them to one sortable type, e.g. str"
            ) from None
    return [v.item() if isinstance(v, np.generic) else v for v in labels], inverse


def _label_array(groups, n):
    """``groups`` as a 1-D array of ``n`` labels, each element as given (object dtype if mixed).

    ``np.asarray`` of a list that mixes kinds converts its elements to one dtype first: numbers
    and NaN become strings (``[1, "1"]`` one group ``"1"``, NaN a group ``"nan"``), booleans
    become integers. A list's own element types are read before that, and a list of several
    kinds is kept as objects, as an array or a Series of the same labels already is, so the
    checks below see the labels as the caller wrote them.
    """
    if isinstance(groups, (str, bytes, collections.abc.Iterator)):
        raise TypeError(
            f"groups must be an array-like of one label per row, got a {type(groups).__name__}"
        )
    raw = np.asarray(groups)
    if raw.ndim != 1 or raw.size != n:
        raise ValueError(f"groups must hold one label per row: {n} rows, got shape {raw.shape}")
    if (
        isinstance(groups, (list, tuple))
        and raw.dtype != object
        and len({_kind(t) for t in set(map(type, groups))}) > 1
    ):
        raw = np.empty(n, dtype=object)
        raw[:] = list(groups)
    return raw


def _kind(label_type):
    """The kind of a label's type: labels of two kinds are never one group, nor sorted together."""
    if issubclass(label_type, (bool, np.bool_)):
        return "booleans"
    if issubclass(label_type, numbers.Number):
        return "numbers"
    if issubclass(label_type, (str, np.str_)):
        return "strings"
    if issubclass(label_type, bytes):
        return "bytes"
    return label_type.__name__


def _one_kind(raw):
    """An object array of labels of one kind, numbers as a numeric array; ValueError on mixed kinds.

    Numbers of one object array may be ints and floats: as a numeric array, as numpy makes of a
    list of them, ``1`` and ``1.0`` are one group whatever the container.
    """
    kinds = {_kind(t) for t in set(map(type, raw))}
    if len(kinds) > 1:
        first = {}
        for row, label in enumerate(raw):
            first.setdefault(_kind(type(label)), row)
        named = " and ".join(f"{kind} (first at row {row})" for kind, row in first.items())
        raise ValueError(
            f"groups mixes labels of different kinds, {named}: such labels are never one group "
            "nor sorted together; convert the labels to one kind, e.g. str"
        )
    if kinds == {"numbers"}:
        numeric = np.asarray(raw.tolist())
        if numeric.dtype != object:
            return numeric
    return raw


def _missing_labels(raw):
    """Boolean mask of the labels that are missing: NaN, NaT, None (or pandas' NA in an object array)."""
    kind = raw.dtype.kind
    if kind in "fc":
        return np.isnan(raw)
    if kind in "mM":
        return np.isnat(raw)
    if kind == "O":
        return np.asarray(pd.isna(raw), dtype=bool)
    return np.zeros(raw.shape, dtype=bool)


def _compact_codes(inverse, n_groups):
    """``inverse`` in the smallest integer type: numpy's stable sort is a radix sort for 16-bit keys."""
    return inverse.astype(np.uint16 if n_groups <= 2**16 else np.intp, copy=False)


def _by_group(function, loss, uncertainty, groups, **kwargs):
    """``{label: function(loss[rows], uncertainty[rows], **kwargs)}`` over each group's own rows.

    Group-conditional metrics: each group's curve has its own coverage axis (the share of that
    group accepted), as if the group were the whole test set. The whole sample is validated
    first, so an error names the argument, not a group. One stable sort by label gives every
    group's rows, in their original order, as a slice: O(n log n), not one mask per group.
    """
    loss, uncertainty = _as_loss_and_uncertainty(loss, uncertainty)
    labels, inverse = _group_labels(groups, loss.size)
    order = np.argsort(_compact_codes(inverse, len(labels)), kind="stable")
    ends = np.cumsum(np.bincount(inverse, minlength=len(labels)))
    return {
        label: function(loss[rows], uncertainty[rows], **kwargs)
        for label, rows in zip(labels, np.split(order, ends[:-1]))
    }


def _group_areas(loss, uncertainty, inverse=None, n_groups=0):
    """AuRC and AUGRC ("paper", ties by index) of the whole sample and of every group, from one sort.

    Returns ``(aurc, augrc, group_aurc, group_augrc)``: two floats, equal to :func:`aurc` and
    :func:`augrc` of the sample, and two arrays of shape (n_groups,) equal, up to the order of
    summation (relative 1e-15), to those functions on each group's rows (``inverse`` as from
    :func:`_group_labels`, every group non-empty).

    How. One stable sort by uncertainty serves the whole sample; a stable sort of the group
    codes in that order (a radix sort up to 65,536 groups) then gives the rows by (group,
    uncertainty, index), each group a segment. AUGRC: each tie group of a segment weighs its
    loss sum by ``n_g - N + M/2`` (:func:`_augrc_of_groups`), summed per group by a bincount.
    AuRC: each group's cumulative losses must restart at its segment, and a global cumulative
    sum minus the segment's offset would lose precision for a small group late in the order;
    so groups of one size class (sizes in ``(2^(c-1), 2^c]``) are stacked as the rows of a
    zero-padded ``(groups, 2^c)`` array and summed cumulatively along the rows, each group's
    own sum in its own order. Padding at most doubles a class, so time is O(n log n) and
    memory O(n) for any number of groups.
    """
    n = loss.size
    order_u = np.argsort(uncertainty, kind="stable")
    loss_u, u_sorted = loss[order_u], uncertainty[order_u]
    overall_aurc = float(
        np.mean(np.cumsum(loss_u) / np.arange(1, n + 1, dtype=np.float64))
    )  # as rc_curve
    tie_starts = np.flatnonzero(np.concatenate([[True], u_sorted[1:] != u_sorted[:-1]]))
    counts, sums = np.ones((1, n)), loss_u[None, :].copy()  # as _Sample.groups(..., "tie")
    if tie_starts.size < n:
        counts, sums = (
            np.add.reduceat(counts, tie_starts, axis=1),
            np.add.reduceat(sums, tie_starts, axis=1),
        )
    overall_augrc = float(_augrc_of_groups(counts, sums, None, n)[0])
    del counts, sums, tie_starts
    if inverse is None or n_groups == 0:
        return overall_aurc, overall_augrc, np.empty(0), np.empty(0)
    codes = _compact_codes(inverse, n_groups)[order_u]
    within = np.argsort(codes, kind="stable")
    del order_u
    codes, loss_s, u_s = codes[within], loss_u[within], u_sorted[within]
    del within, loss_u, u_sorted
    sizes = np.bincount(inverse, minlength=n_groups)
    starts = np.cumsum(sizes) - sizes
    # AUGRC: tie groups inside each group's segment
    new = np.ones(n, dtype=bool)
    new[1:] = (codes[1:] != codes[:-1]) | (u_s[1:] != u_s[:-1])
    tie_starts = np.flatnonzero(new)
    del new, u_s
    tie_counts = np.diff(np.append(tie_starts, n))
    tie_group = codes[tie_starts].astype(np.intp)
    after = tie_starts + tie_counts - starts[tie_group]
    weight = (sizes[tie_group] - after) + 0.5 * tie_counts
    group_augrc = np.bincount(
        tie_group, weights=np.add.reduceat(loss_s, tie_starts) * weight, minlength=n_groups
    ) / (sizes.astype(np.float64) ** 2)
    del tie_starts, tie_counts, tie_group, after, weight, codes
    # AuRC: the groups of each size class stacked, zero-padded, cumulative sums along the rows
    size_class = np.zeros(n_groups, dtype=np.intp)
    size_class[sizes > 1] = np.ceil(np.log2(sizes[sizes > 1])).astype(np.intp)
    size_class += (2**size_class) < sizes  # guard the float log2
    group_aurc = np.empty(n_groups)
    for c in np.unique(size_class):
        members = np.flatnonzero(size_class == c)
        width, m = 2 ** int(c), sizes[members]
        first = np.cumsum(m) - m
        ranks = np.repeat(np.arange(members.size), m)
        position = np.arange(int(m.sum())) - first[ranks]
        stacked = np.zeros((members.size, width))
        stacked.reshape(-1)[ranks * width + position] = loss_s[starts[members][ranks] + position]
        del ranks, position
        np.cumsum(stacked, axis=1, out=stacked)
        stacked /= np.arange(1, width + 1, dtype=np.float64)
        stacked[np.arange(width)[None, :] >= m[:, None]] = 0.0
        group_aurc[members] = stacked.sum(axis=1) / m
        del stacked
    return overall_aurc, overall_augrc, group_aurc, group_augrc


def _check_range(coverage_range):
    try:
        low, high = (float(v) for v in coverage_range)
    except (TypeError, ValueError):
        raise ValueError(
            f"coverage_range must be a pair (a, b) of numbers, got {coverage_range!r}"
        ) from None
    if not 0.0 <= low < high <= 1.0:
        raise ValueError(f"coverage_range must satisfy 0 <= a < b <= 1, got {coverage_range!r}")
    return low, high


def _partial_area(metric, loss, uncertainty, coverage_range, convention, ties):
    """The AuRC / AUGRC over coverages in ``coverage_range`` (:func:`aurc`, :func:`augrc`)."""
    low, high = _check_range(coverage_range)
    if convention not in ("paper", "fd-shifts"):
        _conventions.check(convention, metric)  # an unknown convention is named first
        raise ValueError(
            f"coverage_range is defined for the conventions 'paper' and 'fd-shifts', not "
            f"{convention!r} ({_conventions.SOURCES[convention]}), whose curve has no partial area"
        )
    loss, uncertainty = _as_loss_and_uncertainty(loss, uncertainty)
    if convention == "fd-shifts":
        return float(_conventions.fd_shifts_partial(metric, loss, uncertainty, low, high))
    n = loss.size
    order = np.argsort(uncertainty, kind="stable")
    if metric == "augrc":  # points (k/n, Lbar(k)/n) at tie-group ends and (0, 0), joined linearly
        sample = _Sample(loss, uncertainty)
        counts, sums, _ = sample.groups(np.ones((1, n)), "tie")
        ends = np.concatenate(([0.0], np.cumsum(counts[0])))
        return float(
            _conventions.partial_trapezoid(
                ends / n, np.concatenate(([0.0], np.cumsum(sums[0]))) / n, low, high
            )
        )
    sorted_loss = (_conventions.tie_means(loss, uncertainty) if ties == "average" else loss)[order]
    i = np.arange(1, n + 1, dtype=np.float64)
    risk = np.cumsum(sorted_loss) / i
    width = np.clip(
        np.minimum(i, high * n) - np.maximum(i - 1.0, low * n), 0.0, None
    )  # of ((i-1)/n, i/n]
    return float(width @ risk / n)


def _by_convention(metric, loss, uncertainty, convention, ties, **targets):
    """``metric`` under a library's ``convention`` (:mod:`rejectopt.metrics._conventions`)."""
    _conventions.check(convention, metric)
    loss, uncertainty = _as_loss_and_uncertainty(loss, uncertainty)
    return float(_conventions.evaluate(metric, loss, uncertainty, convention, ties, **targets))


def augrc(loss, uncertainty, *, ties="index", convention="paper", coverage_range=None, groups=None):
    """Area under the generalized risk-coverage curve (AUGRC) of [2].

    Generalized risk at coverage ``k/n``: ``L(k)/n``, the accepted loss over *all* ``n``
    inputs (expected loss per input of accepting and being wrong). As fd-shifts
    ``RiskCoverageStats.augrc`` (``confids = -uncertainty``, ``residuals = loss``): points
    ``(k/n, L(k)/n)`` only at tie-group ends, plus ``(0, 0)``; trapezoidal area (a tie group is
    the line between its ends, the expectation over random tie-breaking); in loss units
    (fd-shifts' value / 1000).

    Parameters
    ----------
    loss, uncertainty : array-like of shape (n,)
        Losses and uncertainty scores, as in :func:`aurc`.
    ties, convention : str, default="index" and "paper"
        As in :func:`aurc`; ``"paper"`` is fd-shifts' AUGRC, and neither depends on ``ties``.
    coverage_range : (float, float), optional
        ``(a, b)``, ``0 <= a < b <= 1``: the area of the same piecewise-linear curve over
        ``[a, b]`` only (``"paper"`` and ``"fd-shifts"``; fd-shifts itself raises
        NotImplementedError for a partial AUGRC).
    groups : array-like of shape (n,), optional
        A group label per row, as in :func:`aurc`.

    Returns
    -------
    float
        The AUGRC, in loss units; with ``groups`` a dict from each label to its AUGRC.

    Notes
    -----
    Relation to the SELE loss, eq. (29) of [1] (:func:`sele_loss`,
    ``sele = 1/n^2 sum_i sum_j l_i [s_i <= s_j]``): for distinct scores it is the right Riemann
    sum of the generalized RC curve; the trapezoidal rule removes half of the last step::

        AUGRC = sele - L(n) / (2 n^2),       L(n) = sum_i l_i.

    With ties ``AUGRC = sele - 1/(2 n^2) sum_i l_i m_i``, ``m_i`` the size of ``i``'s tie group.
    For 0/1 losses with error rate ``e``: oracle ``e^2 / 2``, constant score ``e / 2``.

    Examples
    --------
    >>> augrc([0, 1], [0.1, 0.9])  # points (0, 0), (1/2, 0), (1, 1/2)
    0.125
    >>> augrc([0, 1], [0.5, 0.5])  # one tie group: (0, 0), (1, 1/2)
    0.25
    >>> augrc([0, 1], [0.5, 0.5], coverage_range=(0.5, 1))  # trapezoid from 1/4 to 1/2
    0.1875
    """
    _parameters.check("augrc", ties=ties, convention=convention)
    if groups is not None:
        return _by_group(
            augrc,
            loss,
            uncertainty,
            groups,
            ties=ties,
            convention=convention,
            coverage_range=coverage_range,
        )
    if coverage_range is not None:
        return _partial_area("augrc", loss, uncertainty, coverage_range, convention, ties)
    if convention != "paper":
        return _by_convention("augrc", loss, uncertainty, convention, ties)
    return _one_row(_augrc_rows, loss, uncertainty)


def eaurc(loss, uncertainty, *, ties="index", convention="paper", groups=None):
    """Excess AuRC: ``aurc(loss, uncertainty)`` minus the AuRC of the oracle ordering.

    The oracle is eq. 27 of [1] with ``s = loss``. Always >= 0 up to round-off: no ordering
    has a smaller ``L(i)`` than the oracle's. Other conventions subtract their own reference:
    Geifman and fd-shifts-legacy ``e + (1 - e) ln(1 - e)`` (``e`` the mean loss, the continuous
    limit for 0/1 losses; losses in {0, m}, e.g. the 0/100 loss, are taken as ``m`` times 0/1
    errors, graded losses in [0, 1] get the libraries' value, which can be < 0, and other losses,
    e.g. absolute errors above 1, raise ValueError); fd-shifts the same for 0/1 losses, else
    its trapezoidal AURC of the sorted losses (so it can be < 0).

    Parameters
    ----------
    loss, uncertainty : array-like of shape (n,)
        As in :func:`aurc`.
    ties, convention : str, default="index" and "paper"
        As in :func:`aurc` (``"average"``: the expected AuRC over random orders of the tied
        examples, minus the oracle's).
    groups : array-like of shape (n,), optional
        A group label per row, as in :func:`aurc` (each group against its own oracle).

    Returns
    -------
    float
        The excess AuRC, in loss units; with ``groups`` a dict by label.

    Examples
    --------
    >>> eaurc([0, 1], [0.9, 0.1])  # aurc (1 + 1/2)/2 minus oracle (0 + 1/2)/2
    0.5
    """
    _parameters.check("eaurc", ties=ties, convention=convention)
    if groups is not None:
        return _by_group(eaurc, loss, uncertainty, groups, ties=ties, convention=convention)
    if convention != "paper":
        return _by_convention("eaurc", loss, uncertainty, convention, ties)
    if ties == "average":
        return _one_row(_eaurc_rows, loss, uncertainty, ties="average")
    return _one_row(_eaurc_rows, loss, uncertainty)


def eaugrc(loss, uncertainty, *, ties="index", convention="paper", groups=None):
    """Excess AUGRC: ``augrc(loss, uncertainty)`` minus the AUGRC of the oracle ordering.

    Oracle: sorted by loss (fd-shifts' ``augrc_optimal``; ``e^2 / 2`` for 0/1 losses, the
    closed form fd-shifts' convention uses). Always >= 0 up to round-off.

    Parameters
    ----------
    loss, uncertainty : array-like of shape (n,)
        The sample, as in :func:`augrc`.
    ties, convention : str, default="index" and "paper"
        As in :func:`augrc`.
    groups : array-like of shape (n,), optional
        A group label per row, as in :func:`aurc`.

    Returns
    -------
    float
        The excess AUGRC, in loss units; with ``groups`` a dict by label.

    Examples
    --------
    >>> eaugrc([0, 1], [0.9, 0.1])  # 3/8 - 1/8
    0.25
    """
    _parameters.check("eaugrc", ties=ties, convention=convention)
    if groups is not None:
        return _by_group(eaugrc, loss, uncertainty, groups, ties=ties, convention=convention)
    if convention != "paper":
        return _by_convention("eaugrc", loss, uncertainty, convention, ties)
    return _one_row(_eaugrc_rows, loss, uncertainty)


def risk_at_coverage(
    loss,
    uncertainty,
    coverage,
    *,
    ties="index",
    convention="paper",
    groups=None,
    confidence=None,
    loss_bound=None,
):
    """Selective risk at an exact coverage, ties resolved as the paper's selection function.

    The expected selective risk (eqs. 5-6 of [1]) of
    :func:`rejectopt.selective.fit_bounded_abstention` (eqs. 22-24) fitted on the same sample.
    With ``Lbar`` the piecewise-linear interpolation of ``k -> L(k)`` between tie-group ends
    (and ``(0, 0)``)::

        risk_at_coverage = Lbar(omega n) / (omega n).

    For distinct scores and integer ``k = omega n``: :func:`rc_curve`'s ``L(k)/k``. Invariant
    to the order of the examples.

    Parameters
    ----------
    loss, uncertainty : array-like of shape (n,)
        Losses and uncertainties of the sample (:func:`aurc`).
    coverage : float
        Target coverage ``omega`` in (0, 1].
    ties, convention : str, default="index" and "paper"
        As in :func:`aurc`; the paper's ignores ``ties``. fd-shifts: the lowest risk among its
        working points (risk below every risk at higher coverage) of coverage >= ``coverage``;
        torch-uncertainty: the risk of the ``ceil(n coverage)`` most confident.
    groups : array-like of shape (n,), optional
        A group label per row: each group's own risk at ``coverage`` of that group, as in :func:`aurc`.
    confidence : float in (0, 1), optional
        Also return a confidence interval of the selective risk of the rule that accepts the
        ``coverage n`` least uncertain ("paper" only): Clopper-Pearson for losses in
        {0, ``loss_bound``}, else empirical Bernstein (:func:`risk_coverage_band`, pointwise).
    loss_bound : float, optional
        The largest loss the loss's definition allows (1 for 0/1 errors, 100 for the 0/100 loss);
        needed with ``confidence`` unless the losses take both values 0 and 1 or 0 and 100.

    Returns
    -------
    float
        The selective risk at ``coverage``, in loss units; with ``confidence`` a pair
        ``(risk, ConfidenceInterval)``; with ``groups`` a dict by label.

    Examples
    --------
    >>> risk_at_coverage([0, 1, 1, 0], [0, 1, 1, 2], 0.5)  # 0 + half of the tie group (1, 1)
    0.5
    """
    coverage = float(
        _parameters.check(
            "risk_at_coverage",
            optional=("confidence",),
            coverage=coverage,
            ties=ties,
            convention=convention,
            confidence=confidence,
        )["coverage"]
    )
    if groups is not None:
        return _by_group(
            risk_at_coverage,
            loss,
            uncertainty,
            groups,
            coverage=coverage,
            ties=ties,
            convention=convention,
            confidence=confidence,
            loss_bound=loss_bound,
        )
    if confidence is not None:
        _paper_only(convention, "confidence")
        value = risk_at_coverage(loss, uncertainty, coverage, ties=ties)
        return value, _bands.risk_interval_at(
            loss, uncertainty, coverage, confidence, loss_bound, owner="risk_at_coverage"
        )
    if convention != "paper":
        return _by_convention(
            "risk_at_coverage", loss, uncertainty, convention, ties, coverage=coverage
        )
    return _one_row(_risk_at_coverage_rows, loss, uncertainty, coverage=coverage)


def coverage_at_risk(
    loss,
    uncertainty,
    risk,
    *,
    ties="index",
    convention="paper",
    groups=None,
    confidence=None,
    loss_bound=None,
):
    """Largest coverage whose selective risk stays <= ``risk``, ties resolved as the paper's rule.

    The expected coverage of :func:`rejectopt.selective.fit_bounded_improvement` (Theorem 3
    of [1], eqs. 14-16): the largest ``omega in [0, 1]`` with ``Lbar(omega n) <= lambda omega n``
    (``Lbar`` as in :func:`risk_at_coverage`; fractional inside the boundary group, eq. 16),
    with its relative tolerance 1e-10 for round-off. An unreachable target is not an error
    but 0.0. Invariant to the order of the examples.

    Parameters
    ----------
    loss, uncertainty : array-like of shape (n,)
        The losses and uncertainties (:func:`aurc`).
    risk : float
        Target selective risk ``lambda >= 0``, in loss units.
    ties, convention : str, default="index" and "paper"
        As in :func:`risk_at_coverage`. fd-shifts: the largest working-point coverage with
        risk <= ``risk`` (ValueError if none, as fd-shifts fails); torch-uncertainty: the
        largest ``k/n`` whose ``k`` most confident have risk <= ``risk`` (NaN if none).
    groups : array-like of shape (n,), optional
        A group label per row, as in :func:`aurc`.
    confidence : float in (0, 1), optional
        Also return a confidence interval of the population's coverage at ``risk`` ("paper"
        only): the coverages where the simultaneous band of :func:`risk_coverage_band` is
        entirely below ``risk`` (lower end) and where its lower edge is (upper end).
    loss_bound : float, optional
        As in :func:`risk_at_coverage`.

    Returns
    -------
    float
        Coverage in [0, 1]; with ``confidence`` a pair ``(coverage, ConfidenceInterval)``; with
        ``groups`` a dict by label.

    Examples
    --------
    >>> coverage_at_risk([0, 0, 1, 1], [0, 1, 2, 3], 0.5)  # 4 accepted: mean loss 0.5
    1.0
    >>> coverage_at_risk([0, 0, 1, 1], [0, 1, 2, 3], 0.25)  # 2 + 2/3 accepted
    0.6666666666666666
    """
    risk = float(
        _parameters.check(
            "coverage_at_risk",
            optional=("confidence",),
            risk=risk,
            ties=ties,
            convention=convention,
            confidence=confidence,
        )["risk"]
    )
    if groups is not None:
        return _by_group(
            coverage_at_risk,
            loss,
            uncertainty,
            groups,
            risk=risk,
            ties=ties,
            convention=convention,
            confidence=confidence,
            loss_bound=loss_bound,
        )
    if confidence is not None:
        _paper_only(convention, "confidence")
        value = coverage_at_risk(loss, uncertainty, risk, ties=ties)
        return value, _bands.coverage_interval_at(
            loss, uncertainty, risk, value, confidence, loss_bound, owner="coverage_at_risk"
        )
    if convention != "paper":
        return _by_convention("coverage_at_risk", loss, uncertainty, convention, ties, risk=risk)
    return _one_row(_coverage_at_risk_rows, loss, uncertainty, risk=risk)
