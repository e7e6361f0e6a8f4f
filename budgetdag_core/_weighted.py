"""Weighted means shared by the bank's and the strategies' validation
choices (a row of weight w counts as w copies)."""

from __future__ import annotations

import numpy as np


def weighted_mean_se(values: np.ndarray, weight: np.ndarray) -> tuple[float, float]:
    """The mean of ``values`` and its standard error, value i counting
    ``weight[i]`` times (the standard error of that many copies).

    Examples
    --------
    >>> weighted_mean_se(np.array([1.0, 3.0]), np.array([1.0, 1.0]))
    (2.0, 1.0)
    """
    total = float(np.sum(weight))
    mean = float(np.average(values, weights=weight))
    if total <= 1:
        return mean, 0.0
    var = float(np.sum(weight * (values - mean) ** 2)) / (total - 1)
    return mean, float(np.sqrt(var / total))
