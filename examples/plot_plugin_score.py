"""
Your own score, compared with SELE
==================================

A score is one class with ``fit(X, y_pred, loss)`` and ``predict(X, y_pred)`` (larger = more
uncertain) and a regularisation argument ``C``. Registered with
:func:`rejectopt.scores.register_score`, it is a method of the benchmark like SELE: listed under
``plugins:`` and ``scores:`` in the pipeline's config it gets a column in the paper's tables.
Here it is compared with SELE directly, with the same protocol: fitted on one part, ``C`` chosen
by validation AuRC on another (:func:`rejectopt.scores.select_C`), evaluated on a third.
"""

# %%
import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_digits
from sklearn.linear_model import LogisticRegression
from sklearn.neighbors import KNeighborsRegressor

from rejectopt.metrics import aurc, rc_curve, task_loss
from rejectopt.scores import SELE, make_score, register_score, select_C


@register_score("gallery_knn_loss", label="kNN loss")
class KNNLoss:
    """The mean loss of the ``1 + C`` nearest training examples with the same prediction."""

    def __init__(self, C=1.0):
        self.C = C

    def fit(self, X, y_pred, loss):
        k = min(1 + int(round(self.C)), len(loss))
        self.model_ = KNeighborsRegressor(n_neighbors=k).fit(
            np.column_stack([X, 100 * y_pred]), loss
        )
        return self

    def predict(self, X, y_pred):
        return self.model_.predict(np.column_stack([X, 100 * y_pred]))


X, y = load_digits(return_X_y=True)
rows = np.random.default_rng(2).permutation(len(y))
trn1, trn2, val2, tst = np.array_split(rows, [300, 1000, 1300])
clf = LogisticRegression(max_iter=3000, C=0.001).fit(X[trn1], y[trn1])
y_pred = clf.predict(X)
loss = task_loss("classification", y, y_pred)

# %%
# Both learners get the same parts and the same selection of C.
fitted = {}
for name, template, grid in [
    ("SELE", SELE(n_classes=10), (0, 1, 10, 100)),
    ("kNN loss", make_score("gallery_knn_loss", 1.0), (4, 9, 19, 49)),
]:
    fitted[name], val_aurc = select_C(
        template, X[trn2], y_pred[trn2], loss[trn2], X[val2], y_pred[val2], loss[val2], C_grid=grid
    )
    print(f"{name}: Val2 AuRC per C {dict((c, round(a, 3)) for c, a in val_aurc.items())}")

fig, ax = plt.subplots(figsize=(5, 3.5))
for name, score in fitted.items():
    u = score.predict(X[tst], y_pred[tst])
    coverage, risk = rc_curve(loss[tst], u)
    ax.plot(coverage, risk, label=f"{name}, C={score.C} (test AuRC {aurc(loss[tst], u):.2f})")
ax.set_xlabel("coverage")
ax.set_ylabel("selective risk [%]")
ax.legend(fontsize=8)
fig.tight_layout()
