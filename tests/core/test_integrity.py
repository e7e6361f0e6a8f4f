"""Model files are checked structurally on load (issue 12, case 2).

A skops file made only of allowed types used to load fine and then segfault at
predict time when a boosting tree's child index pointed past its node array.
The loaders now check every array that indexes another one and raise
``ValueError`` naming it. The fuzz tests run in a subprocess (see
``fuzz_model_files.py``), so a crash fails the test instead of killing pytest.
"""

from __future__ import annotations

import copy
import os
import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from budgetdag_core import (
    dumps_policy,
    dumps_policy_skops,
    loads_policy,
    loads_policy_skops,
)
from budgetdag_core.persist import check_model_integrity

from .fuzz_model_files import tiny_model

FUZZER = Path(__file__).with_name("fuzz_model_files.py")
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def hgb():
    return tiny_model("hgb")


@pytest.fixture(scope="module")
def masked():
    return tiny_model("masked")


def _tree(model, state=1, iteration=0, tree=0):
    return model.bank_.models_[state]._predictors[iteration][tree]


def _inner(node):
    return int(np.flatnonzero(node.nodes["is_leaf"] == 0)[0])


def break_child(model):
    nodes = _tree(model).nodes
    nodes["left"][_inner(_tree(model))] = len(nodes) + 1000  # past the array


def break_child_cycle(model):
    node = _inner(_tree(model))
    _tree(model).nodes["right"][node] = node  # a loop, never a leaf


def break_feature(model):
    _tree(model, state=3).nodes["feature_idx"][_inner(_tree(model, state=3))] = 7


def break_state_columns(model):
    model.state_columns_[2] = np.array([0, 9])


def break_bank_columns(model):
    model.bank_.state_columns_[1] = np.array([2])


def break_policy_children(model):
    model.policies_[0].children = model.policies_[0].children[::-1]


def break_units(model):
    model.sensor_dag_.units = [(0,), (99,)]


def break_classes(model):
    model.classes_ = model.classes_[::-1].copy()


def break_temperature(model):
    model.bank_.temperatures_ = np.full_like(model.bank_.temperatures_, -1.0)


def break_trees_per_iteration(model):
    model.bank_.models_[1].n_trees_per_iteration_ = 1


def _learned(model):
    """The first node policy with a learned filter tree (state 1 here)."""
    return next(p.learner for p in model.policies_ if hasattr(p.learner, "tree_"))


def break_policy_width(model):
    _learned(model).features_.inner_.mean_ = np.zeros(5)


def break_constant_action(model):
    model.policies_[0].learner.constant_ = 17


def break_filter_tree_leaf(model):
    node = _learned(model).tree_
    while not isinstance(node.right, int):
        node = node.right
    node.right = 9


def break_spec_cost(model):
    model.spec_.costs["s1"] = -5.0


def break_route_states(model):
    model.route_states_ = np.ones(model.sensor_dag_.n_states + 2, dtype=bool)


MUTATIONS = {
    "negative sensor cost": (break_spec_cost, "is negative"),
    "child index past the node array": (break_child, "child index"),
    "child index cycle": (break_child_cycle, "child index"),
    "feature index out of range": (break_feature, "feature_idx"),
    "state columns out of range": (break_state_columns, "state_columns_"),
    "bank state columns": (break_bank_columns, "bank_.state_columns_"),
    "policy children": (break_policy_children, "children"),
    "DAG units": (break_units, "sensor_dag_.units"),
    "unsorted classes": (break_classes, "classes_"),
    "negative temperatures": (break_temperature, "temperatures_"),
    "trees per iteration": (break_trees_per_iteration, "n_trees_per_iteration_"),
    "policy input width": (break_policy_width, "features_.inner_.mean_"),
    "constant action": (break_constant_action, "17 is out of range"),
    "filter tree leaf": (break_filter_tree_leaf, "out of range"),
    "route states shape": (break_route_states, "route_states_"),
}


@pytest.mark.parametrize("fmt", ["skops", "pickle"])
@pytest.mark.parametrize("name", sorted(MUTATIONS))
def test_inconsistent_model_files_are_refused_by_name(hgb, name, fmt):
    model, _ = hgb
    mutate, words = MUTATIONS[name]
    broken = copy.deepcopy(model)
    mutate(broken)
    dump, load = {
        "skops": (dumps_policy_skops, loads_policy_skops),
        "pickle": (dumps_policy, loads_policy),
    }[fmt]
    with pytest.raises(ValueError, match="Invalid model file") as info:
        load(dump(broken))
    assert words in str(info.value)


def test_masked_bank_checks_its_masks_and_shared_model(masked):
    model, X = masked
    check_model_integrity(model)
    broken = copy.deepcopy(model)
    broken.bank_.column_masks_[2] = ~broken.bank_.column_masks_[2]
    with pytest.raises(ValueError, match=r"bank_.column_masks_\[2\]"):
        loads_policy_skops(dumps_policy_skops(broken))
    broken = copy.deepcopy(model)
    tree = broken.bank_.model_._predictors[0][0]
    tree.nodes["left"][_inner(tree)] = 2**31
    with pytest.raises(ValueError, match=r"bank_.model_._predictors\[0\]\[0\]"):
        loads_policy(dumps_policy(broken))
    loaded = loads_policy_skops(dumps_policy_skops(model))
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))


def test_every_bank_kind_passes_its_own_check(hgb, masked):
    for model, _ in (hgb, masked):
        model.bank_.check_integrity()
        check_model_integrity(model)


def test_damaged_pickles_are_refused_before_unpickling(hgb):
    model, X = hgb
    data = dumps_policy(model)
    bundle = pickle.loads(data)
    assert bundle["format_version"] == 2 and len(bundle["model_sha256"]) == 64
    inner = bytearray(bundle["model_pickle"])
    inner[len(inner) // 2] ^= 0x10
    bundle["model_pickle"] = bytes(inner)
    with pytest.raises(ValueError, match="does not match the checksum"):
        loads_policy(pickle.dumps(bundle))
    with pytest.raises(ValueError, match="not a readable policy pickle"):
        loads_policy(data[: len(data) // 2])
    # A format-1 file (model inline, written before the checksum) still loads.
    old = {k: v for k, v in bundle.items() if k not in ("model_pickle", "model_sha256")}
    old.update(format_version=1, model=model)
    loaded = loads_policy(pickle.dumps(old))
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))


def test_metadata_must_describe_the_model(hgb):
    model, _ = hgb
    bundle = pickle.loads(dumps_policy(model))
    bundle["classes"] = ["a", "b", "c"]
    with pytest.raises(ValueError, match="'classes' differ from the model's"):
        loads_policy(pickle.dumps(bundle))


@pytest.mark.parametrize(
    ("kind", "n_bytes", "n_arrays"), [("hgb", 20, 110), ("masked", 20, 70)]
)
def test_fuzzed_model_files_load_or_raise_value_error(kind, n_bytes, n_arrays):
    """Random byte flips (skops zip and pickle) and array-entry mutations inside
    the skops file (node child/feature indices, integers, floats, shapes): each
    file either loads and works (predictions in ``classes_``, valid traces) or
    raises ``ValueError`` with a message. Never a crash."""
    out = subprocess.run(
        [sys.executable, str(FUZZER), "--model", kind, "--seed", "12"]
        + ["--n-bytes", str(n_bytes), "--n-arrays", str(n_arrays)],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
        # This checkout's package, also when another one is installed.
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    lines = out.stdout.splitlines()
    cases = [ln for ln in lines if ln.startswith("CASE ")]
    assert out.returncode == 0, (
        f"the fuzzer died (exit code {out.returncode}) on "
        f"{cases[-1] if cases else 'start-up'}: {out.stderr[-1500:]}"
    )
    problems = [ln for ln in lines if ln.startswith("PROBLEM ")]
    assert not problems, problems
    assert len(cases) == 2 * n_bytes + n_arrays and lines[-1].startswith("DONE")
