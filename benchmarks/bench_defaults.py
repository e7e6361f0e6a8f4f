"""The default estimators out of the box (issue 57), measured.

- ``regressor``: ``BudgetDAGRegressor()`` (``cost_scale="auto"``,
  ``dag="auto"``) on scikit-learn's diabetes table (10 one-column sensors),
  ``--rows`` training rows (309: a 70 % split, the issue's table), against one
  ``HistGradientBoostingRegressor`` fitted single-threaded in the same
  process (median of ``--repeats``). Target: the ratio at most 10.
- ``classifier``: ``BudgetDAGClassifier()`` on the same rows' breast-cancer
  counterpart (the first 10 columns) and on three well-separated blobs: fit
  seconds, the ratio to one single-threaded ``HistGradientBoostingClassifier``,
  training accuracy, sensors bought and the chosen cost scale.

Run with ``nice``: the ratios are of two fits in one process, so the machine's
load moves both, but not always alike; the load averages are printed.

    nice -n 10 python benchmarks/bench_defaults.py
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings

import numpy as np
import pandas as pd
from sklearn.datasets import load_breast_cancer, load_diabetes, make_blobs
from sklearn.ensemble import (
    HistGradientBoostingClassifier,
    HistGradientBoostingRegressor,
)
from threadpoolctl import threadpool_limits

from budgetdag_core import BudgetDAGClassifier, BudgetDAGRegressor


def _seconds(fit) -> float:
    start = time.perf_counter()
    fit()
    return time.perf_counter() - start


def _hgb_seconds(model, X, y, repeats: int) -> float:
    with threadpool_limits(1):
        return float(
            np.median([_seconds(lambda: model.fit(X, y)) for _ in range(repeats)])
        )


def regressor(rows: int, repeats: int) -> None:
    data = load_diabetes(as_frame=True)
    X = data.data.sample(rows, random_state=0)
    y = data.target.loc[X.index].to_numpy()
    hgb = _hgb_seconds(HistGradientBoostingRegressor(random_state=0), X, y, repeats)
    model = BudgetDAGRegressor(random_state=0)
    seconds = _seconds(lambda: model.fit(X, y))
    scores = model.evaluate(X, y)
    print(
        f"regressor diabetes {rows}x{X.shape[1]}: fit {seconds:.2f} s, one HGB "
        f"{hgb:.3f} s, ratio {seconds / hgb:.1f} (target <= 10); dag "
        f"{model.strategy_} ({model.sensor_dag_.n_states} states), cost_scale_ "
        f"{model.cost_scale_:.4g}, train mse {scores['mse']:.1f}, sensors "
        f"{scores['avg_sensors']:.2f}",
        flush=True,
    )


def classifier(name: str, X: pd.DataFrame, y: np.ndarray, repeats: int) -> None:
    hgb = _hgb_seconds(HistGradientBoostingClassifier(random_state=0), X, y, repeats)
    model = BudgetDAGClassifier(random_state=0)
    seconds = _seconds(lambda: model.fit(X, y))
    scores = model.evaluate(X, y)
    print(
        f"classifier {name} {X.shape[0]}x{X.shape[1]}: fit {seconds:.2f} s, one "
        f"HGB {hgb:.3f} s, ratio {seconds / hgb:.1f}; dag {model.strategy_} "
        f"({model.sensor_dag_.n_states} states), cost_scale_ "
        f"{model.cost_scale_:.4g}, train accuracy {1 - scores['error']:.3f}, "
        f"sensors {scores['avg_sensors']:.2f}",
        flush=True,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=309)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--parts", nargs="+", default=["regressor", "classifier"])
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    # A first small fit: the compiled kernels and lazy imports are loaded
    # before anything is timed.
    rng = np.random.default_rng(0)
    X0 = pd.DataFrame(rng.normal(size=(60, 2)), columns=["a", "b"])
    BudgetDAGRegressor(cost_scale=0.1).fit(X0, X0["a"].to_numpy())
    print(f"load averages {os.getloadavg()}", flush=True)
    if "regressor" in args.parts:
        regressor(args.rows, args.repeats)
    if "classifier" in args.parts:
        cancer = load_breast_cancer(as_frame=True)
        X = cancer.data.iloc[:, :10].sample(args.rows, random_state=0)
        classifier(
            "breast_cancer", X, cancer.target.loc[X.index].to_numpy(), args.repeats
        )
        Xb, yb = make_blobs(
            300, centers=3, n_features=2, cluster_std=0.6, random_state=0
        )
        classifier("blobs", pd.DataFrame(Xb, columns=["a", "b"]), yb, args.repeats)
    print(f"load averages {os.getloadavg()}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
