"""Scale: the pipeline on SYNTHETIC stand-ins of the 7 datasets the offline mirror lacks, at their real sizes.

Run: ``python benchmarks/bench_scale.py [--fractions 0.1 0.3 1] [--datasets covtype msd ...] [--cores 2]
[--records FILE] [--report-only] [--mirrored-benchmarks DIR] [--prepare-mirrored gpu metro ...] [--fit]``.
``--fit`` also prints the cost models of :data:`rejectopt.pipeline.resources.STAGES` fitted to the records
(the committed ones: ``benchmarks/bench_scale_records.csv``).

The stand-ins are synthetic (seeded): ``n x d`` standard-normal features and ``K`` classes of the
registry's shape (:data:`rejectopt.datasets.REGISTRY`) and the config's split ratios, labels from a
non-linear function of the features plus noise (argmax over K scores for classification, ``K``
equal-frequency bins of one score for ordinal). They measure cost, not accuracy. Each (fraction,
dataset) runs the whole pipeline (rule ``all``) on one split through the ``custom_datasets`` route, in
a fresh folder; codrna's and ijcnn's stand-ins also run the double-hinge experiment, as the real ones
do. Every job's Snakemake ``benchmark:`` record (CPU-s = user + sys, wall, peak RSS) and its declared
``mem_mb`` / ``runtime`` (read off Snakemake's job listing) are appended to ``--records`` (CSV), so
partial runs add up and ``--report-only`` prints the report from what is recorded.

Prints
------
* per (dataset, fraction, job): CPU-s, wall, peak RSS beside the declared ``mem_mb`` and ``runtime``
  and whether the job stayed inside them (``ok``: RSS <= mem_mb and wall <= runtime);
* per stage (rule, and classifier for the per-classifier rules) the growth exponent ``b`` of
  ``CPU-s ~ n^b``, least squares over the fractions measured;
* the estimate for the full run (22 datasets x 5 splits): the 7 stand-ins at 100 % (measured, else
  extrapolated from the largest fraction with the dataset's own exponent, else the stage's), each
  per-split stage times the number of splits, one job per split where the pipeline makes one
  (``rejectopt.pipeline.resources``), plus the 15 mirrored datasets from ``--mirrored-benchmarks`` (the
  ``results/benchmarks`` folder of a 5-split offline run, e.g. ``bench_end_to_end.py --keep``);
  CPU-hours and the critical path on 16 cores from a list scheduler (longest job first among the
  ready ones, a job's threads as its cores, dependencies prepare -> splits -> classifier -> scores ->
  summary).

Wall times measured on a shared machine are inflated by the other work (the report says so when the
load average was high); CPU-s much less. Snakemake's sampler is set to poll every second (its default
polls every 30 s after the first 15 s and missed up to 30 s of a job's CPU): a cross-check with
``getrusage`` agreed on long jobs (ijcnn XGBoost 6.02 against 6.06 CPU-s) and undercounted a 2-s job
by about 1 CPU-s and 40 MB, which the declarations' floors cover.
"""

import argparse
import csv
import math
import os
import re
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import numpy as np
import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))
# Imported once the path is set: the repository's own source, ahead of any installed rejectopt.
from rejectopt.classifiers import get_classifier  # noqa: E402
from rejectopt.datasets import REGISTRY  # noqa: E402
from rejectopt.pipeline.resources import (  # noqa: E402
    STAGES,
    job_resources,
    splits_per_job,
    work_size,
)

#: The datasets of Table 2 the offline mirror does not hold.
UNMIRRORED = ("covtype", "codrna", "msd", "sensorless", "facebook", "superconduct", "ijcnn")
FIELDS = (
    "fraction",
    "dataset",
    "n",
    "d",
    "k",
    "rule",
    "job",
    "threads",
    "cpu_s",
    "wall_s",
    "rss_mb",
    "mem_mb",
    "runtime_min",
    "load",
)
#: Rules whose job is per (dataset, classifier); their stage name carries the classifier.
PER_CLASSIFIER = ("train_classifier", "learn_score")


def stand_in(name, n, seed=0):
    """A seeded synthetic ``(X, y)`` with ``name``'s registry shape (d, K) and ``n`` rows."""
    spec = REGISTRY[name]
    d, k = spec.n_features, spec.n_classes
    rng = np.random.default_rng([seed, sum(map(ord, name))])
    X = rng.standard_normal((n, d))
    outputs = 1 if spec.task == "ordinal" else k
    W = rng.standard_normal((d, outputs)) / math.sqrt(d)
    V = rng.standard_normal((d, outputs)) / math.sqrt(d)
    scores = X @ W + np.sin(2.0 * X) @ V + 0.5 * rng.standard_normal((n, outputs))
    if spec.task == "ordinal":
        z = scores[:, 0]
        y = np.searchsorted(np.quantile(z, np.arange(1, k) / k), z, side="right")
    else:
        y = np.argmax(scores, axis=1)
    return X, y.astype(np.int64)


#: The one-split rules of costly jobs, recorded under the rule they stand in for (their benchmark
#: records lie in its folder, one per split).
SPLIT_RULES = {
    "train_classifier_split": "train_classifier",
    "double_hinge_one_split": "double_hinge_split",
}


def parse_jobs(output):
    """{benchmark path or rule name: (rule, threads, mem_mb, runtime)} from Snakemake's job listing.

    Jobs without a ``benchmark:`` record are keyed by their rule (one per rule in a stand-in run);
    a one-split job (:data:`SPLIT_RULES`) is recorded under the rule it stands in for.
    """
    jobs = {}
    for block in re.split(r"\n(?=(?:local)?rule \w+:)", output):
        rule = re.match(r"(?:local)?rule (\w+):", block)
        bench = re.search(r"\n\s*benchmark: (\S+)", block)
        res = re.search(r"\n\s*resources: (.*)", block)
        if not (rule and res):
            continue
        values = dict(item.split("=", 1) for item in res.group(1).split(", ") if "=" in item)
        threads = re.search(r"\n\s*threads: (\d+)", block)
        jobs[bench.group(1) if bench else rule.group(1)] = (
            SPLIT_RULES.get(rule.group(1), rule.group(1)),
            int(threads.group(1)) if threads else 1,
            int(values.get("mem_mb", 0)),
            int(values.get("runtime", 0)),
        )
    return jobs


#: The library call of each per-dataset rule that has no ``benchmark:`` record, replayed in a
#: process of its own after the run (CPU-s and peak RSS from ``getrusage``).
REPLAYED = {
    "prepare_dataset": "from rejectopt.datasets._custom import prepare_custom; "
    "from rejectopt.pipeline.config import plan_run; "
    "import yaml; plan = plan_run(yaml.safe_load(open({base!r})) | "
    "yaml.safe_load(open('bench_config.yaml'))); from rejectopt.model import FEATURE_LIMIT; "
    "prepare_custom(plan.custom['{name}'], 'replay.npz', feature_limit=FEATURE_LIMIT)",
    "make_splits": "from rejectopt.datasets import load_prepared; from rejectopt.splits import make_splits; "
    "_, y = load_prepared('results/data/{name}/data.npz'); "
    "make_splits(y, ratios={ratios}, n_splits=1, seed=0, dataset='{name}')",
    "summarize_dataset": None,  # replayed through the script's own call, see replay()
}


def replay(workdir, rule, name, ratios):
    """(CPU-s, wall s, peak RSS MB) of ``rule``'s library call on the stand-in, in a fresh process."""
    if rule == "summarize_dataset":
        code = (
            "import glob; from rejectopt.pipeline.experiments.paper import summarize_dataset; "
            "from rejectopt.pipeline.config import plan_run; import yaml; "
            f"cfg = yaml.safe_load(open({str(REPO / 'config.yaml')!r})) | "
            "yaml.safe_load(open('bench_config.yaml')); plan = plan_run(cfg); "
            f"cs = {{(c, 0): f'results/classifiers/{name}/{{c}}/split_0.npz' for c in plan.classifiers_of('{name}')}}; "
            f"ss = {{(c, s, 0): f'results/scores/{name}/{{c}}.npz' for c in plan.classifiers_of('{name}') "
            "for s in plan.scores_of(c)}; "
            f"summarize_dataset('{name}', plan.task['{name}'], 'results/data/{name}/data.npz', "
            f"'results/data/{name}/splits.npz', cs, ss, cfg.get('aurc_convention', 'paper'))"
        )
    else:
        code = REPLAYED[rule].format(name=name, ratios=list(ratios), base=str(REPO / "config.yaml"))
    probe = (
        "import resource, subprocess, sys, time; t = time.perf_counter(); "
        "subprocess.run([sys.executable, '-c', sys.argv[1]], check=True); w = time.perf_counter() - t; "
        "u = resource.getrusage(resource.RUSAGE_CHILDREN); "
        "print(u.ru_utime + u.ru_stime, w, u.ru_maxrss / 1024)"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe, code],
        check=False,
        cwd=workdir,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO / "src")},
    )
    if out.returncode != 0:
        raise SystemExit(f"replaying {rule} on {name} failed:\n{out.stderr[-3000:]}")
    return tuple(float(v) for v in out.stdout.split())


#: Snakemake with its benchmark sampler polling every second: by default it polls every 0.5 s for
#: 15 s and then every 30 s, so a job's last 30 s of CPU and any short peak of memory went unseen.
SNAKEMAKE_SAMPLING_1S = (
    "import sys; import snakemake.benchmark as b; "
    "b.BenchmarkTimer.__init__.__defaults__ = (1,); b.benchmarked.__defaults__ = (None, None, 1); "
    "from snakemake.cli import main; sys.argv[0] = 'snakemake'; main()"
)


def run_one(name, fraction, cores, records, keep):
    spec = REGISTRY[name]
    n = max(round(fraction * spec.n_examples), 200)
    if keep is not None:
        Path(keep).mkdir(parents=True, exist_ok=True)
    workdir = Path(tempfile.mkdtemp(prefix=f"scale_{name}_{fraction:g}_", dir=keep))
    X, y = stand_in(name, n)
    data = workdir / f"{name}_synthetic.npz"
    np.savez(data, X=X, y=y)
    del X, y
    base = yaml.safe_load((REPO / "config.yaml").read_text())
    ratios = base["split_ratios"].get(name, base["split_ratios"]["default"])
    custom = f"{name}_synthetic"
    binary = spec.task == "classification" and spec.n_classes == 2
    config = {
        "datasets": [custom],
        "n_splits": 1,
        "data_mirror": None,
        # n_classes sizes the jobs (rejectopt.pipeline.resources) and is checked at planning for the
        # double-hinge experiment, which is binary
        "custom_datasets": {
            custom: {"path": str(data), "task": spec.task, "n_classes": spec.n_classes}
        },
        "split_ratios": {"default": base["split_ratios"]["default"], custom: ratios},
        "landmarks": {**base["landmarks"], "enabled": False},
        "ood": {**base["ood"], "datasets": []},
        "double_hinge": {
            **base["double_hinge"],
            "datasets": [custom] if binary and name in base["double_hinge"]["datasets"] else [],
        },
    }
    config_file = workdir / "bench_config.yaml"
    config_file.write_text(yaml.safe_dump(config))
    cmd = [
        sys.executable,
        "-c",
        SNAKEMAKE_SAMPLING_1S,
        "--snakefile",
        str(REPO / "Snakefile"),
        "--directory",
        str(workdir),
        "--configfile",
        str(config_file),
        "--cores",
        str(cores),
        "--printshellcmds",
        f"results/datasets/{custom}/summary.csv",
        *(
            [f"results/double_hinge/{custom}/split_0.csv"]
            if config["double_hinge"]["datasets"]
            else []
        ),
    ]
    start = time.perf_counter()
    proc = subprocess.run(cmd, check=False, capture_output=True, text=True)
    wall = time.perf_counter() - start
    (workdir / "snakemake.out").write_text(proc.stdout + proc.stderr)
    if proc.returncode != 0:
        print((proc.stdout + proc.stderr)[-4000:])
        raise SystemExit(
            f"{name} at {fraction:g}: snakemake failed (exit {proc.returncode}); log in "
            f"{workdir / 'snakemake.out'}"
        )
    load = os.getloadavg()[0]
    jobs = parse_jobs(proc.stdout + proc.stderr)
    rows = []
    for bench, (rule, threads, mem_mb, runtime) in jobs.items():
        if bench in REPLAYED:
            cpu, wall_s, rss = replay(workdir, rule, custom, ratios)
            record, job = {"cpu_time": cpu, "s": wall_s, "max_rss": rss}, name
        elif bench.startswith("results/benchmarks/"):
            with open(workdir / bench) as handle:
                record = next(csv.DictReader(handle, delimiter="\t"))
            job = (
                Path(bench)
                .relative_to(Path("results/benchmarks") / rule)
                .with_suffix("")
                .as_posix()
            )
            job = job.replace(custom, name)
        else:
            continue
        rows.append(
            {
                "fraction": fraction,
                "dataset": name,
                "n": n,
                "d": spec.n_features,
                "k": spec.n_classes,
                "rule": rule,
                "job": job,
                "threads": threads,
                "cpu_s": _num(record.get("cpu_time")),
                "wall_s": _num(record["s"]),
                "rss_mb": _num(record.get("max_rss")),
                "mem_mb": mem_mb,
                "runtime_min": runtime,
                "load": round(load, 2),
            }
        )
    new = not records.exists()
    with open(records, "a", newline="") as handle:
        writer = csv.DictWriter(handle, FIELDS)
        if new:
            writer.writeheader()
        writer.writerows(rows)
    print(
        f"{name} (synthetic) at {fraction:g} (n={n}): {len(rows)} jobs in {wall:.0f} s wall, load {load:.1f}",
        flush=True,
    )
    if keep is None:
        subprocess.run(["rm", "-rf", str(workdir)], check=False)


def replay_prepare_mirrored(names, mirror, records):
    """prepare_dataset's library call on mirrored datasets at their real size (the real parsers, which
    the NPZ stand-ins bypass), each in a fresh process; appended to ``records`` as fraction 1."""
    rows = []
    for name in names:
        spec = REGISTRY[name]
        with tempfile.TemporaryDirectory() as work:
            code = (
                f"from rejectopt.datasets import prepare_dataset; "
                f"prepare_dataset({name!r}, 'raw', 'data.npz', mirror={str(mirror)!r}, allow_download=False)"
            )
            probe = (
                "import resource, subprocess, sys, time; t = time.perf_counter(); "
                "subprocess.run([sys.executable, '-c', sys.argv[1]], check=True); w = time.perf_counter() - t; "
                "u = resource.getrusage(resource.RUSAGE_CHILDREN); "
                "print(u.ru_utime + u.ru_stime, w, u.ru_maxrss / 1024)"
            )
            out = subprocess.run(
                [sys.executable, "-c", probe, code],
                check=True,
                cwd=work,
                capture_output=True,
                text=True,
                env={**os.environ, "PYTHONPATH": str(REPO / "src")},
            )
        cpu, wall, rss = (float(v) for v in out.stdout.split())
        rows.append(
            {
                "fraction": 1.0,
                "dataset": name,
                "n": spec.n_examples,
                "d": spec.n_features,
                "k": spec.n_classes,
                "rule": "prepare_dataset",
                "job": name,
                "threads": 1,
                "cpu_s": cpu,
                "wall_s": wall,
                "rss_mb": rss,
                "mem_mb": 0,
                "runtime_min": 0,
                "load": round(os.getloadavg()[0], 2),
            }
        )
        print(
            f"{name} (mirrored, real parser): prepare_dataset {cpu:.1f} CPU-s, {rss:.0f} MB",
            flush=True,
        )
    new = not records.exists()
    with open(records, "a", newline="") as handle:
        writer = csv.DictWriter(handle, FIELDS)
        if new:
            writer.writeheader()
        writer.writerows(rows)


def _num(text):
    return float(text) if text not in (None, "", "NA", "-") else float("nan")


def read_records(path):
    with open(path) as handle:
        rows = list(csv.DictReader(handle))
    for row in rows:
        for key in ("fraction", "cpu_s", "wall_s", "rss_mb", "load"):
            row[key] = float(row[key])
        for key in ("n", "d", "k", "threads", "mem_mb", "runtime_min"):
            row[key] = int(row[key])
    latest = {}
    for (
        row
    ) in rows:  # a rerun of the same (fraction, dataset, rule, job) replaces the earlier record
        latest[(row["fraction"], row["dataset"], row["rule"], row["job"])] = row
    return list(latest.values())


def stage(row):
    """Stage of a job: its rule, with the classifier for the per-classifier rules."""
    if row["rule"] in PER_CLASSIFIER:
        return f"{row['rule']}/{row['job'].split('/')[1]}"
    return row["rule"]


def exponent(points):
    """Least-squares slope of log(cpu) on log(n); None with fewer than two sizes."""
    points = [(n, c) for n, c in points if c > 0]
    if len({n for n, _ in points}) < 2:
        return None
    x = np.log([n for n, _ in points])
    yv = np.log([c for _, c in points])
    return float(np.polyfit(x, yv, 1)[0])


def report(rows, n_splits, cores, mirrored):
    print("\nStand-ins are SYNTHETIC (seeded, registry n/d/K and split ratios); one split per run.")
    loaded = max((r["load"] for r in rows), default=0)
    if loaded > 2:
        print(
            f"Measured under load (1-min load average up to {loaded:.1f}): wall times and CPU-s are inflated."
        )
    print(
        "\nDeclared: what the run's jobs declared (Snakemake's listing) / what rejectopt.pipeline.resources declares "
        "now for the same n, d, K; fits: RSS <= mem_mb and CPU-s / threads <= runtime (the library's)."
    )
    print(
        f"\n{'dataset':<13}{'frac':>5}{'n':>8}  {'job':<34}{'CPU-s':>8}{'wall':>8}{'RSS MB':>8}"
        f"{'mem_mb':>13}{'rt min':>10}  fits"
    )
    for r in sorted(rows, key=lambda r: (r["dataset"], r["fraction"], -r["cpu_s"])):
        now = declared_now(r)
        fits = (
            "ok"
            if r["rss_mb"] <= now["mem_mb"] and r["cpu_s"] / r["threads"] <= 60 * now["runtime"]
            else "OVER"
        )
        print(
            f"{r['dataset']:<13}{r['fraction']:>5g}{r['n']:>8}  {r['rule'] + '/' + r['job']:<34.34}"
            f"{r['cpu_s']:>8.1f}{r['wall_s']:>8.1f}{r['rss_mb']:>8.0f}{r['mem_mb']:>7}/{now['mem_mb']:<5}"
            f"{r['runtime_min']:>5}/{now['runtime']:<4}  {fits}"
        )

    by_stage = defaultdict(lambda: defaultdict(list))
    for r in rows:
        by_stage[stage(r)][r["dataset"]].append((r["n"], r["cpu_s"], r["rss_mb"]))
    print(f"\n{'stage':<28}{'CPU-s ~ n^b':>12}{'RSS ~ n^b':>11}   per dataset (CPU)")
    pooled = {}
    for name in sorted(by_stage):
        per = {d: exponent([(n, c) for n, c, _ in pts]) for d, pts in by_stage[name].items()}
        fits = [b for b in per.values() if b is not None]
        mem = [exponent([(n, m) for n, _, m in pts]) for pts in by_stage[name].values()]
        mem = [b for b in mem if b is not None]
        pooled[name] = float(np.median(fits)) if fits else None
        text = ", ".join(f"{d} {b:.2f}" for d, b in sorted(per.items()) if b is not None)
        print(
            f"{name:<28}{_fmt(pooled[name]):>12}{_fmt(float(np.median(mem)) if mem else None):>11}   {text}"
        )

    jobs = full_run_jobs(rows, by_stage, pooled, n_splits)
    stand_in_cpu = sum(j["cpu"] * j["threads_used"] for j in jobs)
    if mirrored:
        jobs += mirrored_jobs(mirrored)
    total = sum(j["cpu"] * j["threads_used"] for j in jobs)  # a job's "cpu" is its CPU-s per thread
    makespan, path = schedule(jobs, cores)
    longest = max(jobs, key=lambda j: j["cpu"])
    print(
        f"\nFull run estimate ({n_splits} splits): {len(jobs)} jobs, {total / 3600:.2f} CPU-hours "
        f"(stand-ins {stand_in_cpu / 3600:.2f})"
        + ("" if mirrored else "; mirrored datasets not included (--mirrored-benchmarks)")
    )
    print(
        f"critical path on {cores} cores (list scheduler, longest ready job first): {makespan / 60:.1f} min; "
        f"longest job {longest['name']} {longest['cpu'] / 60:.1f} min"
    )
    print("  chain: " + " -> ".join(f"{j} ({c / 60:.1f} min)" for j, c in path))


def declared_now(row, splits=1):
    """What rejectopt.pipeline.resources declares for ``row``'s job at its n, d, K (one split)."""
    classifier = row["job"].split("/")[1] if row["rule"] in PER_CLASSIFIER else None
    return job_resources(
        row["rule"],
        row["n"],
        row["d"],
        row["k"],
        classifier=classifier,
        splits=splits,
        threads=row["threads"],
    )


def _fmt(value):
    return "-" if value is None else f"{value:.2f}"


def full_run_jobs(rows, by_stage, pooled, n_splits):
    """The full run's jobs of the stand-ins: CPU-s at 100 % of n, the split jobs as the pipeline makes them.

    A one-split job's record (``job`` ending in ``/split_k``) stands for every split of its job.
    The records of mirrored datasets (kept for fitting the cost models) are left out: their jobs come
    from ``--mirrored-benchmarks``.
    """
    best = {}
    for r in rows:
        if r["dataset"] not in UNMIRRORED:
            continue
        key = (r["dataset"], r["rule"], re.sub(r"/split_\d+$", "", r["job"]))
        if key not in best or r["fraction"] > best[key]["fraction"]:
            best[key] = r
    jobs = []
    for (name, rule, job), r in best.items():
        spec = REGISTRY[name]
        cpu = r["cpu_s"]
        if r["fraction"] < 1:
            own = exponent([(n, c) for n, c, _ in by_stage[stage(r)][name]])
            b = own if own is not None else pooled.get(stage(r)) or 1.0
            cpu *= (1 / r["fraction"]) ** b
        classifier = job.split("/")[1] if rule in PER_CLASSIFIER else None
        threads = r["threads"]
        per_split = rule in PER_SPLIT
        if (
            rule in SPLIT_RULES.values()
            and splits_per_job(
                classifier, spec.n_examples, spec.n_features, spec.n_classes, n_splits, stage=rule
            )
            == 1
        ):
            parts = [(f"{job}/split_{k}", cpu) for k in range(n_splits)]
        else:
            parts = [(job, cpu * n_splits if per_split else cpu)]
        for label, cost in parts:
            jobs.append(
                {
                    "name": f"{rule}:{label}",
                    "rule": rule,
                    "dataset": name,
                    "classifier": classifier,
                    "cpu": cost / max(threads, 1),
                    "threads": threads,
                    "threads_used": max(threads, 1),
                }
            )
    return jobs


def mirrored_jobs(folder):
    """Jobs of a real offline run from its ``results/benchmarks`` folder (CPU-s per job)."""
    jobs = []
    for path in Path(folder).rglob("*.tsv"):
        parts = path.relative_to(folder).with_suffix("").parts
        rule = parts[0]
        with open(path) as handle:
            record = next(csv.DictReader(handle, delimiter="\t"))
        classifier = parts[2] if rule in PER_CLASSIFIER and len(parts) > 2 else None
        threads = (
            get_classifier(classifier).threads if rule == "train_classifier" and classifier else 1
        )
        jobs.append(
            {
                "name": f"{rule}:{'/'.join(parts[1:])}",
                "rule": rule,
                "dataset": parts[1] if len(parts) > 1 else "",
                "classifier": classifier,
                "cpu": _num(record.get("cpu_time")) / threads,
                "threads": threads,
                "threads_used": threads,
                "rss": _num(record.get("max_rss")),
            }
        )
    return jobs


ORDER = {
    "prepare_dataset": 0,
    "make_splits": 1,
    "train_classifier": 2,
    "double_hinge_split": 3,
    "ood_split": 3,
    "learn_score": 3,
}


def schedule(jobs, cores):
    """Makespan of a list schedule (longest ready job first) and the chain that ends last."""
    level = {j["name"]: ORDER.get(j["rule"], 4) for j in jobs}

    def deps(job):
        lv = level[job["name"]]
        out = []
        for other in jobs:
            if other["dataset"] != job["dataset"] or level[other["name"]] >= lv:
                continue
            if (
                job["rule"] == "learn_score"
                and other["rule"] == "train_classifier"
                and other["classifier"] != job["classifier"]
            ):
                continue
            out.append(other["name"])
        return out

    dependencies = {j["name"]: deps(j) for j in jobs}
    by_name = {j["name"]: j for j in jobs}
    done, running, t, free = {}, [], 0.0, cores
    waiting = set(by_name)
    via = {}
    while waiting or running:
        ready = [by_name[n] for n in waiting if all(d in done for d in dependencies[n])]
        ready.sort(key=lambda j: -j["cpu"])
        for job in ready:
            need = min(job["threads"], cores)
            if need <= free:
                free -= need
                start = max([t] + [done[d] for d in dependencies[job["name"]]])
                running.append((start + job["cpu"], job["name"], need))
                before = max(dependencies[job["name"]], key=lambda d: done[d], default=None)
                via[job["name"]] = before
                waiting.discard(job["name"])
        running.sort()
        end, name, need = running.pop(0)
        t, free = end, free + need
        done[name] = end
    last = max(done, key=done.get)
    chain = []
    while last is not None:
        chain.append((last, by_name[last]["cpu"]))
        last = via.get(last)
    return max(done.values()), chain[::-1]


#: Rules whose recorded CPU-s cover every split of the job (a mirrored 5-split run's records are
#: divided by the splits to fit a per-split cost).
PER_SPLIT = (
    "train_classifier",
    "learn_score",
    "double_hinge_split",
    "ood_split",
    "summarize_dataset",
)


def fit_points(rows, mirrored, n_splits):
    """{stage: [(n, d, K, CPU-s of one split, peak RSS MB)]} from the stand-in records and a mirrored run."""
    points = defaultdict(list)
    for r in rows:
        points[stage(r)].append((r["n"], r["d"], r["k"], r["cpu_s"], r["rss_mb"]))
    for job in mirrored_jobs(mirrored) if mirrored else []:
        spec = REGISTRY.get(job["dataset"])
        if spec is None:
            continue
        key = f"{job['rule']}/{job['classifier']}" if job["rule"] in PER_CLASSIFIER else job["rule"]
        cpu = job["cpu"] * job["threads"] / (n_splits if job["rule"] in PER_SPLIT else 1)
        points[key].append((spec.n_examples, spec.n_features, spec.n_classes, cpu, job["rss"]))
    return points


def fit_stage(points, size="ndk"):
    """``StageCost`` fields fitted as upper envelopes of the points.

    CPU-s of one split ``c0 + a z^b`` (z: the stage's work size, ``rejectopt.pipeline.resources.work_size``;
    ``c0`` the start-up, 0.8 x the cheapest job): ``a`` and ``b`` (0.3 to 1) by least squares on
    log CPU-s over a grid of ``b``, then ``c0`` and ``a`` scaled
    by one factor until no point lies above. RSS ``m0 + m1 n d / 1e6 + m2 n K / 1e6`` by non-negative
    least squares, ``m0`` raised until no point lies above.
    """
    from scipy.optimize import nnls  # scipy: only the fit needs it

    z = np.array([work_size(size, n, d, k) for n, d, k, _, _ in points])
    cpu = np.array([c for *_, c, _ in points])
    c0 = 0.8 * float(cpu.min())
    rest = np.maximum(cpu - c0, 1e-3)
    best = None
    for b in np.arange(0.3, 1.001, 0.05):
        a = float(np.exp(np.mean(np.log(rest) - b * np.log(z))))
        err = float(np.sum((np.log(cpu) - np.log(c0 + a * z**b)) ** 2))
        if best is None or err < best[0]:
            best = (err, a, float(b))
    _, a, b = best
    factor = max(1.0, float(np.max(cpu / (c0 + a * z**b))))
    A = np.array([[1.0, n * d / 1e6, n * k / 1e6] for n, d, k, _, _ in points])
    rss = np.array([m for *_, m in points])
    coef, _ = nnls(A, rss)
    coef[0] += max(0.0, float(np.max(rss - A @ coef)))
    return {
        "c0": c0 * factor,
        "a": a * factor,
        "b": b,
        "m0": float(coef[0]),
        "m1": float(coef[1]),
        "m2": float(coef[2]),
    }


def print_fit(points):
    print("\n# Fitted cost models (paste into rejectopt.pipeline.resources.STAGES):")
    for name in sorted(points):
        size = STAGES[name].size if name in STAGES else "ndk"
        f = fit_stage(points[name], size)
        print(
            f'    "{name}": StageCost(c0={f["c0"]:.3g}, a={f["a"]:.4g}, b={f["b"]:.3g}, m0={f["m0"]:.0f}, '
            f'm1={f["m1"]:.3g}, m2={f["m2"]:.3g}, size="{size}"),  # {len(points[name])} jobs'
        )


def main(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--fractions",
        type=float,
        nargs="*",
        default=[0.1, 0.3, 1.0],
        help="fractions of n to run the stand-ins at (none: only --prepare-mirrored)",
    )
    parser.add_argument("--datasets", nargs="+", choices=UNMIRRORED, default=list(UNMIRRORED))
    parser.add_argument("--cores", type=int, default=2, help="cores of each stand-in run")
    parser.add_argument(
        "--records",
        type=Path,
        default=REPO / "benchmarks" / "bench_scale_records.csv",
        help="CSV the measurements are appended to (and the report read from); default: the "
        "committed records",
    )
    parser.add_argument(
        "--report-only", action="store_true", help="print the report from --records, run nothing"
    )
    parser.add_argument("--keep", help="keep the run folders under this folder")
    parser.add_argument("--splits", type=int, default=5, help="splits of the estimated full run")
    parser.add_argument("--estimate-cores", type=int, default=16)
    parser.add_argument(
        "--mirrored-benchmarks",
        type=Path,
        help="results/benchmarks of a 5-split offline run of the 15 mirrored datasets",
    )
    parser.add_argument(
        "--fit", action="store_true", help="also print the cost models fitted to the records"
    )
    parser.add_argument(
        "--prepare-mirrored",
        nargs="*",
        default=[],
        metavar="DATASET",
        help="also replay prepare_dataset on these mirrored datasets (real parsers, real size)",
    )
    parser.add_argument("--mirror", type=Path, default=os.environ.get("REJECTOPT_DATA_MIRROR"))
    args = parser.parse_args(argv)
    if args.prepare_mirrored and args.mirror is None:
        parser.error(
            "--prepare-mirrored needs --mirror or REJECTOPT_DATA_MIRROR (a folder of the official raw files)"
        )
    if args.prepare_mirrored and not args.report_only:
        replay_prepare_mirrored(args.prepare_mirrored, args.mirror, args.records)
    if not args.report_only:
        for fraction in sorted(args.fractions):
            for name in args.datasets:
                run_one(name, fraction, args.cores, args.records, args.keep)
    if not args.records.exists():
        parser.error(
            f"--records {args.records}: no measurements recorded yet; run without --report-only"
        )
    rows = [
        r
        for r in read_records(args.records)
        if r["dataset"] in args.datasets or r["dataset"] not in UNMIRRORED
    ]
    report(rows, args.splits, args.estimate_cores, args.mirrored_benchmarks)
    if args.fit:
        print_fit(fit_points(rows, args.mirrored_benchmarks, args.splits))
    return 0


if __name__ == "__main__":
    sys.exit(main())
