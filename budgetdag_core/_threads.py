"""One OpenMP/BLAS thread for the many small fits and predictions, thread-safely."""

from __future__ import annotations

import contextlib
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import joblib
from joblib.parallel import get_active_backend
from sklearn.utils.parallel import Parallel, delayed
from threadpoolctl import ThreadpoolController

_controller_for: tuple[int, ThreadpoolController] | None = None


def _controller() -> ThreadpoolController:
    """The loaded OpenMP/BLAS libraries, inspected anew after an import.

    Inspecting them is slow next to a small fit, so the answer is kept while
    no module has been imported since. A module imported later can bring its
    own runtime (LightGBM's libgomp beside scikit-learn's), which a controller
    made before it would leave at full threads.
    """
    global _controller_for
    modules = len(sys.modules)
    if _controller_for is None or _controller_for[0] != modules:
        _controller_for = (modules, ThreadpoolController())
    return _controller_for[1]


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
    function: Callable[[Any], Any],
    items: Sequence[Any],
    workers: int,
    done: Callable[[int], None] | None = None,
) -> list[Any]:
    """``[function(item) for item in items]``, in up to ``workers`` threads of
    one OpenMP/BLAS thread each (the caller holds :func:`single_threaded`).
    Predictions nested in a worker run in that worker's thread. ``done(i)``
    is called in the calling thread once the first ``i`` results are in."""
    if workers <= 1:
        return _gathered(map(function, items), done)

    def one(item: Any) -> Any:
        _in_worker.active = True
        try:
            with single_threaded():
                return function(item)
        finally:
            _in_worker.active = False

    with ThreadPoolExecutor(max_workers=workers) as pool:
        return _gathered(pool.map(one, items), done)  # in order, as they come


def _gathered(results: Iterator[Any], done: Callable[[int], None] | None) -> list[Any]:
    """The ``results`` in a list, ``done(i)`` told as the i-th comes in."""
    out = []
    for result in results:
        out.append(result)
        if done is not None:
            done(len(out))
    return out


def on_cluster() -> bool:
    """Whether a joblib backend chosen with ``joblib.parallel_config`` runs
    tasks away from this process's threads (Dask, Ray, loky), and this code
    is not itself one of a Dask cluster's tasks.

    There the many-sensor fit's growth rounds and Graph-Reduce's node fits
    go to the backend whatever their size: the user asked for the cluster.
    Without such a backend they keep their local thresholds (threads only
    where they pay). Inside a task (a sweep's point on a worker) the work
    stays in the task's thread: sending it back to the scheduler only adds
    round trips.
    """
    # prefer="threads" gives joblib's threading backend unless a backend
    # was chosen explicitly (joblib's own rule for a soft hint).
    backend, _ = get_active_backend(prefer="threads")
    if getattr(backend, "uses_threads", False):
        return False
    try:
        from distributed import get_worker
    except ImportError:  # no Dask installed: not on a Dask worker
        return True
    try:
        get_worker()
    except ValueError:  # not in a Dask task
        return True
    return False


@contextlib.contextmanager
def task_map(
    function: Callable[..., Any], shared: tuple[Any, ...], n_jobs: int | None
) -> Iterator[Callable[[Sequence[tuple[Any, ...]]], list[Any]]]:
    """A ``run(calls)`` giving ``[function(*shared, *args) for args in
    calls]`` in order: each call a task of the backend :func:`on_cluster`
    finds (unless ``n_jobs == 1``), else in up to ``n_jobs`` threads
    (:func:`map_in_threads`; ``n_jobs=None``: this thread).

    Give big arrays and models in ``shared``, not in a closure: on a Dask
    backend they reach each worker once for the whole block
    (``client.scatter``, released on exit), where a closure travels with
    every task. (joblib itself scatters only arguments whose
    ``dask.sizeof`` exceeds 1 kB, once per call, and sizes a model object
    such as a bank by its shell, so a bank would travel in every task.)
    """
    remote = on_cluster() and n_jobs != 1
    client = getattr(get_active_backend()[0], "client", None) if remote else None
    refs = shared if client is None else tuple(client.scatter(list(shared), hash=False))
    workers = 1 if remote else threads_for(n_jobs)

    def one(args: tuple[Any, ...]) -> Any:
        return function(*shared, *args)

    def run(calls: Sequence[tuple[Any, ...]]) -> list[Any]:
        if not remote and (workers <= 1 or len(calls) <= 1):
            return [one(args) for args in calls]
        if not remote:
            # Up to n_jobs threads of this process (whatever backend a Dask
            # task runs under), one BLAS thread each.
            with single_threaded():
                return map_in_threads(one, calls, min(workers, len(calls)))
        tasks = (delayed(function)(*refs, *args) for args in calls)
        return list(Parallel(n_jobs=n_jobs)(tasks))

    try:
        yield run
    finally:
        if client is not None:
            for future in refs:
                future.release()
