"""The landmark experiment's rows and tables."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...tables import landmarks_spec, metric_table
from ._setup import LEARNED_SCORES, METHODS, SUMMARY_COLUMNS


# --------------------------------------------------------------------------------------------
# Rows and tables
# --------------------------------------------------------------------------------------------
def landmark_summary(results: dict) -> pd.DataFrame:
    """Tidy rows for ``{split: result}``.

    ``aurc`` and ``risk_full`` are per landmark (loss / 68, Fig. 4 of [1]); ``C_classifier`` is
    the chosen ``oversampling_amount`` (NaN for the pretrained model); ``C_score`` the Val2 C
    (NaN for the face score).

    Parameters
    ----------
    results : dict
        ``{split: result}``, results of :func:`run_landmark_split` (or :func:`load_landmark_result`).

    Returns
    -------
    pandas.DataFrame
        One row per split and method of :data:`METHODS`, columns :data:`SUMMARY_COLUMNS`.
    """
    rows = []
    for split, result in sorted(results.items()):
        options = result["predictor_options"]
        oversampling = (
            np.nan
            if options.get("pretrained")
            else float(options.get("oversampling_amount", np.nan))
        )
        for method in METHODS:
            rows.append(
                {
                    "task": "landmarks",
                    "dataset": "300w",
                    "split": int(split),
                    "classifier": "dlib",
                    "score": method,
                    "C_classifier": oversampling,
                    "C_score": float(result["C"].get(method, np.nan)),
                    "aurc": float(result["aurc"][method]),
                    "risk_full": float(result["risk_full"]),
                    "n_test": int(len(result["loss"])),
                }
            )
    return pd.DataFrame(rows, columns=SUMMARY_COLUMNS)


def learning_curve_table(curves: dict) -> pd.DataFrame:
    """Mean, std and count over splits of test AuRC per (method, m) from ``{split: curve DataFrame}``.

    Parameters
    ----------
    curves : dict
        ``{split: learning curve}``, each a DataFrame with ``m, method, C, test_aurc`` (the
        ``learning_curve`` of :func:`run_landmark_split`).

    Returns
    -------
    pandas.DataFrame
        Columns ``method, m, mean, std, count``.
    """
    frame = pd.concat(
        [curve.assign(split=int(k)) for k, curve in curves.items()], ignore_index=True
    )
    return frame.groupby(["method", "m"])["test_aurc"].agg(["mean", "std", "count"]).reset_index()


def aggregate(rows: pd.DataFrame, settings: dict | None = None) -> dict[str, pd.DataFrame]:
    """Every split's rows to the experiment's table: mean and std over the splits of each method's
    Tst AuRC (per landmark) and of R@100 (:func:`rejectopt.pipeline.tables.metric_table`, ``landmarks_spec``).

    Parameters
    ----------
    rows : pandas.DataFrame
        Every split's rows (:func:`landmark_summary`).
    settings : dict, optional
        Unused: the rows hold every setting (the contract passes it).

    Returns
    -------
    dict of str to pandas.DataFrame
        ``{"landmarks": table}``.
    """
    return {"landmarks": metric_table(rows, landmarks_spec(LEARNED_SCORES))}
