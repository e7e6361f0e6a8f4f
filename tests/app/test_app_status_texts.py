"""Every status text follows the current data, sensors and model (issue 38).

The walk changes the data, the sensors and the model and reads each page's
status lines (the sidebar, the Data page's one-click button, the Sensors
page's summary, the Train page's caption and plan) after each change: none
may describe what was there before.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from app_helpers import assert_clean, finish_jobs, page, texts

from ui import jobs, state, widgets

N_COLUMNS = 13  # one more than a full DAG allows


def thirteen_columns(n: int = 300) -> bytes:
    """A CSV of 13 unrelated feature names and a label from two of them."""
    rng = np.random.default_rng(1)
    names = [
        "age", "height", "weight", "pulse", "glucose", "insulin", "sodium",
        "potassium", "calcium", "iron", "zinc", "copper", "lead",
    ]  # fmt: skip
    frame = pd.DataFrame(rng.normal(size=(n, N_COLUMNS)).round(3), columns=names)
    label = frame["age"] + frame["glucose"] + 0.3 * rng.normal(size=n) > 0
    frame = frame.assign(outcome=np.where(label, "yes", "no"))
    return frame.to_csv(index=False).encode()


def sidebar(at) -> str:
    return " ".join(c.value for c in at.sidebar.caption)


def everything(at) -> str:
    """Every text of the last run: captions, markdown, messages, sidebar."""
    parts = [c.value for c in at.caption] + [m.value for m in at.markdown]
    return " ".join(parts + texts(at) + [sidebar(at)])


def upload(at, data: bytes, name: str):
    at.switch_page(page("data")).run()
    at.radio(key=state.W_SOURCE).set_value("upload").run()
    at.file_uploader(key=state.W_UPLOAD).set_value((name, data, "text/csv")).run()
    at.button(key=state.W_USE_UPLOAD).click().run()
    if at.session_state[state.RUN] is not None:  # asked first: drop the model
        at.button(key=state.W_REPLACE_YES).click().run()
    assert_clean(at)
    return at


def test_status_texts_follow_data_sensors_and_model(app):
    at = app.run()
    at.selectbox(key=state.W_DEMO).set_value("pima").run()
    at.switch_page(page("train")).run()
    at.number_input(key=state.W_CV).set_value(3).run()
    at.button(key=state.W_TRAIN).click().run()
    job = jobs.current(at.session_state[state.TOKEN])
    finish_jobs(at)
    assert_clean(at)
    run = at.session_state[state.RUN]
    # The time said is from pressing Train to the result, not the worker's.
    assert run.seconds >= job.finished - job.submitted >= job.elapsed()
    trained = f"Trained in {widgets.seconds(run.seconds)} on pima"
    assert any(trained in t for t in texts(at, "success"))
    assert "**Model:** test error" in sidebar(at)

    # Other data: the model goes, and every word about it.
    at = upload(at, thirteen_columns(), "thirteen.csv")
    assert at.session_state[state.RUN] is None
    assert "Trained in" not in " ".join(texts(at)), texts(at)
    assert "**Model:** not trained yet" in sidebar(at)
    assert "**Data:** thirteen.csv" in sidebar(at)
    # 13 sensors, one per column: the library's default, nothing about 2^13
    # or n_subsets, on every page that speaks of the sensors.
    chain = f"a chain of {N_COLUMNS + 1} states"
    button = next(c.value for c in at.caption if c.value.startswith("Trains on"))
    assert f"Trains on {N_COLUMNS} sensors (one sensor per column, suggested)" in button
    assert chain in button
    for name in ("data", "sensors", "train"):
        at.switch_page(page(name)).run()
        assert_clean(at)
        words = everything(at)
        assert "2^13" not in words and "8192" not in words and "n_subsets" not in words
        assert f"**Sensors:** {N_COLUMNS} · {chain}" in sidebar(at), name
    assert chain in at.caption[0].value  # the Train page's first line

    # Sensors set: four blocks make a full DAG of 16 states, said everywhere.
    at.switch_page(page("sensors")).run()
    at.number_input(key=state.W_BLOCKS).set_value(4).run()
    at.button(key=f"{state.W_PRESET}blocks").click().run()
    assert_clean(at)
    assert any("4 sensors, 16 DAG states" in t for t in texts(at, "success"))
    for name in ("sensors", "train", "data"):
        at.switch_page(page(name)).run()
        words = everything(at)
        assert "**Sensors:** 4 · 16 DAG states" in sidebar(at), name
        assert "chain" not in words and "2^13" not in words, name
    assert "Trains on 4 sensors (as set on the Sensors page)" in everything(at)

    # A model on them: the sidebar and the Train page describe it.
    at.switch_page(page("train")).run()
    at.number_input(key=state.W_CV).set_value(3).run()
    at.button(key=state.W_TRAIN).click().run()
    finish_jobs(at)
    assert_clean(at)
    assert "**Model:** test error" in sidebar(at)
    assert any("on thirteen.csv" in t for t in texts(at, "success"))
    assert any(c.value.startswith("Cost scale") for c in at.caption)


def test_the_queue_wait_is_not_said_while_the_sessions_own_job_runs(
    app, pima, monkeypatch
):
    from types import SimpleNamespace

    from app_helpers import prefill

    # Another job ahead in the queue for 30 s: the plan says so ...
    monkeypatch.setattr(jobs.Pool, "wait_seconds", lambda self, job=None: 30.0)
    at = prefill(app, pima).switch_page(page("train")).run()
    assert "it starts after the jobs ahead" in everything(at)
    # ... but not while the job it would wait for is this session's own.
    own = SimpleNamespace(label="Training on pima...", estimate=None)
    monkeypatch.setattr(widgets, "running_job", lambda: own)
    at.run()
    assert_clean(at)
    assert "after the jobs ahead" not in everything(at)
    assert any("Training on pima..." in c.value for c in at.caption)


def test_a_kept_strategy_says_why():
    from types import SimpleNamespace

    from budgetdag_core.strategies import StrategyChoice
    from ui import plan

    def model(choice: StrategyChoice) -> SimpleNamespace:
        dag = SimpleNamespace(n_states=17)
        return SimpleNamespace(
            strategy_="chain", sensor_dag_=dag, strategy_choice_=choice
        )

    kept = plan.model_words(model(StrategyChoice("chain", kept_between=(0.01, 0.04))))
    assert kept is not None and "0.01 and 0.04" in kept and "17 states" in kept
    alone = plan.model_words(model(StrategyChoice("chain")))
    assert alone is not None and alone.endswith("(17 states).")
    scores = {
        name: [{"loss": loss}] for name, loss in (("chain", 0.2), ("routed", 0.19))
    }
    stayed = plan.model_words(
        model(StrategyChoice("chain", [0.1], scores, kept_incumbent=True))
    )
    assert stayed is not None and "retrained model's strategy stayed" in stayed
    judged = plan.model_words(model(StrategyChoice("chain", [0.1], scores)))
    assert judged is not None and "the simplest (chain, then routed)" in judged
