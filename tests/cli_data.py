"""Data of the command-line tests: "your" classifier on sattelite, built once per test session.

``test_cli*.py`` modules share :func:`satellite_tables` and :func:`selected_model` (cached,
so the dataset is prepared, the classifier trained and ``select`` run once per session);
``test_cli.py`` and ``test_logits.py`` share :func:`network_outputs`, a network's exported outputs.
"""

import functools
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.datasets import load_digits
from sklearn.decomposition import PCA
from sklearn.linear_model import LogisticRegression
from support import DEMO_MIRROR

from rejectopt import cli
from rejectopt.datasets import load_prepared, prepare_dataset

TARGET_COVERAGE = 0.8
N_FEATURES = 36


def frame(X, y, y_pred):
    table = pd.DataFrame(X, columns=[f"f{j}" for j in range(X.shape[1])])
    table["y"] = y
    table["y_pred"] = y_pred
    return table


@functools.cache
def satellite_tables(folder):
    """LR trained on 1500 rows of sattelite; CSVs of 2500 rows for select (``given``) and the rest for apply."""
    folder = Path(folder)
    prepare_dataset("sattelite", folder / "raw", folder / "d.npz", mirror=DEMO_MIRROR)
    X, y = load_prepared(folder / "d.npz")
    order = np.random.default_rng(0).permutation(len(y))
    trn, given, unseen = order[:1500], order[1500:4000], order[4000:]
    clf = LogisticRegression(max_iter=2000).fit(X[trn] / 100.0, y[trn])
    paths = {}
    for name, rows in (("given", given), ("unseen", unseen)):
        paths[name] = folder / f"{name}.csv"
        frame(X[rows], y[rows], clf.predict(X[rows] / 100.0)).to_csv(paths[name], index=False)
    return paths


@functools.cache
def selected_model(folder):
    """``select --target coverage=0.8`` on the ``given`` table (default C grid); returns the output folder."""
    paths = satellite_tables(folder)
    out = Path(folder) / "sel"
    status = cli.main(
        [
            "select",
            "--data",
            str(paths["given"]),
            "--target",
            f"coverage={TARGET_COVERAGE}",
            "--out",
            str(out),
            "-q",
        ]
    )
    assert status == 0
    return out


def shared_folder(tmp_path_factory):
    """The session's folder of the shared data (one per test session)."""
    return str(tmp_path_factory.getbasetemp() / "cli_satellite")


@functools.cache
def network_outputs(folder):
    """A small two-stage "network" on scikit-learn's digits, its outputs as the deep route reads them.

    PCA to 12 dimensions (the penultimate layer: ``embeddings``) and a logistic regression on
    top (``logits``, its decision function), trained on the first 500 digits with a strong
    penalty so that it errs on about one in ten of the other 1297. Returns ``{"npz", "csv",
    "logits", "labels", "embeddings"}``; the NPZ holds arrays ``logits``, ``labels``,
    ``embeddings``, the CSV columns ``logit_0..9``, ``emb_0..11``, ``label``.
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    X, y = load_digits(return_X_y=True)
    pca = PCA(n_components=12, random_state=0).fit(X[:500])
    head = LogisticRegression(C=1e-3, max_iter=2000).fit(pca.transform(X[:500]), y[:500])
    embeddings = pca.transform(X[500:])
    logits = head.decision_function(embeddings)
    labels = y[500:]
    np.savez(folder / "net.npz", logits=logits, labels=labels, embeddings=embeddings)
    table = pd.DataFrame(logits, columns=[f"logit_{j}" for j in range(logits.shape[1])])
    for j in range(embeddings.shape[1]):
        table[f"emb_{j}"] = embeddings[:, j]
    table["label"] = labels
    table.to_csv(folder / "net.csv", index=False, float_format="%.17g")
    return {
        "npz": folder / "net.npz",
        "csv": folder / "net.csv",
        "logits": logits,
        "labels": labels,
        "embeddings": embeddings,
    }


@functools.cache
def wine_table(folder):
    """ "Your" classifier on scikit-learn's wine: a standardised, strongly penalised LR, its 5-fold out-of-fold
    predictions on all 178 rows (3 errors), as the CSV ``select`` reads (f0..f12, y, y_pred)."""
    from sklearn.datasets import load_wine
    from sklearn.model_selection import cross_val_predict
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    X, y = load_wine(return_X_y=True)
    y_pred = cross_val_predict(
        make_pipeline(StandardScaler(), LogisticRegression(C=0.05)), X, y, cv=5
    )
    path = folder / "wine.csv"
    frame(X, y, y_pred).to_csv(path, index=False)
    return path


@functools.cache
def digits_table(folder):
    """ "Your" classifier on scikit-learn's digits: a standardised LR, its 5-fold out-of-fold predictions on all
    1797 rows (about 4 % errors) and its own uncertainty ``mcp`` (1 - largest class probability), as a CSV."""
    from sklearn.model_selection import cross_val_predict
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    X, y = load_digits(return_X_y=True)
    proba = cross_val_predict(
        make_pipeline(StandardScaler(), LogisticRegression(C=0.1, max_iter=1000)),
        X,
        y,
        cv=5,
        method="predict_proba",
    )
    table = frame(X, y, proba.argmax(axis=1))
    table["mcp"] = 1.0 - proba.max(axis=1)
    path = folder / "digits.csv"
    table.to_csv(path, index=False, float_format="%.17g")
    return path
