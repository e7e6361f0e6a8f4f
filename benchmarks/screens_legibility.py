"""Screenshots of the Sensors, Explore DAG and What-if pages at 1280 and 900 px.

    python benchmarks/screens_legibility.py [OUT_DIR] [--spam]

For the landsat demo (4 band sensors) and for sklearn's 8 x 8 digits uploaded
as a CSV and grouped into 4 image quadrants on the Sensors page: trains each
(16 states) and saves ``<data>_<page>_<width>.png`` (default OUT_DIR:
test-artifacts/legibility). ``--spam`` also trains the spam demo (57 one-column
sensors, 8 selected subsets, about 130 states; several more minutes). For
checking by eye that nothing is cut off or overlaps; a few minutes on 2 cores.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.e2e.browser import (  # noqa: E402
    ROOT,
    chromium_page,
    open_page,
    streamlit_server,
    wait_idle,
)

ARGS = [a for a in sys.argv[1:] if not a.startswith("--")]
OUT = Path(ARGS[0]) if ARGS else ROOT / "test-artifacts" / "legibility"
SPAM = "--spam" in sys.argv
WIDTHS = (1280, 900)
HEIGHT = 1400  # tall enough for the tables under the figures


def shots(page, name: str) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": HEIGHT})
        page.wait_for_timeout(900)
        page.screenshot(path=str(OUT / f"{name}_{width}.png"))
    page.set_viewport_size({"width": WIDTHS[0], "height": HEIGHT})
    page.wait_for_timeout(500)
    print(f"{time.strftime('%H:%M:%S')} {name}", flush=True)


def train(page) -> None:
    open_page(page, "Train")
    page.get_by_role("button", name="Train", exact=True).click()
    page.get_by_text("Results on the test set").wait_for(timeout=900_000)
    wait_idle(page)


def visit(page, data: str) -> None:
    open_page(page, "Explore DAG")
    shots(page, f"{data}_explore")
    page.get_by_text("Tables: acquisition sequences").click()
    wait_idle(page)
    page.get_by_text("Edges taken").scroll_into_view_if_needed()
    shots(page, f"{data}_explore_tables")
    open_page(page, "What-if")
    shots(page, f"{data}_whatif")


def digits_csv() -> Path:
    from sklearn.datasets import load_digits

    path = ROOT / "test-artifacts" / "digits.csv"
    frame = load_digits(as_frame=True).frame.rename(columns={"target": "label"})
    frame.to_csv(path, index=False)
    return path


def open_data(page) -> None:
    page.locator("[data-testid='stSidebarNav'] a", has_text="Data").first.click()
    page.get_by_role("heading", name="BudgetDAG").wait_for()
    wait_idle(page)


def main() -> None:
    with streamlit_server() as url, chromium_page() as page:
        page.goto(url)
        wait_idle(page)
        if SPAM:
            page.goto(f"{url}/?demo=spam")
            wait_idle(page)
            shots(page, "spam_data")
            open_page(page, "Sensors")
            shots(page, "spam_sensors")
            train(page)
            visit(page, "spam")
            page.goto(url)
            wait_idle(page)
            page.goto(f"{url}/?demo=landsat")
            wait_idle(page)
        shots(page, "landsat_data")
        open_page(page, "Sensors")
        shots(page, "landsat_sensors")
        train(page)
        visit(page, "landsat")

        open_data(page)
        page.get_by_text("Upload a CSV").click()
        wait_idle(page)
        page.locator(
            "[data-testid='stFileUploaderDropzoneInput']"
        ).first.set_input_files(str(digits_csv()))
        wait_idle(page)
        page.get_by_role("button", name="Use this table for training").click()
        wait_idle(page)
        shots(page, "digits_data")
        open_page(page, "Sensors")
        page.get_by_text("Image grid").click()
        wait_idle(page)
        page.get_by_role("button", name="Apply grouping").click()
        wait_idle(page)
        page.get_by_text("Columns of each sensor").click()
        wait_idle(page)
        shots(page, "digits_sensors")
        train(page)
        visit(page, "digits")


if __name__ == "__main__":
    main()
