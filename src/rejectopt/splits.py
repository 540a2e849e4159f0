"""Stratified random splits into Trn1 / Val1 / Trn2 / Val2 / Tst (Section 5.2).

Each dataset is split ``n_splits`` times: Trn1/Val1 for the classifier, Trn2/Val2 for the
uncertainty score, Tst only for the reported numbers.
"""

from __future__ import annotations

import numpy as np

from ._checks import SPLIT_PARTS, check_ratios, derive_seed
from ._io import IntermediateFileError, load_npz, recompute_hint, save_npz
from ._params import Interval, validate_params

__all__ = ["DEFAULT_RATIOS", "make_splits", "save_splits", "load_split"]

#: The paper's ratios 30/10/30/10/20 (Section 5.2.1).
DEFAULT_RATIOS = (0.3, 0.1, 0.3, 0.1, 0.2)

#: The scalar parameters of the public functions of this module, declared once (``validate_params``).
#: ``seed`` and ``dataset`` are read by :func:`rejectopt._checks.derive_seed`, which takes what
#: ``int()`` and ``str()`` take; the ratios are a vector (:func:`rejectopt._checks.check_ratios`).
_PARAMETERS = {
    "n_splits": Interval(1, None, integer=True, closed="left"),
}


def part_sizes(n: int, ratios: np.ndarray) -> np.ndarray:
    """Largest-remainder sizes: each within one of ``ratio * n``, remainder ties to the earlier part."""
    exact = ratios * n
    sizes = np.floor(exact).astype(int)
    missing = n - sizes.sum()
    order = np.argsort(-(exact - sizes), kind="stable")
    sizes[order[:missing]] += 1
    return sizes


def _stratified_partition(y, ratios, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """One random stratified partition of ``range(len(y))``: per class, ``ratio * n_class`` up to one.

    Parameters
    ----------
    y : array-like of shape (n,)
        The labels to stratify by.
    ratios : sequence of 5 floats
        The parts' fractions (:func:`rejectopt._checks.check_ratios`).
    rng : numpy.random.Generator
        The shuffles' source.

    Returns
    -------
    dict of str to ndarray of int64
        Sorted example indices per part, keyed by ``SPLIT_PARTS``.
    """
    y = np.asarray(y)
    ratios = check_ratios(ratios)
    pieces: dict[str, list[np.ndarray]] = {part: [] for part in SPLIT_PARTS}
    for label in np.unique(y):
        members = rng.permutation(np.flatnonzero(y == label))
        bounds = np.cumsum(part_sizes(len(members), ratios))[:-1]
        for part, chunk in zip(SPLIT_PARTS, np.split(members, bounds)):
            pieces[part].append(chunk)
    return {
        part: np.sort(np.concatenate(chunks)).astype(np.int64) for part, chunks in pieces.items()
    }


def make_splits(
    y, ratios=DEFAULT_RATIOS, n_splits: int = 5, seed: int = 0, dataset: str = ""
) -> dict[str, np.ndarray]:
    """``n_splits`` independent stratified partitions, seeded by (seed, dataset, k).

    Parameters
    ----------
    y : array-like of shape (n,)
        The labels to stratify by.
    ratios : sequence of 5 floats, default DEFAULT_RATIOS
        The parts' fractions (:func:`rejectopt._checks.check_ratios`).
    n_splits : int, default 5
        How many partitions.
    seed : int, default 0
        The run's master seed (:func:`rejectopt._checks.derive_seed`).
    dataset : str, default ""
        The dataset's name: datasets of one run get independent splits.

    Returns
    -------
    dict of str to ndarray
        Index arrays named ``{part}_{k}``: ``trn1_0, val1_0, ..., tst_0, trn1_1, ...``.

    Raises
    ------
    ValueError
        ``n_splits`` below 1, or bad ``ratios``.

    Examples
    --------
    >>> import numpy as np
    >>> splits = make_splits(np.array([0] * 10 + [1] * 10), n_splits=2, seed=0, dataset="toy")
    >>> sorted(splits)
    ['trn1_0', 'trn1_1', 'trn2_0', 'trn2_1', 'tst_0', 'tst_1', 'val1_0', 'val1_1', 'val2_0', 'val2_1']
    >>> splits["tst_0"], splits["tst_1"]
    (array([ 2,  6, 10, 18]), array([ 4,  5, 12, 15]))
    """
    validate_params("make_splits", {"n_splits": n_splits}, _PARAMETERS)
    arrays = {}
    for k in range(n_splits):
        rng = np.random.default_rng(derive_seed(seed, dataset, "split", k))
        for part, index in _stratified_partition(y, ratios, rng).items():
            arrays[f"{part}_{k}"] = index
    return arrays


def _check_split(
    parts: dict[str, np.ndarray], n_rows: int, *, where: str = "split", y=None, ratios=None
) -> None:
    """Check ``parts`` partition ``range(n_rows)``: nothing both trained and tested on, nothing left out.

    With ``y`` and ``ratios``, also the stratification of :func:`_stratified_partition`.

    Parameters
    ----------
    parts : dict of str to array-like of int
        Row indices keyed by ``SPLIT_PARTS``.
    n_rows : int
        The data's number of rows.
    where : str, default "split"
        What the error messages name (the file and split).
    y : array-like of shape (n_rows,), optional
        The labels.
    ratios : sequence of 5 floats, optional
        The parts' fractions.

    Returns
    -------
    None
        A split that passes; a bad one raises.

    Raises
    ------
    ValueError
        Naming ``where``, the parts involved and, for an overlap or a gap, an example row.
    """
    missing = [part for part in SPLIT_PARTS if part not in parts]
    if missing:
        raise ValueError(f"{where}: no part {', '.join(missing)}")
    sizes = {part: np.asarray(parts[part]).size for part in SPLIT_PARTS}
    joined = np.concatenate(
        [np.asarray(parts[part], dtype=np.int64).ravel() for part in SPLIT_PARTS]
    )
    if joined.size and (joined.min() < 0 or joined.max() >= n_rows):
        bad = int(joined[(joined < 0) | (joined >= n_rows)][0])
        raise ValueError(f"{where}: row {bad} is outside the data's {n_rows} rows")
    owner = np.full(n_rows, -1)
    for number, part in enumerate(SPLIT_PARTS):
        index = np.asarray(parts[part], dtype=np.int64)
        taken = owner[index] >= 0
        if taken.any():
            row = int(index[taken][0])
            raise ValueError(
                f"{where}: parts {SPLIT_PARTS[owner[row]]} and {part} overlap (row {row} is in both); the "
                "parts of a split must be disjoint"
            )
        values, counts = np.unique(index, return_counts=True)
        if (counts > 1).any():
            raise ValueError(f"{where}: part {part} holds row {int(values[counts > 1][0])} twice")
        owner[index] = number
    if joined.size != n_rows:
        row = int(np.flatnonzero(owner < 0)[0])
        raise ValueError(
            f"{where}: the parts hold {joined.size} of the data's {n_rows} rows (row {row} is in none); "
            f"a split covers every row ({', '.join(f'{p} {sizes[p]}' for p in SPLIT_PARTS)})"
        )
    if y is not None and ratios is not None:
        y, ratios = np.asarray(y), check_ratios(ratios)
        labels, totals = np.unique(y, return_counts=True)
        for part, ratio in zip(SPLIT_PARTS, ratios):
            counts = np.array([np.sum(y[parts[part]] == label) for label in labels])
            off = np.abs(counts - ratio * totals) >= 1
            if off.any():
                label = labels[np.argmax(off)]
                raise ValueError(
                    f"{where}: part {part} holds {counts[np.argmax(off)]} examples of class {label}, "
                    f"expected {ratio} x {totals[np.argmax(off)]} up to one (ratios {ratios.tolist()})"
                )


def save_splits(
    path, splits: dict[str, np.ndarray], *, y=None, ratios=None, data_sha256: str | None = None
) -> None:
    """Write the index arrays to ``path`` (``.npz``) atomically, each split checked first.

    Parameters
    ----------
    path : path-like
        The ``.npz`` file written.
    splits : dict
        Index arrays ``{part}_{k}`` (:func:`make_splits`).
    y : array, optional
        The labels: every split must cover ``len(y)`` rows (else as many as the first split
        holds) and, with ``ratios``, be stratified by them.
    ratios : sequence of 5 floats, optional
        The ratios used, checked with ``y`` and recorded.
    data_sha256 : str, optional
        The data's checksum (:func:`rejectopt._io.npz_checksum`), recorded so a reader can
        tell stale splits.

    Returns
    -------
    None
        Writes the file, with its content record and provenance.

    Raises
    ------
    ValueError
        A split that is not a partition of the rows (:func:`_check_split`); nothing is written.

    Examples
    --------
    A split whose parts overlap is refused before anything is written:

    >>> import numpy as np
    >>> splits = make_splits(np.array([0] * 10 + [1] * 10), n_splits=1)
    >>> splits["tst_0"] = splits["trn1_0"]
    >>> save_splits("splits.npz", splits)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: splits.npz: split 0: parts trn1 and tst overlap (row 1 is in both); the parts of ... disjoint
    """
    splits = {name: np.asarray(index, dtype=np.int64) for name, index in splits.items()}
    ks = sorted({int(name.rsplit("_", 1)[1]) for name in splits})
    n_rows = (
        len(y)
        if y is not None
        else sum(
            splits[f"{part}_{ks[0]}"].size for part in SPLIT_PARTS if f"{part}_{ks[0]}" in splits
        )
    )
    for k in ks:
        _check_split(
            {part: splits[f"{part}_{k}"] for part in SPLIT_PARTS if f"{part}_{k}" in splits},
            n_rows,
            where=f"{path}: split {k}",
            y=y,
            ratios=ratios,
        )
    provenance = {
        "n_rows": int(n_rows),
        "n_splits": len(ks),
        "data_sha256": data_sha256,
        "ratios": None if ratios is None else check_ratios(ratios).tolist(),
    }
    save_npz(path, provenance=provenance, **splits)


def load_split(path, k: int, *, data_sha256: str | None = None) -> dict[str, np.ndarray]:
    """The five index arrays of split ``k``, keyed by part, checked (:func:`_check_split`) before use.

    Parameters
    ----------
    path : path-like
        A splits file as :func:`save_splits` wrote it (read by :func:`rejectopt._io.load_npz`).
    k : int
        The split's number.
    data_sha256 : str, optional
        The checksum of the data at hand: a file made from other data is refused.

    Returns
    -------
    dict of str to ndarray of int64
        Row indices keyed by ``SPLIT_PARTS``.

    Raises
    ------
    rejectopt.exceptions.IntermediateFileError
        Naming the file: corrupt, edited, no content record, other data, or overlapping or
        missing parts.
    KeyError
        The file has no split ``k``.

    Examples
    --------
    Reading the pipeline's splits of a dataset (a file :func:`save_splits` wrote; shown, not
    run)::

        parts = load_split("results/data/iris/splits.npz", 0)
        list(parts)   # ['trn1', 'val1', 'trn2', 'val2', 'tst']
    """
    data = load_npz(path, expect={"data_sha256": data_sha256})
    missing = [f"{part}_{k}" for part in SPLIT_PARTS if f"{part}_{k}" not in data]
    if missing:
        raise KeyError(
            f"{path} has no split {k} (missing {', '.join(missing)}); rerun make_splits with n_splits > {k}"
        )
    parts = {part: data[f"{part}_{k}"] for part in SPLIT_PARTS}
    try:
        _check_split(parts, int(data.provenance.get("n_rows", -1)), where=f"{path}: split {k}")
    except ValueError as err:
        raise IntermediateFileError(f"{err}; {recompute_hint(path)}") from err
    return parts
