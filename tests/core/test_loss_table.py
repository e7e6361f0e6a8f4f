"""Learning policies from a loss table only (LossTablePolicy, section 2.4)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import make_classification

from budgetdag_core import (
    BudgetDAGClassifier,
    LossTablePolicy,
    SensorDAG,
    SensorSpec,
    learn_policies_from_losses,
)
from budgetdag_core.reductions import CostRegression


@pytest.fixture(scope="module")
def data():
    X, y = make_classification(
        n_samples=300,
        n_features=6,
        n_informative=4,
        n_redundant=0,
        n_classes=3,
        n_clusters_per_class=1,
        random_state=0,
    )
    X = pd.DataFrame(X, columns=list("abcdef"))
    spec = SensorSpec(
        {"s1": ["a", "b"], "s2": ["c", "d"], "s3": ["e", "f"]},
        {"s1": 0.01, "s2": 0.02, "s3": 0.04},
    )
    return X, y, spec


def _same_policies(ltp, model, X):
    np.testing.assert_array_equal(ltp.predict_state(X), model.predict_state(X))
    np.testing.assert_array_equal(ltp.train_cost_to_go_, model.train_cost_to_go_)
    tr_l, tr_m = ltp.trace(X), model.trace(X)
    for col in ["acquired", "n_sensors", "cost", "stop_state"]:
        pd.testing.assert_series_equal(tr_l[col], tr_m[col])


@pytest.mark.parametrize("learner", ["filter_tree", "cost_regression"])
def test_reproduces_the_estimators_policies_from_its_oof_losses(data, learner):
    X, y, spec = data
    model = BudgetDAGClassifier(
        spec,
        cost_scale=0.5,
        policy_learner=learner,
        cv=3,
        random_state=0,
        policy_features="sensors",  # what a loss-table policy sees
    ).fit(X, y)
    _, y_enc = np.unique(y, return_inverse=True)
    losses = model.bank_.oof_losses(y_enc)
    ltp = LossTablePolicy(spec, cost_scale=0.5, policy_learner=learner).fit(X, losses)
    assert 0 < model.evaluate(X, y)["avg_sensors"] < 3
    _same_policies(ltp, model, X)
    rng = np.random.default_rng(1)
    X_new = pd.DataFrame(rng.normal(size=(50, 6)), columns=list("abcdef"))
    np.testing.assert_array_equal(ltp.predict_state(X_new), model.predict_state(X_new))


def test_reproduces_a_subset_dag_estimator(data):
    X, y, spec = data
    flat = SensorSpec.per_column(list(X.columns), cost=0.01)
    model = BudgetDAGClassifier(
        flat,
        cost_scale=0.3,
        n_subsets=3,
        subset_budget=4,
        cv=3,
        random_state=0,
        policy_features="sensors",  # what a loss-table policy sees
    ).fit(X, y)
    _, y_enc = np.unique(y, return_inverse=True)
    subsets = [list(s) for s in model.subset_selection_.subsets]
    ltp = LossTablePolicy(flat, subsets=subsets, cost_scale=0.3)
    ltp.fit(X, model.bank_.oof_losses(y_enc))
    assert ltp.sensor_dag_.states == model.sensor_dag_.states
    _same_policies(ltp, model, X)


def test_learns_from_a_human_loss_table_without_labels():
    # An expert is right without help when a > 0, and needs sensor "b"
    # otherwise; "c" never helps. Costs: b 0.1, c 0.1.
    rng = np.random.default_rng(0)
    n = 400
    Z = pd.DataFrame(rng.normal(size=(n, 3)), columns=list("abc"))
    spec = SensorSpec.per_column(list("abc"), cost={"a": 0.0, "b": 0.1, "c": 0.1})
    ltp = LossTablePolicy(spec, policy_degree=1)
    labels = ltp.state_labels()
    hard = (Z["a"] <= 0).to_numpy()
    losses = pd.DataFrame(
        {
            "+".join(state): np.where(hard & ("b" not in state), 1.0, 0.0)
            for state in labels
        }
    )
    assert "" in losses.columns and "a+b+c" in losses.columns
    ltp.fit(Z, losses.sample(frac=1.0, axis=1, random_state=0))  # any column order
    tr = ltp.trace(Z)
    got_b = tr["acquired"].map(lambda a: "b" in a).to_numpy()
    # Regularised weighted logistic regressions (hard rows weigh 9x more)
    # shift the threshold into the easy side a little: most easy rows skip b.
    assert got_b[hard].mean() > 0.9 and got_b[~hard].mean() < 0.5
    assert tr["acquired"].iloc[0][0] == "a"  # the free sensor first
    assert not tr["acquired"].map(lambda a: "c" in a).any()
    result = ltp.evaluate(Z, losses)
    assert result["loss"] < 0.05 and result["avg_cost"] < 0.09  # always-b: 0.1
    assert result["avg_loss"] == pytest.approx(result["loss"] + result["avg_cost"])
    g = ltp.flow(Z)
    assert g.nodes[0]["arrived"] == n


def test_ndarray_and_named_dataframe_give_the_same_policy(data):
    X, y, spec = data
    rng = np.random.default_rng(0)
    ltp = LossTablePolicy(spec, policy_learner=CostRegression(degree=1))
    K = len(ltp.state_labels())
    L = rng.random((len(X), K))
    frame = pd.DataFrame(L, columns=["+".join(s) for s in ltp.state_labels()])
    a = ltp.fit(X, L).predict_state(X)
    b = LossTablePolicy(spec, policy_learner=CostRegression(degree=1)).fit(X, frame)
    np.testing.assert_array_equal(a, b.predict_state(X))


def test_legacy_function_uses_the_same_graph_reduce(data):
    X, y, spec = data
    rng = np.random.default_rng(0)
    dag = SensorDAG(spec.names)
    L = rng.random((len(X), dag.n_states))
    result = learn_policies_from_losses(
        X.to_numpy(),
        L,
        dag,
        spec.cost_vector,
        spec.column_indices(),
        CostRegression(degree=1),
    )
    ltp = LossTablePolicy(spec, policy_learner=CostRegression(degree=1)).fit(X, L)
    np.testing.assert_array_equal(result.cost_to_go[:, 0], ltp.train_cost_to_go_)


def test_bad_loss_tables_name_the_problem(data):
    X, _, spec = data
    ltp = LossTablePolicy(spec)
    K = len(ltp.state_labels())
    with pytest.raises(ValueError, match="shape"):
        ltp.fit(X, np.zeros((len(X), K - 1)))
    L = np.zeros((len(X), K))
    L[4, 2] = np.nan
    with pytest.raises(ValueError, match="row 4"):
        ltp.fit(X, L)
    with pytest.raises(ValueError, match="no column for state"):
        ltp.fit(X, pd.DataFrame({"s1": np.zeros(len(X))}))
    with pytest.raises(ValueError, match="unknown sensor"):
        LossTablePolicy(spec, subsets=[["s1", "zz"]]).state_labels()
