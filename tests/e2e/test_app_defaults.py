"""Uploads a newcomer makes, in a real browser (issue 38, items 1 and 2).

One Streamlit server and one Chromium page: a 13-column CSV (one sensor per
column, more than a full DAG allows) trains the library's default from the
first screen, and a CSV whose names share mean / error / worst (scikit-learn's
breast cancer table) is suggested that grouping, said on the Data page's
one-click button and the Sensors page. Screenshots (1280x800) go to
``test-artifacts/defaults_*.png``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

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
LINK = "/?cv=3"
THIRTEEN = [
    "age", "height", "weight", "pulse", "glucose", "insulin", "sodium",
    "potassium", "calcium", "iron", "zinc", "copper", "lead",
]  # fmt: skip


@pytest.fixture(scope="module")
def page():
    with app_page(LINK, log_name="defaults") as page:
        yield page


@pytest.fixture(scope="module")
def csvs(tmp_path_factory):
    """The two uploads: 13 unrelated columns, and the breast cancer table."""
    from sklearn.datasets import load_breast_cancer

    folder = tmp_path_factory.mktemp("defaults")
    rng = np.random.default_rng(1)
    frame = pd.DataFrame(rng.normal(size=(400, 13)).round(3), columns=THIRTEEN)
    label = frame["age"] + frame["glucose"] + 0.3 * rng.normal(size=400) > 0
    frame["outcome"] = np.where(label, "yes", "no")
    frame.to_csv(folder / "thirteen.csv", index=False)
    cancer = load_breast_cancer(as_frame=True).frame.round(4)
    cancer.to_csv(folder / "cancer.csv", index=False)
    return folder


def shot(page, name: str) -> None:
    screenshot(page, f"defaults_{name}", full_page=True)


def upload(page, path) -> None:
    """Upload ``path`` on the Data page and use it for training."""
    # The Data page is the home page: its title is the app's name.
    page.locator("[data-testid='stSidebarNav'] a", has_text="Data").first.click()
    page.wait_for_selector("h1:has-text('BudgetDAG')", timeout=LONG)
    wait_idle(page, LONG)
    page.get_by_text("Upload a CSV").click()
    wait_idle(page, LONG)
    page.locator(
        "[data-testid='stFileUploader'] input[type='file']"
    ).first.set_input_files(str(path))
    page.get_by_role("button", name="Use this table for training").wait_for(
        timeout=LONG
    )
    wait_idle(page, LONG)
    page.get_by_role("button", name="Use this table for training").click()
    wait_idle(page, LONG)
    switch = page.get_by_role("button", name=f"Switch to {path.name}")
    if switch.count():  # a model of the previous data: asked first
        switch.click()
        wait_idle(page, LONG)
    no_exception(page)


def test_a_13_column_upload_trains_the_librarys_default(page, csvs):
    upload(page, csvs / "thirteen.csv")
    text = main_text(page)
    # The one-click button says what it trains: no n_subsets, no 2^13.
    assert "Trains on 13 sensors (one sensor per column, suggested)" in text
    assert "a chain of 14 states or a routed DAG of at most 621 states" in text
    assert "n_subsets" not in text and "2^13" not in text
    shot(page, "thirteen_data")
    page.get_by_role("button", name="Train a model on thirteen.csv").click()
    page.wait_for_selector("h1:has-text('Train')", timeout=LONG)
    page.get_by_text("Results on the test set").wait_for(timeout=LONG)
    wait_idle(page, LONG)
    no_exception(page)
    text = main_text(page)
    assert any(f"Kept the {s}" in text for s in ("chain", "routed DAG"))
    assert "Alg. 2" not in text.split("Results on the test set")[1]
    assert "Trained in" in sidebar(page) and "on thirteen.csv" in sidebar(page)
    shot(page, "thirteen_trained")


def test_mean_error_worst_names_are_suggested_that_grouping(page, csvs):
    upload(page, csvs / "cancer.csv")
    text = main_text(page)
    assert (
        "Trains on 3 sensors (grouped by a word the names share (mean, error, "
        "worst), suggested)" in text
    )
    # The model of the previous data went, and every word about it.
    assert "Trained in" not in sidebar(page)
    assert "**Model:** not trained yet" in sidebar(page) or (
        "Model: not trained yet" in sidebar(page)
    )
    shot(page, "cancer_data")
    open_page(page, "Sensors", LONG)
    text = main_text(page)
    assert "Suggested for this table: grouped by a word the names share" in text
    assert "3 sensors, 8 DAG states" in text
    no_exception(page)
    shot(page, "cancer_sensors")
