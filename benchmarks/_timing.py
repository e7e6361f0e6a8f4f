"""Wall-clock helpers shared by the benchmark scripts."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pandas as pd


def seconds(call: Callable[[], Any]) -> float:
    """Wall-clock seconds of one ``call()``."""
    t = time.perf_counter()
    call()
    return time.perf_counter() - t


def tiled(X: pd.DataFrame, n_rows: int) -> pd.DataFrame:
    """``X``'s rows repeated, then cut to ``n_rows`` (a batch to time on)."""
    reps = -(-n_rows // len(X))
    return pd.concat([X] * reps, ignore_index=True).iloc[:n_rows]


def predict_rows_per_second(model: Any, batch: pd.DataFrame, repeats: int) -> float:
    """Rows per second of ``model.predict(batch)``: the best of ``repeats``
    calls, after one on the first 1000 rows (lazy set-up stays out)."""
    model.predict(batch.iloc[:1000])
    return len(batch) / min(
        seconds(lambda: model.predict(batch)) for _ in range(repeats)
    )
