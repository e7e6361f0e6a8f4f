"""Files that name classes by the modules older versions kept them in load.

The package moved modules into subpackages (issue 29). A policy file names
each class by its module at the time it was written; the loaders read those
names through ``persist._compat.MOVED_MODULES``. Here a model is written as an
older version would have written it (its classes put back, for the dump, under
their old module names) and read by today's loaders.
"""

from __future__ import annotations

import contextlib
import sys
import types
import warnings

import numpy as np
import pytest

from budgetdag_core import (
    BudgetDAGClassifier,
    PolicyVersionWarning,
    dumps_policy,
    dumps_policy_skops,
    loads_policy,
    loads_policy_skops,
    toy_dataset,
)
from budgetdag_core.persist._compat import MOVED_MODULES, current_module

OLD_NAME = {new: old for old, new in MOVED_MODULES.items()}


def _classes(model) -> set[type]:
    """The package's classes in the model (the bank's parts included)."""
    found, todo, seen = set(), [model], set()
    while todo:
        value = todo.pop()
        if id(value) in seen:
            continue
        seen.add(id(value))
        if isinstance(value, list | tuple):
            todo.extend(value)
        elif isinstance(value, dict):
            todo.extend(value.values())
        elif type(value).__module__.startswith("budgetdag_core"):
            found.add(type(value))
            todo.extend(vars(value).values())
    return found


@contextlib.contextmanager
def written_by_an_older_version(classes):
    """Classes named by their old modules while the block runs (a module that
    no longer exists is stood in for, so that the writers find the class)."""
    moved = [c for c in classes if c.__module__ in OLD_NAME]
    added = []
    for cls in moved:
        old = OLD_NAME[cls.__module__]
        if old not in sys.modules:
            sys.modules[old] = types.ModuleType(old)
            added.append(old)
        setattr(sys.modules[old], cls.__name__, cls)
        cls.__module__ = old
    try:
        yield [c.__module__ for c in moved]
    finally:
        for cls in moved:
            cls.__module__ = current_module(cls.__module__)
        for old in added:
            del sys.modules[old]


@pytest.fixture(scope="module")
def models():
    demo = toy_dataset(240, 60, random_state=4)
    out = {}
    for kind in ("hgb", "masked"):
        out[kind] = BudgetDAGClassifier(
            demo.spec, bank_kind=kind, cost_scale=0.02, cv=2, random_state=0
        ).fit(demo.X_train, demo.y_train)
    return demo.X_test, out


@pytest.mark.parametrize("kind", ["hgb", "masked"])
@pytest.mark.parametrize("fmt", ["pickle", "skops"])
def test_a_file_naming_old_modules_loads_and_predicts_the_same(models, kind, fmt):
    X, fitted = models
    model = fitted[kind]
    dump = dumps_policy if fmt == "pickle" else dumps_policy_skops
    with written_by_an_older_version(_classes(model)) as old_names:
        data = dump(model)
    assert "budgetdag_core.estimator" in old_names  # the estimator's old home
    assert any(name.endswith("_lgbm_trees") for name in old_names)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PolicyVersionWarning)
        load = loads_policy if fmt == "pickle" else loads_policy_skops
        loaded = load(data)
    np.testing.assert_array_equal(loaded.predict_proba(X), model.predict_proba(X))
    assert type(loaded.bank_) is type(model.bank_)


def test_moved_modules_name_todays_modules():
    import importlib

    for new in MOVED_MODULES.values():
        importlib.import_module(new)
    assert not set(MOVED_MODULES) & set(MOVED_MODULES.values())
