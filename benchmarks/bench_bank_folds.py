"""How many folds should the cross-fitted bank use? Measured on validation rows.

The bank's ``cv`` sets both the out-of-fold predictions the policies learn from
and the number of fold models a state averages at predict time, so fewer folds
fit and predict faster, with each fold model trained on fewer rows. This script
measures that trade-off on the TRAINING rows only: each dataset's training split
is divided 75/25 (stratified, seeded); the 75 % fit the default
``BudgetDAGClassifier`` with each ``cv``, and the 25 % are the validation rows
the curves are read on (the benchmark test splits are not touched).

Per dataset, seed and ``cv`` it prints and writes to
``benchmarks/out/bank_folds.csv``: the bank fit time (one fit, ``n_jobs=2``),
batch prediction throughput (validation rows tiled to 50 000), the all-sensor
state's validation error, and the DAG's, the confidence cascade's and the
fixed-subset hull's validation error at 25/50/75 % of the all-sensor cost (lower
convex hull of a 12-point sweep, as ``run_all.py`` reads curves).

Run ``PYTHONPATH=. python benchmarks/bench_bank_folds.py [datasets] [--cv 3 5]``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.model_selection import train_test_split

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent), str(HERE)]  # this checkout's package first

from _common import (  # noqa: E402
    OUT,
    error_at,
    load,
    predict_rows_per_second,
    tiled,
    warm_up,
)

from budgetdag_core import BudgetDAGClassifier, tradeoff_curve  # noqa: E402
from budgetdag_core.tradeoff import lower_convex_hull  # noqa: E402

BUDGETS = (0.25, 0.5, 0.75)
SEEDS = {"landsat": (0, 1, 2), "pima": (0, 1, 2), "letter": (0,), "spam": (0, 1)}


def hull_errors(points: pd.DataFrame, total_cost: float) -> list[float]:
    """Validation error at each budget on the points' lower convex hull."""
    cost, err = points["avg_cost"].to_numpy(), points["error"].to_numpy()
    hull = lower_convex_hull(cost, err)
    return [error_at(cost[hull], err[hull], b * total_cost) for b in BUDGETS]


def run(name: str, seed: int, cv: int) -> dict:
    data = load(name, quick=False, max_train=None)
    X_fit, X_val, y_fit, y_val = train_test_split(
        data.X_train,
        np.asarray(data.y_train),
        test_size=0.25,
        stratify=np.asarray(data.y_train),
        random_state=seed,
    )
    params = {**data.params, "cv": cv, "random_state": 0, "n_jobs": 2}
    if data.degrees == (1,):
        params["policy_degree"] = 1
    template = BudgetDAGClassifier(data.spec, **params)
    t = time.perf_counter()
    bank = template.fit_bank(X_fit, y_fit)
    bank_seconds = time.perf_counter() - t
    result = tradeoff_curve(
        X_fit,
        y_fit,
        template,
        n_points=12,
        X_test=X_val,
        y_test=y_val,
        bank=bank,
    )
    frame = result.frame[result.frame["split"] == "test"]
    total = float(data.spec.total_cost)
    row = {
        "dataset": name,
        "seed": seed,
        "cv": cv,
        "bank_s": round(bank_seconds, 2),
        "all_err": float(frame.loc[frame["method"] == "all_sensors", "error"].iloc[0]),
    }
    for method in ("dag", "cascade", "hull"):
        errs = hull_errors(frame[frame["method"] == method], total)
        for b, e in zip(BUDGETS, errs, strict=True):
            row[f"{method}{int(b * 100)}"] = round(e, 4)
    model = result.model_at(float(result.cost_scales[len(result.cost_scales) // 2]))
    row["predict_rows_s"] = int(predict_rows_per_second(model, tiled(X_val, 50_000), 2))
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("datasets", nargs="*", default=list(SEEDS))
    parser.add_argument("--cv", nargs="*", type=int, default=[5, 3])
    parser.add_argument("--out", type=Path, default=OUT / "bank_folds.csv")
    args = parser.parse_args()
    warm_up()
    rows = []
    for name in args.datasets:
        for seed in SEEDS.get(name, (0,)):
            for cv in args.cv:  # side by side: the variants of one split in a row
                rows.append(run(name, seed, cv))
                print(pd.DataFrame([rows[-1]]).to_string(index=False), flush=True)
    frame = pd.DataFrame(rows)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    frame.to_csv(args.out, index=False)
    cols = [c for c in frame.columns if c not in ("dataset", "seed", "cv")]
    print("\nmean over seeds:")
    print(frame.groupby(["dataset", "cv"])[cols].mean().round(4).to_string())


if __name__ == "__main__":
    main()
