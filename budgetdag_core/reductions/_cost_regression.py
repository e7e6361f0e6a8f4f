"""Cost regression (CSOAA-style): regress each action's cost, pick the argmin."""

from __future__ import annotations

from typing import Any, Self

import numpy as np
from sklearn.base import BaseEstimator, clone
from sklearn.linear_model import Ridge

from ._base import (
    LEARNER_CONSTRAINTS,
    PolicyFeatures,
    check_fitted_learner,
    check_learner_settings,
    check_linear,
    check_row_weights,
    constant_action,
)


class CostRegression(BaseEstimator):
    """Cost-sensitive classifier by one regression of each action's cost (CSOAA).

    By default one ridge regression for all actions (one solve): fast, and exact
    when costs are linear in the policy features; the filter tree is the
    consistent choice of the paper. With ``estimator`` (e.g.
    ``HistGradientBoostingRegressor``) one clone is fitted per action, so costs
    may be any function the regressor can learn.

    Parameters
    ----------
    degree : int
        Degree of the polynomial feature map, 1 to ``MAX_LEARNER_DEGREE`` (4).
    alpha : float
        Ridge penalty on standardised features (>= 0).
    max_features : int
        Cap on the expanded feature count.
    estimator : regressor, optional
        Cloned once per action instead of the shared ridge regression (``alpha``
        is then unused). Tree models need no polynomial map: use ``degree=1``.
        Actions whose cost is the same on every row get no model.

    Examples
    --------
    >>> import numpy as np
    >>> z = np.linspace(0, 2, 80).reshape(-1, 1)
    >>> C = np.column_stack([z[:, 0] > 1, z[:, 0] <= 1]).astype(float)
    >>> learner = CostRegression(degree=1).fit(z, C)
    >>> learner.predict(np.array([[0.2], [1.8]]))
    array([0, 1])
    """

    _parameter_constraints: dict = {
        name: LEARNER_CONSTRAINTS[name] for name in ("degree", "alpha", "max_features")
    }

    def __init__(
        self,
        degree: int = 2,
        alpha: float = 1.0,
        max_features: int = 1000,
        estimator: Any = None,
    ) -> None:
        self.degree = degree
        self.alpha = alpha
        self.max_features = max_features
        self.estimator = estimator

    def fit(
        self, Z: np.ndarray, C: np.ndarray, sample_weight: np.ndarray | None = None
    ) -> Self:
        """Regress the action costs ``C`` (n_samples, n_actions) on the policy
        inputs ``Z`` (n_samples, d).

        ``sample_weight`` (n_samples,), >= 0: a row counts that many times
        (weighted scaling and ridge; ``estimator`` must then accept
        ``sample_weight`` in its ``fit``).
        """
        check_learner_settings(self)
        C = np.asarray(C, dtype=float)
        self.n_actions_ = C.shape[1]
        Z = np.asarray(Z, dtype=float).reshape(C.shape[0], -1)
        w = check_row_weights(sample_weight, len(C))
        fit_kw: dict[str, Any] = {}
        if w is not None:
            if w.sum() == 0:
                raise ValueError("sample_weight is 0 on every row.")
            keep = w > 0  # a row of weight 0 is not there
            Z, C, w = Z[keep], C[keep], w[keep]
            fit_kw = {"sample_weight": w}
        if Z.shape[1] == 0 or self.n_actions_ == 1 or np.ptp(C, axis=0).max() == 0:
            self.constant_ = constant_action(C, w)
            return self
        self.constant_ = None
        # Regress costs mapped to [0, 1]: the argmin is unchanged (a common shift
        # and a positive scale), and huge costs (1e308) cannot overflow the fit.
        low, span = C.min(), np.ptp(C)
        C = (C - low) / span
        self.features_ = PolicyFeatures(self.degree, self.max_features)
        F = self.features_.fit_transform(Z, w)
        if self.estimator is None:
            self.model_ = Ridge(alpha=self.alpha).fit(F, C, **fit_kw)
            return self
        # One regressor per action; a constant column needs none (its mean).
        self.model_ = [
            float(C[0, a])
            if np.ptp(C[:, a]) == 0
            else clone(self.estimator).fit(F, C[:, a], **fit_kw)
            for a in range(self.n_actions_)
        ]
        return self

    def check_integrity(self, where: str, n_actions: int, n_inputs: int) -> None:
        """Raise ``ValueError`` unless this is a fitted regression of
        ``n_actions`` costs on ``n_inputs`` policy inputs (a loaded model)."""
        width = check_fitted_learner(self, where, n_actions, n_inputs)
        if width is not None:
            check_linear(self.model_, f"{where}.model_", n_actions, width)

    #: What :meth:`action_scores` measures (shown beside the scores).
    score_name = "predicted cost (scaled, lower is better)"

    def action_scores(self, Z: np.ndarray) -> np.ndarray:
        """Each action's regressed cost, (n_samples, n_actions), on the
        training costs' scale mapped to 0..1; the predicted action has the
        lowest. A constant policy scores its action 0 and the others 1."""
        Z = np.asarray(Z, dtype=float)
        n = Z.shape[0]
        if self.constant_ is not None:
            out = np.ones((n, self.n_actions_))
            out[:, self.constant_] = 0.0
            return out
        return self._costs(Z.reshape(n, -1))

    def predict(self, Z: np.ndarray) -> np.ndarray:
        Z = np.asarray(Z, dtype=float)
        n = Z.shape[0]
        if self.constant_ is not None:
            return np.full(n, self.constant_, dtype=np.intp)
        return np.argmin(self._costs(Z.reshape(n, -1)), axis=1).astype(np.intp)

    def _costs(self, Z: np.ndarray) -> np.ndarray:
        n = Z.shape[0]
        F = self.features_.transform(Z)
        if isinstance(self.model_, list):
            pred = np.column_stack(
                [
                    np.full(n, m) if isinstance(m, float) else m.predict(F)
                    for m in self.model_
                ]
            )
        else:
            pred = self.model_.predict(F)
        return pred.reshape(n, -1)
