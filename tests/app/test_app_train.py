"""Train page: the default demo trains, the bank is reused, errors are messages."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from app_helpers import TIMEOUT, assert_clean, finish_jobs, page, prefill, texts

from budgetdag_core import Dataset, SensorSpec
from ui import state
from ui.training import app_n_jobs, budget_targeting_available


def train_page(at):
    return at.switch_page(page("train")).run()


def scale_mode(at):
    """The Train page with a number for the cost scale (not "auto")."""
    return at.radio(key=state.W_COST_MODE).set_value("scale").run()


def click_train(at):
    at.button(key=state.W_TRAIN).click().run()
    finish_jobs(at)
    assert_clean(at)
    return at


def test_default_demo_trains_from_the_train_page(app):
    at = train_page(app.run())  # landsat, as a new user sees it
    # The library's and the CLI's default: cost_scale="auto".
    assert at.radio(key=state.W_COST_MODE).value == "auto"
    assert not [n for n in at.number_input if n.key == state.W_COST_SCALE]
    assert any("The library's default" in c.value for c in at.caption)
    # fast settings for the test; the app's defaults are 5 folds and degree 1
    at.number_input(key=state.W_CV).set_value(2).run()
    at.slider(key=state.W_DEGREE).set_value(1).run()
    click_train(at)
    assert not at.error, texts(at, "error")
    run = at.session_state[state.RUN]
    assert run.model.cost_scale == "auto" and run.settings.cost_scale == "auto"
    assert run.model.spec_.names == ("band1", "band2", "band3", "band4")
    assert not run.bank_reused
    assert len(run.model.bank_.models_) == 16
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Test error"] == f"{run.metrics['error']:.1%}"
    assert metrics["Average sensors"] == f"{run.metrics['avg_sensors']:.2f} of 4"
    table = at.dataframe[0].value
    assert list(table.index) == [
        "BudgetDAG policy",
        "All sensors",
        "No sensor (class priors)",
    ]
    assert table.loc["All sensors", "avg cost"] == 4.0
    assert table.loc["No sensor (class priors)", "avg sensors"] == 0
    # The policy pays for fewer sensors than all-sensors, and beats no-sensor.
    assert run.metrics["avg_cost"] < 4.0
    assert run.metrics["error"] < table.loc["No sensor (class priors)", "test error"]
    # The job ended: its message replaces the sidebar's progress bar.
    assert any("Trained in" in t for t in texts(at, "success"))
    assert not at.get("progress")


def test_changing_only_the_cost_scale_reuses_the_bank(app, pima):
    at = scale_mode(train_page(prefill(app, pima)))
    at.number_input(key=state.W_CV).set_value(3).run()
    first = click_train(at).session_state[state.RUN]
    assert not first.bank_reused
    at.number_input(key=state.W_COST_SCALE).set_value(0.0005).run()
    assert any("already fitted" in t for t in texts(at, "info"))
    second = click_train(at).session_state[state.RUN]
    assert second.bank_reused and second.model.bank_ is first.model.bank_
    assert second.settings.cost_scale == 0.0005
    assert second.metrics["avg_cost"] >= first.metrics["avg_cost"]  # cheaper sensors
    assert "(classifier bank reused)" in " ".join(c.value for c in at.caption)
    # The policy learner does not touch the bank either; the folds do.
    at.selectbox(key=state.W_LEARNER).set_value("cost_regression").run()
    third = click_train(at).session_state[state.RUN]
    assert third.bank_reused and third.model.bank_ is first.model.bank_
    at.number_input(key=state.W_CV).set_value(4).run()
    assert not any("already fitted" in t for t in texts(at, "info"))
    fourth = click_train(at).session_state[state.RUN]
    assert not fourth.bank_reused and fourth.model.bank_ is not first.model.bank_


def _tiny(labels: list[str]) -> Dataset:
    rng = np.random.default_rng(0)
    n = len(labels)
    frame = pd.DataFrame(
        {"a": rng.normal(size=n), "b": rng.normal(size=n), "label": labels}
    )
    spec = SensorSpec.per_column(["a", "b"])
    return Dataset("tiny.csv", frame, frame.copy(), "label", spec, kind="upload")


def test_a_training_error_is_a_message_and_the_app_stays_usable(app):
    # A class of one row: no fold count serves it (two rows or more get as
    # many folds as they have rows, estimator._small_data).
    at = train_page(prefill(app, _tiny(["x"] * 15 + ["y"])))
    at.number_input(key=state.W_CV).set_value(10).run()
    click_train(at)
    errors = texts(at, "error")
    assert any("fewer rows than cv=10 folds" in e and "What to do" in e for e in errors)
    assert at.session_state[state.RUN] is None
    at = train_page(prefill(at, _tiny(["x", "y"] * 8)))
    at.number_input(key=state.W_CV).set_value(2).run()
    click_train(at)
    assert not at.error
    assert at.session_state[state.RUN] is not None


def test_training_runs_beside_the_pages_and_stops_from_another_page(app):
    """Training goes on while another page is shown; Stop (sidebar) from there
    ends it and changes nothing."""
    at = train_page(app.run())  # landsat at the app's defaults: many seconds
    at.button(key=state.W_TRAIN).click().run()
    assert_clean(at)
    # No model yet: nothing below is a previous model's.
    captions = " ".join(c.value for c in at.caption)
    assert "Its results show here when it finishes" in captions
    assert "previous model's" not in captions
    assert at.run().button(key=state.W_TRAIN).disabled  # one job at a time
    at.switch_page(page("explore")).run()
    from ui import jobs

    job = jobs.current(at.session_state[state.TOKEN])
    assert job is not None and job.running  # leaving the page did not stop it
    assert "Training on landsat" in " ".join(m.value for m in at.sidebar.markdown)
    assert any("the model appears here when it is done" in t for t in texts(at, "info"))
    at.button(key=state.W_STOP).click().run()
    assert job.wait(TIMEOUT)
    assert job.status == jobs.STOPPED
    at.run()
    assert_clean(at)
    assert any("was stopped after" in t for t in texts(at, "info"))
    assert state.RUN not in at.session_state  # nothing half-trained
    assert jobs.current(at.session_state[state.TOKEN]) is None
    assert not [b for b in at.button if b.key == state.W_STOP]


def test_parameters_have_plain_language_help(app, pima):
    at = scale_mode(train_page(prefill(app, pima)))
    widgets = [
        at.number_input(key=state.W_COST_SCALE),
        at.selectbox(key=state.W_CLASSIFIER),
        at.selectbox(key=state.W_LEARNER),
        at.slider(key=state.W_DEGREE),
        at.number_input(key=state.W_CV),
        at.number_input(key=state.W_SEED),
    ]
    for widget in widgets:
        assert len(widget.help) > 60, widget.label
    assert "misclassifications" in widgets[0].help
    assert at.selectbox(key=state.W_CLASSIFIER).options == [
        "Logistic regression (fastest)",
        "Gradient boosting (most accurate; default)",
        "Random forest (robust, slower)",
        "Masked boosting (one model, many sensors)",
        "The library's default for these sensors",
    ]
    modes = at.radio(key=state.W_COST_MODE).options
    assert modes[:2] == ["Automatic", "Cost scale"]
    assert ("Target average cost" in modes) == budget_targeting_available()
    # The training caption estimates the time (estimate_fit_seconds).
    threads = app_n_jobs()
    where = "on one core" if threads == 1 else f"on {threads} cores"
    assert any(where in c.value and "roughly" in c.value for c in at.caption)


def test_results_of_a_model_trained_with_another_spec_are_flagged(app, pima, pima_run):
    at = prefill(app, pima, pima_run)
    table = at.session_state[state.SPEC_TABLE].copy()
    table.loc[0, "cost"] = 1.0
    at.session_state[state.SPEC_TABLE] = table
    train_page(at)
    assert_clean(at)
    assert any("trained with an earlier sensor table" in c.value for c in at.caption)


def _stand_in_fit_for_budget(X, y, spec, target_avg_cost, *, progress=None, **params):
    """The contract of the core's ``fit_for_budget`` (trade-off issue), for when it
    is not in this checkout: a fitted model with a ``budget_report_``."""
    from types import SimpleNamespace

    from budgetdag_core import BudgetDAGClassifier

    scale = 0.01
    model = BudgetDAGClassifier(spec, cost_scale=scale, **params)
    model.fit(X, y, progress=progress)
    model.budget_report_ = SimpleNamespace(
        target_avg_cost=float(target_avg_cost),
        cost_scale=scale,
        met=True,
        validation_avg_cost=float(model.evaluate(X, y)["avg_cost"]),
        n_train=len(X),
        n_validation=0,
    )
    return model


def test_automatic_mode_trains_the_library_default(app, pima):
    at = train_page(prefill(app, pima))
    at.radio(key=state.W_COST_MODE).set_value("auto").run()
    assert not [n for n in at.number_input if n.key == state.W_COST_SCALE]
    at.number_input(key=state.W_CV).set_value(3).run()
    click_train(at)
    assert not at.error, texts(at, "error")
    run = at.session_state[state.RUN]
    assert run.model.cost_scale == "auto" and run.settings.cost_scale == "auto"
    chosen = run.model.cost_scale_
    assert chosen == run.model.cost_scale_search_["tried"][0]["cost_scale"] or any(
        p["cost_scale"] == chosen for p in run.model.cost_scale_search_["tried"]
    )
    # Back to a scale: the widget shows the one "auto" chose.
    at.radio(key=state.W_COST_MODE).set_value("scale").run()
    assert at.number_input(key=state.W_COST_SCALE).value == chosen


def test_target_budget_mode(app, pima, monkeypatch):
    import budgetdag_core

    if not budget_targeting_available():
        monkeypatch.setattr(
            budgetdag_core, "fit_for_budget", _stand_in_fit_for_budget, raising=False
        )
    at = train_page(prefill(app, pima))
    at.radio(key=state.W_COST_MODE).set_value("budget").run()
    assert not [n for n in at.number_input if n.key == state.W_COST_SCALE]
    at.number_input(key=state.W_BUDGET).set_value(10.0).run()
    at.number_input(key=state.W_CV).set_value(3).run()
    click_train(at)
    assert not at.error, texts(at, "error")
    run = at.session_state[state.RUN]
    report = run.model.budget_report_
    assert report.target_avg_cost == 10.0
    assert run.settings.cost_scale == report.cost_scale
    assert run.bank_key is None  # its bank saw part of the rows: not reusable
    assert any("Target average cost 10: cost scale" in c.value for c in at.caption)
    at.radio(key=state.W_COST_MODE).set_value("scale").run()
    assert at.number_input(key=state.W_COST_SCALE).value == report.cost_scale


def test_new_data_or_costs_reset_the_cost_scale_and_budget_only(app, pima):
    at = scale_mode(train_page(app.run()))  # landsat
    at.number_input(key=state.W_COST_SCALE).set_value(0.025).run()
    at.number_input(key=state.W_SEED).set_value(1).run()
    # Other data: its suggestion replaces the cost scale, the seed stays.
    at.switch_page(page("data")).run()
    at.selectbox(key=state.W_DEMO).set_value("pima").run()
    spec = at.session_state[state.DATASET].spec
    # One notice says all the switch did (not one per change).
    notes = [t for t in texts(at) if not t.startswith("**In use for training")]
    assert len(notes) == 1 and notes[0].startswith("Loaded the pima demo."), notes
    assert "New data: cost scale 0.025 →" in notes[0] and "seed (1)" in notes[0]
    at = train_page(at)
    assert at.number_input(key=state.W_COST_SCALE).value == pytest.approx(
        0.2 / spec.total_cost, rel=0.05
    )
    assert at.number_input(key=state.W_SEED).value == 1
    # New sensor costs (Sensors page): the suggestion follows them, once.
    table = at.session_state[state.SPEC_TABLE].copy()
    table["cost"] = table["cost"] * 2
    at.session_state[state.SPEC_TABLE] = table
    at = train_page(at)
    assert any(t.startswith("New costs") for t in texts(at, "info")), texts(at)
    scale = at.number_input(key=state.W_COST_SCALE).value
    assert scale == pytest.approx(0.1 / spec.total_cost, rel=0.05)
    # A value the user sets for these costs stays.
    at.number_input(key=state.W_COST_SCALE).set_value(0.5).run()
    at = train_page(at)
    assert at.number_input(key=state.W_COST_SCALE).value == 0.5
    assert not any(t.startswith("New") for t in texts(at, "info"))
