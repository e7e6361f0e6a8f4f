"""Long work beside the page: a bounded pool of worker processes (no Streamlit).

Training, curve tracing and budget fits run in worker processes
(:mod:`ui.worker`), at most :func:`ui.training.app_workers` at once; more
jobs wait in one first-come queue, whose place the sidebar shows. The
server process only waits for the workers' messages, so pages and the
health check answer while they compute, however many users train at once.

The page that starts a job passes everything the work needs as one
picklable callable (a module-level function with its arguments, e.g. a
``functools.partial``), called as ``work(progress)`` in a worker; a later
script run of the session reads ``job.result`` and applies it to the session
state (:func:`ui.widgets.collect_job`).

Jobs are kept by session token (:mod:`ui.store`) in this server process, so a
reloaded tab with the same token finds its queued, running or finished job;
the same job can be kept under two tokens (an address open in two tabs, see
:mod:`ui.session`), and each collects it once. Stop drops a queued job at
once; a running one stops at its next progress step, and its worker process
is ended (and later replaced) when it has not within :data:`STOP_GRACE`
seconds.
"""

from __future__ import annotations

import atexit
import itertools
import logging
import os
import pickle
import signal
import socket
import subprocess
import sys
import threading
import time
import warnings
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from budgetdag_core import Progress
from budgetdag_core.strategies import held_out_pickled

from .estimate import TimeLeft, work_ended, work_started, worker_ended
from .training import N_JOBS_VARIABLE, app_n_jobs, app_workers
from .worker import Stopped, attach_held_out, loads_result

__all__ = [
    "Job",
    "Stopped",
    "WorkerLost",
    "current",
    "forget",
    "rekey",
    "share",
    "submit",
]

log = logging.getLogger("budgetdag.app")

# Stop cancels a fit between its parallel tasks on purpose: joblib's note that
# it dropped the queued ones is expected here, not news for the server log.
warnings.filterwarnings(
    "ignore",
    message=r"\d+ tasks (which were still being processed|have been successfully"
    " executed)",
    category=UserWarning,
)

QUEUED, RUNNING = "queued", "running"
DONE, FAILED, STOPPED = "done", "failed", "stopped"
STOP_GRACE = 5.0
"""Seconds a running job has to reach its next progress step after Stop."""
START_TIMEOUT = 120.0
"""Seconds a new worker process may take to import the library."""
POLL = 0.2  # seconds between looks at Stop while a worker computes
#: Longest wait for a result's held-out growths after the result (its worker
#: pickles and sends them at once: a fraction of a second).
HELD_OUT_WAIT = 60.0
ROOT = Path(__file__).resolve().parents[1]
_ids = itertools.count(1)


@dataclass(eq=False)
class Job:
    """One piece of long work and what it has reported.

    ``work(progress)`` runs in a worker process; ``progress`` is the core's
    ``progress(stage, done, total)`` callback (raising :class:`Stopped` after
    :meth:`stop`). ``what`` names the work for the applier (``"train"``,
    ``"sweep"``, ...); ``context`` holds what the applier needs besides the
    result (plain values, texts, the function that applies the result); it
    stays in this process. The objects of ``shared`` that the result holds
    (e.g. the classifier bank a training reuses) come back as these very
    objects, not as copies: the session keeps one bank, not two.
    """

    what: str
    label: str
    work: Callable[[Progress], Any]
    bank_reused: bool = False
    subsets: bool = False
    #: More keyword arguments of the worker's ``ui.training.ProgressReporter``
    #: (``sparse``, ``evaluate_share``): how the bar is shared among stages.
    stages: dict[str, Any] = field(default_factory=dict)
    context: dict[str, Any] = field(default_factory=dict)
    shared: tuple[Any, ...] = ()
    estimate: float | None = None  # seconds the work should take, if known
    fraction: float = 0.0
    text: str = "Waiting for a free worker"
    status: str = QUEUED
    result: Any = None
    error: BaseException | None = None
    trace: str = ""  # the worker's traceback of an error, for the server log
    submitted: float = field(default_factory=time.monotonic)
    started: float | None = None
    finished: float | None = None
    collected: bool = False
    id: int = field(default_factory=lambda: next(_ids))
    _cancel: threading.Event = field(default_factory=threading.Event, repr=False)
    _ended: threading.Event = field(default_factory=threading.Event, repr=False)
    _pool: Pool | None = field(default=None, repr=False)
    _left: TimeLeft = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._left = TimeLeft(self.estimate)

    def again(self) -> Job:
        """A new job of the same work, not yet queued (a retry)."""
        return Job(
            what=self.what,
            label=self.label,
            work=self.work,
            bank_reused=self.bank_reused,
            subsets=self.subsets,
            stages=self.stages,
            context=self.context,
            shared=self.shared,
            estimate=self.estimate,
        )

    def start(self) -> Job:
        """Queue the work in the server's pool (no session); returns ``self``."""
        return pool().submit(self)

    def stop(self) -> None:
        """Drop the job if it waits; else ask it to stop at its next step."""
        self._cancel.set()
        if self._pool is not None:
            self._pool.cancel(self)

    def _finish(
        self,
        status: str,
        result: Any = None,
        error: BaseException | None = None,
        trace: str = "",
    ) -> None:
        self.result, self.error, self.trace = result, error, trace
        if status == DONE:
            self.fraction = 1.0
        self.finished = time.monotonic()
        self.status = status
        self._ended.set()

    @property
    def stopping(self) -> bool:
        return self._cancel.is_set() and self.running

    @property
    def running(self) -> bool:
        """Not finished yet: waiting in the queue or computing."""
        return self.status in (QUEUED, RUNNING)

    @property
    def queued(self) -> bool:
        return self.status == QUEUED

    @property
    def position(self) -> int | None:
        """The job's place in the queue (1: next), or None when not waiting."""
        if not self.queued or self._pool is None:
            return None
        return self._pool.position(self)

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the work ends (tests, scripts); whether it has."""
        self._ended.wait(timeout)
        return not self.running

    def elapsed(self) -> float:
        """Seconds of work so far (0 while queued; until the end once finished)."""
        if self.started is None:
            return 0.0
        end = time.monotonic() if self.finished is None else self.finished
        return end - self.started

    def waited(self) -> float:
        """Seconds spent in the queue (so far)."""
        end = self.started or self.finished or time.monotonic()
        return end - self.submitted

    def remaining(self) -> float | None:
        """The seconds left (:class:`ui.estimate.TimeLeft`): from the estimate,
        then more and more from the pace; counts down, and goes up only with
        :attr:`revised` set. None while queued, or with nothing to go on."""
        if self.status != RUNNING:
            return None
        return self._left.update(self.elapsed(), self.fraction)

    @property
    def revised(self) -> bool:
        """Whether the seconds left were revised upwards (slower than thought)."""
        return self._left.revised

    def left_at_most(self) -> float:
        """The seconds left for planning the queue: the last shown figure, or
        the estimate (0 when unknown)."""
        if self._left.shown is not None:
            return max(0.0, self._left.shown - (self.elapsed() - self._left.at))
        return self.estimate or 0.0


class WorkerLost(RuntimeError):
    """A job's worker process ended without an answer (killed, e.g. by the
    kernel's out-of-memory killer): the work itself may well be fine."""

    @classmethod
    def of_exit(cls, code: int | None) -> WorkerLost:
        if code is not None and code < 0:
            try:
                name = signal.Signals(-code).name
            except ValueError:
                name = f"signal {-code}"
            oom = -code == signal.SIGKILL
            how = f"its worker process was killed ({name}" + (
                ", as the system does when it runs out of memory)" if oom else ")"
            )
        else:
            how = f"its worker process ended unexpectedly (exit code {code})"
        return cls(how)


class WorkerProcess:
    """One ``python -m ui.worker`` process and our end of its socket."""

    def __init__(self) -> None:
        ours, theirs = socket.socketpair()
        # The worker imports what this process imports (the app's `ui`, this
        # checkout's library) and uses its share of the cores.
        paths = [str(ROOT), *(p for p in sys.path if p and os.path.isdir(p))]
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(dict.fromkeys(paths))}
        env[N_JOBS_VARIABLE] = str(app_n_jobs())
        with theirs:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "ui.worker", str(theirs.fileno())],
                pass_fds=[theirs.fileno()],
                env=env,
                cwd=ROOT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,  # Stop ends its helpers too (killpg)
            )
        self.conn = Connection(ours.detach())
        try:
            if not self.conn.poll(START_TIMEOUT):
                raise RuntimeError(f"no answer within {START_TIMEOUT:.0f} s")
            self.conn.recv()  # ("ready", pid)
        except (EOFError, OSError, RuntimeError) as exc:
            code = self.end()
            raise RuntimeError(
                f"A worker process could not start ({exc}; exit code {code}): see "
                "the terminal that runs Streamlit."
            ) from None

    def send(self, message: tuple) -> None:
        self.conn.send(message)

    def end(self) -> int | None:
        """Kill the process and its helpers; its exit code."""
        worker_ended(self.process.pid)
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        self.conn.close()
        try:
            return self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:  # pragma: no cover - a zombie
            return None


class Pool:
    """At most ``size`` jobs at once, each in its own worker process; the
    others wait in a first-come queue."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._cond = threading.Condition()
        self._queue: deque[Job] = deque()
        self._running = 0
        self._slots: list[_Slot] = []
        atexit.register(self.close)

    def submit(self, job: Job) -> Job:
        with self._cond:
            job._pool = self
            self._queue.append(job)
            if len(self._slots) < min(self.size, len(self._queue) + self._running):
                self._add_slot(warm=False)
            self._cond.notify()
        return job

    def warm(self) -> None:
        """Start every worker process now, in the background: the first jobs
        then do not wait for a worker to import the library."""
        with self._cond:
            while len(self._slots) < self.size:
                self._add_slot(warm=True)

    def _add_slot(self, warm: bool) -> None:
        slot = _Slot(self)
        self._slots.append(slot)
        threading.Thread(
            target=slot.loop, args=(warm,), name="budgetdag-slot", daemon=True
        ).start()

    def wait_seconds(self, job: Job | None = None) -> float:
        """Seconds until ``job`` (queued), or a job submitted now, should start.

        Replays the queue on the slots: each running job frees its slot when
        its time left has passed, each waiting job ahead takes the first free
        slot for its estimate (jobs without one count as instant).
        """
        with self._cond:
            running = [j for s in self._slots if (j := s.job) is not None]
            ahead = list(self._queue)
        if job is not None and job in ahead:
            ahead = ahead[: ahead.index(job)]
        free = sorted(j.left_at_most() for j in running)
        free += [0.0] * max(0, self.size - len(free))
        free = sorted(free)[: self.size]
        for waiting in ahead:
            free[0] += waiting.estimate or 0.0
            free.sort()
        return free[0]

    def position(self, job: Job) -> int | None:
        with self._cond:
            for place, waiting in enumerate(self._queue, start=1):
                if waiting is job:
                    return place
        return None

    def cancel(self, job: Job) -> bool:
        """Drop ``job`` if it still waits; whether it did."""
        with self._cond:
            if not any(waiting is job for waiting in self._queue):
                return False
            self._queue.remove(job)
        job._finish(STOPPED)
        return True

    @property
    def running(self) -> int:
        """Jobs computing now."""
        return self._running

    @property
    def waiting(self) -> int:
        return len(self._queue)

    def take(self) -> Job:
        """The next job (blocks until there is one), marked as running."""
        with self._cond:
            while not self._queue:
                self._cond.wait()
            job = self._queue.popleft()
            job.started, job.status = time.monotonic(), RUNNING
            job.text = "Starting"
            self._running += 1
            work_started(app_n_jobs())
            return job

    def done(self) -> None:
        with self._cond:
            self._running -= 1

    def close(self) -> None:
        """End every worker process (the server stops)."""
        for slot in self._slots:
            slot.end_worker()


class _Slot:
    """A thread of the pool: runs one job at a time in its worker process."""

    def __init__(self, owner: Pool) -> None:
        self.owner = owner
        self.worker: WorkerProcess | None = None
        self.job: Job | None = None  # the job it runs now

    def loop(self, warm: bool = False) -> None:
        if warm:
            try:
                self.worker = WorkerProcess()
            except Exception:  # the first job tries again, and says why
                log.exception("Could not start a worker process")
        while True:
            job = self.job = self.owner.take()
            try:
                self.run(job)
            except Exception as exc:  # a bug here must not end the slot
                log.exception("The job pool failed on %s", job.label)
                self.end_worker()
                job._finish(FAILED, error=exc)
            finally:
                self.job = None
                self.owner.done()
                if job.started is not None:
                    worker = self.worker
                    work_ended(
                        job.started,
                        job.finished or time.monotonic(),
                        app_n_jobs(),
                        worker=None if worker is None else worker.process.pid,
                    )

    def replace_worker(self) -> None:
        """Start a new worker process in place of a lost one, so that the
        next job (a retry) does not wait for it to import the library."""
        try:
            self.worker = WorkerProcess()
        except Exception:  # the next job tries again, and says why
            log.exception("Could not start a worker process")

    def end_worker(self) -> int | None:
        worker, self.worker = self.worker, None
        return None if worker is None else worker.end()

    def run(self, job: Job) -> None:
        try:
            with held_out_pickled():  # a refit in the worker reuses them
                payload = pickle.dumps((job.work, job.shared), protocol=5)
        except Exception as exc:
            job._finish(
                FAILED,
                error=TypeError(f"the work cannot be sent to a worker process ({exc})"),
            )
            return
        task = ("run", job.id, payload, job.bank_reused, job.subsets, job.stages)
        for attempt in (1, 2):
            if self.worker is None:
                job.text = "Starting a worker process"
                self.worker = WorkerProcess()
            if job._cancel.is_set():  # stopped while its worker started
                job._finish(STOPPED)
                return
            try:
                self.worker.send(task)
                break
            except OSError:  # the idle worker was ended (e.g. out of memory)
                self.end_worker()
                if attempt == 2:
                    raise
        self.follow(job, self.worker)

    def follow(self, job: Job, worker: WorkerProcess) -> None:
        """Pass on the worker's messages about ``job`` until it ends."""
        asked: float | None = None
        while True:
            if asked is not None and time.monotonic() - asked > STOP_GRACE:
                self.end_worker()  # a step that takes long: end it now
                job._finish(STOPPED)
                return
            try:
                if job._cancel.is_set() and asked is None:
                    worker.send(("stop", job.id))
                    asked = time.monotonic()
                if not worker.conn.poll(POLL):
                    continue
                message = worker.conn.recv()
            except (EOFError, OSError):
                pid = worker.process.pid
                code = self.end_worker()
                if asked is not None:
                    job._finish(STOPPED)
                    return
                lost = WorkerLost.of_exit(code)
                log.warning("%s: %s (process %d)", job.label, lost, pid)
                job._finish(FAILED, error=lost)
                self.replace_worker()
                return
            kind, about = message[0], message[1]
            if about != job.id:
                continue  # a late word about an earlier job
            if kind == "progress":
                job.fraction, job.text = message[2], message[3]
            elif kind == "done":
                try:
                    result, waiting = loads_result(message[2], job.shared)
                except Exception as exc:  # e.g. a class this process lacks
                    job._finish(FAILED, error=exc)
                else:
                    job._finish(DONE, result=result)
                    if waiting:
                        self.take_held_out(job, worker, waiting)
                return
            elif kind == "failed":
                job._finish(FAILED, error=message[2], trace=message[3])
                return
            elif kind == "stopped":
                job._finish(STOPPED)
                return

    def take_held_out(
        self, job: Job, worker: WorkerProcess, waiting: dict[int, Any]
    ) -> None:
        """Give ``job``'s result the held-out growths its worker sends after
        it (:mod:`ui.worker`), for the session's next refit. The page shows
        the result meanwhile; a refit that starts before they arrive grows
        them again. A worker that is lost here is replaced by the next job."""
        deadline = time.monotonic() + HELD_OUT_WAIT
        try:
            while time.monotonic() < deadline:
                if not worker.conn.poll(POLL):
                    continue
                message = worker.conn.recv()
                if message[0] == "held_out" and message[1] == job.id:
                    attach_held_out(waiting, message[2])
                    return
        except (EOFError, OSError):
            return
        except Exception:  # the result is fine without them: not the job's failure
            log.exception("%s: could not take its held-out growths", job.label)


_POOL: Pool | None = None
_POOL_LOCK = threading.Lock()


def pool() -> Pool:
    """The server's pool (created on first use, sized by ``app_workers``)."""
    global _POOL
    with _POOL_LOCK:
        if _POOL is None:
            _POOL = Pool(app_workers())
        return _POOL


_JOBS: dict[str, Job] = {}
_LOCK = threading.Lock()
STALE_SECONDS = 24 * 3600
"""A finished job no session collected (its tab closed) is dropped after this."""


def current(token: str | None) -> Job | None:
    """The session's last job (queued, running or not yet collected), or None."""
    if token is None:
        return None
    with _LOCK:
        return _JOBS.get(token)


def submit(token: str, job: Job) -> Job:
    """Queue ``job`` for the session ``token``.

    Raises ``ValueError`` while another job of the session is queued or runs:
    one long job at a time per session (the machine's cores are shared).
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
    return pool().submit(job)


def rekey(old: str, new: str) -> None:
    """The job of session ``old`` (if any) now belongs to session ``new``."""
    with _LOCK:
        if old in _JOBS:
            _JOBS[new] = _JOBS.pop(old)


def share(token: str, other: str) -> None:
    """The job of session ``token`` (if any) also belongs to session ``other``:
    both follow it, and each collects its result once."""
    with _LOCK:
        if token in _JOBS:
            _JOBS[other] = _JOBS[token]


def forget(token: str, job: Job) -> None:
    """Drop ``job`` from session ``token`` once collected (if it is still its
    last)."""
    with _LOCK:
        if _JOBS.get(token) is job:
            del _JOBS[token]
