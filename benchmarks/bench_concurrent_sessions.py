"""Many sessions training at once: does the server stay responsive?

Starts ``streamlit run app.py`` on a free port of 127.0.0.1 and, for each
count of sessions asked for (default 5, then 10), opens that many browser
sessions (headless Chromium through Playwright), each on the landsat demo at
the app's default settings, and presses Train in all of them. Meanwhile it:

- asks ``/_stcore/health`` every half second and records how long each
  answer takes (a timeout counts as its timeout);
- opens the app as a new visitor, 5 s after the last Train and then every
  30 s while they train, and records the seconds until its first page is
  drawn and idle;
- reads every session's sidebar every few seconds: running (with its
  progress), waiting in the queue (with its place), or done.

It prints, per count: the health check's median, 90th percentile and
maximum; the new visitor's time; each session's end (seconds after its
Train) and the queue places it was shown. Everything is bounded: each round
ends after ``--max-minutes``.

    PYTHONPATH=$PWD python benchmarks/bench_concurrent_sessions.py [--sessions 5 10]

The machine is shared: say what else ran beside it.
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
import threading
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.e2e.browser import (  # noqa: E402
    CHROMIUM,
    CHROMIUM_ARGS,
    IDLE,
    VIEWPORT,
    streamlit_server,
)

HEALTH_EVERY = 0.5  # seconds between health checks
HEALTH_TIMEOUT = 30.0
VISIT_EVERY = 30.0  # seconds between new visitors while the sessions train
QUEUE = re.compile(r"number (\d+) in the queue")


class HealthProbe:
    """Ask ``/_stcore/health`` in a thread; keep every answer's latency."""

    def __init__(self, url: str) -> None:
        self.url = f"{url}/_stcore/health"
        self.latencies: list[float] = []
        self.failures = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            start = time.perf_counter()
            try:
                with urllib.request.urlopen(self.url, timeout=HEALTH_TIMEOUT) as r:
                    ok = r.read().strip() == b"ok"
            except OSError:
                ok = False
            took = time.perf_counter() - start
            self.latencies.append(took)
            self.failures += not ok
            self._stop.wait(max(0.0, HEALTH_EVERY - took))

    def __enter__(self) -> HealthProbe:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


@dataclass
class Session:
    page: object
    clicked: float = 0.0
    ended: float | None = None
    outcome: str = ""
    places: set[int] = field(default_factory=set)
    ran: bool = False


def sidebar(page) -> str:
    return page.locator("[data-testid='stSidebar']").inner_text(timeout=60_000)


def open_train(page, url: str) -> None:
    page.goto(url, timeout=180_000)
    page.wait_for_selector(IDLE, timeout=180_000)
    nav = page.locator("[data-testid='stSidebarNav'] a", has_text="Train")
    nav.first.click()
    page.wait_for_selector("h1:has-text('Train')", timeout=180_000)
    page.wait_for_selector(IDLE, timeout=180_000)


def new_visitor_seconds(browser, url: str) -> float:
    """Seconds until a new visitor's first page is drawn and idle."""
    context = browser.new_context(viewport=VIEWPORT)
    page = context.new_page()
    start = time.perf_counter()
    try:
        page.goto(url, timeout=180_000)
        page.wait_for_selector("h1:has-text('BudgetDAG')", timeout=180_000)
        page.wait_for_selector(IDLE, timeout=180_000)
        return time.perf_counter() - start
    except Exception:  # noqa: BLE001 - a page that never came is the answer
        return float("inf")
    finally:
        context.close()


def look(session: Session, now: float) -> None:
    """Read one session's sidebar: queue place, running, or ended."""
    if session.ended is not None:
        return
    try:
        text = sidebar(session.page)
    except Exception:  # noqa: BLE001 - being redrawn: look again later
        return
    session.places.update(int(n) for n in QUEUE.findall(text))
    if "Training on landsat" in text and not QUEUE.search(text):
        session.ran = True
    if "Trained in" in text or "test error" in text:
        session.ended, session.outcome = now - session.clicked, "trained"
    elif "failed" in text.lower() or "unexpected" in text.lower():
        session.ended, session.outcome = now - session.clicked, "failed"


def one_round(browser, url: str, n: int, max_minutes: float) -> dict:
    contexts = [browser.new_context(viewport=VIEWPORT) for _ in range(n)]
    sessions = [Session(context.new_page()) for context in contexts]
    for session in sessions:
        open_train(session.page, url)
    with HealthProbe(url) as probe:
        for session in sessions:
            session.page.get_by_role("button", name="Train", exact=True).click()
            session.clicked = time.perf_counter()
        start = time.perf_counter()
        deadline = start + 60 * max_minutes
        visitors: list[float] = []
        next_visit = start + 5
        while time.perf_counter() < deadline:
            for session in sessions:
                look(session, time.perf_counter())
            if all(s.ended is not None for s in sessions):
                break
            if time.perf_counter() >= next_visit:
                visitors.append(new_visitor_seconds(browser, url))
                next_visit = time.perf_counter() + VISIT_EVERY
            time.sleep(2)
        visitor_after = new_visitor_seconds(browser, url)
    for context in contexts:
        context.close()
    return {
        "n": n,
        "health": probe.latencies,
        "health_failures": probe.failures,
        "visitors": visitors,
        "visitor_after": visitor_after,
        "sessions": sessions,
    }


def report(result: dict) -> None:
    health = sorted(result["health"])
    q90 = health[min(len(health) - 1, int(0.9 * len(health)))]
    print(f"\n{result['n']} sessions training landsat at once")
    print(
        f"  health check: median {statistics.median(health):.3f} s, 90% "
        f"{q90:.3f} s, max {health[-1]:.3f} s over {len(health)} checks "
        f"({result['health_failures']} failed)"
    )
    visits = ", ".join(f"{v:.1f}" for v in result["visitors"]) or "-"
    print(
        f"  new visitor's page ready while they train: {visits} s (first 5 s "
        f"after the clicks, then every {VISIT_EVERY:.0f} s); after: "
        f"{result['visitor_after']:.1f} s"
    )
    for i, s in enumerate(result["sessions"], start=1):
        end = "not done" if s.ended is None else f"{s.outcome} after {s.ended:.0f} s"
        places = ", ".join(map(str, sorted(s.places, reverse=True))) or "-"
        print(f"  session {i:>2}: {end}; queue places shown: {places}")
    done = sum(s.outcome == "trained" for s in result["sessions"])
    shown = sum(bool(s.places) or s.ran for s in result["sessions"])
    print(
        f"  {done} of {result['n']} trained; {shown} of {result['n']} showed a "
        "queue place or their progress"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, nargs="+", default=[5, 10])
    parser.add_argument("--max-minutes", type=float, default=15.0)
    parser.add_argument("--workers", help="BUDGETDAG_WORKERS for the server")
    args = parser.parse_args()
    env = {} if args.workers is None else {"BUDGETDAG_WORKERS": args.workers}

    from playwright.sync_api import sync_playwright

    with streamlit_server(env=env, log_name="bench") as url, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            idle = HealthProbe(url)
            with idle:
                time.sleep(5)
            print(
                f"server {url}: idle health check median "
                f"{statistics.median(idle.latencies):.3f} s; new visitor "
                f"{new_visitor_seconds(browser, url):.1f} s"
            )
            for n in args.sessions:
                report(one_round(browser, url, n, args.max_minutes))
        finally:
            browser.close()


if __name__ == "__main__":
    main()
