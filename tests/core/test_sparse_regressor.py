"""The regressor beyond 12 sensors (issue 37, item 5): the classifier's
many-sensor default (DAG strategies on an any-subset bank, one kept on
validation rows, one Graph-Reduce), and what every fitted model promises
(determinism, no peeking, sessions, round trips)."""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.linear_model import LinearRegression

from budgetdag_core import (
    BudgetDAGRegressor,
    SensorSpec,
    dumps_policy,
    dumps_policy_skops,
    loads_policy,
    loads_policy_skops,
)
from budgetdag_core.bank import (
    SPARSE_FIT_PAIRS,
    MaskEncodedRegressor,
    SparseRegressorBank,
)
from budgetdag_core.dag import SensorDAG
from budgetdag_core.strategies._growth import SparseSensorDAG

N_SENSORS = 14
NAMES = [f"s{i}" for i in range(N_SENSORS)]
SPEC = SensorSpec.per_column(NAMES, cost={n: 1.0 + i % 3 for i, n in enumerate(NAMES)})


def make_data(n: int, seed: int) -> tuple[pd.DataFrame, np.ndarray]:
    """14 one-column sensors; the target reads s0 and s1 only."""
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(rng.normal(size=(n, N_SENSORS)), columns=NAMES)
    y = 3.0 * X.s0 + 2.0 * X.s1 + rng.normal(scale=0.3, size=n)
    return X, y.to_numpy()


def fit(n: int = 400, seed: int = 0, **params) -> BudgetDAGRegressor:
    X, y = make_data(n, seed)
    params = {"cost_scale": 0.02, "cv": 3, "random_state": 0} | params
    return BudgetDAGRegressor(SPEC, **params).fit(X, y)


ANY_MODELS = {
    "auto": {},  # the strategy and the masked regressor kept on validation
    "sparse": {"dag": "sparse"},
    "routed": {"dag": "routed"},
    # Each masked regressor on the chain.
    "chain-boosting": {"dag": "chain", "regressor": "boosting"},
    "chain-ridge": {"dag": "chain", "regressor": "ridge"},
}


@pytest.fixture(scope="module", params=list(ANY_MODELS))
def any_model(request) -> BudgetDAGRegressor:
    return fit(**ANY_MODELS[request.param])


@pytest.fixture(scope="module")
def model() -> BudgetDAGRegressor:
    return fit()  # the default


@pytest.fixture(scope="module")
def test_data() -> tuple[pd.DataFrame, np.ndarray]:
    return make_data(300, 1)


def test_the_default_fits_fourteen_sensors_on_a_sparse_dag(model):
    assert isinstance(model.sensor_dag_, SparseSensorDAG)
    assert isinstance(model.bank_, SparseRegressorBank)
    assert model.subset_selection_ is None
    assert model.strategy_ in ("chain", "routed")
    assert model.bank_.kind_ in ("boosting", "ridge")
    # The strategies built (the routed DAG only where a sensor's value says
    # where to look) and both masked regressors were compared.
    table = model.strategy_choice_.table()
    assert "chain" in set(table["strategy"]) <= {"chain", "routed"}
    assert table.loc[table["chosen"], "strategy"].item() == model.strategy_
    assert {"boosting", "ridge"} <= set(model.bank_.validation_)
    dag = model.sensor_dag_
    for k, kids in enumerate(dag.children):
        for sensor, child in kids:
            assert dag.states[child] == dag.states[k] | 1 << sensor


def test_twelve_sensors_and_n_subsets_keep_their_dags():
    X, y = make_data(200, 0)
    spec = SensorSpec.per_column(NAMES[:12])
    full = BudgetDAGRegressor(spec, regressor="ridge", cv=2, random_state=0)
    # Past the full DAG's time budget "auto" leaves it (estimator._dag_choice);
    # dag="full" keeps it.
    assert full.builds_sparse_dag(spec, len(X))
    assert not full.set_params(dag="full").builds_sparse_dag(spec, len(X))
    subsets = BudgetDAGRegressor(
        SPEC, regressor="ridge", n_subsets=3, cv=2, random_state=0
    ).fit(X, y)
    assert type(subsets.sensor_dag_) is SensorDAG
    assert subsets.strategy_ == "subsets"


def test_the_default_buys_the_two_sensors_that_matter(model, test_data):
    X, y = test_data
    trace = model.trace(X)
    bought = [s for acquired in trace["acquired"] for s in acquired]
    assert bought, "the policy buys sensors"
    assert np.mean([s in ("s0", "s1") for s in bought]) >= 0.8
    assert (trace["acquired"].map(set) >= {"s0", "s1"}).mean() >= 0.8
    # At a fraction of the all-sensor cost, close to the all-sensor error.
    scores = model.evaluate(X, y)
    every = model.evaluate_states(X, y, states=[model.sensor_dag_.n_states - 1])
    assert scores["avg_cost"] < 0.3 * SPEC.total_cost
    assert scores["mse"] < every["mse"].item() + 0.3
    assert scores["mse"] < 0.2 * np.var(y)


def test_the_same_seed_gives_the_same_model(any_model, test_data):
    X, _ = test_data
    again = clone(any_model).fit(*make_data(400, 0))
    pd.testing.assert_frame_equal(any_model.trace(X), again.trace(X))
    assert again.sensor_dag_.states == any_model.sensor_dag_.states
    assert again.sensor_dag_.children == any_model.sensor_dag_.children
    assert again.strategy_ == any_model.strategy_
    assert again.bank_.kind_ == any_model.bank_.kind_


def test_unacquired_values_are_never_read(any_model, test_data):
    X, _ = test_data
    trace = any_model.trace(X)
    spoiled = X.copy()
    rng = np.random.default_rng(7)
    for i, acquired in enumerate(trace["acquired"]):
        for column in spoiled.columns:
            if column not in acquired:
                spoiled.iloc[i, spoiled.columns.get_loc(column)] = rng.choice(
                    [1e6, -1e6, 0.0]
                )
    pd.testing.assert_frame_equal(any_model.trace(spoiled), trace)
    np.testing.assert_array_equal(any_model.predict(spoiled), any_model.predict(X))


def test_a_session_acquires_as_the_trace(any_model, test_data):
    X, _ = test_data
    trace = any_model.trace(X.iloc[:25])
    for i, (_, row) in enumerate(X.iloc[:25].iterrows()):
        session = any_model.start()
        while (sensor := session.next_sensor()) is not None:
            session.observe(sensor, {c: row[c] for c in SPEC.groups[sensor]})
        assert tuple(session.acquired) == trace["acquired"].iloc[i]
        assert session.predict() == trace["prediction"].iloc[i]


@pytest.mark.parametrize("slim", [True, False])
def test_pickle_and_skops_round_trips(any_model, test_data, slim):
    X, _ = test_data
    trace = any_model.trace(X)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for loaded in (
            loads_policy(dumps_policy(any_model, slim=slim)),
            loads_policy_skops(dumps_policy_skops(any_model, slim=slim)),
        ):
            pd.testing.assert_frame_equal(loaded.trace(X), trace)
            assert isinstance(loaded.sensor_dag_, SparseSensorDAG)
            assert loaded.strategy_ == any_model.strategy_
            assert loaded.strategy_validation_ == any_model.strategy_validation_
    assert hasattr(any_model.bank_, "sparse_growth_")


def test_new_cost_scales_reuse_the_bank(model):
    X, y = make_data(400, 0)
    frugal = model.refit_policies(X, y, 2.0)
    assert frugal.bank_ is model.bank_
    assert frugal.evaluate(X, y)["avg_cost"] < model.evaluate(X, y)["avg_cost"]
    again = BudgetDAGRegressor(SPEC, cost_scale=2.0, cv=3, random_state=0)
    again.fit(X, y, bank=model.bank_)
    pd.testing.assert_frame_equal(again.trace(X), frugal.trace(X))
    slim = loads_policy(dumps_policy(model))
    with pytest.raises(ValueError, match="refit"):
        again.fit(X, y, bank=slim.bank_)


def test_a_bank_from_other_data_is_refused(model):
    X, y = make_data(400, 1)
    with pytest.raises(ValueError, match="refit"):
        BudgetDAGRegressor(SPEC, cost_scale=0.02, cv=3, random_state=0).fit(
            X, y, bank=model.bank_
        )


def test_a_regressor_estimator_is_refused_with_many_sensors():
    X, y = make_data(100, 0)
    with pytest.raises(ValueError, match="any-subset masked regressor"):
        BudgetDAGRegressor(SPEC, regressor=LinearRegression(), cv=2).fit(X, y)


def test_absolute_loss_ranks_and_reports_absolute_errors():
    model = fit(loss="absolute", dag="chain", regressor="ridge")
    X, y = make_data(300, 1)
    scores = model.evaluate(X, y)
    assert scores["avg_loss"] == pytest.approx(
        scores["mae"] + model.cost_scale_ * scores["avg_cost"]
    )
    assert model.sensor_dag_.state_names(2) == ("s0", "s1")


def _forged(model, edit) -> bytes:
    forged = pickle.loads(pickle.dumps(model))
    edit(forged.bank_)
    return dumps_policy(forged)


@pytest.mark.parametrize(
    ("edit", "match"),
    [
        (lambda b: b.model_columns_.__setitem__(0, np.array([0, 99])), "range"),
        (lambda b: b.column_masks_.__setitem__(1, ~b.column_masks_[1]), "columns"),
        (lambda b: setattr(b, "prior_", np.array([np.nan])), "prior_"),
        (lambda b: setattr(b, "kind_", "boosted"), "kind_"),
        (lambda b: b.model_.__setitem__(0, None), "model_"),
    ],
)
def test_a_forged_bank_is_refused_on_load(model, edit, match):
    with pytest.raises(ValueError, match=match):
        loads_policy(_forged(model, edit))


def test_the_mask_encoded_ridge_learns_from_partly_observed_rows():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 3))
    y = 2 * X[:, 0] - X[:, 1]
    X[rng.random(X.shape) < 0.3] = np.nan
    model = MaskEncodedRegressor().fit(X, y)
    model.check_integrity()
    observed = ~np.isnan(X).any(axis=1)
    fit_error = np.mean((model.predict(X[observed]) - y[observed]) ** 2)
    assert fit_error < 0.1 * np.var(y)
    model.weights_ = model.weights_[:-1]
    with pytest.raises(ValueError, match="weights_"):
        model.check_integrity()


def test_the_boosting_bank_scores_all_subsets_as_one_subset_at_a_time():
    X, y = make_data(200, 0)
    Xv = X.to_numpy()
    bank = SparseRegressorBank("boosting", cv=2, random_state=0)
    bank.fit_models(Xv, y, SPEC.column_indices())
    rng = np.random.default_rng(3)
    subsets = rng.random((6, N_SENSORS)) < 0.4
    subsets[0] = False  # the empty set: the fold's training mean
    rows = np.arange(0, 200, 7)
    together = bank.oof_at(Xv, rows, subsets)[:, :, 0]
    for i, r in enumerate(rows):
        f = bank.fold_of_[r]
        model, cols = bank.fold_models_[f], bank.fold_columns_[f]
        assert together[i, 0] == bank.fold_means_[f]
        for j in range(1, len(subsets)):
            alone = model.predict(Xv[[r]][:, cols], present=subsets[j][cols])
            np.testing.assert_allclose(together[i, j], alone[0], rtol=1e-12)


class _Stacked(Exception):
    """Raised by a stand-in for the folds' fits, with the stack's rows."""


def test_a_long_table_gets_fewer_random_subsets_per_row(monkeypatch):
    import budgetdag_core.bank._sparse_regressor as module

    def fit_folds(template, n_jobs, X, y, pair_rows, *rest):
        raise _Stacked(np.bincount(pair_rows, minlength=len(X)))

    monkeypatch.setattr(module, "fit_folds", fit_folds)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(SPARSE_FIT_PAIRS // 10, 3))
    cols = [np.array([c]) for c in range(3)]
    bank = SparseRegressorBank(cv=3, random_state=0, model="ridge")
    for rows, per_row in ((len(X), 10), (1000, bank.masks_per_row)):
        with pytest.raises(_Stacked) as stacked:
            bank.fit_models(X[:rows], X[:rows, 0], cols)
        assert (stacked.value.args[0] == per_row).all()
