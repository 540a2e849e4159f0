"""Internal (the pipeline's report): provenance of a run: wall time per rule (``benchmark:`` records), the
environment, and the run's configuration read back for ``snakemake --report``."""

from __future__ import annotations

import os
import platform
import re
import shlex
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import pandas as pd
import threadpoolctl
import yaml

from ._format import count, format_number
from ._lock import lock_differences, lock_sha256

__all__ = [
    "timing_table",
    "environment_markdown",
    "recorded_config",
    "report_config_error",
    "report_requested",
]


#: Rules whose benchmark records sit under their experiment's name, then the dataset's.
_PER_EXPERIMENT = ("experiment_dataset",)


def timing_table(benchmark_files) -> tuple[pd.DataFrame, str]:
    """Wall time per rule and dataset from Snakemake ``benchmark:`` files.

    ``benchmark_files`` are paths ``.../benchmarks/<rule>/<dataset>/.../<file>.tsv``, or
    ``.../benchmarks/<rule>/<dataset>.tsv`` for a rule of one job per dataset. An experiment's
    per-dataset rule keeps one record per experiment and dataset,
    ``.../benchmarks/experiment_dataset/<experiment>/<dataset>.tsv``: its rule is named
    ``experiment_dataset/<experiment>``, so that each experiment's cost reads apart.
    Returns the tidy frame (rule, dataset, jobs, total_s, mean_s, max_s,
    max_rss_mb) and its Markdown rendering.

    Parameters
    ----------
    benchmark_files : iterable of path-like
        Snakemake ``benchmark:`` TSV files (columns ``s`` and ``max_rss`` are read), under a
        folder named ``benchmarks``.

    Returns
    -------
    table : pandas.DataFrame
        One row per (rule, dataset).
    markdown : str
        Total time per rule and the table.
    """
    records = []
    for path in map(Path, benchmark_files):
        bench = pd.read_csv(path, sep="\t")
        parts = path.parts[path.parts.index("benchmarks") + 1 :]
        rule, dataset = parts[0], parts[1] if len(parts) > 2 else Path(parts[1]).stem
        if rule in _PER_EXPERIMENT and len(parts) == 3:
            rule, dataset = f"{rule}/{parts[1]}", Path(parts[2]).stem
        records.append(
            {
                "rule": rule,
                "dataset": dataset,
                "s": float(bench["s"].iloc[0]),
                "max_rss": float(pd.to_numeric(bench["max_rss"], errors="coerce").iloc[0]),
            }
        )
    frame = pd.DataFrame(records, columns=["rule", "dataset", "s", "max_rss"])
    table = (
        frame.groupby(["rule", "dataset"])
        .agg(
            jobs=("s", "size"),
            total_s=("s", "sum"),
            mean_s=("s", "mean"),
            max_s=("s", "max"),
            max_rss_mb=("max_rss", "max"),
        )
        .reset_index()
    )
    lines = ["# Wall time of the rules (Snakemake `benchmark:` files)", ""]
    for rule, group in table.groupby("rule"):
        lines.append(
            f"- {rule}: {count(int(group['jobs'].sum()), 'job')}, {group['total_s'].sum():.1f} s in total"
        )
    lines += [
        "",
        "| rule | dataset | jobs | total [s] | mean [s] | max [s] | max RSS [MB] |",
        "|---|---|---|---|---|---|---|",
    ]
    for _, r in table.iterrows():
        lines.append(
            f"| {r['rule']} | {r['dataset']} | {r['jobs']} | {r['total_s']:.1f} | {r['mean_s']:.1f} | "
            f"{r['max_s']:.1f} | {format_number(r['max_rss_mb'], 0)} |"
        )
    return table, "\n".join(lines) + "\n"


_ENVIRONMENT_PACKAGES = (
    "rejectopt",
    "numpy",
    "scipy",
    "pandas",
    "scikit-learn",
    "xgboost",
    "xgboost-cpu",
    "matplotlib",
    "snakemake",
    "snakemake-executor-plugin-slurm",
    "dlib-bin",
    "scikit-image",
)


def _installed_version(package: str) -> str:
    try:
        return version(package)
    except PackageNotFoundError:
        return "not installed"


def environment_markdown(config: dict, datasets: dict, locks=()) -> str:
    """Package versions, the lock they were installed from, dataset checksums and the run's
    configuration, as Markdown.

    ``datasets`` maps a dataset name to ``{"n", "d", "k", "xy_sha256",
    "raw": {file name: sha256}}``.

    .. versionchanged:: 0.5.2
       The page names each lock by its sha256 with the installed packages not at its versions
       (``locks``), and states the BLAS libraries, their kernels and whether they were pinned.

    Parameters
    ----------
    config : dict
        The run's configuration, printed as YAML.
    datasets : dict
        Dataset name -> its size, fingerprint and raw-file checksums (above).
    locks : sequence of path-like, default=()
        The lock files beside the workflow (``requirements/pipeline.txt`` and ``test.txt``): each is
        named with its sha256, and the installed packages not at their versions are listed, so the
        page says whether this run's numbers are the lock's. A path that does not exist is named so.

        .. versionadded:: 0.5.2

    Returns
    -------
    str
        The Markdown report: Python and package versions, the lock, datasets, configuration.
    """
    lines = [
        "# Environment of this run",
        "",
        f"Python {platform.python_version()} on {platform.platform()}",
        "",
    ]
    lines += ["| package | version |", "|---|---|"]
    lines += [f"| {p} | {_installed_version(p)} |" for p in _ENVIRONMENT_PACKAGES]
    lines += ["", f"BLAS: {_blas_kernels()}"]
    lines += _lock_lines(locks)
    lines += [
        "",
        "## Datasets",
        "",
        "| dataset | n | d | K | fingerprint of X, y (sha256) | raw files (sha256) |",
        "|---|---|---|---|---|---|",
    ]
    for name, info in sorted(datasets.items()):
        raw = "<br>".join(f"{f}: `{h}`" for f, h in sorted(info["raw"].items()))
        lines.append(
            f"| {name} | {info['n']} | {info['d']} | {info['k']} | `{info['xy_sha256']}` | {raw} |"
        )
    lines += [
        "",
        "## Configuration",
        "",
        "```yaml",
        yaml.safe_dump(config, sort_keys=True).rstrip(),
        "```",
    ]
    return "\n".join(lines) + "\n"


def _blas_kernels() -> str:
    """The BLAS libraries this process has loaded, with their version and kernels, and whether the
    kernels were pinned (``OPENBLAS_CORETYPE``, :func:`rejectopt.pipeline.config.blas_environment`):
    the same code gives other last bits with other kernels."""
    libraries = [
        f"{info['internal_api']} {info.get('version')} ({info.get('architecture')} kernels)"
        for info in threadpoolctl.threadpool_info()
        if info["user_api"] == "blas"
    ]
    pinned = os.environ.get("OPENBLAS_CORETYPE")
    return (", ".join(libraries) or "none loaded") + (
        f"; OPENBLAS_CORETYPE={pinned}"
        if pinned
        else "; OpenBLAS's kernels not pinned (its choice for this CPU)"
    )


def _lock_lines(locks) -> list[str]:
    """The page's lock section: each lock's sha256 and whether the installed packages are at its versions."""
    if not locks:
        return []
    lines = [
        "",
        "## Lock",
        "",
        "| lock | sha256 | installed packages not at its versions |",
        "|---|---|---|",
    ]
    for path in map(Path, locks):
        if not path.is_file():
            lines.append(f"| {path.name} | no such file: {path} | |")
            continue
        differences = lock_differences(path)
        lines.append(
            f"| {path.parent.name}/{path.name} | `{lock_sha256(path)}` | "
            f"{'none' if not differences else '<br>'.join(differences)} |"
        )
    return lines


def recorded_config(path) -> dict | None:
    """The configuration a run recorded in its ``environment.md`` (:func:`environment_markdown`), or None.

    None when the file is missing or holds no readable configuration block (a run stopped before
    its environment job, a file edited by hand).
    """
    try:
        text = Path(path).read_text()
    except OSError:
        return None
    block = re.search(r"^## Configuration\n\n```yaml\n(.*?)^```", text, re.S | re.M)
    try:
        config = yaml.safe_load(block.group(1)) if block else None
    except yaml.YAMLError:
        return None
    return config if isinstance(config, dict) else None


def _flow(value) -> str:
    """``value`` as Snakemake's ``--config key=value`` reads it back: YAML flow for lists and mappings,
    nothing for None (``key=`` is None to Snakemake, ``key=null`` the text "null")."""
    if isinstance(value, str):
        return value
    if value is None or isinstance(value, bool):
        return {None: "", True: "true", False: "false"}[value]
    if isinstance(value, (int, float)):
        return repr(value)
    return yaml.safe_dump(
        value, default_flow_style=True, width=float("inf"), sort_keys=False
    ).strip()


def _differences(recorded: dict, current: dict) -> dict:
    """The entries of ``recorded`` that ``current`` lacks or holds otherwise; within a mapping only the
    entries that differ, since ``--config`` merges a mapping into the config file's."""
    changed = {}
    for key, value in recorded.items():
        if key not in current or current[key] != value:
            inner = isinstance(value, dict) and isinstance(current.get(key), dict)
            changed[key] = _differences(value, current[key]) if inner else value
    return changed


def report_requested(argv) -> bool:
    """Whether the command line ``argv`` asks Snakemake for its report of outputs already there.

    ``--report`` (or ``--reporter``) without ``--report-after-run``, which runs the workflow first.

    Parameters
    ----------
    argv : sequence
        The command line, as ``sys.argv``.

    Returns
    -------
    bool
        True when Snakemake was asked only for the report.
    """
    argv = [str(a) for a in argv]
    asked = any(
        a in ("--report", "--reporter") or a.startswith(("--report=", "--reporter=")) for a in argv
    )
    return asked and "--report-after-run" not in argv


def report_config_error(targets, config: dict, environment_md, exists=os.path.exists) -> str | None:
    """Why ``snakemake --report`` cannot gather this configuration's outputs, in one line; None if it can.

    The report holds the outputs of the configuration it is given: run without the run's own
    ``--config``, it looks for the default configuration's outputs (all 22 datasets, the landmark
    experiment), finds them missing and fails only after one warning per file. The line names the
    first missing target and, from the configuration the run recorded in ``environment_md``, the
    ``--config`` that gives the report the run's own configuration back.

    Parameters
    ----------
    targets : iterable of path-like
        The workflow's final outputs for ``config`` (its rule ``all``).
    config : dict
        The configuration the report was given.
    environment_md : path-like
        The ``environment.md`` a finished run wrote (:func:`environment_markdown`).
    exists : callable, default os.path.exists
        Whether a path exists.

    Returns
    -------
    str or None
        The message, or None when every target exists.
    """
    missing = [str(t) for t in targets if not exists(t)]
    if not missing:
        return None
    what = (
        f"{missing[0]} is"
        if len(missing) == 1
        else f"{missing[0]} and {count(len(missing) - 1, 'more output')} are"
    )
    recorded = recorded_config(environment_md)
    if recorded is None:
        return (
            f"snakemake --report: {what} missing (this configuration's) and no {environment_md} records "
            "the configuration of a finished run: run the pipeline first, then the report with the same --config"
        )
    changed = _differences(recorded, config)
    if not changed:
        return (
            f"snakemake --report: {what} missing, of the configuration recorded in {environment_md}: the "
            "run did not finish; run the pipeline again with the same --config, then the report"
        )
    options = " ".join(f"{key}={shlex.quote(_flow(value))}" for key, value in changed.items())
    return (
        f"snakemake --report: {what} missing (this configuration's); the run in results/ had another "
        f"(recorded in {environment_md}): give the report the run's own, --config {options}"
    )
