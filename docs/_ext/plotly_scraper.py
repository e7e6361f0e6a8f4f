"""Plotly figures in the examples gallery: interactive on the page, PNG thumbnails.

An example shows a figure with ``fig.show()``. The ``budgetdag_docs`` renderer,
selected when Sphinx loads this extension, queues the figure instead of opening
a browser; :func:`scrape` (a sphinx-gallery image scraper) embeds each queued
figure in the example's page as HTML and draws it once as a PNG in headless
Chromium (Playwright and Debian's ``/usr/bin/chromium``, as the browser tests
use), which sphinx-gallery turns into the example's thumbnail. plotly.js is
copied once into the site's ``_static`` folder, so the pages need no network.
"""

from __future__ import annotations

import atexit
import shutil
import textwrap
from pathlib import Path

import plotly
import plotly.io as pio
from plotly.io.base_renderers import ExternalRenderer

PLOTLY_JS = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
WIDTH, HEIGHT = 800, 500  # the PNG's size; the page's figure fills its column

_queue: list[dict] = []
_pages_with_plotly: set[str] = set()


class _QueueRenderer(ExternalRenderer):
    """``fig.show()`` during a docs build: keep the figure for the scraper."""

    def render(self, fig_dict: dict) -> None:
        _queue.append(fig_dict)


class _Browser:
    """One headless Chromium page for the whole build, opened on first use."""

    def __init__(self) -> None:
        self._playwright = None
        self._page = None

    def page(self):
        if self._page is None:
            from playwright.sync_api import sync_playwright

            from tests.e2e.browser import CHROMIUM, CHROMIUM_ARGS

            self._playwright = sync_playwright().start()
            browser = self._playwright.chromium.launch(
                executable_path=CHROMIUM, args=CHROMIUM_ARGS
            )
            self._page = browser.new_page(viewport={"width": WIDTH, "height": HEIGHT})
            self._page.set_content("<html><body style='margin:0'></body></html>")
            self._page.add_script_tag(path=str(PLOTLY_JS))
            atexit.register(self.close)
        return self._page

    def close(self) -> None:
        if self._playwright is not None:
            self._playwright.stop()
            self._playwright = None
            self._page = None


_browser = _Browser()


def _write_png(fig_json: str, path: str) -> None:
    page = _browser.page()
    page.evaluate(
        """([fig, w, h]) => {
            document.body.innerHTML = "<div id='fig'></div>";
            const f = JSON.parse(fig);
            const layout = Object.assign({}, f.layout || {}, {width: w, height: h});
            return Plotly.newPlot("fig", f.data || [], layout, {staticPlot: true});
        }""",
        [fig_json, WIDTH, HEIGHT],
    )
    page.locator("#fig").screenshot(path=path)


def scrape(block, block_vars, gallery_conf, **kwargs) -> str:
    """sphinx-gallery image scraper for the figures an example block showed."""
    figures = list(_queue)
    _queue.clear()
    if not figures:
        return ""
    rst = ""
    page = block_vars["src_file"]
    if page not in _pages_with_plotly:  # the gallery pages sit one level down
        _pages_with_plotly.add(page)
        rst += _raw_html('<script src="../_static/plotly.min.js"></script>')
    for fig_dict in figures:
        fig_json = pio.to_json(fig_dict, validate=False)
        _write_png(fig_json, next(block_vars["image_path_iterator"]))
        html = pio.to_html(
            fig_dict,
            include_plotlyjs=False,
            full_html=False,
            default_width="100%",
            default_height=HEIGHT,
            validate=False,
        )
        rst += _raw_html(f'<div class="budgetdag-figure">{html}</div>')
    return rst


def _raw_html(html: str) -> str:
    return "\n.. raw:: html\n\n" + textwrap.indent(html, "    ") + "\n\n"


def _copy_plotly_js(app, exception) -> None:
    if exception is None and app.builder.format == "html":
        static = Path(app.outdir) / "_static"
        static.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(PLOTLY_JS, static / "plotly.min.js")


def setup(app):
    pio.renderers["budgetdag_docs"] = _QueueRenderer()
    pio.renderers.default = "budgetdag_docs"
    app.connect("build-finished", _copy_plotly_js)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
