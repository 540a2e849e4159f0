# The paper's tables and figures, the comparison with its published numbers, timing.



for _table, _spec in TABLES.items():

    rule:
        name:
            f"make_{_table}"
        input:
            "results/summary.csv",
        output:
            csv=report(
                f"results/tables/{_table}.csv",
                caption="../report/table.rst",
                category="Tables",
                labels={"table": _spec.title},
            ),
            md=f"results/tables/{_table}.md",
            tex=f"results/tables/{_table}.tex",
            cd=report(
                f"results/figures/cd_{_spec.classifier}.png",
                caption="../report/cd_diagram.rst",
                category="Figures",
                labels={"figure": f"CD diagram, {_spec.title}"},
            ),
            improvement=report(
                f"results/figures/improvement_{_spec.classifier}.png",
                caption="../report/improvement.rst",
                category="Figures",
                labels={"figure": f"Improvement, {_spec.title}"},
            ),
        params:
            table=_table,
        conda:
            "../../envs/rejectopt.yaml"
        threads: 1
        resources:
            mem_mb=1000,
            runtime=5,
        log:
            f"logs/make_table/{_table}.log",
        script:
            "../scripts/make_table.py"


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
    params:
        datasets_run=lambda w: DATASETS + (["300w"] if landmark_summaries() else []),  # + landmarks.smk
        # extensions beyond the paper (xgb) have no published numbers: left out of the comparison
        tables=[
            t
            for t, s in TABLES.items()
            if not s.extension and s.classifier in {c for d in DATASETS for c in classifiers_of(d)}
        ],
    conda:
        "../../envs/rejectopt.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    log:
        "logs/paper_comparison.log",
    script:
        "../scripts/paper_comparison.py"


rule timing:
    input:
        lambda w: benchmark_files(),
    output:
        md="results/tables/timing.md",
        csv=report("results/tables/timing.csv", caption="../report/timing.rst", category="Timing"),
    conda:
        "../../envs/rejectopt.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    log:
        "logs/timing.log",
    script:
        "../scripts/timing.py"


rule environment:
    input:
        [f"results/data/{d}/data.npz" for d in DATASETS],
    output:
        report("results/tables/environment.md", caption="../report/environment.rst", category="Environment"),
    params:
        datasets=DATASETS,
        raw_dir=RAW_DIR,
    conda:
        "../../envs/rejectopt.yaml"
    threads: 1
    resources:
        mem_mb=4000,
        runtime=10,
    log:
        "logs/environment.log",
    script:
        "../scripts/environment.py"
