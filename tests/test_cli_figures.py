"""The figures of ``python -m rejectopt select`` (rejectopt.cli._figures): what each axes shows."""

import numpy as np
import pytest
from sklearn.datasets import load_digits
from sklearn.metrics import roc_auc_score
from sklearn.naive_bayes import GaussianNB

from rejectopt.cli._figures import ood_select_figure, select_figure
from rejectopt.cli._report import ood_report_dict, report_dict
from rejectopt.fitting import fit_selective, split_ood_rows, split_rows
from rejectopt.metrics import aurc
from rejectopt.targets import Target, parse_target


def test_select_figure_shows_the_report_rows_and_the_chosen_point():
    """The oracle's and the random order's AuRC follow from the losses alone; the learned score's comes
    from a fit, so it is checked against rejectopt.metrics.aurc of the fitted uncertainties on the report
    rows, rounded to the legend's 3 digits (either side of a rounding tie, within 1e-12 of round-off)."""
    X, y = load_digits(return_X_y=True)
    classifier = GaussianNB().fit(X[::2], y[::2])  # one half trains the classifier
    X, y = X[1::2], y[1::2]  # the other half, the selective part
    y_pred = classifier.predict(X)
    loss = 100.0 * (y_pred != y)
    target = Target("coverage", 0.8)
    fit = fit_selective(
        X, y_pred, loss, target, split_rows(len(y), seed=0), n_classes=10, C_grid=[1.0]
    )
    report = report_dict(
        fit,
        loss,
        target,
        score_name="sele",
        loss_name="zero_one",
        C_grid=[1.0],
        split={},
        versions={},
        loss_bound=100,
    )
    ax = select_figure(fit, loss, report, "SELE").axes[0]
    assert (ax.get_title(), ax.get_ylabel()) == (
        "report rows (n=180)",
        "selective risk (zero_one, %)",
    )
    rep = fit.parts["report"]
    expected = aurc(loss[rep], fit.uncertainty[rep])
    assert report["aurc_report"]["learned_score"] == pytest.approx(expected, abs=1e-12)
    legend = [text.get_text() for text in ax.get_legend().get_texts()]
    assert legend[0] in {
        f"SELE score (AuRC {value:.3g})" for value in (expected - 1e-12, expected + 1e-12)
    }
    assert legend[1:] == [
        "oracle (AuRC 2.46)",
        "random order (AuRC 21.1)",
        "chosen point (coverage=0.8)",
    ]


def test_ood_select_figure_shows_roc_and_the_id_rows_rc_curve():
    """The digits 8 and 9 are out-of-distribution: the classifier never sees them. The AUROC in the legend comes
    from a fit, so it is checked against scikit-learn's roc_auc_score of the fitted uncertainties on the report
    rows, rounded to the legend's 3 digits (either side of a rounding tie, within 1e-12 of round-off)."""
    X, y = load_digits(return_X_y=True)
    is_ood = y >= 8
    train = (np.arange(y.size) % 2 == 0) & ~is_ood
    classifier = GaussianNB().fit(X[train], y[train])
    X, y, is_ood = X[~train], y[~train], is_ood[~train]
    y_pred = classifier.predict(X)
    loss = np.where(is_ood, np.nan, 100.0 * (y_pred != y))
    target = parse_target("tpr=0.8,fpr=0.3")
    fit = fit_selective(
        X,
        y_pred,
        loss,
        target,
        split_ood_rows(is_ood, seed=0),
        n_classes=8,
        C_grid=[1.0],
        is_ood=is_ood,
    )
    report = ood_report_dict(
        fit,
        loss,
        is_ood,
        target,
        score_name="sele",
        loss_name="zero_one",
        C_grid=[1.0],
        split={},
        versions={},
        ood_column="is_ood",
        loss_bound=100,
    )
    roc, rc = ood_select_figure(fit, loss, is_ood, report, "SELE").axes
    assert roc.get_title() == "report rows: 144 ID, 142 OOD"
    rep = fit.parts["report"]
    expected = roc_auc_score(
        ~is_ood[rep], -fit.uncertainty[rep]
    )  # ID = positive, less uncertain = more ID
    assert report["auroc_report"] == pytest.approx(expected, abs=1e-12) and expected > 0.5
    legend = [text.get_text() for text in roc.get_legend().get_texts()]
    assert legend[0] in {
        f"SELE score (AUROC {value:.3g})" for value in (expected - 1e-12, expected + 1e-12)
    }
    assert legend[1:] == ["random order", "chosen point (tpr=0.8,fpr=0.3)"]
    assert rc.get_xlabel() == "coverage of the ID rows (= TPR)"
