"""Teaching page and shareable links: the Graph-Reduce walk, the URL round trip."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest
from app_helpers import assert_clean, finish_jobs, page, prefill, texts

from budgetdag_core import SensorSpec, dumps_policy, loads_policy
from budgetdag_core.teaching import graph_reduce_steps
from ui import links, state
from ui.teaching import (
    action_label,
    refit_out_of_fold,
    replay_data,
    replay_model,
    replay_problem,
)
from ui.training import TrainSettings, run_from_model, train

TOY_LINK = {"demo": "toy", "cost_scale": "0.03", "cv": "3"}


def open_link(app, params: dict[str, str], where: str = "teaching"):
    for key, value in params.items():
        app.query_params[key] = value
    return app.switch_page(page(where)).run()


@pytest.fixture
def toy(app):
    """The Teaching page opened from a link to the toy demo (trains on arrival)."""
    at = open_link(app, TOY_LINK)
    assert_clean(at)
    return finish_jobs(at)  # the training runs beside the page


def walk(at):
    run = at.session_state[state.RUN]
    dataset = at.session_state[state.DATASET]
    X, y = dataset.X("train", run.spec), dataset.y("train")
    return graph_reduce_steps(run.model, X, y, rows=6, random_state=0)


def summary(at) -> str:
    return next(m.value for m in at.markdown if m.value.startswith("**Reducing"))


def test_a_link_sets_up_the_demo_and_the_model(toy):
    at = toy
    dataset = at.session_state[state.DATASET]
    assert dataset.name == "toy" and dataset.kind == "demo"
    run = at.session_state[state.RUN]
    assert run.settings.cost_scale == 0.03 and run.settings.cv == 3
    assert at.session_state[state.W_COST_SCALE] == 0.03
    assert at.session_state[state.W_COST_MODE] == "scale"  # not the "auto" default
    # The URL now carries the full set-up, including the step.
    assert at.query_params["demo"] == "toy"
    assert at.query_params["cost_scale"] == "0.03"
    assert at.query_params["cv"] == "3"
    assert at.query_params["step"] == "0"
    # The walk starts at a leaf: the node with every sensor, where one can only stop.
    steps = walk(at)
    assert steps[0].state == 7 and "only action is to stop" in summary(at)
    assert len(at.get("plotly_chart")) == 2  # the DAG and the node's decisions


def test_step_back_reset_and_play(toy):
    at = toy
    steps = walk(at)
    at.button(key=state.W_TEACH_STEP).click().run()
    at.button(key=state.W_TEACH_STEP).click().run()
    assert at.session_state[state.TEACH_STEP] == 2
    assert summary(at).startswith(f"**Reducing node {steps[2].state}:")
    assert at.query_params["step"] == "2"
    costs = at.dataframe[0].value
    assert len(costs) == 6
    actions = [action_label(a) for a in steps[2].actions]
    assert list(costs.columns) == [*actions, "policy picks", "cost-to-go"]
    picked = [action_label(a) for a in steps[2].costs["picked"]]
    assert costs["policy picks"].tolist() == picked
    np.testing.assert_allclose(costs["cost-to-go"], steps[2].costs["cost_to_go"])
    at.button(key=state.W_TEACH_BACK).click().run()
    assert at.session_state[state.TEACH_STEP] == 1
    at.button(key=state.W_TEACH_RESET).click().run()
    assert at.session_state[state.TEACH_STEP] == 0
    assert at.button(key=state.W_TEACH_BACK).disabled
    # Play walks to the root by itself, then stops.
    at.slider(key=state.W_TEACH_SPEED).set_value(0.2).run()
    at.button(key=state.W_TEACH_PLAY).click().run()
    assert_clean(at)
    assert at.session_state[state.TEACH_STEP] == len(steps) - 1
    assert not at.session_state[state.TEACH_PLAYING]
    assert summary(at).startswith("**Reducing node 0: start (no sensors).**")
    assert at.button(key=state.W_TEACH_STEP).disabled


def test_a_link_to_a_step(app):
    at = finish_jobs(open_link(app, {**TOY_LINK, "step": "3"}))
    assert at.session_state[state.TEACH_STEP] == 3
    assert summary(at).startswith(f"**Reducing node {walk(at)[3].state}:")


def test_the_toy_button_switches_data_and_trains(app, pima, pima_run):
    at = prefill(app, pima, pima_run).switch_page(page("teaching")).run()
    assert_clean(at)
    at.button(key=state.W_TEACH_STEP).click().run()  # a node with 7 columns
    assert any("one or two columns" in t for t in texts(at, "info"))
    at.button(key=state.W_TEACH_TOY).click().run()
    assert_clean(at)
    # It would drop the model: asked first, and "keep" keeps everything.
    assert at.session_state[state.DATASET].name == "pima"
    assert any("drops the model" in t for t in texts(at, "warning"))
    at.button(key=state.W_REPLACE_NO).click().run()
    assert at.session_state[state.RUN] is pima_run
    assert not any("drops the model" in t for t in texts(at, "warning"))
    at.button(key=state.W_TEACH_TOY).click().run()
    at.button(key=state.W_REPLACE_YES).click().run()
    assert_clean(at)
    assert at.session_state[state.DATASET].name == "toy"
    run = finish_jobs(at).session_state[state.RUN]
    assert run is not None and run.model.spec_.names == (
        "cheap_a",
        "cheap_b",
        "precise",
    )
    assert at.query_params["demo"] == "toy"


def test_a_loaded_policy_is_replayed_after_refitting_its_losses(app, pima, pima_run):
    loaded = loads_policy(dumps_policy(pima_run.model))  # slim: no training costs
    run = run_from_model(loaded, pima, "loaded from mine.pkl")
    at = prefill(app, pima, run).switch_page(page("teaching")).run()
    assert_clean(at)
    assert not at.error
    # Plain words on what is missing, and the fix as a button.
    assert any("out-of-fold predictions" in t for t in texts(at, "info"))
    at.button(key=state.W_TEACH_REFIT).click().run()
    at = finish_jobs(at)
    assert_clean(at)
    kept = at.session_state[state.RUN]
    assert kept is run and run.replay_bank is not None
    assert summary(at).startswith("**Reducing node")
    # The replay walks the loaded policies on the refitted losses: with the
    # same settings and rows, those are the trained model's own.
    X, y = pima.X("train", pima.spec), pima.y("train")
    replayed = graph_reduce_steps(replay_model(run), X, y, rows=6, random_state=0)
    original = graph_reduce_steps(pima_run.model, X, y, rows=6, random_state=0)
    assert [s.mean_cost_to_go for s in replayed] == pytest.approx(
        [s.mean_cost_to_go for s in original]
    )
    # A loaded model's walk is not the app's data's: the predictions stay.
    assert kept.model.bank_ is loaded.bank_


def test_a_model_fitted_for_a_budget_is_replayed_on_its_rows(app, pima):
    settings = TrainSettings(cv=3, random_state=0, target_budget=2.0)
    run = train(pima, pima.spec, settings)
    assert len(run.model.budget_report_.train_rows) < len(pima.train)
    at = prefill(app, pima, run).switch_page(page("teaching")).run()
    assert_clean(at)
    assert not at.error, texts(at, "error")
    assert summary(at).startswith("**Reducing node")
    X, y = replay_data(run, pima)
    assert len(X) == run.model.budget_report_.n_train


def test_a_link_with_a_spec_and_settings(app):
    columns = ["pregnancies", "glucose", "blood_pressure", "bmi", "age"]
    spec = SensorSpec.per_column(columns)
    params = {
        "demo": "pima",
        "spec": json.dumps({"groups": spec.groups, "costs": spec.costs}),
        "cost_scale": "0.01",
        "learner": "cost_regression",
        "degree": "1",
        "seed": "4",
    }
    at = open_link(app, params, where="sensors")
    assert_clean(at)
    assert at.session_state[state.DATASET].name == "pima"
    # The visit's first data: no "New data" notice about the default demo's.
    assert not any("New data" in t for t in texts(at))
    table = at.session_state[state.SPEC_TABLE]
    assert table["sensor"].tolist() == columns
    assert at.session_state[state.W_LEARNER] == "cost_regression"
    assert at.session_state[state.W_DEGREE] == 1
    assert at.session_state[state.W_SEED] == 4
    assert json.loads(at.query_params["spec"])["groups"] == spec.groups
    # The Train page shows the settings from the link.
    at.switch_page(page("train")).run()
    assert at.number_input(key=state.W_COST_SCALE).value == 0.01


def test_bad_link_values_are_named_and_the_rest_applies(app):
    at = open_link(
        app, {"demo": "nope", "cv": "99", "degree": "2", "spec": "{oops"}, where="data"
    )
    assert_clean(at)
    message = " ".join(texts(at, "error"))
    assert "demo='nope' is not a bundled demo" in message
    assert "cv: '99' is outside 2 to 10" in message
    assert "spec is not a sensor spec" in message
    assert at.session_state[state.DATASET].name == "landsat"
    assert at.session_state[state.W_DEGREE] == 2


def test_an_upload_is_not_put_in_the_url(app, pima):
    upload = type(pima)(
        "mine.csv", pima.train, pima.test, "label", pima.spec, kind="upload"
    )
    at = prefill(app, upload).switch_page(page("train")).run()
    assert "demo" not in at.query_params


# ------------------------------------------------------------ pure helpers
def test_encode_decode_round_trip():
    spec = SensorSpec({"a": ["x", "y"], "b": ["z"]}, {"a": 1.5, "b": 2.0})
    default = SensorSpec({"a": ["x"], "b": ["y", "z"]}, {"a": 1.0, "b": 1.0})
    values = {
        state.W_COST_SCALE: 0.25,
        state.W_CLASSIFIER: "random_forest",
        state.W_LEARNER: "filter_tree",  # the default: left out
        state.W_DEGREE: 3,
        state.W_CV: 5,  # the default: left out
        state.W_SEED: 7,
    }
    params = links.encode("letter", spec, default, values, step=4)
    assert "learner" not in params and "cv" not in params
    decoded, problems = links.decode(params)
    assert problems == []
    assert decoded["demo"] == "letter" and decoded["step"] == 4
    assert decoded["spec"] == spec
    for key in (state.W_COST_SCALE, state.W_CLASSIFIER, state.W_DEGREE, state.W_SEED):
        assert decoded[key] == values[key]
    # The "auto" trade-off mode (the default) carries no cost scale.
    auto = links.encode("letter", spec, default, {**values, state.W_COST_MODE: "auto"})
    assert "cost_scale" not in auto and auto["classifier"] == "random_forest"
    scale = {**values, state.W_COST_MODE: "scale"}
    assert links.encode("letter", spec, default, scale)["cost_scale"] == "0.25"
    # The demo's own spec is not repeated in the URL.
    assert "spec" not in links.encode("letter", default, default, values)
    assert links.encode(None, spec, default, values) == {}


def test_the_step_starts_over_for_another_model(app, pima, pima_run):
    import dataclasses

    at = prefill(app, pima, pima_run).switch_page(page("teaching")).run()
    at.button(key=state.W_TEACH_STEP).click().run()
    at.button(key=state.W_TEACH_STEP).click().run()
    assert at.session_state[state.TEACH_STEP] == 2
    at.switch_page(page("train")).run()
    at.switch_page(page("teaching")).run()  # the same model: the same step
    assert at.session_state[state.TEACH_STEP] == 2
    # A newly trained model (same data and settings) walks from the first step.
    at.session_state[state.RUN] = dataclasses.replace(pima_run, cache={})
    at.run()
    assert_clean(at)
    assert at.session_state[state.TEACH_STEP] == 0
    assert at.query_params["step"] == "0"


def test_the_shared_link_leaves_out_the_private_session_token(toy):
    at = toy
    assert "session" in at.query_params  # the address bar has it...
    link = at.get("code")[0].value
    assert "demo=toy" in link and "step=0" in link
    assert "session=" not in link  # ...the link to share does not


def test_a_step_shows_the_rows_arriving_and_greys_pending_nodes(toy):
    at = toy
    steps = walk(at)
    at.button(key=state.W_TEACH_STEP).click().run()
    step = steps[at.session_state[state.TEACH_STEP]]
    assert f"{step.arrived:,} of" in " ".join(m.value for m in at.markdown)
    if step.arrived:
        arrivals = at.dataframe[1].value
        assert list(arrivals.columns)[:2] == ["stop cost", "pick"]
        assert len(arrivals) == len(step.arrivals)
    # The root is reduced last: grey at every step before it.
    fig = at.get("plotly_chart")[0].proto.spec
    assert "not reduced yet" in fig


def _head(dataset, rows: int):
    """``dataset`` with its first ``rows`` training rows (a fast fit)."""
    return type(dataset)(
        dataset.name,
        dataset.train.head(rows),
        dataset.test,
        dataset.label,
        dataset.spec,
        kind=dataset.kind,
    )


@pytest.fixture(scope="module")
def pima_small(pima):
    return _head(pima, 250)  # 3 sensors: 8 states


@pytest.fixture(scope="module")
def diabetes():
    from budgetdag_core import load_demo
    from ui.data import demo_dataset

    return _head(demo_dataset(load_demo("diabetes")), 150)  # 4 sensors: 16 states


#: A fresh model of every strategy, classifier (pima) and regressor
#: (diabetes): the full DAG, Alg. 2's subsets, and the DAGs of one-sensor
#: additions (chain, routed, grown: ``dag="sparse"``).
FRESH = [
    ("classification", {"dag": "full"}),
    ("classification", {"n_subsets": 3}),
    ("classification", {"dag": "chain", "bank_kind": "masked_auto"}),
    ("classification", {"dag": "routed", "bank_kind": "masked_auto"}),
    ("classification", {"dag": "sparse", "bank_kind": "masked_auto"}),
    ("regression", {"dag": "full"}),
    ("regression", {"dag": "chain"}),
    ("regression", {"dag": "routed"}),
    ("regression", {"dag": "sparse"}),
]


@pytest.mark.parametrize(("task", "asked"), FRESH)
def test_a_fresh_model_of_every_strategy_is_replayed_without_refit(
    app, pima_small, diabetes, task, asked
):
    """A model just trained replays on its own out-of-fold outputs, whatever
    built its DAG: the walk shows at once, with no refit offered, and every
    step to the root draws (its summary, cost table and labels)."""
    dataset = pima_small if task == "classification" else diabetes
    if task == "classification":
        settings = TrainSettings(cost_scale=0.0043, cv=3, random_state=0)
    else:
        settings = TrainSettings(
            task=task, classifier="ridge", cost_scale=120.0, cv=3, random_state=0
        )
    if "n_subsets" in asked:  # the form's Alg. 2 settings
        settings = replace(settings, n_subsets=asked["n_subsets"])
    params = {
        **settings.params(),
        **{k: v for k, v in asked.items() if k != "n_subsets"},
    }
    run = train(dataset, dataset.spec, params)
    at = prefill(app, dataset, run).switch_page(page("teaching")).run()
    assert_clean(at)
    assert not at.error, texts(at, "error")
    assert not any("out-of-fold predictions" in t for t in texts(at, "info"))
    assert all(b.key != state.W_TEACH_REFIT for b in at.button)
    steps = walk(at)
    assert len(steps) == len(run.model.policies_)
    # The first step (a leaf), one Step, and the root, reduced last (the
    # regressor's full DAG failed to draw there: no label had room).
    for i in (0, 1, len(steps) - 1):
        if i == 1:
            at.button(key=state.W_TEACH_STEP).click().run()
        elif i:
            at.session_state[state.TEACH_STEP] = i
            at.run()
        assert_clean(at)
        assert not at.error, (i, texts(at, "error"))
        assert summary(at).startswith(f"**Reducing node {steps[i].state}:"), i
        costs = at.dataframe[0].value
        assert list(costs.columns)[-2:] == ["policy picks", "cost-to-go"]
        np.testing.assert_allclose(costs["cost-to-go"], steps[i].costs["cost_to_go"])
    assert at.button(key=state.W_TEACH_STEP).disabled  # the root
    assert run.replay_bank is None


@pytest.mark.parametrize(
    ("task", "dag"),
    [
        ("classification", "chain"),
        ("classification", "sparse"),
        ("regression", "routed"),
    ],
)
def test_a_loaded_many_sensor_policy_replays_after_refit_out_of_fold(
    pima_small, diabetes, task, dag
):
    """A saved many-sensor policy is slim: the page names what is missing, and
    :func:`refit_out_of_fold` grows the model's own DAG again on the same rows
    and settings, so the walk is the trained model's."""
    dataset = pima_small if task == "classification" else diabetes
    if task == "classification":
        settings = TrainSettings(cost_scale=0.0043, cv=3, random_state=0).params()
        params = {**settings, "dag": dag, "bank_kind": "masked_auto"}
    else:
        settings = TrainSettings(
            task=task, classifier="ridge", cost_scale=120.0, cv=3, random_state=0
        ).params()
        params = {**settings, "dag": dag}
    trained = train(dataset, dataset.spec, params)
    loaded = loads_policy(dumps_policy(trained.model))
    run = run_from_model(loaded, dataset, "loaded from mine.pkl")
    X, y = replay_data(run, dataset)
    assert "not the out-of-fold predictions" in replay_problem(run, X)
    run.replay_bank = refit_out_of_fold(loaded, dataset)
    assert replay_problem(run, X) is None
    replayed = graph_reduce_steps(replay_model(run), X, y, rows=6, random_state=0)
    original = graph_reduce_steps(trained.model, X, y, rows=6, random_state=0)
    assert [s.state for s in replayed] == [s.state for s in original]
    assert [s.mean_cost_to_go for s in replayed] == pytest.approx(
        [s.mean_cost_to_go for s in original]
    )


# ---------------------------------------------------- greying and layout
@pytest.fixture(scope="module")
def landsat_small():
    """Landsat (4 bands, 16 states) on 500 training rows: some states are
    reduced but reached by no training example, the case that was grey."""
    from budgetdag_core import load_demo
    from ui.data import demo_dataset

    full = demo_dataset(load_demo("landsat"))
    small = type(full)(
        full.name,
        full.train.sample(500, random_state=0),
        full.test.sample(200, random_state=0),
        full.label,
        full.spec,
        kind=full.kind,
    )
    run = train(small, small.spec, TrainSettings(cost_scale=0.02, cv=3, random_state=0))
    return small, run


def dag_nodes(at) -> dict[int, tuple]:
    """The Teaching DAG's nodes from the page's figure: state -> (x, y, colour)."""
    from app_helpers import values

    fig = json.loads(at.get("plotly_chart")[0].proto.spec)
    nodes = next(t for t in fig["data"] if t["name"] == "states")
    custom = values(nodes["customdata"])
    colours = nodes["marker"]["color"]
    colours = colours if isinstance(colours, list) else values(colours)
    return {
        int(row[0]): (x, y, c)
        for row, x, y, c in zip(
            custom, values(nodes["x"]), values(nodes["y"]), colours, strict=True
        )
    }


def test_landsat_replay_greys_exactly_the_nodes_not_reduced_yet(app, landsat_small):
    from budgetdag_core.plotting._style import PENDING_COLOR
    from budgetdag_core.teaching import pending_states

    dataset, run = landsat_small
    at = prefill(app, dataset, run).switch_page(page("teaching")).run()
    assert_clean(at)
    steps = walk(at)
    assert len(steps) == 16
    flow = run.model.flow(dataset.X("train", run.spec), dataset.y("train"))
    unreached = {k for k in flow.nodes if flow.nodes[k]["arrived"] == 0}
    assert unreached  # the case of the bug: reduced, yet no example there
    first = None
    for i in range(len(steps)):
        at.session_state[state.TEACH_STEP] = i
        at.run()
        assert at.session_state[state.TEACH_STEP] == i
        nodes = dag_nodes(at)
        assert set(nodes) == set(range(16))  # every state, at every step
        grey = {k for k, (_, _, c) in nodes.items() if c == PENDING_COLOR}
        assert grey == pending_states(steps, i), i
        assert grey == {s.state for s in steps[i + 1 :]}
        caption = " ".join(texts(at, "caption"))
        if grey:
            assert f"Grey nodes ({len(grey)}) are not reduced yet" in caption
        else:
            assert "Every node is reduced" in caption
        # The nodes stay where they were at the first step.
        where = {k: (x, y) for k, (x, y, _) in nodes.items()}
        first = first or where
        assert where == first, i
    # At the last step the unreached states are faded white, not grey.
    assert all(nodes[k][2] != PENDING_COLOR for k in unreached)
