"""Internal: the bootstrap intervals of test AuRC of the paper's summaries (config ``table_intervals``).

One set of resamples of a dataset's test rows for all its splits (:func:`aurc_resamples`), the
AuRC of eq. (27) under each resample's multiplicities (:func:`_weighted_aurc`), and the summary's
interval columns from them (:func:`interval_columns`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...tables import INTERVAL_COLUMNS, INTERVAL_LEVEL

__all__ = ["aurc_resamples", "interval_columns"]

#: Largest resampled values of the AuRC intervals held at once (a few 16 MB arrays).
_INTERVAL_BLOCK_ELEMENTS = 1 << 21


def aurc_resamples(samples, n_resamples: int, seed: int) -> np.ndarray:
    """Eq. (27) AuRC of each sample under ``n_resamples`` resamples of the union of their test rows.

    ``samples`` lists ``(rows, loss, uncertainty)``: the dataset rows of a split's Tst part and
    that split's losses and uncertainties on them, in the same order. Each resample draws the
    union U of the listed rows ``|U|`` times with replacement, and every sample weighs its rows by
    their multiplicities in that draw (a row in two splits' Tst parts counts in both, as often).
    Resampling the dataset's rows once for all splits, not each split on its own, keeps the
    dependence of the splits' AuRC: random splits share test rows (20 % Tst parts share a fifth
    of their rows pairwise), and a mean over independently resampled splits would understate its
    spread. A split's rows then occur ``|Tst|`` times on average, not exactly.

    Parameters
    ----------
    samples : list of (array of int, array, array)
        Dataset rows, losses and uncertainties of each sample.
    n_resamples : int
        Resamples, >= 1.
    seed : int
        Seed of ``numpy.random.default_rng``.

    Returns
    -------
    numpy.ndarray of shape (len(samples), n_resamples)
        The resampled AuRC (ties broken by the sample's order, as :func:`rejectopt.metrics.aurc`).

    Raises
    ------
    ValueError
        A resample that draws none of a sample's rows (a Tst part of a handful of rows).
    """
    union = np.unique(np.concatenate([rows for rows, _, _ in samples]))
    positions = [np.searchsorted(union, rows) for rows, _, _ in samples]
    sorted_by_u = [np.argsort(uncertainty, kind="stable") for _, _, uncertainty in samples]
    losses = [
        np.asarray(loss, dtype=float)[order] for (_, loss, _), order in zip(samples, sorted_by_u)
    ]
    n = union.size
    rng = np.random.default_rng(seed)
    values = np.empty((len(samples), n_resamples))
    block = max(1, _INTERVAL_BLOCK_ELEMENTS // n)
    for start in range(0, n_resamples, block):
        rows = min(block, n_resamples - start)
        draws = (
            rng.integers(0, n, size=(rows, n), dtype=np.intp)
            + (np.arange(rows, dtype=np.intp) * n)[:, None]
        )
        counts = np.bincount(draws.ravel(), minlength=rows * n).reshape(rows, n)
        for i, (where, order, loss) in enumerate(zip(positions, sorted_by_u, losses)):
            values[i, start : start + rows] = _weighted_aurc(loss, counts[:, where[order]])
    return values


def _weighted_aurc(loss_sorted, counts) -> np.ndarray:
    """Eq. (27) of each row of multiplicities ``counts`` over examples sorted by uncertainty.

    On the ``m`` drawn examples in that order, ``sum_k L(k) / k = sum_i l_i (H(m) - H(i - 1))``
    (harmonic numbers H; example i's loss is in every ``L(k)`` from ``k = i`` on). Example j (loss
    ``l``, ``c`` copies after ``N`` drawn examples) holds positions ``N + 1 .. N + c`` and adds
    ``l (c H(m) - (G(N + c) - G(N)))`` with ``G(x) = sum_{t < x} H(t)``, so one running count (no
    running loss sum) and the examples of nonzero loss give the area; divided by ``m = sum c``.
    """
    after = np.cumsum(counts, axis=1)  # integers: exact indices into H and G
    total = after[:, -1]
    if not np.all(total > 0):
        raise ValueError(
            "a bootstrap resample of the Tst rows drew none of a split's rows: its Tst part is too "
            "small for an interval; set config table_intervals: false or use more data"
        )
    harmonic = np.concatenate([[0.0], np.cumsum(1.0 / np.arange(1, int(total.max()) + 1))])
    partial = np.concatenate([[0.0], np.cumsum(harmonic[:-1])])  # G(0 .. max m)
    lossy = np.flatnonzero(loss_sorted)
    loss, copies, ends = loss_sorted[lossy], counts[:, lossy], after[:, lossy]
    spans = partial[ends]
    spans -= partial[
        ends - copies
    ]  # G(N + c) - G(N), in place: the arrays are (resamples, examples)
    return (harmonic[total] * (copies @ loss) - spans @ loss) / total


def interval_columns(summary: pd.DataFrame, values: np.ndarray) -> pd.DataFrame:
    """:data:`~rejectopt.pipeline.tables.INTERVAL_COLUMNS` of the summary's rows from their resampled AuRC.

    The interval of the mean over splits is the percentile interval of the per-resample means
    (resample b's AuRC averaged over the splits of a classifier and score): the bootstrap
    distribution of the table's cell itself. Averaging the splits' bounds instead would give an
    interval too wide for the mean (bounds do not average: the mean's spread shrinks with the
    splits, up to their dependence).
    """
    alpha = 1.0 - INTERVAL_LEVEL
    quantiles = [alpha / 2, 1.0 - alpha / 2]
    split_low, split_high = np.quantile(values, quantiles, axis=1)
    mean_low, mean_high = np.empty(len(summary)), np.empty(len(summary))
    for _, index in summary.groupby(["classifier", "score"], sort=False).indices.items():
        low, high = np.quantile(values[index].mean(axis=0), quantiles)
        mean_low[index], mean_high[index] = low, high
    return pd.DataFrame(
        dict(zip(INTERVAL_COLUMNS, (split_low, split_high, mean_low, mean_high))),
        index=summary.index,
    )
