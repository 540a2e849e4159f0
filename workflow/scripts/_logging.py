"""Route a rule script's logging (the library's progress messages) and its failure to the rule's log."""

import logging
import sys


def log_to(path):
    """Log INFO and up to ``path``; an uncaught exception is logged there too before it ends the job."""
    logging.basicConfig(
        filename=path,
        level=logging.INFO,
        format="%(asctime)s %(name)s %(levelname)s %(message)s",
        force=True,
    )
    logging.captureWarnings(True)
    previous = sys.excepthook

    def log_and_raise(kind, error, trace):
        logging.getLogger("rejectopt").error(
            "%s: %s", kind.__name__, error, exc_info=(kind, error, trace)
        )
        previous(kind, error, trace)

    sys.excepthook = log_and_raise
