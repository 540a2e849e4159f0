"""``python -m rejectopt``: selective prediction for your own classifier.

``python -m rejectopt --help`` lists the commands, ``--version`` the version.
"""

from .cli import main

if __name__ == "__main__":
    raise SystemExit(main(prog="python -m rejectopt"))
