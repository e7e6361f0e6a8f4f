"""The Bayes test of the sparse DAG (issue 30): 8 sensors, one at a time, and
the optimum buys a worthless-alone sensor first; also the 3-sensor problem of
``test_optimality`` and the 4-sensor routing problem of
``test_optimality_routing`` grown as sparse DAGs.

A cheap context K (independent of the class) says which of A and B carries the
class (95 % clean, the other a coin); C is weakly informative; D0..D3 are cheap
coins. Exact dynamic programming over the observed values gives the Bayes
cost; the sparse DAG (``dag="sparse"``, grown from the data) must reach it as
data grows, buying K first: no one-step score sees K (alone it says nothing),
only the routing value of the growth does.
"""

from __future__ import annotations

import itertools
from functools import cache

import numpy as np
import pandas as pd
import pytest

from budgetdag_core import BudgetDAGClassifier, SensorSpec
from budgetdag_core.strategies._growth import SparseSensorDAG

from .binary_sensors import BinarySensorProblem

SENSORS = ("K", "A", "B", "C", "D0", "D1", "D2", "D3")
COSTS = {"K": 0.02, "A": 0.08, "B": 0.08, "C": 0.05} | {f"D{i}": 0.01 for i in range(4)}
SPEC = SensorSpec.per_column(list(SENSORS), cost=COSTS)
CLEAN, WEAK = 0.95, 0.7


def p_point(y: int, g: tuple[int, ...]) -> float:
    """Joint probability of the class y and the sensor values g."""
    k, a, b, c = g[:4]
    clean = a if k == 0 else b
    p = 0.5 * 0.5 * 0.5 * 0.5**4  # class, context, the coin, the D coins
    p *= CLEAN if clean == y else 1 - CLEAN
    p *= WEAK if c == y else 1 - WEAK
    return p


PROBLEM = BinarySensorProblem(SENSORS, COSTS, p_point)
GRID = PROBLEM.grid
bayes_value = PROBLEM.bayes_value
exact_expected_loss = PROBLEM.exact_expected_loss


def sample(n: int, seed: int) -> tuple[pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    k = rng.integers(0, 2, n)
    clean = np.where(rng.random(n) < CLEAN, y, 1 - y)
    coin = rng.integers(0, 2, n)
    c = np.where(rng.random(n) < WEAK, y, 1 - y)
    cols = {
        "K": k,
        "A": np.where(k == 0, clean, coin),
        "B": np.where(k == 0, coin, clean),
        "C": c,
    } | {f"D{i}": rng.integers(0, 2, n) for i in range(4)}
    return pd.DataFrame(cols, dtype=float), y


@cache
def fitted(n: int, seed: int, dag: str = "sparse") -> BudgetDAGClassifier:
    X, y = sample(n, seed)
    return BudgetDAGClassifier(
        SPEC, dag=dag, cv=3, random_state=seed, max_states=200
    ).fit(X, y)


def test_the_optimum_buys_the_worthless_context_first() -> None:
    assert bayes_value(()) == pytest.approx(
        COSTS["K"] + sum(0.5 * bayes_value(((0, v),)) for v in (0, 1))
    )


@pytest.mark.parametrize("dag", ["sparse", "routed"])
@pytest.mark.parametrize("seed", [0, 1])
def test_sparse_dag_reaches_the_bayes_optimum(seed: int, dag: str) -> None:
    """The grown DAG and the routed one (the routing sensor K, then one
    order per value of K: the per-example choice) both reach the optimum."""
    bayes = bayes_value(())
    small = exact_expected_loss(fitted(300, seed, dag)) - bayes
    large = exact_expected_loss(fitted(6000, seed, dag)) - bayes
    assert min(small, large) > -1e-9
    assert large < 0.003, (small, large)
    assert small >= large - 1e-9, (small, large)


@pytest.mark.parametrize("dag", ["sparse", "routed"])
def test_sparse_dag_buys_the_context_then_the_sensor_it_names(dag: str) -> None:
    model = fitted(6000, 0, dag)
    assert isinstance(model.sensor_dag_, SparseSensorDAG)
    assert model.strategy_ == ("grown" if dag == "sparse" else dag)
    points = pd.DataFrame(GRID, columns=list(SENSORS), dtype=float)
    acquired = model.trace(points)["acquired"]
    for g, a in zip(GRID, acquired, strict=True):
        assert a[:2] == ("K", "A" if g[0] == 0 else "B"), a


# ------------------------------------------- the 3- and 4-sensor problems
def _sparse_gaps(problem, sizes: tuple[int, ...], seeds: int) -> np.ndarray:
    """Excess expected loss of ``dag="sparse"`` over the Bayes optimum of a
    small problem's module (its ``sample``, ``SPEC``, ``bayes_value`` and
    ``exact_expected_loss``), per seed and training size."""
    out = np.zeros((seeds, len(sizes)))
    for seed in range(seeds):
        for j, n in enumerate(sizes):
            X, y = problem.sample(n, seed)
            model = BudgetDAGClassifier(
                problem.SPEC, dag="sparse", cost_scale=1.0, cv=3, random_state=seed
            ).fit(X, y)
            assert isinstance(model.sensor_dag_, SparseSensorDAG)
            out[seed, j] = problem.exact_expected_loss(model) - problem.bayes_value(())
    return out


def test_sparse_dag_reaches_the_three_sensor_optimum() -> None:
    from . import test_optimality as problem  # the adaptive 3-sensor problem

    gaps = _sparse_gaps(problem, (300, 8000), seeds=3)
    assert gaps.min() > -1e-9
    assert gaps[:, -1].max() < 0.002, gaps
    assert gaps[:, 0].mean() >= gaps[:, -1].mean(), gaps


def test_sparse_dag_reaches_the_four_sensor_routing_optimum() -> None:
    from . import test_optimality_routing as problem  # K names A or B

    gaps = _sparse_gaps(problem, (300, 6000), seeds=3)
    assert gaps.min() > -1e-9
    assert gaps[:, -1].max() < 0.003, gaps
    assert gaps[:, 0].mean() >= gaps[:, -1].mean(), gaps


# ------------------------------------- the default beyond 12 sensors (auto)
#: Five more cheap coins make 13 sensors: ``dag="auto"`` then builds both
#: many-sensor strategies and keeps one on validation rows. Independent coins
#: never move the posterior, so buying one only adds its cost: the Bayes
#: optimum is the 8-sensor problem's.
COINS = tuple(f"E{i}" for i in range(5))
WIDE_SPEC = SensorSpec.per_column(
    list(SENSORS + COINS), cost=COSTS | dict.fromkeys(COINS, 0.01)
)


def wide_sample(n: int, seed: int) -> tuple[pd.DataFrame, np.ndarray]:
    X, y = sample(n, seed)
    rng = np.random.default_rng([seed, 13])
    return X.assign(**{c: rng.integers(0, 2, n).astype(float) for c in COINS}), y


def wide_expected_loss(model: BudgetDAGClassifier) -> float:
    """Exact expected error + cost over all 2^13 sensor values."""
    grid = np.array(list(itertools.product((0, 1), repeat=len(WIDE_SPEC.names))))
    trace = model.trace(pd.DataFrame(grid, columns=list(WIDE_SPEC.names), dtype=float))
    predicted, cost = trace["prediction"].to_numpy(), trace["cost"].to_numpy()
    weight = 0.5 ** len(COINS)
    return sum(
        weight
        * p_point(y, tuple(g[: len(SENSORS)]))
        * (float(predicted[i] != y) + cost[i])
        for i, g in enumerate(grid)
        for y in (0, 1)
    )


@pytest.mark.parametrize("seed", [0, 1])
def test_default_strategy_choice_reaches_the_routing_optimum(seed: int) -> None:
    """The default's validation keeps a strategy that routes (the chain,
    one order for every row, cannot) and reaches the Bayes optimum."""
    gaps = []
    for n in (300, 6000):
        X, y = wide_sample(n, seed)
        model = BudgetDAGClassifier(WIDE_SPEC, cv=3, random_state=seed).fit(X, y)
        assert isinstance(model.sensor_dag_, SparseSensorDAG)
        gaps.append(wide_expected_loss(model) - bayes_value(()))
    assert min(gaps) > -1e-9
    assert gaps[-1] < 0.003, gaps
    assert model.strategy_ == "routed", model.strategy_choice_.table()
