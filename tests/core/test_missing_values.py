"""Missing values (NaN: a value not measured): taken where the bank takes
them, refused with the column, the row and the reason where not; sessions
and batch predictions agree on rows with NaN."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import Ridge

from budgetdag_core import BudgetDAGClassifier, BudgetDAGRegressor, tradeoff_curve
from budgetdag_core.estimator._inputs import PolicyInputs
from tests.conftest import SYNTH_SPEC, make_synthetic


def with_gaps(X: pd.DataFrame, share: float = 0.15, seed: int = 1) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return X.mask(rng.random(X.shape) < share)


def many_sensors(n: int = 200, m: int = 14) -> tuple[pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(n, m)), columns=[f"s{i}" for i in range(m)])
    y = (X["s0"] + 0.5 * X["s1"] + rng.normal(scale=0.5, size=n) > 0).astype(int)
    return X, y.to_numpy()


def assert_sessions_agree(model, X: pd.DataFrame) -> None:
    """Each row with a NaN, run value by value through a session, buys the
    sensors and gets the prediction of the batch ``trace``/``predict``."""
    trace, pred = model.trace(X), model.predict(X)
    gaps = np.flatnonzero(X.isna().any(axis=1).to_numpy())
    assert len(gaps) >= 10
    for i in gaps[:25]:
        session = model.start()
        got = session.run(X.iloc[i].to_dict())
        assert list(session.acquired) == list(trace["acquired"].iloc[i]), i
        assert got == pytest.approx(pred[i]), i


@pytest.mark.parametrize("many", [False, True])
def test_a_table_with_nan_trains_with_the_default_classifier(many) -> None:
    if many:  # beyond 12 sensors: the any-subset bank and its DAGs
        X, y = many_sensors()
        model = BudgetDAGClassifier(cost_scale=0.005, cv=2, max_states=60)
    else:
        X, y = make_synthetic(240)
        model = BudgetDAGClassifier(SYNTH_SPEC, cost_scale=0.02, cv=3)
    Xn = with_gaps(X)
    model.set_params(random_state=0).fit(Xn, y)
    report = model.evaluate(Xn, y)
    assert report["avg_sensors"] > 0 and report["error"] < 0.4  # it learned
    assert_sessions_agree(model, Xn)
    # A policy sees a missing value as 0: the same row with 0 there routes
    # the same way wherever the policies read values, and never fails.
    assert np.isfinite(model.predict_proba(Xn)).all()


def test_a_table_with_nan_trains_with_the_default_regressor() -> None:
    X, _ = make_synthetic(200)
    target = X.sum(axis=1).to_numpy()
    Xn = with_gaps(X)
    model = BudgetDAGRegressor(SYNTH_SPEC, cost_scale=0.001, cv=3, random_state=0)
    model.fit(Xn, target)
    assert model.evaluate(Xn, target)["mse"] < np.var(target)
    assert_sessions_agree(model, Xn)


@pytest.mark.parametrize("make", [BudgetDAGClassifier, BudgetDAGRegressor])
def test_the_default_estimators_take_nan_and_sessions_agree(make) -> None:
    # No setting at all: the default bank, cost_scale="auto", dag="auto".
    X, y = make_synthetic(240)
    target = y if make is BudgetDAGClassifier else X[["w1", "m1", "s1"]].sum(axis=1)
    Xn = with_gaps(X)
    model = make(random_state=0).fit(Xn, target)
    report = model.evaluate(Xn, target)
    assert report["avg_sensors"] > 0  # it buys and learns despite the gaps
    if make is BudgetDAGClassifier:
        assert report["error"] < 0.2
    else:
        assert report["mse"] < 0.5 * np.var(target)
    assert_sessions_agree(model, Xn)


def test_a_sweep_takes_nan_too() -> None:
    X, y = make_synthetic(150)
    res = tradeoff_curve(with_gaps(X), y, SYNTH_SPEC, n_points=3, cv=2, random_state=0)
    assert len(res.frame) and np.isfinite(res.frame["error"]).all()


@pytest.mark.parametrize(
    "make, reason",
    [
        (lambda: BudgetDAGClassifier(SYNTH_SPEC, bank_kind="per_subset"), "logistic"),
        (lambda: BudgetDAGClassifier(SYNTH_SPEC, n_subsets=2), "subset selection"),
        (lambda: BudgetDAGRegressor(SYNTH_SPEC, regressor="ridge"), "ridge"),
        (lambda: BudgetDAGRegressor(SYNTH_SPEC, regressor=Ridge()), "Ridge does not"),
    ],
)
def test_nan_is_refused_where_the_bank_cannot_take_it(make, reason) -> None:
    X, y = make_synthetic(120)
    X.loc[[4, 9], "m2"] = np.nan
    model = make()
    target = y if isinstance(model, BudgetDAGClassifier) else X["s1"].to_numpy()
    with pytest.raises(ValueError, match=reason) as info:
        model.fit(X, target)
    message = str(info.value)
    assert "'m2'" in message and "2 row(s)" in message and "first at row 4" in message
    assert not hasattr(model, "policies_")


def test_infinity_is_still_refused_and_a_session_refuses_nan_where_predict_does():
    X, y = make_synthetic(120)
    model = BudgetDAGClassifier(SYNTH_SPEC, cv=2, cost_scale=0.001, random_state=0)
    bad = X.copy()
    bad.loc[3, "s1"] = np.inf
    with pytest.raises(ValueError, match="'s1'.*infinite.*first at row 3"):
        model.fit(bad, y)
    refusing = BudgetDAGClassifier(
        SYNTH_SPEC, bank_kind="per_subset", cv=2, cost_scale=0.001, random_state=0
    ).fit(X, y)
    with pytest.raises(ValueError, match="logistic"):
        refusing.predict(with_gaps(X))
    session = refusing.start()
    sensor = session.next_sensor()
    if sensor is not None:
        columns = SYNTH_SPEC.groups[sensor]
        with pytest.raises(ValueError, match="NaN"):
            session.observe(sensor, dict.fromkeys(columns, np.nan))


def test_policy_inputs_read_a_missing_value_as_zero() -> None:
    inputs = PolicyInputs("sensors", [np.array([], dtype=int), np.array([0, 1])])
    X = np.array([[1.0, np.nan], [np.nan, 2.0]])
    np.testing.assert_array_equal(inputs.of_rows(X, 1), [[1.0, 0.0], [0.0, 2.0]])
    assert np.isnan(X).sum() == 2  # the caller's rows are left as they were
