"""Internal: what each pipeline job declares (``mem_mb``, ``runtime``) and how many splits it
trains, from n, d, K; not part of the public API.

A scheduler packs jobs by what they declare: a declaration far above the need serialises a
workstation run (``--resources mem_mb=...``) and queues a cluster job behind bigger ones, one below
it gets a SLURM job killed. So the declarations follow measurements: :data:`STAGES` holds, per
stage (a rule, and for the per-classifier rules the classifier), a cost model fitted to the Snakemake
``benchmark:`` records of ``benchmarks/bench_scale.py`` (synthetic stand-ins of the seven datasets the
offline mirror lacks, at 10 %, 30 % and 100 % of their real n) and of the offline run of the 15
mirrored datasets at their real size:

* CPU seconds of one split: ``cpu_s = c0 + a * z ** b`` with ``c0`` the job's start-up and ``z`` the
  size the stage's work grows with, in millions (:attr:`StageCost.size`): ``n d K`` where one model
  or tree per class is fitted (LR, the SVMs, XGBoost, the learned scores), ``n d`` where the classes
  are thresholds on one direction (SVOR) or there are two (the double-hinge SVM), ``n`` for the
  splits; ``b`` between 0.3 and 1 (one pass of a solver is linear in that size; a larger exponent,
  fitted across datasets of unlike difficulty, extrapolated to covtype's and msd's size far beyond
  what their stand-ins measured), ``a`` and ``c0`` then raised until no measured job lies above;
* peak resident memory: ``rss_mb = m0 + m1 * n * d / 1e6 + m2 * n * K / 1e6`` (the data matrix and
  the per-class outputs, as float64; ``m0`` the interpreter and its libraries).

The declaration adds the margins :data:`MEMORY_MARGIN` and :data:`RUNTIME_MARGIN`: measured peaks
sat within 25 % of the fit, and a job's wall time on a loaded or slower node reached about twice
its CPU seconds on a quiet one.

A (dataset, classifier) pair whose splits together are predicted to cost more than
:data:`SPLIT_JOB_CPU_S` gets one job per split (:func:`splits_per_job`), so that a workstation's
cores or a cluster run them side by side; cheaper pairs keep one job for all splits, where the
start-up of a job (:data:`JOB_STARTUP_CPU_S`) would otherwise dominate. The
double-hinge experiment's jobs (one per dataset) are split the same way: codrna's five splits of
Gaussian-kernel fits are priced at about 28 CPU-minutes together, about 5.5 for one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = [
    "JOB_STARTUP_CPU_S",
    "MEMORY_MARGIN",
    "RUNTIME_MARGIN",
    "SPLIT_JOB_CPU_S",
    "STAGES",
    "StageCost",
    "job_resources",
    "splits_per_job",
    "work_size",
]

#: Declared memory = this x the fitted peak RSS, plus :data:`MEMORY_FLOOR_MB`, rounded up to 100 MB.
MEMORY_MARGIN = 1.5
#: Added to every memory declaration (MB): a job's first imports alone vary by about 100 MB.
MEMORY_FLOOR_MB = 200
#: Declared runtime = this x the fitted CPU seconds (over the job's splits, divided by its threads),
#: in minutes, rounded up, at least :data:`RUNTIME_FLOOR_MIN`.
RUNTIME_MARGIN = 3.0
#: The shortest runtime declared (minutes): start-up, file system latency, a slow node.
RUNTIME_FLOOR_MIN = 5
#: CPU seconds a job that fits models spends before its first fit: the process, Snakemake's
#: preamble, importing scikit-learn (or XGBoost) and reading the data. Measured in the ``benchmark:``
#: records of ``benchmarks/bench_scale_records.csv``: the cheapest training jobs (stand-ins at 10 % of
#: their n, where the fit is a small part) plus what Snakemake's sampler misses of a job that short
#: (``benchmarks/bench_scale.py``; the numbers: ``benchmarks/measured_records.csv``, topic
#: ``job_startup``), rounded up. It is
#: why the pipeline gives a cheap (dataset, classifier) pair, a classifier's scores and a dataset's
#: OOD or double-hinge splits one job each. The cost models of :data:`STAGES` fit their own start-up
#: (``c0``) per stage.
JOB_STARTUP_CPU_S = 3.0
#: A (dataset, classifier) pair predicted to cost more CPU-s than this over all its splits gets one
#: job per split; below it, the 4 extra job start-ups of 5 splits would be more than 4 % of its cost.
SPLIT_JOB_CPU_S = 100 * JOB_STARTUP_CPU_S


@dataclass(frozen=True)
class StageCost:
    """Fitted cost of one stage: CPU-s per split ``c0 + a (n d K / 1e6) ** b``, RSS
    ``m0 + m1 n d / 1e6 + m2 n K / 1e6``.

    Parameters
    ----------
    c0, a, b : float
        CPU seconds per split: ``c0 + a z ** b``, with ``z`` the stage's work size (:func:`work_size`).
    m0, m1, m2 : float
        Peak RSS in MB: ``m0 + m1 n d / 1e6 + m2 n K / 1e6``.
    per_split : bool, default=True
        Whether the CPU seconds are per split (a job covering k splits costs k times them).
    size : {"n", "nd", "ndk"}, default="ndk"
        What the work grows with.
    """

    c0: float
    a: float
    b: float
    m0: float
    m1: float
    m2: float = 0.0
    per_split: bool = True
    size: str = "ndk"

    def cpu_s(self, n: int, d: int, k: int) -> float:
        return self.c0 + self.a * work_size(self.size, n, d, k) ** self.b

    def rss_mb(self, n: int, d: int, k: int) -> float:
        return self.m0 + self.m1 * n * d / 1e6 + self.m2 * n * k / 1e6


#: Per stage: ``rule`` or ``rule/classifier``. Fitted by ``benchmarks/bench_scale.py --fit``.
STAGES: dict[str, StageCost] = {
    # Refitted on the real runs with the Gaussian-kernel row (marketing, phishing, breast cancer; 5 splits
    # each): its Nystroem fits cost ~ n_trn1 x rank^2 (rank 200, double_hinge.rbf_rank) and hold
    # n_trn1 x rank features, so CPU and memory grow with n, not n d; a larger rank costs more
    "double_hinge_split": StageCost(
        c0=1.3, a=1000.0, b=1, m0=167, m1=22.1, m2=1073, size="n"
    ),  # 3 jobs
    "learn_score/lr": StageCost(
        c0=0.959, a=1.289, b=0.35, m0=189, m1=2.69, m2=45, size="ndk"
    ),  # 19 jobs
    "learn_score/svm": StageCost(
        c0=1.1, a=1.587, b=0.3, m0=180, m1=8.98, m2=35, size="ndk"
    ),  # 19 jobs
    "learn_score/svor": StageCost(
        c0=0.485, a=2.302, b=0.55, m0=193, m1=0, m2=40.4, size="nd"
    ),  # 16 jobs
    "learn_score/xgb": StageCost(
        c0=0.844, a=1.271, b=0.3, m0=167, m1=12.9, m2=25.7, size="ndk"
    ),  # 18 jobs
    "make_splits": StageCost(
        c0=0.422, a=0.5224, b=0.3, m0=79, m1=7.88, m2=0, per_split=False, size="n"
    ),  # 19 jobs
    "ood_split": StageCost(c0=0.954, a=0.3958, b=0.85, m0=249, m1=0, m2=231, size="ndk"),  # 4 jobs
    "prepare_dataset": StageCost(
        c0=0.493, a=0.3173, b=0.55, m0=130, m1=15.2, m2=5.32, per_split=False, size="nd"
    ),  # 23 jobs
    "summarize_dataset": StageCost(
        c0=0.477, a=0.1361, b=0.3, m0=76, m1=15.3, m2=0, size="ndk"
    ),  # 19 jobs
    "train_classifier/lr": StageCost(
        c0=0.567, a=1.611, b=0.3, m0=174, m1=9.26, m2=38.9, size="ndk"
    ),  # 19 jobs
    "train_classifier/svm": StageCost(
        c0=1.08, a=1.532, b=0.65, m0=274, m1=5.34, m2=136, size="ndk"
    ),  # 19 jobs
    "train_classifier/svor": StageCost(
        c0=1.22, a=11.36, b=1, m0=162, m1=13.6, m2=51.3, size="nd"
    ),  # 16 jobs
    "train_classifier/xgb": StageCost(
        c0=3.58, a=6.012, b=1, m0=226, m1=9.03, m2=73.6, size="ndk"
    ),  # 18 jobs
}


def work_size(size: str, n: int, d: int, k: int) -> float:
    """The size a stage's work grows with, in millions: ``"n"``, ``"nd"`` or ``"ndk"`` (:class:`StageCost`).

    Parameters
    ----------
    size : {"n", "nd", "ndk"}
        Which product of the dataset's sizes.
    n, d, k : int
        Examples, features and classes.

    Returns
    -------
    float
        The product, divided by one million.
    """
    factors = {"n": n, "nd": n * d, "ndk": n * d * k}
    if size not in factors:
        raise ValueError(f"StageCost.size must be one of {sorted(factors)}, got {size!r}")
    return factors[size] / 1e6


def _costs(rule: str, classifier: str | None) -> list[StageCost]:
    """The cost model of ``rule`` (for ``classifier``); for a plugin's classifier every one of the rule's,
    so that it is declared as the costliest registered classifier at its dataset's size."""
    key = f"{rule}/{classifier}" if classifier else rule
    if key in STAGES:
        return [STAGES[key]]
    same_rule = [cost for name, cost in STAGES.items() if name.split("/")[0] == rule]
    if not same_rule:
        raise KeyError(f"no cost model for rule {rule!r}; known: {', '.join(sorted(STAGES))}")
    return same_rule


def job_resources(
    rule: str,
    n: int,
    d: int,
    k: int,
    classifier: str | None = None,
    splits: int = 1,
    threads: int = 1,
) -> dict[str, int]:
    """``{"mem_mb", "runtime"}`` a job of ``rule`` declares for a dataset of ``n`` rows, ``d`` features, ``K`` classes.

    Parameters
    ----------
    rule : str
        The rule's name (``train_classifier``, ``learn_score``, ...).
    n, d, k : int
        The dataset's examples, features and classes.
    classifier : str or None
        The classifier of a per-classifier rule.
    splits : int, default=1
        Splits the job covers (its runtime grows with them, its memory does not).
    threads : int, default=1
        The job's threads: its CPU seconds are spread over them.

    Returns
    -------
    dict
        ``mem_mb`` (MB) and ``runtime`` (minutes), with the margins of this module.
    """
    if min(n, d, k) < 1 or splits < 1 or threads < 1:
        raise ValueError(
            f"job_resources({rule!r}): n, d, K, splits and threads must be positive, got "
            f"n={n}, d={d}, K={k}, splits={splits}, threads={threads}"
        )
    costs = _costs(rule, classifier)
    rss = max(cost.rss_mb(n, d, k) for cost in costs)
    mem_mb = int(math.ceil((MEMORY_MARGIN * rss + MEMORY_FLOOR_MB) / 100.0) * 100)
    cpu = max(cost.cpu_s(n, d, k) * (splits if cost.per_split else 1) for cost in costs)
    runtime = max(RUNTIME_FLOOR_MIN, math.ceil(RUNTIME_MARGIN * cpu / threads / 60.0))
    return {"mem_mb": mem_mb, "runtime": runtime}


def splits_per_job(
    classifier: str | None,
    n: int,
    d: int,
    k: int,
    n_splits: int,
    stage: str = "train_classifier",
    threshold: float = SPLIT_JOB_CPU_S,
) -> int:
    """Splits one job of rule ``stage`` covers: all of them, or 1 for a job costlier than ``threshold``.

    Parameters
    ----------
    classifier : str or None
        The classifier of a ``train_classifier`` job (a plugin's is priced as the costliest
        registered one); None for a rule without one (``double_hinge_split``).
    n, d, k : int
        The dataset's examples, features and classes.
    n_splits : int
        The run's splits.
    stage : str, default="train_classifier"
        The rule whose jobs are split: ``train_classifier`` or ``double_hinge_split``.
    threshold : float, default=SPLIT_JOB_CPU_S
        CPU seconds over all splits above which a job covers one split (the config's
        ``split_job_cpu_s``); 0 splits every job.

    Returns
    -------
    int
        ``n_splits`` (one job for all splits) or 1 (one job per split).
    """
    if threshold < 0:
        raise ValueError(f"splits_per_job: threshold must be >= 0 CPU seconds, got {threshold}")
    cpu = max(cost.cpu_s(n, d, k) for cost in _costs(stage, classifier)) * n_splits
    return 1 if cpu > threshold else n_splits
