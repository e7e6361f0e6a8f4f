"""Load (or compile) the library's compiled kernels before anything is timed."""

from __future__ import annotations

import time

import pandas as pd
from sklearn.datasets import make_classification

from budgetdag_core import BudgetDAGClassifier, SensorSpec


def warm_up() -> float:
    """Fit, predict and step a session on a tiny table with both bank kinds.

    numba builds the kernels on first use and caches them on disk: a process
    loads them in about a second; the first run after an install or a change
    of their source compiles them (tens of seconds). Both are one-off costs
    that a benchmark reports apart from the fit times. Returns the seconds.
    """
    t = time.perf_counter()
    X, y = make_classification(400, 6, n_informative=4, n_classes=3, random_state=0)
    frame = pd.DataFrame(X, columns=[f"x{i}" for i in range(6)])
    for columns in (list(frame.columns[:3]), list(frame.columns)):  # hgb, masked
        spec = SensorSpec.per_column(columns)
        model = BudgetDAGClassifier(spec, cv=2, random_state=0, cost_scale=0.01)
        model.fit(frame[columns], y).predict(frame[columns])
        model.start().next_sensor()
    return time.perf_counter() - t
