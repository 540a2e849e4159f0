"""Benchmark: test AuRC of every score of a network's outputs on the letter MLP of the deep-networks guide.

The network and protocol of ``examples/plot_deep_network.py`` with ``DATASET = "letter"``: a
d-128-64-26 ReLU MLP trained with PyTorch on the CPU (Adam, 40 epochs, one thread, seeded) on 40 %
of the 20,000 rows; :func:`rejectopt.logits.fit_logits` on its logits and 64-d embeddings of the
other 60 % (seed = network, split and score seed). Every baseline, the post-hoc scores (tuned on
the training rows), per-class SELE / REG / TCP on the embeddings and on the logits, and the
class-shared SELE / REG (on the logits) are compared by their AuRC on the held-out rows; prints
the mean and std over the seeds, and each method's fit time.

``--dataset california100`` builds a problem with many classes from real data: the 20,640
California districts' 8 features, and as the class the percentile of the median house value (100
equal-count bins of the raw target, fewer where values tie at the survey's cap): K = 100 for the
same network and protocol.

Needs torch and the raw data from ``$REJECTOPT_DATA_MIRROR`` (a folder of the official raw files,
laid out as the downloads).

Usage: REJECTOPT_DATA_MIRROR=/path/to/mirror python benchmarks/bench_deep_scores.py --seeds 5
"""

import argparse
import lzma
import os
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from rejectopt.datasets import load_prepared, prepare_dataset
from rejectopt.logits import fit_logits

EPOCHS = 40


class MLP(torch.nn.Module):
    """d -> 128 -> 64 (the embeddings) -> K logits, ReLU: the guide's network."""

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


def outputs(X, y, seed):
    """Train the seed's network on 40 % of the rows; its logits and embeddings on the rest, with their labels."""
    rows = np.random.default_rng(seed).permutation(len(y))
    train, rest = rows[: int(0.4 * len(y))], rows[int(0.4 * len(y)) :]
    mean, std = X[train].mean(axis=0), X[train].std(axis=0)
    scale = np.where(std > 0, std, 1.0)
    torch.manual_seed(seed)
    net = MLP(X.shape[1], int(y.max()) + 1)
    optimiser = torch.optim.Adam(net.parameters(), lr=1e-3)
    X_t, y_t = torch.tensor((X[train] - mean) / scale, dtype=torch.float32), torch.tensor(y[train])
    order = torch.Generator().manual_seed(seed)
    for _ in range(EPOCHS):
        for batch in torch.randperm(len(y_t), generator=order).split(128):
            optimiser.zero_grad()
            torch.nn.functional.cross_entropy(net(X_t[batch])[0], y_t[batch]).backward()
            optimiser.step()
    with torch.no_grad():
        logits, embeddings = net(torch.tensor((X[rest] - mean) / scale, dtype=torch.float32))
    return logits.double().numpy(), y[rest], embeddings.double().numpy()


def california_percentiles(path):
    """The California housing features and the percentile bin (0..K-1) of the median house value."""
    with lzma.open(path, "rt") as handle:
        data = np.loadtxt(handle, delimiter=",")
    X, value = data[:, :8], data[:, 8]
    y = pd.qcut(value, 100, labels=False, duplicates="drop").astype(np.int64)
    return X, y


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dataset", default="letter")
    parser.add_argument("--seeds", type=int, default=5)
    args = parser.parse_args()
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    if args.dataset == "california100":
        X, y = california_percentiles(
            Path(os.environ["REJECTOPT_DATA_MIRROR"]) / "california" / "cal_housing.data.xz"
        )
    else:
        workdir = Path(tempfile.mkdtemp(prefix="rejectopt_bench_deep_"))
        prepare_dataset(
            args.dataset,
            workdir / "raw",
            workdir / "data.npz",
            mirror=os.environ.get("REJECTOPT_DATA_MIRROR"),
        )
        X, y = load_prepared(workdir / "data.npz")
    print(
        f"{args.dataset}: {X.shape[0]} rows, {X.shape[1]} features, {int(y.max()) + 1} classes",
        flush=True,
    )
    tables = []
    for seed in range(args.seeds):
        logits, labels, embeddings = outputs(X, y, seed)
        fit = fit_logits(
            logits,
            labels,
            embeddings,
            seed=seed,
            features=("embeddings", "logits"),
            scores=("sele", "reg", "tcp", "sele_shared", "reg_shared"),
        )
        tables.append(fit.table)
        print(
            f"seed {seed}: error rate {fit.table['risk_full'].iloc[0]:.2f} % on {fit.table['n_eval'].iloc[0]} rows",
            flush=True,
        )
    summary = pd.concat(tables).groupby("method", sort=False)["aurc"].agg(["mean", "std"])
    print(summary.round(2).to_string())


if __name__ == "__main__":
    main()
