"""Example-dependent acquisition costs (eq. 9 of the paper), end to end."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from budgetdag_core import BudgetDAGClassifier, SensorSpec


def _problem(n: int = 400, seed: int = 0):
    """``flag`` is free and tells nothing about y; ``strong`` is expensive and
    decides y; ``weak`` is cheap and noisy."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    X = pd.DataFrame(
        {
            "flag": rng.normal(size=n),
            "weak": (2 * y - 1) * 0.5 + rng.normal(size=n),
            "strong": (2 * y - 1) * 2.0 + rng.normal(scale=0.3, size=n),
        }
    )
    spec = SensorSpec.per_column(
        list(X.columns), cost={"flag": 0.0, "weak": 0.02, "strong": 1.0}
    )
    return X, y, spec


def _model(spec, **kw):
    # Sensor-value inputs: the costs depend on an observed sensor ("flag") that
    # says nothing about the class, so only a policy that sees sensor values can
    # know where "strong" is free (the default probability inputs cannot).
    params = {
        "cost_scale": 1.0,
        "policy_degree": 1,
        "cv": 3,
        "random_state": 0,
        "policy_features": "sensors",
    }
    return BudgetDAGClassifier(spec, **{**params, **kw})


def _costs(X, spec, strong):
    costs = pd.DataFrame({n: spec.costs[n] for n in spec.names}, index=X.index)
    costs["strong"] = strong
    return costs


def test_making_the_expensive_sensor_free_gets_it_bought():
    X, y, spec = _problem()
    base = _model(spec).fit(X, y)
    bought = base.trace(X)["acquired"].map(lambda a: "strong" in a)
    assert bought.mean() < 0.05  # too expensive at cost 1 for a ~25% error

    free = _model(spec).fit(X, y, sample_costs=_costs(X, spec, 0.0))
    bought_free = free.trace(X)["acquired"].map(lambda a: "strong" in a)
    assert bought_free.mean() > 0.9


def test_rows_whose_expensive_sensor_is_free_acquire_it():
    # The cost depends on an observed free sensor, so the policy can learn
    # where "strong" costs nothing: exactly there it should buy it.
    X, y, spec = _problem(n=600)
    free_rows = X["flag"].to_numpy() > 0
    costs = _costs(X, spec, np.where(free_rows, 0.0, 1.0))
    model = _model(spec).fit(X, y, sample_costs=costs)
    tr = model.trace(X, sample_costs=costs)
    bought = tr["acquired"].map(lambda a: "strong" in a).to_numpy()
    assert bought[free_rows].mean() > 0.8
    assert bought[~free_rows].mean() < 0.2
    # Per-example accounting: what each row paid under its own costs.
    expected = [
        sum(costs.iloc[i][s] for s in acq) for i, acq in enumerate(tr["acquired"])
    ]
    np.testing.assert_allclose(tr["cost"].to_numpy(), expected)
    result = model.evaluate(X, y, sample_costs=costs)
    assert result["avg_cost"] == pytest.approx(tr["cost"].mean())
    assert result["avg_cost"] < model.evaluate(X, y)["avg_cost"]


def test_session_charges_the_examples_own_costs():
    X, y, spec = _problem()
    model = _model(spec, cost_scale=0.0).fit(X, y)
    row = X.iloc[0]
    session = model.start(sample_costs={"strong": 0.25})
    session.run(row.to_dict())
    expected = sum(0.25 if s == "strong" else spec.costs[s] for s in session.acquired)
    assert "strong" in session.acquired
    assert session.cost == pytest.approx(expected)
    with pytest.raises(ValueError, match="unknown sensor"):
        model.start(sample_costs={"nope": 1.0})


def test_sample_costs_with_subset_selection():
    rng = np.random.default_rng(0)
    n, M = 300, 14
    y = rng.integers(0, 2, n)
    X = pd.DataFrame(rng.normal(size=(n, M)), columns=[f"s{i:02d}" for i in range(M)])
    X["s00"] += 2 * (2 * y - 1)
    spec = SensorSpec.per_column(list(X.columns), cost=0.5)
    costs = pd.DataFrame(0.5, index=X.index, columns=list(spec.names))
    costs["s00"] = 0.0
    model = _model(spec, n_subsets=3, subset_budget=4).fit(X, y, sample_costs=costs)
    tr = model.trace(X, sample_costs=costs)
    assert tr["acquired"].map(lambda a: "s00" in a).mean() > 0.9
    np.testing.assert_allclose(
        tr["cost"], [0.5 * sum(s != "s00" for s in a) for a in tr["acquired"]]
    )


def test_bad_sample_costs_name_the_problem():
    X, y, spec = _problem(n=60)
    costs = _costs(X, spec, 1.0)
    with pytest.raises(ValueError, match="no column for sensor"):
        _model(spec).fit(X, y, sample_costs=costs.drop(columns="strong"))
    costs.iloc[5, 2] = -1.0
    with pytest.raises(ValueError, match="'strong' at row 5"):
        _model(spec).fit(X, y, sample_costs=costs)


def test_costs_and_targets_are_lined_up_by_label():
    """Per-row values beside X go by X's index: shuffled, they give the model
    and the costs that aligned ones give."""
    X, y, spec = _problem(300)
    X.index = [f"row{i}" for i in range(len(X))]
    y = pd.Series(y, index=X.index)
    strong = np.where(X["flag"] > 0, 0.0, 1.0)
    costs = _costs(X, spec, strong)
    order = np.random.default_rng(1).permutation(len(X))
    aligned = _model(spec).fit(X, y, sample_costs=costs)
    shuffled = _model(spec).fit(X, y.iloc[order], sample_costs=costs.iloc[order[::-1]])
    assert (aligned.predict(X) == shuffled.predict(X)).all()
    a = aligned.trace(X, sample_costs=costs)
    b = shuffled.trace(X, sample_costs=costs.iloc[order])
    pd.testing.assert_frame_equal(a, b)
    assert aligned.evaluate(X, y, sample_costs=costs) == shuffled.evaluate(
        X, y.iloc[order], sample_costs=costs.iloc[order]
    )
    # A plain array is taken by position.
    c = aligned.trace(X, sample_costs=costs.to_numpy())
    pd.testing.assert_frame_equal(a, c)


def test_per_row_values_with_other_labels_are_refused():
    X, y, spec = _problem(120)
    costs = _costs(X, spec, 1.0)
    model = _model(spec)
    relabelled = costs.set_axis(costs.index + 5)
    with pytest.raises(
        ValueError, match=r"row 0 of X is not in sample_costs; row 120 of"
    ):
        model.fit(X, y, sample_costs=relabelled)
    with pytest.raises(ValueError, match=r"row 120 of y is not in X"):
        model.fit(X, pd.Series(y, index=X.index + 1))
    twice = costs.set_axis([0] * len(costs))
    with pytest.raises(ValueError, match="uses the label 0 for several rows"):
        model.fit(X, y, sample_costs=twice)
    fitted = model.fit(X, y)
    with pytest.raises(ValueError, match="row 'x' of sample_costs is not in X"):
        fitted.trace(X, sample_costs=costs.rename(index={0: "x"}))
