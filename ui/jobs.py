"""Long work beside the page: one background job per browser session (no Streamlit).

Training, curve tracing and budget fits run in a worker thread so the user can
switch pages (or reload the tab) while they run. The worker only touches its
:class:`Job` (a plain object): the page that started it passes everything the
work needs, and a later script run of the same session reads ``job.result``
and applies it to the session state (:func:`ui.widgets.collect_job`).

Jobs are kept by session token (:mod:`ui.store`), in this server process, so a
reloaded tab with the same token finds its running or finished job. Stop sets
the job's own cancel flag; the work stops at its next progress step.
"""

from __future__ import annotations

import threading
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from budgetdag_core import Progress

from .training import ProgressReporter

# Stop cancels a fit between its parallel tasks on purpose: joblib's note that
# it dropped the queued ones is expected here, not news for the server log.
warnings.filterwarnings(
    "ignore",
    message=r"\d+ tasks (which were still being processed|have been successfully"
    " executed)",
    category=UserWarning,
)

RUNNING, DONE, FAILED, STOPPED = "running", "done", "failed", "stopped"


class Stopped(Exception):
    """Raised inside the work at a progress step once Stop was pressed."""


@dataclass
class Job:
    """One piece of long work and what it has reported.

    ``work(progress)`` runs in the worker thread; ``progress`` is the core's
    ``progress(stage, done, total)`` callback (raising :class:`Stopped` after
    :meth:`stop`). ``what`` names the work for the applier (``"train"``,
    ``"sweep"``, ...); ``context`` holds what the applier needs besides the
    result (plain values, texts, the function that applies the result).
    """

    what: str
    label: str
    work: Callable[[Progress], Any]
    bank_reused: bool = False
    subsets: bool = False
    context: dict[str, Any] = field(default_factory=dict)
    fraction: float = 0.0
    text: str = "Starting"
    status: str = RUNNING
    result: Any = None
    error: BaseException | None = None
    started: float = field(default_factory=time.monotonic)
    finished: float | None = None
    collected: bool = False
    _cancel: threading.Event = field(default_factory=threading.Event, repr=False)
    _thread: threading.Thread | None = field(default=None, repr=False)

    def start(self) -> Job:
        """Run the work in a daemon thread; returns ``self``."""
        self._thread = threading.Thread(
            target=self._run, name=f"budgetdag-{self.what}", daemon=True
        )
        self._thread.start()
        return self

    def _report(self, fraction: float, text: str) -> None:
        self.fraction, self.text = fraction, text

    def _run(self) -> None:
        reporter = ProgressReporter(
            self._report, bank_reused=self.bank_reused, subsets=self.subsets
        )

        def progress(stage: str, done: int, total: int) -> None:
            if self._cancel.is_set():
                raise Stopped
            reporter(stage, done, total)

        try:
            result = self.work(progress)
        except Stopped:
            self.status = STOPPED
        except Exception as exc:  # shown in words by the page (collect_job)
            self.error, self.status = exc, FAILED
        else:
            self.result, self.fraction, self.status = result, 1.0, DONE
        finally:
            self.finished = time.monotonic()

    def stop(self) -> None:
        """Ask the work to stop at its next progress step."""
        self._cancel.set()

    @property
    def stopping(self) -> bool:
        return self._cancel.is_set() and self.status == RUNNING

    @property
    def running(self) -> bool:
        return self.status == RUNNING

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the work ends (tests, scripts); whether it has."""
        if self._thread is not None:
            self._thread.join(timeout)
        return not self.running

    def elapsed(self) -> float:
        """Seconds since the start (until the end once finished)."""
        end = time.monotonic() if self.finished is None else self.finished
        return end - self.started

    def remaining(self) -> float | None:
        """A rough estimate of the seconds left: elapsed time scaled by the
        share of the bar still to go; None until 2 % of it is done."""
        if not self.running or self.fraction < 0.02:
            return None
        return self.elapsed() * (1 - self.fraction) / self.fraction


_JOBS: dict[str, Job] = {}
_LOCK = threading.Lock()
STALE_SECONDS = 24 * 3600
"""A finished job no session collected (its tab closed) is dropped after this."""


def current(token: str | None) -> Job | None:
    """The session's last job (running or not yet collected), or None."""
    if token is None:
        return None
    with _LOCK:
        return _JOBS.get(token)


def submit(token: str, job: Job) -> Job:
    """Start ``job`` for the session ``token``.

    Raises ``ValueError`` while another job of the session runs: one long job
    at a time per session (the machine's cores are shared).
    """
    with _LOCK:
        running = _JOBS.get(token)
        if running is not None and running.running:
            raise ValueError(
                f"{running.label} is still running: wait for it, or press Stop in "
                "the sidebar, then try again."
            )
        _JOBS[token] = job
        now = time.monotonic()
        for name in [
            name
            for name, old in _JOBS.items()
            if old.finished is not None and now - old.finished > STALE_SECONDS
        ]:
            del _JOBS[name]
    return job.start()


def rekey(old: str, new: str) -> None:
    """The job of session ``old`` (if any) now belongs to session ``new``."""
    with _LOCK:
        if old in _JOBS:
            _JOBS[new] = _JOBS.pop(old)


def forget(token: str, job: Job) -> None:
    """Drop ``job`` once its result was collected (if it is still the last)."""
    with _LOCK:
        if _JOBS.get(token) is job:
            del _JOBS[token]
