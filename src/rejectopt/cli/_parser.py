"""The ``argparse`` parser of ``python -m rejectopt``: options, choices read off the score registry, help."""

from __future__ import annotations

import argparse

from .. import __version__
from ..pipeline.report._figures import FIGURE_FORMATS
from ..scores import get_score, score_names
from ..scores._confidence import AUTO, baseline_names, confidence_label
from ..scores._tuning import SCORE_C_GRID

__all__ = [
    "DEFAULT_OOD_COLUMN",
    "DEFAULT_SCORE",
    "SELECT_DEFAULT_SCORE",
    "build_parser",
    "cli_scores",
    "select_scores",
]

#: The learned score ``validate`` fits by default, and ``"auto"``'s incumbent without logits.
DEFAULT_SCORE = "sele"
#: ``select --score``'s default: the candidate of least validation AuRC (the network's MSP, else
#: SELE, kept unless beaten beyond the validation rows' noise).
SELECT_DEFAULT_SCORE = AUTO
#: Most cuts evenly spaced in coverage that ``thresholds.csv`` lists (the selected threshold's cut
#: and the next one come on top): each cut's bound costs a beta quantile, so listing every distinct
#: calibration score would make the table the slowest step of a large ``select``.
THRESHOLDS_MAX_CUTS = 100_000
#: Column marking the OOD rows for a tpr=T,fpr=F or precision=P,recall=R target (``--ood-column``).
DEFAULT_OOD_COLUMN = "is_ood"


def cli_scores():
    """Registered scores ``select`` can learn: from the loss, with a JSON form (default first)."""
    names = [
        n
        for n in score_names(learned=True)
        if get_score(n).learns_from == "loss"
        and callable(getattr(get_score(n).cls, "from_dict", None))
    ]
    return sorted(names, key=lambda n: n != DEFAULT_SCORE)


def select_scores():
    """``select --score``'s choices: ``"auto"``, the learned scores, the baselines of a network's logits."""
    return [AUTO, *cli_scores(), *baseline_names("logits")]


def _non_negative_int(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a non-negative integer, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be a non-negative integer, got {value}")
    return value


def build_parser(prog="rejectopt"):
    """The ``argparse`` parser of ``rejectopt`` / ``python -m rejectopt``.

    Parameters
    ----------
    prog : str, default="rejectopt"
        The program as the user invoked it, for the usage line, the errors and ``--version``.

    Returns
    -------
    argparse.ArgumentParser
        With the subcommands ``select`` and ``apply`` and their options.
    """
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Selective prediction for your own classifier: learn an uncertainty score and the optimal "
        "(randomized Bayes) selection function of Franc, Prusa & Voracek (JMLR 2023).",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="Exit status: 0 on success, 2 on bad input (one-line message, no partial output).",
    )
    parser.add_argument(
        "-q", "--quiet", action="store_true", help="log warnings only (no progress)"
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="{select,apply,validate}")
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        default=argparse.SUPPRESS,
        help="log warnings only (no progress)",
    )
    common.add_argument(
        "--force", action="store_true", help="replace existing output files (never an input file)"
    )
    learning = _learning_options()
    _add_select_parser(sub, common, _learning_options(choose=True))
    _add_apply_parser(sub, common)
    _add_validate_parser(sub, common, learning)
    return parser


def _learning_options(choose=False):
    """Options ``select`` and ``validate`` share: the table of predictions, its loss, the score and the row split.

    ``choose``: ``select``'s ``--score``, which also offers ``"auto"`` and the baselines.
    """
    p = argparse.ArgumentParser(add_help=False)
    p.add_argument(
        "--data",
        required=True,
        help="CSV with a header, or NPZ with arrays X, y_pred and y or loss; or a deep network's outputs: "
        "NPZ with arrays logits (n x K), labels (n, classes 0..K-1) and optionally embeddings "
        "(n x d), or CSV with columns logit_0..logit_{K-1}, label and optionally emb_0..emb_{d-1} "
        "(prediction = largest logit; features = embeddings, else logits)",
    )
    _add_score_options(p, choose)
    _add_split_options(p)
    _add_column_options(p)
    p.add_argument("--n-jobs", type=int, default=1, help="threads of SELE (default %(default)s)")
    return p


def _add_score_options(p, choose=False):
    """``--score`` (the scores that learn from the loss; with ``choose``, ``"auto"`` and the
    baselines too) and ``--C`` (the regularisation grid)."""
    choices = cli_scores()
    others = [n for n in score_names(learned=True) if get_score(n).needs_posteriors]
    chooser = (
        f"'{AUTO}' (default): of the candidates, the one of least AuRC on the validation rows "
        "(the network's MSP, else SELE, is kept unless beaten in 95 %% of bootstrap resamples "
        "of them); a learned score forced and worse there than MSP warns. Or a "
        "learned score, "
    )
    baselines = (
        "; or a baseline of a network's logits (read as they are, no learning): "
        + ", ".join(f"{n} ({confidence_label(n)})" for n in baseline_names("logits"))
    )
    p.add_argument(
        "--score",
        choices=select_scores() if choose else choices,
        default=SELECT_DEFAULT_SCORE if choose else DEFAULT_SCORE,
        help=(chooser if choose else "learned uncertainty score, ")
        + f"one that learns from the loss: "
        f"{' or '.join(get_score(n).label for n in choices)}"
        + (baselines if choose else f" (default {get_score(DEFAULT_SCORE).label})")
        + (
            f"; not {', '.join(get_score(n).label for n in others)}: "
            f"{'it learns' if len(others) == 1 else 'they learn'} from the classifier's class "
            "posteriors, which the input does not hold"
            if others
            else ""
        ),
    )
    p.add_argument(
        "--C",
        default=",".join(f"{c:g}" for c in SCORE_C_GRID),
        help="regularisation grid, comma-separated (default %(default)s)",
    )


def _add_split_options(p):
    """The row split: the calibration, report and validation fractions and the seed."""
    p.add_argument(
        "--calibration-fraction",
        type=float,
        default=0.3,
        help="share of rows for fitting the selection function (default %(default)s)",
    )
    p.add_argument(
        "--report-fraction",
        type=float,
        default=0.2,
        help="share of held-out rows for the report (default %(default)s)",
    )
    p.add_argument(
        "--validation-fraction",
        type=float,
        default=0.3,
        help="share of the train rows that picks C (default %(default)s)",
    )
    p.add_argument(
        "--seed",
        type=_non_negative_int,
        default=0,
        help="seed of the row split and of SELE's chunks (default 0)",
    )


def _add_column_options(p):
    """The table's columns (label, prediction, loss, features) and the loss with its bound."""
    p.add_argument(
        "--label-column",
        default=None,
        help="true label column (default y; for a network's outputs label in a CSV, labels in an NPZ)",
    )
    p.add_argument(
        "--pred-column",
        default="y_pred",
        help="predicted class column (default %(default)s); 'none' for one class-agnostic score "
        "(needs --loss-column); not row, uncertainty, acceptance_probability or accept, the columns "
        "apply writes beside it",
    )
    p.add_argument(
        "--loss-column",
        default=None,
        help="column with the loss of each prediction (instead of --label-column and --loss)",
    )
    p.add_argument(
        "--loss-bound",
        type=float,
        default=None,
        help="with --loss-column or --loss mae: the largest loss a prediction can have, which scales "
        "the selective risk's interval and a certified risk's bound (default: for the MAE the span of "
        "the labels, K - 1 when every class occurs; for a loss column the largest loss in the file, "
        "with a warning, and with a certified target no default: give B, by the loss's definition, "
        "never from the sample); the 0/100 loss is bounded by 100",
    )
    p.add_argument(
        "--loss",
        default="zero_one",
        choices=("zero_one", "mae"),
        help="loss from labels: zero_one = 100*[y != y_pred] (percent, as in the paper), "
        "mae = |y - y_pred| (default %(default)s)",
    )
    p.add_argument(
        "--feature-columns",
        default=None,
        help="comma-separated feature columns (default: every column except label/pred/loss/OOD)",
    )


def _add_figure_format(p, figure):
    """``--figure-format``: the pipeline's config figure_formats for a command's ``figure`` (a PNG's name)."""
    stem = figure.removesuffix(".png")
    p.add_argument(
        "--figure-format",
        action="append",
        choices=FIGURE_FORMATS,
        default=None,
        metavar="{png,pdf,svg}",
        help=f"write {figure} also as {stem}.pdf or {stem}.svg beside it; repeat for both "
        f"(--figure-format pdf --figure-format svg). PDF and SVG are vector graphics with no "
        f"creation date: the same input gives the same bytes. {figure} is always written, "
        "as with the pipeline's config figure_formats",
    )


def _add_select_parser(sub, common, learning):
    p = sub.add_parser(
        "select",
        parents=[common, learning],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        help="learn the score and selection function from labelled predictions",
        description="Learn an uncertainty score (SELE or REG; on a network's outputs, or its own confidence) "
        "from your classifier's predictions and losses, and "
        "fit the selection function for a target.\n\nRows are split (seeded): train (score; an internal "
        "validation share picks C by AuRC), calibration (selection function) and report (held out: "
        "achieved coverage and selective risk with 95% intervals).",
        epilog="Examples:\n  python -m rejectopt select --data val.csv --target coverage=0.8 --out sel/\n"
        "  python -m rejectopt select --data val.npz --target risk=5 --score reg --out sel/\n"
        "  python -m rejectopt select --data val.csv --loss-column loss --target reject-cost=10 --out sel/\n"
        "  python -m rejectopt select --data mixed.csv --target tpr=0.8,fpr=0.3 --out sel/   "
        "(column is_ood: 1 = OOD row)\n"
        "  python -m rejectopt select --data mixed.csv --target precision=0.9,recall=0.7 --ood-column ood "
        "--out sel/\n"
        "  python -m rejectopt select --data net_val.npz --target coverage=0.9 --out sel/   "
        "(a network's logits, labels, embeddings)",
    )
    p.add_argument(
        "--target",
        required=True,
        help="coverage=W (accept a fraction W in (0,1]), risk=L (largest coverage with selective risk "
        "<= L, in loss units: percent for zero_one) or reject-cost=E (cost-based rule); with "
        "out-of-distribution (OOD) rows marked by --ood-column: tpr=T,fpr=F (smallest selective risk "
        "of the accepted ID rows with TPR = share of ID accepted >= T and FPR = share of OOD accepted "
        "<= F) or precision=P,recall=R (share of ID among the accepted >= P, recall = TPR >= R); "
        "bounds in [0,1]. A release gate: risk=L,min_coverage=W with --confidence (or ending in "
        ",confidence=C): selective risk <= L and coverage >= W, both together, W in (0,1)",
    )
    p.add_argument(
        "--confidence",
        type=float,
        default=None,
        help="certify the target: with probability >= C over the calibration rows (drawn i.i.d.), the "
        "population's selective risk is at most L (risk=L) or its coverage at least W (coverage=W), "
        "or TPR >= T and FPR <= F (tpr=T,fpr=F), or risk <= L and coverage >= W together "
        "(risk=L,min_coverage=W, a release gate); e.g. 0.95. Default: none, a plug-in target met on "
        "the calibration rows only",
    )
    p.add_argument(
        "--out",
        required=True,
        help="output folder: model.json, report.md, report.json, rc_curve.png and, "
        "for a risk or coverage target, thresholds.csv (per threshold of the "
        f"calibration rows, at most {THRESHOLDS_MAX_CUTS:,} evenly spaced in coverage and those "
        "around the threshold: rows accepted, empirical risk, upper bound, "
        "p-value)",
    )
    _add_figure_format(p, "rc_curve.png")
    p.add_argument(
        "--metrics",
        default=None,
        metavar="NAME[,NAME...]",
        help="also report these registered metrics of the learned score on the report rows, "
        "under 'metrics' in report.json and as a table in report.md: aurc, augrc, eaurc, eaugrc "
        "(in the loss's units), failure_auroc, fpr_at_95_tpr, failure_aupr_error, "
        "failure_aupr_success, aurc_achievable (of the failures: loss > 0 for zero_one, else a "
        "0/1 loss), aurc_ba, augrc_ba (of the labels: a zero_one loss computed from them), ece, "
        "mce, adaptive_ece, brier, nll (of a network's probabilities); 'all' for every one the "
        "table allows. Default: none",
    )
    p.add_argument(
        "--ood-column",
        default=None,
        help=f"with a tpr/fpr or precision/recall target: column marking OOD rows, 0/false = ID, "
        f"1/true = OOD (default {DEFAULT_OOD_COLUMN}; array is_ood of an NPZ). OOD rows need features "
        "and a predicted class; their label or loss is not read (may be empty). The score learns from "
        "the ID rows; OOD rows go to the calibration and report rows only",
    )
    _add_group_options(p)


def _add_group_options(p):
    """``select --group-column`` and ``--simultaneous``: a certified threshold per group."""
    p.add_argument(
        "--group-column",
        default=None,
        metavar="COL",
        help="with a certified target (--confidence): also fit a threshold per group, the group "
        "of each row read from column COL (array COL of an NPZ; not a feature, no empty label), "
        "on the calibration rows of that group alone; report.json 'groups' and report.md list "
        "each group's threshold, certificate and report-row coverage and selective risk. A group "
        "too small to certify on its own takes the pooled threshold, whose guarantee holds for "
        "the pooled population only. model.json records each group's threshold, and apply reads "
        "column COL and decides each row by its group's (a group select saw no row of is refused)",
    )
    p.add_argument(
        "--simultaneous",
        action="store_true",
        help="with --group-column: all groups' own certificates hold together with probability "
        ">= C (each group fitted at (C)^(1/G), Sidak), instead of each group's alone",
    )


def _add_apply_parser(sub, common):
    p = sub.add_parser(
        "apply",
        parents=[common],
        help="accept or reject new predictions with a model.json",
        description="Compute the uncertainty of new predictions with a model.json written by 'select' and decide "
        "accept/reject per row (randomised only at exact ties with the threshold, seeded).",
    )
    p.add_argument("--model", required=True, help="model.json written by 'select'")
    p.add_argument(
        "--data",
        required=True,
        help="CSV or NPZ with the model's feature columns and predicted class, or the network's outputs "
        "(logits and the embeddings the model was selected on; labels are not read)",
    )
    p.add_argument(
        "--out",
        required=True,
        help="output CSV, one line per input row in its order: row (a CSV's data row counted "
        "from 1, the header not counted; an NPZ's 0-based index), predicted class, uncertainty, "
        "acceptance_probability, accept (1/0)",
    )
    p.add_argument(
        "--seed",
        type=_non_negative_int,
        default=0,
        help="seed of the draws at ties (default %(default)s)",
    )
    p.add_argument(
        "--unseen-classes",
        choices=("error", "reject"),
        default="error",
        help="a predicted class not seen by 'select': stop with an error (default) or reject the row",
    )
    p.add_argument(
        "--extreme-values",
        choices=("reject", "error"),
        default="reject",
        help="a row with a feature value beyond +-1e150 (raw or standardised, where the score "
        "overflows): reject the row (default) or stop with an error",
    )


def _positive_int(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {value}")
    return value


def _add_validate_parser(sub, common, learning):
    p = sub.add_parser(
        "validate",
        parents=[common, learning],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        help="check how often a certified target fails on your own labelled predictions",
        description="Take your table's held-out rows (the calibration and report rows of 'select', the rest learning "
        "the score as 'select' does; or every row with --uncertainty-column) as the population, draw "
        "calibration samples from it --repeats times, fit the certified target and its plug-in twin on "
        "each, and count how often the population's selective risk exceeds the target (risk) or its "
        "coverage falls below it (coverage), or either happens (a release gate, "
        "risk=L,min_coverage=W). The certified violation rate should stay at or below "
        "delta = 1 - confidence within its interval.",
        epilog="Example:\n  python -m rejectopt validate --data preds.csv --target risk=2 --confidence 0.95 "
        "--repeats 500 --out check/",
    )
    p.add_argument(
        "--target",
        required=True,
        help="risk=L (loss units: percent for zero_one), coverage=W, or risk=L,min_coverage=W (a "
        "release gate: risk <= L and coverage >= W together)",
    )
    p.add_argument(
        "--confidence",
        type=float,
        required=True,
        help="1 - delta of the certified target, e.g. 0.95",
    )
    p.add_argument(
        "--repeats", type=_positive_int, default=500, help="calibration draws (default %(default)s)"
    )
    p.add_argument(
        "--uncertainty-column",
        default=None,
        help="column holding your own uncertainty score (larger = less certain): no score is learned and "
        "every row is in the population",
    )
    p.add_argument(
        "--out",
        required=True,
        help="output folder: repeats.csv (one line per draw and method), summary.csv, validity.png",
    )
    _add_figure_format(p, "validity.png")
    p.add_argument(
        "--group-column",
        default=None,
        metavar="COL",
        help="also check the per-group certificates of select --group-column COL: on each draw, "
        "fit a threshold per group of column COL and count how often each group's own "
        "certificate fails on that group's population rows (a fallback group's pooled one on "
        "all rows); writes groups.csv and prints each group's violation rate beside delta",
    )
    p.add_argument(
        "--simultaneous",
        action="store_true",
        help="with --group-column: the groups' certificates fitted to hold together, and a "
        "line for how often any of them fails",
    )
