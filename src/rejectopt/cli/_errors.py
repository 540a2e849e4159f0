"""The one exception of the command line: bad input, reported as one line with exit status 2.

It stays in the shell (not in :mod:`rejectopt.exceptions`): the library never raises it, and
:func:`rejectopt.cli.main` turns it into a message, never into a traceback.
"""

from ..model import one_line

__all__ = ["EXIT_INPUT_ERROR", "InputError", "one_line"]

#: Exit status of ``python -m rejectopt`` on bad input (argparse uses it for bad options too).
EXIT_INPUT_ERROR = 2


class InputError(Exception):
    """Bad user input: a file, a column, a value, an option or a model file.

    Only this exception becomes a one-line message with exit status 2; anything else
    raised under :func:`rejectopt.cli.main` is a bug and keeps its traceback.

    Parameters
    ----------
    *args : object
        The message, naming the file, row, column, option or model field at fault.
    """
