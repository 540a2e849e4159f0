# The paper's tables and figures, the comparison with its published numbers, timing, environment.
# One table per trained classifier, its columns the classifier's baseline and configured scores
# (rejectopt.pipeline.tables.table_specs reads the registries: a plugin score becomes a column).

from rejectopt.metrics import METRICS
from rejectopt.pipeline.tables import table_specs

TABLES = table_specs(config["scores"], PLAN.classifiers_run())
TABLE_OF = {spec.classifier: name for name, spec in TABLES.items()}

#: Every registered metric besides AuRC gets its own version of each table (and a CD diagram),
#: as does each of config summary_metrics (a summary column; higher_is_better turns its ranks).
OTHER_METRICS = [m for m in METRICS if m != "aurc"] + list(
    config.get("summary_metrics") or []
)
TABLE_METRICS = ["aurc", *OTHER_METRICS]
TARGETS += [
    table_path(t, m, ext)
    for t in TABLES
    for m in TABLE_METRICS
    for ext in ("csv", "md", "tex")
]
TARGETS += [
    f"results/figures/{fig}_{s.classifier}.png"
    for s in TABLES.values()
    for fig in ("cd", "improvement")
]
TARGETS += [f"results/figures/cd_{t}_{m}.png" for t in TABLES for m in OTHER_METRICS]
TARGETS += [
    f"results/figures/rc/{d}_{c}.png" for d in DATASETS for c in classifiers_of(d)
]
TARGETS += [
    "results/tables/rankings.md",
    "results/summary.csv",
    "results/tables/paper_comparison.md",
    "results/tables/timing.md",
    "results/tables/environment.md",
]


wildcard_constraints:
    table="|".join(TABLES) or "none",


# One job per table writes it under every metric (AuRC first): they all read results/summary.csv
# and change together, and one job per (table, metric) spent more starting than computing.
rule make_table:
    input:
        "results/summary.csv",
    output:
        csv=[
            report(
                table_path("{table}", m, "csv"),
                caption="../report/table.rst",
                category="Tables" if m == "aurc" else "Tables under other metrics",
                labels=(
                    {"table": "{table}"}
                    if m == "aurc"
                    else {"table": "{table}", "metric": m}
                ),
            )
            for m in TABLE_METRICS
        ],
        md=[table_path("{table}", m, "md") for m in TABLE_METRICS],
        tex=[table_path("{table}", m, "tex") for m in TABLE_METRICS],
        cd=[
            report(
                f"results/figures/cd_{{table}}_{m}.png",
                caption="../report/cd_diagram.rst",
                category="Tables under other metrics",
                labels={"table": "{table}", "metric": f"{m} (CD diagram)"},
            )
            for m in OTHER_METRICS
        ],
        cd_copies=[
            path
            for m in OTHER_METRICS
            for path in figure_copies(f"results/figures/cd_{{table}}_{m}.png")
        ],
    log:
        "logs/make_table/{table}.log",
    conda:
        "../../envs/rejectopt.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        spec=lambda w: TABLES[w.table],
        metrics=TABLE_METRICS,
        intervals=config.get("table_intervals", False),  # the AuRC table's only
        # the CD diagram of AuRC is plot_table's (named by classifier, as in the paper's figures)
        cd=lambda w, output: dict(zip(OTHER_METRICS, output.cd)),
        figure_formats=FIGURE_FORMATS,
    script:
        "../scripts/make_table.py"


rule rankings:
    input:
        "results/summary.csv",
    output:
        report(
            "results/tables/rankings.md",
            caption="../report/rankings.rst",
            category="Tables under other metrics",
            labels={"table": "rankings under every metric"},
        ),
    log:
        "logs/rankings.log",
    conda:
        "../../envs/rejectopt.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        specs=list(TABLES.values()),
        metrics=TABLE_METRICS,
    script:
        "../scripts/rankings.py"


rule plot_rc_curves:
    input:
        data="results/data/{dataset}/data.npz",
        splits="results/data/{dataset}/splits.npz",
        classifiers=lambda w: [
            classifier_file(w.dataset, w.classifier, k) for k in SPLITS
        ],
        scores=lambda w: (
            [learned_scores_file(w.dataset, w.classifier)]
            if scores_of(w.classifier)
            else []
        ),
    output:
        png=report(
            "results/figures/rc/{dataset}_{classifier}.png",
            caption="../report/rc_curves.rst",
            category="RC curves",
            labels={"dataset": "{dataset}", "classifier": "{classifier}"},
        ),
        copies=figure_copies("results/figures/rc/{dataset}_{classifier}.png"),
    log:
        "logs/plot_rc_curves/{dataset}_{classifier}.log",
    conda:
        "../../envs/rejectopt.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=5,
    params:
        task=lambda w: TASK[w.dataset],
        classifier_files=lambda w: {
            (w.classifier, k): classifier_file(w.dataset, w.classifier, k)
            for k in SPLITS
        },
        score_files=lambda w: {
            (w.classifier, s, k): learned_scores_file(w.dataset, w.classifier)
            for s in scores_of(w.classifier)
            for k in SPLITS
        },
        figure_formats=FIGURE_FORMATS,
    script:
        "../scripts/plot_rc_curves.py"


rule plot_table:
    input:
        "results/summary.csv",
    output:
        cd=report(
            "results/figures/cd_{classifier}.png",
            caption="../report/cd_diagram.rst",
            category="Figures",
            labels={"figure": "CD diagram, {classifier}"},
        ),
        improvement=report(
            "results/figures/improvement_{classifier}.png",
            caption="../report/improvement.rst",
            category="Figures",
            labels={"figure": "Improvement, {classifier}"},
        ),
        copies=figure_copies("results/figures/cd_{classifier}.png")
        + figure_copies("results/figures/improvement_{classifier}.png"),
    log:
        "logs/plot_table/{classifier}.log",
    conda:
        "../../envs/rejectopt.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        spec=lambda w: TABLES[TABLE_OF[w.classifier]],
        figure_formats=FIGURE_FORMATS,
    script:
        "../scripts/plot_table.py"


rule paper_comparison:
    input:
        summary="results/summary.csv",
        reference=REPO / "workflow/resources/reference_results.csv",
    output:
        csv=report(
            "results/tables/paper_comparison.csv",
            caption="../report/paper_comparison.rst",
            category="Paper comparison",
            labels={"table": "every cell"},
        ),
        md=report(
            "results/tables/paper_comparison.md",
            caption="../report/paper_comparison.rst",
            category="Paper comparison",
            labels={"table": "summary"},
        ),
    log:
        "logs/paper_comparison.log",
    conda:
        "../../envs/rejectopt.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        # the per-dataset summaries name the datasets run (+ 300w when landmarks.smk adds it)
        datasets_run=lambda w: [
            Path(s).parent.name
            for s in SUMMARIES
            if Path(s).parent.name not in PLAN.custom
        ],
        # extensions beyond the paper (xgb) and custom datasets have no published numbers
        specs=[s for s in TABLES.values() if not s.extension],
        # the paper's AuRC is eq. (27): under another convention the AuRC cells are not compared
        convention=config["aurc_convention"],
    script:
        "../scripts/paper_comparison.py"


rule timing:
    input:
        lambda w: BENCHMARKS,
    output:
        md="results/tables/timing.md",
        csv=report(
            "results/tables/timing.csv",
            caption="../report/timing.rst",
            category="Timing",
        ),
    log:
        "logs/timing.log",
    conda:
        "../../envs/rejectopt.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    script:
        "../scripts/timing.py"


rule environment:
    input:
        [f"results/data/{d}/data.npz" for d in DATASETS],
    output:
        report(
            "results/tables/environment.md",
            caption="../report/environment.rst",
            category="Environment",
        ),
    log:
        "logs/environment.log",
    conda:
        "../../envs/rejectopt.yaml"
    threads: 1
    resources:
        mem_mb=4000,
        runtime=10,
    params:
        datasets=DATASETS,
        raw_dir=RAW_DIR,
        custom=PLAN.custom,
        locks=[str(path) for path in LOCKS],
        lock_sha256=LOCK_SHA256,
    script:
        "../scripts/environment.py"
