"""What-if's stepper in a real browser (issue 56, item 5).

The toy demo (three one-column sensors) trained from a link, then on What-if:
buy the policy's next sensor, buy one of our own instead of the policy's
next, edit a value, apply it and step on with the new values, then go back
and start over.
A screenshot (1280x800) goes to ``test-artifacts/whatif_stepper.png``.
"""

from __future__ import annotations

import re

import pytest

from .browser import (
    LONG,
    app_page,
    main_text,
    no_exception,
    open_page,
    screenshot,
    wait_idle,
)

pytestmark = pytest.mark.e2e
LINK = "/?demo=toy&cost_scale=0.03&cv=3"
ROW_PX = 35  # height of a row (and of the header) of Streamlit's tables
BUY_NEXT = ".st-key-w_whatif_buy_next button"  # the policy's pick (ui.state)


@pytest.fixture(scope="module")
def page():
    with app_page(LINK, log_name="stepper") as page:
        open_page(page, "Train")
        page.get_by_role("button", name="Train", exact=True).click()
        page.get_by_text("Results on the test set").wait_for(timeout=LONG)
        wait_idle(page, LONG)
        open_page(page, "What-if", LONG)
        page.get_by_text("Step by step").wait_for(timeout=LONG)
        yield page


def bought(page) -> str:
    """The stepper's line of sensors bought."""
    text = main_text(page)
    return next(line for line in text.splitlines() if line.startswith("Bought:"))


def edit_value(page, row: int, value: float) -> None:
    """Type ``value`` into the *value* cell of ``row`` of the sensor table as
    a user does, without waiting for the page: a click in the table (its
    first click only focuses it), a double click on the cell to open its
    editor, the old value selected and typed over."""
    table = page.locator("[data-testid='stDataFrame']").first
    box = table.bounding_box()
    y = box["y"] + ROW_PX * (row + 1.5)
    page.mouse.click(box["x"] + 40, y)  # the read-only column: focus only
    page.wait_for_timeout(200)
    page.mouse.dblclick(box["x"] + box["width"] * 0.5, y)  # the value column
    page.wait_for_timeout(300)
    page.keyboard.press("ControlOrMeta+a")
    page.keyboard.type(str(value))
    page.keyboard.press("Enter")
    page.wait_for_timeout(200)


def apply(page) -> None:
    page.get_by_role("button", name="Apply the values").click()
    wait_idle(page, LONG)


def test_buy_the_policys_pick_then_one_of_ours(page):
    assert bought(page).startswith("Bought: nothing yet")
    buy = page.locator(BUY_NEXT)
    first = re.search(r"Buy (\w+)", buy.inner_text()).group(1)
    buy.click()
    wait_idle(page, LONG)
    assert bought(page).startswith(f"Bought: {first} (policy)")
    assert "Predicts now:" in main_text(page)
    # One of ours: the first sensor the box offers.
    box = page.get_by_label("Or buy another sensor")
    mine = box.input_value() if box.count() else ""
    page.get_by_role("button", name="Buy it").click()
    wait_idle(page, LONG)
    line = bought(page)
    assert f"{first} (policy) → " in line and "(yours)" in line, (line, mine)
    no_exception(page)


def test_an_applied_edit_counts_and_the_walk_steps_on(page):
    page.locator("[data-testid='stDataFrame']").first.scroll_into_view_if_needed()
    edit_value(page, 0, 2.5)
    apply(page)
    # The form's submit reruns the page after the click returns: wait for it.
    page.get_by_text("1 value(s) edited").wait_for(timeout=LONG)
    assert "1 value(s) edited: cheap_a" in main_text(page)
    cell = page.evaluate("() => document.getElementById('glide-cell-1-0').textContent")
    assert float(cell) == 2.5
    # The two steps taken are still there, replayed with the new values.
    assert bought(page).count("→") == 1
    said = main_text(page)
    if "would buy" in said:
        page.locator(BUY_NEXT).click()
        wait_idle(page, LONG)
        assert bought(page).count("→") == 2
    else:
        assert "stops here" in said
    page.get_by_text("Step by step").scroll_into_view_if_needed()
    screenshot(page, "whatif_stepper")
    no_exception(page)


def test_back_and_start_over(page):
    before = bought(page).count("→")
    page.get_by_role("button", name="Back", exact=True).click()
    wait_idle(page, LONG)
    assert bought(page).count("→") == before - 1
    page.get_by_role("button", name="Start over").click()
    wait_idle(page, LONG)
    assert bought(page).startswith("Bought: nothing yet")
    no_exception(page)
