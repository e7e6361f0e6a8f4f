"""Trade-off curves on landsat, letter and pima, with and without confidence inputs.

For each dataset the bank is fitted once and shared by both policy modes
("sensors", the paper's; "sensors+confidence"). Printed on the test split: the DAG
curve, the fixed-subset hull, the oracle frontier, the dominance summary, and how
the confidence mode's curve compares with the paper mode's.

Run ``python benchmarks/bench_tradeoff.py [--datasets pima letter] [--points 10]``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # this checkout's package first

from budgetdag_core import BudgetDAGClassifier, load_demo, tradeoff_curve  # noqa: E402
from budgetdag_core.tradeoff._baselines import curve_at, lower_convex_hull  # noqa: E402

MODES = ("sensors", "sensors+confidence")


def curve_gap(a: pd.DataFrame, b: pd.DataFrame) -> tuple[float, float, float]:
    """Mean error of curve b minus curve a over their common cost range.

    Both curves are taken as lower convex hulls of their points (as in the
    dominance summary). Negative: b is better.
    """

    def hull(part: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
        c, e = part["avg_cost"].to_numpy(float), part["error"].to_numpy(float)
        idx = lower_convex_hull(c, e)
        return c[idx], e[idx]

    ac, ae = hull(a)
    bc, be = hull(b)
    lo = max(a["avg_cost"].min(), b["avg_cost"].min())
    hi = min(a["avg_cost"].max(), b["avg_cost"].max())
    if hi <= lo:
        return float("nan"), lo, hi
    grid = np.linspace(lo, hi, 2001)
    diff = curve_at(bc, be, grid) - curve_at(ac, ae, grid)
    return float(np.trapezoid(diff, grid) / (hi - lo)), lo, hi


def show(title: str, frame: pd.DataFrame, columns: list[str]) -> None:
    print(f"  {title}")
    text = frame[columns].to_string(index=False, float_format=lambda v: f"{v:.4g}")
    print("\n".join("    " + line for line in text.splitlines()))


def run(name: str, n_points: int, n_jobs: int | None) -> dict[str, object]:
    demo = load_demo(name)
    print(f"\n=== {name}: {demo.description}")
    print(
        f"    train {len(demo.train)} rows, test {len(demo.test)} rows; sensor costs "
        f"{demo.spec.costs}"
    )
    t = time.perf_counter()
    bank = BudgetDAGClassifier(demo.spec, random_state=0, n_jobs=n_jobs).fit_bank(
        demo.X_train, demo.y_train
    )
    print(f"    bank fitted once in {time.perf_counter() - t:.1f} s")
    results = {}
    for mode in MODES:
        t = time.perf_counter()
        res = tradeoff_curve(
            demo.X_train,
            demo.y_train,
            demo.spec,
            n_points=n_points,
            X_test=demo.X_test,
            y_test=demo.y_test,
            bank=bank,
            random_state=0,
            n_jobs=n_jobs,
            policy_features=mode,
        )
        results[mode] = res
        print(
            f"\n  -- policy_features={mode!r}: {len(res.models)} points in "
            f"{time.perf_counter() - t:.1f} s (bank reused)"
        )
        test = res.frame[res.frame["split"] == "test"]
        train = res.frame[res.frame["split"] == "train"]
        dag = test[test["method"] == "dag"].merge(
            train[train["method"] == "dag"][["cost_scale", "avg_cost", "error"]],
            on="cost_scale",
            suffixes=("", "_train"),
        )
        show(
            "DAG curve (test; *_train: training rows, bank out of fold)",
            dag,
            [
                "cost_scale",
                "avg_cost",
                "avg_sensors",
                "error",
                "avg_cost_train",
                "error_train",
            ],
        )
        if mode == MODES[0]:
            base = test[test["method"].isin(["hull", "no_sensors", "all_sensors"])]
            base = base.assign(sensors=base["sensors"].map(lambda s: ",".join(s)))
            show(
                "Fixed-subset hull and end points (test)",
                base,
                ["method", "sensors", "avg_cost", "error"],
            )
            show(
                "Oracle frontier (test)",
                test[test["method"] == "oracle"],
                ["avg_cost", "avg_sensors", "error"],
            )
        print("  " + res.summaries["test"].describe())
        print("  " + res.summaries["train"].describe())
    summary = {}
    for split in ("test", "train"):
        a = results[MODES[0]].frame
        b = results[MODES[1]].frame
        gap, lo, hi = curve_gap(
            a[(a["method"] == "dag") & (a["split"] == split)],
            b[(b["method"] == "dag") & (b["split"] == split)],
        )
        summary[split] = gap
        print(
            f"  [{split}] confidence minus paper mode, mean error over costs "
            f"{lo:.3g}..{hi:.3g}: {gap * 100:+.2f} points (negative = confidence "
            "helps)"
        )
    return {
        "dataset": name,
        **{
            f"{mode} {key}": value
            for mode in MODES
            for key, value in (
                ("gap vs hull (test, pts)", results[mode].summary.mean_gap * 100),
                ("cost to match all (test)", results[mode].summary.dag_cost_fraction),
            )
        },
        "confidence - paper (test, pts)": summary["test"] * 100,
        "confidence - paper (train, pts)": summary["train"] * 100,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=["pima", "landsat", "letter"])
    parser.add_argument("--points", type=int, default=10)
    parser.add_argument("--n-jobs", type=int, default=None)
    args = parser.parse_args()
    pd.set_option("display.width", 160)
    rows = [run(name, args.points, args.n_jobs) for name in args.datasets]
    print(
        "\n=== Summary (test split; mean gaps in error points, positive = DAG "
        "below the hull; cost fractions of the all-sensor cost)"
    )
    print(pd.DataFrame(rows).to_string(index=False, float_format=lambda v: f"{v:.3f}"))


if __name__ == "__main__":
    main()
