"""Cost regression (CSOAA-style): regress each action's cost, pick the argmin."""

from __future__ import annotations

from typing import Self

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.linear_model import Ridge

from ._base import PolicyFeatures, constant_action


class CostRegression(BaseEstimator):
    """Cost-sensitive classifier by one ridge regression per action (one solve).

    Fast, and exact when costs are linear in the policy features; the filter tree
    is the consistent choice of the paper.

    Parameters
    ----------
    degree : int
        Degree of the polynomial feature map.
    alpha : float
        Ridge penalty on standardised features.
    max_features : int
        Cap on the expanded feature count.
    """

    def __init__(
        self, degree: int = 2, alpha: float = 1.0, max_features: int = 1000
    ) -> None:
        self.degree = degree
        self.alpha = alpha
        self.max_features = max_features

    def fit(self, Z: np.ndarray, C: np.ndarray) -> Self:
        C = np.asarray(C, dtype=float)
        self.n_actions_ = C.shape[1]
        Z = np.asarray(Z, dtype=float).reshape(C.shape[0], -1)
        if Z.shape[1] == 0 or self.n_actions_ == 1 or np.ptp(C, axis=0).max() == 0:
            self.constant_ = constant_action(C)
            return self
        self.constant_ = None
        self.features_ = PolicyFeatures(self.degree, self.max_features)
        F = self.features_.fit_transform(Z)
        self.model_ = Ridge(alpha=self.alpha).fit(F, C)
        return self

    def predict(self, Z: np.ndarray) -> np.ndarray:
        Z = np.asarray(Z, dtype=float)
        n = Z.shape[0]
        if self.constant_ is not None:
            return np.full(n, self.constant_, dtype=np.intp)
        pred = self.model_.predict(self.features_.transform(Z.reshape(n, -1)))
        return np.argmin(pred.reshape(n, -1), axis=1).astype(np.intp)
