"""Every bad input gets a ValueError naming the problem, before any training."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from budgetdag_core import BudgetDAGClassifier, SensorSpec


def _data(n: int = 60) -> tuple[pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(n, 3)), columns=["a", "b", "c"])
    return X, np.arange(n) % 2


SPEC = SensorSpec.per_column(["a", "b", "c"])


def _fit(X, y, spec=SPEC, **params):
    model = BudgetDAGClassifier(spec, cv=3, **params)
    with pytest.raises(ValueError) as info:
        model.fit(X, y)
    # no partial state after a failed fit
    assert not [k for k in vars(model) if k.endswith("_") and not k.startswith("_")]
    return str(info.value)


def test_spec_column_not_in_data() -> None:
    X, y = _data()
    spec = SensorSpec({"s": ["a", "zz"]}, {"s": 1})
    assert "'zz'" in _fit(X, y, spec)


def test_non_numeric_column_named() -> None:
    X, y = _data()
    X["b"] = ["x"] * len(X)
    assert "'b' is not numeric" in _fit(X, y)


def test_nan_and_inf_named_with_row_count() -> None:
    X, y = _data()
    X.loc[[3, 7], "c"] = np.nan
    # NaN is refused where the bank cannot take it (the default takes it:
    # test_missing_values).
    msg = _fit(X, y, bank_kind="per_subset")
    assert "'c'" in msg and "2 row(s)" in msg and "row 3" in msg
    X, y = _data()
    X.loc[5, "a"] = np.inf
    assert "'a'" in _fit(X, y)


def test_missing_labels() -> None:
    X, _ = _data()
    y = pd.Series(np.arange(len(X)) % 2, dtype=float)
    y.iloc[4] = np.nan
    assert "label(s) are missing" in _fit(X, y)


def test_one_class() -> None:
    X, _ = _data()
    assert "only one class" in _fit(X, np.zeros(len(X)))


def test_class_of_one_row_is_refused() -> None:
    # A class of 2 rows with cv=3 is fitted with 2 folds (estimator._small_data);
    # a class of one row cannot be held out and is refused, named.
    X, y = _data()
    y = y.copy()
    y[:1] = 7
    assert "7" in _fit(X, y)


def test_too_many_sensors_for_a_full_dag_points_to_n_subsets() -> None:
    # The default (dag="auto") grows a sparse DAG beyond 12 sensors instead.
    rng = np.random.default_rng(0)
    cols = [f"x{i}" for i in range(13)]
    X = pd.DataFrame(rng.normal(size=(30, 13)), columns=cols)
    msg = _fit(X, np.arange(30) % 2, SensorSpec.per_column(cols), dag="full")
    assert "13 sensors" in msg and "n_subsets" in msg


def test_empty_data() -> None:
    X, y = _data()
    assert "empty" in _fit(X.iloc[:0], y[:0])


def test_length_mismatch() -> None:
    X, y = _data()
    assert "labels" in _fit(X, y[:-1])


def test_not_a_dataframe() -> None:
    # An array of the spec's width is read by column position (scikit-learn
    # style, see test_hardening); one of another width is refused.
    X, y = _data()
    message = _fit(X.to_numpy()[:, :2], y)
    assert "X has 2 features" in message and "DataFrame" in message


def test_duplicate_columns() -> None:
    X, y = _data()
    X.columns = ["a", "b", "b"]
    assert "Duplicate column" in _fit(X, y, SensorSpec.per_column(["a", "b"]))


@pytest.mark.parametrize(
    ("groups", "costs", "message"),
    [
        ({"s": ["a"], "t": ["a"]}, {"s": 1, "t": 1}, "two sensors"),
        ({"s": ["a"]}, {"s": -2}, "negative"),
        ({"s": ["a"]}, {"s": float("nan")}, "not finite"),
        ({"s": ["a"]}, {"s": float("inf")}, "not finite"),
    ],
)
def test_bad_spec_in_estimator(groups, costs, message) -> None:
    X, y = _data()
    model = BudgetDAGClassifier({"groups": groups, "costs": costs}, cv=3)
    with pytest.raises(ValueError, match=message):
        model.fit(X, y)


def test_bad_parameters() -> None:
    X, y = _data()
    with pytest.raises(ValueError, match="cost_scale"):
        BudgetDAGClassifier(SPEC, cost_scale=-1).fit(X, y)
    with pytest.raises(ValueError, match="policy_degree"):
        BudgetDAGClassifier(SPEC, policy_degree=5).fit(X, y)


def test_bad_sample_costs() -> None:
    X, y = _data()
    costs = pd.DataFrame(np.ones((len(X), 3)), columns=["a", "b", "c"])
    costs.iloc[2, 1] = -1
    model = BudgetDAGClassifier(SPEC, cv=3)
    with pytest.raises(ValueError, match="sensor 'b' at row 2"):
        model.fit(X, y, sample_costs=costs)


def test_predict_checks_columns(synth) -> None:
    X, y, spec = synth
    model = BudgetDAGClassifier(spec, cv=3, random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="'s1'"):
        model.predict(X.drop(columns=["s1"]))
