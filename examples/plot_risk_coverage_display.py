"""
Risk-coverage curves with ``RiskCoverageDisplay``, chosen by ``selective_scorer``
=================================================================================

:class:`rejectopt.RiskCoverageDisplay` draws risk-coverage curves through scikit-learn's
Display API (as ``sklearn.metrics.RocCurveDisplay``): ``from_estimator`` on a fitted
:class:`rejectopt.SelectiveClassifier`, ``from_predictions`` on any labels and uncertainty
scores, and ``plot(ax=...)`` to overlay curves. The *oracle* (rows ranked by their own loss)
and *random order* (the full-coverage risk) frame each curve, and ``band=True`` adds the
95 % confidence band of :func:`rejectopt.metrics.risk_coverage_band`.

The classifier's regularisation is chosen by ``GridSearchCV`` with
:func:`rejectopt.metrics.selective_scorer`: the default score (selective accuracy) would
reward rejecting more, the AuRC does not.
"""

# %%
import matplotlib.pyplot as plt
from sklearn.datasets import load_breast_cancer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV, train_test_split
from sklearn.naive_bayes import GaussianNB
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from rejectopt import RiskCoverageDisplay, SelectiveClassifier
from rejectopt.metrics import selective_scorer

X, y = load_breast_cancer(return_X_y=True)
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.5, random_state=0, stratify=y)

lr = SelectiveClassifier(
    make_pipeline(StandardScaler(), LogisticRegression()),
    uncertainty_score="reg",
    C_grid=(1.0, 10.0),
)
search = GridSearchCV(
    lr,
    {"estimator__logisticregression__C": [0.01, 0.1, 1.0]},
    scoring=selective_scorer("aurc"),
    cv=3,
).fit(X_train, y_train)
print(
    "C chosen by the cross-validated AuRC:",
    search.best_params_["estimator__logisticregression__C"],
    f"(AuRC {-search.best_score_:.3g} %)",
)
nb = SelectiveClassifier(GaussianNB(), uncertainty_score="reg", C_grid=(1.0, 10.0)).fit(
    X_train, y_train
)

# %%
# Three curves on the test rows: the tuned LR with its learned score and its band, LR's own
# maximum class probability (MCP), and naive Bayes with its learned score. The LR curves share
# their oracle and random references; naive Bayes, another classifier, has its own.
best = search.best_estimator_
fig, ax = plt.subplots(figsize=(7, 4.5))
display = RiskCoverageDisplay.from_estimator(
    best, X_test, y_test, name="LR + REG", band=True, ax=ax
)
RiskCoverageDisplay.from_predictions(
    y_test,
    best.estimator_.predict(X_test),
    1 - best.predict_proba(X_test).max(axis=1),
    name="LR + MCP",
    ax=ax,
)
RiskCoverageDisplay.from_estimator(
    nb, X_test, y_test, name="NB + REG", ax=ax, plot_oracle=False, plot_random=False
)
ax.set_ylim(0, 12)
ax.legend(loc="upper right", fontsize="small")
fig.tight_layout()
