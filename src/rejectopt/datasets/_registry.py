"""Registry of the 22 datasets of the paper's Table 2: raw files, sources, checksums, shapes.

``n_examples``, ``n_features`` and ``n_classes`` of a :class:`DatasetSpec` are
what :func:`rejectopt.datasets.prepare_dataset` produces (and checks);
``table2`` holds the paper's numbers.  They agree for every dataset; the
encodings needed for that are described in ``notes`` and in the readers of
:mod:`rejectopt.datasets._parsers`.

Checksums: ``RawFile.sha256`` is the sha256 of the stored (uncompressed,
member-extracted) file, pinned from ``MANIFEST*.tsv`` of the shared mirror, and
``RawFile.size`` its bytes (the MANIFESTs' ``bytes_uncompressed``, equal to the
decompressed mirror copies'); both None for files no verified copy was available
for (a lock file records the hash on first download; their size is capped by
``unpack_max_ratio`` only).  ``DatasetSpec.xy_sha256`` is :func:`fingerprint` of the
prepared arrays, pinned for the 15 datasets prepared from the mirror.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from . import _parsers as P

__all__ = [
    "CLASSIFICATION",
    "ORDINAL",
    "REGISTRY",
    "DatasetSpec",
    "RawFile",
    "get_spec",
]

UCI = "https://archive.ics.uci.edu/ml/machine-learning-databases"
LIBSVM = "https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets"
TORGO = "https://www.dcc.fc.up.pt/~ltorgo/Regression"


# fingerprint(X, y) of the prepared data, computed from the verified mirror files.
_XY_SHA256 = {
    "avila": "819c6693768453abc81b8576c1839dbcc61cef079f24090b688d0dcb8ce79a01",
    "letter": "dbe2bdfe1ed31020d36755b93c1af138ac82a2c542cc334b777127736749d9fd",
    "marketing": "c6ce51b1573b402d7efa543581ac9b4b05ff62989f32b8f280bf9340af8dab0e",
    "pendigit": "5d40b75b92ff8e556e3d85f9560540a58310da5ea09cb8dcfe9892b85ebca8be",
    "phishing": "439231edae468b19a7e65b6f583dc9718097e7e96a72a95891507ac8f379f548",
    "sattelite": "95906af1b1c215545780c83047c02b3eb6c3205ae3dbf6ed5115c7dc90ddc8cb",
    "shuttle": "5532d7ee40cf9237bb255a0493568434cbda9bd01d6480c4cac73d5a0cdfc849",
    "abalone": "37a9a595b02c95db0732d8c2dcd76603485ac2034b27dd17c9bda2123617abcd",
    "bank": "0d9e4d6b9cbb461a5447b2baba6536ae66f3e13917cf556b2317cc5baf72d196",
    "bikeshare": "c991f84fb1903f82f073e47671ce76fef27b0a57029edf2eed44ea5377730048",
    "california": "e5cb44df861e0e720fc40170ffd0bfc1585e35aa9412ec73474ff7532ada96ec",
    "ccpp": "fa431410a804593fd7eb594ac2f94c5b3c9a28d9045387164824fa4782307e56",
    "cpu": "7c8a8b5fc438ae00df9a932ef10ec7a912c458083d35259ddbc503a167a15623",
    "gpu": "4c88b57816e99bf726865d08d07d37fbb3002faab19a1fad75bf6bcf2d53d3b3",
    "metro": "ae2d19147cd01615fae87f14dc6b5a6247ff7f7eeed91826da3a3c82aa88d1be",
}


@dataclass(frozen=True)
class RawFile:
    """One raw file of a dataset and where to get it.

    Attributes
    ----------
    dataset : str
        Dataset name (the mirror sub-folder).
    name : str
        Local file name after download/extraction (also the mirror file name).
    url : str
        Official download URL (of the archive if ``archive_member`` is set).
    sha256 : str or None
        sha256 of the stored file (uncompressed, extracted); None = record in the lock file.
    archive_member : str or None
        Member path inside a zip/tar archive at ``url`` (its basename is tried as well).
    compression : str or None
        Compression of the download when it is a single compressed file: 'gz', 'bz2', 'xz', 'Z'.
    download_sha256 : str or None
        Optional sha256 of the downloaded bytes (archive or compressed file).
    size : int or None
        Bytes of the stored file, pinned beside ``sha256`` (no longer file has that hash): a
        mirror copy, a download or a decompressed stream is stopped at the first byte past it,
        so a decompression bomb or a wrong file never fills the disk. None (no pinned size):
        decompressing stops at the ``unpack_max_ratio`` cap instead.

    Parameters
    ----------
    dataset, name, url : str
        The attributes above.
    sha256, archive_member, compression, download_sha256 : str or None, default None
        The attributes above.
    size : int or None, default None
        The attribute above.
    """

    dataset: str
    name: str
    url: str
    sha256: str | None = None
    archive_member: str | None = None
    compression: str | None = None
    download_sha256: str | None = None
    size: int | None = None

    def __post_init__(self):
        if self.size is not None and (
            isinstance(self.size, bool) or not isinstance(self.size, int) or self.size < 0
        ):
            raise ValueError(
                f"RawFile {self.dataset}/{self.name}: size must be a number of bytes >= 0 or None, "
                f"got {self.size!r}"
            )


@dataclass(frozen=True)
class DatasetSpec:
    """Everything needed to obtain and parse one dataset.

    Attributes
    ----------
    name : str
        Dataset name as in Table 2 (lower case, the paper's spelling "sattelite").
    task : {"classification", "ordinal"}
    files : tuple of RawFile
        All raw files the reader needs.
    n_examples, n_features, n_classes : int
        Shape of the prepared data (checked by ``prepare_dataset``).
    parser : callable
        Reader ``paths -> (X, target)`` (see :mod:`rejectopt.datasets._parsers`).
    target_encoding : {"labels", "equal_frequency"}
        "labels": distinct target values -> 0..K-1 in sorted order;
        "equal_frequency": :func:`equal_frequency_bins` into ``n_classes`` bins.
    notes : str
        Provenance and every deviation or encoding choice.
    xy_sha256 : str or None
        Pinned :func:`fingerprint` of the prepared (X, y); None if not yet known.
    table2 : tuple of int
        (examples, features, classes) as printed in the paper's Table 2.

    Parameters
    ----------
    name, task : str
        The attributes above.
    files : tuple of RawFile
        The attribute above.
    n_examples, n_features, n_classes : int
        The attributes above.
    parser : callable
        The attribute above.
    notes : str, default ""
        The attribute above.
    xy_sha256 : str or None, default None
        The attribute above.
    target_encoding : {"labels", "equal_frequency"}, default "labels"
        The attribute above.
    table2 : tuple of int, default (0, 0, 0)
        The attribute above.

    Examples
    --------
    >>> from rejectopt.datasets import get_spec
    >>> spec = get_spec("shuttle")
    >>> spec.task, (spec.n_examples, spec.n_features, spec.n_classes), spec.target_encoding
    ('classification', (58000, 9, 7), 'labels')
    """

    name: str
    task: str
    files: tuple[RawFile, ...]
    n_examples: int
    n_features: int
    n_classes: int
    parser: Callable
    notes: str = ""
    xy_sha256: str | None = None
    target_encoding: str = "labels"
    table2: tuple[int, int, int] = field(default=(0, 0, 0))

    @property
    def file_names(self) -> tuple[str, ...]:
        """Names of the raw files."""
        return tuple(f.name for f in self.files)


def _spec(name, task, files, shape, parser, notes, xy_sha256=None, encoding=None, table2=None):
    encoding = encoding or ("labels" if task == "classification" else "equal_frequency")
    return DatasetSpec(
        name=name,
        task=task,
        files=tuple(files),
        n_examples=shape[0],
        n_features=shape[1],
        n_classes=shape[2],
        parser=parser,
        notes=notes,
        xy_sha256=xy_sha256 or _XY_SHA256.get(name),
        target_encoding=encoding,
        table2=tuple(table2 or shape),
    )


def _f(dataset, name, url, sha256=None, **kwargs) -> RawFile:
    return RawFile(dataset=dataset, name=name, url=url, sha256=sha256, **kwargs)


_SPECS = [
    # ------------------------------------------------------------------ classification
    _spec(
        "avila",
        "classification",
        [
            _f(
                "avila",
                "avila-tr.txt",
                f"{UCI}/00459/avila.zip",
                "493332af20f750a6b0f7b0c581dd2236bb68a8ace52b412aea1c9c82b2076357",
                size=999319,
                archive_member="avila/avila-tr.txt",
            ),
            _f(
                "avila",
                "avila-ts.txt",
                f"{UCI}/00459/avila.zip",
                "0ec227d595dd8d8dc6804a7139c8b6d6e00e21aaea0d9052085057aa98c3e589",
                size=999942,
                archive_member="avila/avila-ts.txt",
            ),
        ],
        (20867, 10, 12),
        P.read_avila,
        "Train + test concatenated (10430 + 10437); labels A-I, W, X, Y; CRLF lines.",
    ),
    _spec(
        "codrna",
        "classification",
        [
            _f("codrna", "cod-rna", f"{LIBSVM}/binary/cod-rna"),
            _f("codrna", "cod-rna.t", f"{LIBSVM}/binary/cod-rna.t"),
        ],
        (331152, 8, 2),
        P.read_codrna,
        "LIBSVM cod-rna (59,535) + cod-rna.t (271,617) = 331,152 = Table 2; cod-rna.r unused "
        "(as in the authors' ICML 2019 script). Not in the mirror; sha256 unknown -> lock file.",
    ),
    _spec(
        "covtype",
        "classification",
        [
            _f(
                "covtype",
                "covtype.data",
                f"{UCI}/covtype/covtype.data.gz",
                compression="gz",
                download_sha256="614360d0257557dd1792834a85a1cdebfadc3c4f30b011d56afee7ffb5b15771",
            ),
        ],
        (581012, 54, 7),
        P.read_covtype,
        "covtype.data.gz; the download is checked against the sha256 scikit-learn publishes for "
        "covtype.data.gz; the uncompressed file's hash goes to the lock file. Not in the mirror.",
    ),
    _spec(
        "ijcnn",
        "classification",
        [
            _f("ijcnn", "ijcnn1", f"{LIBSVM}/binary/ijcnn1.bz2", compression="bz2"),
        ],
        (49990, 22, 2),
        P.read_ijcnn,
        "LIBSVM ijcnn1.bz2 = ijcnn1.tr (35,000) + ijcnn1.val (14,990) = 49,990; labels -1/+1. "
        "Not in the mirror; sha256 unknown -> lock file.",
    ),
    _spec(
        "letter",
        "classification",
        [
            _f(
                "letter",
                "letter-recognition.data",
                f"{UCI}/letter-recognition/letter-recognition.data",
                "2b89f3602cf768d3c8355267d2f13f2417809e101fc2b5ceee10db19a60de6e2",
                size=712565,
            ),
        ],
        (20000, 16, 26),
        P.read_letter,
        "Label A-Z in the first column.",
    ),
    _spec(
        "marketing",
        "classification",
        [
            _f(
                "marketing",
                "bank-full.csv",
                f"{UCI}/00222/bank.zip",
                "d1513ec63b385506f7cfce9f2c5caa9fe99e7ba4e8c3fa264b3aaf0f849ed32d",
                size=4610348,
                archive_member="bank-full.csv",
            ),
        ],
        (45211, 51, 2),
        P.read_marketing,
        "UCI bank marketing bank-full.csv: 7 numeric + one indicator per level of the 9 "
        "categorical columns (no level dropped, 'unknown' a level) = 51 features as in Table 2.",
    ),
    _spec(
        "pendigit",
        "classification",
        [
            _f(
                "pendigit",
                "pendigits.tra",
                f"{UCI}/pendigits/pendigits.tra",
                "e2b9eb9f0d0467e2b64a4816a3420edf2b8043447576f4b84337aba44a9f97d3",
                size=502098,
            ),
            _f(
                "pendigit",
                "pendigits.tes",
                f"{UCI}/pendigits/pendigits.tes",
                "8bd03229c5c5291fefe43e45465dd948d2645bf23328b9d993e0b777666b2015",
                size=234366,
            ),
        ],
        (10992, 16, 10),
        P.read_pendigit,
        "Train (7,494) + test (3,498) concatenated.",
    ),
    _spec(
        "phishing",
        "classification",
        [
            _f(
                "phishing",
                "phishing",
                f"{LIBSVM}/binary/phishing",
                "0cf66ef36604c393da9359b2e5d894a2df8aee31fd184633cefa138add2ef08a",
                size=3620168,
            ),
        ],
        (11055, 68, 2),
        P.read_phishing,
        "LIBSVM svmlight file (68 binary-coded features, labels 0/1). The mirror copy's line "
        "endings were reconstructed (CRLF -> LF); byte identity with LIBSVM is assumed: if the "
        "official file's raw sha256 differs, the xy fingerprint still identifies the content.",
    ),
    _spec(
        "sattelite",
        "classification",
        [
            _f(
                "sattelite",
                "sat.trn",
                f"{UCI}/statlog/satimage/sat.trn",
                "e896dc88a960fa2404160fc4c3cb3dc53fcf4afd80ba920bf2d261bd42d12613",
                size=525830,
            ),
            _f(
                "sattelite",
                "sat.tst",
                f"{UCI}/statlog/satimage/sat.tst",
                "4b9167b8a92baafafed7c8809aef86d0683a5e685c19d98d119fa6974f0f2479",
                size=236745,
            ),
        ],
        (6435, 36, 6),
        P.read_sattelite,
        "Statlog satimage train (4,435) + test (2,000); classes 1-5, 7. sat.tst line endings "
        "reconstructed (LF) in the mirror; UCI's may differ (then the raw sha256 fails but the "
        "content is the same).",
    ),
    _spec(
        "sensorless",
        "classification",
        [
            _f(
                "sensorless",
                "Sensorless_drive_diagnosis.txt",
                f"{UCI}/00325/Sensorless_drive_diagnosis.txt",
            ),
        ],
        (58509, 48, 11),
        P.read_sensorless,
        "Space separated, class 1..11 last. Not in the mirror; sha256 unknown -> lock file.",
    ),
    _spec(
        "shuttle",
        "classification",
        [
            _f(
                "shuttle",
                "shuttle.trn",
                f"{UCI}/statlog/shuttle/shuttle.trn.Z",
                "87b24ee9fb5137e1d417659cf905d84d0e15342bbaa60770f1ae83da1a38200a",
                size=1153518,
                compression="Z",
            ),
            _f(
                "shuttle",
                "shuttle.tst",
                f"{UCI}/statlog/shuttle/shuttle.tst",
                "4d06df909e29d5f908fcbce4e003c8038a7bb5230b57820b4b87be6f38b1c747",
                size=384257,
            ),
        ],
        (58000, 9, 7),
        P.read_shuttle,
        "Statlog shuttle train (43,500, official .Z, unix-compress decoded in Python) + test "
        "(14,500; TAB separated in the mirror copy, split on any whitespace).",
    ),
    # ------------------------------------------------------------------ ordinal
    _spec(
        "abalone",
        "ordinal",
        [
            _f(
                "abalone",
                "abalone.data",
                f"{UCI}/abalone/abalone.data",
                "de37cdcdcaaa50c309d514f248f7c2302a5f1f88c168905eba23fe2fbc78449f",
                size=191873,
            ),
        ],
        (4177, 10, 19),
        P.read_abalone,
        "Sex one-hot (F, I, M) + 7 numeric; Rings clipped to 3..21 (rings 1-2 -> 3, 22-29 -> 21) "
        "giving the 19 classes of Table 2, the authors' mergeLabels rule (xfrancv/sele); classes "
        "are NOT equal-frequency (sizes 17..689).",
        encoding="labels",
    ),
    _spec(
        "bank",
        "ordinal",
        [
            _f(
                "bank",
                "bank32nh.data",
                f"{TORGO}/bank32NH.tgz",
                "334ef75f2cab6fb94de0b6a949e97a5e73a00f41e443fbbb89f973b4ad2e579b",
                size=1375252,
                archive_member="Bank32nh/bank32nh.data",
            ),
            _f(
                "bank",
                "bank32nh.test",
                f"{TORGO}/bank32NH.tgz",
                "7667de558c37539582e9a3b87e58acb07dabd5f370d6a0a7b8fdb1a61638be7b",
                size=1128523,
                archive_member="Bank32nh/bank32nh.test",
            ),
        ],
        (8192, 32, 10),
        P.read_bank,
        "Torgo's Bank32nh (Delve bank-32nh): .data (4,500) + .test (3,692; one empty line skipped). "
        "Target rej has 1,662 zeros, which all fall in bin 0 (ties), the other bins hold 725-726.",
    ),
    _spec(
        "bikeshare",
        "ordinal",
        [
            _f(
                "bikeshare",
                "hour.csv",
                f"{UCI}/00275/Bike-Sharing-Dataset.zip",
                "e03de4ee4ef4dc376ac6e04bf829673c6269e8eba5c60fa121640fa2f829504f",
                size=1156736,
                archive_member="hour.csv",
            ),
        ],
        (17379, 11, 10),
        P.read_bikeshare,
        "hour.csv, target cnt; dropped instant, dteday, casual, registered (sum to cnt) and "
        "workingday (an exact function of holiday and weekday) -> 11 features as in Table 2.",
    ),
    _spec(
        "california",
        "ordinal",
        [
            _f(
                "california",
                "cal_housing.data",
                f"{TORGO}/cal_housing.tgz",
                "a2b44dcc7e1c9091b43c4f458b25cbd1f7e8068d08edd26bc4703108d3fa6214",
                size=2071484,
                archive_member="CaliforniaHousing/cal_housing.data",
            ),
        ],
        (20640, 8, 10),
        P.read_california,
        "Target medianHouseValue (last column).",
    ),
    _spec(
        "ccpp",
        "ordinal",
        [
            _f(
                "ccpp",
                "Folds5x2_pp.xlsx",
                f"{UCI}/00294/CCPP.zip",
                "ccd490981db2a2f079963b3d9f0aea30d9d338900a0285428dfc6385396f4651",
                size=2029440,
                archive_member="CCPP/Folds5x2_pp.xlsx",
            ),
        ],
        (9568, 4, 10),
        P.read_ccpp,
        "Sheet1 of the workbook (the 5 sheets are shufflings); target PE.",
    ),
    _spec(
        "cpu",
        "ordinal",
        [
            _f(
                "cpu",
                "cpu_act.data",
                f"{TORGO}/compact.tgz",
                "c9217b9151939d8f740438869ee81ed02a0fe99de2ff6ab2faac278f31c3cf45",
                size=1054687,
                archive_member="ComputerActivity/cpu_act.data",
            ),
        ],
        (8192, 21, 10),
        P.read_cpu,
        "Torgo's cpu_act (Delve comp-activ), target usr. The archive URL/member is from memory "
        "of Torgo's page and unverified; the mirror copy is a single unverified copy.",
    ),
    _spec(
        "facebook",
        "ordinal",
        [
            _f(
                "facebook",
                "Features_Variant_1.csv",
                f"{UCI}/00363/Dataset.zip",
                archive_member="Dataset/Training/Features_Variant_1.csv",
            ),
            _f(
                "facebook",
                "Features_TestSet.csv",
                f"{UCI}/00363/Dataset.zip",
                "a34f2e134109e9d05902ec49c46d496c559cf289a868accaab1023a74988d62d",
                size=3113709,
                archive_member="Dataset/Testing/Features_TestSet.csv",
            ),
        ],
        (50993, 53, 10),
        P.read_facebook,
        "Features_Variant_1.csv (40,949) + Features_TestSet.csv (10,044) = 50,993. The mirror "
        "holds only the test file, so the dataset is NOT available from the mirror alone.",
    ),
    _spec(
        "gpu",
        "ordinal",
        [
            _f(
                "gpu",
                "sgemm_product.csv",
                f"{UCI}/00440/sgemm_product_dataset.zip",
                "b545b908c203eaa4d0b78c88e3a7196857efc34da3b6da9be774f017f2b5e960",
                size=14353701,
                archive_member="sgemm_product.csv",
            ),
        ],
        (241600, 14, 10),
        P.read_gpu,
        "14 kernel parameters; target = mean of Run1..Run4 (ms).",
    ),
    _spec(
        "metro",
        "ordinal",
        [
            _f(
                "metro",
                "Metro_Interstate_Traffic_Volume.csv",
                f"{UCI}/00492/Metro_Interstate_Traffic_Volume.csv.gz",
                "749c90d720360a4215bb15345526073c079ba4cc95e3fa558796d083f85fce9e",
                size=3237208,
                compression="gz",
            ),
        ],
        (48204, 30, 10),
        P.read_metro,
        "30 features = holiday one-hot incl. 'None' (12) + temp, rain_1h, snow_1h, clouds_all (4) "
        "+ weather_main one-hot (11) + month, day of month, hour (3); weather_description "
        "dropped. Our choice (the authors' ICML 2019 script also one-hot encodes "
        "weather_description, > 30 features).",
    ),
    _spec(
        "msd",
        "ordinal",
        [
            _f(
                "msd",
                "YearPredictionMSD.txt",
                f"{UCI}/00203/YearPredictionMSD.txt.zip",
                archive_member="YearPredictionMSD.txt",
            ),
        ],
        (499671, 90, 41),
        P.read_msd,
        "Year (first column) is the class; only years 1970..2010 kept -> 41 classes, as in the "
        "authors' script (skipLabels); 515,345 raw rows -> 499,671 expected (unchecked: the "
        "raw file is not in the mirror).",
        encoding="labels",
    ),
    _spec(
        "superconduct",
        "ordinal",
        [
            _f(
                "superconduct",
                "train.csv",
                f"{UCI}/00464/superconduct.zip",
                archive_member="train.csv",
            ),
        ],
        (21263, 81, 10),
        P.read_superconduct,
        "train.csv of superconduct.zip; target critical_temp. Not in the mirror.",
    ),
]

#: The 22 datasets of the paper's Table 2, by name: classification first, then ordinal regression.
REGISTRY: dict[str, DatasetSpec] = {spec.name: spec for spec in _SPECS}
#: Names of the 11 classification datasets, in the order of Table 2.
CLASSIFICATION: tuple[str, ...] = tuple(s.name for s in _SPECS if s.task == "classification")
#: Names of the 11 ordinal-regression datasets (integer targets such as abalone's rings kept as
#: ordered classes, real ones binned by :func:`equal_frequency_bins`), in the order of Table 2.
ORDINAL: tuple[str, ...] = tuple(s.name for s in _SPECS if s.task == "ordinal")


def get_spec(name: str) -> DatasetSpec:
    """Specification of dataset ``name``.

    Parameters
    ----------
    name : str
        A name of ``REGISTRY`` (lower case, the paper's spelling).

    Returns
    -------
    DatasetSpec
        Its raw files, shape, parser and target encoding.

    Raises
    ------
    ValueError
        If ``name`` is unknown; the message lists the valid names.

    Examples
    --------
    >>> from rejectopt.datasets import get_spec
    >>> get_spec("abalone").file_names
    ('abalone.data',)
    >>> get_spec("mnist")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    ValueError: unknown dataset 'mnist'; valid names: avila, codrna, covtype, ijcnn, letter, ...
    """
    try:
        return REGISTRY[name]
    except KeyError:
        raise ValueError(f"unknown dataset {name!r}; valid names: {', '.join(REGISTRY)}") from None
