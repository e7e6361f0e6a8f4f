"""Regression end to end: a numeric target trains a BudgetDAGRegressor and
every page speaks of its MSE, not of classes."""

from __future__ import annotations

import pytest
from app_helpers import assert_clean, finish_jobs, page, prefill, texts

from budgetdag_core import BudgetDAGRegressor, load_demo
from ui import state
from ui.data import demo_dataset
from ui.training import TrainSettings, train


@pytest.fixture(scope="module")
def diabetes():
    return demo_dataset(load_demo("diabetes"))


@pytest.fixture(scope="module")
def diabetes_run(diabetes):
    """A regression trained with the app's defaults for it, 3 folds."""
    settings = TrainSettings(
        task="regression", classifier="ridge", cost_scale=120.0, cv=3, random_state=0
    )
    return train(diabetes, diabetes.spec, settings)


def go(at, name):
    at.switch_page(page(name)).run()
    assert_clean(at)
    return at


def test_the_diabetes_demo_trains_a_regressor_from_the_train_page(app):
    at = app.run()
    at.selectbox(key=state.W_DEMO).set_value("diabetes").run()
    assert_clean(at)
    dataset = at.session_state[state.DATASET]
    assert dataset.name == "diabetes" and dataset.task == "regression"
    go(at, "train")
    assert at.selectbox(key=state.W_CLASSIFIER).value == "ridge"
    assert at.selectbox(key=state.W_CLASSIFIER).label.startswith("Regressor")
    # The suggested scale weighs costs against the target's variance.
    variance = dataset.y("train").var()
    assert at.number_input(key=state.W_COST_SCALE).value == float(
        f"{0.2 * variance / dataset.spec.total_cost:.2g}"
    )
    # A target cost is searched for classifiers only: not offered.
    assert state.W_COST_MODE not in [r.key for r in at.radio]
    at.number_input(key=state.W_CV).set_value(3).run()
    at.button(key=state.W_TRAIN).click().run()
    finish_jobs(at)
    assert_clean(at)
    assert not at.error, texts(at, "error")
    run = at.session_state[state.RUN]
    assert isinstance(run.model, BudgetDAGRegressor) and run.task == "regression"
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Test MSE"] == f"{run.metrics['mse']:,.4g}"
    assert "No-sensor MSE" in metrics and "Test error" not in metrics
    table = at.dataframe[0].value
    assert list(table.index) == [
        "BudgetDAG policy",
        "All sensors",
        "No sensor (the mean)",
    ]
    assert table.loc["BudgetDAG policy", "test MSE"] == pytest.approx(
        run.metrics["mse"]
    )
    # Beats predicting the mean, and pays less than every sensor.
    assert run.metrics["mse"] < table.loc["No sensor (the mean)", "test MSE"]
    assert run.metrics["avg_cost"] < dataset.spec.total_cost
    assert "%" not in metrics["Test MSE"]
