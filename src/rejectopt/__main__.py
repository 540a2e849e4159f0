"""``python -m rejectopt``: selective prediction for your own classifier (see :mod:`rejectopt.cli`)."""

from .cli import main

if __name__ == "__main__":
    raise SystemExit(main())
