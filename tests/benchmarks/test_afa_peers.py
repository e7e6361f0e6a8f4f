"""The AFA peers of the benchmarks (AACO, greedy CMI) on toys with known answers."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

from _aaco import AACO  # noqa: E402
from _afa_common import (  # noqa: E402
    MaskedClassifier,
    SensorColumns,
    first_acquisitions,
    nearest_rows,
)
from _greedy_cmi import GreedyCMI  # noqa: E402

from budgetdag_core import SensorSpec  # noqa: E402

FAST_HGB = {"max_iter": 60, "early_stopping": False, "learning_rate": 0.2}


def toy(n: int, seed: int, costs: dict[str, float] | None = None):
    """strong (one column, nearly the label), weak (noisier), noise, and a
    two-column sensor whose sum carries the label."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, size=n)
    sign = 2 * y - 1
    X = pd.DataFrame(
        {
            "s": sign + rng.normal(0, 0.2, n),
            "w": sign + rng.normal(0, 1.5, n),
            "z": rng.normal(0, 1, n),
            "p1": sign * 0.5 + rng.normal(0, 1, n),
            "p2": sign * 0.5 + rng.normal(0, 1, n),
        }
    )
    groups = {"strong": ["s"], "weak": ["w"], "noise": ["z"], "pair": ["p1", "p2"]}
    spec = SensorSpec(groups, {**dict.fromkeys(groups, 1.0), **(costs or {})})
    return X.to_numpy(), y, SensorColumns.from_spec(spec)


def xor_toy(n: int, seed: int):
    """y = a XOR b: a and b are worthless alone, decisive together; two noise
    sensors."""
    rng = np.random.default_rng(seed)
    a, b = rng.integers(0, 2, size=(2, n))
    X = np.column_stack(
        [a + rng.normal(0, 0.1, n), b + rng.normal(0, 0.1, n), rng.random((n, 2))]
    )
    spec = SensorSpec.per_column(["a", "b", "n1", "n2"])
    return X, a ^ b, SensorColumns.from_spec(spec)


def test_sensor_columns_and_costs():
    _, _, sensors = toy(10, 0, {"pair": 3.0})
    assert sensors.names == ("strong", "weak", "noise", "pair")
    state = np.array([[False, False, False, True], [True, True, False, False]])
    assert sensors.column_mask(state).tolist() == [
        [False, False, False, True, True],
        [True, True, False, False, False],
    ]
    assert sensors.cost(state).tolist() == [3.0, 2.0]


@pytest.mark.parametrize("engine", ["mlp", "hgb"])
def test_masked_classifier_reads_only_observed_columns(engine):
    X, y, sensors = toy(300, 0)
    params = FAST_HGB if engine == "hgb" else {"max_iter": 30}
    clf = MaskedClassifier(sensors, engine=engine, n_masks=4, params=params)
    clf.fit(X, y)
    state = np.zeros((50, 4), dtype=bool)
    state[:, 1] = True
    cols = sensors.column_mask(state)
    scrambled = np.where(cols, X[:50], np.random.default_rng(1).normal(size=(50, 5)))
    assert np.array_equal(
        clf.predict_proba(X[:50], cols), clf.predict_proba(scrambled, cols)
    )


def test_out_of_fold_scores_come_from_models_that_did_not_see_the_row():
    X, y, sensors = toy(200, 0)
    clf = MaskedClassifier(sensors, engine="hgb", oof_folds=2, params=FAST_HGB)
    clf.fit(X, y)
    cols = np.ones((200, 5), dtype=bool)
    rows = np.arange(200)
    oof = clf.predict_proba_rows(X, cols, rows)
    for k, model in enumerate(clf.fold_models_):
        held = clf.fold_of_ == k
        assert np.allclose(oof[held], model.predict_proba(X[held]))


def test_nearest_rows_measure_only_observed_columns():
    Z = np.array([[0.0, 9.0], [1.0, 0.0], [5.0, 5.0]])
    query = np.array([[0.9, 100.0]])
    assert nearest_rows(Z, query, np.array([[True, False]]), 2).tolist() == [[1, 0]]
    assert nearest_rows(Z, query, np.array([[True, True]]), 1).tolist() == [[0]]


@pytest.fixture(scope="module")
def xor_aaco():
    X, y, sensors = xor_toy(600, 0)
    clf = MaskedClassifier(sensors, engine="hgb", oof_folds=2, params=FAST_HGB)
    return AACO(clf.fit(X, y), acquisition_cost=0.02).fit(X, y), sensors


def test_aaco_buys_the_xor_pair_first(xor_aaco):
    # Non-greedy: a and b are worthless alone, so a one-step rule cannot tell
    # them from noise; AACO's candidate masks hold the pair and win with it.
    aaco, _ = xor_aaco
    X, y, _ = xor_toy(200, 1)
    rollout = aaco.rollout(X, max_cost=2)
    first_two = np.sort(rollout.acquired[:, :2], axis=1)
    assert (first_two == [0, 1]).all(axis=1).mean() > 0.9
    points = rollout.budget_points(y)
    assert points["error"].iloc[2] < 0.1 < points["error"].iloc[1]


def test_aaco_stopping_rule_follows_the_acquisition_cost(xor_aaco):
    aaco, _ = xor_aaco
    X, y, _ = xor_toy(100, 2)
    aaco.acquisition_cost = 50.0  # nothing is worth its cost
    stop = aaco.rollout(X, force=False)
    assert stop.cost[:, -1].max() == 0.0 and stop.wants_stop[:, 0].all()
    aaco.acquisition_cost = 0.02
    go = aaco.rollout(X, force=False)
    point = go.own_stop_point(y)
    assert point["avg_cost"].iloc[0] >= 2.0 and point["error"].iloc[0] < 0.1


def fitted_greedy(costs=None):
    X, y, sensors = toy(600, 0, costs)
    clf = MaskedClassifier(sensors, engine="hgb", params=FAST_HGB).fit(X, y)
    return GreedyCMI(clf, k_neighbors=16).fit(X, y), sensors


def test_greedy_buys_the_most_informative_sensor_per_unit_cost():
    X, y, _ = toy(150, 3)
    greedy, sensors = fitted_greedy()
    rollout = greedy.rollout(X, max_cost=1)
    assert first_acquisitions(rollout, sensors.names).get("strong", 0) > 0.95
    # The strong sensor at 30 times the cost: the weak one is worth more per unit.
    greedy, sensors = fitted_greedy({"strong": 30.0})
    rollout = greedy.rollout(X, max_cost=1)
    assert first_acquisitions(rollout, sensors.names).get("strong", 0) < 0.05


def test_greedy_thresholds_span_nothing_to_the_forced_end():
    X, y, _ = toy(150, 4)
    greedy, sensors = fitted_greedy({"pair": 2.0})
    rollout = greedy.rollout(X)
    # Every row ends with every sensor: 1 + 1 + 1 + 2 (the pair's two columns).
    assert np.allclose(rollout.cost[:, -1], 5.0)
    assert (rollout.acquired >= 0).all()
    points = rollout.threshold_points(y)
    assert points["avg_cost"].min() == 0.0
    assert points["avg_cost"].max() == pytest.approx(5.0)
    assert points.loc[points["avg_cost"].idxmax(), "error"] < 0.05
    budget = rollout.budget_points(y)
    assert list(budget["avg_cost"]) == sorted(budget["avg_cost"])
