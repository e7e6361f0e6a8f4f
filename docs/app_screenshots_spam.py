"""Screenshots of the app on the many-sensor Spambase demo (sensor subsets).

    python docs/app_screenshots_spam.py [OUT_DIR] [--more]

Opens a link to the spam demo (57 sensors: Alg. 2 subsets are on), shows the
Sensors page, trains with the demo's settings, then visits Explore DAG,
What-if, Trade-off, Teaching and Export; ``--more`` also clicks a DAG node and
traces the trade-off curve. Full-page views are 1280x2000. About a minute on 2
cores (two with ``--more``).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.e2e.browser import (  # noqa: E402
    ROOT,
    chromium_page,
    click_point,
    open_page,
    streamlit_server,
    wait_idle,
)

ARGS = [a for a in sys.argv[1:] if not a.startswith("--")]
OUT = Path(ARGS[0]) if ARGS else ROOT / "test-artifacts"
TALL = {"width": 1280, "height": 2000}


def shot(page, name: str) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(OUT / f"spam_{name}.png"))
    print(f"{time.strftime('%H:%M:%S')} spam_{name}", flush=True)


def main() -> None:
    with streamlit_server() as url, chromium_page(TALL) as page:
        page.goto(f"{url}/?demo=spam")
        wait_idle(page, 120_000)
        open_page(page, "Sensors")
        shot(page, "sensors")
        open_page(page, "Train")
        start = time.perf_counter()
        page.get_by_role("button", name="Train", exact=True).click()
        page.get_by_text("Selected sensor subsets").wait_for(timeout=600_000)
        wait_idle(page)
        print(f"trained in the browser in {time.perf_counter() - start:.1f} s")
        shot(page, "train")
        for title in ("Explore DAG", "What-if", "Trade-off", "Teaching", "Export"):
            open_page(page, title, timeout=120_000)
            page.wait_for_timeout(1500)  # let plotly draw
            shot(page, title.split()[0].lower().replace("-", ""))
        if "--more" in sys.argv:
            open_page(page, "Explore DAG")
            page.wait_for_timeout(1500)
            click_point(page, "states", 2)
            page.get_by_text("examples arrive here").wait_for(timeout=60_000)
            wait_idle(page)
            shot(page, "explore_node")
            open_page(page, "Trade-off")
            start = time.perf_counter()
            page.get_by_role("button", name="Trace the curve").click()
            page.get_by_role("button", name="Recompute").first.wait_for(timeout=600_000)
            wait_idle(page)
            print(f"traced the curve in {time.perf_counter() - start:.1f} s")
            shot(page, "tradeoff_curve")


if __name__ == "__main__":
    main()
