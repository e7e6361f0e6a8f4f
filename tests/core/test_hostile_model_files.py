"""Forged policy files (issue 28, cases 2-4): each is refused with a ValueError
saying what is wrong, in well under 5 s and without inflating anything large.

The files are built here: a skops schema whose entries reuse one id down a
40-level chain (~20 KB; skops's own type audit would walk 2^40 paths), a model
claiming 60 one-sensor DAG units (the integrity check would rebuild 2^60
states), and a zip bomb (an array member that inflates to 256 MiB from a few
hundred KB).
"""

from __future__ import annotations

import copy
import hashlib
import io
import json
import pickle
import time
import tracemalloc
import warnings
import zipfile
from collections.abc import Callable

import numpy as np
import pytest

from budgetdag_core import (
    SensorSpec,
    dumps_policy,
    dumps_policy_skops,
    loads_policy,
    loads_policy_skops,
)
from budgetdag_core.dag import SensorDAG
from budgetdag_core.persist import _skops_checks as checks
from budgetdag_core.reductions._filter_tree import _Node

from .fuzz_model_files import tiny_model

#: Most a refusal may take here, and the most memory it may allocate.
SECONDS = 5.0
MEGABYTES = 200


@pytest.fixture(scope="module")
def model():
    return tiny_model("hgb")[0]


@pytest.fixture(scope="module")
def skops_file(model) -> bytes:
    return dumps_policy_skops(model)


def refused(load: Callable[[bytes], object], data: bytes, match: str) -> str:
    """The message of the ValueError ``load(data)`` raises, checked for time
    and memory (tracemalloc sees Python's and numpy's allocations)."""
    tracemalloc.start()
    start = time.perf_counter()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(ValueError, match=match) as info:
                load(data)
        seconds = time.perf_counter() - start
        peak = tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()
    assert seconds < SECONDS, f"refused after {seconds:.1f} s"
    assert peak < MEGABYTES, f"{peak:.0f} MB allocated before the refusal"
    message = str(info.value)
    assert "truth value" not in message
    return message


def _members(data: bytes) -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def _zip(members: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, blob in members.items():
            archive.writestr(name, blob)
    return out.getvalue()


def _with_schema(data: bytes, edit: Callable[[dict], None]) -> bytes:
    members = _members(data)
    schema = json.loads(members["schema.json"])
    edit(schema)
    members["schema.json"] = json.dumps(schema).encode()
    return _zip(members)


def _entries(tree: object, class_name: str) -> list[dict]:
    """The schema entries of a class, in document order."""
    found, todo = [], [tree]
    while todo:
        value = todo.pop(0)
        if isinstance(value, dict):
            if value.get("__class__") == class_name:
                found.append(value)
            todo.extend(value.values())
        elif isinstance(value, list):
            todo.extend(value)
    return found


# ----------------------------------------------------- case 2: shared ids
def _shared_chain(schema: dict, depth: int) -> None:
    """Make the first filter-tree node a chain of ``depth`` nodes whose left
    child is the next node and whose right child is a stub with its id (skops
    takes the stub for the node: 2^depth paths for its audit)."""
    node = _entries(schema, "_Node")[0]
    null = {
        "__class__": "NoneType",
        "__module__": "builtins",
        "__loader__": "JsonNode",
        "content": "null",
        "is_json": True,
        "__id__": 7,
    }
    template = copy.deepcopy(node)
    template["content"]["content"].update(model=null, folded=null)
    leaf = node["content"]["content"]["left"]
    child: dict = leaf
    fresh = iter(range(10**6, 10**7))
    for _ in range(depth):
        entry = copy.deepcopy(template)
        for inner in _entries(entry, "dict") + _entries(entry, "list") + [entry]:
            inner["__id__"] = next(fresh)  # the copy's own objects: new ids
        fields = entry["content"]["content"]
        fields["left"] = child
        fields["right"] = {k: child[k] for k in ("__class__", "__module__")} | {
            "__loader__": child["__loader__"],
            "__id__": child["__id__"],
        }
        child = entry
    node["content"]["content"]["left"] = child


@pytest.mark.parametrize(
    ("depth", "match"),
    [
        # 20 levels: 2^20 paths for skops (minutes on main), refused for
        # the stubs that stand for larger entries.
        (20, "object id \\d+ is given twice with different content"),
        # The 40 levels: its schema is also deeper than any policy's.
        (40, "nested 138 levels deep"),
    ],
)
def test_shared_id_chain_is_refused_before_the_skops_audit(skops_file, depth, match):
    data = _with_schema(skops_file, lambda schema: _shared_chain(schema, depth))
    before = _with_schema(skops_file, lambda schema: None)
    assert len(data) - len(before) < 20_000  # deflated: ~1.4 KB of JSON a level
    refused(loads_policy_skops, data, match)


def test_an_entry_containing_its_own_id_is_refused(skops_file):
    def cycle(schema: dict) -> None:
        node = _entries(schema, "_Node")[0]
        node["content"]["content"]["left"] = {
            "__class__": "_Node",
            "__module__": node["__module__"],
            "__loader__": "ObjectNode",
            "__id__": node["__id__"],
        }

    data = _with_schema(skops_file, cycle)
    refused(loads_policy_skops, data, "shared or cyclic")


def test_back_references_are_refused(skops_file):
    def back(schema: dict) -> None:
        node = _entries(schema, "_Node")[0]
        node["content"]["content"]["right"] = {
            "__class__": None,
            "__module__": None,
            "__loader__": "CachedNode",
            "__id__": node["__id__"],
        }

    refused(loads_policy_skops, _with_schema(skops_file, back), "CachedNode")


def test_deep_schema_is_refused_before_it_is_parsed(skops_file):
    members = _members(skops_file)
    members["schema.json"] = b"[" * 200_000 + b"]" * 200_000
    message = refused(loads_policy_skops, _zip(members), "nested 200000 levels")
    assert "at most" in message


def test_repeated_shared_objects_of_real_files_still_load(model, skops_file):
    # skops writes a shared object in full at each place (with fresh ids for
    # its temporary lists): the check accepts those repeats.
    schema = json.loads(_members(skops_file)["schema.json"])
    ids: dict[int, int] = {}
    for entry in _entries(schema, "str"):
        ids[entry["__id__"]] = ids.get(entry["__id__"], 0) + 1
    assert max(ids.values()) > 1
    checks.check_schema(json.dumps(schema).encode())


# --------------------------------------------------- case 3: 60 DAG units
def _claims_units(model, n_sensors: int):
    """The model with a spec of ``n_sensors`` one-column sensors and a DAG of
    one unit each (never rebuilt: its states are those of the real DAG)."""
    forged = copy.copy(model)
    names = [f"s{i}" for i in range(n_sensors)]
    forged.spec_ = SensorSpec({n: [f"c{n}"] for n in names}, dict.fromkeys(names, 1))
    forged.feature_names_in_ = np.array(forged.spec_.columns, dtype=object)
    forged.n_features_in_ = n_sensors
    dag = copy.copy(model.sensor_dag_)
    dag.sensor_names = tuple(names)
    dag.units = [(i,) for i in range(n_sensors)]
    forged.sensor_dag_ = dag
    return forged


@pytest.mark.parametrize("fmt", ["skops", "pickle"])
def test_sixty_units_are_refused_before_the_dag_is_rebuilt(model, fmt):
    forged = _claims_units(model, 60)
    dumps, loads = {
        "skops": (dumps_policy_skops, loads_policy_skops),
        "pickle": (dumps_policy, loads_policy),
    }[fmt]
    data = dumps(forged)
    assert len(data) < 100_000
    message = refused(loads, data, "sensor_dag_.units: 60 units, at most 16")
    assert message.startswith("Invalid model file")


def test_the_largest_legal_dag_is_still_rebuilt_and_checked():
    # 16 units (n_subsets=16): 2^16 states, rebuilt in about a second.
    dag = SensorDAG([f"s{i}" for i in range(16)])
    assert dag.n_states == 2**16


# ------------------------------------------------------- case 4: zip bomb
def _npy_header(shape: tuple[int, ...]) -> bytes:
    buffer = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        buffer, {"descr": "<f8", "fortran_order": False, "shape": shape}
    )
    return buffer.getvalue()


def _bomb(data: bytes, n_bytes: int) -> bytes:
    """``data`` with one array member replaced by ``n_bytes`` of zeros (a
    float64 array), deflated as it is streamed into the archive."""
    members = _members(data)
    name = next(n for n in members if n.endswith(".npy"))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for other, blob in members.items():
            if other != name:
                archive.writestr(other, blob)
        info = zipfile.ZipInfo(name)
        info.compress_type = zipfile.ZIP_DEFLATED
        with archive.open(info, "w", force_zip64=True) as stream:
            stream.write(_npy_header((n_bytes // 8,)))
            chunk = bytes(2**20)
            for _ in range(n_bytes // len(chunk)):
                stream.write(chunk)
    return out.getvalue()


def test_zip_bomb_is_refused_from_the_zip_directory(skops_file):
    data = _bomb(skops_file, 256 * 2**20)
    assert len(data) < 1_000_000  # a few hundred KB
    message = refused(loads_policy_skops, data, "unpacks to")
    assert "bytes" in message


def test_a_smaller_bomb_is_refused_by_its_compression_ratio(skops_file):
    data = _bomb(skops_file, 32 * 2**20)
    refused(loads_policy_skops, data, "unpacks \\d+ times its stored size")


def test_total_unpacked_size_is_capped(skops_file):
    refused(
        lambda d: loads_policy_skops(d, max_unpacked_bytes=10_000),
        skops_file,
        "unpack to [\\d,]+ bytes \\(at most 10,000\\)",
    )


def test_an_array_header_larger_than_its_member_is_refused(skops_file):
    members = _members(skops_file)
    name = next(n for n in members if n.endswith(".npy"))
    members[name] = _npy_header((10**12,)) + bytes(64)
    message = refused(loads_policy_skops, _zip(members), "claims shape")
    assert name in message


@pytest.mark.parametrize(
    ("edit", "match"),
    [
        (lambda m: m.update({"../evil.py": b"x"}), "unexpected member"),
        (lambda m: m.pop("schema.json"), "no schema.json"),
    ],
)
def test_unexpected_archive_layouts_are_refused(skops_file, edit, match):
    members = _members(skops_file)
    edit(members)
    refused(loads_policy_skops, _zip(members), match)


def test_member_count_is_capped(skops_file, monkeypatch):
    monkeypatch.setattr(checks, "MAX_MEMBERS", 3)
    refused(loads_policy_skops, skops_file, "members \\(at most 3\\)")


# ------------------------------------------- shared nodes in pickled models
def test_a_pickled_filter_tree_of_shared_nodes_is_refused(model):
    # A pickle can share objects for free: 40 levels of one node used twice
    # would make the integrity walk 2^40 steps.
    forged = copy.deepcopy(model)
    learner = next(p.learner for p in forged.policies_ if hasattr(p.learner, "tree_"))
    top = learner.tree_
    chain: _Node | int = 0
    for _ in range(40):
        chain = _Node(left=chain, right=chain, model=top.model, folded=top.folded)
    learner.tree_ = chain
    data = pickle.dumps({**_bundle_of(model), "model": forged})
    assert len(data) < 200_000
    refused(loads_policy, data, "a node is shared")


def _bundle_of(model) -> dict:
    from budgetdag_core.persist import policy_bundle

    bundle = policy_bundle(model)
    bundle.pop("model")
    return bundle


# ------------------------------------------- a bundle whose model is no model
@pytest.mark.parametrize("inner", [None, 42, "a string", [1, 2]])
def test_a_pickle_bundle_whose_model_is_no_estimator_is_refused(model, inner):
    bundle = pickle.loads(dumps_policy(model))
    blob = pickle.dumps(inner)
    bundle["model_pickle"] = blob
    bundle["model_sha256"] = hashlib.sha256(blob).hexdigest()
    message = refused(loads_policy, pickle.dumps(bundle), "expected a BudgetDAG")
    assert type(inner).__name__ in message
    # The format-1 layout (the model inline) says the same.
    data = pickle.dumps({**_bundle_of(model), "format_version": 1, "model": inner})
    refused(loads_policy, data, "expected a BudgetDAG")


@pytest.mark.parametrize("inner", ["a string", 42])
def test_a_skops_bundle_whose_model_is_no_estimator_is_refused(model, inner):
    import skops.io as sio

    data = sio.dumps({**_bundle_of(model), "model": inner})
    refused(loads_policy_skops, data, "expected a BudgetDAG estimator")


def test_a_model_whose_bank_is_text_is_refused(model):
    forged = copy.deepcopy(model)
    forged.bank_ = "a string"
    refused(loads_policy, pickle.dumps({**_bundle_of(model), "model": forged}), "")
