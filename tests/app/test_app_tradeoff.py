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
    page,
    prefill,
    run_app_py,
    texts,
)
from streamlit.testing.v1 import AppTest

from ui import state


def trace_names(at) -> list[str]:
    chart = [c for c in at.get("plotly_chart") if c.key == state.W_TRADE_CHART][0]
    return [t.get("name") for t in json.loads(chart.proto.spec)["data"]]


@pytest.fixture(scope="module")
def traced(pima, pima_run):
    """The page after tracing a 5-point curve.

    Shared by the tests below, in order (tracing takes a while): they move
    along one session as a user would.
    """
    with pytest.MonkeyPatch.context() as mp:  # as the autouse fixture does
        mp.setattr(MPA_RUNNER, run_app_py)
        at = prefill(AppTest.from_file(APP, default_timeout=TIMEOUT), pima, pima_run)
        at.switch_page(page("tradeoff")).run()
        at.slider(key=state.W_TRADE_POINTS).set_value(5).run()
        at.button(key=state.W_TRADE_RUN).click().run()
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


def test_clicking_a_dag_point_makes_it_the_current_model(traced, pima):
    at = traced
    frame = at.session_state[state.SWEEP]["result"].frame
    dag = frame[(frame["method"] == "dag") & (frame["split"] == "test")]
    label = dag.index[2]
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
    budget = 10.0
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
    assert_clean(at)
    run = at.session_state[state.RUN]
    assert run is not pima_run
    assert run.settings.target_budget == 8.0
    assert run.model.budget_report_.target_avg_cost == 8.0
    assert any("Target average cost 8" in t for t in texts(at, "success"))
