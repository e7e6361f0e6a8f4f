"""PolicyInputs: one answer to "what does the policy at this state see"."""

from __future__ import annotations

import numpy as np
import pytest

from budgetdag_core import BudgetDAGClassifier, BudgetDAGRegressor, toy_dataset
from budgetdag_core.estimator import POLICY_FEATURES
from budgetdag_core.estimator._inputs import PolicyInputs

STATES = [np.array([], dtype=int), np.array([0, 2]), np.array([1])]


@pytest.mark.parametrize("kind", POLICY_FEATURES)
def test_width_is_what_of_rows_gives(kind):
    inputs = PolicyInputs(kind, STATES, n_classes=3)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(7, 3))
    proba = rng.dirichlet(np.ones(3), size=7)
    for k in range(len(STATES)):
        Z = inputs.of_rows(X, k, proba=proba)
        assert Z.shape == (7, inputs.width(k))
        rows = np.array([4, 1])
        np.testing.assert_array_equal(
            inputs.of_rows(X, k, rows, proba=proba[rows]), Z[rows]
        )


def test_the_root_and_sensor_inputs_never_read_the_classifier():
    for kind in POLICY_FEATURES:
        assert not PolicyInputs(kind, STATES, 3).reads_model_at(0)
    sensors = PolicyInputs("sensors", STATES)
    X = np.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(sensors.of_rows(X, 1), X[:, [0, 2]])
    assert not any(sensors.reads_model_at(k) for k in range(len(STATES)))


def test_unacquired_columns_are_never_read():
    inputs = PolicyInputs("sensors+confidence", STATES, 3)
    X = np.zeros((2, 3))
    proba = np.full((2, 3), 1 / 3)
    before = inputs.of_rows(X, 2, proba=proba)
    X[:, [0, 2]] = np.nan  # not in state 2
    np.testing.assert_array_equal(inputs.of_rows(X, 2, proba=proba), before)


def test_training_needs_out_of_fold_probabilities_when_it_reads_them():
    with pytest.raises(ValueError, match="out-of-fold"):
        PolicyInputs("proba", STATES, 3).training(np.zeros((2, 3)), None)
    assert PolicyInputs("sensors", STATES).training(np.zeros((2, 3)), None)(
        1
    ).shape == (
        2,
        2,
    )


@pytest.mark.parametrize("kind", ["sensors", "proba"])
def test_a_fitted_model_routes_with_its_inputs(kind):
    demo = toy_dataset(240, 40, random_state=1)
    model = BudgetDAGClassifier(
        demo.spec, cost_scale=0.02, cv=3, random_state=0, policy_features=kind
    ).fit(demo.X_train, demo.y_train)
    inputs = model.inputs_
    assert inputs.kind == kind and inputs.n_classes == len(model.classes_)
    for k, policy in enumerate(model.policies_):
        if policy.learner is not None:
            assert policy.n_features == inputs.width(k)
    # Training inputs (out-of-fold) and the session's agree on what they hold.
    Xv = model._features(demo.X_train)
    train = inputs.training(Xv, model.bank_.oof_proba_)
    for k in range(model.sensor_dag_.n_states):
        assert train(k).shape == (len(Xv), inputs.width(k))
    session = model.start()
    assert session.next_sensor() is None or session.sensors == ()


def test_the_regressor_sees_sensor_values():
    demo = toy_dataset(200, 20, random_state=2)
    y = demo.X_train.iloc[:, 0].to_numpy()
    model = BudgetDAGRegressor(demo.spec, cv=3, random_state=0).fit(demo.X_train, y)
    assert model.inputs_.kind == "sensors"
    assert not model.inputs_.reads_model
