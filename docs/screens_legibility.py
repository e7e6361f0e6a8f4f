"""Full-page screenshots of every app page at 1280 and 900 px, for a check by eye.

    python docs/screens_legibility.py [OUT_DIR] [--data landsat,spam,digits]

Starts ``streamlit run app.py`` headless and, for each data set, trains with
the app's defaults, traces the trade-off curve and saves a full-page view of
every page (Data, Sensors, Train, Explore DAG, What-if, Trade-off, Teaching,
Export) as ``<data>_<nn>_<page>_<width>.png`` (default OUT_DIR:
test-artifacts/screens). The data sets: the landsat demo (4 band sensors, 16
states), the spam demo with its default sensor subsets (about 130 states), and
sklearn's 8 x 8 digits uploaded as a CSV and grouped into 4 image quadrants on
the Sensors page (16 states). Prints how long each training and tracing took:
on 2 shared cores each training takes 30-50 s and tracing the curve 15 s
(landsat) to 70-160 s (spam); about 7-10 minutes for all three.
"""

from __future__ import annotations

import argparse
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

DATASETS = ("landsat", "spam", "digits")
WIDTHS = (1280, 900)
HEIGHT = 800  # the viewport before it grows to the page's full height
MAX_HEIGHT = 8000
LONG = 1_800_000  # ms: spam's training and tracing take minutes on 2 cores
# Streamlit scrolls its main block, not the document: the tallest of these is
# the height a full-page view needs.
PAGE_HEIGHT = """() => Math.max(...[
    "[data-testid='stMain']", "[data-testid='stMainBlockContainer']",
    "[data-testid='stAppViewContainer']", "[data-testid='stSidebarContent']",
].map(s => document.querySelector(s)).filter(Boolean).map(e => e.scrollHeight))"""


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?", type=Path, default=None)
    parser.add_argument(
        "--data",
        default=",".join(DATASETS),
        help="comma-separated data sets among " + ", ".join(DATASETS),
    )
    args = parser.parse_args()
    args.out = args.out or ROOT / "test-artifacts" / "screens"
    unknown = set(args.data.split(",")) - set(DATASETS)
    if unknown:
        parser.error(f"unknown data set(s) {sorted(unknown)}; use {DATASETS}")
    return args


def shots(page, out: Path, name: str) -> None:
    """One full-page view of the current page per width."""
    out.mkdir(parents=True, exist_ok=True)
    # No tooltip of the button clicked last (hovered or focused) over the page.
    page.mouse.move(1, 1)
    page.evaluate("() => document.activeElement && document.activeElement.blur()")
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": HEIGHT})
        page.wait_for_timeout(900)  # plotly redraws at the new width
        height = min(max(int(page.evaluate(PAGE_HEIGHT)), HEIGHT), MAX_HEIGHT)
        page.set_viewport_size({"width": width, "height": height})
        page.wait_for_timeout(900)
        page.screenshot(path=str(out / f"{name}_{width}.png"))
    page.set_viewport_size({"width": WIDTHS[0], "height": HEIGHT})
    page.wait_for_timeout(300)
    print(f"{time.strftime('%H:%M:%S')} {name}", flush=True)


def timed(label: str, start: float) -> None:
    print(f"{label} in {time.perf_counter() - start:.1f} s", flush=True)


def train(page, data: str) -> None:
    open_page(page, "Train")
    start = time.perf_counter()
    page.get_by_role("button", name="Train", exact=True).click()
    page.get_by_text("Results on the test set").wait_for(timeout=LONG)
    wait_idle(page)
    timed(f"{data}: trained", start)


def trace(page, data: str) -> None:
    start = time.perf_counter()
    page.get_by_role("button", name="Trace the curve").click()
    # Off the button before it is redrawn as "Recompute": its tooltip would
    # otherwise open and cover the controls in the screenshots.
    page.mouse.move(1, 1)
    page.get_by_role("button", name="Recompute").first.wait_for(timeout=LONG)
    wait_idle(page)
    page.wait_for_timeout(1500)  # let plotly draw
    timed(f"{data}: traced the curve", start)


def every_page(page, out: Path, data: str) -> None:
    """Train, then one view of each page after Data and Sensors."""
    train(page, data)
    shots(page, out, f"{data}_03_train")
    open_page(page, "Explore DAG")
    page.wait_for_timeout(1500)
    shots(page, out, f"{data}_04_explore")
    open_page(page, "What-if")
    shots(page, out, f"{data}_05_whatif")
    open_page(page, "Trade-off")
    trace(page, data)
    shots(page, out, f"{data}_06_tradeoff")
    open_page(page, "Teaching")
    shots(page, out, f"{data}_07_teaching")
    open_page(page, "Export")
    shots(page, out, f"{data}_08_export")


def demo(page, url: str, out: Path, data: str) -> None:
    page.goto(f"{url}/?demo={data}")  # a fresh session: no token in the URL
    wait_idle(page, 120_000)
    shots(page, out, f"{data}_01_data")
    open_page(page, "Sensors")
    shots(page, out, f"{data}_02_sensors")
    every_page(page, out, data)


def digits_csv() -> Path:
    from sklearn.datasets import load_digits

    path = ROOT / "test-artifacts" / "digits.csv"
    path.parent.mkdir(exist_ok=True)
    frame = load_digits(as_frame=True).frame.rename(columns={"target": "label"})
    frame.to_csv(path, index=False)
    return path


def digits(page, url: str, out: Path) -> None:
    page.goto(url)
    wait_idle(page, 120_000)
    page.get_by_text("Upload a CSV").click()
    wait_idle(page)
    page.locator("[data-testid='stFileUploaderDropzoneInput']").first.set_input_files(
        str(digits_csv())
    )
    wait_idle(page)
    page.get_by_role("button", name="Use this table for training").click()
    wait_idle(page)
    shots(page, out, "digits_01_data")
    open_page(page, "Sensors")
    page.get_by_text("Image grid").click()
    wait_idle(page)
    page.get_by_role("button", name="Apply grouping").click()
    wait_idle(page)
    page.get_by_text("Columns of each sensor").click()
    wait_idle(page)
    shots(page, out, "digits_02_sensors")
    every_page(page, out, "digits")


def main() -> None:
    args = parse_args()
    with streamlit_server() as url, chromium_page() as page:
        for data in args.data.split(","):
            if data == "digits":
                digits(page, url, args.out)
            else:
                demo(page, url, args.out, data)


if __name__ == "__main__":
    main()
