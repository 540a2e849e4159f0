"""Every exception the library raises, in one module (as ``sklearn.exceptions``).

The classes are defined here, at the bottom of the library: this module imports nothing of the
package, so catching one (``from rejectopt.exceptions import MemoryBudgetError``) imports neither
scikit-learn nor SciPy. The modules that raise them import them from here, and their old import
paths still work (``rejectopt.exceptions.InfeasibleTargetError`` is this class).

Most are a :class:`ValueError` (bad input, data or files: a caller catching bad input catches
them too); the data sources' errors are an :class:`OSError` (:class:`DataSourceError`), except
damaged bytes (:class:`ChecksumError`).

Two strata above the library keep their own: the pipeline's ``ConfigError`` and ``PluginError``
(:mod:`rejectopt.pipeline.config`, raised by its configuration checks before any job runs) and
the command line's ``InputError`` (``rejectopt.cli._errors``, which ``main`` turns into a
one-line message with exit status 2). The library never raises them, and may not import them.
"""

from __future__ import annotations

__all__ = [
    "ChecksumError",
    "CustomDatasetError",
    "DataSourceError",
    "DecompressionError",
    "DownloadError",
    "InfeasibleTargetError",
    "IntermediateFileError",
    "InvalidParameterError",
    "MemoryBudgetError",
    "NetworkOutputError",
    "RawDataError",
    "RegistryError",
    "ScoreError",
    "UnpackLimitError",
]


# --- the selection function and its target ---------------------------------------------------


class InfeasibleTargetError(ValueError):
    """No selection function meets the target on the sample.

    A :class:`ValueError`, so a caller catching bad input catches this too. A certified target
    (:class:`~rejectopt.targets.Target` with a confidence) also sets ``best_bound`` (a target
    risk that the same procedure certifies on the same rows when asked for; NaN where none below
    the loss's bound does), ``rows_needed`` (the tested rows an error-free sample needs for the
    target at that confidence), ``confidence`` and ``n_calibration``.

    .. versionadded:: 0.4.0
       ``best_bound`` and ``rows_needed``.

    Examples
    --------
    >>> from rejectopt.selective import fit_bounded_improvement
    >>> try:
    ...     fit_bounded_improvement([1.0, 0.0], [0.1, 0.2], target_risk=0.1)
    ... except InfeasibleTargetError as error:
    ...     message = str(error)
    >>> message.split(": ")[0], message[message.index("(smallest"):]
    ('infeasible target_risk=0.1', '(smallest achievable selective risk is 0.5)')
    """


# --- uncertainty scores and the registries -----------------------------------------------------


class InvalidParameterError(ValueError, TypeError):
    """A parameter outside what its owner's constraint table allows (``rejectopt._params.validate_params``).

    Both a :class:`ValueError` and a :class:`TypeError`: a wrong value and a value of the wrong type
    are told by one check, and a caller catching either (as scikit-learn's own checks let it) catches
    this.

    Examples
    --------
    >>> issubclass(InvalidParameterError, ValueError) and issubclass(InvalidParameterError, TypeError)
    True
    """


class RegistryError(ValueError):
    """A name that is unknown, or registered twice.

    Examples
    --------
    >>> from rejectopt.scores import get_score
    >>> try:
    ...     get_score("sel")
    ... except RegistryError as error:
    ...     print(str(error).split("?")[0] + "?")
    unknown score 'sel': did you mean 'sele'?
    """


class ScoreError(ValueError):
    """A score learner's own code failed (raised, exited) or returned an unusable uncertainty.

    The message names the score, its class and, for a plugin, its file: that file needs
    fixing, not the data or the config.

    Examples
    --------
    >>> from rejectopt.scores import select_C
    >>> class Forgetful:  # a user's score whose fit forgets to return self
    ...     def __init__(self, C=1.0):
    ...         self.C = C
    ...     def fit(self, X, y_pred, loss):
    ...         self.mean_ = sum(loss) / len(loss)
    >>> try:
    ...     select_C(Forgetful(), [[0.0]], [0], [0.0], [[0.0]], [0], [0.0], C_grid=[1.0])
    ... except ScoreError as err:
    ...     print(str(err).split("): ")[-1])
    fit must return self, got None
    """


class MemoryBudgetError(ValueError):
    """A SELE fit refused before allocating, its estimated peak over the memory budget.

    A ValueError (the data are too large for this score), told apart so that a caller can name its
    own remedies: the command line names the data file, its ``--score`` and the alternatives.

    Parameters
    ----------
    message : str
        The library's message (its remedies are SELE's parameters and the environment variable).
    n_samples, n_features, n_classes : int
        The shape of the refused fit: rows, features and predicted classes K.
    estimate, budget : float
        The estimated peak (``rejectopt.scores._sele.estimate_fit_bytes``) and the budget, in bytes.

    Examples
    --------
    >>> error = MemoryBudgetError("SELE would need about 7.45 GiB", 10**6, 100, 10, 8e9, 4.3e9)
    >>> error.n_samples, error.estimate > error.budget, isinstance(error, ValueError)
    (1000000, True, True)
    """

    def __init__(self, message, n_samples, n_features, n_classes, estimate, budget):
        super().__init__(message)
        self.n_samples, self.n_features, self.n_classes = (
            int(n_samples),
            int(n_features),
            int(n_classes),
        )
        self.estimate, self.budget = float(estimate), float(budget)

    def __reduce__(self):  # rebuilt whole when it crosses a process boundary (a worker's failure)
        return type(self), (
            str(self),
            self.n_samples,
            self.n_features,
            self.n_classes,
            self.estimate,
            self.budget,
        )


class NetworkOutputError(ValueError):
    """A bad value or shape in a network's outputs, with where it is.

    ``str()`` words the position in the library's terms (the CLI rewords it as its file's rows
    and columns, e.g. ``row 7``, ``logit_3``); the parameters are kept as attributes.

    Parameters
    ----------
    array : str
        ``"logits"``, ``"labels"`` or ``"embeddings"``.
    problem : str
        What is wrong, without the position (e.g. ``"non-finite value nan"``).
    index : int or None, default=None
        0-based row of the first bad value (None for a shape error).
    column : int or None, default=None
        0-based column of that value in a 2-D array.
    function : str or None, default=None
        The function that was given the array (``"entropy"``), named first in the message.

    Examples
    --------
    >>> err = NetworkOutputError("logits", "non-finite value nan", 3, 2)
    >>> str(err), err.index, err.column
    ('logits: non-finite value nan at index 3, column 2', 3, 2)
    """

    def __init__(self, array, problem, index=None, column=None, function=None):
        self.array, self.problem, self.index, self.column = array, problem, index, column
        self.function = function
        where = (
            ""
            if index is None
            else f" at index {index}" + ("" if column is None else f", column {column}")
        )
        super().__init__(f"{function + ': ' if function else ''}{array}: {problem}{where}")


# --- files: the intermediate .npz files, the datasets' raw files, a user's dataset -------------


class IntermediateFileError(ValueError):
    """An intermediate ``.npz`` or ``.csv`` that cannot be trusted: corrupt or truncated, changed since it was
    written, without a content record, or made from other inputs. The message names the file and
    how to make it again (``rejectopt._io.recompute_hint``).

    Examples
    --------
    Prepared data and splits are read back only if they match their record; a file that does not
    is refused as bad input:

    >>> issubclass(IntermediateFileError, ValueError)
    True
    """


class ChecksumError(ValueError):
    """A fetched file's sha256 differs from the pinned or locked one.

    Examples
    --------
    Damaged bytes are a value error, not a missing source, so a caller can tell them apart:

    >>> from rejectopt.exceptions import ChecksumError, DataSourceError
    >>> issubclass(ChecksumError, ValueError), issubclass(ChecksumError, DataSourceError)
    (True, False)
    """


class DataSourceError(OSError):
    """A raw file could be found neither in the mirror nor at its URL.

    Examples
    --------
    A failed download is a data-source error too, and both are ``OSError``:

    >>> from rejectopt.exceptions import DataSourceError, DownloadError
    >>> [issubclass(error, OSError) for error in (DataSourceError, DownloadError)]
    [True, True]
    """


class DownloadError(DataSourceError):
    """A download failed for good (HTTP status not worth retrying, or every retry failed).

    Parameters
    ----------
    message : str
        What failed, naming the file, the URL and the attempts; ``str()`` of the error.
    url, status, attempts
        The attributes below.

    Attributes
    ----------
    url : str
        The URL requested (after ``download_base``).
    status : int or None
        The last HTTP status, None if no HTTP answer came (connection, timeout, short body).
    attempts : int
        Requests made.

    Examples
    --------
    >>> from rejectopt.exceptions import DownloadError
    >>> error = DownloadError("toy.csv: HTTP 404", url="https://example.org/toy.csv", status=404)
    >>> str(error), error.status, error.attempts
    ('toy.csv: HTTP 404', 404, 1)
    """

    def __init__(self, message: str, url: str = "", status: int | None = None, attempts: int = 1):
        super().__init__(message)
        self.url, self.status, self.attempts = url, status, attempts

    def __str__(self) -> str:
        return str(self.args[0])


class DecompressionError(DataSourceError):
    """A compressed file or archive (mirror copy or download) is corrupt or truncated.

    Examples
    --------
    Damaged compressed bytes are a data source that failed, as a missing file is:

    >>> issubclass(DecompressionError, DataSourceError)
    True
    """


class UnpackLimitError(DecompressionError):
    """A raw file holds more than the size the registry pins for it (a plain copy is refused before
    it is copied), or, without a pinned size, a compressed file or archive expands past its cap
    (``unpack_max_ratio`` times its compressed size, at least
    :data:`~rejectopt.datasets._decompress.MIN_UNPACK_CAP_BYTES`): a decompression bomb, another
    file, or one that compresses unusually well. Copying or decompression stopped at the limit.

    Parameters
    ----------
    message : str
        What expanded too far, the limit and what to do; ``str()`` of the error.
    limit : int or None
        The limit in bytes (the pinned size, or the cap).

    Attributes
    ----------
    limit : int or None
        The limit in bytes (the pinned size, or the cap).

    Examples
    --------
    >>> error = UnpackLimitError("toy.csv.gz expands past 1000 bytes", limit=1000)
    >>> str(error), error.limit, isinstance(error, DecompressionError)
    ('toy.csv.gz expands past 1000 bytes', 1000, True)
    """

    def __init__(self, message: str, limit: int | None = None):
        super().__init__(message)
        self.limit = limit

    def __str__(self) -> str:
        return str(self.args[0])


class RawDataError(ValueError):
    """Parsed raw files that cannot be used: the message names the raw files and, where known, the row.

    Examples
    --------
    The raw files were fetched and verified but their content is wrong: bad data, not a bad source:

    >>> issubclass(RawDataError, ValueError), issubclass(RawDataError, DataSourceError)
    (True, False)
    """


class CustomDatasetError(ValueError):
    """A custom dataset entry or file that cannot be used; the message names file, row and column.

    Examples
    --------
    A bad entry or cell is a value error, as a bad argument is:

    >>> from rejectopt.exceptions import CustomDatasetError
    >>> issubclass(CustomDatasetError, ValueError)
    True
    """
