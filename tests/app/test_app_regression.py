"""Regression end to end: a numeric target trains a BudgetDAGRegressor and
every page speaks of its MSE, not of classes."""

from __future__ import annotations

import io
import re

import numpy as np
import pandas as pd
import pytest
from app_helpers import (
    assert_clean,
    download_data,
    finish_jobs,
    page,
    prefill,
    texts,
)

from budgetdag_core import (
    BudgetDAGRegressor,
    dumps_policy_skops,
    load_demo,
    loads_policy_skops,
)
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
    # A target cost is searched for classifiers only: not offered; the
    # library's default ("auto") is the page's.
    (mode,) = [r for r in at.radio if r.key == state.W_COST_MODE]
    assert "Target average cost" not in mode.options
    assert mode.value == "auto"
    mode.set_value("scale").run()
    # The suggested scale weighs costs against the target's variance.
    variance = dataset.y("train").var()
    assert at.number_input(key=state.W_COST_SCALE).value == float(
        f"{0.2 * variance / dataset.spec.total_cost:.2g}"
    )
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


def diabetes_csv(rows: int = 200) -> bytes:
    """The diabetes table as a user would upload it: ten columns and the target."""
    demo = load_demo("diabetes")
    return demo.train.head(rows).to_csv(index=False).encode()


def upload(at, data: bytes, name: str = "diabetes.csv"):
    at.radio(key=state.W_SOURCE).set_value("upload").run()
    at.file_uploader(key=state.W_UPLOAD).set_value((name, data, "text/csv")).run()
    assert_clean(at)
    return at


def test_a_numeric_target_is_offered_as_regression_without_the_rare_class_fix(app):
    at = upload(app.run(), diabetes_csv())
    at.selectbox(key=state.W_LABEL).set_value("progression").run()
    assert at.radio(key=state.W_TASK).value == "regression"
    assert any("looks like **regression**" in c.value for c in at.caption)
    assert not at.error, texts(at, "error")
    # The one warning: the landsat demo is still the table in use.
    assert [t[:22] for t in texts(at, "warning")] == ["**In use for training:"]
    assert any("ready for training" in t for t in texts(at, "success"))
    fix_keys = [b.key for b in at.button if b.key and b.key.startswith(state.W_FIX)]
    assert fix_keys == []
    # Read as classes instead: the class checks and their fix come back.
    at.radio(key=state.W_TASK).set_value("classification").run()
    assert any("rare_classes" in (b.key or "") for b in at.button)
    at.radio(key=state.W_TASK).set_value("regression").run()
    at.button(key=state.W_USE_UPLOAD).click().run()
    assert_clean(at)
    dataset = at.session_state[state.DATASET]
    assert dataset.task == "regression" and dataset.label == "progression"
    assert len(dataset.train) + len(dataset.test) == 200
    assert {m.label for m in at.metric} >= {"Target range"}
    # The sensors page and training follow: a regressor with MSE.
    go(at, "sensors")
    go(at, "train")
    assert at.selectbox(key=state.W_CLASSIFIER).value == "ridge"


@pytest.mark.parametrize(
    "name", ["explore", "whatif", "tradeoff", "teaching", "export"]
)
def test_every_page_opens_on_a_regression_without_class_words(
    app, diabetes, diabetes_run, name
):
    at = go(prefill(app, diabetes, diabetes_run).run(), name)
    assert not at.error, texts(at, "error")
    words = " ".join(
        texts(at) + [m.value for m in at.markdown] + [c.value for c in at.caption]
    )
    # No classifier's words (a node's policy is a classifier of the actions;
    # "classification" is said where it differs).
    words = words.replace("The node's policy is a classifier", "")
    wrong = re.findall(
        r"classifiers?\b|classif(?:y|ies)|class priors|class balance|error rate",
        words,
        flags=re.IGNORECASE,
    )
    assert not wrong, (wrong, words)


def test_explore_shows_a_regressor_nodes_mse_and_targets(app, diabetes, diabetes_run):
    at = go(prefill(app, diabetes, diabetes_run).run(), "explore")
    at.radio(key=state.W_DAG_COLOR).set_value("error").run()
    assert_clean(at)
    at.selectbox(key=state.W_DAG_NODE).set_value(1).run()
    assert_clean(at)
    metrics = {m.label: m.value for m in at.metric}
    assert "MSE if all stopped" in metrics and "Error if all stopped" not in metrics
    # The exam alone: the policy's node 1, every example arrives.
    X, y = diabetes.X("test", diabetes.spec), diabetes.y("test")
    from budgetdag_core.explain import node_details

    details = node_details(diabetes_run.model, X, y, 1)
    assert metrics["MSE if all stopped"] == f"{details['error_if_stopped']:,.4g}"
    tables = [d.value for d in at.dataframe]
    targets = next(t for t in tables if "predicted_mean" in t.columns)
    assert targets["max"].iloc[0] <= y.max()
    paths = next(t for t in tables if "sequence" in t.columns)
    # The sequences' MSE, weighted by their examples, is the policy's.
    mse = (paths["error"] * paths["examples"]).sum() / paths["examples"].sum()
    assert mse == pytest.approx(diabetes_run.metrics["mse"])
    states = next(t for t in tables if "stop_share" in t.columns)
    assert states["error_rate"].max() > 100  # an MSE in squared units, no rate


def spec_cost(run) -> float:
    """What every sensor of the run's spec costs together."""
    return float(sum(run.spec.costs.values()))


def test_the_tradeoff_curve_of_a_regressor_with_its_baselines(
    app, diabetes, diabetes_run
):
    at = go(prefill(app, diabetes, diabetes_run).run(), "tradeoff")
    assert any("test MSE" in m.value for m in at.markdown)
    # The trained model's regressor bank is reused by the sweep.
    assert any(
        "regressor bank of the current model is reused" in c.value for c in at.caption
    )
    at.slider(key=state.W_TRADE_POINTS).set_value(4).run()
    at.button(key=state.W_TRADE_RUN).click().run()
    finish_jobs(at)
    assert_clean(at)
    assert not at.error, texts(at, "error")
    result = at.session_state[state.SWEEP]["result"]
    frame = result.frame
    assert {
        "dag",
        "fixed",
        "hull",
        "hull_oof",
        "no_sensors",
        "all_sensors",
        "oracle",
        "cascade",
    } <= set(frame["method"])
    assert set(frame["split"]) == {"train", "test"}
    # The same baselines on both splits; the oracle bounds every fixed subset
    # and the policy, the cascade runs from no sensor to every sensor.
    for split in ("train", "test"):
        part = frame[frame["split"] == split]
        assert {"oracle", "cascade", "hull", "fixed"} <= set(part["method"])
        oracle = part[part["method"] == "oracle"]
        assert oracle["error"].min() <= part["error"].min() + 1e-9
        cascade = part[part["method"] == "cascade"]
        assert cascade["avg_cost"].min() == 0.0
        assert cascade["avg_cost"].max() == pytest.approx(spec_cost(diabetes_run))
    # The current model is a point of its curve (its own scale), the bank shared.
    assert diabetes_run.model.cost_scale in list(result.cost_scales)
    assert all(m.bank_ is result.bank for m in result.models)
    assert result.bank is diabetes_run.model.bank_
    test = frame[(frame["split"] == "test") & (frame["method"] == "dag")]
    zero = test[test["cost_scale"] == 0.0].iloc[0]
    top = test.sort_values("cost_scale").iloc[-1]
    # Cost falls as the scale grows; the error columns hold MSEs.
    assert top["avg_cost"] <= zero["avg_cost"]
    fixed = frame[(frame["split"] == "test") & (frame["method"] == "fixed")]
    states = diabetes_run.states.set_index("state")
    for row in fixed.itertuples():
        assert row.error == pytest.approx(states.loc[row.state, "mse"])
    # The hull is below every fixed subset; the out-of-fold one on the
    # training rows' bank losses.
    hull = frame[(frame["split"] == "test") & (frame["method"] == "hull")]
    assert hull["error"].min() == pytest.approx(fixed["error"].min())
    # The figure says MSE; a curve model for a budget is picked from it.
    chart = at.get("plotly_chart")[0].proto.spec
    assert "mean squared error" in chart and "error rate" not in chart
    # Its cascade is named for what it stops on, not class confidence.
    assert "expected-error cascade" in chart and "confidence cascade" not in chart
    assert any("test MSE" in m.value for m in at.markdown)
    assert at.button(key=state.W_TRADE_FIT_BUDGET).disabled
    if not at.button(key=state.W_TRADE_USE_CURVE).disabled:
        at.button(key=state.W_TRADE_USE_CURVE).click().run()
        assert_clean(at)
        assert at.session_state[state.RUN].task == "regression"


def test_export_downloads_and_reloads_a_regressor(app, diabetes, diabetes_run, media):
    at = go(prefill(app, diabetes, diabetes_run).run(), "export")
    data = download_data(at, media, f"{state.W_DOWNLOAD}skops")
    model = loads_policy_skops(data)
    X, y = diabetes.X("test", diabetes.spec), diabetes.y("test")
    assert isinstance(model, BudgetDAGRegressor)
    np.testing.assert_array_equal(model.predict(X), diabetes_run.model.predict(X))
    traces = pd.read_csv(
        io.BytesIO(download_data(at, media, f"{state.W_DOWNLOAD}traces"))
    )
    assert list(traces.columns[:4]) == ["row", "prediction", "target", "error"]
    np.testing.assert_allclose(traces["error"], traces["prediction"] - y.to_numpy())
    assert float((traces["error"] ** 2).mean()) == pytest.approx(
        diabetes_run.metrics["mse"]
    )
    # The file loads back in the app, as a regressor evaluated on this data.
    uploader = at.file_uploader(key=state.W_SKOPS_FILE)
    uploader.set_value(("diabetes.skops", data, "application/octet-stream")).run()
    assert any("a regressor (predicts a number)" in t for t in texts(at, "success"))
    at.button(key=state.W_USE_LOADED).click().run()
    assert_clean(at)
    run = at.session_state[state.RUN]
    assert run.source == "loaded from diabetes.skops"
    assert run.metrics["mse"] == pytest.approx(diabetes_run.metrics["mse"])


def test_a_regressor_loaded_on_classes_is_not_evaluated(app, diabetes_run):
    from ui.training import run_from_model

    pima = demo_dataset(load_demo("pima"))
    run = run_from_model(diabetes_run.model, pima, "loaded from d.skops")
    assert run.metrics is None and "regression" in run.note
    at = go(prefill(app, pima).run(), "export")
    data = dumps_policy_skops(diabetes_run.model)
    uploader = at.file_uploader(key=state.W_SKOPS_FILE)
    uploader.set_value(("d.skops", data, "application/octet-stream")).run()
    at.button(key=state.W_USE_LOADED).click().run()
    assert_clean(at)
    assert at.session_state[state.RUN].metrics is None


def test_teaching_replays_a_regressors_graph_reduce(app, diabetes, diabetes_run):
    from budgetdag_core.teaching import graph_reduce_steps

    at = go(prefill(app, diabetes, diabetes_run).run(), "teaching")
    X, y = diabetes.X("train", diabetes.spec), diabetes.y("train")
    steps = graph_reduce_steps(diabetes_run.model, X, y, rows=6, random_state=0)
    assert len(steps) == 16 and steps[-1].state == 0
    for _ in range(2):
        at.button(key=state.W_TEACH_STEP).click().run()
        assert_clean(at)
    assert not at.error, texts(at, "error")
    costs = at.dataframe[0].value
    np.testing.assert_allclose(costs["cost-to-go"], steps[2].costs["cost_to_go"])
    # The stop column is the squared error of the state's out-of-fold prediction.
    oof = diabetes_run.model.bank_.oof_losses(y.to_numpy(dtype=float), "squared")
    rows = [X.index.get_loc(r) for r in steps[2].costs.index]
    np.testing.assert_allclose(steps[2].costs["stop"], oof[rows, steps[2].state])


def test_whatif_walks_one_example_to_a_predicted_number(app, diabetes, diabetes_run):
    from budgetdag_core import path_of

    at = go(prefill(app, diabetes, diabetes_run).run(), "whatif")
    X, y = diabetes.X("test", diabetes.spec), diabetes.y("test")
    result = path_of(diabetes_run.model, X.iloc[0])
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Prediction"] == f"{result.prediction:.4g}"
    assert any(f"**True value:** {y.iloc[0]:.4g}" in m.value for m in at.markdown), [
        m.value for m in at.markdown
    ]
    table = next(d.value for d in at.dataframe if "decision" in d.value.columns)
    assert table["decision"].iloc[-1] == "stop and predict"
    assert "confidence" not in table.columns
    assert table["predicts now"].iloc[-1] == f"{result.prediction:.4g}"
    # The purchases by thirds of the target, the example's own third first.
    box = at.selectbox(key=state.W_WHATIF_CLASS)
    assert box.options[1:] == ["lowest third", "middle third", "highest third"]
    box.set_value("highest third").run()
    assert_clean(at)
    assert any("37 examples of the highest third" in c.value for c in at.caption)


def test_a_link_to_the_regression_demo_keeps_its_regressor(app):
    from ui import links

    app.query_params["demo"] = "diabetes"
    app.query_params["classifier"] = "boosting"
    at = go(app, "train")
    assert not at.error, texts(at, "error")
    assert at.session_state[state.DATASET].task == "regression"
    assert at.selectbox(key=state.W_CLASSIFIER).value == "boosting"
    encoded = links.encode(
        "diabetes", None, None, {state.W_CLASSIFIER: "ridge", state.W_COST_SCALE: 3.5}
    )
    assert links.decode(encoded) == (
        {"demo": "diabetes", state.W_CLASSIFIER: "ridge", state.W_COST_SCALE: 3.5},
        [],
    )


def test_a_many_sensor_regressors_curve_has_the_training_baselines():
    """Beyond 12 sensors (an any-subset bank, a DAG of one-sensor additions)
    the curve has the same baselines as a classifier's: the out-of-fold
    training split, the hull chosen on it and the cascade, not the test
    split alone."""
    from sklearn.datasets import load_diabetes

    from budgetdag_core import Dataset, SensorSpec
    from ui import sweep

    data = load_diabetes(as_frame=True)
    X = pd.concat([data.data, data.data.add_suffix("_x") * 0.5], axis=1).iloc[:160]
    table = X.assign(target=data.target.iloc[:160].to_numpy())
    dataset = Dataset(
        "wide_diabetes", table.iloc[:120], table.iloc[120:], "target",
        SensorSpec.per_column(list(X.columns)), task="regression",
    )  # fmt: skip
    settings = TrainSettings(task="regression", cost_scale=120.0, cv=3, random_state=0)
    run = train(dataset, dataset.spec, settings)
    assert run.model.fit_plan(run.model.spec_).strategies()  # many sensors
    result = sweep.compute_sweep(dataset, run.spec, run.params, 3, previous=run)
    frame = result.frame
    train_rows = frame[frame["split"] == "train"]
    assert {"dag", "fixed", "hull", "cascade"} <= set(train_rows["method"])
    assert "hull_oof" in set(frame["method"])
    assert train_rows[train_rows["method"] == "cascade"]["avg_cost"].min() == 0.0
