"""The modules of rejectopt one call passes through, in the order it enters them.

A map for the maintainer: how many rooms a call of ``SelectiveClassifier.fit`` or of one Table 3a
cell (one dataset's split, one classifier, one score, AuRC on Tst) walks through, and how often it
returns to the module that called it. Run ``python benchmarks/call_path.py`` (in-memory data, no
files): it prints, per call, the sequence of rejectopt modules in the order first entered, the number
of distinct modules and the number of returns to the first module (the rooms a reader visits, and how
often the call comes back to where it started).
"""

from __future__ import annotations

import sys
from collections.abc import Callable

import numpy as np


def module_path(call: Callable[[], object]) -> list[str]:
    """The rejectopt modules entered by ``call``, consecutive repeats collapsed."""
    path: list[str] = []

    def profile(frame, event, arg):
        if event != "call":
            return
        name = frame.f_globals.get("__name__", "")
        if name.startswith("rejectopt") and (not path or path[-1] != name):
            path.append(name)

    sys.setprofile(profile)
    try:
        call()
    finally:
        sys.setprofile(None)
    return path


def report(title: str, path: list[str]) -> None:
    first = path[0] if path else ""
    returns = sum(1 for name in path[1:] if name == first)
    print(f"{title}: {len(set(path))} modules, {returns} returns to {first}")
    # each module once, in the order the call first enters it
    print("  " + " -> ".join(name.removeprefix("rejectopt.") for name in dict.fromkeys(path)))


def main() -> None:
    from sklearn.datasets import load_breast_cancer
    from sklearn.linear_model import LogisticRegression

    from rejectopt import SelectiveClassifier
    from rejectopt.metrics import aurc, task_loss
    from rejectopt.pipeline.experiments.paper import learn_score

    X, y = load_breast_cancer(return_X_y=True)
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    clf = SelectiveClassifier(LogisticRegression(max_iter=2000), target="coverage", value=0.9)
    report("SelectiveClassifier.fit", module_path(lambda: clf.fit(X, y)))

    # One Table 3a cell on one split: the classifier of Trn1, SELE learned on Trn2 with C chosen by
    # Val2 AuRC (the pipeline's own step), AuRC on Tst.
    order = np.random.default_rng(0).permutation(len(y))
    trn1, trn2, val2, tst = np.array_split(order, 4)
    parts = {"trn2": trn2, "val2": val2, "tst": tst}
    model = LogisticRegression(max_iter=2000).fit(X[trn1], y[trn1])
    y_pred, proba = model.predict(X), model.predict_proba(X)

    def cell() -> float:
        result = learn_score(
            X, y, parts, y_pred, proba, "classification", "sele", [0.1, 1.0], seed=0, split=0
        )
        loss = task_loss("classification", y[tst], y_pred[tst])
        return aurc(loss, result["uncertainty"])

    report("Table 3a cell (SELE on LR, AuRC on Tst)", module_path(cell))


if __name__ == "__main__":
    main()
