"""
The three rejection models on one dataset
=========================================

For one uncertainty score, the paper's three reject-option models pick different selective
classifiers, and each is the randomized Bayes selection function of eq. (25) on the score:

* the **cost-based model** (Problem 1, Chow's rule): minimise the loss plus a cost per rejection;
* the **bounded-improvement model** (Problem 3, eqs. 14-16): the largest coverage whose
  selective risk stays below a target;
* the **bounded-abstention model** (Problem 5, eqs. 22-24): the smallest selective risk at a
  target coverage.

Each is fitted on a calibration part and checked on a test part.
"""

# %%
import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_digits
from sklearn.linear_model import LogisticRegression

from rejectopt.metrics import rc_curve, task_loss
from rejectopt.scores import mcp
from rejectopt.selective import (
    empirical_risk_coverage,
    fit_bounded_abstention,
    fit_bounded_improvement,
    fit_cost_based,
)

X, y = load_digits(return_X_y=True)
rows = np.random.default_rng(1).permutation(len(y))
trn, cal, tst = np.array_split(rows, [300, 1000])
clf = LogisticRegression(max_iter=3000, C=0.001).fit(X[trn], y[trn])
loss = task_loss("classification", y, clf.predict(X))  # 0 or 100 per example
u = mcp(clf.predict_proba(X))  # uncertainty: larger = rejected first

models = {
    "cost-based, reject cost 3": fit_cost_based(loss[cal], u[cal], reject_cost=3.0),
    "bounded improvement, risk <= 2 %": fit_bounded_improvement(loss[cal], u[cal], target_risk=2.0),
    "bounded abstention, coverage 0.8": fit_bounded_abstention(
        loss[cal], u[cal], target_coverage=0.8
    ),
}

# %%
# Coverage and selective risk of each model on the calibration part (where it was fitted) and on
# the test part (new data: the targets hold up to sampling error).
fig, ax = plt.subplots(figsize=(5.5, 3.8))
coverage, risk = rc_curve(loss[tst], u[tst])
ax.plot(coverage, risk, color="0.6", label="RC curve of MCP (test)")
print(f"error without rejection: {loss[tst].mean():.2f} % (test)")
for (name, selection), marker in zip(models.items(), "os^"):
    cal_risk, cal_cov = empirical_risk_coverage(loss[cal], u[cal], selection)
    tst_risk, tst_cov = empirical_risk_coverage(loss[tst], u[tst], selection)
    print(
        f"{name:34s} calibration: coverage {cal_cov:.3f}, risk {cal_risk:.2f} %"
        f" | test: coverage {tst_cov:.3f}, risk {tst_risk:.2f} %"
    )
    ax.plot(tst_cov, tst_risk, marker, markersize=8, label=name)
ax.set_xlabel("coverage")
ax.set_ylabel("selective risk [%]")
ax.legend(fontsize=8)
fig.tight_layout()
