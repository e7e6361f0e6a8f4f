"""Sensor subsets (Alg. 2) in the app: more than 12 sensors train, every page
works with a model over subsets, and the settings travel with the session."""

from __future__ import annotations

import json
import re
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from app_helpers import assert_clean, download_data, finish_jobs, page, prefill, texts

from budgetdag_core import (
    BudgetDAGClassifier,
    Dataset,
    SensorSpec,
    loads_policy_skops,
    path_of,
)
from budgetdag_core.explain import state_label, subsets_in
from ui import links, state, subsets, sweep
from ui.training import ProgressReporter, TrainSettings, bank_key, train

N_FEATURES = 16  # more than the 12 sensors a full DAG allows
FAST = {"cv": 3, "policy_degree": 1, "random_state": 0}


def wide_frame(n: int = 600, seed: int = 0) -> pd.DataFrame:
    """A binary label from 3 of 16 noisy columns."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, N_FEATURES)).round(3)
    y = X[:, 0] + X[:, 1] - X[:, 2] + 0.5 * rng.normal(size=n) > 0
    frame = pd.DataFrame(X, columns=[f"x{i}" for i in range(N_FEATURES)])
    return frame.assign(label=np.where(y, "yes", "no"))


@pytest.fixture(scope="module")
def wide() -> Dataset:
    frame = wide_frame()
    spec = SensorSpec.per_column([f"x{i}" for i in range(N_FEATURES)], cost=1.0)
    return Dataset(
        "wide.csv", frame[:450], frame[450:].reset_index(drop=True), "label",
        spec, kind="upload",
    )  # fmt: skip


@pytest.fixture(scope="module")
def wide_run(wide):
    settings = TrainSettings(cost_scale=0.01, n_subsets=5, include_all=True, **FAST)
    return train(wide, wide.spec, settings)


def prefill_wide(at, wide, run=None):
    prefill(at, wide, run)
    at.session_state[state.W_N_SUBSETS] = 5
    return at


def chart(at, key: str) -> dict:
    charts = [c for c in at.get("plotly_chart") if c.key == key]
    assert charts, f"no chart {key!r}"
    return json.loads(charts[0].proto.spec)


# ------------------------------------------------------------ the user's path
def test_a_wide_upload_trains_the_library_default_then_subsets_on_request(app):
    at = app.run()
    at.radio(key=state.W_SOURCE).set_value("upload").run()
    data = wide_frame().to_csv(index=False).encode()
    at.file_uploader(key=state.W_UPLOAD).set_value(("wide.csv", data, "text/csv"))
    at.run()
    at.button(key=state.W_USE_UPLOAD).click().run()
    at.switch_page(page("sensors")).run()
    at.button(key=f"{state.W_PRESET}per_column").click().run()
    assert_clean(at)
    # 16 sensors: the library's default, no error and no n_subsets note.
    assert not at.error, texts(at, "error")
    assert not [t for t in texts(at, "info") if "n_subsets" in t or "too many" in t]
    toggle = at.toggle(key=state.W_SUBSETS_ON)
    assert not toggle.value and at.number_input(key=state.W_N_SUBSETS).disabled
    ready = next(t for t in texts(at, "success") if "Ready to train" in t)
    assert (
        "a chain of 17 states or a routed DAG of at most 648 states, the best" in ready
    )

    at.switch_page(page("train")).run()
    assert "a chain of 17 states" in at.caption[0].value
    at.number_input(key=state.W_CV).set_value(3).run()
    plan = next(c.value for c in at.caption if c.value.startswith("Training picks"))
    assert "a chain of 17 states" in plan and "held-out quarter" in plan
    assert "fits 3 of it (one per fold)" in plan  # the library's bank kind choice
    at.button(key=state.W_TRAIN).click().run()
    finish_jobs(at)
    assert_clean(at)
    assert not at.error, texts(at, "error")
    run = at.session_state[state.RUN]
    assert run.model.n_subsets is None and run.model.strategy_ in ("chain", "routed")
    # The library's own default with the same settings: the same model.
    library = BudgetDAGClassifier(
        run.spec, cost_scale=run.model.cost_scale, cv=3, random_state=0,
        policy_degree=1,
    ).fit(at.session_state[state.DATASET].X("train", run.spec),
          at.session_state[state.DATASET].y("train"))  # fmt: skip
    X = at.session_state[state.DATASET].X("test", run.spec)
    pd.testing.assert_frame_equal(library.trace(X), run.model.trace(X))
    assert any(c.value.startswith("Kept the ") for c in at.caption)

    # Alg. 2 subsets on request.
    at.switch_page(page("sensors")).run()
    at.toggle(key=state.W_SUBSETS_ON).set_value(True).run()
    at.number_input(key=state.W_N_SUBSETS).set_value(4).run()
    # The page says what the training's probe counted (as the Train page).
    assert any(re.search(r"sensor subsets \(Alg\. 2, of at most 4\), \d+ DAG states", t)
               for t in texts(at, "success")), texts(at, "success")  # fmt: skip
    at.switch_page(page("train")).run()
    plan = next(c.value for c in at.caption if c.value.startswith("Training selects"))
    at.button(key=state.W_TRAIN).click().run()
    finish_jobs(at)
    assert_clean(at)
    assert not at.error, texts(at, "error")
    run = at.session_state[state.RUN]
    # The plan said the subsets and states the fit built (its estimate's
    # probe counted them), not the bounds.
    n_states = run.model.sensor_dag_.n_states
    selection = run.model.subset_selection_
    assert f"{len(selection.subsets)} chosen, at most 4" in plan, plan
    assert f" {n_states * 3} classifiers ({n_states} states x 3)" in plan, plan
    assert run.settings.n_subsets == 4 and run.model.n_subsets == 4
    assert selection.subsets[-1] == run.spec.names  # all sensors come last
    # The caption and sidebar now say the counted subsets and states.
    counted = f"{len(selection.subsets)} sensor subsets (Alg. 2, of at most 4)"
    assert counted in at.caption[0].value
    assert any(counted in c.value for c in at.sidebar.caption)
    assert any("Trained in" in t for t in texts(at, "success"))  # the job ended
    table = at.dataframe[-1].value
    assert list(table.columns) == ["subset", "sensors", "n sensors", "cost"]
    assert table["subset"].tolist() == [f"S{j + 1}" for j in range(len(table))]
    assert table["n sensors"].tolist() == [len(s) for s in selection.subsets]
    assert table["sensors"].iloc[-1] == "all 16 sensors"
    summary = next(m.value for m in at.markdown if "Reward **G" in m.value)
    assert f"G = {selection.reward:.1%}" in summary
    assert f"**{run.model.sensor_dag_.n_states} states**" in summary


def test_subsets_are_optional_with_few_sensors(app, pima):
    at = prefill(app, pima).switch_page(page("sensors")).run()
    toggle = at.toggle(key=state.W_SUBSETS_ON)
    assert not toggle.value
    assert at.number_input(key=state.W_N_SUBSETS).disabled
    assert any("8 DAG states" in t for t in texts(at, "success"))
    toggle.set_value(True).run()
    at.number_input(key=state.W_N_SUBSETS).set_value(2).run()
    at.radio(key=state.W_SUBSET_REWARD).set_value("correct").run()
    # All sensors as the last subset (the default): at most 2^1 + 1 states.
    # The page says what the training's probe counted (as the Train page).
    assert any("sensor subsets (Alg. 2, of at most 2), 3 DAG states" in t
               for t in texts(at, "success")), texts(at, "success")  # fmt: skip
    at.switch_page(page("train")).run()
    at.number_input(key=state.W_CV).set_value(3).run()
    at.button(key=state.W_TRAIN).click().run()
    finish_jobs(at)
    assert_clean(at)
    model = at.session_state[state.RUN].model
    assert model.n_subsets == 2 and model.subset_reward == "correct"
    assert model.sensor_dag_.n_states <= 3
    # Turned off again: the full DAG.
    at.switch_page(page("sensors")).run()
    at.toggle(key=state.W_SUBSETS_ON).set_value(False).run()
    at.switch_page(page("train")).run()
    assert "8 DAG states" in at.caption[0].value


# ------------------------------------------------- pages with a subset model
@pytest.mark.parametrize("name", ["explore", "whatif", "tradeoff", "teaching"])
def test_every_page_draws_a_subset_model(app, wide, wide_run, name):
    at = prefill_wide(app, wide, wide_run).switch_page(page(name)).run()
    assert_clean(at)
    assert not at.error, texts(at, "error")


def test_the_dag_names_subsets_and_their_real_sensors(app, wide, wide_run):
    at = prefill_wide(app, wide, wide_run).switch_page(page("explore")).run()
    fig = chart(at, state.W_DAG_CHART)
    nodes = next(t for t in fig["data"] if t.get("name") == "states")
    labels = [t for t in nodes["text"] if t and t not in ("start", "all")]
    assert labels and all(
        t.replace("+", "").replace("−", "")[0] in "Sa" for t in labels
    )
    hover = " ".join(nodes["hovertext"])
    assert "x0" in hover and "sensors:" in hover
    assert fig["layout"]["xaxis"]["title"]["text"] == "sensor subsets held"
    # Node details name the subset each action buys.
    first = wide_run.model.sensor_dag_.children[0][0][1]
    at.selectbox(key=state.W_DAG_NODE).set_value(0).run()
    assert_clean(at)
    actions = at.dataframe[0].value["action"].tolist()
    assert actions[0] == "stop"
    assert any(a.startswith(f"buy {subsets.edge_subset(wide_run.model, 0, first)}")
               for a in actions)  # fmt: skip


def test_whatif_buys_a_subset_per_step(app, wide, wide_run):
    at = prefill_wide(app, wide, wide_run).switch_page(page("whatif")).run()
    assert_clean(at)
    # The path's table (the stepper's probabilities come before it).
    table = next(f.value for f in at.dataframe if "decision" in f.value.columns)
    steps = table["decision"].tolist()
    # The same walk through the session, one sensor at a time.
    result = path_of(wide_run.model, wide.X("test", wide.spec).iloc[0])
    names = subsets.path_subsets(wide_run.model, result.states)
    bought = result.decisions["acquired"].tolist()[:-1]
    assert steps[-1] == "stop and classify" and len(steps) == len(names) + 1
    for step, name, sensors in zip(steps, names, bought, strict=False):
        assert step.startswith(f"buy {name} ({len(sensors)} sensors): ")
        assert step.endswith(", ".join(sensors))


def test_the_sweep_uses_the_models_subsets_and_bank(wide, wide_run):
    params = wide_run.params  # the model's own parameters
    assert params["n_subsets"] == 5
    result = sweep.compute_sweep(wide, wide.spec, params, 4, previous=wide_run)
    assert result.bank is wide_run.model.bank_
    for model in result.models:
        assert model.subset_selection_.subsets == (
            wide_run.model.subset_selection_.subsets
        )
    picked = sweep.run_from_sweep(result, 1, wide)
    assert picked.model is result.models[1]
    assert picked.bank_key == bank_key(wide, wide.spec, params)
    assert sweep.curve_point(picked, result) == 1


def test_skops_download_of_a_subset_model(app, wide, wide_run, media):
    # Pages may have read ``dag_.edges``, which networkx caches as a view that
    # refers back to the graph: skops recursed on it until the export copied it.
    wide_run.model.dag_.edges  # noqa: B018
    at = prefill_wide(app, wide, wide_run).switch_page(page("export")).run()
    assert_clean(at)
    assert not at.error, texts(at, "error")
    model = loads_policy_skops(download_data(at, media, f"{state.W_DOWNLOAD}skops"))
    X = wide.X("test", wide.spec)
    np.testing.assert_array_equal(model.predict(X), wide_run.model.predict(X))
    assert model.subset_selection_.subsets == wide_run.model.subset_selection_.subsets


# ---------------------------------------------------------- demo, URL, bar
def test_the_spam_demo_starts_with_the_library_default(app):
    at = app.run()
    at.selectbox(key=state.W_DEMO).set_value("spam").run()
    assert_clean(at)
    assert at.session_state[state.DATASET].spec.n_sensors == 57
    assert not at.session_state[state.W_SUBSETS_ON]
    assert at.session_state[state.W_DEGREE] == 1
    assert at.session_state[state.W_CLASSIFIER] == state.MANY_SENSOR_CLASSIFIER
    at.switch_page(page("sensors")).run()
    assert not at.error
    assert any("a chain of 58 states" in t for t in texts(at, "success"))
    # The classifiers the library's DAGs accept, no others.
    at.switch_page(page("train")).run()
    options = at.selectbox(key=state.W_CLASSIFIER).options
    assert "Logistic regression (fastest)" not in options
    # Back to a small demo: the usual degree again.
    at.switch_page(page("data")).run()
    at.selectbox(key=state.W_DEMO).set_value("pima").run()
    assert at.session_state[state.W_DEGREE] == state.DEFAULTS[state.W_DEGREE]
    # The app's default bank (gradient boosting since issue 13).
    assert at.session_state[state.W_CLASSIFIER] == "hist_gradient_boosting"


def test_subset_settings_in_a_link():
    values = {
        state.W_COST_SCALE: 0.01,
        state.W_SUBSETS_ON: True,
        state.W_N_SUBSETS: 6,
        state.W_SUBSET_ALL: False,
        state.W_SUBSET_BUDGET: None,  # empty: left out
        state.W_SUBSET_REWARD: "correct",
    }
    params = links.encode("pima", None, None, values)
    assert "subset_budget" not in params
    decoded, problems = links.decode(params)
    assert problems == []
    for key in (state.W_SUBSETS_ON, state.W_N_SUBSETS, state.W_SUBSET_ALL):
        assert decoded[key] == values[key]
    _, problems = links.decode({"subsets": "maybe", "n_subsets": "9"})
    assert len(problems) == 2 and "1 to 8" in problems[1]


def test_progress_bar_has_a_subsets_stage():
    seen = []
    report = ProgressReporter(
        lambda f, t: seen.append((f, t)), bank_reused=False, subsets=True
    )
    for done in range(1, 4):
        report("subsets", done, 3)
    for done in range(1, 5):
        report("bank", done, 4)
    for done in range(1, 3):
        report("policies", done, 2)
    fractions = [f for f, _ in seen]
    assert fractions == sorted(fractions) and fractions[-1] == pytest.approx(1.0)
    assert seen[0][1].startswith("Selecting sensor subsets (Alg. 2)")
    assert 0 < fractions[2] < fractions[3]


def test_subset_names_of_states(wide_run):
    model = wide_run.model
    assert state_label(model, 0) == "start (no sensors)"
    last = model.sensor_dag_.n_states - 1
    assert state_label(model, last) == f"all {N_FEATURES} sensors"
    table = subsets.subset_table(model)
    chosen = model.subset_selection_.subsets
    assert table["cost"].tolist() == [float(len(s)) for s in chosen]
    for k in range(1, last):
        held = set(model.sensor_dag_.state_names(k))
        for j in subsets_in(model, k):
            assert set(chosen[j - 1]) <= held


def test_a_target_budget_keeps_the_subset_settings(wide, wide_run):
    settings = replace(wide_run.settings, target_budget=4.0)
    run = train(wide, wide.spec, settings)
    assert run.model.n_subsets == 5 and run.model.subset_selection_ is not None
    assert run.settings.n_subsets == 5 and run.settings.cost_scale > 0


def test_subset_actions_are_named_by_the_library(wide_run):
    from types import SimpleNamespace

    from budgetdag_core.explain import action_names
    from ui.teaching import renamed_actions

    model = wide_run.model
    long, short = action_names(model, 0), action_names(model, 0, short=True)
    children = [child for _, child in model.policies_[0].children]
    assert short == ["stop"] + [
        f"buy {subsets.edge_subset(model, 0, child)}" for child in children
    ]
    assert long[1:] and all(name.startswith("acquire ") for name in long[1:])
    step = SimpleNamespace(state=0, actions=long)
    assert renamed_actions(model, step) == dict(zip(long, short, strict=True))
