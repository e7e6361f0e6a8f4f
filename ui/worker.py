"""A worker process of the app's job pool (:mod:`ui.jobs`); no Streamlit.

Started by the pool as ``python -m ui.worker FD`` with one end of a socket
pair as file descriptor ``FD``. It runs one job at a time, in its main
thread. The pool sends ``("run", job_id, payload, bank_reused, subsets,
stages)`` (``stages``: more arguments of the progress bar's reporter),
``payload`` being ``(work, shared)`` pickled apart (so that a job whose work
cannot be rebuilt here fails alone); the worker calls ``work(progress)`` and
answers with ``("progress", job_id, fraction, text)`` messages, then one of
``("done", job_id, result)``, ``("failed", job_id, error, traceback)`` or
``("stopped", job_id)``. The result travels pickled too, each object of
``shared`` (e.g. the classifier bank a training reused) named by its index
instead of copied: the server puts its own object back in its place
(:func:`dumps_result`). A result whose many-sensor candidates keep held-out
growths (what the session's next refit reuses, most of the result's bytes)
is sent without them, so that the page shows it sooner; ``("held_out",
job_id, growths)`` follows at once (:func:`attach_held_out`; ``growths``
None: they could not be pickled). ``("stop", job_id)`` makes the job's next
progress step raise :class:`Stopped`. A reader thread takes the messages, so
a stop arrives while the work runs; when the pool's end closes (the server
is gone) the worker exits at once.

The worker runs at a lower CPU priority than the server (:data:`NICE`), so
pages and the health check answer while every worker computes.
"""

from __future__ import annotations

import io
import os
import pickle
import queue
import sys
import threading
import traceback
from collections.abc import Sequence
from multiprocessing.connection import Connection
from typing import Any

from budgetdag_core.strategies import (
    StrategyBanks,
    held_out_apart,
    held_out_slots,
    restore_held_out,
)

NICE = 10
"""How much lower than the server's the workers' CPU priority is."""


class Stopped(Exception):
    """Raised inside the work at a progress step once Stop was pressed."""


def _sendable(exc: BaseException) -> BaseException:
    """``exc`` if it survives pickling, else a RuntimeError with its text."""
    try:
        pickle.loads(pickle.dumps(exc))
    except Exception:
        return RuntimeError(f"{type(exc).__name__}: {exc}")
    return exc


def dumps_result(result: Any, shared: Sequence[Any]) -> tuple[bytes, list]:
    """``result`` pickled with the objects of ``shared`` as their index, and
    the held-out growths of its many-sensor candidates apart (a list to
    pickle and send after it; empty: none)."""
    index = {id(obj): i for i, obj in enumerate(shared)}
    buffer = io.BytesIO()
    pickler = pickle.Pickler(buffer, protocol=5)
    pickler.persistent_id = lambda obj: index.get(id(obj))  # type: ignore[method-assign]
    with held_out_apart() as apart:
        pickler.dump(result)
    return buffer.getvalue(), apart


def loads_result(
    data: bytes, shared: Sequence[Any]
) -> tuple[Any, dict[int, StrategyBanks]]:
    """The result of :func:`dumps_result`, with ``shared``'s objects in place,
    and the candidates that wait for their held-out growths
    (:func:`attach_held_out`; empty: none)."""
    unpickler = pickle.Unpickler(io.BytesIO(data))
    unpickler.persistent_load = lambda i: shared[i]  # type: ignore[method-assign]
    with held_out_slots() as waiting:
        result = unpickler.load()
    return result, waiting


def attach_held_out(waiting: dict[int, StrategyBanks], data: bytes | None) -> None:
    """Give the candidates of :func:`loads_result` their held-out growths:
    ``data``, the list :func:`dumps_result` put apart, pickled (None: the
    worker could not send them)."""
    if data is not None:
        restore_held_out(waiting, pickle.loads(data))


class Worker:
    """The worker's side of the conversation (see the module docstring)."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn
        self.tasks: queue.Queue[tuple] = queue.Queue()
        self.stop_requested: set[int] = set()
        self.lock = threading.Lock()  # sends come from one thread at a time

    def send(self, message: tuple) -> None:
        with self.lock:
            self.conn.send(message)

    def read(self) -> None:
        """Take the pool's messages until its end closes, then exit."""
        try:
            while True:
                message = self.conn.recv()
                if message[0] == "stop":
                    self.stop_requested.add(message[1])
                else:
                    self.tasks.put(message)
        except (EOFError, OSError):
            os._exit(0)  # the server is gone: nobody waits for the result

    def run(
        self,
        job_id: int,
        work: bytes,
        bank_reused: bool,
        subsets: bool,
        stages: dict | None = None,
    ) -> None:
        from ui.training import ProgressReporter

        def report(fraction: float, text: str) -> None:
            self.send(("progress", job_id, fraction, text))

        reporter = ProgressReporter(
            report, bank_reused=bank_reused, subsets=subsets, **(stages or {})
        )

        def progress(stage: str, done: int, total: int) -> None:
            if job_id in self.stop_requested:
                raise Stopped
            reporter(stage, done, total)

        try:
            task, shared = pickle.loads(work)
            result = task(progress)
        except Stopped:
            self.send(("stopped", job_id))
            return
        except Exception as exc:
            self.send(("failed", job_id, _sendable(exc), traceback.format_exc()))
            return
        try:
            data, apart = dumps_result(result, shared)
        except Exception as exc:  # a result that cannot be pickled: a bug
            self.send(("failed", job_id, _sendable(exc), traceback.format_exc()))
            return
        self.send(("done", job_id, data))
        if apart:  # the session's next refit reuses them
            try:
                growths = pickle.dumps(apart, protocol=5)
            except Exception:  # pickled inside the result before: a bug
                growths = None  # the refit grows them again
            self.send(("held_out", job_id, growths))

    def serve(self) -> None:
        threading.Thread(target=self.read, name="budgetdag-reader", daemon=True).start()
        self.send(("ready", os.getpid()))
        while True:
            _, job_id, work, *options = self.tasks.get()
            self.run(job_id, work, *options)


def main() -> None:
    os.nice(NICE)
    # What every job needs, imported before the first job arrives.
    import budgetdag_core  # noqa: F401
    import ui.training  # noqa: F401

    try:
        Worker(Connection(int(sys.argv[1]))).serve()
    except (EOFError, OSError):  # the pool's end closed: nobody to answer
        os._exit(0)


if __name__ == "__main__":
    main()
