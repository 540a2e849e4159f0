"""Internal: the pipeline's guarantees experiment, kept through the experiment contract
(:mod:`rejectopt.pipeline.experiments`): how often a plug-in and a certified target fail on real data.

A certified :class:`rejectopt.targets.Target` promises that, with probability at least
``1 - delta`` over an i.i.d. calibration sample, the *population's* selective risk (or coverage)
meets the target; the plug-in target meets it on the calibration rows only. Each split of each
classification dataset checks both, for every classifier of the run and the scores
``baseline`` (the classifier's own: MCP for LR / XGBoost, the margin for SVM, which has no
posteriors) and the registered scores that learn from the loss (REG, SELE, and a user's own:
``score_names(learns_from="loss", general=True)``), all read from the staged files (no refit):

* **population**: the split's Tst rows (at most ``max_rows`` of them, a seeded subsample when
  there are more: the guarantee holds for any population, so a subsample is as strict a check
  and keeps the job cheap); their 0/100 losses and Tst uncertainties;
* **targets**: ``risk = f * base risk`` for each ``f`` of ``risk_fractions`` (the base risk is
  the classifier's full-coverage risk on the population, so the targets are equally demanding on
  easy and hard datasets) and ``coverage = w`` for each ``w`` of ``coverages``; each certified at
  each ``delta`` of ``deltas``, beside its plug-in twin;
* **draws**: ``repeats`` calibration samples of ``calibration_fraction`` of the population,
  drawn without replacement, the same draws for every classifier, score and target (common
  random numbers); each target is fitted on the sample by :meth:`rejectopt.targets.Target.fit`
  and its exact population coverage and selective risk computed on all rows;
* **violation**: the population risk above the target (risk) or the coverage below it (coverage),
  as :func:`rejectopt.targets.validate_target` counts it; a draw that cannot meet the target
  (``InfeasibleTargetError``) rejects everything and does not violate.

Rows (one per classifier, score, target, delta and method): the violations and their rate, the
share of infeasible draws, the mean population coverage and risk. :func:`aggregate` pools the
splits (the coverage certification costs: plug-in minus certified mean coverage);
:func:`rejectopt.pipeline.report.guarantees.render` writes its Markdown and figure. Ordinal
datasets give no rows (their MAE loss would need its own levels; the experiment covers the
classification datasets of the run).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from ..._checks import check_open_unit, clopper_pearson, derive_seed, renamed_argument
from ...classifiers import get_classifier
from ...scores import score_names
from ...selective import InfeasibleTargetError
from ...targets import Target
from ._contract import SplitInputs, SplitResult
from .paper import tst_outcomes

__all__ = ["NAME", "DEFAULTS", "settings", "run_split", "aggregate"]

log = logging.getLogger(__name__)

#: The experiment's name: its results go to ``results/experiments/guarantees/``.
NAME = "guarantees"

#: Settings (config ``experiment_settings.guarantees``), overridable key by key.
DEFAULTS = {
    "scores": None,  # None: the baseline and the registered scores that learn from the loss
    "risk_fractions": [0.5, 0.75],
    "coverages": [0.8],
    "deltas": [0.1, 0.05],
    "repeats": 200,
    "calibration_fraction": 0.5,
    "max_rows": 2000,
}

#: Relative tolerance of a violation, as :func:`rejectopt.targets.validate_target`'s.
_TOL = 1e-12

#: The rows' columns, in order.
ROW_COLUMNS = [
    "classifier",
    "score",
    "target",
    "level",
    "target_value",
    "delta",
    "method",
    "base_risk",
    "n_rows",
    "n_calibration",
    "repeats",
    "violations",
    "violation_rate",
    "infeasible_rate",
    "mean_coverage",
    "mean_risk",
]


def _numbers(
    block: Mapping, key: str, low: float, high: float, *, closed_high: bool
) -> list[float]:
    values = block[key]
    if isinstance(values, (int, float)) and not isinstance(values, bool):
        values = [values]
    try:
        out = [float(v) for v in values]
    except (TypeError, ValueError):
        raise ValueError(
            f"config experiment_settings.{NAME}.{key} must be a list of numbers, got {values!r}"
        ) from None
    if (low, high, closed_high) == (0.0, 1.0, False):
        for v in out:
            check_open_unit(v, f"config experiment_settings.{NAME}.{key}")
    inside = all(low < v < high or (closed_high and v == high) for v in out)
    if not out or not inside or len(set(out)) != len(out):
        interval = f"({low:g}, {high:g}{']' if closed_high else ')'}"
        raise ValueError(
            f"config experiment_settings.{NAME}.{key} must be distinct numbers in {interval}, "
            f"got {values!r}"
        )
    return out


def settings(config: dict) -> dict:
    """The experiment's settings: ``config["experiment_settings"]["guarantees"]`` over :data:`DEFAULTS`.

    Parameters
    ----------
    config : dict
        The whole pipeline config; its ``scores`` (classifier -> learned scores) says which
        learned scores each classifier's staged file holds.

    Returns
    -------
    dict
        :data:`DEFAULTS` completed, checked, as floats / ints; ``scores_of``: classifier ->
        the learned scores of ``scores`` it has (the baseline is always staged).

    Raises
    ------
    ValueError
        An unknown key, a fraction outside (0, 1], a coverage outside (0, 1], a delta outside
        (0, 1), fewer than 2 repeats, a calibration fraction outside (0, 1), ``max_rows`` < 20,
        or a score that no classifier of the run has.
    """
    block = dict((config.get("experiment_settings") or {}).get(NAME) or {})
    unknown = sorted(set(block) - set(DEFAULTS))
    if unknown:
        raise ValueError(
            f"config experiment_settings.{NAME}: unknown keys {unknown}; allowed: {sorted(DEFAULTS)}"
        )
    out = {**DEFAULTS, **block}
    out["risk_fractions"] = _numbers(out, "risk_fractions", 0.0, 1.0, closed_high=True)
    out["coverages"] = _numbers(out, "coverages", 0.0, 1.0, closed_high=True)
    out["deltas"] = _numbers(out, "deltas", 0.0, 1.0, closed_high=False)
    out["calibration_fraction"] = _numbers(
        out, "calibration_fraction", 0.0, 1.0, closed_high=False
    )[0]
    for key, least in (("repeats", 2), ("max_rows", 20)):
        value = out[key]
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < least:
            raise ValueError(
                f"config experiment_settings.{NAME}.{key} must be an integer >= {least}, got {value!r}"
            )
        out[key] = int(value)
    if out["scores"] is None:
        out["scores"] = ["baseline", *score_names(learns_from="loss", general=True)]
    scores = out["scores"]
    if isinstance(scores, str) or not scores or len(set(scores)) != len(scores):
        raise ValueError(
            f"config experiment_settings.{NAME}.scores must be a list of distinct score names "
            f"('baseline' is the classifier's own), got {scores!r}"
        )
    out["scores"] = [str(s) for s in scores]
    staged = {str(c): [str(s) for s in v] for c, v in (config.get("scores") or {}).items()}
    out["scores_of"] = {
        c: [s for s in out["scores"] if s in learned] for c, learned in staged.items()
    }
    learned_anywhere = {s for v in staged.values() for s in v}
    if "scores" not in block and staged:
        # The default covers the learned scores the run has: a run that narrows config scores
        # (say to reg only) still gets its guarantees table, for what it learned; a score the
        # user names in experiment_settings must exist.
        out["scores"] = [s for s in out["scores"] if s == "baseline" or s in learned_anywhere]
        out["scores_of"] = {
            c: [s for s in out["scores"] if s in learned] for c, learned in staged.items()
        }
    missing = [s for s in out["scores"] if s != "baseline" and s not in learned_anywhere]
    if staged and missing:
        raise ValueError(
            f"config experiment_settings.{NAME}.scores: {missing} is learned for no classifier of the "
            f"run (config scores: {staged}); drop it or add it to scores"
        )
    return out


def _targets(settings: Mapping, base_risk: float) -> list[tuple[str, str, float]]:
    """``(kind, level, value)`` of a population whose full-coverage risk is ``base_risk`` (percent)."""
    out = []
    if base_risk > 0:
        out += [("risk", f"{f:g} x base", f * base_risk) for f in settings["risk_fractions"]]
    out += [("coverage", f"{w:g}", w) for w in settings["coverages"]]
    return out


def _population_outcome(selection: Any, loss: np.ndarray, s: np.ndarray) -> tuple[float, float]:
    """Exact expected coverage and selective risk of ``selection`` on all rows (NaN risk if none accepted)."""
    if selection is None:
        return 0.0, math.nan
    accept = selection.acceptance_probability(s)
    mass = float(accept.sum())
    return mass / s.size, (float(accept @ loss) / mass if mass > 0 else math.nan)


class _Population:
    """The population sorted once: a deterministic cut's coverage and risk by two look-ups.

    With integer losses (the 0/100 loss) and a cut that accepts each row with probability 0 or 1,
    every sum :func:`_population_outcome` takes is an exact integer in floating point, whatever
    the order it is added in, so the look-ups give its very numbers; a randomised tie (an
    accept probability strictly between 0 and 1) or other losses take its own path.
    """

    def __init__(self, loss: np.ndarray, s: np.ndarray) -> None:
        order = np.argsort(s, kind="stable")
        self.loss, self.s, self.sorted_s = loss, s, s[order]
        self.cum_loss = np.concatenate([[0.0], np.cumsum(loss[order])])
        self.exact = bool(np.all(np.isfinite(loss) & (loss == np.round(loss))))
        self.exact = self.exact and float(np.abs(loss).sum()) < 2.0**52

    def outcomes(self, thresholds: np.ndarray, accept_prob: float) -> tuple[np.ndarray, np.ndarray]:
        """Coverage and risk of the cuts ``(t, accept_prob)`` for each ``t``; ``accept_prob`` 0 or 1."""
        # a tie at the threshold is accepted (probability 1) or rejected (0) whole
        if accept_prob == 1.0:
            accepted = np.searchsorted(self.sorted_s, thresholds, side="right")
        else:
            accepted = np.searchsorted(self.sorted_s, thresholds, side="left")
        mass = accepted.astype(float)
        total = self.cum_loss[accepted]
        with np.errstate(invalid="ignore", divide="ignore"):
            risk = np.where(accepted > 0, total / np.where(accepted > 0, mass, 1.0), math.nan)
        return mass / self.s.size, risk

    def outcome(self, selection: Any) -> tuple[float, float]:
        """:func:`_population_outcome` of one selection (None: refused)."""
        if selection is None or not self.exact or selection.accept_prob not in (0.0, 1.0):
            return _population_outcome(selection, self.loss, self.s)
        coverage, risk = self.outcomes(np.array([selection.threshold]), selection.accept_prob)
        return float(coverage[0]), float(risk[0])


def _never_certified(target: Target, n_cal: int) -> bool:
    """Whether no calibration sample of ``n_cal`` rows can certify the risk ``target``.

    Its refusal says how many tested rows an error-free sample needs (``rows_needed``); a sample
    has at most ``n_cal`` tested rows, and errors only raise the p-values, so below that every
    draw is refused, and fitting each one only to be told so is skipped. One fit on ``n_cal``
    error-free rows asks for the number.
    """
    try:
        target.fit(np.zeros(n_cal), np.arange(n_cal, dtype=float))
    except InfeasibleTargetError as error:
        # set on a certified refusal, though the class declares no such attribute
        return n_cal < int(error.rows_needed)  # type: ignore[attr-defined]
    return False


def _coverage_thresholds(target: Target, cal_s: np.ndarray) -> np.ndarray:
    """Each draw's certified coverage cut ``s_(k)`` (``inf``: accept all), its rank ``k`` asked once.

    The certified coverage cut is the ``k``-th smallest calibration score, ``k`` fixed by the
    sample's size, the target and delta (:func:`rejectopt.targets.Target.fit`): on the scores
    ``0, 1, ..., n - 1`` the fit's threshold is ``k - 1``.
    """
    n = cal_s.shape[1]
    threshold = target.fit(np.zeros(n), np.arange(n, dtype=float)).threshold
    if math.isinf(threshold):
        return np.full(cal_s.shape[0], math.inf)
    return np.sort(cal_s, axis=1)[:, int(threshold)]


def _fit_outcomes(
    target: Target, loss: np.ndarray, uncertainty: np.ndarray, draws: np.ndarray, population
) -> list[tuple[float, float, bool]]:
    """One target's ``(coverage, risk, infeasible)`` on the population, per calibration draw."""
    certified = target.confidence is not None
    if certified and target.kind == "coverage" and population.exact:
        coverage, risk = population.outcomes(_coverage_thresholds(target, uncertainty[draws]), 1.0)
        return [(float(c), float(r), False) for c, r in zip(coverage, risk)]
    if certified and target.kind == "risk" and _never_certified(target, draws.shape[1]):
        return [(0.0, math.nan, True)] * len(draws)
    out = []
    for chosen in draws:
        try:
            selection = target.fit(loss[chosen], uncertainty[chosen])
        except InfeasibleTargetError:
            selection = None
        out.append((*population.outcome(selection), selection is None))
    return out


def _violated(kind: str, value: float, coverage: float, risk: float) -> bool:
    if kind == "risk":
        return bool(risk > value * (1 + _TOL))  # NaN (nothing accepted) does not violate
    return bool(coverage < value * (1 - _TOL))


def calibration_draws(n_rows: int, settings: Mapping, seed: int) -> tuple[int, np.ndarray]:
    """The calibration samples: ``(n_calibration, indices of shape (repeats, n_calibration))``.

    Each row of the index array is a sample drawn without replacement from ``range(n_rows)``.
    """
    n_cal = int(round(settings["calibration_fraction"] * n_rows))
    if not 2 <= n_cal <= n_rows - 1:
        raise ValueError(
            f"calibration_fraction {settings['calibration_fraction']:g} of {n_rows} rows leaves {n_cal} "
            "calibration rows; need at least 2 and one row left out"
        )
    rng = np.random.default_rng(seed)
    return n_cal, np.stack(
        [rng.choice(n_rows, n_cal, replace=False) for _ in range(settings["repeats"])]
    )


@renamed_argument("s", "uncertainty", since="0.6.0")
def check_targets(
    loss: np.ndarray, uncertainty: np.ndarray, draws: np.ndarray, targets, deltas
) -> pd.DataFrame:
    """Every target's outcome on every calibration draw: one row per (draw, target, delta, method).

    Parameters
    ----------
    loss, uncertainty : numpy.ndarray of shape (N,)
        The population's 0/100 losses and uncertainties.
    draws : numpy.ndarray of int of shape (repeats, n)
        The calibration samples (:func:`calibration_draws`).
    targets : list of (kind, level, value)
        The targets (:func:`_targets`).
    deltas : list of float
        The certified targets' deltas; the plug-in target's rows are repeated under each (it
        has no delta: one fit per draw).

    Returns
    -------
    pandas.DataFrame
        ``repeat``, ``target``, ``level``, ``target_value``, ``delta``, ``method``,
        ``coverage``, ``risk`` (population), ``violated``, ``infeasible``.
    """
    population = _Population(loss, uncertainty)
    # Per target, its plug-in and certified fits, each fitted on every draw at once (a certified
    # coverage cut is one sort, a risk target no draw can certify is no fit); the records keep
    # the order of draw, target, fit.
    fits = [
        [("plug-in", None, Target(kind, value))]
        + [("certified", d, Target(kind, value, confidence=1.0 - d)) for d in deltas]
        for kind, value in ((kind, value) for kind, _, value in targets)
    ]
    outcomes = [
        [_fit_outcomes(target, loss, uncertainty, draws, population) for _, _, target in group]
        for group in fits
    ]
    records = []
    for repeat in range(len(draws)):
        for (kind, level, value), group, results in zip(targets, fits, outcomes):
            for (method, delta, _), result in zip(group, results):
                coverage, risk, infeasible = result[repeat]
                violated = _violated(kind, value, coverage, risk)
                for d in deltas if delta is None else [delta]:
                    records.append(
                        (
                            repeat,
                            kind,
                            level,
                            value,
                            d,
                            method,
                            coverage,
                            risk,
                            violated,
                            infeasible,
                        )
                    )
    return pd.DataFrame(
        records,
        columns=[
            "repeat",
            "target",
            "level",
            "target_value",
            "delta",
            "method",
            "coverage",
            "risk",
            "violated",
            "infeasible",
        ],
    )


def _cells(
    outcome: pd.DataFrame,
    classifier: str,
    score: str,
    base_risk: float,
    sizes: tuple[int, int, int],
) -> pd.DataFrame:
    """One classifier and score's rows of :data:`ROW_COLUMNS` from its draws' outcomes
    (:func:`check_targets`): per target, delta and method, the violations and the means; ``sizes``
    are the population's rows, the calibration rows and the draws."""
    cells = (
        outcome.groupby(["target", "level", "target_value", "delta", "method"], sort=False)
        .agg(
            violations=("violated", "sum"),
            violation_rate=("violated", "mean"),
            infeasible_rate=("infeasible", "mean"),
            mean_coverage=("coverage", "mean"),
            mean_risk=("risk", "mean"),
        )
        .reset_index()
    )
    cells.insert(0, "score", score)
    cells.insert(0, "classifier", classifier)
    cells["base_risk"], cells["n_rows"], cells["n_calibration"] = base_risk, sizes[0], sizes[1]
    cells["repeats"] = sizes[2]
    return cells


def run_split(inputs: SplitInputs, settings: dict) -> SplitResult:
    """One split: the violation rates of every target on the staged Tst outcomes of each classifier and score.

    Parameters
    ----------
    inputs : rejectopt.pipeline.experiments.SplitInputs
        The split; ``staged`` gives ``classifier/<name>`` and ``scores/<name>`` per classifier.
    settings : dict
        :func:`settings`.

    Returns
    -------
    rejectopt.pipeline.experiments.SplitResult
        Rows of :data:`ROW_COLUMNS` (none for an ordinal dataset); no curves.
    """
    if inputs.task != "classification":
        log.info(
            "%s is %s: the guarantees experiment covers classification datasets only",
            inputs.dataset,
            inputs.task,
        )
        return SplitResult(pd.DataFrame(columns=ROW_COLUMNS))
    classifiers = sorted(
        role.split("/", 1)[1] for role in inputs.staged if role.startswith("classifier/")
    )
    n_tst = len(inputs.parts["tst"])
    rng = np.random.default_rng(
        derive_seed(inputs.seed, inputs.dataset, NAME, inputs.split, "population")
    )
    rows_used = (
        np.sort(rng.choice(n_tst, settings["max_rows"], replace=False))
        if n_tst > settings["max_rows"]
        else np.arange(n_tst)
    )
    n_cal, draws = calibration_draws(
        rows_used.size,
        settings,
        derive_seed(inputs.seed, inputs.dataset, NAME, inputs.split, "draws"),
    )
    learned_of = {
        c: [s for s in settings["scores_of"].get(c, []) if s != "baseline"] for c in classifiers
    }
    # One read of the data and its checksum for every classifier of the split.
    outcomes = tst_outcomes(
        inputs.task,
        inputs.data_path,
        inputs.splits_path,
        {(c, inputs.split): inputs.staged_file(f"classifier/{c}") for c in classifiers},
        {
            (c, s, inputs.split): inputs.staged_file(f"scores/{c}")
            for c in classifiers
            for s in learned_of[c]
        },
    )
    frames = []
    for classifier in classifiers:
        baseline = get_classifier(classifier).baseline
        learned = learned_of[classifier]
        loss, _, scores = outcomes[(classifier, inputs.split)]
        loss = np.asarray(loss, dtype=float)[rows_used]
        base_risk = float(loss.mean())
        targets = _targets(settings, base_risk)
        if base_risk == 0:
            log.warning(
                "%s split %d %s: no error on the %d population rows, so no risk target below the base risk; "
                "coverage targets only",
                inputs.dataset,
                inputs.split,
                classifier,
                loss.size,
            )
        names = ([baseline] if "baseline" in settings["scores"] else []) + learned
        for score in names:
            s = np.asarray(scores[score][0], dtype=float)[rows_used]
            outcome = check_targets(loss, s, draws, targets, settings["deltas"])
            cells = _cells(outcome, classifier, score, base_risk, (loss.size, n_cal, len(draws)))
            frames.append(cells)
    rows = (
        pd.concat(frames, ignore_index=True)[ROW_COLUMNS]
        if frames
        else pd.DataFrame(columns=ROW_COLUMNS)
    )
    return SplitResult(rows)


def _pooled(group: pd.DataFrame) -> pd.Series:
    draws = float(group["repeats"].sum())
    violations = float(group["violations"].sum())
    low, high = (float(v) for v in clopper_pearson(violations, draws, 0.05))
    return pd.Series(
        {
            "target_value": group["target_value"].mean(),
            "draws": draws,
            "violations": violations,
            "violation_rate": violations / draws,
            "violation_low": low,
            "violation_high": high,
            "infeasible_rate": group["infeasible_rate"].mean(),
            "mean_coverage": group["mean_coverage"].mean(),
            "mean_risk": group["mean_risk"].mean(),
        }
    )


def aggregate(rows: pd.DataFrame, settings: dict) -> dict[str, pd.DataFrame]:
    """Every split's rows to two tables: ``cells`` and ``summary``.

    Parameters
    ----------
    rows : pandas.DataFrame
        Every split's rows (:data:`ROW_COLUMNS` with ``dataset`` and ``split``).
    settings : dict
        :func:`settings`.

    Returns
    -------
    dict of str to pandas.DataFrame
        ``cells``: per (dataset, classifier, score, target, level, delta), the plug-in and the
        certified violation rate pooled over the splits' draws, the certified rate's 95 %
        Clopper-Pearson interval, the mean population coverage of each and the coverage
        certification costs (plug-in minus certified). ``summary``: per (target, level, delta),
        over the cells: their number, the mean and largest violation rate of each method, the
        cells whose certified interval lies above delta, the mean coverages and cost.
    """
    keys = ["dataset", "classifier", "score", "target", "level", "delta"]
    if rows.empty:
        return {"cells": pd.DataFrame(columns=keys).set_index(keys), "summary": pd.DataFrame()}
    pooled = (
        rows.groupby([*keys, "method"], sort=True)
        .apply(_pooled, include_groups=False)
        .unstack("method")
    )
    cells = pd.DataFrame(
        {
            "target_value": pooled[("target_value", "certified")],
            "draws": pooled[("draws", "certified")],
            "plugin_violation_rate": pooled[("violation_rate", "plug-in")],
            "certified_violation_rate": pooled[("violation_rate", "certified")],
            "certified_violation_low": pooled[("violation_low", "certified")],
            "certified_violation_high": pooled[("violation_high", "certified")],
            "certified_infeasible_rate": pooled[("infeasible_rate", "certified")],
            "plugin_coverage": pooled[("mean_coverage", "plug-in")],
            "certified_coverage": pooled[("mean_coverage", "certified")],
        }
    )
    cells["coverage_cost"] = cells["plugin_coverage"] - cells["certified_coverage"]
    reset = cells.reset_index()
    reset["above_delta"] = reset["certified_violation_low"] > reset["delta"]
    summary = reset.groupby(["target", "level", "delta"], sort=True).agg(
        cells=("dataset", "size"),
        plugin_violation_mean=("plugin_violation_rate", "mean"),
        plugin_violation_max=("plugin_violation_rate", "max"),
        certified_violation_mean=("certified_violation_rate", "mean"),
        certified_violation_max=("certified_violation_rate", "max"),
        certified_cells_above_delta=("above_delta", "sum"),
        plugin_coverage=("plugin_coverage", "mean"),
        certified_coverage=("certified_coverage", "mean"),
        coverage_cost=("coverage_cost", "mean"),
        certified_infeasible_rate=("certified_infeasible_rate", "mean"),
    )
    return {"cells": cells, "summary": summary}
