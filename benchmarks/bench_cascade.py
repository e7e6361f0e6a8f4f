"""The confidence cascade against the DAG and the fixed-subset hull (test splits).

For each dataset (default landsat and letter, their demo splits) the default
``BudgetDAGClassifier`` settings (``random_state=0``) trace the trade-off curve
with ``tradeoff_curve``; printed per method: test error at 25/50/75 % of the
all-sensor cost, read off the lower convex hull of its points (as in
BENCHMARKS.md), the cascade's order, the dominance summary, and the time to
build the cascade next to the time of the sweep (same run).

Run ``python benchmarks/bench_cascade.py [--datasets landsat letter]
[--points 10]``; the table is also written to
``benchmarks/out/cascade.txt`` (``--out``).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))  # this checkout's package first

from _common import (  # noqa: E402
    FRACTIONS,
    OUT,
    error_at,
    hull_of,
)

from budgetdag_core import load_demo, tradeoff_curve  # noqa: E402
from budgetdag_core.tradeoff import cascade_points  # noqa: E402

METHODS = {"dag": "DAG", "hull": "fixed-subset hull", "cascade": "cascade"}


def run(name: str, n_points: int) -> tuple[pd.DataFrame, list[str]]:
    demo = load_demo(name, random_state=0)
    t0 = time.perf_counter()
    res = tradeoff_curve(
        demo.X_train,
        demo.y_train,
        demo.spec,
        n_points=n_points,
        X_test=demo.X_test,
        y_test=demo.y_test,
        random_state=0,
    )
    sweep_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    cascade_points(
        res.models[0],
        demo.X_train,
        demo.y_train,
        X_test=demo.X_test,
        y_test=demo.y_test,
    )
    cascade_s = time.perf_counter() - t0
    test = res.frame[res.frame["split"] == "test"]
    all_cost = float(test.loc[test["method"] == "all_sensors", "avg_cost"].iloc[0])
    all_err = float(test.loc[test["method"] == "all_sensors", "error"].iloc[0])
    rows = []
    for method, label in METHODS.items():
        part = test[test["method"] == method]
        hc, he = hull_of(part)
        rows.append(
            {
                "dataset": name,
                "method": label,
                "points": len(part),
                **{
                    f"error @ {f:.0%}": error_at(hc, he, f * all_cost)
                    for f in FRACTIONS
                },
                "lowest": float(he.min()),
            }
        )
    notes = [
        f"{name}: all sensors cost {all_cost:.4g}, test error {all_err:.4f}; "
        f"{len(demo.X_train)} training / {len(demo.X_test)} test rows",
        f"{name}: cascade order {' -> '.join(res.cascade.sensor_order)}",
        res.summary.describe(),
        f"{name}: sweep (bank + {len(res.cost_scales)} policies + baselines + "
        f"cascade) {sweep_s:.1f} s; cascade_points alone (state predictions, "
        f"order, thresholds, both splits) {cascade_s:.1f} s",
    ]
    return pd.DataFrame(rows), notes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=["landsat", "letter"])
    parser.add_argument("--points", type=int, default=10)
    parser.add_argument("--out", type=Path, default=OUT / "cascade.txt")
    args = parser.parse_args()
    tables, notes = [], []
    for name in args.datasets:
        table, more = run(name, args.points)
        tables.append(table)
        notes += more
        print(table.to_string(index=False, float_format=lambda v: f"{v:.4f}"))
        print("\n".join(more), flush=True)
    text = (
        pd.concat(tables).to_string(index=False, float_format=lambda v: f"{v:.4f}")
        + "\n\n"
        + "\n".join(notes)
        + "\n"
    )
    out = args.out
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(
        f"python benchmarks/bench_cascade.py {' '.join(sys.argv[1:])}\n\n{text}"
    )
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
