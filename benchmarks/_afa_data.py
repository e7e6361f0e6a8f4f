"""Scratch CUBE / CUBE-NM / digits generators of the issue-30 research log
(sections 1-3 of /work/notes/many_sensors_log.md were measured on them).

They follow AFABench's dataset classes with the classes' default parameters
(CUBE-NM informative std 0.1, CUBE noise std 0.3); ``budgetdag_core.datasets``
(``cube_nm_dataset``, ``cube_dataset``, ``digits_dataset``) follows AFABench's
dataset configs instead (CUBE-NM informative std 0.3) and is what benchmarks
and acceptance numbers use. Kept only so that the logged numbers reproduce."""

from __future__ import annotations

import numpy as np
import pandas as pd

from budgetdag_core import SensorSpec


def _codes() -> np.ndarray:
    # AFABench: format(i, "03b") then flip -> least significant bit first.
    return np.array([[int(b) for b in format(i, "03b")][::-1] for i in range(8)], float)


def cube(n: int, seed: int) -> tuple[pd.DataFrame, np.ndarray, SensorSpec]:
    """CUBE (ODIN / AFABench): 20 one-column unit-cost sensors, 8 classes."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 8, n)
    X = rng.normal(0.5, 0.3, size=(n, 20))
    idx = y[:, None] + np.arange(3)[None, :]
    X[np.arange(n)[:, None], idx] = _codes()[y] + rng.normal(0, 0.1, size=(n, 3))
    cols = [f"f{j}" for j in range(20)]
    return pd.DataFrame(X, columns=cols), y, SensorSpec.per_column(cols, cost=1.0)


def cube_nm(
    n: int, seed: int, n_contexts: int = 5, grouped: bool = False
) -> tuple[pd.DataFrame, np.ndarray, SensorSpec]:
    """CUBE-NM (AFABench's AFAContext, 5 contexts): a context group (one-hot
    + N(0, 0.1), one sensor of cost 1) and 50 block columns of cost 1; the
    label's 3-bit code sits in the context's block. ``grouped``: 6 sensors
    (the context at cost 1, each 10-column block one sensor of cost 10)."""
    rng = np.random.default_rng(seed)
    ctx = rng.integers(0, n_contexts, n)
    C = np.eye(n_contexts)[ctx] + rng.normal(0, 0.1, size=(n, n_contexts))
    y = rng.integers(0, 8, n)
    B = rng.normal(0.5, 0.3, size=(n, n_contexts, 10))
    pos = (y[:, None] + np.arange(3)[None, :]) % 10
    B[np.arange(n)[:, None], ctx[:, None], pos] = _codes()[y] + rng.normal(
        0, 0.1, size=(n, 3)
    )
    ccols = [f"ctx{j}" for j in range(n_contexts)]
    bcols = [f"b{c}_{j}" for c in range(n_contexts) for j in range(10)]
    X = pd.DataFrame(np.hstack([C, B.reshape(n, -1)]), columns=ccols + bcols)
    if grouped:
        groups = {"context": ccols}
        costs = {"context": 1.0}
        for c in range(n_contexts):
            groups[f"block{c}"] = bcols[10 * c : 10 * c + 10]
            costs[f"block{c}"] = 10.0
        return X, y, SensorSpec(groups, costs)
    groups = {"context": ccols, **{b: [b] for b in bcols}}
    costs = {"context": 1.0, **dict.fromkeys(bcols, 1.0)}
    return X, y, SensorSpec(groups, costs)


def digits() -> tuple[pd.DataFrame, np.ndarray, SensorSpec]:
    from sklearn.datasets import load_digits

    d = load_digits()
    cols = [f"px{j}" for j in range(64)]
    X = pd.DataFrame(d.data.astype(float), columns=cols)
    return X, d.target, SensorSpec.per_column(cols, cost=1.0)
