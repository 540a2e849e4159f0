"""The ``validate`` command: how often a certified target fails on the user's own rows.

The rows taken as the population are drawn from again and again, a calibration set each time,
by :func:`rejectopt.targets.validate_target`; this module learns the score as ``select`` does
(or reads ``--uncertainty-column``), and writes the draws, their summary and the figure.
"""

from __future__ import annotations

import logging
import time

import numpy as np

from .._diagnostics import risk_in_percent
from ..fitting import fit_selective, split_rows
from ..scores._sele import MemoryBudgetError
from ..targets import Target, validate_target
from ._errors import InputError, one_line
from ._figures import figure_files, figure_names
from ._files import check_output_folder, write_folder
from ._groups import check_group_options
from ._options import (
    MIN_ROWS_PER_PART,
    check_fractions,
    check_loss_source,
    check_memory_budget_env,
    check_pred_column,
    class_codes,
    feature_list,
    log_warnings,
    memory_budget_error,
    named,
    parse_C_grid,
    reads_logits,
    require_loss_bound,
    resolve_loss_bound,
    target_of,
    warn_labels_span,
)
from ._report import risk_unit
from ._table import load_table
from ._validate_groups import GROUPS_CSV, group_validity, group_validity_lines

__all__ = ["QUANTILES", "VALIDATE_FIGURE", "VALIDATE_OUTPUTS", "run_validate"]

log = logging.getLogger(__name__)

#: Files written by ``validate``, in this order (its figure in each further --figure-format after them).
VALIDATE_OUTPUTS = ("repeats.csv", "summary.csv", "validity.png")
#: ``validate``'s figure.
VALIDATE_FIGURE = "validity.png"
#: Quantiles of the population's coverage and risk over the draws, in ``summary.csv`` and the printout.
QUANTILES = (0.05, 0.5, 0.95)


def _validation_rows(args, table, n_classes, classes, C_grid):
    """The population's rows and their uncertainty: every row with --uncertainty-column, else the held-out ones.

    Without a column the score is learned as ``select`` learns it, on the train rows of the same
    seeded split; the calibration and report rows are the population the draws come from.
    """
    if args.uncertainty_column is not None:
        return np.arange(table.X.shape[0]), table.X[:, 0]
    try:
        parts = split_rows(
            table.X.shape[0],
            args.calibration_fraction,
            args.report_fraction,
            args.validation_fraction,
            args.seed,
            min_rows=MIN_ROWS_PER_PART,
        )
    except ValueError as err:
        raise InputError(f"{table.source}: {err}") from None
    # the score and C do not depend on the target: coverage 1, always feasible, stands in for it
    try:
        fit = fit_selective(
            table.X,
            classes,
            table.loss,
            Target("coverage", 1.0),
            parts,
            score=args.score,
            n_classes=n_classes,
            C_grid=C_grid,
            seed=args.seed,
            n_jobs=args.n_jobs,
        )
    except MemoryBudgetError as err:
        raise memory_budget_error(err, args, table) from None
    rows = np.sort(np.concatenate([parts["calibration"], parts["report"]]))
    return rows, fit.uncertainty[rows]


#: ``validate`` logs its progress at each tenth of the draws once this many seconds have passed,
#: and at least this often: a short run stays silent, a long one is seen to advance.
PROGRESS_SECONDS = 5.0


class _Progress:
    """``progress(done, total)`` for the calibration draws of ``validate``: logs ``draw 120 of 500 (24 %)``.

    Silent during the first :data:`PROGRESS_SECONDS`; after them, a line at each new tenth of the
    draws, or when :data:`PROGRESS_SECONDS` have passed since the last line. To stderr through the
    logger, so ``-q`` silences it and the printed results stay on stdout.

    Parameters
    ----------
    clock : callable, default time.monotonic
        Seconds, for the tests.
    """

    def __init__(self, clock=time.monotonic):
        self.clock = clock
        self.start = self.last = clock()
        self.tenth = 0

    def __call__(self, done, total):
        now = self.clock()
        tenth = 10 * done // max(total, 1)
        if now - self.start >= PROGRESS_SECONDS and (
            tenth > self.tenth or now - self.last >= PROGRESS_SECONDS
        ):
            log.info(
                "validate: draw %d of %d (%.0f %%), %.0f s",
                done,
                total,
                100 * done / max(total, 1),
                now - self.start,
            )
            self.last = now
        self.tenth = max(self.tenth, tenth)


def _validity_summary(check):
    """``check.summary`` with the feasible draws and the quantiles of their population coverage and risk per method.

    The quantiles are over the feasible draws only: an infeasible draw accepts nothing, so its
    coverage 0 is not a fitted rule's and its risk is undefined; with no feasible draw they are NaN
    (empty in summary.csv).
    """
    summary = check.summary.copy()
    feasible = check.draws[~check.draws["infeasible"].astype(bool)]
    methods = summary.index
    summary.insert(
        0,
        "feasible_draws",
        feasible.groupby("method", sort=False).size().reindex(methods, fill_value=0),
    )
    for column, name in (("population_coverage", "coverage"), ("population_risk", "risk")):
        for q in QUANTILES:
            summary[f"{name}_q{round(100 * q):02d}"] = (
                feasible.groupby("method", sort=False)[column].quantile(q).reindex(methods)
                if len(feasible)
                else np.nan
            )
    summary.insert(0, "repeats", int(check.draws["repeat"].nunique()))
    summary.insert(1, "n_rows", check.n_rows)
    summary.insert(2, "n_calibration", check.n_calibration)
    return summary.rename_axis("method").reset_index()


def _validity_lines(summary, target, unit):
    """Per method: the share of infeasible draws first, the violations, then the quantiles of the feasible draws."""
    lines = []
    for row in summary.itertuples(index=False):
        infeasible = row.repeats - row.feasible_draws
        text = f"{row.method + ':':10s} "
        if infeasible:
            text += (
                f"infeasible (nothing accepted) in {infeasible} of {row.repeats} draws = "
                f"{infeasible / row.repeats:.1%}; "
            )
        text += (
            f"violated {int(row.violations)} of {row.repeats} draws = {row.violation_rate:.1%} "
            f"[{row.violation_low:.1%}, {row.violation_high:.1%}] (delta {row.delta:.3g})"
        )
        if row.feasible_draws == 0:
            text += "; no draw accepted anything: no population coverage or risk to report"
        else:
            coverage_text, risk_text = (
                "/".join(_number(getattr(row, f"{name}_q{round(100 * q):02d}")) for q in QUANTILES)
                for name in ("coverage", "risk")
            )
            over = (
                f" of the {row.feasible_draws} feasible draw{'s' if row.feasible_draws > 1 else ''}"
                if infeasible
                else ""
            )
            text += (
                f"; population coverage {coverage_text}, selective risk {risk_text} {unit} "
                f"(quantiles {', '.join(f'{q:g}' for q in QUANTILES)}{over})"
            )
        lines.append(text)
    return lines


def _gate_lines(draws, target, unit):
    """A release gate's violations per condition: how often each of its two bounds was missed.

    A draw violates the gate when either condition fails (``violated``); the two counts say
    which, with the tolerance :func:`rejectopt.targets.validate_target` applies. A plug-in twin
    has no floor, so only the certified gate's floor is counted.
    """
    if getattr(target, "min_coverage", None) is None:
        return []
    lines = []
    for method, rows in draws.groupby("method", sort=False):
        feasible = rows[~rows["infeasible"].astype(bool)]
        risk = int((feasible["population_risk"] > target.value * (1 + 1e-12)).sum())
        text = (
            f"{method + ':':10s} by condition: selective risk > {target.value:g} {unit} in {risk}"
        )
        if method == "certified":
            floor = int((feasible["population_coverage"] < target.min_coverage * (1 - 1e-12)).sum())
            text += (
                f", coverage < {target.min_coverage:g} in {floor} of {len(rows)} draws (the "
                "gate is violated when either fails)"
            )
        else:
            text += f" of {len(rows)} draws (no floor: the plug-in twin fits the risk alone)"
        lines.append(text)
    return lines


def _number(value):
    """A quantile as the printout shows it: ``n/a`` when undefined (no draw accepted a row)."""
    return "n/a" if not np.isfinite(value) else f"{value:.4g}"


def _check_uncertainty_column(args):
    """InputError when ``--uncertainty-column`` names the label, prediction or loss column.

    The score must be the user's own column: the label (or a loss) as the score would order the
    rows by their errors, which no score can see at prediction time.
    """
    roles = [
        ("--pred-column", args.pred_column if args.pred_column != "none" else None, "prediction"),
        ("--loss-column", args.loss_column, "loss"),
    ]
    if args.loss_column is None:
        roles.insert(0, ("--label-column, default y", args.label_column or "y", "label"))
    for option, column, role in roles:
        if column == args.uncertainty_column:
            raise InputError(
                f"--uncertainty-column {column!r} is the {role} column ({option}): the uncertainty "
                "score needs a column of its own: your score of each row (larger = less certain)"
            )


def _check_options(args):
    """The certified target, the C grid, the feature columns and the output files, before the data are read."""
    target = target_of(args)
    if not isinstance(target, Target) or target.kind not in ("risk", "coverage"):
        raise InputError(
            f"validate checks a certified risk=L or coverage=W target, not --target {args.target}"
        )
    C_grid = parse_C_grid(args.C)
    check_fractions(args)
    if args.uncertainty_column is None:
        check_memory_budget_env(args.score)
    if args.pred_column != "none":
        check_pred_column(args.pred_column, "--pred-column")
    check_loss_source(args)
    require_loss_bound(args, target)
    features = feature_list(args)
    if args.uncertainty_column is not None:
        if features is not None:
            raise InputError(
                "--feature-columns does not apply with --uncertainty-column: no score is learned"
            )
        _check_uncertainty_column(args)
        features = [args.uncertainty_column]
    args.group_column = check_group_options(args, target)
    outputs = VALIDATE_OUTPUTS + tuple(figure_names(VALIDATE_FIGURE, args)[1:])
    outputs += (GROUPS_CSV,) if args.group_column is not None else ()
    check_output_folder(args.out, outputs, {"--data": args.data}, args.force)
    return target, C_grid, features, outputs


def _warn_failures(summary, loss_bound):
    """A warning when the certified target fails more often than delta, beyond the interval's doubt."""
    certified = summary.set_index("method").loc["certified"]
    if certified["violation_low"] > certified["delta"]:
        log.warning(
            "the certified target fails more often than delta = %g beyond its interval (%.1f%% [%.1f%%, "
            "%.1f%%]): the rows may not be exchangeable (a drift, duplicates, groups), or the loss bound %g "
            "is too small",
            certified["delta"],
            100 * certified["violation_rate"],
            100 * certified["violation_low"],
            100 * certified["violation_high"],
            loss_bound,
        )


def _group_validity(args, table, rows, uncertainty, check, target, loss_bound):
    """``groups.csv`` and its printed lines: each group's certificate checked on the same population."""
    frame = group_validity(
        table.loss[rows],
        uncertainty,
        [table.groups[i] for i in rows],
        target,
        simultaneous=args.simultaneous,
        n_calibration=check.n_calibration,
        repeats=args.repeats,
        seed=args.seed,
        loss_bound=loss_bound,
    )
    return frame, args.group_column, args.repeats


def run_validate(args):
    """``validate``: draw calibration sets from the population rows and count the certified target's failures.

    Parameters
    ----------
    args : argparse.Namespace
        The options of ``validate``.

    Returns
    -------
    int
        0; bad input raises :class:`rejectopt.cli._errors.InputError`.
    """
    target, C_grid, features, outputs = _check_options(args)
    table = load_table(
        args.data,
        pred_column=args.pred_column,
        label_column=args.label_column,
        loss_column=args.loss_column,
        loss=args.loss,
        feature_columns=features,
        logit_features=args.uncertainty_column is None and reads_logits(args.score),
        feature_option="--uncertainty-column" if args.uncertainty_column else "--feature-columns",
        group_column=args.group_column,
    )
    loss_name = f"column {args.loss_column}" if args.loss_column else args.loss
    loss_bound, loss_bound_source = resolve_loss_bound(args, table)
    warn_labels_span(args, target, loss_bound_source, loss_bound)
    log_warnings(risk_in_percent(target, loss_name, named))
    vocabulary, classes = class_codes(table)
    rows, uncertainty = _validation_rows(
        args, table, len(vocabulary) if vocabulary is not None else 1, classes, C_grid
    )
    share = args.calibration_fraction / (args.calibration_fraction + args.report_fraction)
    try:
        check = validate_target(
            table.loss[rows],
            uncertainty,
            target,
            repeats=args.repeats,
            calibration_fraction=share,
            loss_bound=loss_bound,
            random_state=args.seed,
            progress=_Progress(),
        )
    except ValueError as err:
        raise InputError(f"{table.source}: {one_line(err)}") from None
    summary = _validity_summary(check)
    groups = None
    if args.group_column is not None:
        groups = _group_validity(args, table, rows, uncertainty, check, target, loss_bound)
    files = {
        "repeats.csv": check.draws.to_csv(index=False, float_format="%.10g").encode(),
        "summary.csv": summary.to_csv(index=False, float_format="%.10g").encode(),
        **figure_files(VALIDATE_FIGURE, check.plot(), args),
    }
    if groups is not None:
        files[GROUPS_CSV] = groups[0].to_csv(index=False, float_format="%.10g").encode()
    write_folder(args.out, outputs, {"--data": args.data}, args.force, files)
    _warn_failures(summary, loss_bound)
    print(f"wrote {', '.join(files)} to {args.out}")
    print(
        f"--target {target}: {args.repeats} draws of {check.n_calibration} calibration rows from the {check.n_rows} "
        f"{'rows' if args.uncertainty_column else 'held-out rows'} of {table.source} taken as the population"
    )
    unit = risk_unit(loss_name)
    for line in [*_validity_lines(summary, target, unit), *_gate_lines(check.draws, target, unit)]:
        print(line)
    for line in [] if groups is None else group_validity_lines(*groups):
        print(line)
    return 0
