"""Mutate saved policy files and check: ValueError on load, or a working model.

Run by ``test_integrity.py`` in a subprocess, so that a mutation that crashes
the interpreter (a segfault in compiled prediction code) fails that test
instead of killing pytest. Prints one line per mutation that broke the
contract (``PROBLEM <mutation>: <what>``) and a last ``DONE <counts>`` line;
before each mutation it prints ``CASE <mutation>``, so after a crash the last
such line names the culprit.

Usage: ``python fuzz_model_files.py --model hgb --seed 0 --n-bytes 60 --n-arrays 60``
"""

from __future__ import annotations

import argparse
import io
import sys
import warnings
import zipfile

import numpy as np
import pandas as pd
from sklearn.ensemble import HistGradientBoostingClassifier

from budgetdag_core import (
    BudgetDAGClassifier,
    SensorSpec,
    dumps_policy,
    dumps_policy_skops,
    loads_policy,
    loads_policy_skops,
)

# Few boosting rounds keep the files small (each tree is several arrays).
BOOSTING = HistGradientBoostingClassifier(max_iter=3, max_leaf_nodes=4, random_state=0)
MODELS = {
    # Gradient boosting per state (the app's default bank) and filter trees.
    "hgb": {
        "bank_kind": "per_subset",
        "classifier": BOOSTING,
        "policy_learner": "filter_tree",
    },
    # One boosting model over masked inputs, and cost-regression policies.
    "masked": {
        "bank_kind": "masked",
        "classifier": BOOSTING,
        "policy_learner": "cost_regression",
    },
}


def tiny_problem(seed: int = 0) -> tuple[pd.DataFrame, np.ndarray, SensorSpec]:
    rng = np.random.default_rng(seed)
    n = 160
    X = pd.DataFrame({c: rng.normal(size=n) for c in "abc"})
    y = np.array(["x", "y", "z"])[(X["a"] > 0).astype(int) + (X["c"] > 0.6)]
    spec = SensorSpec({"s1": ["a"], "s2": ["b", "c"]}, {"s1": 1, "s2": 2})
    return X, y, spec


def tiny_model(kind: str) -> tuple[BudgetDAGClassifier, pd.DataFrame]:
    X, y, spec = tiny_problem()
    model = BudgetDAGClassifier(
        spec, cost_scale=0.01, cv=2, random_state=0, **MODELS[kind]
    )
    return model.fit(X, y), X


def check_model(model: BudgetDAGClassifier, X: pd.DataFrame) -> str | None:
    """What is wrong with a model that loaded (None: it works within its domain)."""
    try:
        trace = model.trace(X)
        proba = model.predict_proba(X)
    except ValueError:
        return None  # refused with a message, not a crash
    except Exception as exc:
        return f"predict raised {type(exc).__name__}: {exc}"
    if not set(trace["prediction"]) <= set(model.classes_):
        return "predictions outside classes_"
    if proba.shape != (len(X), len(model.classes_)):
        return f"predict_proba shape {proba.shape}"
    costs = dict(zip(model.spec_.names, model.spec_.cost_vector, strict=True))
    for acquired, cost in zip(trace["acquired"], trace["cost"], strict=True):
        if len(set(acquired)) != len(acquired) or not set(acquired) <= set(costs):
            return f"acquired {acquired}"
        if not np.isclose(cost, sum(costs[s] for s in acquired)):
            return f"cost {cost} for {acquired}"
    return None


def try_load(load, data: bytes, X: pd.DataFrame) -> str | None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            model = load(data)
        except ValueError as exc:
            return None if str(exc) else "ValueError without a message"
        except Exception as exc:
            return f"load raised {type(exc).__name__}: {exc}"
        return check_model(model, X)


# ------------------------------------------------------------------ mutations
def flip_bytes(data: bytes, rng: np.random.Generator) -> bytes:
    out = bytearray(data)
    for _ in range(int(rng.integers(1, 4))):
        i = int(rng.integers(len(out)))
        out[i] ^= 1 << int(rng.integers(8))
    return bytes(out)


def _npy_entries(archive: zipfile.ZipFile) -> list[str]:
    return [n for n in archive.namelist() if n.endswith(".npy")]


def _mutate_array(arr: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, str]:
    """One targeted change: an index field, an integer, a float, or the shape."""
    arr = arr.copy()
    choice = int(rng.integers(4))
    if arr.size == 0 or choice == 3:
        if arr.ndim == 0 or arr.size == 0:
            return np.zeros((0,) * max(arr.ndim, 1), dtype=arr.dtype), "emptied"
        if rng.random() < 0.5:
            return arr.reshape(-1)[:-1], "dropped the last entry"
        return np.concatenate([arr.reshape(-1), arr.reshape(-1)[:1]]), "grew by one"
    flat = arr.reshape(-1)
    i = int(rng.integers(flat.size))
    fields = arr.dtype.names
    if fields:
        wanted = [
            f for f in ("left", "right", "feature_idx", "bitset_idx") if f in fields
        ]
        name = str(rng.choice(wanted or list(fields)))
        info = np.iinfo(arr.dtype[name]) if arr.dtype[name].kind in "iu" else None
        if info is not None:
            value = int(rng.choice([info.max, info.min, flat.size, 0, i, i + 1]))
            value = int(np.clip(value, info.min, info.max))
        else:
            value = float(rng.choice([np.nan, np.inf, -1e308]))
        flat[i][name] = value
        return arr, f"node {i}['{name}'] = {value}"
    if arr.dtype.kind in "iu":
        info = np.iinfo(arr.dtype)
        value = int(rng.choice([info.max, info.min, -1, flat.size, 2**31 - 1]))
        flat[i] = np.clip(value, info.min, info.max)
        return arr, f"[{i}] = {flat[i]}"
    if arr.dtype.kind == "f":
        value = float(rng.choice([np.nan, np.inf, -np.inf, 1e308, 0.0]))
        flat[i] = value
        return arr, f"[{i}] = {value}"
    if arr.dtype.kind == "b":
        flat[i] = not flat[i]
        return arr, f"[{i}] flipped"
    return arr.reshape(-1)[:-1], "dropped the last entry"


def mutate_skops_array(data: bytes, rng: np.random.Generator) -> tuple[bytes, str]:
    """The skops file with one of its stored arrays changed (re-zipped validly)."""
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        names = _npy_entries(archive)
        name = names[int(rng.integers(len(names)))]
        contents = {n: archive.read(n) for n in archive.namelist()}
    arr = np.load(io.BytesIO(contents[name]), allow_pickle=False)
    arr, what = _mutate_array(arr, rng)
    buffer = io.BytesIO()
    np.save(buffer, arr, allow_pickle=False)
    contents[name] = buffer.getvalue()
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for n, blob in contents.items():
            archive.writestr(n, blob)
    return out.getvalue(), f"{name} {what}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", choices=sorted(MODELS), default="hgb")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--n-bytes", type=int, default=40)
    parser.add_argument("--n-arrays", type=int, default=60)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    model, X = tiny_model(args.model)
    files = {
        "skops": (dumps_policy_skops(model), loads_policy_skops),
        "pickle": (dumps_policy(model), loads_policy),
    }
    counts = {"cases": 0, "problems": 0}

    def run(case: str, load, data: bytes) -> None:
        print(f"CASE {case}", flush=True)
        counts["cases"] += 1
        problem = try_load(load, data, X)
        if problem is not None:
            counts["problems"] += 1
            print(f"PROBLEM {case}: {problem}", flush=True)

    for fmt, (data, load) in files.items():
        for i in range(args.n_bytes):
            run(f"{fmt} byte flip #{i}", load, flip_bytes(data, rng))
    data, load = files["skops"]
    for i in range(args.n_arrays):
        mutated, what = mutate_skops_array(data, rng)
        run(f"skops array #{i} {what}", load, mutated)
    print(f"DONE {counts}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
