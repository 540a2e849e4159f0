"""Route a rule script's logging (the library's progress messages) to the rule's log file."""

import logging


def log_to(path):
    logging.basicConfig(
        filename=path,
        level=logging.INFO,
        format="%(asctime)s %(name)s %(levelname)s %(message)s",
        force=True,
    )
    logging.captureWarnings(True)
