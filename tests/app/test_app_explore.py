"""Explore DAG and What-if pages: the DAG figure, node clicks, one example's path."""

from __future__ import annotations

import json

import pytest
from app_helpers import assert_clean, click_chart, page, prefill, texts, values

from budgetdag_core import path_of
from budgetdag_core.explain import node_details
from ui import state


def figure(at, key: str) -> dict:
    """The plotly figure (as JSON) of the chart with ``key``."""
    charts = [c for c in at.get("plotly_chart") if c.key == key]
    assert charts, f"no chart {key!r}"
    return json.loads(charts[0].proto.spec)


def trace(fig: dict, name: str) -> dict:
    found = [t for t in fig["data"] if t.get("name") == name]
    assert found, f"no trace {name!r} in {[t.get('name') for t in fig['data']]}"
    return found[0]


def table_with(at, column: str):
    """The first table (dataframe or editor) with ``column``."""
    for frame in at.dataframe:
        if column in frame.value.columns:
            return frame.value
    raise AssertionError(f"no table with a {column!r} column")


def node_ids(fig: dict) -> list[int]:
    return [int(row[0]) for row in values(trace(fig, "states")["customdata"])]


@pytest.fixture
def explore(app, pima, pima_run):
    at = prefill(app, pima, pima_run)
    return at.switch_page(page("explore")).run()


def test_the_dag_is_drawn_with_the_test_flow(explore, pima, pima_run):
    assert_clean(explore)
    fig = figure(explore, state.W_DAG_CHART)
    flow = pima_run.model.flow(
        pima.X("test", pima_run.spec), pima.y("test")
    )  # the figure's counts
    shown = node_ids(fig)
    assert 0 in shown
    assert set(shown) == {k for k in flow.nodes if flow.nodes[k]["arrived"] > 0}
    arrived = [int(row[1]) for row in values(trace(fig, "states")["customdata"])]
    assert arrived[shown.index(0)] == len(pima.test)
    assert "selected" not in [t.get("name") for t in fig["data"]]
    assert any("Node details appear here" in c.value for c in explore.caption)


def test_clicking_a_node_shows_its_details(explore, pima, pima_run):
    node = node_ids(figure(explore, state.W_DAG_CHART))[1]
    at = click_chart(explore, state.W_DAG_CHART, [node])
    assert_clean(at)
    assert at.session_state[state.W_DAG_NODE] == node
    expected = node_details(
        pima_run.model, pima.X("test", pima_run.spec), pima.y("test"), node
    )
    heading = [m.value for m in at.markdown if m.value.startswith("#### Node")]
    assert heading and heading[0].startswith(f"#### Node {node}: ")
    assert f"**{expected['arrived']:,}** examples arrive here" in heading[0]
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Stop here"] == f"{expected['stopped']:,}"
    actions = table_with(at, "action")
    assert actions["count"].tolist() == expected["actions"]["count"].tolist()
    classes = table_with(at, "class")
    assert classes["arrived"].sum() == expected["arrived"]
    # The figure is redrawn with the clicked node ringed.
    ring = trace(figure(at, state.W_DAG_CHART), "clicked node")
    assert int(values(ring["customdata"])[0][0]) == node


def test_a_click_on_a_hidden_or_unknown_point_changes_nothing(explore):
    at = click_chart(explore, state.W_DAG_CHART, [-1])  # e.g. the sink
    assert_clean(at)
    assert at.session_state[state.W_DAG_NODE] is None


def test_training_flow_colour_and_hidden_states(explore, pima, pima_run):
    at = explore
    at.selectbox(key=state.W_DAG_NODE).set_value(0).run()
    at.radio(key=state.W_FLOW_PART).set_value("train").run()
    assert_clean(at)
    heading = [m.value for m in at.markdown if m.value.startswith("#### Node")]
    assert f"**{len(pima.train):,}** examples arrive here" in heading[0]
    at.radio(key=state.W_DAG_COLOR).set_value("error").run()
    at.toggle(key=state.W_FLOW_ALL).set_value(True).run()
    assert_clean(at)
    fig = figure(at, state.W_DAG_CHART)
    assert sorted(node_ids(fig)) == list(range(2**pima_run.spec.n_sensors))
    assert "error" in json.dumps(fig["data"]).lower()


# ------------------------------------------------------------------ what-if
@pytest.fixture
def whatif(app, pima, pima_run):
    at = prefill(app, pima, pima_run)
    return at.switch_page(page("whatif")).run()


def shown_result(at) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def test_the_path_of_a_test_example(whatif, pima, pima_run):
    at = whatif
    at.number_input(key=state.W_WHATIF_ROW).set_value(5).run()
    assert_clean(at)
    X = pima.X("test", pima_run.spec)
    expected = path_of(pima_run.model, X.iloc[5])
    trace_row = pima_run.model.trace(X.iloc[[5]]).iloc[0]
    shown = shown_result(at)
    assert shown["Prediction"] == str(trace_row["prediction"])
    assert shown["Cost paid"] == f"{trace_row['cost']:g}"
    assert shown["Sensors bought"] == f"{trace_row['n_sensors']} of 3"
    decisions = table_with(at, "decision")
    assert len(decisions) == len(expected.decisions)
    assert decisions["decision"].iloc[-1] == "stop and classify"
    path = trace(figure(at, state.W_WHATIF_CHART), "path")
    assert [int(r[0]) for r in values(path["customdata"])] == expected.states
    probs = table_with(at, "probability")
    assert probs["probability"].sum() == pytest.approx(1.0)


def edit(at, row: int, changes: dict[str, float]):
    table = at.data_editor[0].value
    where = {c: i for i, c in enumerate(table["column"])}
    at.session_state[at.data_editor[0].key] = {
        "edited_rows": {where[c]: {"value": v} for c, v in changes.items()},
        "added_rows": [],
        "deleted_rows": [],
    }
    return at.run()


def test_editing_values_reruns_the_policy(whatif, pima, pima_run):
    at = whatif
    X = pima.X("test", pima_run.spec)
    original = X.iloc[0].to_dict()
    changes = {"glucose": 199.0, "bmi": 50.0, "age": 60.0, "pedigree": 2.0}
    edited = {**original, **changes}
    before, after = path_of(pima_run.model, original), path_of(pima_run.model, edited)
    assert (before.prediction, before.cost) != (after.prediction, after.cost)
    at = edit(at, 0, changes)
    assert_clean(at)
    shown = shown_result(at)
    assert shown["Prediction"] == str(after.prediction)
    assert shown["Cost paid"] == f"{after.cost:g}"
    assert any("value(s) edited" in m.value for m in at.markdown)
    path = trace(figure(at, state.W_WHATIF_CHART), "path")
    assert [int(r[0]) for r in values(path["customdata"])] == after.states
    # Back to the test values.
    at.button(key=state.W_WHATIF_RESET).click().run()
    assert shown_result(at)["Cost paid"] == f"{before.cost:g}"


def test_an_empty_value_is_named(whatif):
    at = edit(whatif, 0, {"bmi": None})
    assert_clean(at)
    assert any("'bmi'" in e and "not a number" in e for e in texts(at, "error"))


# ------------------------------------------------------- what-if stepper
def stepper_text(at) -> str:
    return " ".join(m.value for m in at.markdown if m.value.startswith("**"))


def session_after(model, row: dict, plan: list) -> object:
    """The library's session walked by hand: ``None`` = the policy's pick."""
    session = model.start()
    for step in plan:
        asked = session.next_sensor()
        sensor = asked if step is None else step
        columns = model.spec_.groups[sensor]
        values_ = {c: row[c] for c in columns}
        if sensor == asked:
            session.observe(sensor, values_)
        else:
            session.buy(sensor, values_)
    return session


def test_the_stepper_buys_one_sensor_at_a_time(whatif, pima, pima_run):
    at = whatif
    model = pima_run.model
    row = pima.X("test", pima_run.spec).iloc[0].to_dict()
    assert "Bought:** nothing yet" in stepper_text(at)
    first = model.start().next_sensor()
    assert at.button(key=state.W_WHATIF_BUY_NEXT).label == f"Buy {first}"
    at.button(key=state.W_WHATIF_BUY_NEXT).click().run()
    assert_clean(at)
    session = session_after(model, row, [None])
    assert f"{first} (policy)" in stepper_text(at)
    assert f"Predicts now:** {session.predict()}" in stepper_text(at)
    probs = table_with(at, "probability")
    expected = session.predict_proba()
    assert probs["probability"].max() == pytest.approx(max(expected.values()))
    # One of ours instead of the policy's next pick.
    others = at.selectbox(key=state.W_WHATIF_OTHER).options
    assert others and first not in others
    mine = others[0]
    at.selectbox(key=state.W_WHATIF_OTHER).set_value(mine).run()
    at.button(key=state.W_WHATIF_BUY_OTHER).click().run()
    assert_clean(at)
    assert f"{first} (policy) → {mine} (yours)" in stepper_text(at)
    session = session_after(model, row, [None, mine])
    assert session.acquired == [first, mine]
    nxt = session.next_sensor()
    said = " ".join(texts(at, "info", "success"))
    if nxt is None:
        assert "stops here" in said
    else:
        assert f"would buy **{nxt}** next" in said
    # Back, then start over.
    at.button(key=state.W_WHATIF_STEP_BACK).click().run()
    assert f"{first} (policy)" in stepper_text(at) and "(yours)" not in stepper_text(at)
    at.button(key=state.W_WHATIF_RESTART).click().run()
    assert "Bought:** nothing yet" in stepper_text(at)


def test_the_stepper_replays_edited_values_and_every_edit_counts(
    whatif, pima, pima_run
):
    at = whatif
    model = pima_run.model
    row = pima.X("test", pima_run.spec).iloc[0].to_dict()
    at.button(key=state.W_WHATIF_BUY_NEXT).click().run()
    steps = 1
    if not at.button(key=state.W_WHATIF_BUY_NEXT).disabled:
        at.button(key=state.W_WHATIF_BUY_NEXT).click().run()
        steps = 2
    # Two edits one after the other: the second one registers too.
    at = edit(at, 0, {"glucose": 199.0})
    assert any("1 value(s) edited: glucose" in m.value for m in at.markdown)
    table = at.data_editor[0].value
    where = {c: i for i, c in enumerate(table["column"])}
    held = at.session_state[at.data_editor[0].key]
    held["edited_rows"][where["bmi"]] = {"value": 50.0}
    at.session_state[at.data_editor[0].key] = held
    at.run()
    assert_clean(at)
    assert any("2 value(s) edited" in m.value for m in at.markdown)
    # The steps taken replay with the new values: what the policy asks now.
    edited = {**row, "glucose": 199.0, "bmi": 50.0}
    walked = model.start()
    bought = []
    for _ in range(steps):
        sensor = walked.next_sensor()
        if sensor is None:
            break
        walked.observe(sensor, {c: edited[c] for c in model.spec_.groups[sensor]})
        bought.append(sensor)
    assert " → ".join(f"{s} (policy)" for s in bought) in stepper_text(at)
    assert f"Predicts now:** {walked.predict()}" in stepper_text(at)
