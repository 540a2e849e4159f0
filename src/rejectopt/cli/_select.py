"""The ``select`` command: learn the score, fit the selection function, write the model and report.

The work is the library's (:func:`rejectopt.fitting.split_rows`,
:func:`rejectopt.fitting.fit_selective`); this module reads the options and the table, turns the
library's refusals into the command line's messages, and writes ``model.json``, ``report.json``,
``report.md``, the figure and, for a risk or coverage target, the per-threshold table.
"""

from __future__ import annotations

import logging
import math

import numpy as np

from .._diagnostics import (
    loses_to_confidence,
    missed_bounds,
    missed_coverage,
    missed_risk,
    nothing_to_learn,
    risk_in_percent,
    tied_C,
    worse_than_random,
)
from .._model_fields import groups_entry
from ..fitting import choose_score, fit_selection, learn_score, split_ood_rows, split_rows
from ..model import model_dict
from ..scores import get_score
from ..scores._confidence import AUTO, ConfidenceScore, baseline_names, confidence_label
from ..scores._sele import MemoryBudgetError
from ..selective import InfeasibleTargetError
from ..targets import Target, certification_table
from ._errors import InputError, one_line
from ._figures import figure_files, figure_names, ood_select_figure, select_figure
from ._files import check_output_folder, write_folder
from ._groups import check_group_options, fit_groups, group_markdown, group_records, group_summary
from ._options import (
    MIN_ROWS_PER_PART,
    check_certified_risk,
    check_fractions,
    check_loss_source,
    check_memory_budget_env,
    check_pred_column,
    class_codes,
    feature_list,
    log_warnings,
    memory_budget_error,
    named,
    ood_column_of,
    parse_C_grid,
    parse_metrics,
    reads_logits,
    require_loss_bound,
    resolve_loss_bound,
    target_of,
    warn_labels_span,
)
from ._parser import DEFAULT_OOD_COLUMN, THRESHOLDS_MAX_CUTS, cli_scores
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
from ._report_metrics import metrics_dict
from ._table import load_table

__all__ = ["SELECT_FIGURE", "SELECT_OUTPUTS", "THRESHOLDS_CSV", "run_select"]

log = logging.getLogger(__name__)

#: Files written by ``select``, in this order (its figure in each --figure-format after them).
SELECT_OUTPUTS = ("model.json", "report.json", "report.md", "rc_curve.png")
#: ``select``'s figure, the RC curve report.md shows.
SELECT_FIGURE = "rc_curve.png"
#: ``select``'s per-threshold table of the calibration rows (a risk or coverage target).
THRESHOLDS_CSV = "thresholds.csv"
#: Level of the pointwise bounds in the per-threshold table of a plug-in target.
TABLE_CONFIDENCE = 0.95


def _warn_report(report, target, C_grid):
    """The report rows' warnings: a missed target, a score worse than random, a tie over C."""
    unit, point, n_rows = report["risk_unit"], report["report"], report["rows"]["report"]
    feasibility = report.get("feasibility", {}).get("report_within_ci", {})
    aurcs, validation = report["aurc_report"], report["validation_aurc"]
    log_warnings(
        missed_risk(
            target,
            named,
            n_rows,
            point["selective_risk"],
            point["selective_risk_ci"],
            point["coverage"],
            report["risk_full_coverage_report"],
            unit,
        ),
        missed_coverage(target, named, n_rows, point["coverage"], point["coverage_ci"]),
        missed_bounds(
            target,
            named,
            n_rows,
            [name for name, ok in feasibility.items() if name != "all" and not ok],
        ),
        worse_than_random(aurcs["learned_score"], aurcs["random_order"], unit),
        tied_C(validation.values(), C_grid, report["C"], "--C", unit),
    )


def _thresholds_csv(fit, loss, target, loss_bound, max_cuts=THRESHOLDS_MAX_CUTS):
    """The per-threshold table of the calibration rows as CSV bytes, or None (reject-cost and OOD targets).

    Pointwise bounds at the target's confidence, or at :data:`TABLE_CONFIDENCE` for a plug-in
    target. With more than ``max_cuts`` distinct calibration scores, ``max_cuts`` cuts evenly
    spaced in coverage and the three around the selected threshold ``t`` (``s < t``, ``s <= t``
    and the next one, the first it refused), each row exactly the full table's; a log line says so.
    """
    if not isinstance(target, Target) or target.kind not in ("risk", "coverage"):
        return None
    cal = fit.parts["calibration"]
    level = target.confidence if target.confidence is not None else TABLE_CONFIDENCE
    scores, threshold = fit.uncertainty[cal], fit.selection.threshold
    # The cut {s < t} too: what an acceptance probability 0 at the threshold keeps.
    below = scores[scores < threshold].max(initial=-np.inf)
    table = certification_table(
        loss[cal],
        scores,
        Target(target.kind, target.value, level),
        loss_bound=loss_bound,
        max_cuts=max_cuts,
        include=[below, threshold, np.nextafter(threshold, np.inf)],
    )
    n_cuts = np.unique(scores).size
    if len(table) < n_cuts:
        log.info(
            "%s: %d of the %d cuts of the calibration rows (evenly spaced in coverage, and those "
            "around the threshold); rejectopt.targets.certification_table lists every cut",
            THRESHOLDS_CSV,
            len(table),
            n_cuts,
        )
    return table.to_csv(index=False, float_format="%.10g").encode()


def _check_options(args):
    """The target, OOD column, C grid, feature columns and output files: every option, before the data are read."""
    target = target_of(args)
    if args.pred_column != "none":
        check_pred_column(args.pred_column, "--pred-column")
    ood_column = ood_column_of(args, target)
    args.group_column = check_group_options(args, target)
    C_grid = parse_C_grid(args.C)
    args.metrics = parse_metrics(getattr(args, "metrics", None), target)
    check_fractions(args)
    check_memory_budget_env(args.score)
    check_loss_source(args)
    require_loss_bound(args, target)
    features = feature_list(args)
    outputs = (
        SELECT_OUTPUTS
        + tuple(figure_names(SELECT_FIGURE, args)[1:])
        + ((THRESHOLDS_CSV,) if isinstance(target, Target) and target.kind != "reject-cost" else ())
    )
    check_output_folder(args.out, outputs, {"--data": args.data}, args.force)
    return target, ood_column, C_grid, features, outputs


def _read_table(args, target, ood_column, features):
    """The table, the loss's name and its bound (with where the bound came from), warnings logged."""
    table = load_table(
        args.data,
        pred_column=args.pred_column,
        label_column=args.label_column,
        loss_column=args.loss_column,
        loss=args.loss,
        feature_columns=features,
        ood_column=ood_column,
        logit_features=reads_logits(args.score),
        group_column=args.group_column,
    )
    loss_name = f"column {args.loss_column}" if args.loss_column else args.loss
    loss_bound, loss_bound_source = resolve_loss_bound(args, table)
    check_certified_risk(target, loss_bound)
    warn_labels_span(args, target, loss_bound_source, loss_bound)
    log_warnings(
        risk_in_percent(target, loss_name, named),
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
    return table, loss_name, loss_bound, loss_bound_source


def _split(args, table):
    """The row split; with OOD rows, each part holds its share of them."""
    fractions = (
        args.calibration_fraction,
        args.report_fraction,
        args.validation_fraction,
        args.seed,
    )
    try:
        if table.is_ood is None:
            parts = split_rows(table.X.shape[0], *fractions, min_rows=MIN_ROWS_PER_PART)
        else:
            parts = split_ood_rows(table.is_ood, *fractions, min_rows=MIN_ROWS_PER_PART)
    except ValueError as err:
        raise InputError(f"{table.source}: {err}" if table.is_ood is not None else err) from None
    log.info("rows: %s", {k: int(v.size) for k, v in parts.items()})
    return parts


def _logits_of(args, table, target, ood_column, features):
    """The table whose features are the network's logits: ``table`` itself, or read again for them.

    None for a table of predictions: it holds no logits, so no baseline and no class-shared score.
    """
    if table.n_logits is None:
        return None
    if all(name.startswith("logit_") for name in table.feature_columns):
        return table
    return load_table(
        args.data,
        pred_column=args.pred_column,
        label_column=args.label_column,
        loss_column=args.loss_column,
        loss=args.loss,
        feature_columns=features,
        ood_column=ood_column,
        logit_features=True,
    )


def _candidates(args, table, logits):
    """``name -> (score, table it reads)``: ``--score auto``'s candidates, or the one forced (and MSP).

    ``auto``: the baselines of the logits, MSP first (the incumbent), then the learned scores,
    SELE first (the incumbent without logits); the class-shared ones and the baselines only on
    a network's outputs. A learned score forced brings MSP along, to warn when it ranks worse.
    """
    baselines = baseline_names("logits") if logits is not None else []
    if args.score == AUTO:
        names = baselines + [
            n for n in cli_scores() if logits is not None or get_score(n).applies_to is None
        ]
    elif args.score in baseline_names("logits"):
        if logits is None:
            raise InputError(
                f"{table.source}: --score {args.score} reads a network's logits (an NPZ with an "
                "array logits, or CSV columns logit_0..), and this table of predictions has none; "
                "use --score auto or a learned score"
            )
        names = [args.score]
    else:
        names = [args.score] + (["mcp"] if logits is not None else [])
    out = {}
    for name in names:
        if name in baselines:
            out[name] = (ConfidenceScore(name, "logits"), logits)
        else:
            out[name] = (name, logits if reads_logits(name) else table)
    return out


def _learn(args, table, classes, n_classes, parts, C_grid, candidates):
    """Each candidate learned on the fit and validation rows; SELE over its memory budget is left
    out of ``auto`` (logged), refused when forced."""
    learned, sources = {}, {}
    for name, (score, source) in candidates.items():
        try:
            learned[name] = learn_score(
                source.X,
                classes,
                table.loss,
                parts,
                score=score,
                n_classes=n_classes,
                C_grid=C_grid,
                seed=args.seed,
                n_jobs=args.n_jobs,
                is_ood=table.is_ood,
            )
        except MemoryBudgetError as err:
            if args.score != AUTO or len(candidates) == 1:
                raise memory_budget_error(err, args, table) from None
            log.info("--score auto: %s left out (%s)", name, one_line(err))
            continue
        sources[name] = source
    return learned, sources


def _fit(args, table, classes, n_classes, target, parts, C_grid, loss_bound, logits):
    """The candidates learned on the fit and validation rows, the chosen one's selection function.

    The choice reads the validation rows alone (the rows that choose C), never the calibration
    rows the selection function and a certified bound are fitted on: given the choice, those
    are as independent of the score as with a score fixed in advance, so the guarantee holds.
    Returns the fit, the chosen score's name, the candidates' validation AuRCs and the table
    the chosen score read (its feature columns go to ``model.json``).
    """
    candidates = _candidates(args, table, logits)
    learned, sources = _learn(args, table, classes, n_classes, parts, C_grid, candidates)
    if args.score == AUTO:
        chosen, aurcs = choose_score(learned, table.loss, parts["validation"], seed=args.seed)
        log.info("--score auto: validation AuRC %s; chosen: %s", aurcs, chosen)
    else:
        chosen, aurcs = args.score, {k: float(v.aurc) for k, v in learned.items()}
        unit = risk_unit(f"column {args.loss_column}" if args.loss_column else args.loss)
        log_warnings(
            loses_to_confidence(
                chosen, aurcs, parts["validation"].size, lambda n: f"--score {n}", unit
            )
        )
    try:
        fit = fit_selection(
            learned[chosen], table.loss, target, parts, is_ood=table.is_ood, loss_bound=loss_bound
        )
    except InfeasibleTargetError as err:
        message = one_line(err)
        message = message.removeprefix(
            f"target {target} is "
        )  # OODTarget.fit names the target: once is enough
        raise InputError(
            f"cannot meet --target {target} on the calibration rows: {message}"
        ) from None
    if not math.isnan(fit.C):
        log.info(
            "%s: C=%g chosen by validation AuRC %s", _label(chosen), fit.C, fit.validation_aurc
        )
    log.info(
        "selection function: threshold %.6g, acceptance probability %.4g at the threshold",
        fit.selection.threshold,
        fit.selection.accept_prob,
    )
    return fit, chosen, aurcs, sources[chosen]


def _label(name):
    """Display label of a score: the registry's, or a baseline's."""
    return confidence_label(name) if name in baseline_names("logits") else get_score(name).label


def _metrics(args, fit, table, loss_name):
    """``--metrics`` on the report rows; a metric the table cannot feed is bad input."""
    rows = fit.parts["report"]
    labels = probabilities = None
    if table.label_keys is not None:
        y_true, y_pred = table.label_keys[rows], table.pred_keys[rows]
        if table.probabilities is not None:  # a network's classes: the probabilities' columns
            y_true, y_pred = y_true.astype(int), y_pred.astype(int)
            probabilities = table.probabilities[rows]
        labels = (y_true, y_pred)
    try:
        return metrics_dict(
            table.loss[rows],
            fit.uncertainty[rows],
            args.metrics,
            loss_name,
            log.warning,
            labels=labels,
            probabilities=probabilities,
        )
    except ValueError as err:
        raise InputError(f"--metrics: {one_line(err).removeprefix('metrics_table: ')}") from None


def _report(
    args, fit, table, target, loss_name, C_grid, bound, ood_column, thresholds, choice, groups=None
):
    """``report.json``'s content, ``report.md``'s text, the printed line and the figure.

    ``bound`` is the loss's bound and where it came from; ``thresholds`` the per-threshold
    table's bytes or None, which ``report.md`` links to; ``choice`` the chosen score's name and
    the candidates' validation AuRCs; ``groups`` the per-group selections or None.
    """
    loss_bound, loss_bound_source = bound
    chosen, aurcs = choice
    label = _label(chosen)
    choice = {"option": args.score, "validation_aurc": aurcs}  # report.json's score_choice
    common = {
        "score_name": chosen,
        "loss_name": loss_name,
        "C_grid": C_grid,
        "split": {
            "seed": args.seed,
            "calibration_fraction": args.calibration_fraction,
            "report_fraction": args.report_fraction,
            "validation_fraction": args.validation_fraction,
        },
        "versions": versions(),
    }
    if table.is_ood is None:
        report = report_dict(
            fit,
            table.loss,
            target,
            **common,
            loss_bound=loss_bound,
            loss_bound_source=loss_bound_source,
        )
        report["thresholds_csv"] = THRESHOLDS_CSV if thresholds is not None else None
        report["score_choice"] = choice
        if args.metrics is not None:
            report["metrics"] = _metrics(args, fit, table, loss_name)
        texts = (report_markdown(report), summary_line(report))
        if groups is not None:
            report["groups"] = group_records(groups, fit, table, args.group_column)
            texts = (texts[0] + group_markdown(report), texts[1] + "\n" + group_summary(report))
        figure = select_figure(fit, table.loss, report, label)
    else:
        report = ood_report_dict(
            fit,
            table.loss,
            table.is_ood,
            target,
            **common,
            ood_column=ood_column,
            loss_bound=loss_bound,
            loss_bound_source=loss_bound_source,
        )
        report["score_choice"] = choice
        texts = (ood_report_markdown(report), ood_summary_line(report))
        figure = ood_select_figure(fit, table.loss, table.is_ood, report, label)
    return report, texts, figure


def run_select(args):
    """``select``: learn the score and the selection function from ``--data``, write them and the report.

    Parameters
    ----------
    args : argparse.Namespace
        The options of ``select``.

    Returns
    -------
    int
        0; bad input raises :class:`rejectopt.cli._errors.InputError`.
    """
    target, ood_column, C_grid, features, outputs = _check_options(args)
    table, loss_name, loss_bound, loss_bound_source = _read_table(
        args, target, ood_column, features
    )
    vocabulary, classes = class_codes(table)
    parts = _split(args, table)
    n_classes = len(vocabulary) if vocabulary is not None else 1
    logits = _logits_of(args, table, target, ood_column, features)
    fit, chosen, aurcs, source = _fit(
        args, table, classes, n_classes, target, parts, C_grid, loss_bound, logits
    )
    thresholds = _thresholds_csv(fit, table.loss, target, loss_bound)
    groups = None
    if args.group_column is not None:
        groups = fit_groups(fit, table, target, loss_bound, args.group_column, args.simultaneous)
    report, texts, figure = _report(
        args,
        fit,
        table,
        target,
        loss_name,
        C_grid,
        (loss_bound, loss_bound_source),
        ood_column,
        thresholds,
        (chosen, aurcs),
        groups,
    )
    _warn_report(report, target, C_grid)
    model = model_dict(
        feature_columns=source.feature_columns,
        classes=vocabulary,
        score=fit.score,
        selection=fit.selection,
        target=target,
        loss_name=loss_name,
        versions=report["versions"],
        pred_column=args.pred_column,
        ood_column=ood_column,
        n_logits=table.n_logits,
        groups=None if groups is None else groups_entry(args.group_column, groups),
    )
    files = {
        "model.json": json_bytes(model),
        "report.json": json_bytes(report),
        "report.md": texts[0].encode(),
        **figure_files(SELECT_FIGURE, figure, args),
    }
    if thresholds is not None:
        files[THRESHOLDS_CSV] = thresholds
    write_folder(args.out, outputs, {"--data": args.data}, args.force, files)
    print(f"wrote {', '.join(files)} to {args.out}")
    print(texts[1])
    return 0
