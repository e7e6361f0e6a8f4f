"""The Bayes test with a routing sensor: the optimum buys a worthless-alone
sensor first (issue 30).

A cheap context K (independent of the class) says which of two sensors carries
the class: with K = 0 sensor A is the class 95 % of the time and B is a coin,
with K = 1 the other way round; C is a weak sensor that always helps a little.
The Bayes-optimal adaptive policy (exact dynamic programming over the observed
values) buys K, then the sensor it names. The state {K}'s classifier says the
same for every row (K alone is worthless), so a policy that sees only
probabilities cannot route there; the default inputs (``"auto"``) add the
acquired values at such states and reach the optimum as data grows.
"""

from __future__ import annotations

from functools import cache

import numpy as np
import pandas as pd
import pytest
from sklearn.tree import DecisionTreeClassifier

from budgetdag_core import BudgetDAGClassifier, SensorSpec

from .binary_sensors import BinarySensorProblem

SENSORS = ("K", "A", "B", "C")
COSTS = {"K": 0.02, "A": 0.08, "B": 0.08, "C": 0.05}
SPEC = SensorSpec.per_column(list(SENSORS), cost=COSTS)
CLEAN, WEAK = 0.95, 0.7


def p_point(y: int, k: int, a: int, b: int, c: int) -> float:
    """Joint probability of (y, K, A, B, C)."""
    p = 0.5 * 0.5  # class, context
    clean, coin = (a, b) if k == 0 else (b, a)
    p *= CLEAN if clean == y else 1 - CLEAN
    p *= 0.5  # the other sensor is a coin
    p *= WEAK if c == y else 1 - WEAK
    return p


PROBLEM = BinarySensorProblem(SENSORS, COSTS, lambda y, g: p_point(y, *g))
GRID = PROBLEM.grid  # (k, a, b, c)
bayes_value = PROBLEM.bayes_value
exact_expected_loss = PROBLEM.exact_expected_loss


def sample(n: int, seed: int) -> tuple[pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    k = rng.integers(0, 2, n)
    clean = np.where(rng.random(n) < CLEAN, y, 1 - y)
    coin = rng.integers(0, 2, n)
    a = np.where(k == 0, clean, coin)
    b = np.where(k == 0, coin, clean)
    c = np.where(rng.random(n) < WEAK, y, 1 - y)
    X = pd.DataFrame({"K": k, "A": a, "B": b, "C": c}, dtype=float)
    return X, y


def fit(n: int, seed: int, bank=None, **params) -> BudgetDAGClassifier:
    X, y = sample(n, seed)
    return BudgetDAGClassifier(
        SPEC,
        cost_scale=1.0,
        # No split for a worthless sensor: the classifier of {K} is the prior
        # for every row (a fully grown tree would leak K's value through
        # sampling noise in its leaf frequencies, which a policy can read).
        classifier=DecisionTreeClassifier(random_state=0, min_impurity_decrease=0.002),
        cv=5,
        random_state=seed,
        **params,
    ).fit(X, y, bank=bank)


def test_the_optimum_buys_the_worthless_context_first() -> None:
    buy_k = COSTS["K"] + sum(
        0.5 * bayes_value(((0, v),)) for v in (0, 1)
    )  # K is a fair coin, independent of the class
    assert bayes_value(()) == pytest.approx(buy_k)
    for name in ("A", "B", "C"):
        m = SENSORS.index(name)
        others = COSTS[name] + sum(
            sum(p_point(y, *g) for g in GRID if g[m] == v for y in (0, 1))
            * bayes_value(((m, v),))
            for v in (0, 1)
        )
        assert others > bayes_value(()) + 0.02


@cache
def gaps() -> dict[str, np.ndarray]:
    bayes = bayes_value(())
    sizes = (200, 20000)
    out = {"auto": np.zeros((3, 2)), "proba": np.zeros((3, 2))}
    for seed in range(3):
        for j, n in enumerate(sizes):
            auto = fit(n, seed)
            out["auto"][seed, j] = exact_expected_loss(auto) - bayes
            proba = fit(n, seed, bank=auto.bank_, policy_features="proba")
            out["proba"][seed, j] = exact_expected_loss(proba) - bayes
    return out


def test_default_inputs_reach_the_routing_optimum() -> None:
    g = gaps()["auto"]
    assert g.min() > -1e-9
    assert g[:, -1].max() < 0.003, g
    assert g[:, 0].mean() >= g[:, -1].mean(), g


def test_probabilities_alone_cannot_route() -> None:
    """At {K} the classifier says 1/2 for every row: without K's value the
    policy cannot follow it, and stays well above the optimum."""
    assert gaps()["proba"][:, -1].min() > 0.02, gaps()["proba"]


def test_default_buys_the_context_first_and_flags_its_state() -> None:
    model = fit(20000, 0)
    k_state = model.state_indices([("K",)])[0]
    assert model.value_states_[k_state]
    assert model.value_states_.sum() == 1
    points = pd.DataFrame(GRID, columns=list(SENSORS), dtype=float)
    acquired = model.trace(points)["acquired"]
    assert all(a[:1] == ("K",) for a in acquired), list(acquired)
    for g, a in zip(GRID, acquired, strict=True):
        assert a[1] == ("A" if g[0] == 0 else "B")
