# The paper's tables and figures, the comparison with its published numbers, timing, environment.
# One table per trained classifier, its columns the classifier's baseline and configured scores
# (rejectopt.report.table_specs reads the registries: a plugin score becomes a column).

from rejectopt.report import table_specs

TABLES = table_specs(config["scores"], PLAN.classifiers_run())
TABLE_OF = {spec.classifier: name for name, spec in TABLES.items()}

TARGETS += [f"results/tables/{t}.{ext}" for t in TABLES for ext in ("csv", "md", "tex")]
TARGETS += [
    f"results/figures/{fig}_{s.classifier}.png"
    for s in TABLES.values()
    for fig in ("cd", "improvement")
]
TARGETS += [
    "results/summary.csv",
    "results/tables/paper_comparison.md",
    "results/tables/timing.md",
    "results/tables/environment.md",
]


wildcard_constraints:
    table="|".join(TABLES) or "none",


rule make_table:
    input:
        "results/summary.csv",
    output:
        csv=report(
            "results/tables/{table}.csv",
            caption="../report/table.rst",
            category="Tables",
            labels={"table": "{table}"},
        ),
        md="results/tables/{table}.md",
        tex="results/tables/{table}.tex",
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
    script:
        "../scripts/make_table.py"


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
    script:
        "../scripts/environment.py"
