"""
SELE on a scikit-learn classifier, with its risk-coverage curve
===============================================================

Any classifier gets a reject option from an uncertainty score learned on its losses. Here
logistic regression on scikit-learn's handwritten digits is the black box; SELE (the paper's
score, eq. 37: one linear score per predicted class, trained by the SELE loss) is learned on a
second part of the data with its regularisation ``C`` chosen on a third by AuRC (eq. 27), and
compared on the test part with the classifier's own maximum class posterior (MCP).
"""

# %%
# The paper's protocol: the classifier on one part, the score on another, C on a third and the
# evaluation on a fourth.
import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_digits
from sklearn.linear_model import LogisticRegression

from rejectopt.metrics import aurc, rc_curve, task_loss
from rejectopt.scores import SELE, mcp, select_C

X, y = load_digits(return_X_y=True)
rows = np.random.default_rng(0).permutation(len(y))
trn1, trn2, val2, tst = np.array_split(rows, [500, 1100, 1400])

clf = LogisticRegression(max_iter=3000, C=0.01).fit(X[trn1], y[trn1])
y_pred = clf.predict(X)
loss = task_loss("classification", y, y_pred)  # 100 x [y != y_pred]: the paper's % units

# %%
# ``select_C`` fits SELE for each C of the grid on Trn2 and keeps the C of the lowest Val2 AuRC.
score, val_aurc = select_C(
    SELE(n_classes=10), X[trn2], y_pred[trn2], loss[trn2], X[val2], y_pred[val2], loss[val2]
)
u_sele = score.predict(X[tst], y_pred[tst])
u_mcp = mcp(clf.predict_proba(X[tst]))
print(f"chosen C = {score.C}; test error {loss[tst].mean():.2f} %")
print(f"test AuRC: SELE {aurc(loss[tst], u_sele):.3f}, MCP {aurc(loss[tst], u_mcp):.3f}")

# %%
# The risk-coverage curve: the selective risk of the examples accepted when the least
# uncertain ones are accepted first. AuRC is the area under it.
fig, ax = plt.subplots(figsize=(5, 3.5))
for name, u in [("SELE", u_sele), ("MCP", u_mcp)]:
    coverage, risk = rc_curve(loss[tst], u)
    ax.plot(coverage, risk, label=f"{name} (AuRC {aurc(loss[tst], u):.2f})")
ax.set_xlabel("coverage")
ax.set_ylabel("selective risk [%]")
ax.legend()
fig.tight_layout()

# %%
# On this small sample MCP is the better score: the logistic regression's posteriors are well
# calibrated on digits, and SELE learns from the classifier's errors, of which Trn2 holds only
# about twenty. In the paper's Table 3a (thousands of examples per part) SELE has the best
# average rank over the LR datasets; the pipeline reproduces that table (``snakemake``).
