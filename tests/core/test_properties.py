"""Hypothesis property tests of the whole estimator on small random problems."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from budgetdag_core import BudgetDAGClassifier, SensorSpec

FAST = settings(
    max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


def _problem(seed: int, n_sensors: int, n: int = 90):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, size=n)
    cols = {}
    for m in range(n_sensors):
        strength = rng.uniform(0, 2)
        cols[f"x{m}"] = y * strength + rng.normal(size=n)
    return pd.DataFrame(cols), y


@FAST
@given(
    seed=st.integers(0, 10_000),
    costs=st.lists(st.floats(0, 5), min_size=2, max_size=4),
    cost_scale=st.floats(0, 0.5),
)
def test_cost_is_exactly_the_sum_of_acquired_sensor_costs(seed, costs, cost_scale):
    X, y = _problem(seed, len(costs))
    spec = SensorSpec.per_column(list(X.columns), cost=dict(zip(X.columns, costs)))
    model = BudgetDAGClassifier(
        spec, cost_scale=cost_scale, policy_degree=1, cv=3, random_state=seed
    ).fit(X, y)
    tr = model.trace(X)
    for acquired, cost in zip(tr["acquired"], tr["cost"], strict=True):
        assert len(set(acquired)) == len(acquired)
        assert cost == pytest.approx(sum(spec.costs[s] for s in acquired), abs=1e-12)
        assert cost <= spec.total_cost + 1e-9
    assert (tr["n_sensors"] == tr["acquired"].map(len)).all()


@FAST
@given(seed=st.integers(0, 10_000), n_sensors=st.integers(1, 4))
def test_huge_cost_scale_acquires_nothing(seed, n_sensors):
    X, y = _problem(seed, n_sensors)
    spec = SensorSpec.per_column(list(X.columns), cost=1.0)
    model = BudgetDAGClassifier(
        spec, cost_scale=1e6, policy_degree=1, cv=3, random_state=seed
    ).fit(X, y)
    tr = model.trace(X)
    assert (tr["n_sensors"] == 0).all()
    assert (tr["cost"] == 0).all()
    # the no-sensor state predicts the training majority class
    values, counts = np.unique(y, return_counts=True)
    assert (tr["prediction"] == values[counts.argmax()]).all()


@FAST
@given(seed=st.integers(0, 10_000), n_noise=st.integers(1, 3))
def test_free_perfect_sensor_is_acquired(seed, n_noise):
    rng = np.random.default_rng(seed)
    n = 90
    y = rng.integers(0, 2, size=n)
    X = pd.DataFrame({f"noise{i}": rng.normal(size=n) for i in range(n_noise)})
    X["perfect"] = y + 0.01 * rng.normal(size=n)
    spec = SensorSpec.per_column(list(X.columns), cost=1.0)
    model = BudgetDAGClassifier(
        spec, cost_scale=0.0, policy_degree=1, cv=3, random_state=seed
    ).fit(X, y)
    tr = model.trace(X)
    assert tr["acquired"].map(lambda a: "perfect" in a).all()
    assert (tr["prediction"] == y).all()
