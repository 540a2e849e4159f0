"""OOD uncertainty scores fitted on the training features: kNN distance and Mahalanobis.

Both estimate how unlike the ID training data an input is and play the role of ``s_g`` (an
estimate of the OOD/ID likelihood ratio ``g``) in the double-score rule of Sec. 2.4 of [1];
``predict`` returns an uncertainty (larger = more likely OOD = reject first).

References
----------
.. [1] V. Franc, D. Prusa, J. Paplham. "Reject option models comprising out-of-distribution
   detection." arXiv:2307.05199.
.. [2] Y. Sun, Y. Ming, X. Zhu, Y. Li. "Out-of-distribution detection with deep nearest
   neighbors." ICML 2022.
.. [3] K. Lee, K. Lee, H. Lee, J. Shin. "A simple unified framework for detecting
   out-of-distribution samples and adversarial attacks." NeurIPS 2018.
"""

from __future__ import annotations

import numpy as np
from scipy import linalg
from sklearn.base import BaseEstimator
from sklearn.neighbors import NearestNeighbors
from sklearn.utils import check_array
from sklearn.utils.validation import check_is_fitted, check_X_y

__all__ = ["KNNDistanceOOD", "MahalanobisOOD"]


def _l2_normalize(X: np.ndarray) -> np.ndarray:
    norm = np.linalg.norm(X, axis=1, keepdims=True)
    return X / np.where(norm > 0, norm, 1.0)


class KNNDistanceOOD(BaseEstimator):
    """Distance to the k-th nearest training sample (the KNN score of [2]).

    Parameters
    ----------
    n_neighbors : int, default=1
        ``k``; the score is the distance to the ``k``-th nearest training sample.
    normalize : bool, default=False
        L2-normalise the features first, as [2] does for deep features (for standardised
        tabular features the plain Euclidean distance is the natural choice).
    algorithm : str, default="auto"
        Passed to :class:`sklearn.neighbors.NearestNeighbors`.

    Attributes
    ----------
    nn_ : NearestNeighbors
        Index of the training features.
    n_features_in_ : int

    Notes
    -----
    Score inputs that were not used in :meth:`fit`: a training sample is its own nearest
    neighbour (distance 0).

    Examples
    --------
    >>> knn = KNNDistanceOOD().fit([[0.0], [1.0]])
    >>> knn.predict([[0.25], [3.0]]).tolist()
    [0.25, 2.0]
    """

    def __init__(self, *, n_neighbors: int = 1, normalize: bool = False, algorithm: str = "auto"):
        self.n_neighbors = n_neighbors
        self.normalize = normalize
        self.algorithm = algorithm

    def fit(self, X, y=None):
        """Index the training features ``X`` of shape (n, d); ``y`` is ignored."""
        X = check_array(X, dtype=np.float64)
        if not (
            isinstance(self.n_neighbors, (int, np.integer)) and 1 <= self.n_neighbors <= X.shape[0]
        ):
            raise ValueError(
                f"n_neighbors must be an int in [1, n_samples={X.shape[0]}], got {self.n_neighbors!r}"
            )
        if self.normalize:
            X = _l2_normalize(X)
        self.nn_ = NearestNeighbors(n_neighbors=self.n_neighbors, algorithm=self.algorithm).fit(X)
        self.n_features_in_ = X.shape[1]
        return self

    def predict(self, X) -> np.ndarray:
        """Uncertainty: distance of each row of ``X`` to its ``k``-th nearest training sample."""
        check_is_fitted(self, "nn_")
        X = check_array(X, dtype=np.float64)
        if X.shape[1] != self.n_features_in_:
            raise ValueError(
                f"X has {X.shape[1]} features, the estimator was fitted with {self.n_features_in_}"
            )
        if self.normalize:
            X = _l2_normalize(X)
        dist, _ = self.nn_.kneighbors(X, n_neighbors=self.n_neighbors)
        return dist[:, -1]


class MahalanobisOOD(BaseEstimator):
    """Class-conditional Gaussians with a shared covariance: Mahalanobis distance score [3].

    Fits the class means ``m_y`` and the pooled within-class covariance
    ``S = 1/n sum_i (x_i - m_{y_i})(x_i - m_{y_i})^T + reg * I``; the uncertainty is
    ``min_y (x - m_y)^T S^{-1} (x - m_y)``, the squared Mahalanobis distance to the closest
    class mean. With Gaussian ID classes of a shared covariance it is, up to the class
    priors, a monotone transform of ``-log p_I(x)`` near the closest class.

    Parameters
    ----------
    reg : float, default=1e-6
        Ridge added to the diagonal of ``S`` (relative to its mean variance).

    Attributes
    ----------
    classes_ : ndarray of shape (K,)
    means_ : ndarray of shape (K, d)
    precision_ : ndarray of shape (d, d)
        ``S^{-1}``.
    n_features_in_ : int

    Examples
    --------
    >>> maha = MahalanobisOOD().fit([[0.0], [2.0], [10.0], [12.0]], [0, 0, 1, 1])
    >>> maha.predict([[1.0], [6.0]]).round(3).tolist()
    [0.0, 25.0]
    """

    def __init__(self, *, reg: float = 1e-6):
        self.reg = reg

    def fit(self, X, y):
        """Fit class means and the shared covariance on training features and labels."""
        X, y = check_X_y(X, y, dtype=np.float64)
        if not (np.isfinite(self.reg) and self.reg >= 0):
            raise ValueError(f"reg must be a finite number >= 0, got {self.reg!r}")
        self.classes_, inverse = np.unique(y, return_inverse=True)
        counts = np.bincount(inverse).astype(float)
        means = np.zeros((self.classes_.size, X.shape[1]))
        np.add.at(means, inverse, X)
        means /= counts[:, None]
        centred = X - means[inverse]
        cov = centred.T @ centred / X.shape[0]
        scale = float(np.trace(cov)) / cov.shape[0] or 1.0
        cov += self.reg * scale * np.eye(cov.shape[0])
        self.means_ = means
        self.precision_ = linalg.pinvh(cov)
        self.n_features_in_ = X.shape[1]
        return self

    def predict(self, X) -> np.ndarray:
        """Uncertainty: squared Mahalanobis distance to the closest class mean."""
        check_is_fitted(self, "precision_")
        X = check_array(X, dtype=np.float64)
        if X.shape[1] != self.n_features_in_:
            raise ValueError(
                f"X has {X.shape[1]} features, the estimator was fitted with {self.n_features_in_}"
            )
        best = np.full(X.shape[0], np.inf)
        for m in self.means_:
            d = X - m
            best = np.minimum(best, np.einsum("ij,jk,ik->i", d, self.precision_, d))
        return np.maximum(best, 0.0)
