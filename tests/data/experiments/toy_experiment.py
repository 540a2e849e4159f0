"""A user's experiment in one file: the selective risk of each classifier's own baseline score at a fixed coverage.

Used by tests/test_experiments_contract.py exactly as the README tells a user to add an
experiment: the module lies in the working directory and is listed under ``experiments:``.
"""

import numpy as np
import pandas as pd

from rejectopt.experiments import SplitResult
from rejectopt.metrics import risk_at_coverage, task_loss

NAME = "toy"


def settings(config):
    block = config.get("experiment_settings", {}).get(NAME, {})
    coverage = float(block.get("coverage", 0.5))
    if not 0 < coverage <= 1:
        raise ValueError(f"config experiment_settings.toy.coverage must lie in (0, 1], got {coverage}")
    return {"coverage": coverage}


def run_split(inputs, settings):
    tst = inputs.parts["tst"]
    rows = []
    for role in sorted(r for r in inputs.staged if r.startswith("classifier/")):
        with np.load(inputs.staged_file(role)) as clf:
            loss = task_loss(inputs.task, inputs.y[tst], clf["y_pred"][tst])
            risk = risk_at_coverage(loss, clf["baseline"][tst], settings["coverage"])
        rows.append({"classifier": role.split("/", 1)[1], "risk": risk})
    return SplitResult(pd.DataFrame(rows))


def aggregate(rows, settings):
    return {"risk": rows.groupby(["dataset", "classifier"])["risk"].agg(["mean", "count"])}
