"""SELE: uncertainty score learned by minimising the chunked SELE proxy loss (eq. 30)."""

import copy
import math
import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from scipy.linalg import solve_triangular
from scipy.linalg.blas import dsyrk as syrk
from scipy.optimize import minimize
from sklearn.base import clone
from sklearn.utils import check_random_state

from ..exceptions import MemoryBudgetError
from ._base import PerClassLinearScore, single_threaded_blas
from ._ridge import _check_C
from ._tuning import SCORE_C_GRID

__all__ = ["SELE", "ChunkedSELEObjective", "make_chunks"]

_LOG2 = float(np.log(2.0))
_BATCH_ELEMENTS = (
    1 << 19
)  # pair-tensor elements per batch: 2 MiB float32 buffers, the L2 cache; fewer Python calls per pass
_FAST_RANGE = 20.0  # |centred s/2| up to which exp(s) is safe and accurate in float32
#: Default of SELE's ``memory_budget`` (bytes) when neither the parameter nor the environment sets it.
DEFAULT_MEMORY_BUDGET = 4 * 2**30
#: Environment variable setting SELE's default memory budget in bytes (e.g. ``8e9``).
MEMORY_BUDGET_ENV = "REJECTOPT_SELE_MEMORY_BUDGET"
_LBFGS_PAIRS = 30  # maxcor of the L-BFGS solve: 2 x 30 parameter-sized vectors
#: Width of the bins of positive-loss counts that group chunks (bipartite pairs are padded within a group).
_POSITIVE_BUCKET = 8
#: Float64 vectors of n rows a fit holds besides the design (losses as given and sorted, scores,
#: the gradients in the scores and per chunk, the chunks' centred scores and index arrays),
#: calibrated on the peak resident memory of fits at n = 1e5 .. 2e6 (benchmarks/bench_sele.py).
_ROW_VECTORS = 16


def memory_budget(value=None):
    """SELE's memory budget in bytes: ``value``, else ``$REJECTOPT_SELE_MEMORY_BUDGET``, else 4 GiB."""
    source = "memory_budget"
    if value is None:
        value, source = os.environ.get(MEMORY_BUDGET_ENV), f"${MEMORY_BUDGET_ENV}"
        if value is None:
            return float(DEFAULT_MEMORY_BUDGET)
    try:
        budget = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{source} must be a number of bytes > 0, got {value!r}") from None
    if not (np.isfinite(budget) and budget > 0):
        raise ValueError(f"{source} must be a finite number of bytes > 0, got {value!r}")
    return budget


def estimate_fit_bytes(
    n_samples,
    n_features,
    n_classes,
    chunk_size=500,
    dtype="float32",
    n_jobs=1,
    *,
    loss=None,
    random_state=0,
):
    """Bytes a SELE fit holds at its peak, estimated from the data's shape before anything is allocated.

    The terms: the per-class preconditioner (the curvature Gram ``Z_c^T diag(h) Z_c``, its
    Cholesky factors and their inverses, three ``(K, d+1, d+1)`` float64 arrays; it dominates
    for many classes); the features as given and the standardised, class-sorted design
    (``2 n (d+1)`` float64); :data:`_ROW_VECTORS` float64 vectors of n (losses, scores, their
    gradients, the chunks' layout); the chunks' pair weights; each thread's cache-sized scratch
    buffers and L-BFGS's history (``2 x 30`` vectors of ``K (d+1)`` float64).

    Parameters
    ----------
    n_samples, n_features, n_classes : int
        The shape of the fit: n rows, d features, K predicted classes.
    chunk_size : int, default=500
    dtype : str, default="float32"
        Of the pair tensors.
    n_jobs : int, default=1
    loss : ndarray of shape (n,) or None, default=None
        The losses: the pair weights are then counted as the fit lays them out (the (positive,
        zero) pairs of a chunk with few positive losses, :class:`ChunkedSELEObjective`); None
        counts every pair of a chunk, an upper bound.
    random_state : int, default=0
        Seed of the chunks (as :class:`SELE`'s), read with ``loss``.

    Returns
    -------
    int
    """
    n, d1 = int(n_samples), int(n_features) + 1
    params = int(n_classes) * d1
    preconditioner = 3 * params * d1 * 8
    design = 2 * n * d1 * 8 + _ROW_VECTORS * n * 8
    itemsize = np.dtype(dtype).itemsize
    if loss is None:
        pairs = n * max(1, min(int(chunk_size), n) // 2) * itemsize
    else:
        pairs = _pair_bytes(
            np.asarray(loss, dtype=np.float64),
            make_chunks(n, int(chunk_size), random_state),
            itemsize,
        )
    scratch = max(1, int(n_jobs)) * 8 * _BATCH_ELEMENTS * 8
    lbfgs = (2 * _LBFGS_PAIRS + 6) * params * 8
    return int(preconditioner + design + pairs + scratch + lbfgs)


def _chunk_keys(loss, chunks):
    """The group of each chunk: its size and its bin of positive-loss counts (see :class:`ChunkedSELEObjective`)."""
    return [(len(c), int(np.count_nonzero(loss[c] > 0)) // _POSITIVE_BUCKET) for c in chunks]


def _pair_bytes(loss, chunks, itemsize):
    """Bytes of the pair weights and index arrays of :class:`_ChunkGroup` for these chunks (its layout rule)."""
    keys = _chunk_keys(loss, chunks)
    total = 0
    for key in set(keys):
        group = [c for c, k in zip(chunks, keys) if k == key]
        size, m = key[0], key[0] // 2
        positives = np.array([np.count_nonzero(loss[c] > 0) for c in group])
        n_pos, n_zero = int(positives.max()), int((size - positives).max())
        if n_pos * n_zero + (n_pos // 2) * n_pos < 0.8 * m * size:  # bipartite
            total += len(group) * (
                (n_pos // 2) * n_pos * itemsize + (n_pos + n_zero) * (8 + itemsize)
            )
        else:
            total += len(group) * m * size * itemsize
    return total


def _gib(n_bytes):
    return f"{n_bytes / 2**30:.2f} GiB"


def make_chunks(n_samples, chunk_size=500, random_state=0):
    """Random partition of ``range(n_samples)`` into ``P = max(1, round(n / chunk_size))`` chunks.

    Chunk sizes differ by at most one (``np.array_split`` of a random permutation).

    Parameters
    ----------
    n_samples : int
        Number of examples ``n``.
    chunk_size : int, default=500
        Wanted chunk size (section 5.1 of Franc, Prusa & Voracek, 2023).
    random_state : int, RandomState or None, default=0
        Seed of the permutation (``sklearn.utils.check_random_state``).

    Returns
    -------
    list of ndarray of int
        The chunks, a partition of ``range(n_samples)``.

    """
    n_chunks = max(1, int(round(n_samples / chunk_size)))
    permutation = check_random_state(random_state).permutation(n_samples)
    return np.array_split(permutation, n_chunks)


def _circulant_weights(loss_scaled, n, dtype):
    """``W[p, t-1, i] = l_i + l_{(i+t) mod n}`` for ``t = 1..n//2`` (shift n/2 of an even n halved)."""
    m = n // 2
    loss_scaled = loss_scaled.astype(dtype)
    doubled = np.concatenate([loss_scaled, loss_scaled], axis=1)
    partner = np.lib.stride_tricks.sliding_window_view(doubled, n, axis=1)[:, 1 : m + 1, :]
    weight = np.add(loss_scaled[:, None, :], partner)
    if m and n % 2 == 0:
        weight[:, m - 1, :] *= 0.5
    return weight


def _partner_view(values, m):
    """``out[p, t-1, i] = values[p, (i + t) mod n]`` for ``t = 1..m`` (a view, no copy)."""
    n = values.shape[1]
    doubled = np.concatenate([values, values], axis=1)
    return np.lib.stride_tricks.sliding_window_view(doubled, n, axis=1)[:, 1 : m + 1, :]


class _Scratch:
    """One thread's work buffers, reused by every batch of every evaluation of the objective.

    A buffer is kept per role (the last element of its key: ``"c_work"``, ``"b_tanh"``, ...) as
    flat storage that grows to the largest batch that asked for it; a batch gets a view of its
    prefix in its own shape, whatever its chunk group. Every batch overwrites what it reads, so
    the values are those of fresh buffers. Buffers allocated anew for each evaluation cost more
    than their arithmetic: larger than the C library's mmap threshold (128 KiB, unless the
    process freed a larger mapped block before, which raises glibc's threshold), each one was
    mapped afresh and its pages faulted in (SELE on 17,500 rows of 20 features with 29 % errors,
    ``sele_shared``'s fit rows in ``benchmarks/bench_many_classes.py --record``: an evaluation
    with these takes less than half the time of one with fresh buffers, measured in
    ``benchmarks/measured_records.csv``, topic ``sele_buffers``; the values are the same, bit for
    bit).
    """

    def __init__(self, dtype):
        self.dtype = dtype
        self.arrays = {}
        self.batch = {}  # buffer key -> batch size of its chunk group

    def get(self, key, shape, rows):
        role, size = key[-1], math.prod(shape)  # not np.prod: 4 us a call, 40 calls an evaluation
        flat = self.arrays.get(role)
        if flat is None or flat.size < size:
            flat = self.arrays[role] = np.empty(size, self.dtype)
        return flat[:size].reshape(shape)[:rows]


class _ChunkGroup:
    """Equally sized chunks stacked as a (P_g, n_g) index array, with their pair weights.

    Two layouts of the pairs with non-zero weight ``W_ij = l_i + l_j``:

    * circulant: unordered pairs of a chunk of size ``n`` are enumerated as
      ``(i, i + t mod n)`` for shifts ``t = 1..n//2`` (the shift ``n/2`` of an
      even ``n`` lists each pair twice and gets weight 1/2), so the pair tensor
      ``D[p, t-1, i] = u[p, i+t] - u[p, i]`` is a sliding-window view of
      ``[u, u]``: half of the n^2 ordered pairs, no gather;
    * bipartite (chosen when it is cheaper, e.g. 0/1 losses with few errors):
      pairs of two zero-loss examples contribute nothing, so only the
      (positive, zero) rectangle and the circulant of the positives are
      evaluated, padded to the largest count in the group (padding is masked).
    """

    def __init__(self, index, loss, n_chunks_total, dtype):
        self.index = index
        n_chunks, n = index.shape
        self.n, self.m = n, n // 2
        self.loss = loss[index]  # (P_g, n) float64
        self.loss_sum = self.loss.sum(axis=1)
        self.norm = 1.0 / (n * n * n_chunks_total)
        positive = self.loss > 0
        n_pos = int(positive.sum(axis=1).max())
        n_zero = int((~positive).sum(axis=1).max())
        bipartite_cost = n_pos * n_zero + (n_pos // 2) * n_pos
        self.bipartite = bipartite_cost < 0.8 * self.m * n
        if self.bipartite:
            self._init_bipartite(positive, n_pos, n_zero, dtype)
            per_chunk = bipartite_cost
        else:
            self.weight = _circulant_weights(self.loss * self.norm, n, dtype)  # (P_g, m, n)
            per_chunk = self.m * n
        self.batch = max(1, _BATCH_ELEMENTS // max(1, per_chunk))

    def _init_bipartite(self, positive, n_pos, n_zero, dtype):
        n_chunks, n = self.loss.shape
        order = np.argsort(~positive, axis=1, kind="stable")  # positives first
        counts = positive.sum(axis=1)
        slots = np.arange(max(n_pos, n_zero))
        self.pos_local = np.where(
            slots[None, :n_pos] < counts[:, None], order[:, :n_pos], n
        )  # n = dummy slot
        zero_rank = slots[None, :n_zero] + counts[:, None]
        self.zero_local = np.where(
            zero_rank < n, np.take_along_axis(order, np.minimum(zero_rank, n - 1), 1), n
        )
        self.zero_mask = (self.zero_local < n).astype(dtype)
        padded_loss = np.concatenate([self.loss, np.zeros((n_chunks, 1))], axis=1)
        pos_loss = np.take_along_axis(padded_loss, self.pos_local, axis=1) * self.norm
        self.pos_loss = pos_loss.astype(dtype)
        self.pos_m = n_pos // 2
        weight = _circulant_weights(pos_loss, n_pos, dtype)
        real = (self.pos_local < n).astype(dtype)
        weight *= real[:, None, :] * _partner_view(
            real, self.pos_m
        )  # pairs with padding get weight 0
        self.pos_weight = weight


class ChunkedSELEObjective:
    """Chunked SELE proxy ``R(s) = 1/P sum_k psi_k(s)`` and its gradient w.r.t. the scores.

    ``psi_k = 1/n_k^2 sum_{i,j in chunk k} l_i log(1 + exp(s_j - s_i))`` is
    eq. (30) of [1] restricted to chunk ``k``. Each unordered pair is evaluated
    once using the antisymmetry of ``D_ij = s_j - s_i``:
    ``l_i sp(D) + l_j sp(-D) = (l_i + l_j) log(2 cosh(D/2)) + (l_i - l_j) D/2``
    (``sp`` = softplus), so the value needs ``log(2cosh)`` and the gradient
    ``tanh`` of the same ``D/2``; the linear part is summed in closed form, and
    pairs of two zero losses are skipped when that saves work. With scores
    centred per chunk and ``|s/2| <= 20``, ``E = exp(s)`` is precomputed per
    example and ``tanh = (E_j - E_i)/(E_j + E_i)``, ``log 2cosh = log(E_i + E_j) - (s_i + s_j)/2``;
    otherwise a range-safe formula is used.

    Parameters
    ----------
    loss : ndarray of shape (n,)
        Non-negative losses.
    chunks : list of ndarray of int
        A partition of ``range(n)``.
    dtype : {np.float32, np.float64}, default=np.float32
        Precision of the pair tensor; sums over chunks are accumulated in float64.
    n_jobs : int or None, default=None
        Threads over chunk batches (None -> number of CPUs, at most 4).

    References
    ----------
    .. [1] V. Franc, D. Prusa, V. Voracek. Optimal Strategies for Reject Option
       Classifiers. JMLR 24(11):1-49, 2023. Eq. (30).

    """

    def __init__(self, loss, chunks, dtype=np.float32, n_jobs=None):
        self.loss = np.asarray(loss, dtype=np.float64)
        self.n = self.loss.size
        self.dtype = np.dtype(dtype)
        self.n_chunks = len(chunks)
        self.groups = []
        # Chunks are grouped by size and by their count of positive losses: a group pads its
        # bipartite pairs to its largest counts, and one group of 2,000 chunks of 500 padded
        # (positive, zero) pairs by half again over the mean count.
        keys = _chunk_keys(self.loss, chunks)
        for key in sorted(set(keys)):
            index = np.stack([c for c, k in zip(chunks, keys) if k == key])
            self.groups.append(_ChunkGroup(index, self.loss, self.n_chunks, self.dtype))
        self.n_jobs = max(1, min(4, os.cpu_count() or 1)) if n_jobs is None else max(1, int(n_jobs))
        self._tasks = [
            (g, start, min(start + group.batch, group.index.shape[0]))
            for g, group in enumerate(self.groups)
            for start in range(0, group.index.shape[0], group.batch)
        ]
        self.n_evaluations = 0
        #: Work buffers per thread, kept across evaluations (:class:`_Scratch`); one evaluation at a time.
        self._scratch = [_Scratch(self.dtype) for _ in range(self.n_jobs)]

    def _constant_and_linear_part(self, group, u):
        """Diagonal (i = j) and linear ``(l_i - l_j) D/2`` parts of sum_k psi_k, and their gradient in u."""
        n = group.n
        value = group.norm * (
            _LOG2 * group.loss_sum.sum()
            - np.sum(n * np.einsum("pi,pi->p", group.loss, u) - group.loss_sum * u.sum(axis=1))
        )
        grad_u = -group.norm * (n * group.loss - group.loss_sum[:, None])
        return value, grad_u

    def _pair_part_of_batch(self, g, start, stop, u_centred, grad_u, scratch):
        """Add the batch's pair terms to ``grad_u`` (in place); return their value."""
        group = self.groups[g]
        u = u_centred[g][start:stop]
        fast = np.abs(u).max() <= _FAST_RANGE
        if group.bipartite:
            value, grad = self._bipartite_terms(g, group, start, stop, u, fast, scratch)
        else:
            value, grad = self._circulant_terms(g, u, group.weight[start:stop], fast, scratch)
        grad_u[g][start:stop] += grad
        if fast:  # sum over pairs of W_ij (u_i + u_j) = norm ((n - 2) l.u + L U), and U = 0 after centring
            value -= (
                group.norm * (group.n - 2) * float(np.einsum("pi,pi->", group.loss[start:stop], u))
            )
        return value

    def _circulant_terms(self, key, u, weight, fast, scratch):
        """Pair terms over the circulant enumeration of ``u`` (rows, n): value and gradient in u.

        ``fast``: returns ``sum W log(E_i + E_j)`` with ``E = exp(2u)`` (the caller
        subtracts the linear part); otherwise ``sum W log 2cosh(u_j - u_i)``.
        """
        rows, n = u.shape
        m = n // 2
        if m == 0:
            return 0.0, np.zeros_like(u)
        full_rows = _scratch_rows(scratch, key, rows)
        work = scratch.get((key, "c_work"), (full_rows, m, n), rows)
        tanh = scratch.get((key, "c_tanh"), (full_rows, m, n), rows)
        if fast:
            values = np.exp(2.0 * u).astype(self.dtype)
            partner = _partner_view(values, m)
            total = np.add(partner, values[:, None, :], out=work)
            np.subtract(partner, values[:, None, :], out=tanh)
            tanh /= total
            np.log(total, out=total)
        else:
            values = u.astype(self.dtype)
            np.subtract(_partner_view(values, m), values[:, None, :], out=tanh)
            total = _log_2cosh(tanh, work)
            np.tanh(tanh, out=tanh)
        value = float(np.dot(weight.ravel(), total.ravel()))
        tanh *= weight
        grad = self._partner_sums(key, tanh, scratch) - tanh.sum(axis=1)
        return value, grad

    def _bipartite_terms(self, g, group, start, stop, u, fast, scratch):
        """Pair terms of (positive, zero) and (positive, positive) pairs; value and gradient in u."""
        rows, n = u.shape
        padded = np.concatenate([u, np.zeros((rows, 1))], axis=1)
        pos_local, zero_local = group.pos_local[start:stop], group.zero_local[start:stop]
        u_pos = np.take_along_axis(padded, pos_local, axis=1)
        u_zero = np.take_along_axis(padded, zero_local, axis=1)
        pos_loss, zero_mask = group.pos_loss[start:stop], group.zero_mask[start:stop]
        n_pos, n_zero = u_pos.shape[1], u_zero.shape[1]
        work = scratch.get((g, "b_work"), (group.batch, n_pos, n_zero), rows)
        tanh = scratch.get((g, "b_tanh"), (group.batch, n_pos, n_zero), rows)
        if fast:
            e_pos, e_zero = (
                np.exp(2.0 * u_pos).astype(self.dtype),
                np.exp(2.0 * u_zero).astype(self.dtype),
            )
            total = np.add(e_pos[:, :, None], e_zero[:, None, :], out=work)
            np.subtract(e_zero[:, None, :], e_pos[:, :, None], out=tanh)
            tanh /= total
            np.log(total, out=total)
        else:
            np.subtract(
                u_zero.astype(self.dtype)[:, None, :],
                u_pos.astype(self.dtype)[:, :, None],
                out=tanh,
            )
            total = _log_2cosh(tanh, work)
            np.tanh(tanh, out=tanh)
        value = float(
            np.einsum("pa,pa->", pos_loss, np.matmul(total, zero_mask[:, :, None])[:, :, 0])
        )
        grad_pos = -pos_loss * np.matmul(tanh, zero_mask[:, :, None])[:, :, 0]
        grad_zero = zero_mask * np.matmul(pos_loss[:, None, :], tanh)[:, 0, :]
        pos_value, pos_grad = self._circulant_terms(
            (g, "pos"), u_pos, group.pos_weight[start:stop], fast, scratch
        )
        grad = np.zeros((rows, n + 1))
        np.put_along_axis(grad, zero_local, grad_zero, axis=1)
        np.put_along_axis(grad, pos_local, grad_pos + pos_grad, axis=1)  # padding lands in column n
        return value + pos_value, grad[:, :n]

    def _partner_sums(self, key, values, scratch):
        """``out[p, j] = sum_t values[p, t-1, (j - t) mod n]``: the gradient reaching partner j."""
        rows, m, n = values.shape
        doubled = scratch.get((key, "doubled"), (_scratch_rows(scratch, key, rows), m, 2 * n), rows)
        doubled[:, :, :n] = values
        doubled[:, :, n:] = values
        # element (p, t-1, j) of the skewed view is values[p, t-1, (j - t) mod n]
        base = doubled.reshape(rows, -1)[:, n - 1 :]
        skew = np.lib.stride_tricks.as_strided(
            base,
            shape=(rows, m, n),
            strides=(base.strides[0], (2 * n - 1) * base.strides[1], base.strides[1]),
        )
        return skew.sum(axis=1)

    def _run_tasks(self, task_ids, u_centred, grad_u, scratch):
        total = 0.0
        for k in task_ids:
            g, start, stop = self._tasks[k]
            scratch.batch[g] = scratch.batch[(g, "pos")] = self.groups[g].batch
            total += self._pair_part_of_batch(g, start, stop, u_centred, grad_u, scratch)
        return total

    def value_and_gradient(self, scores, executor=None):
        """``R(s)`` and ``dR/ds`` for scores ``s`` of shape (n,).

        Parameters
        ----------
        scores : ndarray of shape (n,)
        executor : concurrent.futures.Executor or None
            Runs the chunk batches in ``n_jobs`` threads when given.

        Returns
        -------
        value : float
        gradient : ndarray of shape (n,)
        """
        self.n_evaluations += 1
        scores = np.asarray(scores, dtype=np.float64)
        u_centred, grad_u, value = [], [], 0.0
        for group in self.groups:
            u = 0.5 * scores[group.index]
            u -= u.mean(
                axis=1, keepdims=True
            )  # psi_k is invariant to a shift of the chunk's scores
            lin_value, lin_grad = self._constant_and_linear_part(group, u)
            value += lin_value
            grad_u.append(lin_grad)
            u_centred.append(u)
        task_ids = np.arange(len(self._tasks))
        if executor is None or self.n_jobs == 1:
            value += self._run_tasks(task_ids, u_centred, grad_u, self._scratch[0])
        else:  # each thread its own buffers: part k of every evaluation runs on self._scratch[k]
            parts = np.array_split(task_ids, self.n_jobs)
            futures = [
                executor.submit(self._run_tasks, part, u_centred, grad_u, scratch)
                for part, scratch in zip(parts, self._scratch)
                if part.size
            ]
            value += sum(f.result() for f in futures)
        gradient = np.empty(self.n)
        for group, g_u in zip(self.groups, grad_u):
            gradient[group.index] = 0.5 * g_u
        return float(value), gradient


def _scratch_rows(scratch, key, rows):
    """Rows to allocate for a work buffer: the batch size of the buffer's chunk group."""
    return max(rows, scratch.batch.get(key, rows))


def _log_2cosh(x, out):
    """``log(2 cosh(x)) = |x| + log(1 + exp(-2|x|))``, range-safe; written to ``out``."""
    absx = np.abs(x, out=out)
    work = np.multiply(absx, -2.0)
    np.exp(work, out=work)
    work += 1.0
    np.log(work, out=work)
    out += work
    return out


class _SELEProblem:
    """``F(theta) / scale`` with ``F = C/2 sum_c ||w_c||^2 + R(s_theta)`` for a fixed data set.

    L-BFGS runs on ``phi_c = L_c^T theta_c`` (Cholesky ``L_c L_c^T = M_c / scale``) with
    the block-diagonal preconditioner ``M_c = Z_c^T diag(h) Z_c + C [w part]``, where
    ``h`` is the diagonal of the Hessian of ``R`` w.r.t. the scores at ``s = 0``.
    It equalises the curvature of the (regularised) weights and the
    (unregularised) biases, which otherwise differ by orders of magnitude for large C.
    """

    def __init__(self, layout, loss_sorted, chunks, dtype, n_jobs):
        self.layout = layout
        self.scale = float(loss_sorted.mean()) if loss_sorted.size else 0.0
        self.objective = ChunkedSELEObjective(loss_sorted, chunks, dtype=dtype, n_jobs=n_jobs)
        self.shape = (layout.n_classes, layout.design.shape[1])
        self._gram = self._curvature_gram(loss_sorted, chunks)
        #: ``(theta, R, dR/dtheta)`` of the last points evaluated: R does not depend on C, so a
        #: warm start along the C grid reuses the risk at the previous solution (one pass over
        #: the pairs of every chunk) and only the regulariser changes.
        self._risks = []

    def _curvature_gram(self, loss_sorted, chunks):
        """Per-class ``Z_c^T diag(h) Z_c`` with ``h_i ~ (n_k l_i + L_k) / (4 n_k^2 P)`` at s = 0."""
        h = np.empty(loss_sorted.size)
        for chunk in chunks:
            n_k = len(chunk)
            h[chunk] = (n_k * loss_sorted[chunk] + loss_sorted[chunk].sum()) / (
                4.0 * n_k**2 * len(chunks)
            )
        gram = np.zeros((self.shape[0], self.shape[1], self.shape[1]))
        root_h = np.sqrt(
            h
        )  # h >= 0: Z^T diag(h) Z = (sqrt(h) Z)^T (sqrt(h) Z), a symmetric rank update
        step = max(1, (1 << 16) // self.shape[1])
        for c, rows in self.layout.blocks():
            upper = np.zeros((self.shape[1], self.shape[1]), order="F")
            for start in range(
                rows.start, rows.stop, step
            ):  # in row blocks: no n x (d+1) temporary
                stop = min(start + step, rows.stop)
                block = self.layout.design[start:stop] * root_h[start:stop, None]
                upper = syrk(1.0, block.T, beta=1.0, c=upper, trans=0, lower=0, overwrite_c=1)
            gram[c] = (
                np.triu(upper) + np.triu(upper, 1).T
            )  # half the flops of a product, then mirrored
        return gram

    def _preconditioner(self, C):
        """Lower-triangular Cholesky factors ``L_c`` with ``L_c L_c^T = M_c / scale``, shape (K, d+1, d+1)."""
        d1 = self.shape[1]
        reg = np.diag(np.r_[np.full(d1 - 1, C), 0.0])
        largest = max(
            abs(float(self._gram.max())), abs(float(self._gram.min()))
        )  # no (K, d+1, d+1) temporary
        jitter = 1e-10 * max(1.0, largest) * np.eye(d1)
        factors = np.empty_like(self._gram)
        for c in range(self.shape[0]):
            factors[c] = np.linalg.cholesky(self._gram[c] + reg + jitter)
        factors /= np.sqrt(self.scale)
        return factors

    def value_and_gradient(self, theta_flat, C, executor=None):
        """Scaled objective ``F / scale`` and its gradient w.r.t. theta (flattened)."""
        theta = theta_flat.reshape(self.shape)
        weights = theta[:, :-1]
        risk, grad = self._risk(theta, executor)
        grad[:, :-1] += C * weights
        value = 0.5 * C * float(np.sum(weights**2)) + risk
        return value / self.scale, grad.ravel() / self.scale

    def _risk(self, theta, executor):
        """``R(theta)`` and a copy of its gradient in theta, reused for a point evaluated before."""
        for seen, risk, grad in self._risks:
            if np.array_equal(seen, theta):
                return risk, grad.copy()
        risk, grad_s = self.objective.value_and_gradient(self.layout.scores_sorted(theta), executor)
        grad = self.layout.gradient(grad_s)
        self._risks = [*self._risks[-1:], (theta.copy(), risk, grad.copy())]
        return risk, grad

    def solve(self, C, theta0, tol, max_iter, executor=None):
        """Preconditioned L-BFGS; returns ``(theta, n_iter, F(theta))``."""
        L = self._preconditioner(C)  # theta_c = L_c^{-T} phi_c
        L_inv = np.empty_like(L)
        identity = np.eye(L.shape[1])
        for c, L_c in enumerate(L):
            L_inv[c] = solve_triangular(L_c, identity, lower=True)

        phi0 = np.einsum("kji,kj->ki", L, theta0.reshape(self.shape)).ravel()

        def to_theta(phi):
            if np.array_equal(
                phi, phi0
            ):  # the start itself, not its round trip through L (equal to rounding)
                return theta0.reshape(self.shape).copy()
            return np.einsum("kji,kj->ki", L_inv, phi.reshape(self.shape))

        def fun(phi):
            value, grad = self.value_and_gradient(to_theta(phi).ravel(), C, executor)
            return value, np.einsum("kij,kj->ki", L_inv, grad.reshape(self.shape)).ravel()

        result = minimize(
            fun,
            phi0,
            jac=True,
            method="L-BFGS-B",
            options={"maxiter": max_iter, "ftol": tol, "gtol": tol, "maxcor": 30, "maxls": 30},
        )
        return to_theta(result.x), int(result.nit), float(result.fun) * self.scale


class SELE(PerClassLinearScore):
    """Uncertainty score learned by minimising the SELE proxy loss.

    Minimises ``F(theta) = C/2 sum_c ||w_c||^2 + R(theta)`` over the linear
    score of eq. (37) of [1], ``s(x) = <w_{h(x)}, x> + b_{h(x)}``, where
    ``R`` is the proxy of eq. (30) averaged over ``P = max(1, round(n / chunk_size))``
    random chunks (section 5.1 of [1]). The biases are not regularised.
    The minimiser is a Fisher-consistent estimate of a proper uncertainty
    score (Theorem 11 of [1]).

    Parameters
    ----------
    C : float, default=10
        Weight of the regulariser. See Notes for ``C = 0``.
    n_classes : int or None, default=None
        Number of predicted classes; None -> ``max(y_pred) + 1`` at fit.
    standardize : bool, default=True
        Standardise ``X`` with the training mean/std (constant features: scale 1).
    chunk_size : int, default=500
        Approximate chunk size.
    random_state : int, RandomState or None, default=0
        Seed of the random chunk partition.
    tol : float, default=1e-6
        ``ftol`` and ``gtol`` of L-BFGS on ``F / mean(loss)``.
    max_iter : int, default=500
        Maximum number of L-BFGS iterations.
    min_C : float, default=1e-6
        Floor of the regulariser relative to the mean loss (see Notes).
    warm_start : bool, default=False
        Start from the previous solution when refitting on data of the same shape.
    n_jobs : int or None, default=None
        Threads evaluating the chunk batches (None -> CPUs, at most 4).
    dtype : {"float32", "float64"}, default="float32"
        Precision of the pairwise computations (sums are accumulated in float64).
    memory_budget : float or None, default=None
        Bytes a fit may hold (None: ``$REJECTOPT_SELE_MEMORY_BUDGET``, else 4 GiB). A fit whose
        estimated peak exceeds it is refused before anything is allocated, naming the estimate:
        the per-class preconditioner grows as ``K (d+1)^2`` (K = 1,000 logits: about 24 GiB).

    Attributes
    ----------
    coef_ : ndarray of shape (K, d)
        Per-class weights on standardised features.
    intercept_ : ndarray of shape (K,)
        Per-class biases; shifted so that the mean training score is 0.
    objective_ : float
        ``F(theta)`` at the solution (with the effective ``C``).
    C_effective_ : float
        ``max(C, min_C * mean(loss))``.
    n_iter_ : int
    mean_, scale_, n_classes_, class_seen_, unseen_class_score_, n_features_in_
        As in :class:`REG`: classes never predicted in training get zero
        weights and the largest training score (treated as most uncertain).

    Notes
    -----
    ``R`` depends only on score differences, so the common shift of the biases is
    fixed by centring the training scores. For ``C = 0`` the objective may be
    unbounded: if some direction ranks every positive-loss example above every
    zero-loss one, ``R`` tends to its infimum without attaining it and the scores
    diverge. ``C = 0`` is therefore read as a vanishing ridge: the regulariser is
    floored at ``min_C * mean(loss)`` (scaled with the loss, so the solution does not
    depend on its units), which makes ``F`` strongly convex with a unique, finite
    minimiser and changes the objective negligibly when a minimiser of ``R`` exists;
    ``tol`` and ``max_iter`` bound the iterations too, so scores stay finite.

    Solver: L-BFGS (scipy) with the analytic gradient on ``F / mean(loss)``,
    preconditioned per class by ``Z_c^T diag(h) Z_c + C I`` (``h`` the diagonal of
    the Hessian of ``R`` w.r.t. the scores at ``s = 0``), so the number of iterations
    hardly depends on ``C``. Each unordered pair of a chunk is evaluated once (see
    :class:`ChunkedSELEObjective`) in cache-sized batches over ``n_jobs`` threads;
    float32 limits the relative accuracy of ``F`` to about 1e-7 (``dtype="float64"``
    for tighter solves). At the default ``tol`` and ``C >= 1``, ``F`` is within 1e-5 (relative)
    of a float64 L-BFGS solve at gtol 1e-10, far tighter than the 1% primal-dual gap of the
    BMRM solver of [1]. At ``C = 0`` (only the tiny ridge above) the objective can be flat
    around its minimiser: on the demo's sattelite / XGBoost split the float32 solve stopped
    1.4e-4 (relative) above a float64 optimum, with weights 11 % away from it, and tightening
    ``tol`` in float32 does not close that (it stalls near 3e-5); ``dtype="float64"`` does.
    :meth:`fit_path` fits a whole C grid sharing the pair weights, warm-started from the largest
    C down; the risk ``R`` at each start is the one computed at the previous solution (it does
    not depend on C), so a start costs no pass over the pairs.

    References
    ----------
    .. [1] V. Franc, D. Prusa, V. Voracek. Optimal Strategies for Reject Option
       Classifiers. JMLR 24(11):1-49, 2023. Eq. (30), Theorem 11.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 2))
    >>> loss = (rng.random(200) < 1 / (1 + np.exp(-3 * X[:, 0]))).astype(float)
    >>> sele = SELE(C=1).fit(X, np.zeros(200, int), loss)
    >>> bool(sele.coef_[0, 0] > 0)
    True
    """

    def __init__(
        self,
        *,
        C=10.0,
        n_classes=None,
        standardize=True,
        chunk_size=500,
        random_state=0,
        tol=1e-6,
        max_iter=500,
        min_C=1e-6,
        warm_start=False,
        n_jobs=None,
        dtype="float32",
        memory_budget=None,
    ):
        self.C = C
        self.n_classes = n_classes
        self.standardize = standardize
        self.chunk_size = chunk_size
        self.random_state = random_state
        self.tol = tol
        self.max_iter = max_iter
        self.min_C = min_C
        self.warm_start = warm_start
        self.n_jobs = n_jobs
        self.dtype = dtype
        self.memory_budget = memory_budget

    def _build_problem(self, X, y_pred, loss):
        if int(self.chunk_size) < 2:
            raise ValueError(f"chunk_size must be at least 2, got {self.chunk_size!r}")
        self._check_memory(X, y_pred, loss)
        layout, loss_sorted = self._prepare_layout(X, y_pred, loss, "loss")
        if np.any(loss_sorted < 0):
            raise ValueError("loss must be non-negative")
        position = np.empty_like(layout.order)
        position[layout.order] = np.arange(layout.order.size)
        chunks = [
            position[c]
            for c in make_chunks(layout.order.size, int(self.chunk_size), self.random_state)
        ]
        return _SELEProblem(layout, loss_sorted, chunks, np.dtype(self.dtype), self.n_jobs)

    def _check_memory(self, X, y_pred, loss=None):
        """Refuse, before allocating, a fit whose estimated peak (:func:`estimate_fit_bytes`) exceeds the budget."""
        shape = np.shape(X)
        if len(shape) != 2:
            return  # the layout's own validation names the shape
        n, d = shape
        if y_pred is None:
            K = 1
        elif self.n_classes is not None:
            K = int(self.n_classes)
        else:
            y = np.asarray(y_pred)
            K = int(y.max()) + 1 if y.size and y.dtype.kind in "iuf" and np.isfinite(y.max()) else 1
        budget = memory_budget(self.memory_budget)
        n_jobs = max(1, min(4, os.cpu_count() or 1)) if self.n_jobs is None else int(self.n_jobs)
        loss = np.asarray(loss, dtype=np.float64) if loss is not None else None
        usable = (
            loss is not None
            and loss.shape == (n,)
            and np.isfinite(loss).all()  # else the fit names the fault
            and isinstance(self.random_state, (int, np.integer))
        )  # a RandomState's draws are the fit's
        estimate = estimate_fit_bytes(
            n,
            d,
            K,
            int(self.chunk_size),
            self.dtype,
            n_jobs,
            loss=loss if usable else None,
            random_state=self.random_state,
        )
        if estimate > budget:
            raise MemoryBudgetError(
                f"SELE on {n} rows, {d} features and {K} predicted classes would need about {_gib(estimate)} "
                f"({estimate:.3g} bytes; its per-class preconditioner alone is {K} x {d + 1} x {d + 1} float64), "
                f"over the memory budget of {_gib(budget)} ({budget:.3g} bytes): nothing was allocated. "
                "Use score 'reg' (per-class ridge regression, no preconditioner), 'sele_shared' or 'reg_shared' "
                "(one weight vector for all classes on class-agnostic features of a network's logits), fewer "
                f"features, or raise the budget with SELE(memory_budget=...) or ${MEMORY_BUDGET_ENV} (bytes)",
                n_samples=n,
                n_features=d,
                n_classes=K,
                estimate=estimate,
                budget=budget,
            )

    def _effective_C(self, C, problem):
        return max(_check_C(C), float(self.min_C) * problem.scale)

    def _solve(self, problem, C, theta0, executor):
        """Minimise F for one C; returns the fitted state as a dict of attributes."""
        C_eff = self._effective_C(C, problem)
        if problem.scale == 0.0:  # all losses zero: R == 0, minimiser theta = 0
            theta, n_iter, value = np.zeros(problem.shape), 0, 0.0
        else:
            theta, n_iter, value = problem.solve(
                C_eff, theta0, float(self.tol), int(self.max_iter), executor
            )
        solution = (
            theta.copy()
        )  # as the solver left it: the warm start of the next C (its risk is known)
        scores = problem.layout.scores_sorted(theta)
        theta[problem.layout.counts > 0, -1] -= scores.mean()  # fix the shift: F is invariant to it
        self._solution = solution
        return theta, {"objective_": value, "C_effective_": C_eff, "n_iter_": n_iter}

    def _initial_theta(self, problem):
        previous = getattr(self, "_theta_internal", None)
        if self.warm_start and previous is not None and previous.shape == problem.shape:
            return previous.copy()
        return np.zeros(problem.shape)

    def _store(self, problem, theta, info):
        self._set_parameters(theta, problem.layout, problem.layout.scores_sorted(theta).max())
        self._theta_internal = theta
        for name, value in info.items():
            setattr(self, name, value)
        return self

    def fit(self, X, y_pred, loss):
        """Fit the score.

        Parameters
        ----------
        X : array-like of shape (n, d)
        y_pred : array-like of shape (n,) of int in 0..K-1, or None
            Predicted classes ``h(x_i)``; None fits one weight vector on ``X``
            (structured-output mode, ``X`` = the feature map).
        loss : array-like of shape (n,)
            Non-negative losses ``l(y_i, h(x_i))``.

        Returns
        -------
        self
        """
        with single_threaded_blas():
            problem = self._build_problem(X, y_pred, loss)
            with ThreadPoolExecutor(problem.objective.n_jobs) as executor:
                theta, info = self._solve(problem, self.C, self._initial_theta(problem), executor)
            return self._store(problem, theta, info)

    def fit_path(self, X, y_pred, loss, C_grid=SCORE_C_GRID):
        """Fit one score per ``C`` sharing the chunk tensors, warm-started from the largest C down.

        Parameters
        ----------
        X, y_pred, loss
            As in :meth:`fit`.
        C_grid : sequence of float

        Returns
        -------
        list of SELE
            Fitted copies of this estimator, in the order of ``C_grid``.
        """
        template = clone(self)  # holds the shared preprocessing; self is left untouched
        with single_threaded_blas():
            problem = template._build_problem(X, y_pred, loss)
        fitted = {}
        theta = self._initial_theta(problem)
        with single_threaded_blas(), ThreadPoolExecutor(problem.objective.n_jobs) as executor:
            for C in sorted(set(C_grid), reverse=True):
                solved, info = template._solve(problem, C, theta, executor)
                theta = template._solution  # unshifted: the last point the solver evaluated
                estimator = clone(self).set_params(C=C)
                for name in (
                    "mean_",
                    "scale_",
                    "n_features_in_",
                    "n_classes_",
                    "structured_",
                    "class_seen_",
                ):
                    setattr(estimator, name, copy.copy(getattr(template, name)))
                fitted[C] = estimator._store(problem, solved, info)
        return [fitted[C] for C in C_grid]

    def predict(self, X, y_pred):
        """Uncertainty ``s(x)`` (larger = more uncertain), shape (n,)."""
        return self._raw_scores(X, y_pred)
