"""Exact dynamic programming over small problems of binary sensors, for the
Bayes tests (not a test module)."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from functools import cache

import numpy as np
import pandas as pd

from budgetdag_core import BudgetDAGClassifier


class BinarySensorProblem:
    """Sensors of one binary value each and a binary class, with a known joint
    distribution: the Bayes-optimal adaptive policy's expected loss (error +
    costs) by exact dynamic programming over the observed values, and a
    model's exact expected loss on every point of the grid.

    Parameters
    ----------
    sensors : sequence of str
        The sensors (one column each), in the order of a grid point's values.
    costs : mapping of str to float
        Each sensor's cost.
    p_point : callable ``(y, g) -> float``
        The joint probability of class ``y`` and the sensor values ``g``.
    """

    def __init__(
        self,
        sensors: Sequence[str],
        costs: Mapping[str, float],
        p_point: Callable[[int, tuple[int, ...]], float],
    ) -> None:
        self.sensors = tuple(sensors)
        self.costs = dict(costs)
        self.p_point = p_point
        self.grid = list(itertools.product((0, 1), repeat=len(self.sensors)))
        self.bayes_value = cache(self._bayes_value)

    def _bayes_value(self, observed: tuple[tuple[int, int], ...]) -> float:
        """Optimal expected remaining loss given observed (sensor index, value)."""
        seen = dict(observed)
        match = [g for g in self.grid if all(g[m] == v for m, v in seen.items())]
        p_y = np.array([sum(self.p_point(y, g) for g in match) for y in (0, 1)])
        total = p_y.sum()
        best = 1.0 - p_y.max() / total
        for m, name in enumerate(self.sensors):
            if m in seen:
                continue
            expect = 0.0
            for v in (0, 1):
                sub = [g for g in match if g[m] == v]
                p_v = sum(self.p_point(y, g) for g in sub for y in (0, 1)) / total
                if p_v > 0:
                    new = tuple(sorted({**seen, m: v}.items()))
                    expect += p_v * self.bayes_value(new)
            best = min(best, self.costs[name] + expect)
        return best

    def exact_expected_loss(self, model: BudgetDAGClassifier) -> float:
        """The model's expected error + cost under the known distribution."""
        points = pd.DataFrame(self.grid, columns=list(self.sensors), dtype=float)
        trace = model.trace(points)
        predicted = trace["prediction"].to_numpy()
        cost = trace["cost"].to_numpy()
        return sum(
            self.p_point(y, g) * (float(predicted[i] != y) + cost[i])
            for i, g in enumerate(self.grid)
            for y in (0, 1)
        )
