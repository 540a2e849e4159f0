"""The two commands, ``select`` and ``apply``, and the entry point; the library does the work."""

from __future__ import annotations

import logging
import math
import os
import sys
import time
from pathlib import Path

import numpy as np

from .._diagnostics import (
    missed_bounds,
    missed_coverage,
    missed_risk,
    nothing_to_learn,
    risk_in_percent,
    tied_C,
    worse_than_random,
)
from ..fitting import _split_ood_rows, fit_selective, split_rows
from ..model import model_dict
from ..scores import get_score
from ..scores._sele import MEMORY_BUDGET_ENV, SELE, MemoryBudgetError, memory_budget
from ..selective import InfeasibleTargetError
from ..targets import OODTarget, Target, certification_table, parse_target, validate_target
from ._errors import EXIT_INPUT_ERROR, InputError, one_line
from ._figures import figure_files, figure_names, ood_select_figure, select_figure
from ._files import check_output_file, check_output_folder, write_decisions, write_outputs
from ._model import apply_model, load_model
from ._parser import DEFAULT_OOD_COLUMN, build_parser
from ._report import (
    json_bytes,
    ood_report_dict,
    ood_report_markdown,
    ood_summary_line,
    report_dict,
    report_markdown,
    risk_unit,
    summary_line,
    versions,
)
from ._table import class_indices, class_vocabulary, load_apply_table, load_table

__all__ = ["main"]

log = logging.getLogger(__name__)

#: Files written by ``select``, in this order (its figure in each --figure-format after them).
SELECT_OUTPUTS = ("model.json", "report.json", "report.md", "rc_curve.png")
#: ``select``'s figure, the RC curve report.md shows.
SELECT_FIGURE = "rc_curve.png"
#: ``select``'s per-threshold table of the calibration rows (a risk or coverage target).
THRESHOLDS_CSV = "thresholds.csv"
#: Level of the pointwise bounds in the per-threshold table of a plug-in target.
TABLE_CONFIDENCE = 0.95
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
    fractions = {
        "--calibration-fraction": args.calibration_fraction,
        "--report-fraction": args.report_fraction,
        "--validation-fraction": args.validation_fraction,
    }
    for name, value in fractions.items():
        if not 0.0 < value < 1.0:
            raise InputError(f"{name} must lie in (0, 1), got {value:g}")
    total = args.calibration_fraction + args.report_fraction
    if total >= 1.0:
        raise InputError(
            f"--calibration-fraction {args.calibration_fraction:g} + --report-fraction "
            f"{args.report_fraction:g} = {total:g} leaves no rows to train the score: the sum must be "
            "below 1"
        )


def _ood_column(args, target):
    """The OOD column for an OOD target (None otherwise); ``--ood-column`` with another target is an error."""
    if isinstance(target, OODTarget):
        return args.ood_column if args.ood_column is not None else DEFAULT_OOD_COLUMN
    if args.ood_column is not None:
        raise InputError(
            f"--ood-column is used only with a target tpr=T,fpr=F or precision=P,recall=R, "
            f"not --target {target}"
        )
    return None


#: Columns ``apply`` writes to decisions.csv beside the predicted class: a ``--pred-column`` of one of
#: these names would be overwritten by it, or overwrite it.
DECISION_COLUMNS = ("row", "uncertainty", "acceptance_probability", "accept")


def _check_pred_column(pred_column, where):
    """InputError when the predicted-class column would collide with a column of decisions.csv."""
    if pred_column in DECISION_COLUMNS:
        raise InputError(
            f"{where} {pred_column!r} collides with the column {pred_column!r} that apply writes to "
            f"decisions.csv ({', '.join(DECISION_COLUMNS)} and the predicted class): rename the "
            f"predicted-class column of your data (e.g. to y_pred) and pass --pred-column y_pred"
        )


def _require_loss_bound(args, target):
    """InputError for a loss column without ``--loss-bound`` under a certified risk or coverage target.

    Checked before the data are read. The certificate's bounds hold for losses in [0, B] with B
    fixed before the rows are drawn (the Guarantees page: by the loss's definition, never from the
    sample); the file's largest loss can lie below what new rows have, and the certified risk would
    then be too small.
    """
    if (
        args.loss_column is not None
        and args.loss_bound is None
        and isinstance(target, Target)
        and target.confidence is not None
    ):
        raise InputError(
            f"--loss-column {args.loss_column} with the certified --target {target} needs --loss-bound "
            "B: B is the largest loss a prediction can have, by the loss's definition (e.g. the largest "
            "cost of your cost table), fixed before the rows are drawn; the certificate's bounds hold for "
            "losses in [0, B]. The file's largest loss is not taken: from the sample, it can lie below "
            "what new rows have"
        )


def _loss_bound(args, table):
    """The largest loss a prediction can have, and where it came from (a key of :data:`LOSS_BOUND_SOURCES`).

    ``--loss-bound``, else by the loss's definition (100 for the 0/100 loss; the MAE's span of
    the labels read, K - 1 when every class occurs; ``--loss-bound K-1`` declares it when the
    largest class may be missing from the file), else, for a plug-in target only, the file's
    largest loss with a warning. It scales the selective risk's interval; taken from the report
    rows' own losses, a sample without an error would get an interval of [0, 0.16] for the 0/100
    loss instead of [0, 16].

    A certified target never gets ``"data"``: :func:`_require_loss_bound` refused it first.
    """
    losses = table.loss[np.isfinite(table.loss)]
    worst = float(losses.max()) if losses.size else 0.0
    if args.loss_bound is not None:
        if args.loss_column is None and args.loss == "zero_one":
            raise InputError(
                "--loss-bound applies to --loss-column or --loss mae only: the zero_one loss is bounded "
                "by its definition (100)"
            )
        bound = args.loss_bound
        if not (math.isfinite(bound) and bound > 0):
            raise InputError(
                f"--loss-bound must be a finite number > 0 (the largest loss a prediction can have), "
                f"got {bound:g}"
            )
        if worst > bound:
            i = int(np.flatnonzero(table.loss == worst)[0])
            where = f"column {args.loss_column!r}" if args.loss_column else f"--loss {args.loss}"
            raise InputError(
                f"{table.source}: loss {worst:g} ({where}) at {table.where(i)} exceeds --loss-bound "
                f"{bound:g}: give the largest loss a prediction can have"
            )
        return float(bound), "option"
    if table.loss_bound is not None:
        return float(table.loss_bound), "labels" if args.loss == "mae" else "definition"
    if worst == 0:
        raise InputError(
            f"{table.source}: every loss in column {args.loss_column!r} is 0: pass --loss-bound B, the "
            "largest loss a prediction can have, to bound the selective risk"
        )
    log.warning(
        "--loss-bound not given: the selective risk's interval takes %g, the largest loss in column %r, as the "
        "largest loss a prediction can have; pass --loss-bound if a loss can be larger",
        worst,
        args.loss_column,
    )
    return worst, "data"


def _warn_labels_span(args, target, source, loss_bound):
    """A certified target on the MAE whose B is the span of the labels read: right only if every class occurs.

    The MAE's bound by definition is K - 1; the file's span is that only when its smallest and
    largest classes occur, so the warning asks for ``--loss-bound K-1`` when one may be missing.
    """
    if source == "labels" and isinstance(target, Target) and target.confidence is not None:
        log.warning(
            "--target %s with --loss mae: the certificate takes B = %g, the span of the labels and "
            "predictions in %s, as the largest loss; it is the MAE's K - 1 only when the smallest and largest "
            "classes occur: pass --loss-bound K-1 if one may be missing",
            target,
            loss_bound,
            args.data,
        )


def _named(target):
    """A target as the command line's messages name it: ``--target risk=2``."""
    return f"--target {target}"


def _log(*messages):
    """Log each message of :mod:`rejectopt._diagnostics` that is not None as a warning."""
    for message in messages:
        if message is not None:
            log.warning(message)


def _warn_report(report, target, C_grid):
    """The report rows' warnings: a missed target, a score worse than random, a tie over C."""
    unit, point, n_rows = report["risk_unit"], report["report"], report["rows"]["report"]
    feasibility = report.get("feasibility", {}).get("report_within_ci", {})
    aurcs, validation = report["aurc_report"], report["validation_aurc"]
    _log(
        missed_risk(
            target,
            _named,
            n_rows,
            point["selective_risk"],
            point["selective_risk_ci"],
            point["coverage"],
            report["risk_full_coverage_report"],
            unit,
        ),
        missed_coverage(target, _named, n_rows, point["coverage"], point["coverage_ci"]),
        missed_bounds(
            target,
            _named,
            n_rows,
            [name for name, ok in feasibility.items() if name != "all" and not ok],
        ),
        worse_than_random(aurcs["learned_score"], aurcs["random_order"], unit),
        tied_C(validation.values(), C_grid, report["C"], "--C", unit),
    )


def _check_certified_risk(target, loss_bound):
    """A certified risk must lie below the loss's bound (a risk of B is met by any selection, certified by none)."""
    if (
        isinstance(target, Target)
        and target.kind == "risk"
        and target.confidence is not None
        and not target.value < loss_bound
    ):
        raise InputError(
            f"--target {target}: a certified risk must lie below the largest loss a prediction can "
            f"have, {loss_bound:g} (--loss-bound, or the loss's definition)"
        )


def _target(args):
    """``--target``, certified by ``--confidence`` (or by ``,confidence=C`` in the target itself)."""
    try:
        target = parse_target(args.target)
    except ValueError as err:
        raise InputError(f"--{err}") from None
    if args.confidence is None:
        return target
    if target.confidence is not None and target.confidence != args.confidence:
        raise InputError(
            f"--target {args.target} gives confidence {target.confidence:g} and --confidence "
            f"{args.confidence:g}: give it once"
        )
    fields = (target.kind, target.bounds if isinstance(target, OODTarget) else target.value)
    try:
        return type(target)(*fields, args.confidence)
    except ValueError as err:
        raise InputError(
            f"--confidence {args.confidence:g} with --target {args.target}: {one_line(err)}"
        ) from None


def _check_memory_budget_env(score):
    """InputError for a ``$REJECTOPT_SELE_MEMORY_BUDGET`` that is not a number of bytes, when ``score`` is a SELE.

    Checked before the data are read; the other scores do not read it.
    """
    if os.environ.get(MEMORY_BUDGET_ENV) is not None and issubclass(get_score(score).cls, SELE):
        try:
            memory_budget()
        except ValueError as err:
            raise InputError(one_line(err)) from None


def _reads_logits(score):
    """Whether ``score`` reads a network's logits: ``reads_logits``, the class-shared scores.

    A network's outputs then give it their logits, not their embeddings, as :func:`rejectopt.logits.fit_logits` does.
    """
    return bool(getattr(get_score(score).cls, "reads_logits", False))


def _size(n_bytes):
    """``4.00 GiB``, ``12.3 MiB`` or ``1e+05 bytes``: a budget set small for a test reads as itself, not 0.00 GiB."""
    if n_bytes >= 2**30:
        return f"{n_bytes / 2**30:.2f} GiB"
    return f"{n_bytes / 2**20:.1f} MiB" if n_bytes >= 2**20 else f"{n_bytes:.3g} bytes"


def _memory_budget_error(err, args, table):
    """SELE's refusal of a fit over its memory budget, in the command line's terms.

    Names the ``--data`` file, the ``--score`` and what the user can do instead: a score without
    SELE's per-class preconditioner (``K (d+1)^2`` numbers, what outgrows the budget), the
    class-shared scores for a network's outputs, fewer features for a table of predictions
    (``--feature-columns`` does not apply to a network's outputs), or a larger budget.
    """
    network = table.n_logits is not None
    others = [
        name
        for name, ok in (("reg", True), ("reg_shared", network), ("sele_shared", network))
        if ok and name != args.score
    ]
    remedies = [
        f"--score {' or '.join(others)} (no per-class preconditioner"
        + (
            "; the _shared ones learn one weight vector on class-agnostic features of the logits)"
            if network
            else ")"
        )
    ]
    if not network:
        remedies.append("fewer features (--feature-columns)")
    features = (
        f"{err.n_features} class-agnostic features of the logits"
        if _reads_logits(args.score)
        else f"{err.n_features} features"
    )
    set_to = os.environ.get(MEMORY_BUDGET_ENV)
    where = f"${MEMORY_BUDGET_ENV}={set_to}" if set_to is not None else "the default"
    return InputError(
        f"{args.data}: --score {args.score} would need about {_size(err.estimate)} of memory to fit {err.n_samples} "
        f"rows of {features} for {err.n_classes} predicted class(es), over the budget of {_size(err.budget)} "
        f"({where}): refused before allocating, nothing written. Use "
        f"{', '.join(remedies)}, or raise ${MEMORY_BUDGET_ENV} (bytes)"
    )


def _thresholds_csv(fit, loss, target, loss_bound):
    """The per-threshold table of the calibration rows as CSV bytes, or None (reject-cost and OOD targets).

    Pointwise bounds at the target's confidence, or at :data:`TABLE_CONFIDENCE` for a plug-in target.
    """
    if not isinstance(target, Target) or target.kind not in ("risk", "coverage"):
        return None
    cal = fit.parts["calibration"]
    level = target.confidence if target.confidence is not None else TABLE_CONFIDENCE
    table = certification_table(
        loss[cal],
        fit.uncertainty[cal],
        Target(target.kind, target.value, level),
        loss_bound=loss_bound,
    )
    return table.to_csv(index=False, float_format="%.10g").encode()


def run_select(args):
    target = _target(args)
    if args.pred_column != "none":
        _check_pred_column(args.pred_column, "--pred-column")
    ood_column = _ood_column(args, target)
    C_grid = _parse_C_grid(args.C)
    _check_fractions(args)
    _check_memory_budget_env(args.score)
    _require_loss_bound(args, target)
    features = (
        [c.strip() for c in args.feature_columns.split(",")] if args.feature_columns else None
    )
    outputs = (
        SELECT_OUTPUTS
        + tuple(figure_names(SELECT_FIGURE, args)[1:])
        + ((THRESHOLDS_CSV,) if isinstance(target, Target) and target.kind != "reject-cost" else ())
    )
    check_output_folder(args.out, outputs, {"--data": args.data}, args.force)
    table = load_table(
        args.data,
        pred_column=args.pred_column,
        label_column=args.label_column,
        loss_column=args.loss_column,
        loss=args.loss,
        feature_columns=features,
        ood_column=ood_column,
        logit_features=_reads_logits(args.score),
    )
    n = table.X.shape[0]
    loss_name = f"column {args.loss_column}" if args.loss_column else args.loss
    loss_bound, loss_bound_source = _loss_bound(args, table)
    _check_certified_risk(target, loss_bound)
    _warn_labels_span(args, target, loss_bound_source, loss_bound)
    _log(
        risk_in_percent(target, loss_name, _named),
        nothing_to_learn(table.loss, f"of {table.source}")
        if table.is_ood is None
        else nothing_to_learn(table.loss[~table.is_ood], f"of the ID rows of {table.source}"),
    )
    if ood_column is None and features is None and DEFAULT_OOD_COLUMN in table.feature_columns:
        log.warning(
            "%s: column %r is used as a feature; to mark OOD rows with it, give a target tpr=T,fpr=F or "
            "precision=P,recall=R",
            table.source,
            DEFAULT_OOD_COLUMN,
        )
    vocabulary = class_vocabulary(table.pred_keys) if table.pred_keys is not None else None
    classes = (
        class_indices(table.pred_keys, vocabulary)[0]
        if vocabulary is not None
        else np.zeros(n, np.intp)
    )
    fractions = (
        args.calibration_fraction,
        args.report_fraction,
        args.validation_fraction,
        args.seed,
    )
    try:
        if table.is_ood is None:
            parts = split_rows(n, *fractions, min_rows=MIN_ROWS_PER_PART)
        else:
            parts = _split_ood_rows(table.is_ood, *fractions, min_rows=MIN_ROWS_PER_PART)
    except ValueError as err:
        raise InputError(f"{table.source}: {err}" if table.is_ood is not None else err) from None
    log.info("rows: %s", {k: int(v.size) for k, v in parts.items()})
    try:
        fit = fit_selective(
            table.X,
            classes,
            table.loss,
            target,
            parts,
            score=args.score,
            n_classes=len(vocabulary) if vocabulary is not None else 1,
            C_grid=C_grid,
            seed=args.seed,
            n_jobs=args.n_jobs,
            is_ood=table.is_ood,
            loss_bound=loss_bound,
        )
    except InfeasibleTargetError as err:
        message = one_line(err)
        message = message.removeprefix(
            f"target {target} is "
        )  # OODTarget.fit names the target: once is enough
        raise InputError(
            f"cannot meet --target {target} on the calibration rows: {message}"
        ) from None
    except MemoryBudgetError as err:
        raise _memory_budget_error(err, args, table) from None
    label = get_score(args.score).label
    log.info("%s: C=%g chosen by validation AuRC %s", label, fit.C, fit.validation_aurc)
    log.info(
        "selection function: threshold %.6g, acceptance probability %.4g at the threshold",
        fit.selection.threshold,
        fit.selection.accept_prob,
    )
    split = {
        "seed": args.seed,
        "calibration_fraction": args.calibration_fraction,
        "report_fraction": args.report_fraction,
        "validation_fraction": args.validation_fraction,
    }
    thresholds = _thresholds_csv(fit, table.loss, target, loss_bound)
    if table.is_ood is None:
        report = report_dict(
            fit,
            table.loss,
            target,
            score_name=args.score,
            loss_name=loss_name,
            C_grid=C_grid,
            split=split,
            versions=versions(),
            loss_bound=loss_bound,
            loss_bound_source=loss_bound_source,
        )
        report["thresholds_csv"] = THRESHOLDS_CSV if thresholds is not None else None
        texts = (report_markdown(report), summary_line(report))
        figure = select_figure(fit, table.loss, report, label)
    else:
        report = ood_report_dict(
            fit,
            table.loss,
            table.is_ood,
            target,
            score_name=args.score,
            loss_name=loss_name,
            C_grid=C_grid,
            split=split,
            versions=versions(),
            ood_column=ood_column,
            loss_bound=loss_bound,
            loss_bound_source=loss_bound_source,
        )
        texts = (ood_report_markdown(report), ood_summary_line(report))
        figure = ood_select_figure(fit, table.loss, table.is_ood, report, label)
    _warn_report(report, target, C_grid)
    model = model_dict(
        feature_columns=table.feature_columns,
        classes=vocabulary,
        score=fit.score,
        selection=fit.selection,
        target=target,
        loss_name=loss_name,
        versions=report["versions"],
        pred_column=args.pred_column,
        ood_column=ood_column,
        n_logits=table.n_logits,
    )
    files = {
        "model.json": json_bytes(model),
        "report.json": json_bytes(report),
        "report.md": texts[0].encode(),
        **figure_files(SELECT_FIGURE, figure, args),
    }
    if thresholds is not None:
        files[THRESHOLDS_CSV] = thresholds
    check_output_folder(args.out, outputs, {"--data": args.data}, args.force)
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
    if model["pred_column"] != "none":
        _check_pred_column(model["pred_column"], f"{args.model}: pred_column")
    table = load_apply_table(
        args.data, pred_column=model["pred_column"], feature_columns=model["feature_columns"]
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
# validate
# --------------------------------------------------------------------------------------------
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
        raise _memory_budget_error(err, args, table) from None
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


def run_validate(args):
    target = _target(args)
    if not isinstance(target, Target) or target.kind not in ("risk", "coverage"):
        raise InputError(
            f"validate checks a certified risk=L or coverage=W target, not --target {args.target}"
        )
    C_grid = _parse_C_grid(args.C)
    _check_fractions(args)
    if args.uncertainty_column is None:
        _check_memory_budget_env(args.score)
    if args.pred_column != "none":
        _check_pred_column(args.pred_column, "--pred-column")
    _require_loss_bound(args, target)
    features = (
        [c.strip() for c in args.feature_columns.split(",")] if args.feature_columns else None
    )
    if args.uncertainty_column is not None:
        if features is not None:
            raise InputError(
                "--feature-columns does not apply with --uncertainty-column: no score is learned"
            )
        _check_uncertainty_column(args)
        features = [args.uncertainty_column]
    outputs = VALIDATE_OUTPUTS + tuple(figure_names(VALIDATE_FIGURE, args)[1:])
    check_output_folder(args.out, outputs, {"--data": args.data}, args.force)
    table = load_table(
        args.data,
        pred_column=args.pred_column,
        label_column=args.label_column,
        loss_column=args.loss_column,
        loss=args.loss,
        feature_columns=features,
        logit_features=args.uncertainty_column is None and _reads_logits(args.score),
        feature_option="--uncertainty-column" if args.uncertainty_column else "--feature-columns",
    )
    loss_name = f"column {args.loss_column}" if args.loss_column else args.loss
    loss_bound, loss_bound_source = _loss_bound(args, table)
    _warn_labels_span(args, target, loss_bound_source, loss_bound)
    _log(risk_in_percent(target, loss_name, _named))
    vocabulary = class_vocabulary(table.pred_keys) if table.pred_keys is not None else None
    n = table.X.shape[0]
    classes = (
        class_indices(table.pred_keys, vocabulary)[0]
        if vocabulary is not None
        else np.zeros(n, np.intp)
    )
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
    files = {
        "repeats.csv": check.draws.to_csv(index=False, float_format="%.10g").encode(),
        "summary.csv": summary.to_csv(index=False, float_format="%.10g").encode(),
        **figure_files(VALIDATE_FIGURE, check.plot(), args),
    }
    check_output_folder(args.out, outputs, {"--data": args.data}, args.force)
    try:
        write_outputs(args.out, files)
    except OSError as err:
        raise InputError(f"--out {args.out}: cannot write ({one_line(err)})") from None
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
    print(f"wrote {', '.join(files)} to {args.out}")
    print(
        f"--target {target}: {args.repeats} draws of {check.n_calibration} calibration rows from the {check.n_rows} "
        f"{'rows' if args.uncertainty_column else 'held-out rows'} of {table.source} taken as the population"
    )
    for line in _validity_lines(summary, target, risk_unit(loss_name)):
        print(line)
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
