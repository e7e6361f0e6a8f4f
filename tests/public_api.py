"""The public API: ``budgetdag_core.__all__`` and the ``__all__`` of the
documented subpackages it lists (``budgetdag_core.plotting``, ...)."""

from __future__ import annotations

import inspect
from types import ModuleType
from typing import Any

import budgetdag_core


def public_modules() -> list[ModuleType]:
    """The root, then each subpackage its ``__all__`` lists."""
    listed = [getattr(budgetdag_core, name) for name in budgetdag_core.__all__]
    return [budgetdag_core, *(obj for obj in listed if inspect.ismodule(obj))]


def public_objects() -> dict[str, tuple[str, Any]]:
    """Name -> (its documented module, the object), for every name but the
    modules in a public module's ``__all__``. A name the root exports is the
    root's (``tradeoff_curve`` is also in ``budgetdag_core.tradeoff``)."""
    found: dict[str, tuple[str, Any]] = {}
    for module in public_modules():
        for name in module.__all__:
            obj = getattr(module, name)
            if inspect.ismodule(obj):
                continue
            if name in found:
                assert found[name][1] is obj, f"two public objects named {name}"
                continue
            found[name] = (module.__name__, obj)
    return found
