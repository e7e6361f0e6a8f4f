"""Columns that give the answer away, in a real browser (issue 56).

A CSV as an R data package writes it (a ``rownames`` column first, 1, 2, 3,
... in file order, the rows sorted by class) with a numeric copy of the
label: the Data page guesses the label (the text column, not the copy),
flags both columns before training, and leaves them out in one click; the
table then trains without them. Screenshots (1280x800) go to
``test-artifacts/leaks_*.png``.
"""

from __future__ import annotations

import pytest

from .browser import (
    LONG,
    app_page,
    main_text,
    no_exception,
    screenshot,
    sidebar,
    wait_idle,
)

pytestmark = pytest.mark.e2e
LINK = "/?cv=3"
LEAVE_OUT = "Leave them out of training"


@pytest.fixture(scope="module")
def page():
    with app_page(LINK, log_name="leaks") as page:
        yield page


@pytest.fixture(scope="module")
def wine_csv(tmp_path_factory):
    """scikit-learn's wine table with row names and the label's code."""
    from sklearn.datasets import load_wine

    frame = load_wine(as_frame=True).frame
    frame.insert(0, "rownames", range(1, len(frame) + 1))
    names = {0: "barolo", 1: "grignolino", 2: "barbera"}
    frame["cultivar"] = frame.pop("target").map(names)
    frame["cultivar_code"] = frame["cultivar"].map(
        {"barolo": 1, "grignolino": 2, "barbera": 3}
    )
    path = tmp_path_factory.mktemp("leaks") / "wine.csv"
    frame.to_csv(path, index=False)
    return path


def shot(page, name: str) -> None:
    screenshot(page, f"leaks_{name}", full_page=True)


def test_row_names_and_a_label_copy_are_flagged_and_left_out_in_one_click(
    page, wine_csv
):
    page.get_by_text("Upload a CSV").click()
    wait_idle(page, LONG)
    page.locator(
        "[data-testid='stFileUploader'] input[type='file']"
    ).first.set_input_files(str(wine_csv))
    page.get_by_role("button", name=LEAVE_OUT).wait_for(timeout=LONG)
    wait_idle(page, LONG)
    no_exception(page)
    text = main_text(page)
    # The label guessed is the class names (the finding names it), not the
    # row numbers nor the copy.
    assert "Column(s) that give the answer away" in text
    assert "'rownames' numbers the rows (1, 2, 3, … in file order)" in text
    assert "'cultivar_code' is 'cultivar' under other names" in text
    assert "ready for training" not in text
    shot(page, "flagged")

    page.get_by_role("button", name=LEAVE_OUT).click()  # the one click
    wait_idle(page, LONG)
    no_exception(page)
    text = main_text(page)
    assert "give the answer away" not in text
    assert "Leave out of training: 'rownames', 'cultivar_code'" in text
    assert "The table is ready for training." in text
    shot(page, "left_out")

    page.get_by_role("button", name="Use this table for training").click()
    wait_idle(page, LONG)
    no_exception(page)
    assert "wine.csv" in sidebar(page)
    # The table in use has wine's 13 measurements only.
    metric = page.locator("[data-testid='stMetric']", has_text="Feature columns")
    assert metric.inner_text().split() == ["Feature", "columns", "13"]
    shot(page, "in_use")
