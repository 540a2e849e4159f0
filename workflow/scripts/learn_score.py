"""Rule learn_score: learn the uncertainty score on Trn2, select C on Val2 by AuRC, score Tst."""

from threadpoolctl import threadpool_limits

from _logging import log_to

from rejectopt.config import load_plugins
from rejectopt.experiment import run_score

log_to(snakemake.log[0])
load_plugins(snakemake.params.plugins)  # a plugin score must be registered in this process too
with threadpool_limits(limits=snakemake.threads):
    run_score(
        snakemake.input.data,
        snakemake.input.splits,
        snakemake.input.classifier,
        split=int(snakemake.wildcards.split),
        task=snakemake.params.task,
        score=snakemake.wildcards.score,
        C_grid=snakemake.params.C_grid,
        seed=snakemake.params.seed,
        out_path=snakemake.output[0],
        chunk_size=snakemake.params.chunk_size,
        dataset=snakemake.wildcards.dataset,
        classifier=snakemake.wildcards.classifier,
    )
