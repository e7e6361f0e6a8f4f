"""What-if's acquisition helpers: the grid found, subset steps, the score table."""

from __future__ import annotations

import numpy as np
import pandas as pd

from budgetdag_core import BudgetDAGClassifier, SensorSpec, path_of, toy_dataset
from budgetdag_core.datasets import digits_dataset
from ui.acquisition import columns_grid, purchase_steps, scores_table, sensor_grid


def test_the_grid_comes_from_image_names_only():
    digits = digits_dataset()
    grid = sensor_grid(digits.spec)
    assert grid.shape == (8, 8) and grid[2, 5] == "r2c5"
    # Image blocks of pixel columns are drawn on the same grid.
    cols = [f"pixel_{r}_{c}" for r in range(4) for c in range(4)]
    blocks = SensorSpec(
        {"top": cols[:8], "bottom": cols[8:]}, {"top": 1.0, "bottom": 1.0}
    )
    assert sensor_grid(blocks).shape == (4, 4)
    # Sixteen columns without indices, or numbered features, are no image.
    plain = SensorSpec.per_column(list("abcdefghijklmnop"))
    assert sensor_grid(plain) is None
    assert sensor_grid(SensorSpec.per_column([f"f{i}" for i in range(36)])) is None
    assert sensor_grid(SensorSpec.per_column([f"px{i}" for i in range(16)])).shape == (
        4,
        4,
    )
    assert columns_grid(list("abcde"), 2).tolist() == [
        ["a", "b"],
        ["c", "d"],
        ["e", None],
    ]


def test_a_subset_models_purchases_are_cut_into_its_steps():
    rng = np.random.default_rng(0)
    n = 300
    y = rng.integers(0, 2, n)
    X = pd.DataFrame({f"s{i}": y * (0.5 + i) + rng.normal(size=n) for i in range(6)})
    spec = SensorSpec.per_column(list(X.columns))
    model = BudgetDAGClassifier(
        spec, n_subsets=3, cost_scale=0.01, cv=2, random_state=0
    ).fit(X, y)
    trace = model.trace(X)
    visited = (model.route(X).path >= 0).sum(axis=1)
    for acquired, n_states in zip(trace["acquired"], visited, strict=True):
        steps = purchase_steps(model, tuple(acquired))
        assert sum(map(len, steps)) == len(acquired)
        assert all(isinstance(s, tuple) for s in steps)
        # One step per DAG edge on the way to the stop state.
        assert len(steps) == n_states - 1


def test_the_score_table_names_the_action_taken_and_the_best_others():
    demo = toy_dataset(300, 10)
    model = BudgetDAGClassifier(demo.spec, cost_scale=0.03, cv=3, random_state=0)
    model.fit(demo.X_train, demo.y_train)
    result = path_of(model, demo.X_test.iloc[0])
    table = scores_table(result)
    assert len(table) == len(result.decisions)
    assert table["taken"].iloc[-1] == "stop"
    assert table.attrs["score_name"] == "chance to win the tournament"
    first = result.scores[0]
    others = first.drop(table["taken"].iloc[0].replace("buy ", "acquire ", 1))
    assert table["score 1"].iloc[0] == others.max()
