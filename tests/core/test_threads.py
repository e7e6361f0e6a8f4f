"""The OpenMP/BLAS limiter sees libraries loaded after its first use."""

from __future__ import annotations

import sys
import types

from threadpoolctl import threadpool_info

from budgetdag_core import _threads
from budgetdag_core._threads import single_threaded


def test_the_loaded_libraries_are_inspected_anew_after_an_import(monkeypatch):
    first = _threads._controller()
    assert _threads._controller() is first  # nothing imported: kept
    monkeypatch.setitem(sys.modules, "budgetdag_test_runtime", types.ModuleType("x"))
    assert _threads._controller() is not first


def test_every_loaded_runtime_runs_one_thread_inside_the_context():
    with single_threaded():
        counts = [info["num_threads"] for info in threadpool_info()]
    assert counts and all(count == 1 for count in counts)
