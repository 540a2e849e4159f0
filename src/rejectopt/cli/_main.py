"""The two commands, ``select`` and ``apply``, and the entry point; the library does the work."""

from __future__ import annotations

import logging
import math
import sys
from pathlib import Path

import numpy as np

from ..fitting import _split_ood_rows, fit_selective, split_rows
from ..model import model_dict
from ..report.selection import ood_select_figure, select_figure
from ..scores import get_score
from ..selective import InfeasibleTargetError
from ..targets import OODTarget, parse_target
from ._errors import EXIT_INPUT_ERROR, InputError, one_line
from ._files import check_output_file, check_output_folder, write_decisions, write_outputs
from ._model import apply_model, load_model
from ._report import (
    figure_png,
    json_bytes,
    ood_report_dict,
    ood_report_markdown,
    ood_summary_line,
    report_dict,
    report_markdown,
    summary_line,
    versions,
)
from ._parser import DEFAULT_OOD_COLUMN, build_parser
from ._table import class_indices, class_vocabulary, load_table

__all__ = ["main"]

log = logging.getLogger(__name__)

#: Files written by ``select``, in this order.
SELECT_OUTPUTS = ("model.json", "report.json", "report.md", "rc_curve.png")
#: Fewest rows allowed in each part of the split.
MIN_ROWS_PER_PART = 10


# --------------------------------------------------------------------------------------------
# select
# --------------------------------------------------------------------------------------------
def _parse_C_grid(text):
    try:
        grid = [float(v) for v in str(text).split(",") if v.strip()]
    except ValueError:
        raise InputError(f"--C must be comma-separated numbers, got {text!r}") from None
    if not grid or any(not math.isfinite(c) or c < 0 for c in grid):
        raise InputError(f"--C must be non-negative finite numbers, got {text!r}")
    return grid


def _check_fractions(args):
    fractions = {"--calibration-fraction": args.calibration_fraction, "--report-fraction": args.report_fraction,
                 "--validation-fraction": args.validation_fraction}
    for name, value in fractions.items():
        if not 0.0 < value < 1.0:
            raise InputError(f"{name} must lie in (0, 1), got {value:g}")
    total = args.calibration_fraction + args.report_fraction
    if total >= 1.0:
        raise InputError(f"--calibration-fraction {args.calibration_fraction:g} + --report-fraction "
                         f"{args.report_fraction:g} = {total:g} leaves no rows to train the score: the sum must be "
                         "below 1")


def _ood_column(args, target):
    """The OOD column for an OOD target (None otherwise); ``--ood-column`` with another target is an error."""
    if isinstance(target, OODTarget):
        return args.ood_column if args.ood_column is not None else DEFAULT_OOD_COLUMN
    if args.ood_column is not None:
        raise InputError(f"--ood-column is used only with a target tpr=T,fpr=F or precision=P,recall=R, "
                         f"not --target {target}")
    return None


def run_select(args):
    try:
        target = parse_target(args.target)
    except ValueError as err:
        raise InputError(f"--{err}") from None
    ood_column = _ood_column(args, target)
    C_grid = _parse_C_grid(args.C)
    _check_fractions(args)
    features = [c.strip() for c in args.feature_columns.split(",")] if args.feature_columns else None
    check_output_folder(args.out, SELECT_OUTPUTS, {"--data": args.data}, args.force)
    table = load_table(args.data, pred_column=args.pred_column, label_column=args.label_column,
                       loss_column=args.loss_column, loss=args.loss, feature_columns=features, ood_column=ood_column)
    n = table.X.shape[0]
    id_loss = table.loss if table.is_ood is None else table.loss[~table.is_ood]
    if not id_loss.any():
        log.warning("%s: every loss is 0 (all %d predictions are correct): there is nothing to learn, the score "
                    "and the selection function are arbitrary", table.source, id_loss.size)
    if ood_column is None and features is None and DEFAULT_OOD_COLUMN in table.feature_columns:
        log.warning("%s: column %r is used as a feature; to mark OOD rows with it, give a target tpr=T,fpr=F or "
                    "precision=P,recall=R", table.source, DEFAULT_OOD_COLUMN)
    vocabulary = class_vocabulary(table.pred_keys) if table.pred_keys is not None else None
    classes = class_indices(table.pred_keys, vocabulary)[0] if vocabulary is not None else np.zeros(n, np.intp)
    fractions = (args.calibration_fraction, args.report_fraction, args.validation_fraction, args.seed)
    try:
        if table.is_ood is None:
            parts = split_rows(n, *fractions, min_rows=MIN_ROWS_PER_PART)
        else:
            parts = _split_ood_rows(table.is_ood, *fractions, min_rows=MIN_ROWS_PER_PART)
    except ValueError as err:
        raise InputError(f"{table.source}: {err}" if table.is_ood is not None else err) from None
    log.info("rows: %s", {k: int(v.size) for k, v in parts.items()})
    try:
        fit = fit_selective(table.X, classes, table.loss, target, parts, score=args.score,
                            n_classes=len(vocabulary) if vocabulary is not None else 1, C_grid=C_grid, seed=args.seed,
                            n_jobs=args.n_jobs, is_ood=table.is_ood)
    except InfeasibleTargetError as err:
        message = one_line(err)
        message = message.removeprefix(f"target {target} is ")  # OODTarget.fit names the target: once is enough
        raise InputError(f"cannot meet --target {target} on the calibration rows: {message}") from None
    label = get_score(args.score).label
    log.info("%s: C=%g chosen by validation AuRC %s", label, fit.C, fit.validation_aurc)
    log.info("selection function: threshold %.6g, acceptance probability %.4g at the threshold",
             fit.selection.threshold, fit.selection.accept_prob)
    loss_name = f"column {args.loss_column}" if args.loss_column else args.loss
    split = {"seed": args.seed, "calibration_fraction": args.calibration_fraction,
             "report_fraction": args.report_fraction, "validation_fraction": args.validation_fraction}
    if table.is_ood is None:
        report = report_dict(fit, table.loss, target, score_name=args.score, loss_name=loss_name, C_grid=C_grid,
                             split=split, versions=versions())
        texts = (report_markdown(report), summary_line(report))
        figure = select_figure(fit, table.loss, report, label)
    else:
        report = ood_report_dict(fit, table.loss, table.is_ood, target, score_name=args.score, loss_name=loss_name,
                                 C_grid=C_grid, split=split, versions=versions(), ood_column=ood_column)
        texts = (ood_report_markdown(report), ood_summary_line(report))
        figure = ood_select_figure(fit, table.loss, table.is_ood, report, label)
    model = model_dict(feature_columns=table.feature_columns, classes=vocabulary, score=fit.score,
                       selection=fit.selection, target=target, loss_name=loss_name, versions=report["versions"],
                       pred_column=args.pred_column, ood_column=ood_column)
    files = dict(zip(SELECT_OUTPUTS, (json_bytes(model), json_bytes(report), texts[0].encode(), figure_png(figure))))
    check_output_folder(args.out, SELECT_OUTPUTS, {"--data": args.data}, args.force)
    try:
        write_outputs(args.out, files)
    except OSError as err:
        raise InputError(f"--out {args.out}: cannot write ({one_line(err)})") from None
    print(f"wrote {', '.join(files)} to {args.out}")
    print(texts[1])
    return 0


# --------------------------------------------------------------------------------------------
# apply
# --------------------------------------------------------------------------------------------
def run_apply(args):
    inputs = {"--model": args.model, "--data": args.data}
    check_output_file(args.out, inputs, args.force)
    model, score, selection = load_model(args.model)
    table = load_table(args.data, pred_column=model["pred_column"], feature_columns=model["feature_columns"],
                       need_loss=False)
    ood_column = model["target"].get("ood_column")
    if ood_column is not None and ood_column in table.columns:
        log.info("%s: column %r (OOD rows at select) is not read: apply decides from the features and the predicted "
                 "class alone, as for any row", table.source, ood_column)
    decisions = apply_model(model, score, selection, table, unseen=args.unseen_classes,
                            extreme=args.extreme_values, seed=args.seed)
    check_output_file(args.out, inputs, args.force)
    write_decisions(decisions, Path(args.out))
    print(f"wrote {args.out}: {int(decisions['accept'].sum())} of {len(decisions)} rows accepted "
          f"({decisions['accept'].mean():.4f})")
    return 0


# --------------------------------------------------------------------------------------------
# Parser and entry point
# --------------------------------------------------------------------------------------------
def main(argv=None):
    """Entry point of ``python -m rejectopt``; returns the exit status.

    Bad input (:class:`InputError`) is one line on stderr and exit status 2; anything
    else is a bug and keeps its traceback.

    Parameters
    ----------
    argv : list of str or None, default=None
        The command line without the program name; None reads ``sys.argv``.

    Returns
    -------
    int
        0 on success, 2 (:data:`rejectopt.cli._errors.EXIT_INPUT_ERROR`) on bad input.
    """
    args = build_parser().parse_args(argv)
    run = {"select": run_select, "apply": run_apply}[args.command]
    if not logging.getLogger().handlers:
        logging.basicConfig(level=logging.WARNING if args.quiet else logging.INFO,
                            format="%(levelname)s: %(message)s", stream=sys.stderr)
    try:
        return run(args)
    except InputError as err:
        print(f"error: {one_line(err)}", file=sys.stderr)
        return EXIT_INPUT_ERROR
