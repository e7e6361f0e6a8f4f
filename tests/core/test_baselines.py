"""Baselines: fixed subsets, their hull, the oracle bound and the DAG's point."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from budgetdag_core import BudgetDAGClassifier
from budgetdag_core.tradeoff._baselines import (
    StatePredictions,
    baseline_points,
    curve_at,
    dag_point,
    lower_convex_hull,
    oracle_frontier,
    state_predictions,
)
from tests.core.tradeoff_problems import make_problem


@pytest.fixture(scope="module")
def fitted():
    X, y, spec = make_problem(500, 0)
    Xt, yt, _ = make_problem(300, 1)
    model = BudgetDAGClassifier(spec, cost_scale=0.02, cv=3, random_state=0)
    return model.fit(X, y), X, y, Xt, yt


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.floats(0, 10, allow_nan=False), st.floats(0, 1, allow_nan=False)),
        min_size=1,
        max_size=25,
    )
)
def test_hull_is_convex_and_below_every_point(points):
    cost = np.array([p[0] for p in points])
    error = np.array([p[1] for p in points])
    idx = lower_convex_hull(cost, error)
    hc, he = cost[idx], error[idx]
    assert np.all(np.diff(hc) > 0)
    assert hc[0] == cost.min()
    assert he[-1] == error.min()
    assert np.all(np.diff(he) <= 0)  # the decreasing part only
    for i in range(len(hc) - 2):  # convex: every turn is to the left
        cross = (hc[i + 1] - hc[i]) * (he[i + 2] - he[i]) - (he[i + 1] - he[i]) * (
            hc[i + 2] - hc[i]
        )
        assert cross > 0
    assert np.all(curve_at(hc, he, cost) <= error + 1e-9)


def test_hull_rejects_bad_input():
    with pytest.raises(ValueError, match="same length"):
        lower_convex_hull([0, 1], [0.5])


def hand_made() -> StatePredictions:
    # 4 states over 2 sensors costing 1 and 3; 5 rows.
    correct = np.array(
        [
            [1, 1, 1, 1],  # empty state right: free
            [0, 1, 0, 1],  # sensor A (cost 1) fixes it
            [0, 0, 1, 1],  # sensor B (cost 3) is the cheapest fix
            [0, 0, 0, 1],  # only both (cost 4)
            [0, 0, 0, 0],  # nobody
        ],
        dtype=bool,
    )
    y = np.zeros(5, dtype=np.intp)
    pred = np.where(correct, 0, 1)
    state_costs = np.array([0.0, 1.0, 3.0, 4.0])
    return StatePredictions(
        split="test",
        Xv=np.zeros((5, 2)),
        y=y,
        pred=pred,
        costs=np.broadcast_to(state_costs, (5, 4)),
        n_sensors=np.array([0, 1, 1, 2]),
        sensor_names=[(), ("A",), ("B",), ("A", "B")],
    )


def test_oracle_frontier_exact_on_a_hand_made_table():
    frontier = oracle_frontier(hand_made())
    np.testing.assert_allclose(frontier["avg_cost"], [0, 1 / 5, 4 / 5, 8 / 5])
    np.testing.assert_allclose(frontier["error"], [4 / 5, 3 / 5, 2 / 5, 1 / 5])
    np.testing.assert_allclose(frontier["avg_sensors"], [0, 1 / 5, 2 / 5, 4 / 5])


def test_oracle_is_below_every_method(fitted):
    model, X, y, Xt, yt = fitted
    for kwargs in ({"X": X, "y": y, "out_of_fold": True}, {"X": Xt, "y": yt}):
        frame = baseline_points(model, **kwargs)
        sp = state_predictions(model, **kwargs)
        oracle = frame[frame["method"] == "oracle"]
        oc, oe = oracle["avg_cost"].to_numpy(), oracle["error"].to_numpy()
        others = pd.concat(
            [
                frame[frame["method"] != "oracle"],
                pd.DataFrame([dag_point(model, sp)]),
            ]
        )
        assert oe[-1] <= others["error"].min()
        bound = curve_at(oc, oe, others["avg_cost"].to_numpy())
        assert np.all(others["error"].to_numpy() >= bound - 1e-12)


def test_dag_point_matches_evaluate(fitted):
    model, X, y, Xt, yt = fitted
    point = dag_point(model, state_predictions(model, Xt, yt))
    ev = model.evaluate(Xt, yt)
    for key in ("avg_cost", "avg_sensors", "error"):
        assert point[key] == pytest.approx(ev[key])


def test_fixed_points_match_evaluate_states(fitted):
    model, X, y, Xt, yt = fitted
    frame = baseline_points(model, Xt, yt)
    fixed = frame[frame["method"] == "fixed"].reset_index(drop=True)
    states = model.evaluate_states(Xt, yt)
    np.testing.assert_allclose(fixed["error"], states["error"])
    np.testing.assert_allclose(fixed["avg_cost"], states["avg_cost"])
    assert frame.loc[frame["method"] == "all_sensors", "sensors"].item() == (
        "cheap",
        "mid",
        "clean",
    )


def test_example_dependent_costs_are_accounted_per_row(fitted):
    model, X, y, Xt, yt = fitted
    rng = np.random.default_rng(3)
    costs = pd.DataFrame(
        rng.uniform(0, 5, size=(len(Xt), 3)), columns=["cheap", "mid", "clean"]
    )
    frame = baseline_points(model, Xt, yt, sample_costs=costs)
    all_row = frame[frame["method"] == "all_sensors"]
    assert all_row["avg_cost"].item() == pytest.approx(costs.sum(axis=1).mean())
    sp = state_predictions(model, Xt, yt, sample_costs=costs)
    trace = model.trace(Xt, sample_costs=costs)
    assert dag_point(model, sp)["avg_cost"] == pytest.approx(trace["cost"].mean())


def test_named_subsets_and_state_lookup(fitted):
    model, X, y, Xt, yt = fitted
    frame = baseline_points(
        model, Xt, yt, subsets={"greedy": [("cheap",), ["mid", "clean"], 0]}
    )
    greedy = frame[frame["method"] == "greedy"]
    assert list(greedy["sensors"]) == [("cheap",), ("mid", "clean"), ()]
    subset = model.evaluate_states(Xt, yt, states=[("mid", "clean")])
    assert subset["error"].item() == pytest.approx(greedy["error"].iloc[1])
    with pytest.raises(ValueError, match="Unknown sensor"):
        model.state_indices([("nope",)])
    with pytest.raises(ValueError, match="out of range"):
        model.state_indices([99])


def test_out_of_fold_needs_the_training_rows(fitted):
    model, X, y, Xt, yt = fitted
    with pytest.raises(ValueError, match="training data"):
        state_predictions(model, Xt, yt, out_of_fold=True)


def test_huge_cost_scale_is_the_no_sensor_point(fitted):
    model, X, y, Xt, yt = fitted
    lazy = model.refit_policies(X, y, cost_scale=1e6)
    ev = lazy.evaluate(Xt, yt)
    states = lazy.evaluate_states(Xt, yt)
    assert ev["avg_cost"] == 0.0
    assert ev["error"] == states["error"].iloc[0]


def test_the_train_chosen_hull_reads_test_errors_of_training_choices():
    from budgetdag_core import toy_dataset, tradeoff_curve

    demo = toy_dataset(300, 200)
    res = tradeoff_curve(
        demo.X_train, demo.y_train, demo.spec, cost_scales=[0.0, 0.03],
        X_test=demo.X_test, y_test=demo.y_test, cv=3, random_state=0,
    )  # fmt: skip
    f = res.frame
    train_states = set(f.query("split == 'train' and method == 'hull'")["state"])
    honest = f.query("split == 'test' and method == 'hull_oof'")
    assert len(honest) and set(honest["state"]) <= train_states
    test_fixed = f.query("split == 'test' and method == 'fixed'").set_index("state")
    for _, row in honest.iterrows():
        assert row["error"] == test_fixed.loc[row["state"], "error"]
    assert f.query("split == 'train' and method == 'hull_oof'").empty
    # Never below the hull that picks its subsets on the test rows.
    hull = f.query("split == 'test' and method == 'hull'").sort_values("avg_cost")
    below = np.interp(honest["avg_cost"], hull["avg_cost"], hull["error"])
    assert (honest["error"].to_numpy() >= below - 1e-12).all()
