"""``sample_weight``: a row of weight w counts as w copies of it.

Exactly at the node level (``graph_reduce`` with integer weights learns the
policies of the duplicated rows, on the full DAG and on a grown many-sensor
DAG), and in behaviour at the estimators' (their folds are the rows', so a
duplicated table is cut into other folds): rows of weight 0 are as if
removed, weights of 1 are the unweighted fit bit for bit.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.base import clone
from sklearn.neighbors import KNeighborsClassifier

from budgetdag_core import (
    BudgetDAGClassifier,
    BudgetDAGRegressor,
    NothingBoughtWarning,
    SensorDAG,
    SensorSpec,
    graph_reduce,
    toy_dataset,
)
from budgetdag_core.bank import MaskEncodedClassifier
from budgetdag_core.bank._calibration import fit_temperatures
from budgetdag_core.graph_reduce import fit_node
from budgetdag_core.reductions import CostRegression, FilterTree
from budgetdag_core.strategies import (
    RowTable,
    SparseGrowth,
    SparseSensorDAG,
    select_subsets,
)

COSTS = np.array([0.1, 0.2, 0.3])


def _problem(n: int = 60, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    dag = SensorDAG(["a", "b", "c"])
    # Stopping with more sensors tends to lose less, row by row at random.
    richness = dag.membership().sum(axis=1) / 3
    stop = rng.random((n, dag.n_states)) * (1.2 - richness)
    return X, dag, stop


def _same_policies(a, b, inputs) -> None:
    for pa, pb in zip(a.policies, b.policies, strict=True):
        Z = inputs(pa.state)
        np.testing.assert_array_equal(pa.predict(Z), pb.predict(Z))


@pytest.mark.parametrize(
    "learner", [FilterTree(degree=2, C=10.0), CostRegression(degree=2)]
)
def test_full_dag_integer_weights_equal_duplicated_rows(learner) -> None:
    X, dag, stop = _problem()
    w = np.random.default_rng(1).integers(0, 4, len(X))
    rep = np.repeat(np.arange(len(X)), w)
    weighted = graph_reduce(
        lambda k: X[:, dag.sensors_in(k)], stop, COSTS, dag, learner, sample_weight=w
    )
    Xr = X[rep]
    copied = graph_reduce(
        lambda k: Xr[:, dag.sensors_in(k)], stop[rep], COSTS, dag, learner
    )
    _same_policies(weighted, copied, lambda k: X[:, dag.sensors_in(k)])
    np.testing.assert_allclose(weighted.cost_to_go[rep], copied.cost_to_go, atol=1e-9)


def test_weights_of_one_are_the_unweighted_fit() -> None:
    X, dag, stop = _problem()
    args = (lambda k: X[:, dag.sensors_in(k)], stop, COSTS, dag, FilterTree(C=10.0))
    plain = graph_reduce(*args)
    ones = graph_reduce(*args, sample_weight=np.ones(len(X)))
    np.testing.assert_array_equal(plain.cost_to_go, ones.cost_to_go)
    np.testing.assert_array_equal(plain.actions, ones.actions)


class _Bank:
    """A stand-in bank: probabilities a fixed function of a row's values and
    the sensors held, so duplicated rows get their original's."""

    prior_ = np.array([0.5, 0.5])

    def oof_at(self, X, rows, masks, k=None):
        masks = np.atleast_2d(masks)
        logit = X[rows] @ masks.T.astype(float)  # (rows, masks)
        p = 1 / (1 + np.exp(-2 * logit))
        return np.stack([1 - p, p], axis=-1)


def _growth(X: np.ndarray) -> SparseGrowth:
    """A grown DAG over three sensors: {} -> {a} -> {a,b} | {a,c}, with the
    rows split by the sign of column a at {a}."""
    dag = SparseSensorDAG(
        ["a", "b", "c"], [0, 1, 3, 5], [[(0, 1)], [(1, 2), (2, 3)], [], []]
    )
    rows = np.arange(len(X))
    up = rows[X[:, 0] > 0]
    flow = [rows, rows, up, np.setdiff1d(rows, up)]
    return SparseGrowth(dag, flow, [RowTable(2) for _ in range(4)], _Bank(), X)


def test_grown_dag_integer_weights_equal_duplicated_rows() -> None:
    rng = np.random.default_rng(3)
    n = 80
    X = rng.normal(size=(n, 3))
    y = (X.sum(axis=1) + rng.normal(scale=0.5, size=n) > 0).astype(int)
    w = rng.integers(0, 4, n)
    rep = np.repeat(np.arange(n), w)

    def reduce(Xg, yg, weights):
        growth = _growth(Xg)
        cols = [growth.dag.sensors_in(k) for k in range(growth.dag.n_states)]
        return graph_reduce(
            lambda k, rows, proba: np.column_stack([Xg[rows][:, cols[k]], proba]),
            lambda rows, proba: 1 - proba[np.arange(len(rows)), yg[rows]],
            COSTS,
            growth,
            FilterTree(degree=1, C=10.0),
            sample_weight=weights,
        )

    weighted = reduce(X, y, w)
    copied = reduce(X[rep], y[rep], None)
    growth = _growth(X)
    for pa, pb in zip(weighted.policies, copied.policies, strict=True):
        k = pa.state
        proba = growth.proba_at(k, np.arange(n))
        Z = np.column_stack([X[:, growth.dag.sensors_in(k)], proba])
        np.testing.assert_array_equal(pa.predict(Z), pb.predict(Z))
    kept = np.flatnonzero(w > 0)
    # The root's cost-to-go of every kept row, against its copies'.
    mine = weighted.cost_to_go[kept, 0]
    theirs = copied.cost_to_go[np.searchsorted(rep, kept), 0]
    np.testing.assert_allclose(mine, theirs, atol=1e-9)


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    n=st.integers(8, 40),
    n_actions=st.integers(2, 4),
    weights=st.lists(st.integers(0, 3), min_size=40, max_size=40),
)
def test_fit_node_integer_weights_equal_duplicated_rows(
    seed, n, n_actions, weights
) -> None:
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=(n, 2))
    C = rng.random((n, n_actions))
    w = np.array(weights[:n])
    if not w.any():
        w[0] = 1
    rep = np.repeat(np.arange(n), w)
    learner = CostRegression(degree=1)
    fitted, actions = fit_node(learner, Z, C, w)
    copy_fit, copy_actions = fit_node(learner, Z[rep], C[rep])
    np.testing.assert_array_equal(actions[rep], copy_actions)
    scores = getattr(fitted, "action_scores", None)
    if scores is not None and hasattr(copy_fit, "action_scores"):
        np.testing.assert_allclose(scores(Z), copy_fit.action_scores(Z), atol=1e-7)
    # The weighted total of the chosen actions is the copies' total.
    assert np.isclose(
        w @ C[np.arange(n), actions], C[rep][np.arange(len(rep)), copy_actions].sum()
    )


def test_calibration_weights_equal_duplicated_rows() -> None:
    rng = np.random.default_rng(0)
    n = 200
    proba = rng.dirichlet([0.4, 0.4, 0.4], size=(n, 2))
    y = rng.integers(0, 3, n)
    w = rng.integers(0, 4, n)
    rep = np.repeat(np.arange(n), w)
    np.testing.assert_allclose(
        fit_temperatures(proba, y, sample_weight=w),
        fit_temperatures(proba[rep], y[rep]),
        rtol=1e-5,
    )


# ------------------------------------------------------------ the estimators
def _toy():
    demo = toy_dataset(240, 200)
    return demo, demo.X_train, demo.y_train


def test_estimator_weights_of_one_equal_no_weights() -> None:
    demo, X, y = _toy()
    make = lambda: BudgetDAGClassifier(demo.spec, cost_scale=0.05, cv=3, random_state=0)  # noqa: E731
    plain = make().fit(X, y)
    ones = make().fit(X, y, sample_weight=np.ones(len(X)))
    np.testing.assert_array_equal(
        plain.predict_proba(demo.X_test), ones.predict_proba(demo.X_test)
    )
    assert ones.bank_.fingerprint_ == plain.bank_.fingerprint_


def _with_garbage(X, y, n_bad: int, flip):
    bad = X.iloc[:n_bad].copy()
    bad.index = [f"bad{i}" for i in range(n_bad)]
    Xg = pd.concat([X, bad])
    yg = np.concatenate([np.asarray(y), flip(np.asarray(y)[:n_bad])])
    w = np.r_[np.ones(len(X)), np.zeros(n_bad)]
    return Xg, yg, w


@pytest.mark.parametrize("kind", ["classifier", "regressor"])
def test_rows_of_weight_zero_are_ignored(kind) -> None:
    demo, X, y = _toy()
    X = X.reset_index(drop=True)
    if kind == "classifier":
        estimator = BudgetDAGClassifier(demo.spec, cost_scale=0.05)
        flip = lambda t: 1 - t  # noqa: E731
        target = np.asarray(y)
    else:
        estimator = BudgetDAGRegressor(demo.spec, cost_scale=0.01)
        flip = lambda t: t + 50.0  # noqa: E731
        target = 2 * X["precise"].to_numpy()
    make = lambda: clone(estimator).set_params(cv=3, random_state=0)  # noqa: E731
    Xg, yg, w = _with_garbage(X, target, 120, flip)
    clean = make().fit(X, target)
    ignored = make().fit(Xg, yg, sample_weight=w)
    with warnings.catch_warnings():  # the garbage may leave nothing worth buying
        warnings.simplefilter("ignore", NothingBoughtWarning)
        counted = make().fit(Xg, yg)
    test = demo.X_test
    truth = demo.y_test if kind == "classifier" else 2 * test["precise"]
    # Weight 0: as good as the clean fit (the folds differ, the data does not);
    # weight 1 would let the garbage in.
    assert ignored.score(test, truth) >= clean.score(test, truth) - 0.03
    assert counted.score(test, truth) < ignored.score(test, truth) - 0.05
    # ... and the weighted policies buy what the clean ones buy, row by row.
    same = (ignored.trace(test)["stop_state"] == clean.trace(test)["stop_state"]).mean()
    assert same >= 0.85


def test_integer_weights_behave_as_duplicated_rows() -> None:
    demo, X, y = _toy()
    X = X.reset_index(drop=True)
    # The positive class three times as heavy: the policy then predicts it
    # more often, as it does on a table with its rows copied three times.
    w = np.where(np.asarray(y) == 1, 3.0, 1.0)
    rep = np.repeat(np.arange(len(X)), w.astype(int))
    make = lambda: BudgetDAGClassifier(demo.spec, cost_scale=0.05, cv=3, random_state=0)  # noqa: E731
    weighted = make().fit(X, y, sample_weight=w).predict(demo.X_test)
    copied = make().fit(X.iloc[rep], np.asarray(y)[rep]).predict(demo.X_test)
    plain = make().fit(X, y).predict(demo.X_test)
    assert (weighted == copied).mean() >= 0.9
    assert weighted.mean() >= plain.mean()


def test_series_weights_go_by_index() -> None:
    demo, X, y = _toy()
    w = np.random.default_rng(0).integers(1, 4, len(X)).astype(float)
    make = lambda: BudgetDAGClassifier(demo.spec, cost_scale=0.05, cv=3, random_state=0)  # noqa: E731
    by_position = make().fit(X, y, sample_weight=w)
    shuffled = pd.Series(w, index=X.index).sample(frac=1.0, random_state=0)
    by_label = make().fit(X, y, sample_weight=shuffled)
    np.testing.assert_array_equal(
        by_position.predict_proba(demo.X_test), by_label.predict_proba(demo.X_test)
    )


@pytest.mark.parametrize(
    ("weights", "message"),
    [
        (lambda n: -np.ones(n), "row .* is -1.0: weights must be finite and >= 0"),
        (lambda n: np.r_[np.nan, np.ones(n - 1)], "row .* is nan"),
        (lambda n: np.r_[np.inf, np.ones(n - 1)], "row .* is inf"),
        (lambda n: np.zeros(n), "zero on every row"),
        (lambda n: np.ones(n - 1), "one value per row"),
        (lambda n: ["a"] * n, "must be numbers"),
    ],
)
def test_bad_weights_are_refused_naming_the_row(weights, message) -> None:
    demo, X, y = _toy()
    with pytest.raises(ValueError, match=message):
        BudgetDAGClassifier(demo.spec, cost_scale=0.05, cv=3).fit(
            X, y, sample_weight=weights(len(X))
        )


def test_series_weights_with_other_labels_are_refused() -> None:
    demo, X, y = _toy()
    w = pd.Series(np.ones(len(X)) * 2, index=[f"r{i}" for i in range(len(X))])
    with pytest.raises(
        ValueError, match="sample_weight and X have different row labels"
    ):
        BudgetDAGClassifier(demo.spec, cost_scale=0.05, cv=3).fit(X, y, sample_weight=w)


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"classifier": KNeighborsClassifier()}, "model KNeighborsClassifier takes no"),
        (
            {"n_subsets": 2, "subset_scorer": KNeighborsClassifier()},
            "subset scorer KNeighborsClassifier takes no",
        ),
    ],
)
def test_parts_without_weights_refuse_them(params, message) -> None:
    demo, X, y = _toy()
    w = np.r_[2.0, np.ones(len(X) - 1)]
    model = BudgetDAGClassifier(demo.spec, cost_scale=0.05, cv=3, random_state=0)
    with pytest.raises(ValueError, match=message):
        model.set_params(**params).fit(X, y, sample_weight=w)


def test_a_weighted_bank_is_not_reused_for_other_weights() -> None:
    demo, X, y = _toy()
    w = np.r_[2.0, np.ones(len(X) - 1)]
    model = BudgetDAGClassifier(demo.spec, cost_scale=0.05, cv=3, random_state=0)
    weighted = model.fit(X, y, sample_weight=w)
    again = BudgetDAGClassifier(demo.spec, cost_scale=0.2, cv=3, random_state=0)
    again.fit(X, y, bank=weighted.bank_, sample_weight=w)  # same weights: reused
    assert again.bank_ is weighted.bank_
    with pytest.raises(ValueError, match="refit it"):
        again.fit(X, y, bank=weighted.bank_)


def test_auto_scale_search_weighs_the_rows() -> None:
    demo, X, y = _toy()
    w = np.random.default_rng(0).integers(0, 3, len(X)).astype(float)
    model = BudgetDAGClassifier(demo.spec, cv=3, random_state=0).fit(
        X, y, sample_weight=w
    )
    search = model.cost_scale_search_
    assert search["tried"]
    # The reference error is the weighted out-of-fold error of all sensors.
    oof = model.bank_.oof_proba_[:, -1].argmax(axis=1) != np.asarray(y)
    assert np.isclose(search["reference_error"], np.average(oof, weights=w))


# ------------------------------------------------- many sensors, n_subsets
def _wide(n: int = 200, n_sensors: int = 16, seed: int = 0):
    """``n_sensors`` one-column sensors, the label read from three of them;
    a test table of the same law."""
    rng = np.random.default_rng(seed)
    names = [f"s{i}" for i in range(n_sensors)]

    def table(rows: int) -> tuple[pd.DataFrame, np.ndarray]:
        X = pd.DataFrame(rng.normal(size=(rows, n_sensors)), columns=names)
        noise = rng.normal(scale=0.4, size=rows)
        y = (X["s0"] + 0.7 * X["s3"] - 0.7 * X["s5"] + noise > 0).astype(int)
        return X, y.to_numpy()

    X, y = table(n)
    X_test, y_test = table(400)
    return SensorSpec.per_column(names), X, y, X_test, y_test


#: The many-sensor settings tested, and Alg. 2's subsets on 8 sensors.
WIDE = {
    "chain": ({"dag": "chain"}, 16),
    "auto": ({"dag": "auto"}, 16),
    "n_subsets": ({"n_subsets": 3}, 8),
}


def _wide_model(case: str):
    params, n_sensors = WIDE[case]
    spec, X, y, X_test, y_test = _wide(n_sensors=n_sensors)
    model = BudgetDAGClassifier(spec, cost_scale=0.01, cv=3, random_state=0)
    return model.set_params(**params), X, y, X_test, y_test


@pytest.mark.parametrize("case", list(WIDE))
def test_many_sensor_weights_of_one_equal_no_weights(case) -> None:
    model, X, y, X_test, _ = _wide_model(case)
    plain = clone(model).fit(X, y)
    ones = clone(model).fit(X, y, sample_weight=np.ones(len(X)))
    assert ones.strategy_ == plain.strategy_
    assert ones.bank_.fingerprint_ == plain.bank_.fingerprint_
    np.testing.assert_array_equal(
        plain.predict_proba(X_test), ones.predict_proba(X_test)
    )


@pytest.mark.parametrize("case", list(WIDE))
def test_many_sensor_rows_of_weight_zero_are_ignored(case) -> None:
    model, X, y, X_test, y_test = _wide_model(case)
    Xg, yg, w = _with_garbage(X, y, 150, lambda t: 1 - t)
    clean = clone(model).fit(X, y)
    ignored = clone(model).fit(Xg, yg, sample_weight=w)
    with warnings.catch_warnings():  # the garbage may leave nothing worth buying
        warnings.simplefilter("ignore", NothingBoughtWarning)
        counted = clone(model).fit(Xg, yg)
    # Weight 0: as good as the clean fit (the folds differ, the data does
    # not); weight 1 lets the garbage in.
    assert ignored.score(X_test, y_test) >= clean.score(X_test, y_test) - 0.04
    assert counted.score(X_test, y_test) < ignored.score(X_test, y_test) - 0.05
    bought = ignored.trace(X_test)["n_sensors"].mean()
    assert bought >= 0.7 * clean.trace(X_test)["n_sensors"].mean()


@pytest.mark.parametrize("case", list(WIDE))
def test_many_sensor_integer_weights_behave_as_duplicated_rows(case) -> None:
    model, X, y, X_test, _ = _wide_model(case)
    # The positive class three times as heavy: the policies then predict it
    # more often, as they do on a table with its rows copied three times.
    w = np.where(y == 1, 3.0, 1.0)
    rep = np.repeat(np.arange(len(X)), w.astype(int))
    weighted = clone(model).fit(X, y, sample_weight=w).predict(X_test)
    copied = clone(model).fit(X.iloc[rep], y[rep]).predict(X_test)
    plain = clone(model).fit(X, y).predict(X_test)
    assert (weighted == copied).mean() >= 0.85
    assert weighted.mean() > plain.mean()
    assert copied.mean() > plain.mean()


def test_masked_logistic_weights_equal_duplicated_rows() -> None:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 4))
    y = (X[:, 0] + X[:, 1] > 0).astype(int)
    X[rng.random(X.shape) < 0.3] = np.nan  # unacquired values
    w = rng.integers(1, 4, len(X)).astype(float)
    rep = np.repeat(np.arange(len(X)), w.astype(int))
    weighted = MaskEncodedClassifier("logistic").fit(X, y, sample_weight=w)
    copied = MaskEncodedClassifier("logistic").fit(X[rep], y[rep])
    np.testing.assert_allclose(
        weighted.predict_proba(X), copied.predict_proba(X), atol=1e-5
    )


def test_select_subsets_weights() -> None:
    rng = np.random.default_rng(0)
    names = list("abcdef")
    X = pd.DataFrame(rng.normal(size=(300, 6)), columns=names)
    y = (X["a"] + X["b"] > 0).astype(int).to_numpy()
    spec = SensorSpec.per_column(names)
    select = lambda X, y, **kw: select_subsets(  # noqa: E731
        X, y, spec, n_subsets=2, subset_budget=3, random_state=0, **kw
    )
    plain = select(X, y)
    assert plain.subsets == [("a",), ("b",)]
    ones = select(X, y, sample_weight=np.ones(len(X)))
    assert (ones.subsets, ones.reward) == (plain.subsets, plain.reward)
    # Rows whose label column "e" decides, of weight 0, change nothing...
    bad = pd.DataFrame(rng.normal(size=(600, 6)), columns=names)
    Xg = pd.concat([X, bad], ignore_index=True)
    yg = np.r_[y, (bad["e"] > 0).astype(int)]
    w = np.r_[np.ones(len(X)), np.zeros(len(bad))]
    assert select(Xg, yg, sample_weight=w).subsets == plain.subsets
    # ... and counted, they do.
    assert ("e",) in select(Xg, yg).subsets


@pytest.mark.parametrize("kind", ["classifier", "regressor"])
def test_evaluate_weights_equal_duplicated_rows(kind) -> None:
    demo, X, y = _toy()
    if kind == "classifier":
        model = BudgetDAGClassifier(demo.spec, cost_scale=0.05, cv=3, random_state=0)
        target, test_target = y, demo.y_test
    else:
        model = BudgetDAGRegressor(
            demo.spec, regressor="ridge", cost_scale=0.01, cv=3, random_state=0
        )
        target, test_target = 2 * X["precise"], 2 * demo.X_test["precise"]
    model.fit(X, target)
    test = demo.X_test
    w = np.random.default_rng(0).integers(0, 4, len(test)).astype(float)
    rep = np.repeat(np.arange(len(test)), w.astype(int))
    weighted = model.evaluate(test, test_target, sample_weight=w)
    copied = model.evaluate(test.iloc[rep], np.asarray(test_target)[rep])
    assert weighted.pop("n_samples") == len(test)
    assert copied.pop("n_samples") == len(rep)
    assert weighted.keys() == copied.keys()
    for key, value in copied.items():
        assert weighted[key] == pytest.approx(value, rel=1e-12, abs=1e-12), key
    ones = model.evaluate(test, test_target, sample_weight=np.ones(len(test)))
    assert ones == model.evaluate(test, test_target)
    with pytest.raises(ValueError, match="row .* is -1.0"):
        model.evaluate(test, test_target, sample_weight=-np.ones(len(test)))
