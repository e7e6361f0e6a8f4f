"""The default estimators learn out of the box (issue 57): ``cost_scale="auto"``,
the warning of a policy that buys nothing, folds for small classes, and the
full DAG only where its fit is short."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.base import clone
from sklearn.datasets import load_breast_cancer, make_blobs

from budgetdag_core import (
    BudgetDAGClassifier,
    BudgetDAGRegressor,
    NothingBoughtWarning,
    SensorSpec,
    loads_policy,
)
from budgetdag_core.estimator._dag_choice import (
    FULL_DAG_MAX_BANK_SECONDS,
    FULL_DAG_MAX_SECONDS,
    full_dag_seconds,
    full_dag_too_slow,
)
from budgetdag_core.persist._compat import upgrade_model


@pytest.fixture(scope="module")
def blobs():
    X, y = make_blobs(240, centers=3, n_features=2, cluster_std=0.6, random_state=0)
    return pd.DataFrame(X, columns=["a", "b"]), y


@pytest.fixture(scope="module")
def blobs_model(blobs):
    X, y = blobs
    with warnings.catch_warnings():
        warnings.simplefilter("error", NothingBoughtWarning)
        return BudgetDAGClassifier().fit(X, y)


def test_default_classifier_learns_the_blobs(blobs, blobs_model) -> None:
    X, y = blobs
    model = blobs_model
    assert model.cost_scale == "auto"  # the parameter is left as given
    assert np.mean(model.predict(X) == y) >= 0.95
    assert model.evaluate(X, y)["avg_sensors"] > 0
    search = model.cost_scale_search_
    assert search["met"]
    kept = [p for p in search["tried"] if p["cost_scale"] == model.cost_scale_]
    assert len(kept) == 1
    # The bar is the least error seen: the richest state's or a policy's.
    errors = [p["error"] for p in search["tried"]]
    assert search["best_error"] == min([search["reference_error"], *errors])
    assert kept[0]["error"] <= search["best_error"] + search["margin"]
    # The kept scale is the cheapest of those within the margin of the bar.
    within = [
        p["avg_cost"]
        for p in search["tried"]
        if p["error"] <= search["best_error"] + search["margin"]
    ]
    assert kept[0]["avg_cost"] == min(within)
    assert "cost_scale=" in search["reason"]


def test_a_prohibitive_cost_scale_warns(blobs) -> None:
    X, y = blobs
    with pytest.warns(NothingBoughtWarning, match="buys no sensor at cost_scale=1"):
        model = BudgetDAGClassifier(cost_scale=1.0, random_state=0).fit(X, y)
    assert model.cost_scale_ == 1.0 and model.cost_scale_search_ is None
    assert model.evaluate(X, y)["avg_sensors"] == 0


def test_no_warning_where_no_sensor_helps() -> None:
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(120, 2)), columns=["a", "b"])
    y = rng.integers(0, 2, 120)  # noise: no sensor lowers the error
    with warnings.catch_warnings():
        warnings.simplefilter("error", NothingBoughtWarning)
        BudgetDAGClassifier(cost_scale=1.0, random_state=0).fit(X, y)


def test_breast_cancer_default_buys_and_stays_close() -> None:
    data = load_breast_cancer(as_frame=True)
    X = data.data.iloc[:300, :5]
    y = data.target.iloc[:300]
    model = BudgetDAGClassifier(random_state=0).fit(X, y)
    scores = model.evaluate(X, y)
    all_sensors = model.evaluate_states(X, y, states=[model.sensor_dag_.n_states - 1])
    assert scores["avg_sensors"] > 0
    assert scores["avg_cost"] < float(all_sensors["avg_cost"].iloc[0])
    search = model.cost_scale_search_
    assert search["reference_state"] == list(X.columns)
    assert search["met"]


def test_default_regressor_buys_the_sensor_that_matters() -> None:
    rng = np.random.default_rng(1)
    X = pd.DataFrame(rng.normal(size=(200, 3)), columns=["x0", "x1", "x2"])
    y = 3 * X["x0"] + rng.normal(scale=0.2, size=200)
    model = BudgetDAGRegressor(random_state=0).fit(X, y)
    trace = model.trace(X)
    assert (trace["acquired"].map(lambda a: "x0" in a)).mean() > 0.9
    assert model.evaluate(X, y)["mse"] < 0.2 * np.var(y)
    assert model.cost_scale_search_["met"]


def test_auto_model_refits_and_round_trips(blobs, blobs_model) -> None:
    X, y = blobs
    model = blobs_model
    scores = model.evaluate(X, y)
    expected = scores["error"] + model.cost_scale_ * scores["avg_cost"]
    assert scores["avg_loss"] == pytest.approx(expected)
    frugal = model.refit_policies(X, y, cost_scale=100.0)
    assert frugal.cost_scale_ == 100.0 and frugal.bank_ is model.bank_
    from budgetdag_core import dumps_policy

    loaded = loads_policy(dumps_policy(model))
    assert loaded.cost_scale_ == model.cost_scale_
    assert loaded.cost_scale_search_ == model.cost_scale_search_
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))


def test_old_models_get_their_number_as_cost_scale_(blobs) -> None:
    X, y = blobs
    model = BudgetDAGClassifier(cost_scale=0.05, random_state=0).fit(X, y)
    for name in ("cost_scale_", "cost_scale_search_", "cv_"):
        delattr(model, name)
    added = upgrade_model(model)
    assert {"cost_scale_", "cost_scale_search_", "cv_"} <= set(added)
    assert model.cost_scale_ == 0.05 and model.cv_ == model.cv


def test_small_classes_lower_the_folds() -> None:
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(23, 2)), columns=["a", "b"])
    y = np.array([0] * 10 + [1] * 10 + [2] * 3)
    X.loc[y == 2, "a"] += 5
    model = BudgetDAGClassifier(cost_scale=0.01, random_state=0).fit(X, y)
    assert model.cv == 5 and model.cv_ == 3
    with pytest.raises(ValueError, match="fewer rows than cv"):
        BudgetDAGClassifier(random_state=0).fit(X.iloc[:21], y[:21])


def test_the_dag_follows_the_estimated_work() -> None:
    ten = SensorSpec.per_column([f"x{i}" for i in range(10)])
    regressor = BudgetDAGRegressor()
    assert regressor.builds_sparse_dag(ten, 300)
    assert not regressor.builds_sparse_dag(ten)  # rows unknown: the count rule
    three = SensorSpec.per_column(["a", "b", "c"])
    assert not regressor.builds_sparse_dag(three, 100_000)
    # A regressor estimator: the strategies refuse it, the full DAG stays.
    from sklearn.linear_model import Ridge

    assert not BudgetDAGRegressor(regressor=Ridge()).builds_sparse_dag(ten, 300)
    # The bundled few-sensor demos keep their full DAG (landsat: 4 sensors).
    landsat = SensorSpec.per_column([f"s{i}" for i in range(4)])
    assert not BudgetDAGClassifier().builds_sparse_dag(landsat, 4435)
    # Whatever the cost scale: a sweep's clones share one bank.
    assert BudgetDAGClassifier(cost_scale=0.1).builds_sparse_dag(ten, 40)
    assert BudgetDAGClassifier().builds_sparse_dag(ten, 40)


@settings(max_examples=30, deadline=None)
@given(
    n_sensors=st.integers(4, 12),
    rows=st.integers(2, 100_000),
    more=st.integers(1, 10_000),
    regressor=st.booleans(),
)
def test_full_dag_seconds_grow_with_rows_and_sensors(
    n_sensors: int, rows: int, more: int, regressor: bool
) -> None:
    est = BudgetDAGRegressor() if regressor else BudgetDAGClassifier()
    base = full_dag_seconds(est, n_sensors, rows)
    assert full_dag_seconds(est, n_sensors, rows + more) >= base
    if n_sensors < 12:
        assert full_dag_seconds(est, n_sensors + 1, rows) > base
    bank = full_dag_seconds(est, n_sensors, rows, bank_only=True)
    slow = base > FULL_DAG_MAX_SECONDS or bank > FULL_DAG_MAX_BANK_SECONDS
    assert full_dag_too_slow(est, n_sensors, rows) == slow


def test_default_regressor_on_ten_sensors_builds_a_small_dag() -> None:
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(120, 10))).add_prefix("x")
    y = 2 * X["x0"] + rng.normal(scale=0.1, size=120)
    model = clone(BudgetDAGRegressor(cv=3, random_state=0)).fit(X, y)
    assert model.strategy_ in ("chain", "routed")
    assert model.sensor_dag_.n_states < 2**10
    assert "x0" in model.trace(X)["acquired"].iloc[0]
