"""Stratified random splits into Trn1 / Val1 / Trn2 / Val2 / Tst (Section 5.2).

Each dataset is split ``n_splits`` times. Trn1/Val1 train and select the
classifier, Trn2/Val2 train and select the uncertainty score, Tst is used only
for the reported numbers.
"""

from __future__ import annotations

import zlib
import numpy as np

from ._io import save_npz

__all__ = [
    "PARTS",
    "DEFAULT_RATIOS",
    "check_ratios",
    "derive_seed",
    "stratified_partition",
    "make_splits",
    "save_splits",
    "load_split",
]

#: The five parts, in the order in which ratio vectors list them.
PARTS = ("trn1", "val1", "trn2", "val2", "tst")

#: The paper's ratios 30/10/30/10/20 (Section 5.2.1).
DEFAULT_RATIOS = (0.3, 0.1, 0.3, 0.1, 0.2)


def derive_seed(master_seed: int, *names: str | int) -> int:
    """Derive a deterministic 32-bit seed from a master seed and cell names.

    The same (master seed, names) always gives the same seed on every machine
    (it uses CRC32 of the names, not Python's salted ``hash``).
    """
    key = [int(master_seed)] + [zlib.crc32(str(name).encode()) for name in names]
    return int(np.random.SeedSequence(key).generate_state(1)[0])


def check_ratios(ratios) -> np.ndarray:
    """Validate a ratio vector for (Trn1, Val1, Trn2, Val2, Tst); return it as an array."""
    ratios = np.asarray(ratios, dtype=float)
    if ratios.shape != (len(PARTS),):
        raise ValueError(
            f"ratios must have {len(PARTS)} entries ({'/'.join(PARTS)}), got {ratios.tolist()}"
        )
    if np.any(ratios <= 0) or not np.isclose(ratios.sum(), 1.0, atol=1e-6):
        raise ValueError(f"ratios must be positive and sum to 1, got {ratios.tolist()}")
    return ratios


def _part_sizes(n: int, ratios: np.ndarray) -> np.ndarray:
    """Split ``n`` items by ``ratios`` with the largest-remainder rule.

    Every size is within one of ``ratio * n``; ties in the remainders go to the
    earlier part.
    """
    exact = ratios * n
    sizes = np.floor(exact).astype(int)
    missing = n - sizes.sum()
    order = np.argsort(-(exact - sizes), kind="stable")
    sizes[order[:missing]] += 1
    return sizes


def stratified_partition(y, ratios, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """One random stratified partition of ``range(len(y))`` into the five parts.

    Within each class the examples are shuffled and cut by the largest-remainder
    rule, so each part holds ``ratio * n_class`` examples of every class up to
    one example.

    Returns
    -------
    dict of str to ndarray of int64
        Sorted example indices per part, keyed by :data:`PARTS`.
    """
    y = np.asarray(y)
    ratios = check_ratios(ratios)
    pieces = {part: [] for part in PARTS}
    for label in np.unique(y):
        members = rng.permutation(np.flatnonzero(y == label))
        bounds = np.cumsum(_part_sizes(len(members), ratios))[:-1]
        for part, chunk in zip(PARTS, np.split(members, bounds)):
            pieces[part].append(chunk)
    return {part: np.sort(np.concatenate(chunks)).astype(np.int64) for part, chunks in pieces.items()}


def make_splits(y, ratios=DEFAULT_RATIOS, n_splits: int = 5, seed: int = 0, dataset: str = "") -> dict[str, np.ndarray]:
    """``n_splits`` independent stratified partitions, seeded by (seed, dataset, k).

    Returns
    -------
    dict of str to ndarray
        Index arrays named ``{part}_{k}``: ``trn1_0, val1_0, trn2_0, val2_0,
        tst_0, trn1_1, ...``.
    """
    if n_splits < 1:
        raise ValueError(f"n_splits must be at least 1, got {n_splits}")
    arrays = {}
    for k in range(n_splits):
        rng = np.random.default_rng(derive_seed(seed, dataset, "split", k))
        for part, index in stratified_partition(y, ratios, rng).items():
            arrays[f"{part}_{k}"] = index
    return arrays


def save_splits(path, splits: dict[str, np.ndarray]) -> None:
    """Write the index arrays to ``path`` (``.npz``) atomically."""
    save_npz(path, **splits)


def load_split(path, k: int) -> dict[str, np.ndarray]:
    """The five index arrays of split ``k`` from a splits file, keyed by part."""
    with np.load(path, allow_pickle=False) as data:
        missing = [f"{part}_{k}" for part in PARTS if f"{part}_{k}" not in data]
        if missing:
            raise KeyError(f"{path} has no split {k} (missing {', '.join(missing)}); rerun make_splits with n_splits > {k}")
        return {part: data[f"{part}_{k}"] for part in PARTS}
