"""BudgetDAGRegressor: squared/absolute stop loss, same API as the classifier."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.tree import DecisionTreeRegressor

from budgetdag_core import BudgetDAGRegressor, SensorSpec, dumps_policy, loads_policy
from budgetdag_core.bank import RegressorBank


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    n = 400
    X = pd.DataFrame(
        {
            "a": rng.normal(size=n),
            "b": rng.normal(size=n),
            "noise": rng.normal(size=n),
        }
    )
    y = 2 * X["a"] + X["b"] + rng.normal(scale=0.3, size=n)
    spec = SensorSpec.per_column(
        list(X.columns), cost={"a": 0.05, "b": 0.05, "noise": 0.3}
    )
    return X, y, spec


@pytest.fixture(scope="module")
def model(data):
    X, y, spec = data
    return BudgetDAGRegressor(spec, policy_degree=1, cv=3, random_state=0).fit(X, y)


def test_never_buys_a_pure_noise_sensor(model, data):
    X, _, _ = data
    tr = model.trace(X)
    assert not tr["acquired"].map(lambda a: "noise" in a).any()
    assert tr["acquired"].map(lambda a: {"a", "b"} <= set(a)).mean() > 0.9


def test_evaluate_and_trace_are_consistent(model, data):
    X, y, _ = data
    tr = model.trace(X)
    assert list(tr.columns[:5]) == [
        "prediction",
        "acquired",
        "n_sensors",
        "cost",
        "stop_state",
    ]
    result = model.evaluate(X, y)
    err = tr["prediction"].to_numpy() - y.to_numpy()
    assert result["mse"] == pytest.approx(np.mean(err**2))
    assert result["mae"] == pytest.approx(np.mean(np.abs(err)))
    assert result["avg_cost"] == pytest.approx(tr["cost"].mean())
    assert result["avg_sensors"] == pytest.approx(tr["n_sensors"].mean())
    assert result["avg_loss"] == pytest.approx(
        result["mse"] + model.cost_scale_ * result["avg_cost"]
    )
    np.testing.assert_array_equal(model.predict(X), tr["prediction"].to_numpy())
    assert model.score(X, y) > 0.9  # RegressorMixin's R^2 on the routed predictions


def test_flow_counts_and_loss(model, data):
    X, y, _ = data
    g = model.flow(X, y)
    assert g.nodes[0]["arrived"] == len(X)
    assert sum(d["stopped"] for _, d in g.nodes(data=True)) == len(X)
    total = sum(d["loss"] for _, d in g.nodes(data=True))
    assert total == pytest.approx(model.evaluate(X, y)["mse"] * len(X))


def test_session_and_persistence(model, data):
    X, _, _ = data
    row = X.iloc[3]
    session = model.start()
    assert session.run(row.to_dict()) == pytest.approx(model.predict(X.iloc[[3]])[0])
    assert tuple(session.acquired) == model.trace(X.iloc[[3]])["acquired"].iloc[0]
    with pytest.raises(ValueError, match="classifier"):
        session.predict_proba()
    loaded = loads_policy(dumps_policy(model))
    assert loaded.metadata_["classes"] is None
    assert loaded.metadata_["task"] == "regression"
    assert not hasattr(loaded.bank_, "oof_pred_")  # slim by default
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))


def test_absolute_loss_and_any_regressor(data):
    X, y, spec = data
    model = BudgetDAGRegressor(
        spec,
        loss="absolute",
        regressor=DecisionTreeRegressor(max_depth=4, random_state=0),
        policy_degree=1,
        cv=3,
        random_state=0,
    ).fit(X, y)
    assert isinstance(model.bank_, RegressorBank)
    assert isinstance(model.bank_.models_[-1], DecisionTreeRegressor)
    np.testing.assert_allclose(
        model.bank_.oof_losses(y.to_numpy(), "absolute"),
        np.abs(model.bank_.oof_pred_ - y.to_numpy()[:, None]),
    )
    result = model.evaluate(X, y)
    assert result["avg_loss"] == pytest.approx(
        result["mae"] + model.cost_scale_ * result["avg_cost"]
    )


class ThreadCountingTree(DecisionTreeRegressor):
    """A tree that records the OpenMP/BLAS thread counts it predicts under."""

    seen: list[list[int]] = []

    def predict(self, X, check_input=True):
        from threadpoolctl import threadpool_info

        ThreadCountingTree.seen.append([i["num_threads"] for i in threadpool_info()])
        return super().predict(X, check_input=check_input)


def test_per_state_predictions_run_on_one_thread(data):
    # Like the classifier bank's probabilities: OpenMP threads spin-waiting
    # on a busy machine made a session's one-row prediction by a boosting
    # bank take ~10 ms per tree.
    X, y, spec = data
    model = BudgetDAGRegressor(
        spec, regressor=ThreadCountingTree(max_depth=3), cost_scale=0.01, cv=2
    ).fit(X, y)
    ThreadCountingTree.seen.clear()
    model.predict(X.iloc[:20])
    model.start().run(X.iloc[0].to_dict())
    assert ThreadCountingTree.seen  # the bank's trees did predict
    assert all(count == 1 for counts in ThreadCountingTree.seen for count in counts)


def test_refit_policies_reuses_the_bank(model, data):
    X, y, _ = data
    pricey = model.refit_policies(X, y, cost_scale=100.0)
    assert pricey.bank_ is model.bank_
    assert pricey.evaluate(X, y)["avg_sensors"] == 0.0
    np.testing.assert_allclose(pricey.predict(X), np.full(len(X), y.mean()))


def test_subset_selection_for_regression():
    rng = np.random.default_rng(1)
    n, M = 300, 14
    X = pd.DataFrame(rng.normal(size=(n, M)), columns=[f"s{i:02d}" for i in range(M)])
    y = 3 * X["s03"] - 2 * X["s07"] + rng.normal(scale=0.2, size=n)
    spec = SensorSpec.per_column(list(X.columns), cost=0.01)
    # A linear target on 300 rows: the ridge bank fits it best, and this test
    # is about the subset selection, not the bank.
    model = BudgetDAGRegressor(
        spec,
        n_subsets=2,
        subset_budget=3,
        policy_degree=1,
        cv=3,
        random_state=0,
        regressor="ridge",
    ).fit(X, y)
    assert ("s03", "s07") in model.subset_selection_.subsets
    assert model.evaluate(X, y)["mse"] < 0.2


def test_bad_targets_name_the_row(data):
    X, y, spec = data
    bad = y.astype(object).copy()
    bad.iloc[7] = "high"
    with pytest.raises(ValueError, match="row 7"):
        BudgetDAGRegressor(spec).fit(X, bad)
    missing = y.copy()
    missing.iloc[2] = np.nan
    with pytest.raises(ValueError, match="first at row 2"):
        BudgetDAGRegressor(spec).fit(X, missing)
    with pytest.raises(ValueError, match="loss"):
        BudgetDAGRegressor(spec, loss="huber").fit(X, y)


# ----------------------------------------------------- the default (boosting) bank
@pytest.fixture(scope="module")
def friedman():
    from sklearn.datasets import make_friedman1

    X, y = make_friedman1(n_samples=1200, n_features=6, noise=0.5, random_state=0)
    X = pd.DataFrame(X, columns=[f"x{i}" for i in range(6)])
    units = {"x01": ["x0", "x1"], "x23": ["x2", "x3"], "x45": ["x4", "x5"]}
    spec = SensorSpec.from_dict(
        {"sensors": [{"name": k, "columns": v, "cost": 0.01} for k, v in units.items()]}
    )
    return X.iloc[:900], y[:900], X.iloc[900:], y[900:], spec


@pytest.fixture(scope="module")
def boosted(friedman):
    X, y, _, _, spec = friedman
    return BudgetDAGRegressor(spec, cv=3, random_state=0).fit(X, y)


def test_default_bank_is_early_stopped_boosting(boosted):
    from sklearn.ensemble import HistGradientBoostingRegressor

    full = boosted.bank_.models_[-1]
    assert isinstance(full, HistGradientBoostingRegressor)
    assert full.early_stopping is True and full.random_state == 0
    assert boosted.bank_.n_states == 8


def test_boosting_bank_beats_ridge_on_a_nonlinear_target(boosted, friedman):
    X, y, X_te, y_te, spec = friedman
    ridge = BudgetDAGRegressor(spec, cv=3, random_state=0, regressor="ridge")
    ridge.fit(X, y)
    boost_mse = boosted.evaluate(X_te, y_te)["mse"]
    ridge_mse = ridge.evaluate(X_te, y_te)["mse"]
    # Friedman #1 has sin(pi x0 x1) and (x2 - 0.5)^2 terms a linear model misses.
    assert boost_mse < 0.5 * ridge_mse
    assert boosted.predict(X_te).shape == (len(X_te),)


def test_boosting_bank_is_deterministic(boosted, friedman):
    X, y, X_te, _, spec = friedman
    again = BudgetDAGRegressor(spec, cv=3, random_state=0).fit(X, y)
    np.testing.assert_array_equal(again.predict(X_te), boosted.predict(X_te))


@pytest.mark.parametrize("fmt", ["pickle", "skops"])
def test_boosting_bank_round_trips(boosted, friedman, fmt):
    from budgetdag_core import dumps_policy_skops, loads_policy_skops

    _, _, X_te, _, _ = friedman
    if fmt == "pickle":
        loaded = loads_policy(dumps_policy(boosted))
    else:
        loaded = loads_policy_skops(dumps_policy_skops(boosted))
    np.testing.assert_array_equal(loaded.predict(X_te), boosted.predict(X_te))
    pd.testing.assert_frame_equal(loaded.trace(X_te), boosted.trace(X_te))


def test_unknown_regressor_kind_is_a_value_error(data):
    X, y, spec = data
    with pytest.raises(ValueError, match="regressor"):
        BudgetDAGRegressor(spec, regressor="forest").fit(X, y)
