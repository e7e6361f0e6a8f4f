"""Confidence-aware policies: top-class probability, margin and entropy as inputs."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from budgetdag_core import BudgetDAGClassifier, dumps_policy, loads_policy
from budgetdag_core.estimator._inputs import confidence_features
from budgetdag_core.reductions import FilterTree
from budgetdag_core.tradeoff._baselines import dag_point, state_predictions
from tests.core.tradeoff_problems import make_problem


@settings(max_examples=50, deadline=None)
@given(
    arrays(
        float,
        st.tuples(st.integers(1, 6), st.integers(2, 5)),
        elements=st.floats(0.01, 1),
    )
)
def test_confidence_features_ranges(raw):
    proba = raw / raw.sum(axis=1, keepdims=True)
    feats = confidence_features(proba)
    top, margin, entropy = feats.T
    n_classes = proba.shape[1]
    np.testing.assert_allclose(top, proba.max(axis=1))
    assert np.all(top >= 1 / n_classes - 1e-12)
    assert np.all((margin >= 0) & (margin <= top + 1e-12))
    assert np.all((entropy >= 0) & (entropy <= np.log(n_classes) + 1e-9))


class RecordingTree(FilterTree):
    """A filter tree that remembers the inputs it was trained on."""

    seen: list[np.ndarray] = []

    def fit(self, Z, C):
        RecordingTree.seen.append(np.array(Z))
        return super().fit(Z, C)


@pytest.fixture(scope="module")
def problem():
    X, y, spec = make_problem(400, 0)
    Xt, yt, _ = make_problem(200, 1)
    return X, y, spec, Xt, yt


@pytest.fixture(scope="module")
def model(problem):
    X, y, spec, _, _ = problem
    return BudgetDAGClassifier(
        spec,
        cost_scale=0.03,
        cv=3,
        random_state=0,
        policy_features="sensors+confidence",
    ).fit(X, y)


def test_policies_see_three_confidences_except_at_the_root(model):
    assert model.uses_confidence_
    for k, policy in enumerate(model.policies_):
        if policy.learner is None:
            continue
        expected = len(model.state_columns_[k]) + (3 if k else 0)
        assert policy.n_features == expected


def test_training_inputs_are_out_of_fold_confidences(problem):
    X, y, spec, _, _ = problem
    RecordingTree.seen = []
    m = BudgetDAGClassifier(
        spec,
        cv=3,
        random_state=0,
        policy_learner=RecordingTree(),
        cost_scale=1.0,  # one Graph-Reduce: "auto" would record its trials too
        policy_features="sensors+confidence",
    ).fit(X, y)
    oof = confidence_features(m.bank_.oof_proba_)
    Xv = X[m.spec_.columns].to_numpy(float)
    matched = 0
    for Z in RecordingTree.seen:
        for k in range(1, m.sensor_dag_.n_states):
            cols = m.state_columns_[k]
            if Z.shape[1] == len(cols) + 3 and np.array_equal(Z[:, :-3], Xv[:, cols]):
                np.testing.assert_array_equal(Z[:, -3:], oof[:, k])
                matched += 1
    assert matched == sum(1 for p in m.policies_ if p.learner is not None) - 1


def test_session_equals_batch(model, problem):
    _, _, _, Xt, _ = problem
    trace = model.trace(Xt)
    for i, row in enumerate(Xt.to_dict("records")):
        session = model.start()
        label = session.run(row)
        assert label == trace["prediction"].iloc[i]
        assert tuple(session.acquired) == trace["acquired"].iloc[i]
        assert session.cost == pytest.approx(trace["cost"].iloc[i])


def test_precomputed_confidences_match_the_model(model, problem):
    _, _, _, Xt, yt = problem
    point = dag_point(model, state_predictions(model, Xt, yt))
    ev = model.evaluate(Xt, yt)
    assert point["error"] == pytest.approx(ev["error"])
    assert point["avg_cost"] == pytest.approx(ev["avg_cost"])
    np.testing.assert_array_equal(
        model.predict_proba(Xt).argmax(axis=1),
        model.predict(Xt) == model.classes_[1],
    )


def test_slim_saved_model_predicts_the_same(model, problem):
    X, y, _, Xt, _ = problem
    loaded = loads_policy(dumps_policy(model))
    np.testing.assert_array_equal(loaded.predict(Xt), model.predict(Xt))
    with pytest.raises(ValueError, match="out-of-fold"):
        loaded.refit_policies(X, y, cost_scale=0.1)


def test_refit_policies_keeps_the_option(model, problem):
    X, y, _, _, _ = problem
    other = model.refit_policies(X, y, cost_scale=0.1)
    assert other.uses_confidence_ and other.bank_ is model.bank_


def test_paper_mode_policies_see_sensors_only(problem):
    X, y, spec, _, _ = problem
    m = BudgetDAGClassifier(spec, cv=3, random_state=0, policy_features="sensors")
    m.fit(X, y)
    assert not m.uses_confidence_
    for k, policy in enumerate(m.policies_):
        if policy.learner is not None:
            assert policy.n_features == len(m.state_columns_[k])


@pytest.fixture(scope="module")
def values_and_proba(problem):
    X, y, spec, _, _ = problem
    return BudgetDAGClassifier(
        spec, cost_scale=0.03, cv=3, random_state=0, policy_features="sensors+proba"
    ).fit(X, y)


def test_sensors_and_proba_widths_and_defaults(values_and_proba):
    m = values_and_proba
    n_classes = len(m.classes_)
    assert m.stop_loss_ == "expected" and m.policy_degree_ == 1
    for k, policy in enumerate(m.policies_):
        if policy.learner is None:
            continue
        extra = n_classes + 3 if k else 0
        assert policy.n_features == len(m.state_columns_[k]) + extra


def test_sensors_and_proba_train_on_values_then_out_of_fold_proba(problem):
    X, y, spec, _, _ = problem
    RecordingTree.seen = []
    m = BudgetDAGClassifier(
        spec,
        cv=3,
        random_state=0,
        policy_learner=RecordingTree(),
        cost_scale=1.0,  # one Graph-Reduce: "auto" would record its trials too
        policy_features="sensors+proba",
    ).fit(X, y)
    Xv = X[m.spec_.columns].to_numpy(float)
    oof = m.bank_.oof_proba_
    extra = len(m.classes_) + 3
    matched = 0
    for Z in RecordingTree.seen:
        for k in range(1, m.sensor_dag_.n_states):
            cols = m.state_columns_[k]
            if Z.shape[1] == len(cols) + extra and np.array_equal(
                Z[:, : len(cols)], Xv[:, cols]
            ):
                np.testing.assert_allclose(Z[:, len(cols) : -3], oof[:, k])
                matched += 1
    assert matched == sum(1 for p in m.policies_ if p.learner is not None) - 1


def test_sensors_and_proba_session_and_saved_model(values_and_proba, problem):
    _, _, _, Xt, yt = problem
    m = values_and_proba
    trace = m.trace(Xt)
    for i, row in enumerate(Xt.head(20).to_dict("records")):
        session = m.start()
        assert session.run(row) == trace["prediction"].iloc[i]
        assert tuple(session.acquired) == trace["acquired"].iloc[i]
    loaded = loads_policy(dumps_policy(m))
    np.testing.assert_array_equal(loaded.predict(Xt), m.predict(Xt))
    point = dag_point(m, state_predictions(m, Xt, yt))
    assert point["error"] == pytest.approx(m.evaluate(Xt, yt)["error"])


@pytest.mark.parametrize(
    "mode", ["sensors", "sensors+confidence", "proba", "sensors+proba"]
)
def test_routes_never_read_unacquired_values(problem, mode):
    """Scrambling every column a row never acquires changes nothing: not its
    path, its cost or its prediction."""
    X, y, spec, Xt, _ = problem
    m = BudgetDAGClassifier(
        spec, cost_scale=0.02, cv=3, random_state=0, policy_features=mode
    ).fit(X, y)
    before = m.trace(Xt)
    scrambled = Xt.copy()
    rng = np.random.default_rng(1)
    for i, acquired in enumerate(before["acquired"]):
        for sensor in set(spec.names) - set(acquired):
            for col in spec.groups[sensor]:
                scrambled.iloc[i, scrambled.columns.get_loc(col)] = rng.normal(0, 50)
    after = m.trace(scrambled)
    assert list(after["acquired"]) == list(before["acquired"])
    np.testing.assert_array_equal(after["prediction"], before["prediction"])
    assert before["n_sensors"].between(1, len(spec.names) - 1).any()
