from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone

from budgetdag_core import (
    BudgetDAGClassifier,
    PolicyVersionWarning,
    load_demo,
    load_policy,
    save_policy,
)
from budgetdag_core.persist import _io as persist_io


@pytest.fixture(scope="module")
def landsat_small():
    demo = load_demo("landsat")
    train = demo.train.sample(1200, random_state=0)
    test = demo.test.sample(400, random_state=0)
    return demo.spec, train[demo.spec.columns], train["label"], test[demo.spec.columns]


@pytest.fixture(scope="module")
def landsat_model(landsat_small):
    spec, X, y, _ = landsat_small
    return BudgetDAGClassifier(spec, cost_scale=0.03, cv=3, random_state=0).fit(X, y)


def test_fit_predict_trace_evaluate(synth) -> None:
    X, y, spec = synth
    model = BudgetDAGClassifier(spec, cost_scale=0.05, cv=3, random_state=0).fit(X, y)
    pred = model.predict(X)
    assert pred.shape == (len(X),)
    proba = model.predict_proba(X)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, atol=1e-6)
    tr = model.trace(X)
    assert {"prediction", "acquired", "cost", "n_sensors"} <= set(tr.columns)
    np.testing.assert_array_equal(tr["prediction"], pred)
    ev = model.evaluate(X, y)
    assert ev["error"] == pytest.approx((pred != y).mean())
    assert ev["avg_cost"] == pytest.approx(tr["cost"].mean())
    assert ev["avg_sensors"] == pytest.approx(tr["n_sensors"].mean())
    # acquired tuples are in acquisition order and match the stop state
    for acquired, stop in zip(tr["acquired"], tr["stop_state"], strict=True):
        assert set(acquired) == set(model.dag_.nodes[stop]["sensors"])


def test_dag_attribute(synth) -> None:
    X, y, spec = synth
    model = BudgetDAGClassifier(spec, cv=3, random_state=0).fit(X, y)
    assert model.dag_.number_of_nodes() == 8
    assert model.dag_.nodes[0]["sensors"] == ()
    assert len(model.policies_) == 8


def test_flow_counts_are_consistent(synth) -> None:
    X, y, spec = synth
    model = BudgetDAGClassifier(spec, cost_scale=0.05, cv=3, random_state=0).fit(X, y)
    g = model.flow(X, y)
    assert g.nodes[0]["arrived"] == len(X)
    assert sum(d["stopped"] for _, d in g.nodes(data=True)) == len(X)
    for k, data in g.nodes(data=True):
        inflow = sum(g.edges[u, k]["count"] for u in g.predecessors(k))
        outflow = sum(g.edges[k, v]["count"] for v in g.successors(k))
        if k:
            assert data["arrived"] == inflow
        assert data["arrived"] == data["stopped"] + outflow
    errors = sum(d["errors"] for _, d in g.nodes(data=True))
    assert errors == (model.predict(X) != y).sum()


def test_session_equals_batch_on_real_data(landsat_small, landsat_model) -> None:
    spec, _, _, X_test = landsat_small
    tr = landsat_model.trace(X_test)
    assert tr["n_sensors"].nunique() > 1  # an adaptive policy, not a constant one
    for i in range(len(X_test)):
        row = X_test.iloc[i]
        session = landsat_model.start()
        asked = []
        while (sensor := session.next_sensor()) is not None:
            asked.append(sensor)
            session.observe(sensor, {c: row[c] for c in spec.groups[sensor]})
        assert tuple(asked) == tr["acquired"].iloc[i]
        assert session.predict() == tr["prediction"].iloc[i]
        assert session.cost == pytest.approx(tr["cost"].iloc[i])


def test_session_refuses_unrequested_sensor(landsat_model, landsat_small) -> None:
    spec = landsat_small[0]
    session = landsat_model.start()
    first = session.next_sensor()
    other = next(n for n in spec.names if n != first)
    with pytest.raises(ValueError, match="not requested"):
        session.observe(other, dict.fromkeys(spec.groups[other], 1.0))
    if first is not None:
        with pytest.raises(ValueError, match="lack column"):
            session.observe(first, {})
        # Landsat bands have 9 columns: a bare number is refused by name.
        with pytest.raises(ValueError, match=f"Sensor '{first}' has columns"):
            session.observe(first, 1.0)


def test_session_buys_a_sensor_of_the_callers_choice(
    landsat_model, landsat_small
) -> None:
    spec, _, _, X_test = landsat_small
    row = X_test.iloc[0]

    def values(sensor):
        return {c: row[c] for c in spec.groups[sensor]}

    session = landsat_model.start()
    first = session.next_sensor()
    mine = next(n for n in spec.names if n != first)
    session.buy(mine, values(mine))  # the policy's pick set aside
    assert session.acquired == [mine] and session.cost == spec.costs[mine]
    assert [d["action"] for d in session.decisions] == ["acquire"]
    assert session.decisions[0]["chosen"]
    held = landsat_model.sensor_dag_.state_names(session.state)
    assert held == (mine,)
    # From there the policy decides as a batch row holding the same sensors
    # would: its next pick is one the DAG offers from that state.
    after = session.next_sensor()
    assert after is None or after not in session.acquired
    # Held already, unknown: refused by name; and after the policy's stop a
    # chosen sensor takes the walk on.
    with pytest.raises(ValueError, match="held already"):
        session.buy(mine, values(mine))
    with pytest.raises(ValueError, match="Unknown sensor 'nope'"):
        session.buy("nope", 1.0)
    while (sensor := session.next_sensor()) is not None:
        session.observe(sensor, values(sensor))
    rest = [n for n in spec.names if n not in session.acquired]
    if rest:
        session.buy(rest[0], values(rest[0]))
        assert session.acquired[-1] == rest[0] and not session.stopped
        assert session.decisions[-1]["chosen"]


def test_refit_policies_reuses_bank(landsat_small, landsat_model) -> None:
    spec, X, y, X_test = landsat_small
    cheap = landsat_model.refit_policies(X, y, cost_scale=0.0)
    assert cheap.bank_ is landsat_model.bank_
    dear = landsat_model.refit_policies(X, y, cost_scale=100.0)
    assert (dear.trace(X_test)["n_sensors"] == 0).all()
    fresh = BudgetDAGClassifier(spec, cost_scale=0.0, cv=3, random_state=0).fit(X, y)
    np.testing.assert_array_equal(cheap.predict(X_test), fresh.predict(X_test))


def test_model_keeps_no_rows_by_states_table(landsat_small, landsat_model) -> None:
    """The training cost-to-go is the root's column of Graph-Reduce's table, kept
    as its own array: a view would hold the whole (rows x states) table per
    model (a sweep keeps one model per point)."""
    _, X, _, _ = landsat_small
    kept = landsat_model.train_cost_to_go_
    assert kept.shape == (len(X),)
    assert kept.base is None and kept.flags.owndata


def test_foreign_bank_is_rejected(landsat_small, landsat_model) -> None:
    spec, X, y, _ = landsat_small
    with pytest.raises(ValueError, match="other data or settings"):
        BudgetDAGClassifier(spec, cv=3, random_state=1).fit(
            X, y, bank=landsat_model.bank_
        )


def test_determinism(synth) -> None:
    X, y, spec = synth
    a = BudgetDAGClassifier(spec, cost_scale=0.05, cv=3, random_state=3).fit(X, y)
    b = BudgetDAGClassifier(spec, cost_scale=0.05, cv=3, random_state=3).fit(X, y)
    pd.testing.assert_frame_equal(a.trace(X), b.trace(X))
    np.testing.assert_array_equal(a.bank_.oof_proba_, b.bank_.oof_proba_)


def test_save_load_round_trip(tmp_path, landsat_small, landsat_model) -> None:
    spec, _, _, X_test = landsat_small
    path = save_policy(landsat_model, tmp_path / "m.pkl")
    loaded = load_policy(path)
    pd.testing.assert_frame_equal(loaded.trace(X_test), landsat_model.trace(X_test))
    assert loaded.metadata_["sensor_spec"] == spec.to_dict()
    assert loaded.metadata_["classes"] == list(landsat_model.classes_)
    assert loaded.metadata_["feature_columns"] == spec.columns
    # the in-memory model keeps its training predictions (slim copies only)
    assert hasattr(landsat_model.bank_, "oof_proba_")


def test_load_warns_on_version_mismatch(tmp_path, monkeypatch, synth) -> None:
    X, y, spec = synth
    model = BudgetDAGClassifier(spec, cv=3, random_state=0).fit(X, y)
    path = save_policy(model, tmp_path / "m.pkl")
    monkeypatch.setattr(persist_io, "__version__", "0.0.0-other")
    with pytest.warns(PolicyVersionWarning, match="budgetdag_core"):
        load_policy(path)


def test_sklearn_conventions(synth) -> None:
    X, y, spec = synth
    model = BudgetDAGClassifier(spec, cost_scale=0.2, cv=3)
    params = model.get_params()
    # policy_degree None: resolved at fit (1 on the default probability inputs).
    assert params["cost_scale"] == 0.2 and params["policy_degree"] is None
    copy = clone(model).set_params(policy_degree=1)
    assert copy.policy_degree == 1 and model.policy_degree is None
    assert copy.fit(X, y) is copy
    assert not hasattr(model, "policies_")


@pytest.mark.parametrize("learner", ["filter_tree", "cost_regression"])
def test_policy_learners_selectable(synth, learner) -> None:
    X, y, spec = synth
    model = BudgetDAGClassifier(
        spec, cost_scale=0.02, policy_learner=learner, cv=3, random_state=0
    ).fit(X, y)
    assert model.evaluate(X, y)["error"] < 0.3


def test_evaluate_states_baselines(synth) -> None:
    X, y, spec = synth
    model = BudgetDAGClassifier(spec, cv=3, random_state=0).fit(X, y)
    states = model.evaluate_states(X, y)
    assert len(states) == 8
    assert states["avg_cost"].iloc[0] == 0
    assert states["avg_cost"].iloc[-1] == pytest.approx(spec.total_cost)
    assert states["error"].iloc[-1] < states["error"].iloc[0]


def test_feature_names_in_only_after_a_fit_on_named_columns(tmp_path) -> None:
    # scikit-learn's convention: an array has no feature names to remember.
    from budgetdag_core import BudgetDAGRegressor

    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 3))
    y_class = (X[:, 0] > 0).astype(int)
    for model, y in (
        (BudgetDAGClassifier(cv=2, cost_scale=0.01, random_state=0), y_class),
        (BudgetDAGRegressor(cv=2, cost_scale=0.01, random_state=0), X[:, 0]),
    ):
        model.fit(X, y)
        assert not hasattr(model, "feature_names_in_") and model.n_features_in_ == 3
        model.check_integrity()  # a fitted model without names is whole
        path = tmp_path / f"{type(model).__name__}.pkl"
        save_policy(model, path)
        assert load_policy(path).n_features_in_ == 3
        frame = pd.DataFrame(X, columns=["a", "b", "c"])
        assert list(model.fit(frame, y).feature_names_in_) == ["a", "b", "c"]
