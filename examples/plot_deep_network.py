"""
A deep network's outputs: baselines against SELE on its embeddings
===================================================================

Most selective-classification research runs on deep networks whose users export the logits
and the penultimate-layer embeddings to files. This example trains a small multilayer
perceptron with PyTorch on the CPU, exports its logits and embeddings to an NPZ, and runs the
deep-network route of :mod:`rejectopt.logits` on them: the network's own confidence baselines
(MSP, entropy, energy, DOCTOR, max-logit, margin) against the paper's learned scores (SELE,
REG, TCP) on the embeddings and on the logits, each with a selection function for 80 %
coverage; then the same file through ``python -m rejectopt select`` / ``apply``.

It needs ``pip install 'rejectopt[deep]'`` (torch). It runs on scikit-learn's bundled digits
(nothing downloads); ``DATASET = "letter"`` (the UCI data, 20,000 rows, from
``$REJECTOPT_DATA_MIRROR`` when it is set, else downloaded) with ``SEEDS = range(5)`` gives the
table of the user guide's *Deep networks' outputs* in about 2 minutes. Everything is written to
a temporary folder.
"""

# %%
# The data and the network
# ------------------------
# The network sees 40 % of the rows; the route gets the other 60 %, which it splits into rows
# that train the learned scores, rows that choose their C, calibration rows for the selection
# functions and held-out rows for the evaluation (:func:`rejectopt.fitting.split_rows`).
import os
import tempfile
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import torch
from sklearn.datasets import load_digits

from rejectopt import cli
from rejectopt.datasets import load_prepared, prepare_dataset
from rejectopt.logits import fit_logits

DATASET = "digits"  # "letter": the user guide's table
SEEDS = (0,)  # range(5): the user guide's mean and std
EPOCHS = 40
workdir = Path(tempfile.mkdtemp(prefix="rejectopt_deep_"))
if DATASET == "digits":
    X, y = load_digits(return_X_y=True)
else:
    prepare_dataset(
        DATASET,
        workdir / "raw",
        workdir / "data.npz",
        mirror=os.environ.get("REJECTOPT_DATA_MIRROR"),
    )
    X, y = load_prepared(workdir / "data.npz")
n_classes = int(y.max()) + 1
torch.set_num_threads(
    1
)  # one thread and deterministic kernels: the same seed gives the same network
torch.use_deterministic_algorithms(True)


class MLP(torch.nn.Module):
    """d -> 128 -> 64 (the embeddings) -> K logits, ReLU."""

    def __init__(self, n_features, n_classes):
        super().__init__()
        self.body = torch.nn.Sequential(
            torch.nn.Linear(n_features, 128),
            torch.nn.ReLU(),
            torch.nn.Linear(128, 64),
            torch.nn.ReLU(),
        )
        self.head = torch.nn.Linear(64, n_classes)

    def forward(self, x):
        embeddings = self.body(x)
        return self.head(embeddings), embeddings


def train_network(X, y, seed):
    torch.manual_seed(seed)
    net = MLP(X.shape[1], n_classes)
    optimiser = torch.optim.Adam(net.parameters(), lr=1e-3)
    X_t, y_t = torch.tensor(X, dtype=torch.float32), torch.tensor(y)
    order = torch.Generator().manual_seed(seed)
    for _ in range(EPOCHS):
        for batch in torch.randperm(len(y_t), generator=order).split(128):
            optimiser.zero_grad()
            torch.nn.functional.cross_entropy(net(X_t[batch])[0], y_t[batch]).backward()
            optimiser.step()
    return net


def export_outputs(seed):
    """Train the network of ``seed`` and write its outputs on the route's rows to an NPZ."""
    rows = np.random.default_rng(seed).permutation(len(y))
    train, rest = rows[: int(0.4 * len(y))], rows[int(0.4 * len(y)) :]
    mean, std = X[train].mean(axis=0), X[train].std(axis=0)
    scale = np.where(
        std > 0, std, 1.0
    )  # a pixel that is constant on the network's rows stays as it is
    net = train_network((X[train] - mean) / scale, y[train], seed)
    with torch.no_grad():
        logits, embeddings = net(torch.tensor((X[rest] - mean) / scale, dtype=torch.float32))
    path = workdir / f"outputs_{seed}.npz"
    np.savez(
        path, logits=logits.double().numpy(), labels=y[rest], embeddings=embeddings.double().numpy()
    )
    return path


# %%
# The route from the library
# --------------------------
# :func:`rejectopt.logits.fit_logits` returns the tidy table (test AuRC in percent, lower is
# better; the selection function's coverage and selective risk on the held-out rows), the RC
# curves and the fitted selection functions.
results = []
for seed in SEEDS:
    with np.load(export_outputs(seed)) as outputs:
        fit = fit_logits(
            outputs["logits"],
            outputs["labels"],
            outputs["embeddings"],
            seed=seed,
            features=("embeddings", "logits"),
        )
    results.append(fit.table)
    print(
        f"seed {seed}: error rate {fit.table['risk_full'].iloc[0]:.2f} % on {fit.table['n_eval'].iloc[0]} "
        "held-out rows"
    )
print(
    fit.table[["method", "C", "aurc", "coverage", "selective_risk"]].round(3).to_string(index=False)
)
summary = pd.concat(results).groupby("method", sort=False)["aurc"].agg(["mean", "std"])
print(summary.round(3).to_string())

# %%
# RC curves of the last seed on the held-out rows
# ------------------------------------------------
fig, ax = plt.subplots(figsize=(6, 4))
for method in ("mcp", "energy", "doctor", "sele@embeddings", "sele@logits"):
    curve = fit.curves[fit.curves["method"] == method]
    ax.plot(curve["coverage"], curve["risk"], label=method)
ax.set_xlabel("coverage")
ax.set_ylabel("selective risk [%]")
ax.set_ylim(0, None)
ax.legend()
fig.tight_layout()

# %%
# The same file from the command line
# -----------------------------------
# ``select`` reads the arrays ``logits``, ``labels`` and ``embeddings`` (a CSV would have
# columns ``logit_0..``, ``emb_0..``, ``label``), learns SELE on the embeddings and writes
# ``model.json``; ``apply`` decides on new outputs of the same network (here the same rows).
npz = workdir / f"outputs_{SEEDS[-1]}.npz"
cli.main(
    [
        "select",
        "--data",
        str(npz),
        "--target",
        "coverage=0.8",
        "--seed",
        str(SEEDS[-1]),
        "--out",
        str(workdir / "selection"),
        "-q",
    ]
)
cli.main(
    [
        "apply",
        "--model",
        str(workdir / "selection" / "model.json"),
        "--data",
        str(npz),
        "--out",
        str(workdir / "decisions.csv"),
        "-q",
    ]
)
decisions = pd.read_csv(workdir / "decisions.csv", dtype={"uncertainty": str})
same = np.array_equal(
    decisions["uncertainty"].map(float).to_numpy(), fit.uncertainty["sele@embeddings"]
)  # exact parse
print(
    f"apply accepted {decisions['accept'].mean():.3f} of the rows; the same SELE as the library: {same}"
)
