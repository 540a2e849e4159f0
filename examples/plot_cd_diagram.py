"""
A results table and your own critical-difference diagram
=========================================================

The pipeline writes one tidy row per (dataset, split, classifier, score) to
``results/summary.csv``; every table of the paper is a pivot of it. This example reads the
paper's own published Table 3a (the AuRC of the scores on logistic regression, shipped with the
repository as ``workflow/resources/reference_results.csv``, in the same tidy layout), ranks the
scores per dataset, runs the Friedman test and draws the Nemenyi critical-difference diagram
(Demsar 2006), as the paper's Fig. 1 does. Point it at your run's ``results/summary.csv``
(averaged over splits) to do the same with your own numbers. The statistics are the public
:mod:`rejectopt.stats`; the drawing borrows the pipeline's own renderer,
``rejectopt.pipeline.report.cd_diagram``, which is internal and may change.
"""

# %%
from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd

from rejectopt.pipeline.report import cd_diagram
from rejectopt.stats import average_ranks, friedman_test, nemenyi_cd

# Found from the repository root or any folder inside it (e.g. ``examples/``).
here = Path.cwd().resolve()
table_file = next(
    folder / "workflow" / "resources" / "reference_results.csv"
    for folder in (here, *here.parents)
    if (folder / "workflow" / "resources" / "reference_results.csv").is_file()
)
results = pd.read_csv(table_file)
lr = results.query("classifier == 'lr' and metric == 'aurc'")
table = lr.pivot(index="dataset", columns="score", values="mean")  # datasets x methods
print(table.round(2))

# %%
# Lower AuRC is better: rank 1 is the best score on a dataset.
ranks = average_ranks(table)
friedman = friedman_test(table)
cd = nemenyi_cd(k=table.shape[1], n=table.shape[0], alpha=0.10)
print(ranks.round(2).to_string())
print(
    f"Friedman p = {friedman.pvalue:.3g} over {friedman.n_datasets} datasets; "
    f"Nemenyi CD (alpha 0.10) = {cd:.2f}"
)

# %%
fig, ax = plt.subplots(figsize=(6, 2.4))
cd_diagram(ranks, cd, ax=ax, title="LR, Table 3a of the paper: Nemenyi at alpha 0.10")
