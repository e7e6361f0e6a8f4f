"""What-if's stepper in a real browser (issue 56, item 5).

The toy demo (three one-column sensors, ``label = u > 0`` with each sensor
``u`` plus noise) trained from a link, then on What-if: buy the policy's next
sensor and one of our own, go back and start over; then two value edits one
after the other, each applied, and the stepper and the whole path follow the
second: a reading of ``cheap_a`` far above 0 and then far below it flips the
posterior, and the policy stops after that one sensor both times.

Typing into the value table goes through Glide's canvas grid: a press lands
on the cell under the pointer's last *move*. Playwright's mouse jumps without
moving, so the helper hovers the cell first (as a hand does) and checks the
selected cell and the typed value before applying: a press without the hover
selected the cell the grid last knew (one row off after an Apply), which is
how an earlier version of this walk lost its second edit.
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
VALUE_COLUMN = 1  # column, value, test value (one-column sensors: no "sensor")
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


def predicts_now(page) -> str:
    """The stepper's current prediction."""
    return re.search(r"Predicts now: (\S+)", main_text(page)).group(1)


def cell_text(page, row: int) -> str:
    """The value cell of ``row`` as the grid's accessible table shows it."""
    return page.evaluate(
        "id => document.getElementById(id)?.textContent ?? ''",
        f"glide-cell-{VALUE_COLUMN}-{row}",
    )


def edit_value(page, row: int, value: float) -> None:
    """Type ``value`` into the *value* cell of ``row`` as a user does: hover
    the cell, click it (checked selected), Enter to open its editor (the
    keyboard acts on the selected cell, wherever the pointer's last move
    left the canvas's idea of it), type over the old value, Enter (checked
    shown in the cell)."""
    table = page.locator("[data-testid='stDataFrame']").first
    table.scroll_into_view_if_needed()
    # The first try often only focuses the grid (its Enter opens no editor),
    # and after an Apply or a buy the grid may still be redrawing: try anew.
    for _ in range(6):
        box = table.bounding_box()
        x, y = box["x"] + box["width"] * 0.5, box["y"] + ROW_PX * (row + 1.5)
        page.mouse.move(x - 20, y)
        page.mouse.move(x, y, steps=4)
        page.wait_for_timeout(300)
        page.mouse.click(x, y)
        page.wait_for_timeout(300)
        focused = page.evaluate("() => document.activeElement.id")
        if focused != f"glide-cell-{VALUE_COLUMN}-{row}":
            continue
        page.keyboard.press("Enter")
        page.wait_for_timeout(300)
        page.keyboard.press("ControlOrMeta+a")
        page.keyboard.type(str(value))
        # The number editor takes the typed text into its state a moment after
        # the keys: an Enter at once committed the old value (about half the
        # time on a quiet machine).
        page.wait_for_timeout(500)
        page.keyboard.press("Enter")
        # The grid redraws the cell after a rerun: on a busy machine that
        # takes longer than one short wait, so look again for a few seconds.
        for _ in range(10):
            page.wait_for_timeout(300)
            if cell_text(page, row) and float(cell_text(page, row)) == value:
                return
    raise AssertionError(f"row {row}: the cell shows {cell_text(page, row)!r}")


def apply(page, edited: str) -> None:
    """Apply the values; wait for the rerun that shows ``edited``."""
    page.get_by_role("button", name="Apply the values").click()
    page.get_by_text(edited).wait_for(timeout=LONG)
    wait_idle(page, LONG)


def whole_path_prediction(page) -> str:
    """The *Prediction* metric of the whole path."""
    metric = page.locator("[data-testid='stMetric']", has_text="Prediction").first
    return metric.locator("[data-testid='stMetricValue']").inner_text().strip()


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


def test_back_and_start_over(page):
    before = bought(page).count("→")
    page.get_by_role("button", name="Back", exact=True).click()
    wait_idle(page, LONG)
    assert bought(page).count("→") == before - 1
    page.get_by_role("button", name="Start over").click()
    wait_idle(page, LONG)
    assert bought(page).startswith("Bought: nothing yet")
    no_exception(page)


def test_two_applied_edits_one_after_another_both_count(page):
    assert bought(page).startswith("Bought: nothing yet")
    # cheap_a far above 0 (3 noise widths): class 1; the policy stops there.
    edit_value(page, 0, 2.5)
    apply(page, "1 value(s) edited: cheap_a")
    page.locator(BUY_NEXT).click()
    wait_idle(page, LONG)
    assert bought(page).startswith("Bought: cheap_a (policy) · cost so far 1")
    assert predicts_now(page) == "1"
    assert "stops here and predicts 1" in main_text(page)
    assert whole_path_prediction(page) == "1"
    # The second edit, far below 0: the step taken replays with it.
    edit_value(page, 0, -2.5)
    page.get_by_role("button", name="Apply the values").click()
    page.get_by_text("stops here and predicts 0").wait_for(timeout=LONG)
    wait_idle(page, LONG)
    assert float(cell_text(page, 0)) == -2.5
    assert bought(page).startswith("Bought: cheap_a (policy) · cost so far 1")
    assert predicts_now(page) == "0"
    assert whole_path_prediction(page) == "0"
    assert "1 value(s) edited: cheap_a" in main_text(page)
    # And a sensor of ours after the policy's stop: the first one offered.
    mine = page.get_by_label("Or buy another sensor").input_value()
    assert mine in {"cheap_b", "precise"}
    page.get_by_role("button", name="Buy it").click()
    wait_idle(page, LONG)
    assert bought(page).startswith(f"Bought: cheap_a (policy) → {mine} (yours)")
    page.get_by_text("Step by step").scroll_into_view_if_needed()
    screenshot(page, "whatif_stepper")
    no_exception(page)
