"""Readers turning the raw files of each dataset into a design matrix and a target.

Every reader takes a mapping ``{raw file name: local path}`` (the names of the
:class:`~rejectopt.datasets.RawFile` entries of the dataset) and returns
``(X, target)``: ``X`` is a float64 array of shape (n, d) and ``target`` a 1-D
array holding the raw class labels (classification) or the real-valued
response (ordinal regression).  :func:`encode_labels` and
:func:`equal_frequency_bins` turn the target into the canonical ``y``
(int64 in 0..K-1); :func:`rejectopt.datasets.parse_raw` chains both steps.

The encoding decisions needed to reach the feature counts of the paper's
Table 2 (marketing, bikeshare, metro, abalone) are documented on the readers.

A cell that should be numeric but holds text, NaN or inf, a missing value
(empty cell, a line cut short as by a truncated download) or a missing label
raises ValueError naming the file, its line and the column, instead of
turning silently into NaN features or a class of its own.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from os import PathLike
from pathlib import Path

import numpy as np
import pandas as pd

__all__ = [
    "encode_labels",
    "equal_frequency_bins",
    "read_abalone",
    "read_avila",
    "read_bank",
    "read_bikeshare",
    "read_california",
    "read_ccpp",
    "read_codrna",
    "read_covtype",
    "read_cpu",
    "read_facebook",
    "read_gpu",
    "read_ijcnn",
    "read_letter",
    "read_marketing",
    "read_metro",
    "read_msd",
    "read_pendigit",
    "read_phishing",
    "read_sattelite",
    "read_sensorless",
    "read_shuttle",
    "read_superconduct",
]

logger = logging.getLogger(__name__)

Paths = Mapping[str, "str | PathLike[str]"]


# --------------------------------------------------------------------------- targets
def encode_labels(labels) -> np.ndarray:
    """Map arbitrary class labels to int64 codes 0..K-1 in sorted label order.

    Parameters
    ----------
    labels : array-like, shape (n,)
        Raw labels (strings or numbers).

    Returns
    -------
    numpy.ndarray of int64, shape (n,)
        ``codes[i]`` is the rank of ``labels[i]`` among the distinct labels.
    """
    _, codes = np.unique(np.asarray(labels), return_inverse=True)
    return codes.astype(np.int64).ravel()


def equal_frequency_bins(target, n_bins: int) -> np.ndarray:
    """Discretise a real target into ordered bins of (as nearly as ties allow) equal size.

    Rule (deterministic, O(m) in the number m of distinct values): the
    distinct values are visited in ascending order and appended to the
    current bin.  The quota of the current bin is ``remaining examples /
    remaining bins``.  A non-empty bin is closed before the next value when
    adding that value's count would leave the bin farther from its quota
    than it is now (ties keep the value out), and it is forced closed when
    the distinct values left are just enough to give every remaining bin
    one value.  The last bin takes the rest.  Equal values always share a
    bin, every bin is non-empty, and ``min(n_bins, m)`` bins are produced;
    with distinct values the bin sizes differ by at most one.

    Parameters
    ----------
    target : array-like, shape (n,)
        Real-valued (or integer) responses; NaN is not allowed.
    n_bins : int
        Requested number of bins Y (>= 1).

    Returns
    -------
    numpy.ndarray of int64, shape (n,)
        Bin index 0..Y'-1 of every example, increasing with the target,
        where ``Y' = min(n_bins, number of distinct values)``.
    """
    values = np.asarray(target, dtype=np.float64).ravel()
    if n_bins < 1:
        raise ValueError(f"n_bins must be >= 1, got {n_bins}")
    if np.isnan(values).any():
        raise ValueError("target contains NaN")
    distinct, inverse, counts = np.unique(values, return_inverse=True, return_counts=True)
    bin_of_value = _assign_values_to_bins(counts, n_bins)
    if bin_of_value.max() + 1 < n_bins:
        logger.warning(
            "only %d distinct target values: %d bins instead of %d",
            len(distinct),
            bin_of_value.max() + 1,
            n_bins,
        )
    return bin_of_value[inverse.ravel()].astype(np.int64)


def _assign_values_to_bins(counts: np.ndarray, n_bins: int) -> np.ndarray:
    """Greedy contiguous grouping of value counts into bins (see equal_frequency_bins)."""
    n_values = len(counts)
    n_bins = min(n_bins, n_values)
    bin_of_value = np.empty(n_values, dtype=np.int64)
    remaining_examples = int(counts.sum())
    current_bin, current_size = 0, 0
    for i, count in enumerate(counts.tolist()):
        if current_size > 0 and current_bin < n_bins - 1:
            quota = remaining_examples / (n_bins - current_bin)
            values_left = n_values - i  # including value i
            bins_left_after_this = n_bins - current_bin - 1
            overshoots = abs(current_size + count - quota) >= abs(current_size - quota)
            if overshoots or values_left <= bins_left_after_this:
                remaining_examples -= current_size
                current_bin, current_size = current_bin + 1, 0
        bin_of_value[i] = current_bin
        current_size += count
    return bin_of_value


# --------------------------------------------------------------------------- helpers
def _path(paths: Paths, name: str) -> Path:
    try:
        return Path(paths[name])
    except KeyError:
        raise KeyError(f"raw file {name!r} missing; got {sorted(paths)}") from None


def _split_features_target(
    table: pd.DataFrame, target_col, numeric_target: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    _validate(table, [c for c in table.columns if c != target_col], target_col, numeric_target)
    target = table[target_col].to_numpy()
    X = table.drop(columns=[target_col]).to_numpy(dtype=np.float64)
    return np.ascontiguousarray(X), target


def _tag(table: pd.DataFrame, path: Path, header_lines: int) -> pd.DataFrame:
    """Remember where ``table`` was read from, for error messages naming the file and line."""
    table.attrs["source"] = Path(path)
    table.attrs["header_lines"] = header_lines
    return table


#: pandas < 3's default float parser can land one ulp off the correctly rounded value (680 of the 4,100
#: numbers of superconduct's excerpt with pandas 2.2); "round_trip" is exact there, so a dataset is the
#: same bits under every supported pandas. pandas 3's default is exact and deprecates the option.
EXACT_FLOATS = {"float_precision": "round_trip"} if int(pd.__version__.split(".")[0]) < 3 else {}


def _read_csv(path: Path, header_lines: int, **kwargs) -> pd.DataFrame:
    """``pandas.read_csv`` whose tokenizer errors name the file; the table is tagged (see _tag)."""
    try:
        table = pd.read_csv(path, **EXACT_FLOATS, **kwargs)
    except (pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        raise ValueError(f"{Path(path).name}: {exc}") from exc
    return _tag(table, path, header_lines)


def _read_whitespace_table(path: Path) -> pd.DataFrame:
    """Numeric table split on any run of whitespace (spaces or TABs), blank lines skipped."""
    return _read_csv(path, 0, sep=r"\s+", header=None, skip_blank_lines=True, engine="c")


def _read_comma_table(path: Path, **kwargs) -> pd.DataFrame:
    """Comma-separated table without header; spaces after commas are allowed."""
    return _read_csv(path, 0, header=None, skipinitialspace=True, **kwargs)


def _read_header_csv(path: Path, **kwargs) -> pd.DataFrame:
    """Table whose first line holds the column names."""
    return _read_csv(path, 1, **kwargs)


def _concat_last_column_target(
    tables: list[pd.DataFrame], numeric_target: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    for part in tables:  # per file, so that errors name the file and its line
        _validate(part, list(part.columns[:-1]), part.columns[-1], numeric_target)
    table = pd.concat(tables, ignore_index=True)
    table.attrs = {}  # validated above, per file
    return _split_features_target(table, table.columns[-1])


# --------------------------------------------------------------------------- validation
def _validate(
    table: pd.DataFrame, numeric_cols, target_col=None, numeric_target: bool = False
) -> None:
    """Raise ValueError naming the file, line and column of the first bad cell.

    Bad cells: a non-numeric or non-finite value (text, NaN, inf) or a missing
    value (empty cell, a line with too few fields) in ``numeric_cols``; a
    missing target; a non-numeric target if ``numeric_target``.  Nothing is
    converted or returned: the caller's arrays are computed as before.
    A table without a ``source`` tag (see _tag) is not checked.
    """
    source = table.attrs.get("source")
    if source is None:
        return
    first = None  # (row, column position, column label, value)
    columns = list(table.columns)
    checks = [(c, True) for c in numeric_cols]
    if target_col is not None:
        checks.append((target_col, numeric_target))
    for col, numeric in checks:
        series = table[col]
        if numeric:
            values = series.to_numpy()
            if values.dtype.kind in "iub":
                continue
            if values.dtype.kind == "f":
                bad = ~np.isfinite(values)
            else:
                bad = ~np.isfinite(
                    pd.to_numeric(series, errors="coerce").to_numpy(dtype=np.float64)
                )
        else:
            bad = series.isna().to_numpy()
        if bad.any():
            row = int(np.argmax(bad))
            key = (row, columns.index(col))
            if first is None or key < first[:2]:
                first = (*key, col, series.iloc[row])
    if first is None:
        return
    row, _, col, value = first
    if isinstance(value, str):
        what = f"non-numeric value {value!r}"
    elif pd.isna(value):
        what = "missing value (empty cell, NaN or too few fields)"
    else:
        what = f"non-finite value {value!r}"
    column = f"column {col + 1}" if isinstance(col, (int, np.integer)) else f"column {col!r}"
    raise ValueError(
        f"{source.name}: {_where(source, row, table.attrs.get('header_lines', 0))}, {column}: {what}"
    )


def _where(path: Path, row: int, header_lines: int = 0, skip_comments: bool = False) -> str:
    """'line N' of data row ``row`` (0-based; blank lines and the header skipped as pandas does)."""
    if path.suffix.lower() in (".xlsx", ".xls"):
        return f"sheet row {row + header_lines + 1}"
    wanted = header_lines + row
    seen = 0
    with open(path, "rb") as handle:
        for number, raw in enumerate(handle, start=1):
            text = raw.split(b"#", 1)[0] if skip_comments else raw
            if not text.strip():
                continue
            if seen == wanted:
                return f"line {number}"
            seen += 1
    return f"data row {row + 1}"


def _svmlight_problem(path: Path, n_features: int) -> str | None:
    """'line N: ...' of the first line of an svmlight file that cannot be parsed, else None."""
    with open(path, "rb") as handle:
        for number, raw in enumerate(handle, start=1):
            tokens = raw.split(b"#", 1)[0].split()
            if not tokens:
                continue
            try:
                float(tokens[0])
            except ValueError:
                return f"line {number}: bad label {tokens[0].decode(errors='replace')!r}"
            for token in tokens[1:]:
                index, sep, value = token.partition(b":")
                try:
                    index_ok = sep == b":" and 1 <= int(index) <= n_features
                    float(value)
                except ValueError:
                    index_ok = False
                if not index_ok:
                    bad = token.decode(errors="replace")
                    return f"line {number}: bad feature {bad!r} (expected index:value, index 1..{n_features})"
    return None


def _read_svmlight(paths: list[Path], n_features: int) -> tuple[np.ndarray, np.ndarray]:
    # scikit-learn: heavy to import (benchmarks/import_costs_records.csv), LIBSVM files only
    from sklearn.datasets import load_svmlight_files

    try:
        loaded = load_svmlight_files(
            [str(p) for p in paths], n_features=n_features, dtype=np.float64
        )
    except ValueError as exc:
        for path in paths:
            problem = _svmlight_problem(Path(path), n_features)
            if problem is not None:
                raise ValueError(f"{Path(path).name}: {problem}") from exc
        raise ValueError(f"{', '.join(Path(p).name for p in paths)}: {exc}") from exc
    blocks = [loaded[2 * i].toarray() for i in range(len(paths))]
    labels = [loaded[2 * i + 1] for i in range(len(paths))]
    for path, block, label in zip(paths, blocks, labels):
        bad = ~np.isfinite(block)
        bad_label = ~np.isfinite(label)
        if bad.any() or bad_label.any():
            row = int(np.argmax(bad.any(axis=1) | bad_label))
            what = "label" if bad_label[row] else f"feature {int(np.argmax(bad[row])) + 1}"
            raise ValueError(
                f"{Path(path).name}: {_where(Path(path), row, skip_comments=True)}: non-finite {what}"
            )
    return np.ascontiguousarray(np.vstack(blocks)), np.concatenate(labels)


# --------------------------------------------------------------------------- classification
def read_avila(paths: Paths):
    """avila: ``avila-tr.txt`` + ``avila-ts.txt`` concatenated; 10 features, letter labels."""
    tables = [_read_comma_table(_path(paths, f)) for f in ("avila-tr.txt", "avila-ts.txt")]
    return _concat_last_column_target(tables)


def read_codrna(paths: Paths):
    """codrna: LIBSVM ``cod-rna`` (59,535) + ``cod-rna.t`` (271,617) = 331,152 rows, 8 features.

    ``cod-rna.r`` (the 157,413 "remaining" examples) is not used: Table 2's
    331,152 equals exactly training + test.
    """
    return _read_svmlight([_path(paths, "cod-rna"), _path(paths, "cod-rna.t")], n_features=8)


def read_covtype(paths: Paths):
    """covtype: ``covtype.data`` (decompressed from the UCI .gz); 54 features, classes 1..7."""
    return _concat_last_column_target(
        [_read_comma_table(_path(paths, "covtype.data"))], numeric_target=True
    )


def read_ijcnn(paths: Paths):
    """ijcnn: LIBSVM ``ijcnn1`` (= ijcnn1.tr + ijcnn1.val, 49,990 rows), 22 features, labels -1/+1."""
    return _read_svmlight([_path(paths, "ijcnn1")], n_features=22)


def read_letter(paths: Paths):
    """letter: label (A..Z) in the FIRST column, 16 integer features."""
    table = _read_comma_table(_path(paths, "letter-recognition.data"))
    return _split_features_target(table, table.columns[0])


def read_marketing(paths: Paths):
    """marketing (UCI bank marketing, ``bank-full.csv``): 7 numeric + full one-hot = 51 features.

    The 7 numeric columns (age, balance, day, duration, campaign, pdays,
    previous) are kept as numbers; each of the 9 categorical columns (job 12,
    marital 3, education 4, default 2, housing 2, loan 2, contact 3, month 12,
    poutcome 4 levels, "unknown" being a level of its own) is one-hot encoded
    with one indicator per level (no level dropped): 7 + 44 = 51 features,
    as in Table 2 (drop-first would give 42, binary columns as 0/1 48).
    Columns: numeric ones in file order, then the indicators per categorical
    column in file order, levels sorted.  Target ``y``: no/yes.
    """
    table = _read_header_csv(_path(paths, "bank-full.csv"), sep=";")
    categorical = [
        c
        for c in table.columns
        if table[c].dtype == object or pd.api.types.is_string_dtype(table[c])
    ]
    numeric = [c for c in table.columns if c not in categorical]
    _validate(table, numeric, "y")
    target = table.pop("y").to_numpy()
    categorical.remove("y")
    blocks = [table[numeric].to_numpy(dtype=np.float64)]
    blocks += [_one_hot(table[c]) for c in categorical]
    return np.ascontiguousarray(np.hstack(blocks)), target


def _one_hot(column: pd.Series, levels=None) -> np.ndarray:
    """Indicator matrix, one column per level (sorted distinct values unless given)."""
    values = column.to_numpy()
    if levels is None:
        levels = np.unique(values)
    return (values[:, None] == np.asarray(levels, dtype=object)[None, :]).astype(np.float64)


def read_pendigit(paths: Paths):
    """pendigit: ``pendigits.tra`` + ``pendigits.tes`` concatenated; 16 features, digits 0..9."""
    tables = [_read_comma_table(_path(paths, f)) for f in ("pendigits.tra", "pendigits.tes")]
    return _concat_last_column_target(tables)


def read_phishing(paths: Paths):
    """phishing: LIBSVM svmlight file, max feature index 68, labels 0/1."""
    return _read_svmlight([_path(paths, "phishing")], n_features=68)


def read_sattelite(paths: Paths):
    """sattelite (statlog satimage): ``sat.trn`` + ``sat.tst``; 36 features, classes 1-5,7."""
    tables = [_read_whitespace_table(_path(paths, f)) for f in ("sat.trn", "sat.tst")]
    return _concat_last_column_target(tables)


def read_sensorless(paths: Paths):
    """sensorless: ``Sensorless_drive_diagnosis.txt``, whitespace separated; 48 features, classes 1..11."""
    return _concat_last_column_target(
        [_read_whitespace_table(_path(paths, "Sensorless_drive_diagnosis.txt"))],
        numeric_target=True,
    )


def read_shuttle(paths: Paths):
    """shuttle (statlog): ``shuttle.trn`` (space separated) + ``shuttle.tst`` (TAB separated in
    the mirror copy); split on any whitespace; 9 features, classes 1..7."""
    tables = [_read_whitespace_table(_path(paths, f)) for f in ("shuttle.trn", "shuttle.tst")]
    return _concat_last_column_target(tables)


# --------------------------------------------------------------------------- ordinal
ABALONE_RING_RANGE = (3, 21)


def read_abalone(paths: Paths):
    """abalone: Sex one-hot (F, I, M) + 7 numeric = 10 features; target Rings clipped to 3..21.

    Rings take 28 distinct values (1..27 and 29).  Rings 1-2 are merged into 3
    and 22-29 into 21, leaving the 19 classes 3..21 of Table 2; this is the
    ``mergeLabels`` rule of the authors' script (xfrancv/sele
    ordreg/src/dataset/abalone/create_abalone_data.m).  The target is then
    encoded as labels (not binned).  ``equal_frequency_bins(rings, 19)`` would
    also give 19 non-empty classes, with other boundaries.
    """
    table = _read_comma_table(_path(paths, "abalone.data"))
    _validate(table, list(table.columns[1:8]), table.columns[8], numeric_target=True)
    sex = _one_hot(table[0], levels=["F", "I", "M"])
    numeric = table.iloc[:, 1:8].to_numpy(dtype=np.float64)
    rings = np.clip(table[8].to_numpy(dtype=np.int64), *ABALONE_RING_RANGE)
    return np.ascontiguousarray(np.hstack([sex, numeric])), rings


def read_bank(paths: Paths):
    """bank (Delve bank-32nh, Torgo's files): ``bank32nh.data`` + ``bank32nh.test``
    (one empty line in .test is skipped); 32 features, target ``rej`` (last column)."""
    tables = [_read_whitespace_table(_path(paths, f)) for f in ("bank32nh.data", "bank32nh.test")]
    return _concat_last_column_target(tables, numeric_target=True)


def read_bikeshare(paths: Paths):
    """bikeshare: ``hour.csv``; 11 features, target ``cnt``.

    Dropped: ``instant`` (row id), ``dteday`` (date, encoded by yr/mnth/weekday),
    ``casual`` and ``registered`` (they sum to the target) and ``workingday``,
    which is an exact function of ``holiday`` and ``weekday`` (workingday = 1
    iff weekday is not 0/6 and holiday = 0; verified on all 17,379 rows), so
    it adds no information.  Kept: season, yr, mnth, hr, holiday, weekday,
    weathersit, temp, atemp, hum, windspeed = 11 features as in Table 2.
    """
    table = _read_header_csv(_path(paths, "hour.csv"))
    workingday = ((table["weekday"] % 6 != 0) & (table["holiday"] == 0)).astype(int)
    if not (workingday == table["workingday"]).all():
        raise ValueError("hour.csv: workingday is not determined by holiday and weekday")
    table = table.drop(columns=["instant", "dteday", "casual", "registered", "workingday"])
    return _split_features_target(table, "cnt", numeric_target=True)


def read_california(paths: Paths):
    """california: ``cal_housing.data``; 8 features, target medianHouseValue (last column)."""
    return _concat_last_column_target(
        [_read_comma_table(_path(paths, "cal_housing.data"))], numeric_target=True
    )


def read_ccpp(paths: Paths):
    """ccpp: ``Folds5x2_pp.xlsx`` sheet ``Sheet1`` (the 5 sheets are shufflings of the same
    9,568 rows); 4 features (AT, V, AP, RH), target PE."""
    path = _path(paths, "Folds5x2_pp.xlsx")
    try:
        import openpyxl  # noqa: F401  openpyxl: optional (the pipeline extra), only ccpp's .xlsx needs it
    except ImportError as err:
        raise ImportError(
            f"reading {path} (dataset ccpp) needs openpyxl: pip install 'rejectopt[pipeline]' "
            "(or pip install openpyxl)"
        ) from err
    table = _tag(pd.read_excel(path, sheet_name="Sheet1", engine="openpyxl"), path, 1)
    return _split_features_target(table, "PE", numeric_target=True)


def read_cpu(paths: Paths):
    """cpu (Delve comp-activ, cpu_act): ``cpu_act.data``; 21 features, target ``usr``."""
    return _concat_last_column_target(
        [_read_comma_table(_path(paths, "cpu_act.data"))], numeric_target=True
    )


def read_facebook(paths: Paths):
    """facebook: ``Features_Variant_1.csv`` (40,949) + ``Features_TestSet.csv`` (10,044)
    = 50,993 rows; 53 features, target = last column (comments in the next H hours).

    Both files are required; the test file alone is never used as a stand-in.
    """
    tables = [
        _read_comma_table(_path(paths, f))
        for f in ("Features_Variant_1.csv", "Features_TestSet.csv")
    ]
    return _concat_last_column_target(tables, numeric_target=True)


def read_gpu(paths: Paths):
    """gpu (SGEMM): ``sgemm_product.csv``; 14 kernel parameters, target = mean of Run1..Run4 (ms)."""
    table = _read_header_csv(_path(paths, "sgemm_product.csv"))
    runs = [c for c in table.columns if c.startswith("Run")]
    if len(runs) != 4:
        raise ValueError(f"sgemm_product.csv: expected 4 Run columns, got {runs}")
    _validate(table, list(table.columns))
    target = table[runs].to_numpy(dtype=np.float64).mean(axis=1)
    X = table.drop(columns=runs).to_numpy(dtype=np.float64)
    return np.ascontiguousarray(X), target


METRO_HOLIDAYS = (
    "Christmas Day",
    "Columbus Day",
    "Independence Day",
    "Labor Day",
    "Martin Luther King Jr Day",
    "Memorial Day",
    "New Years Day",
    "None",
    "State Fair",
    "Thanksgiving Day",
    "Veterans Day",
    "Washingtons Birthday",
)
METRO_WEATHER = (
    "Clear",
    "Clouds",
    "Drizzle",
    "Fog",
    "Haze",
    "Mist",
    "Rain",
    "Smoke",
    "Snow",
    "Squall",
    "Thunderstorm",
)


def read_metro(paths: Paths):
    """metro: ``Metro_Interstate_Traffic_Volume.csv``; 30 features, target traffic_volume.

    Encoding (Table 2 gives 30 features but the paper no encoding): holiday
    one-hot over its 12 values incl. "None" (12) + temp, rain_1h, snow_1h,
    clouds_all (4) + weather_main one-hot (11) + month, day of month and hour
    taken from date_time (3) = 30.  This follows the authors' ICML 2019 script
    (xfrancv/sele ordreg/src/dataset/Metro/create_metro.m: holiday one-hot,
    the 4 numbers, weather_main one-hot, the "MM-DD" day and the hour) minus its
    weather_description one-hot (38 levels, a refinement of weather_main), which
    would exceed 30.  The literal string "None" is read as text, not NA.
    """
    table = _read_header_csv(
        _path(paths, "Metro_Interstate_Traffic_Volume.csv"), keep_default_na=False
    )
    _validate(
        table, ["temp", "rain_1h", "snow_1h", "clouds_all"], "traffic_volume", numeric_target=True
    )
    unknown = (set(table["holiday"]) - set(METRO_HOLIDAYS)) | (
        set(table["weather_main"]) - set(METRO_WEATHER)
    )
    if unknown:
        raise ValueError(f"metro: unexpected category levels {sorted(unknown)}")
    numeric = table[["temp", "rain_1h", "snow_1h", "clouds_all"]].to_numpy(dtype=np.float64)
    stamp = pd.to_datetime(table["date_time"], format="%Y-%m-%d %H:%M:%S")
    calendar = np.column_stack([stamp.dt.month, stamp.dt.day, stamp.dt.hour]).astype(np.float64)
    X = np.hstack(
        [
            _one_hot(table["holiday"], METRO_HOLIDAYS),
            numeric,
            _one_hot(table["weather_main"], METRO_WEATHER),
            calendar,
        ]
    )
    return np.ascontiguousarray(X), table["traffic_volume"].to_numpy(dtype=np.float64)


MSD_YEARS = (1970, 2010)


def read_msd(paths: Paths):
    """msd: ``YearPredictionMSD.txt`` (zip member); target = year (FIRST column), 90 features.

    Only songs from 1970..2010 are kept and each year is its own class (41
    classes), as in the authors' script (xfrancv/sele
    ordreg/src/dataset/YearPredictionMSD/create_msd_data.m, ``skipLabels``
    variant): this explains Table 2's 41 classes; the row count 499,671 of
    Table 2 (vs 515,345 raw) is the expected result but could not be checked
    here because the raw file was not available.
    """
    table = _read_comma_table(_path(paths, "YearPredictionMSD.txt"))
    X, year = _split_features_target(table, table.columns[0], numeric_target=True)
    keep = (year >= MSD_YEARS[0]) & (year <= MSD_YEARS[1])
    return np.ascontiguousarray(X[keep]), year[keep].astype(np.int64)


def read_superconduct(paths: Paths):
    """superconduct: ``train.csv`` (zip member); 81 features, target ``critical_temp``."""
    table = _read_header_csv(_path(paths, "train.csv"))
    if "critical_temp" not in table.columns:
        raise ValueError(
            f"train.csv: no column 'critical_temp' in its header (columns {list(table.columns[:5])}...)"
        )
    return _split_features_target(table, "critical_temp", numeric_target=True)
