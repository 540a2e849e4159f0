"""
Out-of-distribution inputs and a double score
=============================================

When new inputs may come from classes the classifier never saw, the reject option must refuse
both likely errors and out-of-distribution (OOD) inputs. The bounded TPR-FPR model of Franc,
Prusa & Paplham (Theorem 3) accepts the smallest selective risk on in-distribution (ID) inputs
subject to TPR (ID inputs accepted) >= 0.9 and FPR (OOD inputs accepted) <= 0.1. Its optimal
rule thresholds one score; the double score ``s_r + mu s_g`` (Sec. 2.4) combines a
misclassification score ``s_r`` (here the classifier's MCP) with an OOD score ``s_g`` (here the
distance to the nearest training example).

On digits, classes 3, 5 and 8 play the inputs the classifier never saw.
"""

# %%
import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_digits
from sklearn.linear_model import LogisticRegression

from rejectopt.metrics import task_loss
from rejectopt.ood import (
    KNNDistanceOOD,
    empirical_rates,
    fit_bounded_tpr_fpr,
    fit_double_score_tpr_fpr,
)
from rejectopt.scores import mcp
from rejectopt.selective import InfeasibleTargetError

X, y = load_digits(return_X_y=True)
is_ood = np.isin(y, [3, 5, 8])
rows = np.random.default_rng(0).permutation(len(y))
trn, val, tst = np.array_split(rows, [700, 1250])
trn = trn[~is_ood[trn]]  # the classifier and the OOD score know the ID classes only

clf = LogisticRegression(max_iter=3000, C=0.001).fit(X[trn], y[trn])
loss = task_loss("classification", y, clf.predict(X))  # meaningless on OOD rows: ignored there
s_r = mcp(clf.predict_proba(X))
s_g = KNNDistanceOOD(n_neighbors=1).fit(X[trn]).predict(X)

# %%
# Each rule is fitted on the validation part (ID and OOD rows) and checked on the test part. A
# target that no threshold of a score meets on the validation part is refused: the paper's
# "unable".
scores = {
    "MCP alone": (s_r,),
    "kNN distance alone": (s_g,),
    "double score MCP + mu kNN": (s_r, s_g),
}
rules = {}
for name, args in scores.items():
    fit = fit_double_score_tpr_fpr if len(args) == 2 else fit_bounded_tpr_fpr
    try:
        rules[name] = fit(loss[val], is_ood[val], *(a[val] for a in args), tpr_min=0.9, fpr_max=0.1)
    except InfeasibleTargetError:
        print(f"{name:27s} unable: no threshold meets TPR >= 0.9 and FPR <= 0.1 on validation")
        continue
    rates = empirical_rates(
        loss[tst], is_ood[tst], rules[name].acceptance_probability(*(a[tst] for a in args))
    )
    print(
        f"{name:27s} TPR {rates['tpr']:.3f}  FPR {rates['fpr']:.3f}  "
        f"selective risk {rates['selective_risk']:.2f} %"
    )

# %%
# The two scores of the test rows and the double score's decision boundary.
double = rules["double score MCP + mu kNN"]
fig, ax = plt.subplots(figsize=(5, 3.8))
ax.scatter(s_r[tst][~is_ood[tst]], s_g[tst][~is_ood[tst]], s=6, label="ID")
ax.scatter(s_r[tst][is_ood[tst]], s_g[tst][is_ood[tst]], s=6, label="OOD")
grid = np.linspace(s_r.min(), s_r.max(), 50)
ax.plot(
    grid,
    (double.threshold - double.weight_r * grid) / double.weight_g,
    "k--",
    label=f"accept below (mu = {double.mu:.3g})",
)
ax.set_ylim(s_g[tst].min(), s_g[tst].max())
ax.set_xlabel("s_r: MCP uncertainty")
ax.set_ylabel("s_g: distance to nearest training example")
ax.legend(fontsize=8)
fig.tight_layout()
