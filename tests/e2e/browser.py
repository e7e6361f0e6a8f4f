"""A Streamlit server and a headless Chromium for browser tests and screenshots.

Uses Debian's Chromium (``/usr/bin/chromium``) through Playwright: no browser
download. Shared by ``tests/e2e``, the docs' screenshots and figure PNGs
(``docs/``) and the benchmarks' report figures (``benchmarks/_report.py``).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
VIEWPORT = {"width": 1280, "height": 800}
#: Where browser tests put their screenshots and the servers their logs.
ARTIFACTS = ROOT / "test-artifacts"
#: Milliseconds a browser test waits for a training or a page: generous for
#: a loaded 2-core machine.
LONG = 300_000
IDLE = "[data-testid='stApp'][data-test-script-state='notRunning']"


def free_port() -> int:
    """A free port of 127.0.0.1: any, or the first free one of the range in
    ``BUDGETDAG_TEST_PORTS`` ("8661-8669") on a machine that assigns ports."""
    first, _, last = os.environ.get("BUDGETDAG_TEST_PORTS", "0").partition("-")
    for port in range(int(first), int(last or first) + 1):
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return s.getsockname()[1]
    raise RuntimeError(f"no free port in {first}-{last}")


@contextmanager
def streamlit_server(
    timeout: float = 90.0, env: dict[str, str] | None = None, log_name: str = ""
) -> Iterator[str]:
    """``streamlit run app.py`` on a free port of 127.0.0.1; yields its URL,
    stops it after. ``env``: extra environment variables for the server."""
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    log = ARTIFACTS.joinpath(f"streamlit-server{'-' if log_name else ''}{log_name}.log")
    log.parent.mkdir(exist_ok=True)
    with log.open("w") as out:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "streamlit",
                "run",
                "app.py",
                "--server.headless",
                "true",
                "--server.port",
                str(port),
                "--server.address",
                "127.0.0.1",
                "--server.fileWatcherType",
                "none",
                "--browser.gatherUsageStats",
                "false",
            ],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
        url = f"http://127.0.0.1:{port}"
        try:
            _wait_healthy(url, proc, timeout)
            yield url
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def _wait_healthy(url: str, proc: subprocess.Popen, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"streamlit exited with code {proc.returncode}")
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as r:
                if r.read().strip() == b"ok":
                    return
        except OSError:
            pass
        time.sleep(0.3)
    raise RuntimeError(f"streamlit did not answer on {url} within {timeout:.0f} s")


@contextmanager
def chromium_page(viewport: dict | None = None) -> Iterator:
    """A Playwright page in the system Chromium (downloads accepted)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            context = browser.new_context(
                viewport=viewport or VIEWPORT, accept_downloads=True
            )
            yield context.new_page()
        finally:
            browser.close()


@contextmanager
def app_page(
    link: str = "", *, log_name: str = "", env: dict[str, str] | None = None
) -> Iterator:
    """A Chromium page on a fresh app server, opened at ``link`` (a query
    such as ``"/?demo=pima"``) once the script has run."""
    with streamlit_server(env=env, log_name=log_name) as url, chromium_page() as page:
        page.goto(url + link)
        wait_idle(page, LONG)
        yield page


def server_of(page) -> str:
    """The address of the app server ``page`` is on (as :func:`app_page`'s
    server yields it): another tab or a link opens it."""
    from urllib.parse import urlsplit

    parts = urlsplit(page.url)
    return f"{parts.scheme}://{parts.netloc}"


def screenshot(
    page, name: str, *, folder: Path = ARTIFACTS, full_page: bool = False
) -> None:
    """The page as ``folder/name.png``."""
    folder.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(folder / f"{name}.png"), full_page=full_page)


def wait_idle(page, timeout: float = 60_000) -> None:
    """Until the script has finished its run (and the page has settled)."""
    page.wait_for_timeout(300)  # let a rerun triggered just now start
    page.wait_for_selector(IDLE, timeout=timeout)
    page.wait_for_timeout(200)


def open_page(page, title: str, timeout: float = 60_000) -> None:
    """Click a page in the sidebar navigation (keeps the session)."""
    nav = page.locator("[data-testid='stSidebarNav'] a", has_text=title)
    nav.first.click()
    page.wait_for_selector(f"h1:has-text('{title.split(':')[0]}')", timeout=timeout)
    wait_idle(page, timeout)


def plotly_traces(page, index: int = 0) -> list[str]:
    """Trace names of the ``index``-th plotly figure on the page."""
    return page.evaluate(
        "i => [...document.querySelectorAll('.js-plotly-plot')][i].data"
        ".map(t => t.name)",
        index,
    )


def point_center(page, trace_name: str, point: int, index: int = 0) -> dict:
    """Screen position of a marker of a named trace of a plotly figure."""
    return page.evaluate(
        """([name, k, i]) => {
            const gd = [...document.querySelectorAll('.js-plotly-plot')][i];
            const t = gd.data.findIndex(d => d.name === name);
            const layer = gd.querySelectorAll('.scatterlayer .trace')[t];
            const el = layer.querySelectorAll('path.point')[k];
            el.scrollIntoView({block: 'center'});
            const box = el.getBoundingClientRect();
            return {x: box.x + box.width / 2, y: box.y + box.height / 2};
        }""",
        [trace_name, point, index],
    )


def click_point(page, trace_name: str, point: int, index: int = 0) -> None:
    """Hover, then click a marker (plotly picks the clicked point on hover)."""
    p = point_center(page, trace_name, point, index)
    page.mouse.move(p["x"] - 6, p["y"])
    page.wait_for_timeout(150)
    page.mouse.move(p["x"], p["y"])
    page.wait_for_timeout(400)
    page.mouse.click(p["x"], p["y"])


def point_count(page, trace_name: str, index: int = 0) -> int:
    """Markers drawn for a named trace of a plotly figure."""
    return page.evaluate(
        """([name, i]) => {
            const gd = [...document.querySelectorAll('.js-plotly-plot')][i];
            const t = gd.data.findIndex(d => d.name === name);
            const layer = gd.querySelectorAll('.scatterlayer .trace')[t];
            return layer.querySelectorAll('path.point').length;
        }""",
        [trace_name, index],
    )


def main_text(page) -> str:
    """The page's main area as text."""
    return page.locator("[data-testid='stMain']").inner_text()


def sidebar(page) -> str:
    """The sidebar as text."""
    return page.locator("[data-testid='stSidebar']").inner_text()


def no_exception(page) -> None:
    """The app shows no exception box."""
    assert page.locator("[data-testid='stException']").count() == 0
