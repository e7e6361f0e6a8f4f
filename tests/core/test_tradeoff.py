"""tradeoff_curve: one bank, Graph-Reduce per scale, baselines and the summary."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from budgetdag_core import BudgetDAGClassifier, SensorSpec, tradeoff_curve
from budgetdag_core.tradeoff import dominance_summary, initial_scales, refine_scales
from tests.core.tradeoff_problems import make_problem


@pytest.fixture(scope="module")
def problem():
    X, y, spec = make_problem(400, 0)
    Xt, yt, _ = make_problem(300, 1)
    return X, y, spec, Xt, yt


@pytest.fixture(scope="module")
def result(problem):
    X, y, spec, Xt, yt = problem
    calls: list[tuple[str, int, int]] = []
    res = tradeoff_curve(
        X,
        y,
        spec,
        n_points=7,
        X_test=Xt,
        y_test=yt,
        cv=3,
        random_state=0,
        progress=lambda *a: calls.append(a),
    )
    return res, calls


def rows(res, method, split):
    f = res.frame
    return f[(f["method"] == method) & (f["split"] == split)]


def test_frame_layout_and_models(result):
    res, _ = result
    assert list(res.frame.columns) == [
        "method",
        "split",
        "cost_scale",
        "avg_cost",
        "avg_sensors",
        "error",
        "loss",
        "state",
        "sensors",
        "threshold",
    ]
    # Without a loss matrix the stop loss is the 0/1 loss: the error.
    np.testing.assert_allclose(res.frame["loss"], res.frame["error"])
    methods = set(res.frame["method"])
    assert {
        "dag",
        "fixed",
        "hull",
        "no_sensors",
        "all_sensors",
        "oracle",
        "cascade",
    } <= methods
    assert set(res.frame["split"]) == {"train", "test"}
    assert np.all(np.diff(res.cost_scales) > 0)
    assert res.cost_scales[0] == 0.0
    assert len(res.models) == len(res.cost_scales) == 7
    assert all(m.bank_ is res.bank for m in res.models)
    assert [m.cost_scale for m in res.models] == list(res.cost_scales)
    assert len(rows(res, "dag", "test")) == 7
    assert len(res.baselines) + len(res.dag) == len(res.frame)


def test_bank_is_fitted_once_and_progress_reported(result):
    res, calls = result
    bank_calls = [c for c in calls if c[0] == "bank"]
    sweep_calls = [c for c in calls if c[0] == "sweep"]
    K = res.bank.n_states
    # cv=3 fold fits per state: the bank is cross-fitted (no refit) since issue 13.
    assert len(bank_calls) == K * 3 == bank_calls[-1][2]
    # 0 when the points start (after the bank), then each point
    assert [c[1] for c in sweep_calls] == list(range(0, 8))
    assert calls.index(bank_calls[-1]) < calls.index(sweep_calls[0])


def test_test_rows_equal_each_models_own_evaluation(result, problem):
    res, _ = result
    X, y, spec, Xt, yt = problem
    test = rows(res, "dag", "test").sort_values("cost_scale")
    for model, (_, row) in zip(res.models, test.iterrows(), strict=True):
        ev = model.evaluate(Xt, yt)
        assert row["cost_scale"] == model.cost_scale
        assert row["error"] == pytest.approx(ev["error"])
        assert row["avg_cost"] == pytest.approx(ev["avg_cost"])


def test_huge_scale_is_the_no_sensor_point(result):
    res, _ = result
    for split in ("train", "test"):
        top = rows(res, "dag", split).sort_values("cost_scale").iloc[-1]
        none = rows(res, "no_sensors", split).iloc[0]
        assert top["avg_cost"] == 0.0 and top["avg_sensors"] == 0.0
        assert top["error"] == none["error"]


def test_scale_zero_beats_all_sensors_on_training_data(problem):
    # With 0/1 stop losses the policies at scale zero minimise the training
    # (out-of-fold) error itself, and stopping with all sensors is one of their
    # choices. (The default expected losses minimise the calibrated expected
    # error instead, whose 0/1 count may differ by a row or two.)
    X, y, spec, _, _ = problem
    res = tradeoff_curve(
        X, y, spec, cost_scales=[0.0], cv=3, random_state=0, stop_loss="zero_one"
    )
    zero = rows(res, "dag", "train").iloc[0]
    assert zero["cost_scale"] == 0.0
    assert zero["error"] <= rows(res, "all_sensors", "train")["error"].item()


def test_points_spread_over_the_cost_axis(result):
    res, _ = result
    costs = np.sort(rows(res, "dag", "train")["avg_cost"].to_numpy())
    span = costs[-1] - costs[0]
    assert span > 0
    assert np.diff(costs).max() <= 0.5 * span


def test_oracle_below_dag_and_hull_below_fixed(result):
    res, _ = result
    for split in ("train", "test"):
        oracle = rows(res, "oracle", split)
        hull = rows(res, "hull", split)
        for method in ("dag", "fixed"):
            pts = rows(res, method, split)
            bound = np.interp(pts["avg_cost"], oracle["avg_cost"], oracle["error"])
            assert np.all(pts["error"].to_numpy() >= bound - 1e-12)
        fixed = rows(res, "fixed", split)
        on_hull = np.interp(fixed["avg_cost"], hull["avg_cost"], hull["error"])
        assert np.all(on_hull <= fixed["error"].to_numpy() + 1e-12)


def test_summary_and_model_choice(result):
    res, _ = result
    summary = res.summary
    assert summary.split == "test"
    assert summary.all_sensor_cost == pytest.approx(7.0)
    lo, hi = summary.cost_range
    assert 0 <= lo < hi <= 7.0
    assert math.isclose(summary.area, summary.mean_gap * (hi - lo))
    assert "all-sensor" in summary.describe()
    assert summary.has_cascade and "confidence cascade" in summary.describe()
    clo, chi = summary.cascade_cost_range
    assert 0 <= clo < chi <= 7.0
    assert math.isclose(summary.cascade_area, summary.cascade_mean_gap * (chi - clo))
    model = res.model_for_budget(2.0, split="train")
    train = rows(res, "dag", "train").set_index("cost_scale")
    assert train.loc[model.cost_scale, "avg_cost"] <= 2.0
    cheaper = train[train["avg_cost"] <= 2.0]
    assert train.loc[model.cost_scale, "error"] == cheaper["error"].min()
    assert res.model_at(1e9) is res.models[-1]
    with pytest.raises(ValueError, match="cheapest"):
        res.model_for_budget(-1.0)


def test_explicit_scales_reuse_a_bank_and_match_direct_fits(problem, result):
    res, _ = result
    X, y, spec, Xt, yt = problem
    calls: list[str] = []
    again = tradeoff_curve(
        X,
        y,
        spec,
        cost_scales=[0.05, 0.0],
        bank=res.bank,
        cv=3,
        random_state=0,
        progress=lambda stage, *_: calls.append(stage),
    )
    assert "bank" not in calls
    assert list(again.cost_scales) == [0.0, 0.05]
    direct = BudgetDAGClassifier(spec, cost_scale=0.05, cv=3, random_state=0)
    direct.fit(X, y)
    np.testing.assert_array_equal(direct.predict(Xt), again.models[1].predict(Xt))
    assert set(again.frame["split"]) == {"train"}
    assert again.summary.split == "train"


def test_included_scale_is_a_point_of_the_curve(problem, result):
    """A model in use (its scale) is traced with the automatic scales."""
    res, _ = result
    X, y, spec, Xt, yt = problem
    odd = 0.0123
    assert odd not in set(res.cost_scales)
    out = tradeoff_curve(
        X,
        y,
        spec,
        n_points=4,
        include_scales=[odd],
        X_test=Xt,
        y_test=yt,
        bank=res.bank,
        cv=3,
        random_state=0,
    )
    assert odd in set(out.cost_scales)
    direct = BudgetDAGClassifier(spec, cost_scale=odd, cv=3, random_state=0)
    direct.fit(X, y, bank=res.bank)
    point = list(out.cost_scales).index(odd)
    test = out.frame.loc[out.model_rows(point)]
    test = test[test["split"] == "test"].iloc[0]
    assert test["error"] == pytest.approx(direct.evaluate(Xt, yt)["error"])
    with pytest.raises(ValueError, match="include_scales must be finite"):
        tradeoff_curve(X, y, spec, n_points=3, include_scales=[math.nan])
    with pytest.raises(ValueError, match="not with cost_scales"):
        tradeoff_curve(X, y, spec, cost_scales=[0.1], include_scales=[0.2])


def test_named_baseline_subsets(problem, result):
    res, _ = result
    X, y, spec, _, _ = problem
    out = tradeoff_curve(
        X,
        y,
        spec,
        cost_scales=[0.01],
        bank=res.bank,
        baseline_subsets={"greedy": [("clean",), ("cheap", "clean")]},
        cv=3,
        random_state=0,
    )
    greedy = out.frame[out.frame["method"] == "greedy"]
    assert list(greedy["sensors"]) == [("clean",), ("cheap", "clean")]
    assert list(greedy["avg_cost"]) == [4.0, 5.0]


def test_bad_arguments(problem):
    X, y, spec, Xt, yt = problem
    with pytest.raises(ValueError, match="either cost_scales or n_points"):
        tradeoff_curve(X, y, spec, cost_scales=[0.1], n_points=3)
    with pytest.raises(ValueError, match="non-negative"):
        tradeoff_curve(X, y, spec, cost_scales=[-1.0])
    with pytest.raises(ValueError, match=r"'n_points' .* \[2, 100\]"):
        tradeoff_curve(X, y, spec, n_points=1)
    with pytest.raises(ValueError, match="both X_test and y_test"):
        tradeoff_curve(X, y, spec, X_test=Xt)
    free = SensorSpec(spec.groups, dict.fromkeys(spec.names, 0.0))
    with pytest.raises(ValueError, match="costs 0"):
        tradeoff_curve(X, y, free, n_points=3)
    with pytest.raises(ValueError, match="policy_features"):
        tradeoff_curve(X, y, spec, n_points=3, policy_features="magic")


def test_scale_choice_helpers():
    assert initial_scales(2, 0.01, 1.0) == [0.0, 1.0]
    first = initial_scales(10, 0.01, 1.0)
    assert first[0] == 0.0 and first[-1] == 1.0 and len(first) == 4
    # The widest cost gap is split first; flat stretches are left alone.
    new = refine_scales([0.0, 0.1, 1.0, 10.0], [5.0, 4.0, 1.0, 1.0], 2)
    assert new == [pytest.approx(math.sqrt(0.1)), pytest.approx(0.01)]
    # Equal cost spans: with errors, the stretch where the error moves is first.
    costs, errors = [5.0, 4.0, 3.0, 2.0], [0.1, 0.1, 0.5, 0.5]
    steep = refine_scales([0.0, 0.1, 1.0, 10.0], costs, 1, errors=errors)
    assert steep == [pytest.approx(math.sqrt(0.1))]
    # A jump between two flat stretches is located: the other gap is split.
    jump = refine_scales(
        [0.0, 0.1, 0.2, 0.3, 0.4, 0.8], [3.0, 2.5, 2.5, 1.0, 1.0, 0.9], 3
    )
    assert jump == [pytest.approx(0.01), pytest.approx(math.sqrt(0.32))]


def test_dominance_summary_on_a_hand_made_frame():
    frame = pd.DataFrame(
        {
            "method": ["dag", "dag", "fixed", "fixed", "all_sensors"],
            "split": "test",
            "avg_cost": [0.0, 1.0, 0.0, 2.0, 2.0],
            "error": [0.5, 0.1, 0.5, 0.1, 0.1],
        }
    )
    s = dominance_summary(frame, "test", tolerance=0.0)
    # DAG: 0.5 -> 0.1 over [0, 1] then flat; hull: 0.5 -> 0.1 over [0, 2].
    assert s.cost_range == (0.0, 1.0)
    assert s.area == pytest.approx(0.1)
    assert s.dag_cost_fraction == pytest.approx(0.5)
    assert s.hull_cost_fraction == pytest.approx(1.0)
    with pytest.raises(ValueError, match="no DAG"):
        dominance_summary(frame, "train")
    assert not s.has_cascade and "cascade" not in s.describe()


def test_dominance_summary_against_the_cascade():
    frame = pd.DataFrame(
        {
            "method": ["dag", "dag", "fixed", "fixed", "all_sensors"] + ["cascade"] * 3,
            "split": "test",
            "avg_cost": [0.0, 1.0, 0.0, 2.0, 2.0, 0.0, 0.5, 1.5],
            "error": [0.5, 0.1, 0.5, 0.1, 0.1, 0.5, 0.2, 0.1],
        }
    )
    s = dominance_summary(frame, "test", tolerance=0.0)
    # Cascade hull 0.5 -> 0.2 -> 0.1 at costs 0, 0.5, 1.5; DAG 0.5 -> 0.1 over
    # [0, 1]. On [0, 1], cascade minus DAG is 0, -0.1, +0.05 at 0, 0.5, 1.
    expected = (0 - 0.1) / 2 * 0.5 + (-0.1 + 0.05) / 2 * 0.5
    assert s.has_cascade and s.cascade_cost_range == (0.0, 1.0)
    assert s.cascade_area == pytest.approx(expected, abs=1e-6)
    assert s.cascade_mean_gap == pytest.approx(expected, abs=1e-6)
    assert s.cascade_cost_fraction == pytest.approx(0.75)
    words = s.describe()
    assert "confidence cascade" in words and "75.0% of the all-sensor cost" in words
    assert "above it" in words  # the cascade is below the DAG here


def test_example_dependent_costs(problem, result):
    res, _ = result
    X, y, spec, Xt, yt = problem
    rng = np.random.default_rng(0)
    train_costs = pd.DataFrame(
        rng.uniform(0.5, 3, size=(len(X), 3)), columns=list(spec.names)
    )
    test_costs = pd.DataFrame(
        rng.uniform(0.5, 3, size=(len(Xt), 3)), columns=list(spec.names)
    )
    out = tradeoff_curve(
        X,
        y,
        spec,
        cost_scales=[0.02],
        X_test=Xt,
        y_test=yt,
        sample_costs=train_costs,
        test_sample_costs=test_costs,
        bank=res.bank,
        cv=3,
        random_state=0,
    )
    f = out.frame
    for split, costs in (("train", train_costs), ("test", test_costs)):
        everything = f[(f["method"] == "all_sensors") & (f["split"] == split)]
        assert everything["avg_cost"].item() == pytest.approx(costs.sum(axis=1).mean())
    dag = f[(f["method"] == "dag") & (f["split"] == "test")]
    trace = out.models[0].trace(Xt, sample_costs=test_costs)
    assert dag["avg_cost"].item() == pytest.approx(trace["cost"].mean())
    # The cascade pays each test row's own costs too, and chooses its order on
    # the training rows' mean costs.
    cascade = f[(f["method"] == "cascade") & (f["split"] == "test")]
    assert len(cascade) >= 3
    for _, row in cascade.iterrows():
        tr = out.cascade.at(row["threshold"]).trace(Xt, sample_costs=test_costs)
        assert tr["cost"].mean() == pytest.approx(row["avg_cost"])
