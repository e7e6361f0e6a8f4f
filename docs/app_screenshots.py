"""The docs' app tour: screenshots of every app page at 1280x800.

    python docs/app_screenshots.py [OUT_DIR] [--tall] [--many-sensors]

Starts ``streamlit run app.py`` on a free 127.0.0.1 port, trains the landsat
demo (16 states), visits every page (clicking a node, tracing the trade-off
curve, stepping the teaching walk on the toy data), then opens a link with pima
and one sensor per column (256 states) and shows its DAG. The pictures go to
``docs/images/app/`` (the ones ``docs/getting_started.rst`` shows), stored as
palette PNGs to keep the repository small. ``--tall`` also saves 1280x2400
views of whole pages. Takes a few minutes on 2 cores. ``--many-sensors`` takes
only the Explore DAG pictures of tables with many one-column sensors (about 5
minutes): scikit-learn's wine (13 sensors) and breast cancer (30) uploaded as
CSVs, and the digits demo (64 pixels).
"""

from __future__ import annotations

import io
import json
import sys
import time
from pathlib import Path
from urllib.parse import urlencode

from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.e2e.browser import (  # noqa: E402
    ROOT,
    chromium_page,
    click_point,
    open_page,
    streamlit_server,
    wait_idle,
)

OUT = (
    Path(sys.argv[1])
    if len(sys.argv) > 1 and not sys.argv[1].startswith("-")
    else (ROOT / "docs" / "images" / "app")
)
TALL = "--tall" in sys.argv
MANY = "--many-sensors" in sys.argv
WAIT = 600_000  # ms: a page or training on a busy 2-core machine


def save_small(png: bytes, path: Path) -> None:
    """Save a screenshot as a 256-colour PNG (a third of the bytes, same look)."""
    image = Image.open(io.BytesIO(png)).convert("RGB")
    image.quantize(colors=256, method=Image.Quantize.MEDIANCUT).save(
        path, optimize=True
    )


def shot(page, name: str) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    # No tooltip of the button clicked last (hovered or focused) over the page.
    page.mouse.move(1, 1)
    page.evaluate("() => document.activeElement && document.activeElement.blur()")
    page.wait_for_timeout(600)
    save_small(page.screenshot(), OUT / f"{name}.png")
    if TALL:
        page.set_viewport_size({"width": 1280, "height": 2400})
        page.wait_for_timeout(800)
        save_small(page.screenshot(), OUT / f"{name}_tall.png")
        page.set_viewport_size({"width": 1280, "height": 800})
        page.wait_for_timeout(500)
    print(f"{time.strftime('%H:%M:%S')} {name}", flush=True)


def train(page) -> None:
    open_page(page, "Train")
    page.get_by_role("button", name="Train", exact=True).click()
    page.get_by_text("Results on the test set").wait_for(timeout=600_000)
    wait_idle(page)


def click_node(page, k: int) -> None:
    click_point(page, "states", k)
    page.get_by_text("examples arrive here").wait_for(timeout=60_000)
    wait_idle(page)


def upload(page, path: Path) -> None:
    """Upload a CSV on the Data page and use it for training."""
    page.locator("[data-testid='stSidebarNav'] a", has_text="Data").first.click()
    wait_idle(page, WAIT)
    page.get_by_text("Upload a CSV").click()
    wait_idle(page, WAIT)
    page.locator(
        "[data-testid='stFileUploader'] input[type='file']"
    ).first.set_input_files(str(path))
    use = page.get_by_role("button", name="Use this table for training")
    use.wait_for(timeout=120_000)
    wait_idle(page, WAIT)
    use.click()
    wait_idle(page, WAIT)
    switch = page.get_by_role("button", name=f"Switch to {path.name}")
    if switch.count():  # a model of the previous data: asked first
        switch.click()
        wait_idle(page, WAIT)


def explore_shot(page, name: str) -> None:
    open_page(page, "Explore DAG", WAIT)
    page.wait_for_selector(".js-plotly-plot")
    page.locator(".js-plotly-plot").first.scroll_into_view_if_needed()
    page.mouse.wheel(0, -60)  # the radios above the figure in view too
    shot(page, name)


def many_sensors(url: str, page) -> None:
    """Explore DAG with 13, 30 and 64 one-column sensors."""
    import tempfile

    from sklearn.datasets import load_breast_cancer, load_wine

    folder = Path(tempfile.mkdtemp())
    wine = load_wine(as_frame=True).frame.round(4)
    wine.to_csv(folder / "wine.csv", index=False)
    cancer = load_breast_cancer(as_frame=True).frame.round(4)
    cancer.to_csv(folder / "breast_cancer.csv", index=False)
    page.goto(f"{url}/?cv=3&cost_scale=0.01")
    wait_idle(page, WAIT)
    upload(page, folder / "wine.csv")
    train(page)
    wait_idle(page, WAIT)
    explore_shot(page, "17_explore_13_sensors")
    upload(page, folder / "breast_cancer.csv")
    open_page(page, "Sensors", WAIT)  # suggested: mean / error / worst; per column
    page.get_by_role("button", name="Per column").click()
    wait_idle(page, WAIT)
    train(page)
    wait_idle(page, WAIT)
    explore_shot(page, "18_explore_30_sensors")
    page.goto(f"{url}/?demo=digits&cv=3&cost_scale=0.01")
    wait_idle(page, WAIT)
    train(page)
    wait_idle(page, WAIT)
    explore_shot(page, "19_explore_64_sensors")


def main() -> None:
    if MANY:
        with streamlit_server() as url, chromium_page() as page:
            many_sensors(url, page)
        return
    with streamlit_server() as url, chromium_page() as page:
        page.goto(url)
        wait_idle(page)
        shot(page, "01_data")
        open_page(page, "Sensors")
        shot(page, "02_sensors")
        train(page)
        shot(page, "03_train")
        open_page(page, "Explore DAG")
        shot(page, "04_explore")
        click_node(page, 2)
        shot(page, "05_explore_node")
        open_page(page, "What-if")
        shot(page, "06_whatif")
        open_page(page, "Trade-off")
        shot(page, "07_tradeoff")
        page.get_by_role("button", name="Trace the curve").click()
        # Off the button before it is redrawn as "Recompute": its tooltip would
        # otherwise open over the controls.
        page.mouse.move(1, 1)
        page.get_by_text("Traced the curve").wait_for(timeout=600_000)
        wait_idle(page)
        shot(page, "08_tradeoff_curve")
        open_page(page, "Export")
        shot(page, "09_export")
        open_page(page, "Teaching")
        shot(page, "10_teaching_landsat")
        page.get_by_role("button", name="Use the toy data").click()
        page.get_by_text("Reducing node").wait_for(timeout=300_000)
        wait_idle(page)
        shot(page, "11_teaching_toy")
        for _ in range(4):
            page.get_by_role("button", name="Step", exact=True).click()
            wait_idle(page)
        shot(page, "12_teaching_toy_step5")

        # 256 states: pima with one sensor per column, opened from a link.
        cols = [
            "pregnancies",
            "glucose",
            "blood_pressure",
            "skin_thickness",
            "insulin",
            "bmi",
            "pedigree",
            "age",
        ]
        spec = {"groups": {c: [c] for c in cols}, "costs": dict.fromkeys(cols, 1.0)}
        query = urlencode(
            {"demo": "pima", "spec": json.dumps(spec), "cost_scale": 0.02, "cv": 3}
        )
        page.goto(f"{url}/?{query}")
        wait_idle(page)
        train(page)
        shot(page, "13_train_256")
        open_page(page, "Explore DAG")
        shot(page, "14_explore_256")
        click_node(page, 3)
        shot(page, "15_explore_256_node")
        open_page(page, "What-if")
        shot(page, "16_whatif_256")


if __name__ == "__main__":
    main()
