"""Rule environment: package versions, dataset checksums and the configuration of this run."""

from _logging import log_to

from rejectopt.pipeline import custom_checksums, dataset_checksums, write_text
from rejectopt.pipeline.report import environment_markdown

log_to(snakemake.log[0])
custom = snakemake.params.custom
datasets = {
    name: (
        custom_checksums(custom[name], path)
        if name in custom
        else dataset_checksums(name, path, snakemake.params.raw_dir)
    )
    for name, path in zip(snakemake.params.datasets, snakemake.input)
}
write_text(
    environment_markdown(dict(snakemake.config), datasets, snakemake.params.locks),
    snakemake.output[0],
)
