"""Long work beside the page, in a real browser (Chromium driven by Playwright).

Training runs in the session's background job, in the server's pool of
worker processes: the user switches to Explore DAG at once and the model
appears there; a reload of the tab brings it back (the session token in the
URL); Stop in the sidebar works from another page; a second session's
training waits in line with its place shown; a tab duplicated mid-training
gets the model as the first tab does.
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

from .browser import (
    ARTIFACTS,
    LONG,
    chromium_page,
    open_page,
    sidebar,
    streamlit_server,
    wait_idle,
)

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def server():
    # One job at a time whatever the machine: the queue is seen at once.
    with streamlit_server(env={"BUDGETDAG_WORKERS": "1"}) as url:
        yield url


def session_of(page) -> str:
    found = re.search(r"[?&]session=([A-Za-z0-9_-]{32})", page.url)
    assert found, page.url
    return found.group(1)


def test_training_goes_on_while_exploring_and_survives_a_reload(server):
    with chromium_page() as page:
        page.goto(f"{server}/?demo=pima&cv=3&degree=1")  # trains in about a second
        wait_idle(page)
        token = session_of(page)
        open_page(page, "Train")
        page.get_by_role("button", name="Train", exact=True).click()
        # As soon as the click has reached the server (a page switch sent before
        # would replace that run, click and all): the sidebar shows the job.
        page.locator("[data-testid='stSidebar']").get_by_text(
            re.compile("Training on pima|Trained in")
        ).first.wait_for(timeout=LONG)
        open_page(page, "Explore DAG")  # no waiting for the training
        page.wait_for_selector(".js-plotly-plot .scatterlayer path.point", timeout=LONG)
        wait_idle(page)
        assert "test error" in sidebar(page)
        assert "/explore" in page.url and session_of(page) == token
        assert page.locator("[data-testid='stException']").count() == 0

        page.reload()
        wait_idle(page)
        page.wait_for_selector(".js-plotly-plot .scatterlayer path.point", timeout=LONG)
        assert "Welcome back" in page.locator("[data-testid='stMain']").inner_text()
        assert "pima" in sidebar(page) and "test error" in sidebar(page)
        assert session_of(page) != token  # the work moved to a fresh token


def test_stop_from_another_page(server):
    with chromium_page() as page:
        page.goto(server)  # a new session: landsat at the default settings (slow)
        wait_idle(page)
        open_page(page, "Train")
        page.get_by_role("button", name="Train", exact=True).click()
        page.locator("[data-testid='stSidebar']").get_by_text(
            "Training on landsat"
        ).wait_for(timeout=LONG)
        open_page(page, "Trade-off")
        stop = page.locator("[data-testid='stSidebar']").get_by_role(
            "button", name="Stop"
        )
        stop.wait_for(timeout=60_000)
        assert "Training on landsat" in sidebar(page)
        assert re.search(r"\d+(\.\d+)? s so far", sidebar(page))
        stopped = page.get_by_text(re.compile("was stopped after"))
        # The panel redraws itself every second; on a loaded machine a click can
        # land on a button being replaced, as a user's can: click again then.
        for _ in range(10):
            if stop.count():
                stop.first.click()
            try:
                stopped.wait_for(timeout=15_000)
                break
            except PlaywrightTimeoutError:
                continue
        stopped.wait_for(timeout=LONG)
        assert "not trained yet" in sidebar(page)
        assert page.locator("[data-testid='stException']").count() == 0


def stop_job(page, shown: str | re.Pattern) -> None:
    """Press Stop in the sidebar until ``shown`` appears (the panel redraws
    itself every second: a click can land on a button being replaced)."""
    stop = page.locator("[data-testid='stSidebar']").get_by_role("button", name="Stop")
    done = page.get_by_text(shown)
    for _ in range(10):
        if stop.count():
            stop.first.click()
        try:
            done.first.wait_for(timeout=15_000)
            return
        except PlaywrightTimeoutError:
            continue
    done.first.wait_for(timeout=LONG)


def start_training(page) -> None:
    open_page(page, "Train")
    page.get_by_role("button", name="Train", exact=True).click()


def test_a_second_training_waits_in_line_with_its_place_shown(server):
    with chromium_page() as first:
        second = first.context.new_page()  # another session: no token given
        for tab in (first, second):
            tab.goto(server)  # landsat at the default settings (slow)
            wait_idle(tab)
        assert session_of(first) != session_of(second)
        start_training(first)
        first.locator("[data-testid='stSidebar']").get_by_text(
            "Training on landsat"
        ).wait_for(timeout=LONG)
        start_training(second)
        place = second.locator("[data-testid='stSidebar']").get_by_text(
            "Waiting for a free worker: number 1 in the queue"
        )
        place.wait_for(timeout=60_000)
        assert "runs 1 job at a time" in sidebar(second)
        stop_job(second, "was stopped before it started")
        assert "not trained yet" in sidebar(second)
        stop_job(first, re.compile("was stopped after"))
        for tab in (first, second):
            assert tab.locator("[data-testid='stException']").count() == 0


def test_a_duplicated_tab_mid_training_gets_the_model_too(server):
    with chromium_page() as page:
        page.goto(server)
        wait_idle(page)
        token = session_of(page)
        start_training(page)
        page.locator("[data-testid='stSidebar']").get_by_text(
            "Training on landsat"
        ).wait_for(timeout=LONG)
        twin = page.context.new_page()
        twin.goto(page.url)  # as the browser's "Duplicate tab" does
        wait_idle(twin)
        main = twin.locator("[data-testid='stMain']").inner_text()
        assert "also open in another tab" in main
        assert session_of(twin) != token
        for tab in (page, twin):
            tab.locator("[data-testid='stSidebar']").get_by_text("test error").wait_for(
                timeout=LONG
            )
            assert "not trained yet" not in sidebar(tab)
            assert tab.locator("[data-testid='stException']").count() == 0
        assert session_of(page) == token  # the first tab kept its address
        twin.screenshot(path=str(ARTIFACTS / "duplicated_tab.png"), full_page=True)
