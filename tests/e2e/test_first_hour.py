"""A newcomer's first hour in a real browser (issue 31, items 3 to 7).

One Streamlit server and one Chromium page; the tests run in order as one
visit on the pima demo (a link with 3 folds and degree 1: fits take a second):
one click from the first screen to a trained model, the What-if step table,
the trade-off button, Export's buttons at once with files built when clicked,
Teaching replaying a model fitted for a budget, a custom sensor made in the
page, new data asked for first and its cost settings reset with a notice,
a loaded policy described in the sidebar, and an unknown session address
named. Screenshots (1280x800) go to ``test-artifacts/first_hour_*.png``.
"""

from __future__ import annotations

import io
import re
import time

import pandas as pd
import pytest

from ui import state

from .browser import (
    ARTIFACTS,
    LONG,
    app_page,
    main_text,
    no_exception,
    open_page,
    screenshot,
    server_of,
    sidebar,
    wait_idle,
)

pytestmark = pytest.mark.e2e
LINK = "/?demo=pima&cv=3&degree=1"


@pytest.fixture(scope="module")
def page():
    with app_page(LINK, log_name="first-hour") as page:
        yield page


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """Files downloaded on the way, for later steps."""
    return {"dir": tmp_path_factory.mktemp("first_hour")}


def shot(page, name: str) -> None:
    screenshot(page, f"first_hour_{name}")


def widget(page, key: str):
    """The element of the widget (or container) with this Streamlit key."""
    return page.locator(f".st-key-{key}")


def pick(page, key: str, option: str) -> None:
    """Pick ``option`` in the selectbox or multiselect with this key."""
    combo = widget(page, key).locator("input[role='combobox']")
    combo.click()
    combo.fill(option)
    page.get_by_role("option", name=option, exact=True).click()
    wait_idle(page)


def open_data_page(page) -> None:
    page.locator("[data-testid='stSidebarNav'] a", has_text="Data").click()
    widget(page, state.W_DEMO).wait_for()
    wait_idle(page)


def test_the_first_screen_trains_in_one_click(page):
    page.get_by_role("heading", name="BudgetDAG").wait_for()
    assert "pima" in sidebar(page) and "not trained yet" in sidebar(page)
    shot(page, "1_first_screen")
    page.get_by_role("button", name="Train a model on pima").click()
    # The one click lands on Train, where the result appears.
    page.wait_for_selector("h1:has-text('Train')", timeout=LONG)
    page.get_by_text("Results on the test set").wait_for(timeout=LONG)
    wait_idle(page, LONG)
    no_exception(page)
    assert "test error" in sidebar(page)
    # A change that shows as zero has no arrow (and no colour).
    for metric in page.locator("[data-testid='stMetric']").all():
        delta = metric.locator("[data-testid='stMetricDelta']")
        if delta.count() and re.search(r"[+-]0\.0\b|same as", delta.inner_text()):
            assert delta.locator("svg").count() == 0, delta.inner_text()
    page.locator("[data-testid='stMetric']").first.scroll_into_view_if_needed()
    shot(page, "2_trained")


def test_the_step_table_shows_the_prediction_after_each_step(page):
    open_page(page, "What-if")
    # The table's cells are drawn on a canvas: their text is in hidden cells.
    page.wait_for_selector("text=stop and classify", state="attached", timeout=LONG)
    headers = page.locator(
        "[data-testid='stDataFrame']", has_text="stop and classify"
    ).text_content()
    assert "cost so far" in headers and "predicts now" in headers, headers
    no_exception(page)
    page.get_by_text("bought, in order").scroll_into_view_if_needed()
    shot(page, "3_whatif")


def test_the_trade_off_button_leaves_no_tooltip(page):
    open_page(page, "Trade-off")
    button = page.get_by_role("button", name="Trace the curve")
    button.hover()
    page.wait_for_timeout(800)
    assert page.locator("[data-testid='stTooltipContent']").count() == 0
    assert "only the cost scale changes" in main_text(page)  # said in a caption


def test_export_buttons_at_once_and_files_when_clicked(page, files):
    started = time.monotonic()
    open_page(page, "Export")
    skops = page.get_by_role("button", name=re.compile(r"\.skops \(safe\)"))
    skops.wait_for(timeout=5_000)
    assert time.monotonic() - started < 20  # no file is built before it is asked
    shot(page, "4_export")
    with page.expect_download(timeout=LONG) as download:
        skops.click()
    path = files["dir"] / "pima.skops"
    download.value.save_as(path)
    files["skops"] = path
    with page.expect_download(timeout=LONG) as download:
        page.get_by_role("button", name="Download traces").click()
    traces = pd.read_csv(io.BytesIO(download.value.path().read_bytes()))
    assert traces.columns[0] == "row"
    assert traces["row"].tolist() == list(range(len(traces)))
    page.get_by_text("Use the policy in Python").click()
    snippet = page.locator("[data-testid='stCode']").first.inner_text()
    assert "mapping column -> value" in snippet and "model.spec_.groups" in snippet
    no_exception(page)


def test_teaching_replays_a_model_fitted_for_a_budget(page):
    open_page(page, "Train")
    widget(page, state.W_COST_MODE).get_by_text("Target average cost").click()
    wait_idle(page)
    page.get_by_role("button", name="Train", exact=True).click()
    page.locator("[data-testid='stSidebar']").get_by_text(
        re.compile("Fitted for|Trained in")
    ).first.wait_for(timeout=LONG)
    wait_idle(page, LONG)
    open_page(page, "Teaching", LONG)
    page.get_by_text("Reducing node").wait_for(timeout=LONG)
    wait_idle(page, LONG)
    no_exception(page)
    assert "pass the training data" not in main_text(page)
    shot(page, "5_teaching")
    # The root, reduced last, has the most actions: stop or buy any sensor.
    while page.get_by_text("Step 8 of 8").count() == 0:
        page.get_by_role("button", name="Step", exact=True).click()
        wait_idle(page)
    heading = page.get_by_text(re.compile(r"Action costs of \d+ training examples"))
    heading.scroll_into_view_if_needed()
    table = page.locator("[data-testid='stDataFrame']", has_text="policy picks")
    headers = table.text_content()
    assert "stop" in headers and "cost-to-go" in headers, headers
    # Every column in sight: the table scrolls no part of itself away.
    hidden = table.evaluate(
        "t => { const s = t.querySelector('.dvn-scroller');"
        " return s.scrollWidth - s.clientWidth; }"
    )
    assert hidden <= 1, f"{hidden} px of the action-cost table scrolled away"
    shot(page, "5b_teaching_root")


def test_a_custom_sensor_is_made_in_the_page(page):
    open_page(page, "Sensors")
    for column in ("glucose", "insulin"):
        pick(page, state.W_NEW_SENSOR_COLUMNS, column)
    page.keyboard.press("Escape")
    name = widget(page, state.W_NEW_SENSOR).locator("input")
    name.fill("lab")
    name.press("Enter")
    wait_idle(page)
    page.get_by_role("button", name="Make sensor").click()
    page.get_by_text("Sensor 'lab' now reveals 2 column(s).").wait_for()
    wait_idle(page)
    text = main_text(page)
    assert "2 sensors, 4 DAG states" in text, text
    no_exception(page)
    box = widget(page, state.W_NEW_SENSOR_BOX)
    box.scroll_into_view_if_needed()
    box.screenshot(path=str(ARTIFACTS / "first_hour_6_custom_sensor.png"))


def test_new_data_asks_first_then_resets_its_cost_settings(page):
    open_page(page, "Train")
    widget(page, state.W_COST_MODE).get_by_text("Cost scale", exact=True).click()
    wait_idle(page)
    seed = widget(page, state.W_SEED).locator("input")
    seed.fill("3")
    seed.press("Enter")
    wait_idle(page)
    open_data_page(page)
    pick(page, state.W_DEMO, "Toy")
    question = page.get_by_text(re.compile("Switching to the toy demo drops the model"))
    question.wait_for()
    shot(page, "7_asks_first")
    page.get_by_role("button", name="Keep pima and its model").click()
    wait_idle(page)
    assert question.count() == 0 and "pima" in sidebar(page)
    assert "test error" in sidebar(page)
    assert widget(page, state.W_DEMO).locator("input").input_value() == "Pima"
    pick(page, state.W_DEMO, "Toy")
    page.get_by_role("button", name="Switch to the toy demo").click()
    wait_idle(page)
    notice = page.get_by_text(re.compile(r"New data: cost scale .* the seed \(3\)"))
    notice.wait_for()
    assert "toy" in sidebar(page) and "not trained yet" in sidebar(page)
    no_exception(page)
    shot(page, "8_new_data_notice")
    open_page(page, "Train")
    assert widget(page, state.W_SEED).locator("input").input_value() == "3"
    scale = float(widget(page, state.W_COST_SCALE).locator("input").input_value())
    suggested = re.search(r"Suggested for these costs: ([\d.e-]+)", main_text(page))
    assert suggested and scale == float(suggested.group(1))


def test_the_sidebar_describes_a_loaded_policy(page, files):
    open_page(page, "Export")
    page.locator("[data-testid='stFileUploader']", has_text=".skops").locator(
        "input[type='file']"
    ).set_input_files(str(files["skops"]))
    use = page.get_by_role("button", name="Use this policy in the app")
    use.wait_for(timeout=LONG)
    use.click()
    wait_idle(page, LONG)
    text = sidebar(page)
    # pima's 3 sensors (8 states), not the toy data's sensors.
    assert "loaded from pima.skops" in text and "3 sensors · 8 DAG states" in text
    no_exception(page)
    shot(page, "9_loaded_policy")


def test_an_unknown_session_address_says_so(page):
    # Another visitor (a browser context of its own) with an address whose
    # session this server does not keep: expired, foreign or mistyped.
    other = page.context.browser.new_page(viewport=page.viewport_size)
    try:
        other.goto(f"{server_of(page)}/?session={'A' * 32}")
        wait_idle(other, LONG)
        other.get_by_text("not kept on this server").wait_for()
        no_exception(other)
        shot(other, "10_unknown_session")
    finally:
        other.close()
