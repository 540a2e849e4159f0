"""Rule timing: wall time per rule and dataset from the benchmark: records, and every fit that
stopped at its iteration cap."""

from pathlib import Path

from _logging import log_to

from rejectopt.pipeline import CAP_MESSAGE, write_csv, write_text
from rejectopt.pipeline.report import timing_table

log_to(snakemake.log[0])
table, markdown = timing_table(snakemake.input)
# each benchmark record results/benchmarks/<rule>/<job>.tsv has its job's log at logs/<rule>/<job>.log
capped = []
for record in map(Path, snakemake.input):
    job_log = Path(
        "logs", *record.with_suffix(".log").parts[record.parts.index("benchmarks") + 1 :]
    )
    if job_log.is_file():
        capped += [
            f"- `{job_log}`: {line.split(' WARNING ', 1)[-1].strip()}"
            for line in job_log.read_text().splitlines()
            if CAP_MESSAGE in line
        ]
markdown += (
    "\n## Fits that stopped at their iteration cap\n\n"
    + ("\n".join(capped) if capped else "None.")
    + "\n"
)
write_csv(table, snakemake.output.csv)
write_text(markdown, snakemake.output.md)
