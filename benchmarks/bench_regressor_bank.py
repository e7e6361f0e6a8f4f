"""The any-subset regressor bank's boosting settings, judged on training rows.

``SparseRegressorBank`` (the regressor beyond the full DAG) fits one LightGBM
model per fold on every training row's random sensor masks, early-stopped on
held-out rows; its rounds are most of the bank's fit. This script compares
the default settings (``masked_boosting_regressor``: learning rate 0.1,
10 rounds of patience) with the earlier ones (0.05 and 20) and prints, per
table and seed:

- the held-out squared error at random sensor subsets that the bank's own
  choice of model kind reads (``validation_["boosting"]["mse"]``: rows of the
  training split held out from the choice's fit, so no test row is read),
  ridge's beside it;
- the bank's fit in CPU seconds (one thread), both settings in one process.

Tables: diabetes (10 one-column sensors), Friedman #1 (10 columns, 600 rows)
and the two tables of ``bench_regressor.py --many-sensors`` (Friedman #1 with
24 columns and landsat's centre pixel, 1 000 training rows per seed).

Run from the repository root::

    python benchmarks/bench_regressor_bank.py [--seeds 2]
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from unittest import mock

import numpy as np
import pandas as pd
from sklearn.datasets import load_diabetes, make_friedman1
from threadpoolctl import threadpool_limits

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent), str(HERE)]  # this checkout's package first

from _report import table  # noqa: E402
from bench_regressor import MANY_DATASETS  # noqa: E402

from budgetdag_core import BudgetDAGRegressor, SensorSpec  # noqa: E402
from budgetdag_core.bank import _sparse_regressor  # noqa: E402
from budgetdag_core.strategies import StrategyBanks  # noqa: E402

Table = tuple[pd.DataFrame, np.ndarray, SensorSpec]
DEFAULT = _sparse_regressor.masked_boosting_regressor


def earlier_settings(random_state: int | None = None) -> Any:
    """The masked boosting regressor before this benchmark: rate 0.05, 20
    rounds of patience (the rest as today's)."""
    return DEFAULT(random_state).set_params(learning_rate=0.05, n_iter_no_change=20)


SETTINGS: dict[str, Callable[..., Any] | None] = {
    "default (0.1, patience 10)": None,
    "earlier (0.05, patience 20)": earlier_settings,
}


def _one_column(X: np.ndarray, y: np.ndarray, prefix: str) -> Table:
    frame = pd.DataFrame(X, columns=[f"{prefix}{i}" for i in range(X.shape[1])])
    return frame, np.asarray(y, dtype=float), SensorSpec.per_column(list(frame))


def tables(seeds: int) -> Iterator[tuple[str, Table]]:
    X, y = load_diabetes(return_X_y=True)
    yield "diabetes", _one_column(X, y, "d")
    X, y = make_friedman1(600, n_features=10, noise=1.0, random_state=0)
    yield "friedman1_10", _one_column(X, y, "x")
    for name, split in MANY_DATASETS.items():
        for seed in range(seeds):
            X, y, _, _, spec = split(seed)
            yield f"{name} seed {seed}", (X, y, spec)


def bank_numbers(data: Table, make: Callable[..., Any] | None) -> dict[str, float]:
    X, y, spec = data
    patch = mock.patch.object(
        _sparse_regressor, "masked_boosting_regressor", make or DEFAULT
    )
    with patch, threadpool_limits(1):
        start = time.process_time()
        bank = BudgetDAGRegressor(spec, random_state=0, n_jobs=1).fit_bank(X, y)
        seconds = time.process_time() - start
    scores = StrategyBanks.of(bank).default.validation_
    return {
        "boosting": scores["boosting"]["mse"],
        "ridge": scores["ridge"]["mse"],
        "seconds": seconds,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=2)
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    names = list(SETTINGS)
    rows = []
    # A first fit loads LightGBM and the compiled kernels: not timed.
    bank_numbers(next(tables(0))[1], None)
    for name, data in tables(args.seeds):
        got = {label: bank_numbers(data, make) for label, make in SETTINGS.items()}
        new, old = got[names[0]], got[names[1]]
        rows.append(
            [
                name,
                f"{len(data[0])} x {data[2].n_sensors}",
                f"{new['boosting']:.4g}",
                f"{old['boosting']:.4g}",
                f"{new['boosting'] / old['boosting'] - 1:+.1%}",
                f"{new['ridge']:.4g}",
                f"{new['seconds']:.2f}",
                f"{old['seconds']:.2f}",
                f"{new['seconds'] / old['seconds']:.2f}",
            ]
        )
        print(rows[-1], flush=True)
    header = [
        "table",
        "rows x sensors",
        "held-out MSE, default",
        "earlier",
        "change",
        "ridge",
        "bank CPU s, default",
        "earlier",
        "ratio",
    ]
    print(table(header, rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
