from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator

from budgetdag_core import SensorDAG, graph_reduce
from budgetdag_core.graph_reduce import learn_policies_from_losses, route
from budgetdag_core.reductions import FilterTree


class RowOracle(BaseEstimator):
    """A CSL 'learner' that memorises the best action of each row id (column 0)."""

    def fit(self, Z, C):
        self.best_ = {int(i): int(np.argmin(c)) for i, c in zip(Z[:, 0], C)}
        return self

    def predict(self, Z):
        return np.array([self.best_[int(i)] for i in Z[:, 0]], dtype=np.intp)


def test_with_exact_learner_graph_reduce_is_per_example_dp() -> None:
    rng = np.random.default_rng(0)
    n, m = 60, 3
    dag = SensorDAG(["a", "b", "c"])
    loss = rng.integers(0, 2, size=(n, dag.n_states)).astype(float)
    costs = np.array([0.1, 0.3, 0.2])
    ids = np.arange(n, dtype=float).reshape(-1, 1)
    result = graph_reduce(lambda k: ids, loss, costs, dag, RowOracle(), cost_scale=1.0)
    # Any subset is reachable, so the optimum is min over states of loss + cost.
    subset_cost = dag.membership() @ costs
    expected = (loss + subset_cost).min(axis=1)
    np.testing.assert_allclose(result.cost_to_go[:, 0], expected)
    # Routing with the learned policies realises that cost-to-go.
    routing = route(result.policies, lambda k, rows: ids[rows], n, m)
    realised = loss[np.arange(n), routing.stop_state] + subset_cost[routing.stop_state]
    np.testing.assert_allclose(realised, expected)


def test_example_dependent_costs_are_used_per_row() -> None:
    n = 40
    dag = SensorDAG(["x"])
    loss = np.column_stack([np.ones(n), np.zeros(n)])  # sensor x fixes every error
    costs = np.where(np.arange(n) < 20, 0.2, 5.0).reshape(-1, 1)
    ids = np.arange(n, dtype=float).reshape(-1, 1)
    result = graph_reduce(lambda k: ids, loss, costs, dag, RowOracle())
    assert (result.actions[:20, 0] == 1).all()  # cheap rows acquire
    assert (result.actions[20:, 0] == 0).all()  # expensive rows stop
    np.testing.assert_allclose(result.cost_to_go[:, 0], np.minimum(costs[:, 0], 1))


def test_cost_scale_extremes() -> None:
    rng = np.random.default_rng(1)
    n = 100
    dag = SensorDAG(["a", "b"])
    loss = np.column_stack(
        [np.ones(n), rng.integers(0, 2, n), rng.integers(0, 2, n), np.zeros(n)]
    ).astype(float)
    ids = np.arange(n, dtype=float).reshape(-1, 1)
    huge = graph_reduce(
        lambda k: ids, loss, np.ones(2), dag, RowOracle(), cost_scale=1e6
    )
    assert (huge.actions[:, 0] == 0).all()
    free = graph_reduce(lambda k: ids, loss, np.ones(2), dag, RowOracle(), cost_scale=0)
    assert (free.cost_to_go[:, 0] == 0).all()


def test_learn_policies_from_losses_runs_without_bank() -> None:
    rng = np.random.default_rng(2)
    n = 300
    Z = rng.normal(size=(n, 2))
    dag = SensorDAG(["a", "b"])
    # Stopping at {a} is right exactly when a > 0; b always fixes the error.
    loss = np.column_stack(
        [np.ones(n), (Z[:, 0] <= 0).astype(float), np.ones(n), np.zeros(n)]
    )
    cols = [np.array([0]), np.array([1])]
    result = learn_policies_from_losses(
        Z, loss, dag, np.array([0.01, 0.3]), cols, FilterTree(degree=1)
    )
    state_a = dag.index[0b01]
    acts = result.policies[state_a].predict(Z[:, [0]])
    assert ((acts == 0) == (Z[:, 0] > 0)).mean() > 0.9
    # root: acquire a (cheap), stop when a > 0, else buy b: cost-to-go <= 0.31
    assert result.cost_to_go[:, 0].max() <= 0.31 + 1e-9


def test_parallel_node_fits_equal_serial_ones(monkeypatch) -> None:
    # Small problems fit their nodes in this process whatever n_jobs; with the
    # threshold lowered the same problem goes through worker processes and
    # must give the same cost-to-go and actions.
    import importlib

    module = importlib.import_module("budgetdag_core.graph_reduce")

    rng = np.random.default_rng(3)
    n = 200
    dag = SensorDAG(["a", "b", "c"])
    Z = rng.normal(size=(n, 3))
    loss = (rng.random((n, dag.n_states)) < 0.3).astype(float)
    costs = np.array([0.05, 0.1, 0.02])
    cols = dag.state_columns([np.array([0]), np.array([1]), np.array([2])])

    def fit(n_jobs: int):
        return graph_reduce(
            lambda k: Z[:, cols[k]],
            loss,
            costs,
            dag,
            FilterTree(degree=1),
            n_jobs=n_jobs,
        )

    serial = fit(1)
    monkeypatch.setattr(module, "PARALLEL_POLICY_WORK", 0)
    parallel = fit(2)
    np.testing.assert_array_equal(parallel.actions, serial.actions)
    np.testing.assert_allclose(parallel.cost_to_go, serial.cost_to_go)
