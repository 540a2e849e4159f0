"""The entry point of ``rejectopt`` and ``python -m rejectopt``, and the ``apply`` command.

``select`` and ``validate`` are in their own modules (:mod:`rejectopt.cli._select`,
:mod:`rejectopt.cli._validate`); the library does the work.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path

from ._errors import EXIT_INPUT_ERROR, InputError, one_line
from ._files import check_output_file, write_decisions
from ._model import apply_model, load_model
from ._options import check_pred_column
from ._parser import build_parser
from ._select import run_select
from ._table import load_apply_table
from ._validate import run_validate

__all__ = ["main", "run_apply"]

log = logging.getLogger(__name__)


# --------------------------------------------------------------------------------------------
# apply
# --------------------------------------------------------------------------------------------
def run_apply(args):
    """``apply``: accept or reject the rows of ``--data`` with the model of ``--model``.

    Parameters
    ----------
    args : argparse.Namespace
        The options of ``apply``.

    Returns
    -------
    int
        0; bad input raises :class:`rejectopt.cli._errors.InputError`.
    """
    inputs = {"--model": args.model, "--data": args.data}
    check_output_file(args.out, inputs, args.force)
    model, score, selection = load_model(args.model)
    if model["pred_column"] != "none":
        check_pred_column(model["pred_column"], f"{args.model}: pred_column")
    groups = model.get("groups")
    table = load_apply_table(
        args.data,
        pred_column=model["pred_column"],
        feature_columns=model["feature_columns"],
        group_column=None if groups is None else groups["column"],
    )
    ood_column = model["target"].get("ood_column")
    if ood_column is not None and ood_column in table.columns:
        log.info(
            "%s: column %r (OOD rows at select) is not read: apply decides from the features and the predicted "
            "class alone, as for any row",
            table.source,
            ood_column,
        )
    decisions = apply_model(
        model,
        score,
        selection,
        table,
        unseen=args.unseen_classes,
        extreme=args.extreme_values,
        seed=args.seed,
    )
    check_output_file(args.out, inputs, args.force)
    write_decisions(decisions, Path(args.out))
    print(
        f"wrote {args.out}: {int(decisions['accept'].sum())} of {len(decisions)} rows accepted "
        f"({decisions['accept'].mean():.4f})"
    )
    return 0


# --------------------------------------------------------------------------------------------
# Parser and entry point
# --------------------------------------------------------------------------------------------
def _invoked_as(argv0):
    """The program's name as typed: the console script's file name, ``python -m rejectopt`` for ``-m``."""
    name = Path(argv0).name
    return "python -m rejectopt" if name in ("__main__.py", "") else name


def main(argv=None, prog=None):
    """Entry point of ``rejectopt`` and ``python -m rejectopt``; returns the exit status.

    Bad input (:class:`InputError`) is one line on stderr and exit status 2; anything
    else is a bug and keeps its traceback.

    Parameters
    ----------
    argv : list of str or None, default=None
        The command line without the program name; None reads ``sys.argv``.
    prog : str or None, default=None
        The program's name in the help and errors; None: as invoked (``sys.argv[0]``) when ``argv`` is
        None, else ``rejectopt``.

    Returns
    -------
    int
        0 on success, 2 (:data:`rejectopt.cli._errors.EXIT_INPUT_ERROR`) on bad input.
    """
    if prog is None:
        prog = _invoked_as(sys.argv[0]) if argv is None else "rejectopt"
    args = build_parser(prog).parse_args(argv)
    run = {"select": run_select, "apply": run_apply, "validate": run_validate}[args.command]
    if not logging.getLogger().handlers:
        logging.basicConfig(
            level=logging.WARNING if args.quiet else logging.INFO,
            format="%(levelname)s: %(message)s",
            stream=sys.stderr,
        )
    try:
        return run(args)
    except InputError as err:
        print(f"{prog}: error: {one_line(err)}", file=sys.stderr)  # argparse's own form
        return EXIT_INPUT_ERROR
