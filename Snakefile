# rejectopt: reproduce Franc, Prusa & Voracek (JMLR 2023) end to end.
# This file only wires the stages; every rule lives in workflow/rules/<stage>.smk
# and every computation in the rejectopt library (src/rejectopt).

from pathlib import Path

from snakemake.utils import min_version

min_version("9.0")


# Resolved beside this file (not beside the main Snakefile: imported as a module, that is the
# user's), so the workflow also runs with --directory elsewhere. A module given its own `config:`
# skips this file.
configfile: Path(workflow.current_basedir.get_path_or_uri(secret_free=True)) / "config.yaml"


report: "workflow/report/workflow.rst"


include: "workflow/rules/common.smk"
include: "workflow/rules/data.smk"
include: "workflow/rules/classifiers.smk"
include: "workflow/rules/scores.smk"
include: "workflow/rules/evaluation.smk"
include: "workflow/rules/tables.smk"
include: "workflow/rules/ood.smk"
include: "workflow/rules/double_hinge.smk"
include: "workflow/rules/landmarks.smk"
include: "workflow/rules/experiments.smk"
include: "workflow/rules/report.smk"


rule all:
    default_target: True
    input:
        TARGETS,
