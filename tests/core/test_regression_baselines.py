"""A regressor's baselines (issue 56): the oracle bound on a row loss, the
fixed subsets and their hull, and the spread cascade."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from budgetdag_core import BudgetDAGRegressor, toy_dataset
from budgetdag_core.tradeoff import (
    FRAME_COLUMNS,
    fit_spread_cascade,
    loss_frontier,
    regression_baseline_frame,
    regression_cascade_points,
    regression_view,
    train_chosen_hull,
)


def frontier_at(frontier: pd.DataFrame, cost: float) -> float:
    return float(np.interp(cost, frontier["avg_cost"], frontier["loss"]))


@st.composite
def problems(draw):
    n = draw(st.integers(1, 8))
    k = draw(st.integers(1, 5))
    # Zero or at least 1e-6: a loss drop over a cost step near the smallest
    # floats overflows any slope (a test of its own below covers one).
    values = st.one_of(st.just(0.0), st.floats(1e-6, 10))
    loss = draw(arrays(float, (n, k), elements=values))
    state_cost = draw(arrays(float, (k,), elements=values))
    return loss, np.broadcast_to(state_cost, (n, k)).copy()


def test_the_frontier_reaches_the_least_loss_across_a_subnormal_cost():
    # Hypothesis's example: the empty state costs 5e-324 more than the
    # others and loses less; its slope overflowed and the row never moved.
    loss = np.zeros((5, 3))
    loss[4, 1:] = 1.0
    costs = np.zeros((5, 3))
    costs[:, 0] = 5e-324
    frontier = loss_frontier(loss, costs)
    assert frontier["loss"].iloc[-1] == 0.0
    assert (np.diff(frontier["avg_cost"]) > 0).all()


@settings(max_examples=150, deadline=None)
@given(problems(), st.data())
def test_no_choice_of_states_beats_the_oracle_frontier(problem, data):
    loss, costs = problem
    frontier = loss_frontier(loss, costs)
    # Convex and falling: slopes negative and growing.
    c, v = frontier["avg_cost"].to_numpy(), frontier["loss"].to_numpy()
    assert (np.diff(c) > 0).all() and (np.diff(v) < 0).all()
    slopes = np.diff(v) / np.diff(c)
    assert (np.diff(slopes) >= -1e-9).all()
    # Its last vertex is every row's least loss; any choice lies above it.
    assert v[-1] == pytest.approx(loss.min(axis=1).mean())
    n, k = loss.shape
    for _ in range(5):
        pick = np.array(
            data.draw(st.lists(st.integers(0, k - 1), min_size=n, max_size=n))
        )
        rows = np.arange(n)
        cost, value = costs[rows, pick].mean(), loss[rows, pick].mean()
        assert value >= frontier_at(frontier, cost) - 1e-9


def test_the_frontier_on_a_zero_one_loss_is_the_cheapest_right_state():
    # Row 0 is right at state 1 (cost 1), row 1 only at state 2 (cost 3).
    loss = np.array([[1.0, 0.0, 0.0], [1.0, 1.0, 0.0], [0.0, 0.0, 0.0]])
    costs = np.tile([0.0, 1.0, 3.0], (3, 1))
    frontier = loss_frontier(loss, costs, n_sensors=np.array([0, 1, 2]))
    assert frontier[["avg_cost", "loss", "avg_sensors"]].to_numpy().tolist() == [
        [0.0, 2 / 3, 0.0],
        [1 / 3, 1 / 3, 1 / 3],
        [4 / 3, 0.0, 1.0],
    ]


def test_the_frontier_refuses_mismatched_or_infinite_tables():
    with pytest.raises(ValueError, match="same shape"):
        loss_frontier(np.zeros((2, 3)), np.zeros((2, 2)))
    with pytest.raises(ValueError, match="finite"):
        loss_frontier(np.array([[np.nan, 1.0]]), np.zeros((1, 2)))


@pytest.fixture(scope="module")
def fitted():
    demo = toy_dataset(300, 120)
    target = 2 * demo.X_train["precise"] + demo.X_train["cheap_a"]
    test_target = 2 * demo.X_test["precise"] + demo.X_test["cheap_a"]
    model = BudgetDAGRegressor(
        demo.spec, regressor="ridge", cost_scale=0.05, cv=3, random_state=0
    ).fit(demo.X_train, target)
    return demo, model, target, test_target


def test_the_baselines_of_a_regressor_on_both_splits(fitted):
    demo, model, y, y_test = fitted
    train = regression_view(model, demo.X_train, y, out_of_fold=True)
    test = regression_view(model, demo.X_test, y_test)
    frame = pd.concat(
        [regression_baseline_frame(train), regression_baseline_frame(test)],
        ignore_index=True,
    )
    assert list(frame.columns) == FRAME_COLUMNS
    for split, view in (("train", train), ("test", test)):
        part = frame[frame["split"] == split]
        fixed = part[part["method"] == "fixed"]
        assert len(fixed) == model.sensor_dag_.n_states
        # A fixed subset's error is its mean squared error on the split.
        states = model.evaluate_states(
            demo.X_test if split == "test" else demo.X_train,
            y_test if split == "test" else y,
        ).set_index("state")
        if split == "test":
            for row in fixed.itertuples():
                assert row.error == pytest.approx(states.loc[row.state, "mse"])
        oracle = part[part["method"] == "oracle"]
        assert oracle["error"].min() <= fixed["error"].min() + 1e-12
        assert oracle["avg_cost"].iloc[0] == 0.0
        assert part[part["method"] == "no_sensors"]["avg_cost"].item() == 0.0
    # The hull picked on the training rows, reported on the test rows.
    chosen = train_chosen_hull(frame)
    assert set(chosen["split"]) == {"test"} and len(chosen) >= 1
    train_hull = frame[(frame["split"] == "train") & (frame["method"] == "hull")]
    assert set(chosen["state"]) <= set(train_hull["state"])


def test_out_of_fold_needs_the_banks_training_rows(fitted):
    demo, model, y, y_test = fitted
    with pytest.raises(ValueError, match="exact training data"):
        regression_view(model, demo.X_test, y_test, out_of_fold=True)


def test_a_view_refuses_targets_that_are_not_finite_numbers(fitted):
    demo, model, y, y_test = fitted
    bad = y_test.to_numpy().copy()
    bad[3] = np.nan
    with pytest.raises(ValueError, match="row 3 is nan"):
        regression_view(model, demo.X_test, bad)
    with pytest.raises(ValueError, match="must hold numbers"):
        regression_view(model, demo.X_test, ["a"] * len(demo.X_test))
    with pytest.raises(ValueError, match="values for"):
        regression_view(model, demo.X_test, y_test[:5])


def test_the_spread_cascade_spans_nothing_to_everything(fitted):
    demo, model, y, y_test = fitted
    train = regression_view(model, demo.X_train, y, out_of_fold=True)
    cascade = fit_spread_cascade(model, train)
    assert sorted(cascade.sensor_order) == sorted(demo.spec.names)
    points = cascade.train_points
    total = demo.spec.total_cost
    # The largest threshold stops every row at once (no sensor); the least
    # buys every sensor for the rows whose expected loss never reaches it.
    assert points.sort_values("threshold")["avg_cost"].iloc[-1] == 0.0
    assert points["avg_cost"].max() <= total + 1e-9
    assert points["error"].min() < points["error"].max()
    # Thresholds that stop the rows alike are one point.
    assert len(points) == len(cascade.thresholds)
    assert not points.duplicated(["avg_cost", "error"]).any()
    # The expected loss of stopping falls as sensors are bought (on average).
    spread = cascade.spread(train.pred[:, cascade.states])
    assert spread[:, -1].mean() < spread[:, 0].mean()
    test = regression_cascade_points(model, cascade, demo.X_test, y_test)
    assert (test["split"] == "test").all() and len(test) == len(points)
    # Deterministic: a second fit is the same cascade.
    again = fit_spread_cascade(model, train)
    assert np.array_equal(again.thresholds, cascade.thresholds)
    pd.testing.assert_frame_equal(again.train_points, points)


def test_the_spread_cascade_needs_every_state_out_of_fold(fitted):
    demo, model, y, y_test = fitted
    some = regression_view(model, demo.X_train, y, out_of_fold=True, states=[0, 1])
    with pytest.raises(ValueError, match="every state"):
        fit_spread_cascade(model, some)
    with pytest.raises(ValueError, match="n_bins"):
        fit_spread_cascade(
            model, regression_view(model, demo.X_train, y, out_of_fold=True), n_bins=0
        )
