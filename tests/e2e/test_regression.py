"""A regression table in a real browser (issue 56): uploaded, offered as
regression, trained, explored, its trade-off curve traced, one example
walked on What-if, exported and the session reloaded.

One Streamlit server and one Chromium page; the tests run in order as one
visit. The table is 200 rows of scikit-learn's diabetes data (ten columns,
a numeric target): a ridge regressor per state fits in about a second.
Screenshots (1280x800) go to ``test-artifacts/regression_*.png``.
"""

from __future__ import annotations

import io
import re

import pandas as pd
import pytest

from budgetdag_core import load_demo, loads_policy_skops

from .browser import (
    LONG,
    app_page,
    main_text,
    no_exception,
    open_page,
    screenshot,
    sidebar,
    wait_idle,
)

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    """diabetes.csv: 200 patients, four columns (one sensor each: 16 states)
    and ``progression`` (a number)."""
    path = tmp_path_factory.mktemp("regression") / "diabetes.csv"
    columns = ["bmi", "bp", "ltg", "glu", "progression"]
    load_demo("diabetes").train.head(200)[columns].to_csv(path, index=False)
    return path


@pytest.fixture(scope="module")
def page():
    with app_page(log_name="regression") as page:
        yield page


def shot(page, name: str) -> None:
    screenshot(page, f"regression_{name}")


def test_a_numeric_target_is_offered_as_regression(page, table):
    page.get_by_text("Upload a CSV").click()
    wait_idle(page, LONG)
    page.locator(
        "[data-testid='stFileUploader'] input[type='file']"
    ).first.set_input_files(str(table))
    use = page.get_by_role("button", name="Use this table for training")
    use.wait_for(timeout=LONG)
    wait_idle(page, LONG)
    text = main_text(page)
    assert "`progression`" not in text  # markdown code is drawn, not typed
    assert "progression looks like regression" in text, text
    task = page.locator(".st-key-w_task")
    assert task.get_by_role("radio", name="Regression: predict a number").is_checked()
    # Read as a number: no class checks, no fix that drops rows.
    assert page.get_by_role("button", name=re.compile("rare classes")).count() == 0
    assert "The table is ready for training." in text
    shot(page, "1_data")
    use.click()
    wait_idle(page, LONG)
    no_exception(page)
    assert "diabetes.csv (uploaded table)" in main_text(page)
    assert "Target range" in main_text(page)


def test_one_click_trains_a_regressor(page):
    page.get_by_role("button", name="Train a model on diabetes.csv").click()
    page.wait_for_selector("h1:has-text('Train')", timeout=LONG)
    page.get_by_text("Results on the test set").wait_for(timeout=LONG)
    wait_idle(page, LONG)
    no_exception(page)
    text = main_text(page)
    assert "Test MSE" in text and "No-sensor MSE" in text, text
    assert "Test error" not in text
    assert "test MSE" in sidebar(page)
    shot(page, "2_trained")


def test_explore_colours_the_nodes_by_their_mse(page):
    open_page(page, "Explore DAG")
    page.wait_for_selector(".js-plotly-plot .scatterlayer path.point", timeout=LONG)
    page.get_by_text("MSE when stopping").click()
    wait_idle(page, LONG)
    no_exception(page)
    assert "predicts the number" in main_text(page)
    shot(page, "3_explore")


def test_the_trade_off_curve_is_traced_in_mse(page):
    open_page(page, "Trade-off")
    page.get_by_role("button", name="Trace the curve").click()
    page.get_by_role("button", name="Recompute").wait_for(timeout=LONG)
    wait_idle(page, LONG)
    no_exception(page)
    title = page.evaluate(
        "() => document.querySelector('.js-plotly-plot').layout.yaxis.title.text"
    )
    assert title == "mean squared error"
    names = page.evaluate(
        "() => document.querySelector('.js-plotly-plot').data.map(t => t.name)"
    )
    assert any(n and n.startswith("DAG policy") for n in names), names
    assert "test MSE" in main_text(page)
    shot(page, "4_tradeoff")


def test_what_if_predicts_a_number(page):
    open_page(page, "What-if")
    page.wait_for_selector("text=stop and predict", state="attached", timeout=LONG)
    text = main_text(page)
    assert "True value:" in text and "(error " in text
    assert "lowest third" not in text or "Examples" in text
    no_exception(page)
    shot(page, "5_whatif")


def test_export_writes_the_regressor_and_its_traces(page, tmp_path):
    open_page(page, "Export")
    skops = page.get_by_role("button", name=re.compile(r"\.skops \(safe\)"))
    skops.wait_for(timeout=LONG)
    with page.expect_download(timeout=LONG) as download:
        skops.click()
    model = loads_policy_skops(download.value.path().read_bytes())
    assert type(model).__name__ == "BudgetDAGRegressor"
    with page.expect_download(timeout=LONG) as download:
        page.get_by_role("button", name="Download traces").click()
    traces = pd.read_csv(io.BytesIO(download.value.path().read_bytes()))
    assert list(traces.columns[:4]) == ["row", "prediction", "target", "error"]
    no_exception(page)


def test_a_reload_brings_the_regression_back(page):
    page.reload()
    wait_idle(page, LONG)
    page.get_by_text("Welcome back").first.wait_for(timeout=LONG)
    assert "diabetes.csv" in sidebar(page) and "test MSE" in sidebar(page)
    open_page(page, "Trade-off")
    page.wait_for_selector(".js-plotly-plot", timeout=LONG)
    assert "test MSE" in main_text(page)
    no_exception(page)
    shot(page, "6_reloaded")
