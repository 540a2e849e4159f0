"""Internal: SELE and REG with one weight vector shared by every class, on class-agnostic features of logits.

The per-class scores of eq. (37) of Franc, Prusa & Voracek (2023) fit ``K (d + 1)`` weights:
a network with K = 1,000 classes has a million, learned from a few rows per predicted class,
and SELE's per-class preconditioner alone needs ``K (d+1)^2`` numbers. The class-shared
learners read a network's logits ``f(x)`` (n x K) and map each row to a fixed, small set of
functions of its outputs that do not depend on which class is predicted (:data:`FEATURE_NAMES`):
the sorted top-5 softmax probabilities, the margins, the entropy, the energy, DOCTOR's ``g``,
norms of the centred logits and the MaxLogit-pNorm scores of Cattelan & Silva (2024). One linear
score ``s(x) = <w, phi(f(x))> + b`` is then learned on them (SELE's eq. 30 or REG's ridge
regression) in the structured-output mode of eq. (37) (one class): the weights and the fit grow
with n, not with K. The features are computed in row blocks of :data:`FEATURE_BLOCK_ELEMENTS`
logits that share one set of work buffers (:func:`feature_buffers`), so that a pass over the
logits holds a few block-sized arrays whatever n, and :meth:`SELEShared.precompute_features`
computes them once for a row set that several fits and predictions read (the C grid, the refit
and the prediction of :func:`rejectopt.fitting.fit_selective`).

The formulas of the features are also the library's post-hoc scores of :mod:`rejectopt.logits`
(one home per formula: :func:`log_softmax`, :func:`pnorm_max`).
"""

from __future__ import annotations

import numpy as np
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.utils import check_array

from ._ridge import REG
from ._sele import SELE

__all__ = [
    "BLOCK_ELEMENTS",
    "FEATURE_BLOCK_ELEMENTS",
    "FEATURE_NAMES",
    "LogitFeatures",
    "REGShared",
    "SELEShared",
    "block_rows",
    "feature_buffers",
    "first_non_finite",
    "log_softmax",
    "output_features",
    "pnorm_max",
    "pnorm_unit",
    "row_blocks",
]

#: Logits processed at once (rows x K) by the baselines of :mod:`rejectopt.logits`: a block's
#: float64 temporaries are 125 KiB each, so a pass over the logits holds its output, not copies of
#: the input. They stay below the C library's 128 KiB threshold above which each array is mapped
#: afresh and its pages fault in, which cost more than the arithmetic (the class-shared features
#: at K = 1,000 and n = 50,000, when they allocated their temporaries per block: 32-row blocks took
#: more than twice the CPU time of 16-row blocks, most of it in the kernel, and 2,048-row blocks
#: more still; measured: ``benchmarks/measured_records.csv``, topic ``shared_blocks``).
BLOCK_ELEMENTS = 16_000


def block_rows(n_columns):
    """Rows of a block of :data:`BLOCK_ELEMENTS` values for arrays of ``n_columns`` columns (at least 1).

    Examples
    --------
    >>> block_rows(1000), block_rows(2)
    (16, 8000)
    """
    return max(1, BLOCK_ELEMENTS // max(1, int(n_columns)))


#: Logits per block of :func:`output_features` (131 rows at K = 1,000). Its work buffers
#: (:func:`feature_buffers`: four float64 arrays of 1 MiB at this size and a boolean one) serve
#: every block, so that no block allocates an array of its size, and with about 70 numpy calls a
#: block their per-call cost stays small beside the arithmetic. At n = 50,000 and K = 1,000 (CPU
#: seconds, best of 4, on a 2-core machine with 1 MiB of L2 cache a core): fresh temporaries in
#: blocks of 16 rows, as before, about 1.07; these buffers in blocks of 16 rows 0.91, 64 rows
#: 0.68, 131 rows 0.65, 262 rows 0.63 and 524 rows 0.69.
FEATURE_BLOCK_ELEMENTS = 1 << 17


def feature_buffers(rows, n_columns):
    """Work buffers of :func:`_block_features` for blocks of up to ``rows`` rows of ``n_columns`` logits.

    Four float64 arrays and one boolean array of shape ``(rows, n_columns)``, allocated once
    for a pass over many blocks: a block reads and writes them in place (``out=``) instead of
    allocating its temporaries.
    """
    return np.empty((4, rows, n_columns)), np.empty((rows, n_columns), dtype=bool)


#: The p of the MaxLogit-pNorm features.
_FEATURE_P = (1, 2, 3, 4, 6, 8)
#: The sorted probabilities kept (padded with 0 for fewer classes).
_TOP_K = 5
#: Names of the columns of :func:`output_features`, in order.
FEATURE_NAMES = (
    *(f"p_top{k}" for k in range(1, _TOP_K + 1)),
    "log_p_top1",
    "margin",
    "logit_margin",
    "entropy",
    "energy",
    "doctor_g",
    "max_centred_logit",
    "norm1",
    "norm2",
    *(f"maxlogit_p{p}" for p in _FEATURE_P),
)


def row_blocks(n_rows, rows_per_block):
    """Consecutive slices of ``range(n_rows)`` of ``rows_per_block`` rows (the last one shorter).

    Examples
    --------
    >>> list(row_blocks(5, 2))
    [slice(0, 2, None), slice(2, 4, None), slice(4, 5, None)]
    """
    size = int(rows_per_block)
    if size < 1:
        raise ValueError(f"rows_per_block must be a positive integer, got {rows_per_block!r}")
    return [slice(start, min(n_rows, start + size)) for start in range(0, n_rows, size)]


def first_non_finite(values, rows_per_block=None):
    """``(row, column, count)`` of the first non-finite value of a 2-D array (row-major), or None.

    Checked in row blocks: no ``n x K`` boolean temporaries for a large, clean array; ``count``
    is the number of non-finite values in all (counted only when there is one).
    """
    blocks = row_blocks(
        values.shape[0], block_rows(values.shape[1]) if rows_per_block is None else rows_per_block
    )
    for rows in blocks:
        block = values[rows]
        if not np.isfinite(block).all():
            i, j = (int(v) for v in np.argwhere(~np.isfinite(block))[0])
            count = sum(int((~np.isfinite(values[b])).sum()) for b in blocks)
            return rows.start + i, j, count
    return None


def log_softmax(logits, out=None, work=None, row_max=None):
    """``log p(y|x) = f_y - log sum_k exp f_k`` per row, the largest logit factored out.

    A row whose logits span more than the float range (``[1e308, -1e308]``) gets ``-inf`` for
    the classes whose probability underflows, which is their limit, not an error. ``out`` and
    ``work`` (float64 arrays of the logits' shape, or None: new ones) receive the result and the
    exponentials ``exp(f - max f)``, and ``row_max`` is ``max f`` of each row when the caller has
    it: :func:`output_features` reuses its buffers for every row block and has the maxima.
    """
    logits = np.asarray(logits, dtype=np.float64)
    row_max = logits.max(axis=1) if row_max is None else row_max
    with np.errstate(over="ignore"):  # f_y - max f overflowing to -inf: its probability is 0
        shifted = np.subtract(logits, row_max[:, None], out=out)
    log_total = np.log(np.exp(shifted, out=work).sum(axis=1, keepdims=True))
    return np.subtract(shifted, log_total, out=shifted)


def pnorm_unit(logits, p):
    """The centred logits ``z = f - mean(f)`` over their p-norm, ``z / ||z||_p`` (Cattelan & Silva 2024).

    ``p = 0``: ``z`` itself (no normalisation); ``p = inf``: the max norm. The norm is taken of
    ``z / max|z|`` (the ratio is scale-free), so ``|z|^p`` does not overflow; a row of equal
    logits (``z = 0``) stays 0. Returns ``(unit, norm)``, ``norm`` the p-norm of ``z`` (1 for p = 0).
    """
    logits = np.asarray(logits, dtype=np.float64)
    scale = np.abs(logits).max(axis=1, keepdims=True)
    scale[scale == 0] = 1.0
    scaled = logits / scale
    z = scaled - scaled.mean(axis=1, keepdims=True)  # the centred logits over scale: no overflow
    if p == 0:
        return z * scale, np.ones(len(z))
    size = np.abs(z).max(axis=1)
    safe = np.where(size > 0, size, 1.0)[:, None]
    unit = z / safe
    norm = np.abs(unit).max(axis=1) if np.isinf(p) else (np.abs(unit) ** p).sum(axis=1) ** (1.0 / p)
    norm = np.where(size > 0, norm, 1.0)
    return unit / norm[:, None], norm * safe[:, 0] * scale[:, 0]


def pnorm_max(logits, p):
    """``max_k z_k / ||z||_p`` of the centred logits (:func:`pnorm_unit`): MaxLogit-pNorm's confidence."""
    return pnorm_unit(logits, p)[0].max(axis=1)


def output_features(logits, rows_per_block=None):
    """The class-agnostic features :data:`FEATURE_NAMES` of each row of ``logits`` (n, K), shape (n, 20).

    Every feature is a function of its row alone: the rows are processed in blocks of
    ``block_rows``, with the same result (bit for bit) as one pass over all rows. The blocks
    share one set of work buffers (:func:`feature_buffers`), so that a block allocates only a
    few arrays of one number per row.

    Parameters
    ----------
    logits : array-like of shape (n, K)
        A network's logits, finite, ``K >= 2``.
    rows_per_block : int or None, default=None
        Rows per block (None: :data:`FEATURE_BLOCK_ELEMENTS` logits a block): bounds the work
        buffers to five ``rows_per_block x K`` arrays.

    Returns
    -------
    ndarray of shape (n, 20)

    Raises
    ------
    ValueError
        Not 2-D with at least 2 columns, a non-finite value (naming the row and column), or a
        row whose features overflow the float range (its logits spanning nearly all of it,
        e.g. ``[1e308, -1e308, 0]``; naming the row and the feature).
    """
    logits = check_array(logits, dtype=np.float64, ensure_all_finite=False)
    n, K = logits.shape
    if K < 2:
        raise ValueError(
            f"the class-shared scores read a network's logits (n x K, K >= 2); got shape {logits.shape}"
        )
    blocks = row_blocks(
        n, max(1, FEATURE_BLOCK_ELEMENTS // K) if rows_per_block is None else rows_per_block
    )
    features = np.empty((n, len(FEATURE_NAMES)))
    work = feature_buffers(blocks[0].stop if blocks else 0, K)
    for rows in blocks:
        block = logits[rows]
        low, high = (
            block.min(axis=1),
            block.max(axis=1),
        )  # a NaN or an infinity shows in one of them
        if not (np.isfinite(low).all() and np.isfinite(high).all()):
            i, j, _ = first_non_finite(block)
            raise ValueError(
                f"logits: non-finite value {block[i, j]} at index {rows.start + i}, column {j}"
            )
        with np.errstate(over="ignore", invalid="ignore"):  # an overflow is named just below
            _block_features(block, out=features[rows], work=work, extremes=(low, high))
        _check_overflow(features[rows], rows.start, low, high)
    return features


def _check_overflow(features, first_row, low, high):
    """ValueError naming the first row of a block whose features overflow the float range.

    With finite logits only the features that carry the logits' scale can: the largest centred
    logit and the 1- and 2-norms of the centred logits (the p-norm ratios stay in [-1, 1]). A
    row such as ``[1e308, -1e308, 0]`` has ``||f - mean f||_1 = 2e308``: its true value is no
    float, so there is no finite value to compute instead, and clipping it to the largest
    float would give rows of very different spans one value. Left infinite, it makes the linear
    score +-inf by the sign of its weight alone (the most or the least confident row by chance,
    REG and SELE disagreeing); so the row is refused.
    """
    finite = np.isfinite(features)
    if finite.all():
        return
    i, j = (int(v) for v in np.argwhere(~finite)[0])
    raise ValueError(
        f"logits at index {first_row + i}: the feature {FEATURE_NAMES[j]!r} overflows the float "
        f"range ({features[i, j]}; the logits span {low[i]:g} to {high[i]:g}), and a score linear "
        "in it would be infinite; the class-shared scores refuse such a row"
    )


def _block_features(logits, out=None, work=None, extremes=None):
    """:func:`output_features` of one block of validated logits (n, K), written to ``out`` (n, 20) when given.

    One pass per quantity: the softmax's top 5 are the posteriors of the 5 largest logits (the
    posterior is increasing in the logit), found by 5 argmax passes, and the centred logits ``z``
    and ``|z| / max|z|`` are shared by every p-norm feature (:func:`pnorm_max` computes them per
    p; the maximum of ``z / ||z||_p`` is ``max z / ||z||_p``). Integer powers are products: the
    features equal :func:`pnorm_max`'s to rounding (about 1e-15 relative).

    Every array of the block's shape lives in ``work`` (:func:`feature_buffers`, or new ones),
    and each formula gives the value it gives on fresh arrays, bit for bit, in fewer passes:
    ``extremes``, the rows' ``(min f, max f)`` (the caller's finiteness check has them), serve
    the softmax and ``max |f| = max(max f, -min f)``; the largest ``log p`` is the one at the
    largest logit (rounding is monotone); and the entropy's ``p log p`` needs its 0 where
    ``p = 0`` only when a row's span ``max f - min f`` lets a probability underflow.
    """
    n, K = logits.shape
    if work is None:
        work = feature_buffers(n, K)
    (A, B, C, D), mask = (buffer[:n] for buffer in work[0]), work[1][:n]
    out = np.empty((n, len(FEATURE_NAMES))) if out is None else out
    low, high = (logits.min(axis=1), logits.max(axis=1)) if extremes is None else extremes
    log_p = log_softmax(logits, out=A, work=B, row_max=high)
    p = np.exp(log_p, out=B)
    k = min(_TOP_K, K)
    if K > k:  # the k largest logits, one argmax each (5 passes cost a quarter of a partial sort)
        remaining, rows = C, np.arange(n)
        np.copyto(remaining, logits)
        top_logits, top_p = np.empty((n, k)), np.empty((n, k))
        for rank in range(k):
            j = remaining.argmax(axis=1)
            top_logits[:, rank], top_p[:, rank] = logits[rows, j], p[rows, j]
            remaining[rows, j] = -np.inf
            if rank == 0:
                log_p_max = log_p[rows, j]
        top_p = -np.sort(-top_p, axis=1)
    else:
        top_logits, top_p, log_p_max = (
            -np.sort(-logits, axis=1),
            -np.sort(-p, axis=1),
            log_p.max(axis=1),
        )
    top = np.zeros((n, _TOP_K))
    top[:, :k] = top_p
    out[:, :_TOP_K] = top
    out[:, 5] = log_p_max
    out[:, 6] = top[:, 0] - top[:, 1]
    with np.errstate(
        over="ignore"
    ):  # a span beyond the float range: the margin is as large as floats go
        out[:, 7] = np.minimum(top_logits[:, 0] - top_logits[:, 1], np.finfo(np.float64).max)
    terms = np.multiply(
        p, log_p, out=C
    )  # the entropy's p log p, 0 where p = 0 (log p may be -inf there)
    with np.errstate(
        over="ignore"
    ):  # log p >= -(span + log K) up to rounding: p > 0 if that is above -700
        underflow = not np.max(high - low, initial=0.0) + np.log(K) < 700.0
    if underflow:
        np.copyto(terms, 0.0, where=np.equal(p, 0.0, out=mask))
    out[:, 8] = -terms.sum(axis=1)
    np.subtract(log_p, log_p_max[:, None], out=C)
    out[:, 9] = -(top_logits[:, 0] + np.log(np.exp(C, out=C).sum(axis=1)))  # the energy
    out[:, 10] = np.multiply(p, p, out=C).sum(axis=1)  # DOCTOR's g
    # log p and p (A, B) are used up: the centred logits z go to D, |z| and its powers to A, B, C.
    scale = np.maximum(high, -low)  # max |f|
    scale[scale == 0] = 1.0
    z = np.divide(logits, scale[:, None], out=D)
    np.subtract(
        z, (z.sum(axis=1) / K)[:, None], out=z
    )  # the centred logits over scale: no overflow
    abs_z = np.abs(z, out=A)
    z_max = z.max(axis=1)
    out[:, 11] = z_max * scale
    out[:, 12] = abs_z.sum(axis=1) * scale
    out[:, 13] = np.sqrt(np.multiply(z, z, out=B).sum(axis=1)) * scale
    size = abs_z.max(axis=1)
    safe = np.where(size > 0, size, 1.0)
    largest_unit = z_max / safe
    a = np.divide(abs_z, safe[:, None], out=A)
    sums = {1: a.sum(axis=1)}
    a2 = np.multiply(a, a, out=B)
    sums[2] = a2.sum(axis=1)
    a3 = np.multiply(a2, a, out=C)
    sums[3] = a3.sum(axis=1)
    a4 = np.multiply(a2, a2, out=A)
    sums[4] = a4.sum(axis=1)
    sums[6] = np.multiply(a3, a3, out=B).sum(axis=1)
    sums[8] = np.multiply(a4, a4, out=C).sum(axis=1)
    for column, q in enumerate(_FEATURE_P, start=14):
        out[:, column] = largest_unit / np.where(size > 0, sums[q] ** (1.0 / q), 1.0)
    return out


class LogitFeatures(np.ndarray):
    """:func:`output_features` of a network's logits, computed once, in place of the logits.

    A class-shared learner given these instead of the logits reads them as they are: the C
    grid, the refit and the prediction of :func:`rejectopt.fitting.fit_selective` then share one
    pass over the logits. Row subsets (``features[rows]``) keep the type and ``n_logits``, the
    width K of the logits they come from (what a fitted score checks and ``model.json`` records).

    Parameters
    ----------
    features : ndarray of shape (n, 20)
        :func:`output_features` of the logits.
    n_logits : int
        K, the number of logits of each row.

    Examples
    --------
    >>> import numpy as np
    >>> features = SELEShared().precompute_features(np.arange(12.0).reshape(4, 3))
    >>> features[[0, 2]].shape, features[[0, 2]].n_logits
    ((2, 20), 3)
    """

    def __new__(cls, features, n_logits):
        array = np.asarray(features, dtype=np.float64).view(cls)
        array.n_logits = int(n_logits)
        return array

    def __array_finalize__(self, obj):
        self.n_logits = getattr(obj, "n_logits", None)


class _SharedMixin:
    """``fit`` / ``predict`` on :func:`output_features` of the logits, one weight vector for all classes.

    After fitting, ``n_features_in_`` is the number of logits K (what ``model.json`` names as
    its feature columns) and ``mean_`` / ``scale_`` are 0 / 1 per logit (the raw bound of
    :data:`rejectopt.model.FEATURE_LIMIT` applies to them); the standardisation of the 20
    features is ``feature_mean_`` / ``feature_scale_``, the weights ``coef_`` of shape (1, 20).
    """

    #: :func:`rejectopt.logits.fit_logits` gives these learners the logits, whatever the feature source.
    reads_logits = True

    @staticmethod
    def _standardised_width(n_features):
        """Width of ``mean`` / ``scale`` / ``coef`` in the JSON form: the 20 features, whatever K."""
        return len(FEATURE_NAMES)

    def _to_logit_space(self, n_logits, n_classes=None):
        """Keep the features' standardisation apart; expose the logits' width (see the class docstring).

        With ``n_classes``, the one weight vector is laid out as eq. (37)'s per-class weights, equal
        for every class and every class seen (a class no training row predicted is scored alike):
        the form ``model.json`` and :func:`rejectopt.model.decide` read.
        """
        self.feature_mean_, self.feature_scale_ = self.mean_, self.scale_
        self.mean_, self.scale_ = np.zeros(n_logits), np.ones(n_logits)
        self.n_features_in_ = int(n_logits)
        if n_classes is not None:
            self.coef_ = np.repeat(self.coef_[:1], n_classes, axis=0)
            self.intercept_ = np.repeat(self.intercept_[:1], n_classes)
            self.class_seen_ = np.ones(n_classes, dtype=bool)
            self.n_classes_, self.structured_ = int(n_classes), False
        return self

    def _classes(self, y_pred):
        if self.n_classes is not None:
            return int(self.n_classes)
        y_pred = None if y_pred is None else np.asarray(y_pred)
        return int(y_pred.max()) + 1 if y_pred is not None and y_pred.size else 1

    def precompute_features(self, X):
        """:func:`output_features` of the logits ``X`` (n, K) as :class:`LogitFeatures`, for ``fit`` / ``predict``.

        Parameters
        ----------
        X : array-like of shape (n, K)
            The network's logits.

        Returns
        -------
        LogitFeatures of shape (n, 20)

        Raises
        ------
        ValueError
            As :func:`output_features`.
        """
        if isinstance(X, LogitFeatures):
            return X
        X = check_array(X, dtype=np.float64, ensure_all_finite=False)
        return LogitFeatures(output_features(X), X.shape[1])

    @staticmethod
    def _features(X):
        """``(features, K)`` of logits ``X``, or of :class:`LogitFeatures` as they are."""
        if isinstance(X, LogitFeatures):
            return np.asarray(X), X.n_logits
        features = output_features(X)
        return features, np.shape(X)[1]

    def _restored(self):
        """After :meth:`from_dict`: the JSON's ``mean`` / ``scale`` are the features' standardisation."""
        return self._to_logit_space(self.n_features_in_)

    def fit(self, X, y_pred, loss):
        """Fit on the logits ``X`` (n, K); ``y_pred`` is not read (the weights are shared).

        Parameters
        ----------
        X : array-like of shape (n, K) or LogitFeatures
            The network's logits, or their :meth:`precompute_features`.
        y_pred : array-like of shape (n,) or None
            Not read.
        loss : array-like of shape (n,)

        Returns
        -------
        self
        """
        features, n_logits = self._features(X)
        super().fit(features, None, loss)
        return self._to_logit_space(n_logits, self._classes(y_pred))

    def predict(self, X, y_pred=None):
        """Uncertainty of each row of logits ``X`` (larger = more uncertain), shape (n,); ``y_pred`` is not read."""
        if not hasattr(self, "feature_mean_"):
            raise NotFittedError(f"this {type(self).__name__} is not fitted yet: call fit first")
        if isinstance(X, LogitFeatures):
            features, n_logits = np.asarray(X), X.n_logits
        else:
            X = check_array(X, dtype=np.float64, ensure_all_finite=False)
            features, n_logits = None, X.shape[1]
        if n_logits != self.n_features_in_:
            raise ValueError(
                f"X has {n_logits} logits, but the score was fitted on {self.n_features_in_}"
            )
        Z = (
            (output_features(X) if features is None else features) - self.feature_mean_
        ) / self.feature_scale_
        return Z @ self.coef_[0] + self.intercept_[0]

    def to_dict(self):
        """:meth:`PerClassLinearScore.to_dict`, with the 20 features' standardisation as ``mean`` / ``scale``."""
        data = super().to_dict()
        data["mean"], data["scale"] = self.feature_mean_.tolist(), self.feature_scale_.tolist()
        return data


class SELEShared(_SharedMixin, SELE):
    """SELE (eq. 30) with one weight vector shared across classes, on :data:`FEATURE_NAMES` of the logits.

    Parameters as :class:`SELE`; ``X`` is the network's logits (n x K).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> logits = rng.normal(size=(300, 50)) * 3
    >>> loss = 100.0 * (rng.random(300) < 1 - np.exp(logits.max(1)) / np.exp(logits).sum(1))
    >>> score = SELEShared(C=1).fit(logits, logits.argmax(1), loss)
    >>> score.coef_.shape, bool((score.coef_ == score.coef_[0]).all())  # one weight vector, for each class
    ((50, 20), True)
    """

    def fit_path(self, X, y_pred, loss, C_grid):
        """:meth:`SELE.fit_path` on the features of the logits ``X``."""
        features, n_logits = self._features(X)
        fitted = super().fit_path(features, None, loss, C_grid)
        return [score._to_logit_space(n_logits, self._classes(y_pred)) for score in fitted]


class REGShared(_SharedMixin, REG):
    """REG (ridge regression of the loss) with one weight vector shared across classes, on :data:`FEATURE_NAMES`.

    Parameters as :class:`REG`; ``X`` is the network's logits (n x K).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> logits = rng.normal(size=(300, 50)) * 3
    >>> loss = 100.0 * (rng.random(300) < 1 - np.exp(logits.max(1)) / np.exp(logits).sum(1))
    >>> REGShared(C=1).fit(logits, None, loss).predict(logits[:2]).shape
    (2,)
    """

    def fit_path(self, X, y_pred, loss, C_grid):
        """One fit per C of ``C_grid`` sharing the features of the logits ``X`` (computed once)."""
        (features, n_logits), classes = self._features(X), self._classes(y_pred)
        fitted = []
        for C in C_grid:
            score = REG.fit(clone(self).set_params(C=C), features, None, loss)
            fitted.append(score._to_logit_space(n_logits, classes))
        return fitted
