"""One OpenMP/BLAS thread for the many small fits and predictions, thread-safely."""

from __future__ import annotations

import contextlib
import functools
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import joblib
from threadpoolctl import ThreadpoolController


@functools.cache
def _controller() -> ThreadpoolController:
    # Inspecting the loaded libraries is slow next to a fit: once per process.
    return ThreadpoolController()


_limit_lock = threading.Lock()
_limit_users = 0
_limiter: Any = None


@contextlib.contextmanager
def single_threaded() -> Iterator[None]:
    """Context limiting OpenMP/BLAS to one thread, for bank fits and predictions.

    The bank parallelises across fits (``n_jobs``); nested OpenMP threads in many
    short fits and small predictions only add overhead, and on a busy machine
    spin-waiting OpenMP threads make a short fit or a one-row prediction tens of
    times slower.

    Nested and concurrent uses share one limiter: the first entrant sets it,
    the last one out restores the original limits. Code that fits or predicts
    in threads holds this context in its own thread meanwhile (see
    ``bank._base.parallel_fits``), so the restore happens in the thread that
    set the limits: restored from a pool thread, an OpenBLAS build stayed at
    one thread for the rest of the process.
    """
    global _limit_users, _limiter
    with _limit_lock:
        if _limit_users == 0:
            _limiter = _controller().limit(limits=1)
        _limit_users += 1
    try:
        yield
    finally:
        with _limit_lock:
            _limit_users -= 1
            if _limit_users == 0:
                _limiter.restore_original_limits()
                _limiter = None


#: Set in the worker threads of :func:`map_in_threads`: work nested in them
#: (a bank call inside a routed row block) stays in its thread.
_in_worker = threading.local()


def threads_for(n_jobs: int | None) -> int:
    """Threads a prediction or calibration may use: ``n_jobs``, but one inside
    a worker of :func:`map_in_threads`."""
    if getattr(_in_worker, "active", False):
        return 1
    return joblib.effective_n_jobs(n_jobs)


def map_in_threads(
    function: Callable[[Any], Any], items: Sequence[Any], workers: int
) -> list[Any]:
    """``[function(item) for item in items]``, in up to ``workers`` threads of
    one OpenMP/BLAS thread each (the caller holds :func:`single_threaded`).
    Predictions nested in a worker run in that worker's thread."""
    if workers <= 1:
        return [function(item) for item in items]

    def one(item: Any) -> Any:
        _in_worker.active = True
        try:
            with single_threaded():
                return function(item)
        finally:
            _in_worker.active = False

    with ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(one, items))
