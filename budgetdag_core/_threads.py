"""One OpenMP/BLAS thread for the many small fits and predictions, thread-safely."""

from __future__ import annotations

import contextlib
import functools
import threading
from collections.abc import Iterator
from typing import Any

from threadpoolctl import ThreadpoolController


@functools.cache
def _controller() -> ThreadpoolController:
    # Inspecting the loaded libraries costs ~30 ms; do it once per process.
    return ThreadpoolController()


_limit_lock = threading.Lock()
_limit_users = 0
_limiter: Any = None


@contextlib.contextmanager
def single_threaded() -> Iterator[None]:
    """Context limiting OpenMP/BLAS to one thread, for bank fits and predictions.

    The bank parallelises across fits (``n_jobs``); nested OpenMP threads in many
    short fits and small predictions only add overhead, and on a busy machine
    spin-waiting OpenMP threads slowed one gradient-boosting fit on landsat from
    1 s to 37 s and a one-row prediction from 7 ms to 130 ms.

    Nested and concurrent uses share one limiter: the first entrant sets it,
    the last one out restores the original limits. Code that fits or predicts
    in threads holds this context in its own thread meanwhile (see
    ``_bank_base.parallel_fits``), so the restore happens in the thread that
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
