"""Folds for small data: the ``cv`` a fit uses when the data hold fewer rows
per class (or in all) than ``cv`` asks.

The rule: a classifier whose smallest class has ``m`` rows, ``2 <= m < cv``,
is fitted with ``cv = m`` folds (each fold's held-out part can still hold
every class); a regressor on ``n < cv`` rows (``n >= 2``) with ``cv = n``.
The folds used are in the fitted ``cv_``; ``get_params()["cv"]`` is left as
given (scikit-learn's rule). A class of one row is still refused, naming it.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.base import clone
from sklearn.utils.validation import column_or_1d


def lowered_cv(est: Any, y: Any) -> int | None:
    """The folds the data allow where fewer than ``est.cv``; None: ``est.cv``
    (or data the target check refuses with its own message)."""
    try:
        y = column_or_1d(y, warn=False)
    except (TypeError, ValueError):
        return None
    if hasattr(est, "loss_matrix"):  # a classifier: the smallest class counts
        try:
            counts = np.unique(y, return_counts=True)[1]
        except TypeError:  # mixed label types: check_labels says so
            return None
        smallest = int(counts.min()) if len(counts) > 1 else 0
    else:
        smallest = len(y)
    return smallest if 2 <= smallest < est.cv else None


class SmallDataMixin:
    """``_fit_with_cv``: the estimators' fit with fewer folds."""

    def _fit_as_given(self, X: Any, y: Any, **fit_kwargs: Any) -> Any:
        return self._fit(X, y, **fit_kwargs)

    def _fit_with_cv(self, cv: int, X: Any, y: Any, **fit_kwargs: Any) -> Any:
        """Fit with ``cv`` folds (a clone's fit; its fitted attributes are
        copied onto this estimator, ``cv_`` among them)."""
        model = clone(self).set_params(cv=cv)
        model._fit_as_given(X, y, **fit_kwargs)
        params = set(self.get_params(deep=False))
        for name, value in vars(model).items():
            if name not in params:
                setattr(self, name, value)
        self.cv_ = cv
        return self
