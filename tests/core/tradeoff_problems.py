"""Small synthetic problems shared by the trade-off tests (not a test module)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from budgetdag_core import SensorSpec


def make_problem(n: int, seed: int) -> tuple[pd.DataFrame, pd.Series, SensorSpec]:
    """A cheap sensor that settles easy rows, a weak mid sensor, and an expensive
    clean one that is worth buying for the rows near the class boundary."""
    rng = np.random.default_rng(seed)
    z = rng.normal(size=(n, 2))
    y = (z[:, 0] + 0.6 * z[:, 1] > 0).astype(int)
    X = pd.DataFrame(
        {
            "cheap": z[:, 0] + rng.normal(scale=0.3, size=n),
            "mid1": z[:, 1] + rng.normal(scale=0.5, size=n),
            "mid2": rng.normal(size=n),
            "clean": z[:, 0] + 0.6 * z[:, 1] + rng.normal(scale=0.1, size=n),
        }
    )
    spec = SensorSpec(
        {"cheap": ["cheap"], "mid": ["mid1", "mid2"], "clean": ["clean"]},
        {"cheap": 1.0, "mid": 2.0, "clean": 4.0},
    )
    return X, pd.Series(y, name="label"), spec
