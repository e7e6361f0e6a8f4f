"""Batch prediction's fast paths give what a straightforward replay gives, bit
for bit (issue 54): the routing that visits only the states rows reach, the
masked bank scoring its fold trees on one copy of the present columns, and
the paths grouped by integer sorts in ``trace``."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.datasets import make_classification, make_regression

from budgetdag_core import (
    BudgetDAGClassifier,
    BudgetDAGRegressor,
    SensorSpec,
    toy_dataset,
)
from budgetdag_core.bank import MaskedBank
from budgetdag_core.bank._lgbm_trees import LightGBMTrees
from budgetdag_core.estimator._policy import unique_paths
from budgetdag_core.graph_reduce import STOP, NodePolicy, route

N_MANY = 14  # beyond 12 sensors: the default grows a sparse DAG


def many_sensor_table(regression: bool = False) -> tuple[pd.DataFrame, np.ndarray]:
    if regression:
        X, y = make_regression(360, N_MANY, n_informative=5, noise=5.0, random_state=0)
    else:
        X, y = make_classification(
            360, N_MANY, n_informative=6, n_classes=3, random_state=0
        )
    return pd.DataFrame(X, columns=[f"s{i}" for i in range(N_MANY)]), y


MANY_SPEC = SensorSpec.per_column([f"s{i}" for i in range(N_MANY)], cost=1.0)


def fit_model(kind: str):
    """A fitted model and test rows (a few missing values where the model
    takes them) for each kind of DAG and bank."""
    if kind in ("full", "full_masked", "full_regressor"):
        demo = toy_dataset(300, 80, random_state=0)
        if kind == "full_regressor":
            y = demo.X_train["precise"].to_numpy() * 2.0 + demo.y_train
            model = BudgetDAGRegressor(demo.spec, cost_scale=0.05, cv=3, random_state=0)
            return model.fit(demo.X_train, y), demo.X_test
        params = {"bank_kind": "masked"} if kind == "full_masked" else {}
        model = BudgetDAGClassifier(
            demo.spec, cost_scale=0.02, cv=3, random_state=0, **params
        )
        return model.fit(demo.X_train, demo.y_train), demo.X_test
    X, y = many_sensor_table(regression=kind == "sparse_regressor")
    if kind == "sparse_regressor":
        model = BudgetDAGRegressor(MANY_SPEC, cost_scale=0.02, cv=3, random_state=0)
        return model.fit(X.iloc[:260], y[:260]), X.iloc[260:]
    model = BudgetDAGClassifier(
        MANY_SPEC, cost_scale=0.01, cv=3, random_state=0, bank_kind="masked"
    )
    model.fit(X.iloc[:260], y[:260])
    X_test = X.iloc[260:].copy()
    X_test.iloc[::7, 1] = np.nan  # a sensor acquired but not measured
    X_test.iloc[::5, 4] = np.nan
    return model, X_test


KINDS = ("full", "full_masked", "full_regressor", "sparse", "sparse_regressor")


@pytest.fixture(scope="module", params=KINDS)
def fitted(request):
    model, X_test = fit_model(request.param)
    # Tiled past PARALLEL_PREDICT_ROWS per thread, so n_jobs=2 splits the rows.
    X_big = pd.concat([X_test] * 50, ignore_index=True)
    return request.param, model, X_big


def reference_bank_proba(bank, X: np.ndarray, state: int) -> np.ndarray:
    """The bank's probabilities at ``state``, each fold model of a masked bank
    scoring its own full copy of the columns it reads, in the given row order."""
    if not isinstance(bank, MaskedBank) or state == 0:
        return bank.predict_proba(X, state)
    per_model = []
    for model, cols in bank._model_pairs(X.shape[1]):
        assert isinstance(model, LightGBMTrees)
        out = np.zeros((len(X), bank.n_classes_))
        out[:, np.asarray(model.classes_, dtype=int)] = model.predict_proba(
            np.array(X[:, cols]),
            present=bank.column_masks_[state, cols],
            sort_rows=False,
        )
        per_model.append(out)
    raw = per_model[0] if len(per_model) == 1 else np.mean(per_model, axis=0)
    return bank._calibrated(raw, state)


def reference_route(model, Xv: np.ndarray):
    """Every state in index order, its rows found by a scan of all rows."""
    n, inputs = len(Xv), model.inputs_
    current = np.zeros(n, dtype=np.intp)
    stop_state = np.full(n, -1, dtype=np.intp)
    path = np.full((n, model._route(Xv[:1]).path.shape[1]), -1, dtype=np.intp)
    path[:, 0] = 0
    depth = np.zeros(n, dtype=np.intp)
    for k, policy in enumerate(model.policies_):
        rows = np.flatnonzero((current == k) & (stop_state < 0))
        if not rows.size:
            continue
        if inputs.reads_model_at(k):
            proba = reference_bank_proba(model.bank_, Xv[rows], k)
            features = inputs.of_rows(Xv, k, rows, proba=proba)
        else:
            features = inputs.of_rows(Xv, k, rows)
        act = policy.predict(features)
        stop_state[rows[act == STOP]] = k
        movers = rows[act != STOP]
        current[movers] = policy.child_of(act[act != STOP])
        depth[movers] += 1
        path[movers, depth[movers]] = current[movers]
    return stop_state, path


def reference_acquired(model, path: np.ndarray) -> list[tuple[str, ...]]:
    dag = model.sensor_dag_
    out = []
    for row in path:
        visited = [int(s) for s in row if s >= 0]
        names: list[str] = []
        for a, b in zip(visited, visited[1:], strict=False):
            names.extend(dag.sensor_names[m] for m in dag.added_sensors(a, b))
        out.append(tuple(names))
    return out


def test_batch_prediction_equals_the_straightforward_replay(fitted):
    kind, model, X = fitted
    Xv = model._features(X)
    stop_state, path = reference_route(model, Xv)
    routing = model._route(Xv)
    assert np.array_equal(routing.stop_state, stop_state)
    assert np.array_equal(routing.path, path)
    assert len(np.unique(stop_state)) > 1, "a policy that routes nowhere tests little"
    trace = model.trace(X)
    assert trace["acquired"].tolist() == reference_acquired(model, path)
    if isinstance(model, BudgetDAGRegressor):
        assert np.array_equal(model.predict(X), model.predict_at(Xv, stop_state))
        return
    proba = np.zeros((len(Xv), len(model.classes_)))
    for k in np.unique(stop_state):
        rows = np.flatnonzero(stop_state == k)
        proba[rows] = reference_bank_proba(model.bank_, Xv[rows], int(k))
    assert np.array_equal(model.predict_proba(X), proba)
    assert np.array_equal(model.predict(X), model.labels_from_proba(proba))
    assert np.array_equal(trace["confidence"].to_numpy(), proba.max(axis=1))


def test_threads_give_the_same_predictions(fitted):
    kind, model, X = fitted
    jobs = model.n_jobs, getattr(model.bank_, "n_jobs", None)
    try:
        model.n_jobs = 1
        model.bank_.n_jobs = 1
        one = model.trace(X)
        model.n_jobs = 2
        model.bank_.n_jobs = 2
        two = model.trace(X)
    finally:
        model.n_jobs, model.bank_.n_jobs = jobs
    pd.testing.assert_frame_equal(one, two, check_exact=True)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.lists(st.integers(-1, 6), min_size=4, max_size=4), min_size=1, max_size=40
    )
)
def test_unique_paths_groups_rows_as_numpy_does(rows):
    path = np.array(rows, dtype=np.intp)
    uniq, inverse = unique_paths(path)
    assert np.array_equal(uniq[inverse], path)
    assert len(uniq) == len(np.unique(path, axis=0))


def test_route_refuses_a_policy_that_moves_rows_back():
    back = NodePolicy(1, [(0, 0)], None, 0)
    back.predict = lambda Z: np.ones(len(Z), dtype=np.intp)  # always move
    forward = NodePolicy(0, [(0, 1)], None, 0)
    forward.predict = lambda Z: np.ones(len(Z), dtype=np.intp)
    with pytest.raises(ValueError, match="state 1 moves rows to an earlier state"):
        route([forward, back], lambda k, rows: np.zeros((len(rows), 0)), 3, 2)


@pytest.mark.parametrize(
    "rows", [np.array([0.5]), np.array([-1]), np.array([80]), "0", np.zeros((2, 2))]
)
def test_bank_refuses_rows_that_are_not_positions(rows):
    model, X = fit_model("full")
    Xv = model._features(X)
    assert np.array_equal(
        model.bank_.predict_proba(Xv, 1, rows=np.array([3, 0])),
        model.bank_.predict_proba(Xv[[3, 0]], 1),
    )
    with pytest.raises(ValueError, match="rows must be a 1-d array of row positions"):
        model.bank_.predict_proba(Xv, 1, rows=rows)
