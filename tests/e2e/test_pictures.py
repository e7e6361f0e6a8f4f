"""The digits demo in a real browser (issue 38): what the policy buys, pictured.

One visit: the digits demo trained from the first screen, What-if's 8 x 8 grid
with the pixels bought numbered in order, the class heatmap, and Explore DAG
with no two labels overlapping and every drawn node connected. The
screenshots (1280x800) go to ``docs/images/app/`` for the tour
(docs/getting_started.rst).

With its defaults the app trains the library's default for 64 sensors (a
chain, a routed or a grown DAG, one sensor at a time, kept on held-out rows; Alg. 2's
subsets stay off); 3 folds keep the walk short.
"""

from __future__ import annotations

import pytest

from .browser import (
    LONG,
    ROOT,
    app_page,
    no_exception,
    open_page,
    screenshot,
    wait_idle,
)

pytestmark = pytest.mark.e2e
IMAGES = ROOT / "docs" / "images" / "app"
LINK = "/?demo=digits&cv=3&cost_scale=0.01"


@pytest.fixture(scope="module")
def page():
    with app_page(LINK, log_name="pictures") as page:
        yield page


def shot(page, name: str) -> None:
    screenshot(page, name, folder=IMAGES)


def figure_data(page, trace: str) -> list[dict]:
    """The traces of the first plotly figure holding a trace named ``trace``."""
    return page.evaluate(
        """name => {
            const list = v => ArrayBuffer.isView(v) || Array.isArray(v);
            const plain = v => {
                if (v && v._inputArray) v = v._inputArray;
                return list(v) ? Array.from(v, r => list(r) ? Array.from(r) : r) : v;
            };
            const gd = [...document.querySelectorAll('.js-plotly-plot')]
                .find(g => g.data.some(t => t.name === name));
            gd.scrollIntoView({block: 'center'});
            return gd.data.map(t => ({name: t.name, x: plain(t.x), y: plain(t.y),
                                      text: plain(t.text), meta: t.meta || null,
                                      z: plain(t.z) || null}));
        }""",
        trace,
    )


def test_digits_trains_from_the_first_screen(page):
    page.get_by_role("button", name="Train a model on digits").click()
    page.wait_for_selector("h1:has-text('Train')", timeout=LONG)
    page.get_by_text("Results on the test set").wait_for(timeout=LONG)
    wait_idle(page, LONG)
    no_exception(page)
    text = page.locator("[data-testid='stMain']").inner_text()
    assert any(f"Kept the {s}" in text for s in ("chain", "routed DAG"))


def test_whatif_numbers_the_pixels_bought_on_the_grid(page):
    open_page(page, "What-if", LONG)
    page.get_by_text("The example on its 8 × 8 grid").wait_for(timeout=LONG)
    traces = figure_data(page, "order")
    values = next(t for t in traces if t["name"] == "values")
    assert len(values["z"]) == 8 and len(values["z"][0]) == 8
    order = next(t for t in traces if t["name"] == "order")
    numbers = [int(s) for s in order["text"]]
    assert numbers and numbers == sorted(numbers) and numbers[0] == 1
    page.wait_for_timeout(500)
    no_exception(page)
    shot(page, "whatif_grid")
    page.get_by_text("The candidates at each step").evaluate(
        "e => e.scrollIntoView({block: 'start'})"
    )
    page.wait_for_timeout(300)
    shot(page, "whatif_scores")


def test_whatif_shows_the_class_heatmap(page):
    traces = figure_data(page, "how often")
    often = next(t for t in traces if t["name"] == "how often")
    shares = [v for row in often["z"] for v in row if v is not None]
    assert len(often["z"]) == 8 and max(shares) > 0
    page.get_by_text("What the policy buys").scroll_into_view_if_needed()
    page.wait_for_timeout(500)
    shot(page, "whatif_heatmap")


def _boxes_overlap(a: dict, b: dict) -> bool:
    return not (
        a["right"] <= b["left"]
        or b["right"] <= a["left"]
        or a["bottom"] <= b["top"]
        or b["bottom"] <= a["top"]
    )


def test_explore_dag_has_no_overlapping_labels_and_no_loose_node(page):
    open_page(page, "Explore DAG", LONG)
    page.wait_for_selector(".js-plotly-plot", timeout=LONG)
    wait_idle(page, LONG)
    traces = figure_data(page, "states")
    states = next(t for t in traces if t["name"] == "states")
    ends = set()
    for t in traces:
        if (t["meta"] or {}).get("kind") in ("acquire", "stop"):
            ends |= {
                (round(x, 6), round(y, 6))
                for x, y in zip(t["x"], t["y"], strict=True)
                if x is not None
            }
    nodes = list(zip(states["x"], states["y"], strict=True))
    loose = [p for p in nodes if (round(p[0], 6), round(p[1], 6)) not in ends]
    assert len(nodes) > 1 and not loose, loose
    # Two nodes of one depth never share a label ("other" nodes of several
    # depths do).
    labels = [(x, t) for x, t in zip(states["x"], states["text"], strict=True) if t]
    assert len(labels) == len(set(labels)), labels
    boxes = page.evaluate(
        """() => {
            const gd = [...document.querySelectorAll('.js-plotly-plot')]
                .find(g => g.data.some(t => t.name === 'states'));
            return [...gd.querySelectorAll('.textpoint text')].map(e => {
                const b = e.getBoundingClientRect();
                return {text: e.textContent, left: b.left, right: b.right,
                        top: b.top, bottom: b.bottom};
            }).filter(b => b.text);
        }"""
    )
    clashes = [
        (a["text"], b["text"])
        for i, a in enumerate(boxes)
        for b in boxes[i + 1 :]
        if _boxes_overlap(a, b)
    ]
    assert len(boxes) >= 2 and not clashes, clashes
    no_exception(page)
    shot(page, "explore_dag")
