"""Trade-off page: the sweep is traced once, points pick models, budgets."""

from __future__ import annotations

import json

import pytest
from app_helpers import (
    APP,
    MPA_RUNNER,
    TIMEOUT,
    assert_clean,
    click_chart,
    finish_jobs,
    page,
    prefill,
    run_app_py,
    texts,
    values,
)
from streamlit.testing.v1 import AppTest

from ui import state


def trace_names(at) -> list[str]:
    chart = [c for c in at.get("plotly_chart") if c.key == state.W_TRADE_CHART][0]
    return [t.get("name") for t in json.loads(chart.proto.spec)["data"]]


@pytest.fixture(scope="module")
def traced(pima, pima_run, tmp_path_factory):
    """The page after tracing a 5-point curve.

    Shared by the tests below, in order (tracing takes a while): they move
    along one session as a user would.
    """
    with pytest.MonkeyPatch.context() as mp:  # as the autouse fixture does
        mp.setattr(MPA_RUNNER, run_app_py)
        mp.setenv("BUDGETDAG_STORE_DIR", str(tmp_path_factory.mktemp("sessions")))
        at = prefill(AppTest.from_file(APP, default_timeout=TIMEOUT), pima, pima_run)
        at.switch_page(page("tradeoff")).run()
        at.slider(key=state.W_TRADE_POINTS).set_value(5).run()
        at.button(key=state.W_TRADE_RUN).click().run()
        finish_jobs(at)
        assert_clean(at)
    return at


def test_before_tracing_the_model_is_compared_with_fixed_subsets(app, pima, pima_run):
    at = prefill(app, pima, pima_run).switch_page(page("tradeoff")).run()
    assert_clean(at)
    names = trace_names(at)
    assert {"DAG policy", "fixed subsets", "all sensors", "oracle bound"} <= set(names)
    assert "current model" in names
    assert state.SWEEP not in at.session_state


def test_the_curve_is_traced_once_and_reused(traced, pima_run):
    at = traced
    cached = at.session_state[state.SWEEP]
    result = cached["result"]
    assert len(result.cost_scales) >= 4
    assert set(result.frame["split"]) == {"train", "test"}
    assert "Traced the curve" in " ".join(texts(at, "success"))
    words = " ".join(m.value for m in at.markdown)
    assert "**Test set.**" in words and "the DAG curve lies" in words
    # The confidence cascade is drawn and compared in words.
    assert "confidence cascade" in trace_names(at)
    assert "Against the confidence cascade" in words
    # The bank of the current model was reused, not refitted.
    assert result.bank is pima_run.model.bank_
    # Leaving and coming back keeps the same curve (no recomputation).
    at.switch_page(page("explore")).run()
    at.switch_page(page("tradeoff")).run()
    assert at.session_state[state.SWEEP]["result"] is result
    assert at.button(key=state.W_TRADE_RUN).label == "Recompute"


def chart_data(at) -> list[dict]:
    chart = [c for c in at.get("plotly_chart") if c.key == state.W_TRADE_CHART][0]
    return json.loads(chart.proto.spec)["data"]


def test_the_current_model_is_one_point_of_its_own_curve(traced, pima_run):
    at = traced
    result = at.session_state[state.SWEEP]["result"]
    # Its scale (0.0043, not one the automatic spread would pick) is traced.
    assert pima_run.model.cost_scale in set(result.cost_scales)
    data = chart_data(at)
    names = [t.get("name") for t in data]
    assert names.count("current model") == 1 and "this model" not in names
    ring = data[names.index("current model")]
    dag = data[names.index("DAG policy")]
    on_curve = set(zip(values(dag["x"]), values(dag["y"]), strict=True))
    ring_x, ring_y = values(ring["x"])[0], values(ring["y"])[0]
    assert (ring_x, ring_y) in on_curve
    # ... and it is the current model's own test result.
    assert ring_x == pytest.approx(pima_run.metrics["avg_cost"])
    assert ring_y == pytest.approx(pima_run.metrics["error"])
    # Hovers and the summary in words and percentages.
    hover = " ".join(dag["hovertext"])
    assert "None" not in hover and "cost_scale" not in hover
    assert "sensors bought: " in hover
    summary = [m.value for m in at.markdown if m.value.startswith("**Test set.**")]
    assert len(summary) == 1, summary
    assert "area" not in summary[0] and "0.0" not in summary[0]
    assert "% of the all-sensor cost" in summary[0]


def test_a_worse_model_from_the_curve_is_flagged(traced, pima_run):
    at = traced
    result = at.session_state[state.SWEEP]["result"]
    now = pima_run.metrics["error"]
    train = result.dag[result.dag["split"] == "train"]
    verdicts = {}
    for budget in sorted(set(train["avg_cost"].round(6) + 1e-6)):
        point = result.index_for_budget(budget, split="train")
        rows = result.frame.loc[result.model_rows(point)]
        test_error = float(rows[rows["split"] == "test"]["error"].iloc[0])
        if test_error != now:
            verdicts[test_error > now] = budget
    assert set(verdicts) == {True, False}, "pima's curve should have both kinds"
    at.number_input(key=state.W_BUDGET).set_value(verdicts[True]).run()
    assert any("errs more on the test set" in w for w in texts(at, "warning"))
    at.number_input(key=state.W_BUDGET).set_value(verdicts[False]).run()
    assert not any("errs more on the test set" in w for w in texts(at, "warning"))


def test_axes_and_splits(traced):
    at = traced
    at.radio(key=state.W_TRADE_SPLIT).set_value("both").run()
    at.radio(key=state.W_TRADE_X).set_value("avg_sensors").run()
    assert_clean(at)
    chart = [c for c in at.get("plotly_chart") if c.key == state.W_TRADE_CHART][0]
    spec = json.loads(chart.proto.spec)
    assert "number of sensors" in spec["layout"]["xaxis"]["title"]["text"]
    names = [t["name"] for t in spec["data"]]
    assert "DAG policy (test)" in names and "DAG policy (train)" in names
    at.radio(key=state.W_TRADE_SPLIT).set_value("test").run()
    at.radio(key=state.W_TRADE_X).set_value("avg_cost").run()


def test_clicking_a_dag_point_makes_it_the_current_model(traced, pima, pima_run):
    at = traced
    frame = at.session_state[state.SWEEP]["result"].frame
    dag = frame[(frame["method"] == "dag") & (frame["split"] == "test")]
    # Another point than the current model's (its scale is on the curve now).
    others = dag[dag["cost_scale"] != pima_run.model.cost_scale]
    label = others.index[2]
    at = click_chart(at, state.W_TRADE_CHART, [int(label)], typed=False)
    assert_clean(at)
    run = at.session_state[state.RUN]
    assert run.source == "trade-off curve"
    assert run.settings.cost_scale == pytest.approx(dag.loc[label, "cost_scale"])
    assert run.metrics["error"] == pytest.approx(dag.loc[label, "error"])
    assert run.metrics["avg_cost"] == pytest.approx(dag.loc[label, "avg_cost"])
    assert "from the curve" in " ".join(texts(at, "success"))
    # The other pages and Export use it: the sidebar and the pickle follow.
    assert f"test error {run.metrics['error']:.1%}" in " ".join(
        c.value for c in at.sidebar.caption
    )
    # A baseline point is not a model.
    fixed = frame[(frame["method"] == "fixed") & (frame["split"] == "test")]
    at = click_chart(at, state.W_TRADE_CHART, [int(fixed.index[1])], typed=False)
    assert at.session_state[state.RUN] is run
    assert any("is a baseline" in c.value for c in at.caption)


def test_a_budget_picks_the_curve_model(traced):
    at = traced
    result = at.session_state[state.SWEEP]["result"]
    current = at.session_state[state.RUN].model
    train_costs = result.dag[result.dag["split"] == "train"]["avg_cost"]
    budget = next(  # a budget whose model is not already the current one
        b
        for b in [10.0, *sorted(train_costs + 1e-6)]
        if result.model_for_budget(b, split="train") is not current
    )
    expected = result.model_for_budget(budget, split="train")
    at.number_input(key=state.W_BUDGET).set_value(budget).run()
    assert any(
        f"cost scale **{expected.cost_scale:.3g}**" in m.value for m in at.markdown
    )
    at.button(key=state.W_TRADE_USE_CURVE).click().run()
    assert_clean(at)
    run = at.session_state[state.RUN]
    assert run.model is expected
    train = result.dag[
        (result.dag["split"] == "train")
        & (result.dag["cost_scale"] == run.model.cost_scale)
    ]
    assert float(train["avg_cost"].iloc[0]) <= budget


def test_fit_for_budget_from_the_page(app, pima, pima_run):
    at = prefill(app, pima, pima_run).switch_page(page("tradeoff")).run()
    at.number_input(key=state.W_BUDGET).set_value(8.0).run()
    at.button(key=state.W_TRADE_FIT_BUDGET).click().run()
    finish_jobs(at)
    assert_clean(at)
    run = at.session_state[state.RUN]
    assert run is not pima_run
    assert run.settings.target_budget == 8.0
    assert run.model.budget_report_.target_avg_cost == 8.0
    assert any("Target average cost 8" in t for t in texts(at, "success"))
