"""The app in a real browser: Debian's Chromium driven by Playwright.

One Streamlit server and one browser page for the module; the tests run in
order as one user's visit: train the default demo, explore the DAG and click a
node, open the trade-off, download the policy. Screenshots (1280x800) go to
``test-artifacts/``.
"""

from __future__ import annotations

import io
import re

import numpy as np
import pandas as pd
import pytest

from budgetdag_core import load_demo, load_policy, load_policy_skops

from .browser import (
    app_page,
    click_point,
    open_page,
    plotly_traces,
    point_count,
    screenshot,
    wait_idle,
)

pytestmark = pytest.mark.e2e
TRAINING = 600_000  # ms: landsat trains in ~15 s alone, much longer on a busy box


@pytest.fixture(scope="module")
def page():
    with app_page() as page:
        yield page


def shot(page, name: str) -> None:
    screenshot(page, f"browser_{name}")


def test_the_app_opens_on_the_landsat_demo(page):
    page.get_by_role("heading", name="BudgetDAG").wait_for()
    assert "landsat" in page.locator("[data-testid='stSidebar']").inner_text()
    assert page.locator("[data-testid='stException']").count() == 0
    shot(page, "1_data")


def test_train_the_default_demo(page):
    open_page(page, "Train")
    page.get_by_role("button", name="Train", exact=True).click()
    page.get_by_text("Results on the test set").wait_for(timeout=TRAINING)
    wait_idle(page)
    metrics = page.locator("[data-testid='stMetric']").all_inner_texts()
    assert any(m.startswith("Test error") for m in metrics)
    assert "test error" in page.locator("[data-testid='stSidebar']").inner_text()
    shot(page, "2_train")


def test_explore_the_dag_and_click_a_node(page):
    open_page(page, "Explore DAG")
    page.wait_for_selector(".js-plotly-plot .scatterlayer path.point")
    names = plotly_traces(page)
    assert "states" in names and "classify" in names
    assert point_count(page, "states") >= 3
    assert page.get_by_text("Node details appear here").count() == 1
    shot(page, "3_explore")
    click_point(page, "states", 1)  # the node after "start"
    heading = page.locator("h4", has_text=re.compile(r"^Node \d+: "))
    heading.wait_for(timeout=60_000)
    wait_idle(page)
    assert page.get_by_text("examples arrive here").count() == 1
    assert page.get_by_text("What the node's policy does").count() == 1
    assert "clicked node" in plotly_traces(page)  # the figure rings the node
    shot(page, "4_explore_node")


def test_open_the_what_if_page(page):
    open_page(page, "What-if")
    page.wait_for_selector(".js-plotly-plot .scatterlayer path.point")
    assert "path" in plotly_traces(page)
    assert page.get_by_text("stop and classify").count() >= 1
    shot(page, "5_whatif")


def test_open_the_trade_off_page(page):
    open_page(page, "Trade-off")
    page.wait_for_selector(".js-plotly-plot .scatterlayer path.point")
    names = plotly_traces(page)
    assert {"DAG policy", "fixed subsets", "all sensors", "oracle bound"} <= set(names)
    assert point_count(page, "fixed subsets") == 16  # every subset of the 4 bands
    shot(page, "6_tradeoff")


def test_open_the_teaching_page(page):
    open_page(page, "Teaching")
    page.get_by_text("Reducing node").wait_for(timeout=60_000)
    page.get_by_role("button", name="Step", exact=True).click()
    page.get_by_text("Step 2 of 16").wait_for(timeout=60_000)
    wait_idle(page)
    assert "step=1" in page.url and "demo=landsat" in page.url
    shot(page, "7_teaching")


def test_download_the_policy(page, tmp_path):
    open_page(page, "Export")
    shot(page, "8_export")
    files = {}
    for label, name in (
        (r"\.pkl", "policy.pkl"),
        (r"\.skops", "policy.skops"),
        (r"Download traces", "traces.csv"),
    ):
        with page.expect_download() as download:
            page.get_by_role("button", name=re.compile(label)).click()
        files[name] = tmp_path / name
        download.value.save_as(files[name])
    model = load_policy(files["policy.pkl"])
    demo = load_demo("landsat")
    predicted = model.predict(demo.X_test)
    traces = pd.read_csv(io.BytesIO(files["traces.csv"].read_bytes()))
    # The app's own predictions of the test set (its traces) are the file's.
    np.testing.assert_array_equal(predicted, traces["prediction"].to_numpy())
    assert model.spec_.names == ("band1", "band2", "band3", "band4")
    safe = load_policy_skops(files["policy.skops"])
    np.testing.assert_array_equal(safe.predict(demo.X_test), predicted)
