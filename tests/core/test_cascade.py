"""The confidence cascade: order, thresholds and points, checked by hand."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest

from budgetdag_core import BudgetDAGClassifier, SensorSpec
from budgetdag_core.dag import SensorDAG
from budgetdag_core.plotting import tradeoff_figure
from budgetdag_core.tradeoff import cascade_points, fit_cascade
from budgetdag_core.tradeoff._baselines import (
    bank_state_predictions,
    state_predictions,
)
from budgetdag_core.tradeoff._cascade import (
    cascade_from_view,
    greedy_order,
    stop_positions,
    threshold_grid,
)
from tests.core.tradeoff_problems import make_problem

SPEC = SensorSpec({"a": ["a"], "b": ["b"]}, {"a": 1.0, "b": 2.0})
DAG = SensorDAG(["a", "b"])  # states {}, {a}, {b}, {a, b}


def two_class(p1: list[float]) -> np.ndarray:
    p1 = np.asarray(p1, dtype=float)
    return np.stack([1 - p1, p1], axis=-1)


class StubBank:
    """Hand-made probabilities: out of fold for 4 training rows, and for test
    rows looked up by the row id stored in every column."""

    def __init__(self) -> None:
        # p(class 1) per state ({}, {a}, {b}, {a, b}); training labels 0 1 0 1.
        train = [
            [0.5, 0.5, 0.5, 0.5],
            [0.1, 0.8, 0.4, 0.3],
            [0.2, 0.6, 0.6, 0.9],
            [0.05, 0.95, 0.3, 0.7],
        ]
        # Test labels 1 0 1.
        test = [
            [0.5, 0.5, 0.5],
            [0.7, 0.35, 0.1],
            [0.5, 0.5, 0.5],
            [0.9, 0.2, 0.85],
        ]
        self.oof_proba_ = np.stack([two_class(p) for p in train], axis=1)
        self.test_proba = np.stack([two_class(p) for p in test], axis=1)
        self.calls: list[tuple[int, int]] = []

    @property
    def n_states(self) -> int:
        return 4

    def predict_proba(self, X: np.ndarray, state: int) -> np.ndarray:
        self.calls.append((state, len(X)))
        return self.test_proba[np.asarray(X)[:, 0].astype(int), state]


Y_TRAIN = np.array([0, 1, 0, 1])
Y_TEST = np.array([1, 0, 1])
X_TEST = pd.DataFrame({"a": [0.0, 1.0, 2.0], "b": [0.0, 1.0, 2.0]})
# Per-example test costs: a = 1, 2, 0.5 and b = 2, 2, 4.
TEST_COSTS = np.array([[1.0, 2.0], [2.0, 2.0], [0.5, 4.0]])


def stub_cascade(loss_matrix=None):
    bank = StubBank()
    train = bank_state_predictions(
        bank,
        np.zeros((4, 2)),
        Y_TRAIN,
        DAG,
        SPEC.cost_vector,
        out_of_fold=True,
        with_confidence=False,
        split="train",
        loss_matrix=loss_matrix,
    )
    cascade = cascade_from_view(
        bank, DAG, SPEC, np.array(["no", "yes"]), train, loss_matrix=loss_matrix
    )
    test = bank_state_predictions(
        bank,
        X_TEST.to_numpy(),
        Y_TEST,
        DAG,
        TEST_COSTS,
        out_of_fold=False,
        with_confidence=False,
        split="test",
        loss_matrix=loss_matrix,
    )
    return cascade, cascade.curve(test, cascade.confidences(test.Xv)), bank


def test_order_and_thresholds_by_hand():
    cascade, _, _ = stub_cascade()
    # Out-of-fold errors: {} 0.5, {a} 0.25 (cost 1), {b} 0.25 (cost 2): a first.
    assert cascade.units == [0, 1]
    assert cascade.states == [0, 1, 3]
    assert cascade.order == [("a",), ("b",)]
    # Observed confidences of {} and {a}: 0.5 (stops all rows at {} like 0),
    # 0.6, 0.7, 0.8, 0.9; plus 0 and 1.
    np.testing.assert_allclose(cascade.thresholds, [0, 0.6, 0.7, 0.8, 0.9, 1])
    train = cascade.train_points
    # Stops (prefix per row) for each tau, training confidences
    # {a}: 0.9 0.8 0.6 0.7, {a,b}: 0.95 0.95 0.7 0.7; costs 0, 1, 3.
    np.testing.assert_allclose(train["avg_cost"], [0, 1, 1.5, 2, 2.5, 3])
    np.testing.assert_allclose(train["avg_sensors"], [0, 1, 1.25, 1.5, 1.75, 2])
    np.testing.assert_allclose(train["error"], [0.5, 0.25, 0.25, 0, 0, 0])
    np.testing.assert_allclose(train["loss"], train["error"])
    assert (train["method"] == "cascade").all() and (train["split"] == "train").all()
    assert train["sensors"].tolist() == [("a", "b")] * 6


def test_test_points_with_example_costs_by_hand():
    _, test, _ = stub_cascade()
    # Test confidences {a}: 0.7 0.65 0.9, {a,b}: 0.9 0.8 0.85; per-row costs
    # {a} = 1 2 0.5, {a,b} = 3 4 4.5.
    np.testing.assert_allclose(
        test["avg_cost"], np.array([0, 3.5, 5.5, 7.5, 7.5, 11.5]) / 3
    )
    np.testing.assert_allclose(test["avg_sensors"], [0, 1, 4 / 3, 5 / 3, 5 / 3, 2])
    np.testing.assert_allclose(test["error"], [2 / 3, 1 / 3, 1 / 3, 1 / 3, 1 / 3, 0])
    np.testing.assert_allclose(test["threshold"], [0, 0.6, 0.7, 0.8, 0.9, 1])
    assert (test["split"] == "test").all() and test["cost_scale"].isna().all()


def test_trace_deploys_one_threshold():
    cascade, test, bank = stub_cascade()
    bank.calls.clear()
    tr = cascade.at(0.7).trace(X_TEST, sample_costs=TEST_COSTS)
    assert tr["stop_state"].tolist() == [1, 3, 1]
    assert tr["acquired"].tolist() == [("a",), ("a", "b"), ("a",)]
    np.testing.assert_allclose(tr["cost"], [1, 4, 0.5])
    np.testing.assert_allclose(tr["confidence"], [0.7, 0.8, 0.9])
    assert tr["prediction"].tolist() == ["yes", "no", "no"]
    assert tr["n_sensors"].tolist() == [1, 2, 1]
    # Each prefix's classifier only sees the rows still undecided.
    assert bank.calls == [(0, 3), (1, 3), (3, 1)]
    # The trace agrees with the curve's point at the same threshold.
    point = test[test["threshold"] == 0.7].iloc[0]
    assert tr["cost"].mean() == pytest.approx(point["avg_cost"])
    wrong = tr["prediction"].to_numpy() != np.array(["no", "yes"])[Y_TEST]
    assert wrong.mean() == pytest.approx(point["error"])
    # Spec costs without sample_costs; predict is the trace's prediction.
    np.testing.assert_allclose(cascade.at(0.7).trace(X_TEST)["cost"], [1, 3, 1])
    assert cascade.at(1.0).predict(X_TEST).tolist() == ["yes", "no", "yes"]
    assert cascade.at(0.0).predict(X_TEST).tolist() == ["no"] * 3


def test_for_budget_picks_on_training_points():
    cascade, _, _ = stub_cascade()
    assert cascade.for_budget(2.2).threshold == pytest.approx(0.8)
    assert cascade.for_budget(1.2).threshold == pytest.approx(0.6)
    with pytest.raises(ValueError, match="No threshold"):
        cascade.for_budget(-1)
    assert "a -> b" in cascade.describe()


def test_loss_matrix_gives_bayes_decisions():
    # Missing class 1 costs 5: predict 1 once p(1) > 1/6.
    lm = np.array([[0.0, 1.0], [5.0, 0.0]])
    cascade, test, _ = stub_cascade(lm)
    assert cascade.states == [0, 1, 3]
    at_a = test[test["threshold"] == 0.6].iloc[0]
    # All rows at {a}: p(1) 0.7 0.35 0.1 -> 1 1 0; truth 1 0 1.
    assert at_a["error"] == pytest.approx(2 / 3)
    assert at_a["loss"] == pytest.approx((0 + 1 + 5) / 3)
    tr = cascade.at(0.6).trace(X_TEST)
    assert tr["prediction"].tolist() == ["yes", "yes", "no"]


def test_greedy_order_is_per_unit_of_cost():
    dag = SensorDAG(["a", "b", "c"])
    loss, cost = {}, {}
    costs = {"a": 1.0, "b": 2.0, "c": 4.0}
    # Single sensors: a drops 0.05 per unit cost, b 0.15 (the best), c 0.125
    # (the largest drop). After b: c adds 0.2 / 4 = 0.05, a 0.05 / 1: a.
    singles = {(): 0.5, ("a",): 0.45, ("b",): 0.2, ("c",): 0.0}
    pairs = {("a", "b"): 0.15, ("b", "c"): 0.0, ("a", "c"): 0.0, ("a", "b", "c"): 0.0}
    for k in range(dag.n_states):
        names = dag.state_names(k)
        loss[k] = {**singles, **pairs}[names]
        cost[k] = sum(costs[n] for n in names)
    units, states = greedy_order(
        dag,
        np.array([loss[k] for k in range(dag.n_states)]),
        np.array([cost[k] for k in range(dag.n_states)]),
    )
    assert units == [1, 0, 2]
    assert [dag.state_names(k) for k in states] == [
        (),
        ("b",),
        ("a", "b"),
        ("a", "b", "c"),
    ]


def test_greedy_order_with_subset_units_and_free_units():
    # Units are sensor subsets: prefixes are their unions (states of the DAG).
    dag = SensorDAG(["a", "b", "c"], units=[[0, 1], [2], [1, 2]])
    names = [dag.state_names(k) for k in range(dag.n_states)]
    loss = np.array([0.4 if n else 0.5 for n in names])
    cost = np.array([float(len(n)) for n in names])
    cost[names.index(("c",))] = 0.0  # a free unit that helps goes first
    units, states = greedy_order(dag, loss, cost)
    assert units[0] == 1
    assert all(s in range(dag.n_states) for s in states)
    assert dag.state_names(states[-1]) == ("a", "b", "c")


def test_helpers():
    conf = np.array([[0.5, 0.9, 0.2], [0.5, 0.6, 0.7]])
    assert stop_positions(conf, 0.8).tolist() == [1, 2]
    assert stop_positions(conf, 0.0).tolist() == [0, 0]
    grid = threshold_grid(conf, 5)
    assert grid[0] == 0 and grid[-1] == 1 and set(grid[1:-1]) <= {0.5, 0.6, 0.9}


@pytest.fixture(scope="module")
def fitted():
    X, y, spec = make_problem(400, 0)
    Xt, yt, _ = make_problem(300, 1)
    model = BudgetDAGClassifier(spec, cv=3, random_state=0, cost_scale=0.01)
    return model.fit(X, y), X, y, Xt, yt


def test_cascade_points_on_a_model(fitted):
    model, X, y, Xt, yt = fitted
    pts = cascade_points(model, X, y, X_test=Xt, y_test=yt)
    assert set(pts["split"]) == {"train", "test"}
    test = pts[pts["split"] == "test"]
    # Threshold 0 buys nothing, 1 (almost) everything; each point is a real
    # deployment of the cascade.
    assert test["avg_cost"].iloc[0] == 0
    cascade = fit_cascade(model, X, y)
    for _, row in test.iloc[[1, len(test) // 2]].iterrows():
        tr = cascade.at(row["threshold"]).trace(Xt)
        assert tr["cost"].mean() == pytest.approx(row["avg_cost"])
        assert (tr["prediction"].to_numpy() != yt).mean() == pytest.approx(row["error"])
    fig = tradeoff_figure(pts)
    trace = next(t for t in fig.data if t.name == "confidence cascade")
    assert any("stops once the classifier" in h for h in trace.hovertext)
    assert any("buys in order: " in h for h in trace.hovertext)


def test_a_views_confidences_are_the_banks_without_asking_it_again(fitted):
    model, X, y, Xt, yt = fitted
    cascade = fit_cascade(model, X, y)
    view = state_predictions(model, Xt, yt)
    assert view.proba is not None  # the view kept every state's probabilities
    asked = cascade.confidences(view.Xv)
    np.testing.assert_array_equal(cascade.split_confidences(view), asked)
    # A view without them: the bank is asked.
    bare = dataclasses.replace(view, proba=None)
    np.testing.assert_array_equal(cascade.split_confidences(bare), asked)


def test_bad_input(fitted):
    model, X, y, Xt, yt = fitted
    with pytest.raises(ValueError, match="n_thresholds"):
        fit_cascade(model, X, y, n_thresholds=1)
    with pytest.raises(TypeError, match="n_thresholds"):
        fit_cascade(model, X, y, n_thresholds=2.5)
    with pytest.raises(ValueError, match="exact training data"):
        fit_cascade(model, Xt, yt)
    with pytest.raises(ValueError, match="both X_test and y_test"):
        cascade_points(model, X, y, X_test=Xt)
    with pytest.raises(ValueError, match="threshold must be a number"):
        fit_cascade(model, X, y).at(float("nan"))
    with pytest.raises(TypeError, match="threshold must be a number"):
        fit_cascade(model, X, y).at("0.9")
    assert fit_cascade(model, X, y).at(np.float32(0.5)).threshold == 0.5


def test_cascade_on_a_dag_over_selected_subsets():
    from sklearn.datasets import make_classification

    X, y = make_classification(
        n_samples=360,
        n_features=10,
        n_informative=6,
        n_classes=3,
        n_clusters_per_class=1,
        class_sep=1.5,
        random_state=0,
    )
    cols = [f"x{i}" for i in range(10)]
    costs = dict(zip(cols, np.linspace(0.01, 0.05, 10), strict=True))
    spec = SensorSpec.per_column(cols, cost=costs)
    X = pd.DataFrame(X, columns=cols)
    model = BudgetDAGClassifier(
        spec,
        n_subsets=3,
        subset_budget=6,
        include_all=True,
        policy_degree=1,
        cv=3,
        random_state=0,
    ).fit(X, y)
    cascade = fit_cascade(model, X, y)
    dag = model.sensor_dag_
    # The units are the selected subsets; each prefix is their union, a state.
    bought: set[str] = set()
    for unit, state in zip(cascade.units, cascade.states[1:], strict=True):
        bought |= {dag.sensor_names[i] for i in dag.units[unit]}
        assert set(dag.state_names(state)) == bought
    assert set(cascade.sensor_order) == set(cols)  # include_all: everything
    tr = cascade.for_budget(0.1).trace(X)
    for acquired, cost, stop in zip(
        tr["acquired"], tr["cost"], tr["stop_state"], strict=True
    ):
        assert acquired == cascade.sensor_order[: len(acquired)]
        assert set(acquired) == set(dag.state_names(stop))
        assert cost == pytest.approx(sum(costs[c] for c in acquired))
