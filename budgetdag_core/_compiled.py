"""The compiled kernels, compiled once per install in a process of their own.

numba compiles a kernel the first time it runs and keeps the machine code in
its on-disk cache, from which later processes load it in milliseconds. So the
first fit after an install (or after a kernel's source changed) would wait for
the compiler: several seconds of CPU for a default fit's kernels, more than a
warm fit of landsat takes. Compiling in a thread does not help: numba's
compiler is Python code holding the GIL, and the bank's LightGBM fits, which
release it, then wait for it after every call into LightGBM (landsat-sized
bank fits: 2.1 s alone, 5.3 s beside a compiling thread).

:func:`warm_up` therefore compiles the kernels missing from the cache in a
child process, started when the library is imported (so that its imports
overlap the importer's and its data loading) or at the latest when a fit
starts, while the fit goes on in this one. A fit waits for a kernel
only when it reaches it while the child is compiling it (the child then writes
it to the cache and this process loads it); a kernel the child has not started
yet, the fit compiles itself, as numba would anyway. If the child fails (no
writable cache, no Python executable), everything compiles lazily as before.
The numbers do not depend on who compiled a kernel.
"""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

from ._bounded_io import env_setting, flag

#: The kernels called from Python, as (module, function), in the order the
#: child compiles them. A fit calls the scoring kernels within a second of its
#: start, before the child is past its imports, so the fit compiles those
#: itself; the child starts with what a fit needs after its bank and which
#: takes longest to compile (calibration, then the policies' tournament).
KERNELS = (
    ("budgetdag_core.bank._calibration", "_calibration_gaps"),
    ("budgetdag_core.reductions._base", "_row_major_mean_var"),
    ("budgetdag_core.reductions._tournament", "train_tournament"),
    ("budgetdag_core.bank._tree_kernels", "softmax_rows"),
    ("budgetdag_core.bank._tree_kernels", "add_scores"),
    ("budgetdag_core.bank._tree_kernels", "add_state_scores"),
)
#: Set to "0" to leave all compilation to numba's lazy first calls.
WARM_UP_VARIABLE = "BUDGETDAG_WARM_UP"
#: The process whose child is compiling: its own subprocesses (joblib's
#: workers, which import the library too) start no second child.
OWNER_VARIABLE = "BUDGETDAG_WARM_UP_OWNER"


def _kernel(module: str, name: str) -> tuple[Any, tuple]:
    """The dispatcher and a tiny example call (the argument types the library
    passes) of one kernel; each kernel module lists its own examples."""
    mod = importlib.import_module(module)
    return getattr(mod, name), mod.example_calls()[name]


def _signature(args: tuple) -> tuple:
    from numba import typeof

    return tuple(typeof(arg) for arg in args)


def _in_cache(dispatcher: Any, args: tuple) -> bool:
    """Whether numba's on-disk cache holds the kernel for these argument types.

    numba has no public test for this; this reads the cache's index as its
    own lookup (``Dispatcher.compile``) does. On any surprise the answer is
    False: a warm-up then starts, and its child finds the kernels in the
    cache at once.
    """
    try:
        cache = dispatcher._cache
        key = cache._index_key(_signature(args), dispatcher.targetctx.codegen())
        return key in cache._cache_file._load_index()
    except Exception:  # noqa: BLE001 - numba internals: fall back to "no"
        return False


def _loaded(dispatcher: Any, args: tuple) -> bool:
    """Whether this process holds the kernel for these argument types."""
    return _signature(args) in getattr(dispatcher, "overloads", {})


class _WarmUp:
    """A child process compiling kernels, and what it has reported so far."""

    def __init__(self, names: list[str]) -> None:
        self.names = names
        self.started: set[str] = set()
        self.done: set[str] = set()
        self.finished = False
        self._changed = threading.Condition()
        root = str(Path(__file__).resolve().parents[1])
        code = (
            "import sys; sys.path.insert(0, sys.argv[1]); "
            "from budgetdag_core._compiled import _child; _child(sys.argv[2:])"
        )
        # A session of its own: under Linux's autogroup scheduling a busy
        # machine shares the CPU between sessions, and a child in the fit's
        # session would take its time from the fit (landsat's first fit on a
        # machine at load 17: 2.6-3.0x the warm one, the child waited for).
        # It also lets the child finish the cache after a Ctrl-C.
        self._process = subprocess.Popen(
            [sys.executable, "-c", code, root, *names],
            env={**os.environ, WARM_UP_VARIABLE: "0"},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            start_new_session=True,
        )
        reader = threading.Thread(target=self._read, name="budgetdag-warm-up")
        reader.daemon = True
        reader.start()

    def _read(self) -> None:
        assert self._process.stdout is not None
        for line in self._process.stdout:
            event, _, name = line.strip().partition(" ")
            with self._changed:
                (self.started if event == "start" else self.done).add(name)
                self._changed.notify_all()
        self._process.wait()
        if os.environ.get(OWNER_VARIABLE) == _owner_id():
            del os.environ[OWNER_VARIABLE]
        with self._changed:
            self.finished = True
            self._changed.notify_all()

    def wait_for(self, name: str) -> None:
        """Return once the child is not compiling ``name`` (done or not begun)."""
        with self._changed:
            while name in self.started and name not in self.done and not self.finished:
                self._changed.wait()

    def wait(self) -> None:
        with self._changed:
            while not self.finished:
                self._changed.wait()


_lock = threading.Lock()
_warm_up: _WarmUp | None = None
#: Once every kernel is loaded or cached it stays so (asked on every rerun of
#: an app page, and by every fit's :func:`warm_up`: looking again cost each of
#: an auto-scale search's trials milliseconds).
_ready = False


def _owner_id() -> str:
    """This process and the cache it compiles for, as OWNER_VARIABLE says."""
    return f"{os.getpid()}:{os.environ.get('NUMBA_CACHE_DIR', '')}"


def _enabled() -> bool:
    if not env_setting(WARM_UP_VARIABLE, flag, True, "0 or 1"):
        return False
    # OWNER_VARIABLE and NUMBA_CACHE_DIR are no settings: this module sets
    # the one for its children, numba reads the other.
    owner = os.environ.get(OWNER_VARIABLE)
    if (
        owner is not None
        and owner != _owner_id()
        and owner.partition(":")[2] == (_owner_id().partition(":")[2])
    ):
        return False  # an ancestor's child compiles for the same cache
    from numba import config

    return not config.DISABLE_JIT


def kernels_ready() -> bool:
    """Whether a fit would find every compiled kernel ready to run.

    True when each kernel is loaded in this process or in numba's on-disk
    cache (a later process loads it in milliseconds); False while a fit would
    still have to compile some (the first fit after an install). The app uses
    it to say whether the first training includes compiling.

    Examples
    --------
    >>> isinstance(kernels_ready(), bool)
    True
    """
    global _ready
    if not _ready:
        _ready = not _missing()
    return _ready


def kernels_loaded() -> bool:
    """Whether this process holds compiled kernels: a fit has run here (every
    fit learns its policies with some; which ones depends on its settings).

    A process's first fit also loads the kernels (from numba's cache) and
    LightGBM's library, and imports what the fit imports lazily; later fits
    in the same process start at once. The fit-time estimate counts the
    difference (:func:`budgetdag_core.estimates.estimate_fit_seconds`).

    Examples
    --------
    >>> isinstance(kernels_loaded(), bool)
    True
    """
    try:
        return any(_loaded(*_kernel(module, name)) for module, name in KERNELS)
    except Exception:  # noqa: BLE001 - a kernel module that fails: not loaded
        return False


def _missing() -> list[str]:
    """The kernels neither loaded in this process nor in numba's cache."""
    missing = []
    for module, name in KERNELS:
        dispatcher, args = _kernel(module, name)
        if not (_loaded(dispatcher, args) or _in_cache(dispatcher, args)):
            missing.append(name)
    return missing


def warm_up(wait: bool = False) -> bool:
    """Compile the kernels missing from numba's cache, in a child process.

    Importing the library calls this (in a main process), and so does a fit
    when it starts; an application can call it to wait for the kernels.
    Calling it again is cheap: one child per process tree at most, and none
    when every kernel is loaded or cached (so, after an install, only the
    first import starts one). ``BUDGETDAG_WARM_UP=0`` turns it off.

    Parameters
    ----------
    wait : bool, default=False
        Return only once the child has finished.

    Returns
    -------
    bool
        Whether a child is (or was) compiling kernels for this process.

    Examples
    --------
    >>> warm_up(wait=True) in (True, False)
    True
    >>> kernels_ready()
    True
    """
    global _warm_up, _ready
    with _lock:
        if _warm_up is None and not _ready and _enabled():
            missing = _missing()
            _ready = not missing
            if missing:
                try:
                    _warm_up = _WarmUp(missing)
                    os.environ[OWNER_VARIABLE] = _owner_id()
                except OSError:
                    pass
        child = _warm_up
    if child is not None and wait:
        child.wait()
    return child is not None


def warm_up_on_import() -> None:
    """:func:`warm_up` when the library is imported by a main process (the
    child's imports overlap the importer's own and its data loading); never
    fails an import."""
    import multiprocessing

    if multiprocessing.parent_process() is None:
        try:
            warm_up()
        except Exception:  # noqa: BLE001 - a fit compiles lazily then
            pass


def before_call(name: str) -> None:
    """Called before the library calls kernel ``name`` from Python: waits while
    the warm-up child compiles it, so that this process loads it from the
    cache instead of compiling it a second time."""
    child = _warm_up
    if child is not None and not child.finished:
        child.wait_for(name)


def _child(names: list[str]) -> None:
    """The child's work: compile (or load) each kernel, reporting each step."""
    by_name = {name: module for module, name in KERNELS}

    def say(line: str) -> None:
        try:
            print(line, flush=True)
        except (BrokenPipeError, OSError):
            pass  # the parent has gone: keep compiling for the cache

    for name in names:
        say(f"start {name}")
        try:
            dispatcher, args = _kernel(by_name[name], name)
            dispatcher(*args)
        except Exception:  # noqa: BLE001 - the parent compiles it lazily then
            pass
        say(f"done {name}")
