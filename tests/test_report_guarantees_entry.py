"""report.html holds the guarantees experiment's table and figure: the experiment is in the default
run, so the outputs of its report rule are marked for ``snakemake --report``."""

from pathlib import Path

import pytest
from support import DEMO_MIRROR, REPO

pytestmark = pytest.mark.pipeline


def test_the_guarantees_table_and_figure_are_report_entries(tmp_path):
    from snakemake.api import ConfigSettings, ResourceSettings, SnakemakeApi, StorageSettings

    config = {"data_mirror": str(DEMO_MIRROR), "datasets": ["shuttle"], "n_splits": 1}
    with SnakemakeApi() as api:
        workflow = api.workflow(
            ResourceSettings(cores=1),
            ConfigSettings(config=config),
            StorageSettings(),
            snakefile=REPO / "Snakefile",
            workdir=tmp_path,
        )._workflow
        outputs = {str(f): f.flags for f in workflow.get_rule("guarantees_report").output}
    entries = {name: flags["report"] for name, flags in outputs.items() if "report" in flags}
    assert sorted(entries) == [
        "results/experiments/guarantees/guarantees.md",
        "results/experiments/guarantees/guarantees.png",
    ]
    for entry in entries.values():
        assert entry.category == "Guarantees"
        assert Path(entry.caption.get_path_or_uri(secret_free=True)).is_file()
