"""Inputs that were accepted and then crashed, or gave silently wrong models
(issue 28, cases 8 and 9, library): each now works or is refused by name."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

from budgetdag_core import BudgetDAGClassifier, BudgetDAGRegressor, SensorSpec
from budgetdag_core.bank._lgbm_trees import LightGBMTrees
from budgetdag_core.validation import int_seed


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.normal(size=300), "b": rng.normal(size=300)})
    y = (X["a"] + 0.3 * X["b"] > 0).astype(int).to_numpy()
    return X, y


def _fit(X, y, **params):
    params = {"cost_scale": 0.01, "cv": 3, "random_state": 0, **params}
    return BudgetDAGClassifier(**params).fit(X, y)


# ------------------------------------------------------------- random_state
def test_a_random_state_instance_fits_deterministically(data):
    X, y = data
    state = np.random.RandomState(0)
    first = _fit(X, y, random_state=state)
    again = _fit(X, y, random_state=np.random.RandomState(0))
    np.testing.assert_array_equal(first.predict_proba(X), again.predict_proba(X))
    # The seed is read, not drawn: the same instance gives the same model.
    np.testing.assert_array_equal(
        _fit(X, y, random_state=state).predict_proba(X), first.predict_proba(X)
    )
    seeded = _fit(X, y, random_state=int_seed(np.random.RandomState(0)))
    np.testing.assert_array_equal(seeded.predict_proba(X), first.predict_proba(X))


def test_a_random_state_instance_reuses_its_bank(data):
    X, y = data
    model = BudgetDAGClassifier(
        cost_scale=0.01, cv=3, random_state=np.random.RandomState(1)
    )
    bank = model.fit_bank(X, y)
    assert model.fit(X, y, bank=bank).bank_ is bank


def test_a_random_state_instance_in_the_regressor_and_subsets(data):
    X, y = data
    target = X["a"] * 2 + X["b"]
    regressor = BudgetDAGRegressor(cv=3, random_state=np.random.RandomState(0))
    assert regressor.fit(X, target).evaluate(X, target)["mse"] < 1
    model = _fit(X, y, random_state=np.random.RandomState(0), n_subsets=2)
    assert len(model.subset_selection_.subsets) >= 1


def test_int_seed_names_what_it_cannot_use():
    assert int_seed(None) is None and int_seed(np.int64(3)) == 3
    with pytest.raises(ValueError, match="random_state must be None, an int"):
        int_seed("0")


# ---------------------------------------------------------- feature columns
@pytest.mark.parametrize("as_object", [False, True])
def test_complex_columns_are_refused_by_name(data, as_object):
    X, y = data
    X = X.assign(b=X["b"] + 1j)
    if as_object:
        X = X.astype({"b": object})
    with pytest.raises(ValueError, match="Feature column 'b' holds complex numbers"):
        _fit(X, y)


def test_an_object_column_of_floats_is_read_as_floats(data):
    X, y = data
    as_objects = X.astype({"a": object})
    assert as_objects["a"].dtype == object
    np.testing.assert_array_equal(
        _fit(as_objects, y).predict_proba(X), _fit(X, y).predict_proba(X)
    )
    with pytest.raises(ValueError, match="Feature column 'a' is not numeric .*'x'"):
        _fit(as_objects.assign(a=["x"] + list(X["a"][1:])), y)


def test_columns_equal_as_text_are_refused(data):
    X, y = data
    both = pd.DataFrame({0: X["a"], "0": X["b"]})
    with pytest.raises(ValueError, match="Columns 0 and '0' have the same name"):
        _fit(both, y)
    spec = SensorSpec({"s": ["0"]}, {"s": 1})
    with pytest.raises(ValueError, match="Columns 0 and '0'"):
        _fit(both, y, sensors=spec)


def test_tiny_features_train_the_default_bank_as_normal_ones(data):
    # LightGBM bins |x| <= 1e-35 as zero: main's default bank was at chance.
    X, y = data
    tiny = X * 1e-36
    normal_error = _fit(X, y, cost_scale=0).evaluate(X, y)["error"]
    tiny_error = _fit(tiny, y, cost_scale=0).evaluate(tiny, y)["error"]
    assert normal_error < 0.05
    assert tiny_error < normal_error + 0.02


def test_tiny_columns_give_the_trees_of_their_rescaled_values():
    # Scaled by a power of two, the booster sees the same numbers, and the
    # thresholds are scaled back: the same scores, bit for bit.
    rng = np.random.default_rng(1)
    X = rng.normal(size=(400, 3))
    X /= 2.0 ** np.ceil(np.log2(np.abs(X).max(axis=0)))  # largest |x| in [0.5, 1)
    y = (X[:, 0] - X[:, 2] > 0).astype(int)
    tiny = np.ldexp(X, [-130, 0, -200])  # 1e-39 and 1e-60: zero to LightGBM
    plain = LightGBMTrees(random_state=0).fit(X, y)
    scaled = LightGBMTrees(random_state=0).fit(tiny, y)
    np.testing.assert_array_equal(
        scaled.decision_function(tiny), plain.decision_function(X)
    )
    np.testing.assert_array_equal(scaled.split_feature_, plain.split_feature_)


def test_normal_columns_are_not_rescaled():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(300, 2)) * [1e-19, 1e150]
    y = (X[:, 0] > 0).astype(int)
    model = LightGBMTrees(random_state=0).fit(X, y)
    assert (model.predict(X) == y).mean() > 0.95


# ------------------------------------------------------------------ targets
def test_targets_too_large_for_the_bank_are_refused_by_name(data):
    X, _ = data
    target = (X["a"] * 3 + X["b"]) * 1e39
    with pytest.raises(ValueError, match="target y has .* magnitude above 1e\\+30"):
        BudgetDAGRegressor(cv=3, random_state=0).fit(X, target)
    fine = (X["a"] * 3 + X["b"]) * 1e28
    model = BudgetDAGRegressor(cv=3, random_state=0, cost_scale=0).fit(X, fine)
    assert model.evaluate(X, fine)["mse"] / 1e56 < 1


# ----------------------------------------------------------------- sessions
@pytest.mark.parametrize(
    ("costs", "match"),
    [
        ("A", "must map sensor names to this example's costs; got str 'A'"),
        ("a", "must map sensor names"),
        ({"a": "1"}, "sample_costs of sensor 'a' is the text '1'"),
        ({"a": 10**400}, "sample_costs of sensor 'a' is too large"),
    ],
)
def test_session_costs_are_checked_before_use(data, costs, match):
    X, y = data
    model = _fit(X, y, sensors=SensorSpec({"a": ["a"], "b": ["b"]}, {"a": 1, "b": 1}))
    with pytest.raises(ValueError, match=match):
        model.start(sample_costs=costs)


@pytest.mark.parametrize(
    ("value", "match"),
    [
        (10**400, "values\\['a'\\] is an integer of about 401 digits: magnitudes"),
        (-(10**400), "an integer of about 401 digits: magnitudes"),
        (Fraction(10**400, 3), "values\\['a'\\] is Fraction\\(.*too large"),
        (Fraction(10**5000, 3), "is a Fraction too long to show: magnitudes"),
        ("x" * 10**6, "values\\['a'\\] is the text 'xxx.*\\.\\.\\., not a number"),
        (object(), "values\\['a'\\] is not a number: <object object"),
    ],
)
def test_session_values_are_refused_by_name_in_a_short_line(data, value, match):
    X, y = data
    spec = SensorSpec({"a": ["a"], "b": ["b"]}, {"a": 1e-3, "b": 1e-3})
    session = _fit(X, y, sensors=spec).start()
    sensor = session.next_sensor()  # cheap sensors: the policy asks for one
    match = match.replace("'a'", repr(sensor))
    with pytest.raises(ValueError, match=match) as info:
        session.observe(sensor, {sensor: value})
    assert len(str(info.value)) < 200
    with pytest.raises(ValueError, match=match):
        session.observe(sensor, value)  # one column: a plain value
    with pytest.raises(ValueError, match="Unknown sensor 'xxx.*\\.\\.\\.; known"):
        session.observe("x" * 10**6, 1.0)
