"""Internal (the pipeline's report): provenance of a run: wall time per rule (``benchmark:`` records) and the environment."""

from __future__ import annotations

import platform
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import pandas as pd
import yaml

from ._format import count, format_number

__all__ = ["timing_table", "environment_markdown"]


def timing_table(benchmark_files) -> tuple[pd.DataFrame, str]:
    """Wall time per rule and dataset from Snakemake ``benchmark:`` files.

    ``benchmark_files`` are paths ``.../benchmarks/<rule>/<dataset>/.../<file>.tsv``.
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
        parts = path.parts[path.parts.index("benchmarks") + 1:]
        rule, dataset = parts[0], parts[1]
        records.append({"rule": rule, "dataset": dataset, "s": float(bench["s"].iloc[0]),
                        "max_rss": float(pd.to_numeric(bench["max_rss"], errors="coerce").iloc[0])})
    frame = pd.DataFrame(records, columns=["rule", "dataset", "s", "max_rss"])
    table = frame.groupby(["rule", "dataset"]).agg(
        jobs=("s", "size"), total_s=("s", "sum"), mean_s=("s", "mean"), max_s=("s", "max"), max_rss_mb=("max_rss", "max")
    ).reset_index()
    lines = ["# Wall time of the training rules (Snakemake `benchmark:` files)", ""]
    for rule, group in table.groupby("rule"):
        lines.append(f"- {rule}: {count(int(group['jobs'].sum()), 'job')}, {group['total_s'].sum():.1f} s in total")
    lines += ["", "| rule | dataset | jobs | total [s] | mean [s] | max [s] | max RSS [MB] |", "|---|---|---|---|---|---|---|"]
    for _, r in table.iterrows():
        lines.append(f"| {r['rule']} | {r['dataset']} | {r['jobs']} | {r['total_s']:.1f} | {r['mean_s']:.1f} | "
                     f"{r['max_s']:.1f} | {format_number(r['max_rss_mb'], 0)} |")
    return table, "\n".join(lines) + "\n"


_ENVIRONMENT_PACKAGES = (
    "rejectopt", "numpy", "scipy", "pandas", "scikit-learn", "xgboost", "xgboost-cpu", "matplotlib",
    "snakemake", "snakemake-executor-plugin-slurm", "dlib-bin", "scikit-image",
)


def _installed_version(package: str) -> str:
    try:
        return version(package)
    except PackageNotFoundError:
        return "not installed"


def environment_markdown(config: dict, datasets: dict) -> str:
    """Package versions, dataset checksums and the run's configuration, as Markdown.

    ``datasets`` maps a dataset name to ``{"n", "d", "k", "xy_sha256",
    "raw": {file name: sha256}}``.

    Parameters
    ----------
    config : dict
        The run's configuration, printed as YAML.
    datasets : dict
        Dataset name -> its size, fingerprint and raw-file checksums (above).

    Returns
    -------
    str
        The Markdown report: Python and package versions, datasets, configuration.
    """
    lines = ["# Environment of this run", "", f"Python {platform.python_version()} on {platform.platform()}", ""]
    lines += ["| package | version |", "|---|---|"]
    lines += [f"| {p} | {_installed_version(p)} |" for p in _ENVIRONMENT_PACKAGES]
    lines += ["", "## Datasets", "", "| dataset | n | d | K | fingerprint of X, y (sha256) | raw files (sha256) |",
              "|---|---|---|---|---|---|"]
    for name, info in sorted(datasets.items()):
        raw = "<br>".join(f"{f}: `{h}`" for f, h in sorted(info["raw"].items()))
        lines.append(f"| {name} | {info['n']} | {info['d']} | {info['k']} | `{info['xy_sha256']}` | {raw} |")
    lines += ["", "## Configuration", "", "```yaml", yaml.safe_dump(config, sort_keys=True).rstrip(), "```"]
    return "\n".join(lines) + "\n"
