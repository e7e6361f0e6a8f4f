"""The app's press-to-result time and its progress bar (issue 54's acceptance).

Starts ``streamlit run app.py`` on a free port of 127.0.0.1 and, per run, opens
a fresh browser session (headless Chromium through Playwright) for each table,
goes to the Train page and presses Train at the app's default settings:

- ``landsat``: the bundled demo (4 sensors);
- ``digits``: a 64-pixel table, scikit-learn's ``load_digits`` with one sensor
  of cost 1 per pixel: the bundled digits demo (``--digits-source demo``), or
  the same table written to a CSV and uploaded on the Data page as a user
  table (``--digits-source upload``; the app's suggested sensors: one per
  column, cost 1).

It records the seconds from pressing Train to the result being shown (the
Train page's "Results on the test set" and the sidebar's "Trained in"), next
to the app's own "Trained in N s" and the Train page's estimate. Meanwhile it
reads the sidebar's progress bar every ``--sample-every`` seconds (its value,
its text such as "N of M nodes", and the time left such as "about N s left")
and reports whether the bar showed the end (all nodes done, or at least 90 %)
while more than 10 % of the time was still to come, the largest such gap,
whether the bar ever moved backwards, its largest lead over the elapsed
share of the time and its longest stall. The app redraws the bar once a
second, so a gap is known to about a second. It prints one line per run and
table, the samples every ``--print-every`` seconds and at each change of
stage, and a summary. Each training is bounded by ``--max-minutes``; the load
averages are printed before and after each. ``--screenshots`` saves each
result page, and the bar's first frame at its end, in ``test-artifacts/``.
``--retrain 0.05 0.1`` then sets each cost scale on the Train page and
trains again, as a what-if change would (the same checks, and whether the
page said the bank is reused).

    PYTHONPATH=$PWD python benchmarks/bench_app_timings.py [--runs 2] \
        [--data landsat digits] [--digits-source demo|upload] [--retrain 0.05]

The machine is shared: say what else ran beside it.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.e2e.browser import (  # noqa: E402
    ARTIFACTS,
    CHROMIUM,
    CHROMIUM_ARGS,
    IDLE,
    VIEWPORT,
    streamlit_server,
)

PAGE_TIMEOUT = 180_000  # milliseconds for a page to load or settle
NEAR_END = 0.9  # the bar's value that counts as "at the end"
TIME_LEFT_SHARE = 0.1  # more than this share of the time still to come: a gap
NODES = re.compile(r"(\d+) of (\d+) nodes")
LEFT = re.compile(r"(about [^·]*? left|almost done|estimating the time left)")
TRAINED = re.compile(r"Trained in ([\d.]+) s")
ESTIMATE = re.compile(r"roughly ([^)]+)")
REUSED = "already fitted"  # the Train page, when a retrain reuses the bank
# The sidebar's progress bar: its value (0-100) and its text.
READ_BAR = """() => {
    const bar = document.querySelector(
        "[data-testid='stSidebar'] [data-testid='stProgress'] [role='progressbar']");
    if (!bar) return null;
    const box = bar.closest("[data-testid='stProgress']");
    const panel = box.closest("[data-testid='stVerticalBlock']");
    return {value: Number(bar.getAttribute('aria-valuenow')),
            text: box.innerText.trim(), panel: panel ? panel.innerText : ''};
}"""


@dataclass
class Sample:
    t: float  # seconds after Train was pressed
    fraction: float
    text: str
    left: str


@dataclass
class Result:
    data: str
    run: int
    seconds: float | None = None  # press to result; None: not done in time
    app_seconds: float | None = None  # the app's own "Trained in"
    sidebar_at: float | None = None  # the sidebar said "Trained in" (first seen)
    estimate: str = ""
    outcome: str = ""
    samples: list[Sample] = field(default_factory=list)
    load_before: str = ""
    load_after: str = ""
    reused: bool = False  # the Train page said the bank is already fitted

    # ------------------------------------------------------- the bar's checks
    def first(self, test) -> Sample | None:
        return next((s for s in self.samples if test(s)), None)

    def near_end(self) -> Sample | None:
        """The first sample at the bar's end: 90 % or all nodes done."""
        return self.first(lambda s: s.fraction >= NEAR_END or all_nodes(s.text))

    def gap(self) -> float | None:
        """Seconds still to come when the bar first reached its end."""
        s = self.near_end()
        return None if s is None or self.seconds is None else self.seconds - s.t

    def too_early(self) -> bool:
        gap = self.gap()
        return gap is not None and gap > TIME_LEFT_SHARE * self.seconds

    def backwards(self) -> list[tuple[Sample, Sample]]:
        pairs = zip(self.samples, self.samples[1:], strict=False)
        return [(a, b) for a, b in pairs if b.fraction < a.fraction - 1e-9]

    def stall(self) -> tuple[float, Sample] | None:
        """The longest time the bar held one value before the end, and it."""
        best, since = None, None
        for a, b in zip(self.samples, self.samples[1:], strict=False):
            since = a if since is None or a.fraction != since.fraction else since
            if b.fraction != since.fraction and (
                best is None or b.t - since.t > best[0]
            ):
                best = (b.t - since.t, since)
        return best

    def lead(self) -> tuple[float, float] | None:
        """The bar's largest lead over the elapsed share of the time, and when."""
        if not self.samples or not self.seconds:
            return None
        s = max(self.samples, key=lambda s: s.fraction - s.t / self.seconds)
        return s.fraction - s.t / self.seconds, s.t


def all_nodes(text: str) -> bool:
    m = NODES.search(text)
    return m is not None and m.group(1) == m.group(2)


def loadavg() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def digits_csv(folder: Path) -> Path:
    """scikit-learn's digits as a user CSV: columns r0c0..r7c7 and the label."""
    import pandas as pd
    from sklearn.datasets import load_digits

    images = load_digits()
    columns = [f"r{r}c{c}" for r in range(8) for c in range(8)]
    frame = pd.DataFrame(images.data.astype(int), columns=columns)
    frame["label"] = images.target
    path = folder / "digits64.csv"
    frame.to_csv(path, index=False)
    return path


def settle(page) -> None:
    page.wait_for_timeout(300)
    page.wait_for_selector(IDLE, timeout=PAGE_TIMEOUT)
    page.wait_for_timeout(200)


def click_nav(page, title: str, heading: str) -> None:
    page.locator("[data-testid='stSidebarNav'] a", has_text=title).first.click()
    page.wait_for_selector(f"h1:has-text('{heading}')", timeout=PAGE_TIMEOUT)
    settle(page)


def upload(page, path: Path) -> None:
    """Use ``path`` for training, as a user would on the Data page."""
    page.get_by_text("Upload a CSV").click()
    settle(page)
    page.locator(
        "[data-testid='stFileUploader'] input[type='file']"
    ).first.set_input_files(str(path))
    use = page.get_by_role("button", name="Use this table for training")
    use.wait_for(timeout=PAGE_TIMEOUT)
    settle(page)
    use.click()
    settle(page)
    switch = page.get_by_role("button", name=f"Switch to {path.name}")
    if switch.count():
        switch.click()
        settle(page)


def shoot(page, name: str, *, full_page: bool) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(
        path=str(ARTIFACTS / f"app_timings_{name}.png"), full_page=full_page
    )


def main_text(page) -> str:
    return page.locator("[data-testid='stMain']").inner_text(timeout=PAGE_TIMEOUT)


def sidebar_text(page) -> str:
    return page.locator("[data-testid='stSidebar']").inner_text(timeout=PAGE_TIMEOUT)


def measure(
    browser, url: str, data: str, run: int, args, csv: Path | None
) -> list[Result]:
    """One fresh session: open the table, press Train, sample until the
    result; then, per ``--retrain`` cost scale, set it and train again."""
    label = data if csv is None else f"{data} (upload)"
    name = label.replace(" (upload)", "-upload")
    context = browser.new_context(viewport=VIEWPORT)
    page = context.new_page()
    results = []
    try:
        link = "/?demo=landsat" if data == "landsat" else "/?demo=digits"
        if csv is not None:
            link = "/?demo=landsat"  # then the upload replaces it
        page.goto(url + link, timeout=PAGE_TIMEOUT)
        settle(page)
        if csv is not None:
            upload(page, csv)
        click_nav(page, "Train", "Train")
        results.append(train_once(page, Result(label, run), args, f"{name}_run{run}"))
        for scale in args.retrain:
            if results[-1].outcome != "trained":
                break
            settle(page)
            page.get_by_text("Cost scale", exact=True).first.click()
            settle(page)
            box = page.get_by_role("spinbutton", name="Cost scale")
            box.fill(f"{scale:g}")
            box.press("Enter")
            settle(page)
            again = Result(f"{label} at {scale:g}", run)
            again.reused = REUSED in main_text(page)
            results.append(
                train_once(page, again, args, f"{name}_run{run}_at_{scale:g}")
            )
    finally:
        context.close()
    return results


def train_once(page, result: Result, args, name: str) -> Result:
    """Press Train on the Train page and sample the bar until the result."""
    found = ESTIMATE.search(main_text(page))
    result.estimate = found.group(1) if found else "?"
    result.load_before = loadavg()
    before = TRAINED.search(sidebar_text(page))
    button = page.get_by_role("button", name="Train", exact=True)
    button.wait_for(timeout=PAGE_TIMEOUT)
    start = time.perf_counter()
    button.click()
    deadline = start + 60 * args.max_minutes
    shown = page.get_by_text("Results on the test set")
    while time.perf_counter() < deadline:
        now = time.perf_counter() - start
        try:
            bar = page.evaluate(READ_BAR)
        except Exception:  # noqa: BLE001 - being redrawn: read it next time
            bar = None
        if bar is not None and not bar["text"].startswith("Waiting"):
            left = LEFT.search(bar["panel"])
            result.samples.append(
                Sample(
                    now,
                    bar["value"] / 100,
                    bar["text"],
                    left.group(1) if left else "",
                )
            )
            if args.screenshots and result.near_end() is result.samples[-1]:
                shoot(page, f"{name}_bar_end", full_page=False)
        side = "" if bar is not None else sidebar_text(page)
        trained = TRAINED.search(side or sidebar_text(page))
        new = trained is not None
        if before is not None and new:
            # A retrain's sidebar says "Trained in" from the last training
            # until its own bar has come and gone (or the words differ).
            seen = bool(result.samples) or trained.group(0) != before.group(0)
            new = bar is None and seen
        if result.sidebar_at is None and new and side:
            result.sidebar_at = time.perf_counter() - start
        if shown.count() and new:
            result.seconds = time.perf_counter() - start
            result.outcome = "trained"
            break
        if page.locator("[data-testid='stException']").count():
            result.outcome = "exception"
            break
        if "failed" in side.lower() or "unexpected" in side.lower():
            result.outcome = "failed"
            break
        wait = args.sample_every - (time.perf_counter() - start - now)
        if wait > 0:
            page.wait_for_timeout(1000 * wait)
    else:
        result.outcome = f"not done in {args.max_minutes:g} min"
    result.load_after = loadavg()
    found = TRAINED.search(sidebar_text(page))
    result.app_seconds = float(found.group(1)) if found else None
    if args.screenshots or result.outcome != "trained":
        shoot(page, name, full_page=True)
    return result


def report_run(r: Result, print_every: float) -> None:
    took = "-" if r.seconds is None else f"{r.seconds:.1f} s"
    app = "-" if r.app_seconds is None else f"{r.app_seconds:.1f} s"
    print(
        f"{r.data:8} run {r.run}: {r.outcome}; press-to-result {took} (app says "
        f"{app}; estimate {r.estimate}); load {r.load_before} -> {r.load_after}"
        + ("; the bank reused" if r.reused else "")
    )
    if r.seconds is not None and r.samples:
        side = "-" if r.sidebar_at is None else f"{r.sidebar_at:.1f} s"
        print(
            f"  last bar seen at {r.samples[-1].t:.1f} s "
            f'({r.samples[-1].fraction:.0%}); the sidebar\'s "Trained in" '
            f"first seen at {side}; the result at {r.seconds:.1f} s"
        )
    end = r.near_end()
    gap = r.gap()
    if end is not None and gap is not None:
        print(
            f"  bar at its end at {end.t:.1f} s ({end.fraction:.0%}, "
            f"{end.text!r}): {gap:.1f} s = {gap / r.seconds:.0%} of the time "
            f"still to come{' (TOO EARLY)' if r.too_early() else ''}"
        )
    lead = r.lead()
    if lead is not None:
        print(
            f"  bar's largest lead over the elapsed time: {lead[0]:+.0%} at "
            f"{lead[1]:.1f} s"
        )
    stall = r.stall()
    if stall is not None:
        print(
            f"  bar's longest stall: {stall[0]:.1f} s at {stall[1].fraction:.0%} "
            f"from {stall[1].t:.1f} s ({stall[1].text!r})"
        )
    back = r.backwards()
    print(
        "  bar moved backwards: "
        + (
            "no"
            if not back
            else f"{len(back)}x, e.g. {back[0][0].fraction:.1%} at "
            f"{back[0][0].t:.1f} s -> {back[0][1].fraction:.1%} at {back[0][1].t:.1f} s"
        )
        + f"; {len(r.samples)} samples"
    )
    next_print, stage = 0.0, None
    for i, s in enumerate(r.samples):
        # Every --print-every seconds, and whenever the stage's words change.
        words = re.sub(r"\d+", "N", s.text)
        if s.t >= next_print or words != stage or i == len(r.samples) - 1:
            stage = words
            print(f"    {s.t:6.1f} s {s.fraction:6.1%}  {s.text}  [{s.left}]")
            next_print = s.t + print_every


def summary(results: list[Result]) -> None:
    print("\nSummary")
    for data in dict.fromkeys(r.data for r in results):
        rs = [r for r in results if r.data == data]
        done = [r.seconds for r in rs if r.seconds is not None]
        times = ", ".join(f"{t:.1f}" for t in done) or "-"
        median = f"median {statistics.median(done):.1f} s" if done else "no result"
        gaps = [(r.gap(), r) for r in rs if r.gap() is not None]
        worst = max(gaps, key=lambda g: g[0] / g[1].seconds, default=None)
        worst_words = (
            "-"
            if worst is None
            else f"{worst[0]:.1f} s = {worst[0] / worst[1].seconds:.0%} of "
            f"{worst[1].seconds:.1f} s (run {worst[1].run})"
        )
        print(
            f"  {data}: press-to-result {times} s ({median}; {len(done)} of "
            f"{len(rs)} trained)"
        )
        print(
            f"    bar at its end with >{TIME_LEFT_SHARE:.0%} of the time to come: "
            f"{sum(r.too_early() for r in rs)} of {len(rs)} runs; worst gap "
            f"{worst_words}; moved backwards in "
            f"{sum(bool(r.backwards()) for r in rs)} of {len(rs)} runs"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--runs",
        type=int,
        default=1,
        help="trainings per table, each in a fresh session",
    )
    parser.add_argument(
        "--data",
        nargs="+",
        choices=["landsat", "digits"],
        default=["landsat", "digits"],
    )
    parser.add_argument("--digits-source", choices=["demo", "upload"], default="demo")
    parser.add_argument(
        "--retrain",
        nargs="*",
        type=float,
        default=[],
        metavar="SCALE",
        help="after each first training, train again at these cost scales "
        "(a what-if change: the bank is reused)",
    )
    parser.add_argument(
        "--sample-every", type=float, default=0.25, help="seconds between bar readings"
    )
    parser.add_argument(
        "--print-every", type=float, default=2.0, help="seconds between printed samples"
    )
    parser.add_argument(
        "--max-minutes", type=float, default=20.0, help="bound of each training"
    )
    parser.add_argument("--workers", help="BUDGETDAG_WORKERS for the server")
    parser.add_argument(
        "--screenshots",
        action="store_true",
        help="save the pages under test-artifacts/",
    )
    args = parser.parse_args()
    env = {} if args.workers is None else {"BUDGETDAG_WORKERS": args.workers}

    from playwright.sync_api import sync_playwright

    results: list[Result] = []
    print(f"load averages at the start: {loadavg()} ({os.cpu_count()} cores)")
    with (
        tempfile.TemporaryDirectory() as tmp,
        streamlit_server(env=env, log_name="app-timings") as url,
        sync_playwright() as p,
    ):
        csv = digits_csv(Path(tmp)) if args.digits_source == "upload" else None
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            for run in range(1, args.runs + 1):
                for data in args.data:
                    for r in measure(
                        browser, url, data, run, args, csv if data == "digits" else None
                    ):
                        report_run(r, args.print_every)
                        results.append(r)
                        sys.stdout.flush()
        finally:
            browser.close()
    summary(results)
    print(f"load averages at the end: {loadavg()}")


if __name__ == "__main__":
    main()
