"""A synthetic loss table for timing Graph-Reduce on large DAGs (no bank needed)."""

from __future__ import annotations

import numpy as np

from budgetdag_core import SensorDAG


def synthetic_losses(
    n_rows: int, n_sensors: int, seed: int = 0
) -> tuple[np.ndarray, np.ndarray, SensorDAG, np.ndarray, list[np.ndarray]]:
    """Measurements Z (one column per sensor), a 0/1 loss per row and state, costs.

    Row i has a hidden difficulty; each sensor's column is informative about it,
    and a state's chance of a mistake falls with the sensors it holds (more for
    the sensors that see the row's difficulty well).
    """
    rng = np.random.default_rng(seed)
    dag = SensorDAG([f"s{m}" for m in range(n_sensors)])
    difficulty = rng.uniform(size=n_rows)
    quality = rng.uniform(0.2, 1.0, size=n_sensors)
    Z = difficulty[:, None] * quality + rng.normal(scale=0.3, size=(n_rows, n_sensors))
    member = dag.membership().astype(float)  # (K, M)
    strength = member @ quality  # (K,)
    p_err = 0.5 * np.exp(-strength[None, :] * (1.5 - difficulty[:, None]))
    losses = (rng.uniform(size=(n_rows, dag.n_states)) < p_err).astype(float)
    costs = rng.uniform(0.5, 2.0, size=n_sensors)
    columns = [np.array([m]) for m in range(n_sensors)]
    return Z, losses, dag, costs, columns
