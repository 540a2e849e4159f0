"""
``SelectiveClassifier`` in a ``Pipeline`` with ``GridSearchCV``
================================================================

:class:`rejectopt.estimator.SelectiveClassifier` is a scikit-learn meta-estimator: it fits the
classifier it wraps, learns the uncertainty score and fits the selection function for a target,
so it composes with scikit-learn's tools. Here a scaler and the selective classifier form one
``Pipeline``, and ``GridSearchCV`` tunes the wrapped classifier's regularisation by the
pipeline's ``score``: the selective accuracy (the accuracy of the accepted predictions) at a
target coverage of 0.8.
"""

# %%
import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_digits
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV, train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from rejectopt.estimator import SelectiveClassifier

X, y = load_digits(return_X_y=True)
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.3, random_state=0, stratify=y)

pipeline = make_pipeline(
    StandardScaler(),
    SelectiveClassifier(
        LogisticRegression(max_iter=2000),
        target="coverage",
        value=0.8,
        uncertainty_score="sele",
        C_grid=(1, 10),
        random_state=0,
    ),
)
search = GridSearchCV(pipeline, {"selectiveclassifier__estimator__C": [0.01, 0.1, 1.0]}, cv=3)
search.fit(X_train, y_train)
print("best C of the classifier:", search.best_params_["selectiveclassifier__estimator__C"])
print("cross-validated selective accuracy:", np.round(search.cv_results_["mean_test_score"], 4))

# %%
# On the test part: which predictions are accepted, the coverage and the selective accuracy.
best = search.best_estimator_
prediction = best.predict(X_test)  # the reject label (-1) where rejected
accepted = prediction != -1
print(
    f"coverage {accepted.mean():.3f}; selective accuracy {best.score(X_test, y_test):.4f}; "
    f"accuracy without rejection {(best[-1].estimator_.predict(best[0].transform(X_test)) == y_test).mean():.4f}"
)

fig, ax = plt.subplots(figsize=(5, 3.2))
Cs = search.cv_results_["param_selectiveclassifier__estimator__C"].data.astype(float)
ax.semilogx(Cs, search.cv_results_["mean_test_score"], "o-")
ax.set_xlabel("C of the logistic regression")
ax.set_ylabel("selective accuracy at coverage 0.8 (CV)")
fig.tight_layout()
