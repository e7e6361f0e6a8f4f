"""Teaching replays Graph-Reduce's record (one implementation of the walk)."""

from __future__ import annotations

import numpy as np
import pytest

from budgetdag_core import BudgetDAGClassifier, graph_reduce, toy_dataset
from budgetdag_core.reductions import FilterTree
from budgetdag_core.teaching import cost_tables, graph_reduce_steps


@pytest.fixture(scope="module")
def demo():
    return toy_dataset(240, 20, random_state=1)


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"policy_features": "sensors+confidence"},
        {"policy_features": "sensors+confidence", "policy_learner": "cost_regression"},
        {"loss_matrix": [[0.0, 1.0], [3.0, 0.0]], "bank_kind": "masked"},
    ],
    ids=["default", "confidence", "confidence-regression", "loss-matrix-masked"],
)
def test_the_record_reproduces_the_fit(demo, params):
    model = BudgetDAGClassifier(demo.spec, cost_scale=0.03, cv=3, random_state=0)
    model.set_params(**params).fit(demo.X_train, demo.y_train)
    record = model.graph_reduce_record(demo.X_train, demo.y_train)
    np.testing.assert_allclose(record.cost_to_go[:, 0], model.train_cost_to_go_)
    # Each recorded decision is what the fitted policy picks on its table.
    for k, table in enumerate(record.tables):
        assert table.shape == (len(demo.X_train), 1 + len(model.policies_[k].children))
        np.testing.assert_allclose(
            record.cost_to_go[:, k], table[np.arange(len(table)), record.actions[:, k]]
        )
    steps = graph_reduce_steps(model, demo.X_train, demo.y_train, rows=3)
    assert [s.state for s in steps][-1] == 0
    root = steps[-1]
    assert list(root.costs.columns[: len(root.actions)]) == root.actions


def test_record_while_learning_equals_the_replay(demo):
    """``record=True`` on the learning run and the replay of its policies give
    the same tables: the replay is the same walk, not a second implementation."""
    model = BudgetDAGClassifier(demo.spec, cost_scale=0.03, cv=3, random_state=0)
    model.fit(demo.X_train, demo.y_train)
    Xv = demo.X_train.to_numpy(dtype=float)
    cols = model.state_columns_
    stop = model.bank_.oof_losses(np.asarray(demo.y_train), None)
    learned = graph_reduce(
        lambda k: Xv[:, cols[k]],
        stop,
        model.spec_.cost_vector,
        model.sensor_dag_,
        FilterTree(degree=2),
        cost_scale=0.03,
        record=True,
    )
    replayed = graph_reduce(
        lambda k: Xv[:, cols[k]],
        stop,
        model.spec_.cost_vector,
        model.sensor_dag_,
        None,
        cost_scale=0.03,
        replay=learned.policies,
        record=True,
    )
    for a, b in zip(learned.tables, replayed.tables, strict=True):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(learned.actions, replayed.actions)
    assert (
        graph_reduce(
            lambda k: Xv[:, cols[k]],
            stop,
            model.spec_.cost_vector,
            model.sensor_dag_,
            FilterTree(degree=2),
        ).tables
        is None
    )


@pytest.fixture(scope="module")
def confident(demo):
    """A model whose policies also see the bank's confidence."""
    return BudgetDAGClassifier(
        demo.spec,
        cost_scale=0.01,
        cv=3,
        random_state=0,
        policy_features="sensors+confidence",
    ).fit(demo.X_train, demo.y_train)


def test_cost_tables_of_a_confidence_policy(demo, confident):
    """Used to crash: operands could not be broadcast (n, 7) (10,)."""
    model = confident
    tables, ctg, actions = cost_tables(model, demo.X_train, demo.y_train)
    np.testing.assert_allclose(ctg[:, 0], model.train_cost_to_go_)
    assert len(tables) == model.sensor_dag_.n_states


def test_replay_needs_the_training_rows_and_labels(demo):
    model = BudgetDAGClassifier(demo.spec, cost_scale=0.03, cv=3, random_state=0)
    model.fit(demo.X_train, demo.y_train)
    with pytest.raises(ValueError, match="trained on 240"):
        model.graph_reduce_record(demo.X_test, demo.y_test)
    wrong = demo.y_train.replace({1: 7})
    with pytest.raises(ValueError, match="label 7"):
        model.graph_reduce_record(demo.X_train, wrong)


def test_node_details_of_a_confidence_policy(demo, confident):
    """node_details asks the policy with the inputs it was trained on."""
    from budgetdag_core.explain import node_details

    model = confident
    rows, actions = model.node_actions(demo.X_test, 0)
    assert rows.tolist() == list(range(len(demo.X_test)))  # everyone starts at 0
    stops = model.route(demo.X_test).stop_state
    np.testing.assert_array_equal(actions == 0, stops == 0)
    # Every state, the ones whose policy sees confidence features included
    # (states 4 and 5 crashed before: "operands could not be broadcast").
    path = model.route(demo.X_test).path
    for state in range(model.sensor_dag_.n_states):
        details = node_details(model, demo.X_test, demo.y_test, state)
        reached = int((path == state).any(axis=1).sum())
        assert int(details["actions"]["count"].sum()) == reached


@pytest.fixture(scope="module")
def many():
    """A 14-sensor table: its fits grow DAGs of one-sensor additions."""
    import pandas as pd
    from sklearn.datasets import make_classification

    X, y = make_classification(
        n_samples=200, n_features=14, n_informative=6, n_classes=3,
        n_clusters_per_class=1, random_state=1,
    )  # fmt: skip
    return pd.DataFrame(X, columns=[f"s{i}" for i in range(14)]), y


@pytest.mark.parametrize("dag", ["chain", "routed", "sparse"])
def test_a_fresh_grown_model_replays_without_refit(many, dag):
    """The record of a grown DAG replays the fit on its growth: the root's
    cost-to-go is the fit's, each table holds the rows that reached its
    state, and the teaching walk steps through every state."""
    X, y = many
    model = BudgetDAGClassifier(
        cost_scale=0.02, cv=3, random_state=0, dag=dag, max_states=60
    ).fit(X, y)
    record = model.graph_reduce_record(X, y)
    np.testing.assert_array_equal(record.cost_to_go[:, 0], model.train_cost_to_go_)
    growth = model.bank_.sparse_growth_
    for k, table in enumerate(record.tables):
        rows = record.rows[k]
        np.testing.assert_array_equal(rows, growth.flow[k])
        assert table.shape == (len(rows), 1 + len(model.policies_[k].children))
        if len(rows) and table.shape[1] > 1:
            picked = table[np.arange(len(rows)), record.actions[rows, k]]
            np.testing.assert_allclose(record.cost_to_go[rows, k], picked)
    steps = graph_reduce_steps(model, X, y, rows=4)
    assert sorted(s.state for s in steps) == list(range(model.sensor_dag_.n_states))
    assert steps[-1].state == 0 and steps[-1].costs.shape[0] == 4
    # The replay left the bank's own probability tables as they were.
    again = model.graph_reduce_record(X, y)
    np.testing.assert_array_equal(again.cost_to_go, record.cost_to_go)
    with pytest.raises(ValueError, match="not the table"):
        model.graph_reduce_record(X * 2, y)


def test_a_slim_grown_model_says_what_is_missing(many):
    X, y = many
    model = BudgetDAGClassifier(cost_scale=0.02, cv=3, random_state=0, dag="chain").fit(
        X, y
    )
    del model.bank_.sparse_growth_  # what a slim save leaves out
    with pytest.raises(ValueError, match="no out-of-fold predictions"):
        model.graph_reduce_record(X, y)


def test_graph_reduce_over_a_growth_in_threads(many, monkeypatch):
    """One Graph-Reduce: over a growth its groups of states fit in threads as
    on a full DAG, to the same policies whatever ``n_jobs``, and the record
    while learning equals the replay."""
    import importlib

    gr = importlib.import_module("budgetdag_core.graph_reduce")  # the module
    X, y = many
    model = BudgetDAGClassifier(
        cost_scale=0.02, cv=3, random_state=0, dag="sparse", max_states=60
    ).fit(X, y)
    Xv = X.to_numpy(dtype=float)
    inputs = model.inputs_
    growth = model.bank_.sparse_growth_

    def run(**kw):
        return graph_reduce(
            lambda k, rows, proba: inputs.of_rows(Xv, k, rows, proba=proba),
            model._sparse_stop_loss(model.bank_, y),
            model.spec_.cost_vector,
            growth.replica(),
            FilterTree(degree=1),
            cost_scale=0.02,
            **kw,
        )

    monkeypatch.setattr(gr, "PARALLEL_POLICY_WORK", 0)
    seen = []
    one = run(n_jobs=1, record=True, progress=lambda *a: seen.append(a))
    two = run(n_jobs=2, record=True)
    np.testing.assert_array_equal(one.cost_to_go, two.cost_to_go)
    np.testing.assert_array_equal(one.actions, two.actions)
    assert seen[-1] == ("policies", growth.dag.n_states, growth.dag.n_states)
    replayed = graph_reduce(
        lambda k, rows, proba: inputs.of_rows(Xv, k, rows, proba=proba),
        model._sparse_stop_loss(model.bank_, y),
        model.spec_.cost_vector,
        growth.replica(),
        None,
        cost_scale=0.02,
        replay=one.policies,
        record=True,
    )
    for a, b in zip(one.tables, replayed.tables, strict=True):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(one.cost_to_go, replayed.cost_to_go)


@pytest.mark.parametrize("dag", ["chain", "sparse"])
def test_a_fresh_grown_regressor_replays_without_refit(many, dag):
    """One record for both tasks: a regressor's grown DAG replays on its
    growth as a classifier's does (its stop column the out-of-fold loss)."""
    from budgetdag_core import BudgetDAGRegressor

    X, _ = many
    target = X["s0"] * 2 + X["s3"]
    model = BudgetDAGRegressor(
        cost_scale=0.02, cv=3, random_state=0, dag=dag, max_states=40
    ).fit(X, target)
    record = model.graph_reduce_record(X, target)
    np.testing.assert_allclose(record.cost_to_go[:, 0], model.train_cost_to_go_)
    steps = graph_reduce_steps(model, X, target, rows=3)
    assert sorted(s.state for s in steps) == list(range(model.sensor_dag_.n_states))


def test_a_default_model_replays_at_its_chosen_scale(many):
    """``cost_scale="auto"`` (the default): the replay charges the scale the
    search kept (``cost_scale_``), not the setting's name."""
    X, y = many
    model = BudgetDAGClassifier(cv=3, random_state=0, max_states=40).fit(X, y)
    assert model.cost_scale == "auto"
    record = model.graph_reduce_record(X, y)
    np.testing.assert_array_equal(record.cost_to_go[:, 0], model.train_cost_to_go_)
