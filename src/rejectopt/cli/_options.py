"""The options of ``select`` and ``validate``: checked before the data are read, and the loss's bound.

Every option is checked before the data are read, so that a mistyped option costs no reading of a
large file; the loss's bound and the checks that need the table follow the reading. Messages name
the option as typed (``--target risk=2``).
"""

from __future__ import annotations

import logging
import math
import os

import numpy as np

from .._checks import check_open_unit
from .._params import format_level
from ..metrics import FAILURE_METRICS, METRICS
from ..scores import get_score
from ..scores._confidence import AUTO, baseline_names
from ..scores._sele import MEMORY_BUDGET_ENV, SELE, memory_budget
from ..targets import OODTarget, Target, parse_target
from ._errors import InputError, one_line
from ._parser import DEFAULT_OOD_COLUMN
from ._table import class_indices, class_vocabulary

__all__ = [
    "DECISION_COLUMNS",
    "MIN_ROWS_PER_PART",
    "check_certified_risk",
    "check_fractions",
    "check_memory_budget_env",
    "check_pred_column",
    "class_codes",
    "feature_list",
    "log_warnings",
    "memory_budget_error",
    "named",
    "ood_column_of",
    "parse_C_grid",
    "parse_metrics",
    "report_metric_names",
    "reads_logits",
    "require_loss_bound",
    "resolve_loss_bound",
    "target_of",
    "warn_labels_span",
]

log = logging.getLogger(__name__)

#: Fewest rows allowed in each part of the split.
MIN_ROWS_PER_PART = 10


def parse_C_grid(text):
    """``--C`` as a list of regularisation constants: comma-separated, finite and non-negative."""
    try:
        grid = [float(v) for v in str(text).split(",") if v.strip()]
    except ValueError:
        raise InputError(f"--C must be comma-separated numbers, got {text!r}") from None
    if not grid or any(not math.isfinite(c) or c < 0 for c in grid):
        raise InputError(f"--C must be non-negative finite numbers, got {text!r}")
    return grid


def report_metric_names():
    """The registered metrics ``--metrics`` can name: the areas, then the failure metrics.

    Which of them a run computes depends on its table (:func:`rejectopt.cli._report_metrics.metrics_dict`):
    the failure detector's read the 0/1 failures, the balanced-accuracy areas the labels (a
    table whose 0/100 loss came from them), the calibration metrics a network's probabilities.
    """
    return [*METRICS, *FAILURE_METRICS]


def parse_metrics(text, target):
    """``--metrics`` as a list of registered names, ``"all"``, or None (not asked for)."""
    if text is None:
        return None
    if isinstance(target, OODTarget):
        raise InputError(f"--metrics is not available with an OOD target ({target})")
    if text.strip() == "all":
        return "all"
    names = [v.strip() for v in text.split(",") if v.strip()]
    valid = report_metric_names()
    for name in names:
        if name not in valid:
            raise InputError(
                f"--metrics: unknown metric {name!r}; valid names are "
                f"{', '.join(map(repr, valid))} or 'all'"
            )
    if not names:
        raise InputError(f"--metrics names no metric, got {text!r}")
    return names


def check_fractions(args):
    """Each fraction of the split in (0, 1), and calibration + report below 1 (rows left to train on)."""
    fractions = {
        "--calibration-fraction": args.calibration_fraction,
        "--report-fraction": args.report_fraction,
        "--validation-fraction": args.validation_fraction,
    }
    for name, value in fractions.items():
        check_open_unit(value, name, error=InputError)
    total = args.calibration_fraction + args.report_fraction
    if total >= 1.0:
        raise InputError(
            f"--calibration-fraction {args.calibration_fraction:g} + --report-fraction "
            f"{args.report_fraction:g} = {total:g} leaves no rows to train the score: the sum must be "
            "below 1"
        )


def ood_column_of(args, target):
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


def check_pred_column(pred_column, where):
    """InputError when the predicted-class column would collide with a column of decisions.csv."""
    if pred_column in DECISION_COLUMNS:
        raise InputError(
            f"{where} {pred_column!r} collides with the column {pred_column!r} that apply writes to "
            f"decisions.csv ({', '.join(DECISION_COLUMNS)} and the predicted class): rename the "
            f"predicted-class column of your data (e.g. to y_pred) and pass --pred-column y_pred"
        )


def check_loss_source(args):
    """InputError for ``--loss-column`` beside ``--label-column`` or ``--loss mae``: two loss sources.

    A loss column replaces the labels and the loss computed from them; given both, one would be
    ignored without a word (the labels, which the user meant to be read).
    """
    if args.loss_column is None:
        return
    if args.label_column is not None:
        raise InputError(
            f"--loss-column {args.loss_column} and --label-column {args.label_column} conflict: the loss "
            "column gives each prediction's loss, so the labels would not be read; give one of them"
        )
    if args.loss != "zero_one":
        raise InputError(
            f"--loss-column {args.loss_column} and --loss {args.loss} conflict: --loss computes the loss "
            "from the labels, the loss column gives it; give one of them"
        )


def require_loss_bound(args, target):
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


def resolve_loss_bound(args, table):
    """The largest loss a prediction can have, and its source (a key of ``_report.LOSS_BOUND_SOURCES``).

    ``--loss-bound``, else by the loss's definition (100 for the 0/100 loss; the MAE's span of
    the labels read, K - 1 when every class occurs; ``--loss-bound K-1`` declares it when the
    largest class may be missing from the file), else, for a plug-in target only, the file's
    largest loss with a warning. It scales the selective risk's interval; taken from the report
    rows' own losses, a sample without an error would get an interval of [0, 0.16] for the 0/100
    loss instead of [0, 16].

    A certified target never gets ``"data"``: :func:`require_loss_bound` refused it first.
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


def warn_labels_span(args, target, source, loss_bound):
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


def named(target):
    """A target as the command line's messages name it: ``--target risk=2``."""
    return f"--target {target}"


def log_warnings(*messages):
    """Log each message of :mod:`rejectopt._diagnostics` that is not None as a warning."""
    for message in messages:
        if message is not None:
            log.warning(message)


def check_certified_risk(target, loss_bound):
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


def _gate_text(args):
    """``--target`` as :func:`parse_target` reads it: a release gate (``risk=A,min_coverage=W``)
    without ``,confidence=C`` takes ``--confidence``'s, since its floor is certified with the risk;
    InputError for a gate without either, or with the floor 1 (the full set: no floor at all)."""
    text = args.target
    names = [part.partition("=")[0].strip().lower() for part in str(text).split(",")]
    if "min_coverage" not in names:
        return text
    floor = str(text).split(",")[names.index("min_coverage")].partition("=")[2].strip()
    head = str(text).split(",")[0].strip()
    try:
        full = float(floor) == 1
    except ValueError:
        full = False  # not a number: parse_target names it
    if head.partition("=")[0].strip().lower() != "risk":
        raise InputError(
            f"--target {text}: min_coverage is the coverage floor of a certified risk target, "
            "e.g. --target risk=5,min_coverage=0.5 --confidence 0.9"
        )
    if full:
        raise InputError(
            f"--target {text}: min_coverage=1 leaves the full set only, whose risk is the target "
            f"with no floor: give --target {head} (with its confidence)"
        )
    if "confidence" in names:
        return text
    if args.confidence is None:
        raise InputError(
            f"--target {text}: a coverage floor (min_coverage) is certified together with the "
            "risk, at a confidence: give --confidence C (e.g. 0.9), or end the target in "
            ",confidence=C"
        )
    return f"{text},confidence={args.confidence!r}"


def target_of(args):
    """``--target``, certified by ``--confidence`` (or by ``,confidence=C`` in the target itself).

    A release gate is ``--target risk=A,min_coverage=W`` with either: the floor is a part of the
    target, as ``parse_target`` and ``model.json`` write it, so ``select``, ``validate`` and the
    model file name one target in one form (no separate ``--min-coverage`` option).
    """
    try:
        target = parse_target(_gate_text(args))
    except ValueError as err:
        raise InputError(f"--{err}") from None
    if args.confidence is None:
        return target
    if target.confidence is not None and target.confidence != args.confidence:
        raise InputError(
            f"--target {args.target} gives confidence {format_level(target.confidence)} and --confidence "
            f"{format_level(args.confidence)}: give it once"
        )
    fields = (target.kind, target.bounds if isinstance(target, OODTarget) else target.value)
    floor = () if isinstance(target, OODTarget) else (target.min_coverage,)
    try:
        return type(target)(*fields, args.confidence, *floor)
    except ValueError as err:
        raise InputError(
            f"--confidence {format_level(args.confidence)} with --target {args.target}: {one_line(err)}"
        ) from None


def check_memory_budget_env(score):
    """InputError for a ``$REJECTOPT_SELE_MEMORY_BUDGET`` that is not a number of bytes, when ``score`` is a SELE.

    Checked before the data are read; the other scores do not read it.
    """
    if score in baseline_names("logits"):
        return
    sele = score == AUTO or issubclass(get_score(score).cls, SELE)  # "auto" tries SELE
    if os.environ.get(MEMORY_BUDGET_ENV) is not None and sele:
        try:
            memory_budget()
        except ValueError as err:
            raise InputError(one_line(err)) from None


def reads_logits(score):
    """Whether ``score`` reads a network's logits: ``reads_logits``, the class-shared scores.

    A network's outputs then give it their logits, not their embeddings, as :func:`rejectopt.logits.fit_logits` does.
    """
    if score in baseline_names("logits"):
        return True
    if score == AUTO:  # its learned candidates read the features; the logits are read apart
        return False
    return bool(getattr(get_score(score).cls, "reads_logits", False))


def _size(n_bytes):
    """``4.00 GiB``, ``12.3 MiB`` or ``1e+05 bytes``: a budget set small for a test reads as itself, not 0.00 GiB."""
    if n_bytes >= 2**30:
        return f"{n_bytes / 2**30:.2f} GiB"
    return f"{n_bytes / 2**20:.1f} MiB" if n_bytes >= 2**20 else f"{n_bytes:.3g} bytes"


def memory_budget_error(err, args, table):
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
        if reads_logits(args.score)
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


def feature_list(args):
    """``--feature-columns`` as a list of column names, or None when not given."""
    return [c.strip() for c in args.feature_columns.split(",")] if args.feature_columns else None


def class_codes(table):
    """The predicted classes' vocabulary (None without a prediction column) and each row's index in it.

    Without a prediction column every row is class 0: one class-agnostic score.
    """
    vocabulary = class_vocabulary(table.pred_keys) if table.pred_keys is not None else None
    classes = (
        class_indices(table.pred_keys, vocabulary)[0]
        if vocabulary is not None
        else np.zeros(table.X.shape[0], np.intp)
    )
    return vocabulary, classes
