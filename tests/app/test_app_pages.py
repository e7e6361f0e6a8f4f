"""The app starts, every page runs with and without a model, navigation works."""

from __future__ import annotations

import pytest
from app_helpers import PAGES, ROOT, assert_clean, finish_jobs, page, prefill, texts

from ui import state
from ui.reports import baseline_table


def test_app_starts_on_the_landsat_demo(app):
    at = app.run()
    assert_clean(at)
    assert at.title[0].value == "BudgetDAG"
    dataset = at.session_state[state.DATASET]
    assert dataset.name == "landsat" and dataset.kind == "demo"
    assert len(dataset.train) == 4435 and len(dataset.test) == 2000
    assert at.session_state[state.W_COST_SCALE] == 0.05
    assert not at.error
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Training rows"] == "4,435"
    assert metrics["Classes"] == "6"
    sidebar = " ".join(c.value for c in at.sidebar.caption)
    assert "landsat" in sidebar and "not trained yet" in sidebar


def test_navigation_lists_the_pages_in_working_order():
    source = (ROOT / "app.py").read_text()
    positions = [source.index(f'PAGES["{name}"]') for name in PAGES]
    assert positions == sorted(positions)


@pytest.mark.parametrize("name", PAGES)
def test_each_page_runs_with_a_trained_model(app, pima, pima_run, name):
    at = prefill(app, pima, pima_run)
    at.switch_page(page(name)).run()
    assert_clean(at)
    assert not at.error, texts(at, "error")
    assert at.title, "every page has a title"
    if name in ("explore", "tradeoff"):
        assert len(at.dataframe) >= 1
    sidebar = " ".join(c.value for c in at.sidebar.caption)
    assert f"test error {pima_run.metrics['error']:.1%}" in sidebar


def test_sidebar_shows_the_model(app, pima, pima_run):
    at = prefill(app, pima, pima_run).run()
    assert_clean(at)
    sidebar = " ".join(c.value for c in at.sidebar.caption)
    assert "pima · 576 train / 192 test rows" in sidebar
    assert f"test error {pima_run.metrics['error']:.1%}" in sidebar


@pytest.mark.parametrize("name", PAGES)
def test_each_page_runs_before_training(app, pima, name):
    at = prefill(app, pima)
    at.switch_page(page(name)).run()
    assert_clean(at)
    assert not at.error, texts(at, "error")
    if name in ("explore", "tradeoff"):
        assert any("Train a model first" in t for t in texts(at, "info"))
    sidebar = " ".join(c.value for c in at.sidebar.caption)
    if name == "teaching":  # small data: the walk trains a model on arrival
        assert any("The walk appears here when" in t for t in texts(at, "info"))
        finish_jobs(at)  # in the background; the sidebar's panel reruns the page
        assert_clean(at)
        sidebar = " ".join(c.value for c in at.sidebar.caption)
        assert at.session_state[state.RUN] is not None and "test error" in sidebar
        assert at.session_state[state.TEACH_STEP] == 0  # the walk is drawn
    else:  # the status is drawn after the page, also when the page stopped early
        assert "not trained yet" in sidebar


def test_sidebar_follows_a_training_on_the_same_run(app, pima):
    at = prefill(app, pima).switch_page(page("train")).run()
    at.number_input(key=state.W_CV).set_value(3).run()
    at.button(key=state.W_TRAIN).click().run()
    finish_jobs(at)
    assert_clean(at)
    run = at.session_state[state.RUN]
    sidebar = " ".join(c.value for c in at.sidebar.caption)
    assert f"test error {run.metrics['error']:.1%}" in sidebar


def test_widget_values_survive_a_page_switch(app, pima):
    at = prefill(app, pima)
    at.switch_page(page("train")).run()
    at.number_input(key=state.W_CV).set_value(4).run()
    at.slider(key=state.W_DEGREE).set_value(1).run()
    at.switch_page(page("data")).run()
    at.switch_page(page("train")).run()
    assert at.number_input(key=state.W_CV).value == 4
    assert at.slider(key=state.W_DEGREE).value == 1


def test_explore_switches_between_test_and_train_flow(app, pima, pima_run):
    at = prefill(app, pima, pima_run)
    at.switch_page(page("explore")).run()
    paths = at.dataframe[0].value
    assert paths["examples"].sum() == len(pima.test)
    at.radio(key=state.W_FLOW_PART).set_value("train").run()
    assert_clean(at)
    assert at.dataframe[0].value["examples"].sum() == len(pima.train)


def test_tradeoff_summarises_dominance(app, pima, pima_run):
    at = prefill(app, pima, pima_run)
    at.switch_page(page("tradeoff")).run()
    table = baseline_table(pima_run.metrics, pima_run.states)
    fixed = table[table["kind"] == "fixed subset"]
    assert len(fixed) == 2**pima.spec.n_sensors
    summary = " ".join(m.value for m in at.markdown)
    beaten = int(fixed["policy_dominates"].sum())
    assert f"**{beaten} of {len(fixed)}** fixed subsets" in summary
    points = at.dataframe[0].value  # the test-set points, policy first
    assert points["method"].iloc[0] == "DAG policy"
    assert points["error"].iloc[0] == pima_run.metrics["error"]
    assert (points["method"] == "fixed subset").sum() == len(fixed)


def test_a_failing_page_shows_a_message_and_the_app_survives(app, pima, pima_run):
    broken = type(pima_run)(**{**pima_run.__dict__, "cache": {}})
    broken.model = object()  # no trace/flow: the Explore page cannot draw
    at = prefill(app, pima, broken)
    at.switch_page(page("explore")).run()
    assert_clean(at)
    assert any("Something unexpected went wrong" in t for t in texts(at, "error"))
    at.switch_page(page("data")).run()
    assert_clean(at)
    assert not at.error
