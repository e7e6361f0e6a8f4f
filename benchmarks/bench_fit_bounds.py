"""Fits bounded whatever the costs and the number of sensors (issue 58).

Part ``costs``: the default classifier (``dag="auto"``, or ``--dag``) on a
table of 20 one-column sensors, with unit costs, one sensor of cost 0, all
20 at 0 and all at 1e-300; it prints each fit's seconds and their ratio to
the unit-cost fit timed in the same run (the target: at most 2), and the
states of the strategy kept.

Part ``sensors``: the same unit-cost fit with more sensors (``--sensors``,
default 20 100 200; one-column, the same rows), each as a ratio to the
20-sensor fit, and the time ``MAX_SENSORS + 1`` sensors take to be refused.
The many-sensor DAGs' work grows with the square of the sensors, which is
what ``budgetdag_core.validation.MAX_SENSORS`` is set from.

Run ``python benchmarks/bench_fit_bounds.py`` (``--part costs``
or ``--part sensors``; ``--rows N``, default 300). It writes
``benchmarks/out/fit_bounds.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))  # this checkout's package first

from _common import OUT  # noqa: E402

from budgetdag_core import BudgetDAGClassifier, SensorSpec  # noqa: E402
from budgetdag_core.validation import MAX_SENSORS  # noqa: E402


def table(n_sensors: int, n_rows: int) -> tuple[pd.DataFrame, np.ndarray]:
    """One-column sensors of normal noise; three of them carry the class."""
    rng = np.random.default_rng(0)
    X = pd.DataFrame(
        rng.normal(size=(n_rows, n_sensors)),
        columns=[f"s{i}" for i in range(n_sensors)],
    )
    y = (X.iloc[:, :3].sum(axis=1) + rng.normal(size=n_rows) > 0).astype(int)
    return X, y.to_numpy()


def timed_fit(X: pd.DataFrame, y: np.ndarray, costs: dict, dag: str) -> dict:
    spec = SensorSpec({c: [c] for c in X.columns}, costs)
    t = time.perf_counter()
    model = BudgetDAGClassifier(spec, dag=dag, random_state=0).fit(X, y)
    seconds = time.perf_counter() - t
    return {
        "seconds": seconds,
        "strategy": model.strategy_,
        "states": model.sensor_dag_.n_states,
    }


def part_costs(rows: int, dag: str) -> dict:
    X, y = table(20, rows)
    cols = list(X.columns)
    cases = {
        "unit": dict.fromkeys(cols, 1.0),
        "one free": {**dict.fromkeys(cols, 1.0), "s5": 0.0},
        "all free": dict.fromkeys(cols, 0.0),
        "all 1e-300": dict.fromkeys(cols, 1e-300),
    }
    out = {name: timed_fit(X, y, costs, dag) for name, costs in cases.items()}
    unit = out["unit"]["seconds"]
    for name, row in out.items():
        print(
            f"costs {name:>10}: {row['seconds']:7.1f} s, "
            f"{row['seconds'] / unit:4.2f}x the unit-cost fit "
            f"({row['strategy']}, {row['states']} states)",
            flush=True,
        )
    return out


def part_sensors(rows: int, sensors: list[int], dag: str) -> dict:
    out = {}
    for m in sensors:
        X, y = table(m, rows)
        out[m] = timed_fit(X, y, dict.fromkeys(X.columns, 1.0), dag)
        ratio = out[m]["seconds"] / out[sensors[0]]["seconds"]
        print(
            f"{m:5d} sensors x {rows} rows: {out[m]['seconds']:7.1f} s, "
            f"{ratio:5.2f}x the {sensors[0]}-sensor fit",
            flush=True,
        )
    X, y = table(MAX_SENSORS + 1, 5)
    t = time.perf_counter()
    try:
        BudgetDAGClassifier().fit(X, y)
        refused = "not refused"
    except ValueError as error:
        refused = str(error)
    seconds = time.perf_counter() - t
    print(f"{MAX_SENSORS + 1} sensors: refused in {seconds:.3f} s: {refused}")
    out["refused"] = {"seconds": seconds, "message": refused}
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=["costs", "sensors", "all"], default="all")
    parser.add_argument("--rows", type=int, default=300)
    parser.add_argument("--sensors", type=int, nargs="+", default=[20, 100, 200])
    parser.add_argument("--dag", default="auto")
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    result = {}
    if args.part in ("costs", "all"):
        result["costs"] = part_costs(args.rows, args.dag)
    if args.part in ("sensors", "all"):
        result["sensors"] = part_sensors(args.rows, args.sensors, args.dag)
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "fit_bounds.json").write_text(json.dumps(result, indent=2, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
