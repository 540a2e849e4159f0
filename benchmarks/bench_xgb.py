"""Benchmark the XGBoost classifier's grid search (``train_xgb``) on split 0 of real datasets.

Run: ``python benchmarks/bench_xgb.py [--datasets avila pendigit sattelite shuttle]
[--split 0] [--threads 1] [--mirror DIR] [--out FILE.tsv]``.

Per dataset: the dataset is prepared from the raw mirror and split as the
pipeline does (``make_splits``, seed 0, default ratios 0.3/0.1/0.3/0.1/0.2),
and ``train_classifier("xgb", ...)`` is timed exactly as
``rejectopt.experiment.run_classifier`` calls it (Trn1 / Val1, ``n_classes`` of
the dataset, the derived classifier seed, ``n_jobs=--threads``, default grid
``XGB_GRID``). Prints wall and CPU seconds, the number of boosting rounds
trained over the whole grid (calls of ``Booster.update``), the chosen grid point
and its rounds, the chosen model's Val1 log-loss (mean ``-log p(y|x)`` over the
Val1 examples whose class occurs in Trn1, as XGBoost's early-stopping metric),
its Val1 error and its Tst error.
"""

import argparse
import os
import tempfile
import time
from pathlib import Path

import numpy as np
import xgboost

from rejectopt._checks import derive_seed
from rejectopt.classifiers._training import classifier_outputs, train_classifier
from rejectopt.classifiers._xgb import XGB_GRID
from rejectopt.datasets import load_prepared, prepare_dataset
from rejectopt.splits import DEFAULT_RATIOS, load_split, make_splits, save_splits

MIRROR = os.environ.get("REJECTOPT_DATA_MIRROR")
COLUMNS = (
    "dataset",
    "n_trn1",
    "n_val1",
    "d",
    "K",
    "wall_s",
    "cpu_s",
    "rounds",
    "grid_index",
    "max_depth",
    "learning_rate",
    "n_estimators",
    "val1_logloss",
    "val1_error",
    "tst_error",
)


def load_split_arrays(name, split, mirror, work_dir):
    """``(X, y, parts)`` of ``split``: the prepared dataset and its index sets, as the pipeline writes them."""
    npz, splits_npz = Path(work_dir) / f"{name}.npz", Path(work_dir) / f"{name}_splits.npz"
    prepare_dataset(name, Path(work_dir) / "raw", npz, mirror=mirror, allow_download=False)
    X, y = load_prepared(npz)
    save_splits(
        splits_npz, make_splits(y, ratios=DEFAULT_RATIOS, n_splits=split + 1, seed=0, dataset=name)
    )
    return X, y, load_split(splits_npz, split)


def counting_rounds():
    """Patch ``xgboost.Booster.update`` to count boosting rounds; returns ``(counter, restore)``."""
    counter = [0]
    update = xgboost.Booster.update

    def counted(self, *args, **kwargs):
        counter[0] += 1
        return update(self, *args, **kwargs)

    xgboost.Booster.update = counted
    return counter, lambda: setattr(xgboost.Booster, "update", update)


def validation_logloss(proba, y, seen):
    """Mean ``-log p(y|x)`` over the examples whose class is in ``seen`` (probabilities clipped at 1e-15)."""
    keep = np.isin(y, seen)
    return float(-np.mean(np.log(np.clip(proba[keep, y[keep]], 1e-15, None))))


def bench(name, split, threads, mirror, work_dir):
    """One row of the table: ``train_classifier("xgb", ...)`` on ``split`` of ``name``, timed and scored."""
    X, y, parts = load_split_arrays(name, split, mirror, work_dir)
    trn, val, tst = parts["trn1"], parts["val1"], parts["tst"]
    n_classes = int(y.max()) + 1
    counter, restore = counting_rounds()
    try:
        t0, c0 = time.perf_counter(), time.process_time()
        model, index, _ = train_classifier(
            "xgb",
            X[trn],
            y[trn],
            X[val],
            y[val],
            C_grid=None,
            n_classes=n_classes,
            random_state=derive_seed(0, name, "classifier", "xgb", split),
            n_jobs=threads,
        )
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    finally:
        restore()
    out_val = classifier_outputs("xgb", model, X[val], n_classes=n_classes)
    out_tst = classifier_outputs("xgb", model, X[tst], n_classes=n_classes)
    point = XGB_GRID[int(index)]
    return {
        "dataset": name,
        "n_trn1": trn.size,
        "n_val1": val.size,
        "d": X.shape[1],
        "K": n_classes,
        "wall_s": f"{wall:.2f}",
        "cpu_s": f"{cpu:.2f}",
        "rounds": counter[0],
        "grid_index": int(index),
        "max_depth": point["max_depth"],
        "learning_rate": point["learning_rate"],
        "n_estimators": model.best_params_["n_estimators"],
        "val1_logloss": f"{validation_logloss(out_val['proba'], y[val], model.classes_):.6f}",
        "val1_error": f"{np.mean(out_val['y_pred'] != y[val]):.4f}",
        "tst_error": f"{np.mean(out_tst['y_pred'] != y[tst]):.4f}",
    }


def main(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--datasets", nargs="+", default=["avila", "pendigit", "sattelite", "shuttle"]
    )
    parser.add_argument("--split", type=int, default=0)
    parser.add_argument(
        "--threads", type=int, default=1, help="n_jobs of XGBoost (default 1: single-threaded)"
    )
    parser.add_argument(
        "--mirror",
        default=MIRROR,
        required=MIRROR is None,
        help="raw data mirror (default $REJECTOPT_DATA_MIRROR)",
    )
    parser.add_argument("--out", default=None, help="optional TSV output")
    args = parser.parse_args(argv)
    header = (
        f"# split={args.split} threads={args.threads} cpus={os.cpu_count()} "
        f"load1={os.getloadavg()[0]:.2f} xgboost={xgboost.__version__}"
    )
    lines = [header, "\t".join(COLUMNS)]
    print("\n".join(lines), flush=True)
    with tempfile.TemporaryDirectory() as work_dir:
        for name in args.datasets:
            row = bench(name, args.split, args.threads, args.mirror, work_dir)
            lines.append("\t".join(str(row[c]) for c in COLUMNS))
            print(lines[-1], flush=True)
    if args.out:
        Path(args.out).write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
