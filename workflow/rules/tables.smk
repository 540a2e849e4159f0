# The paper's tables and figures, the comparison with its published numbers, timing.



for _table, _spec in TABLES.items():

    rule:
        name:
            f"make_{_table}"
        input:
            "results/summary.csv",
        output:
            csv=f"results/tables/{_table}.csv",
            md=f"results/tables/{_table}.md",
            tex=f"results/tables/{_table}.tex",
            cd=f"results/figures/cd_{_spec.classifier}.png",
            improvement=f"results/figures/improvement_{_spec.classifier}.png",
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
        csv="results/tables/paper_comparison.csv",
        md="results/tables/paper_comparison.md",
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
        csv="results/tables/timing.csv",
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
