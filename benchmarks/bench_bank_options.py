"""Fit-speed options of the LightGBM bank, measured against accuracy (issue 13).

Prints, for one dataset (landsat by default), the time and test error of the
bank's cross-fitted ensemble on all features (the all-sensor state: the fold
models' averaged probabilities) under variants of the bank's settings:

- ``cv`` (fold models per state), early-stopping patience, ``max_bin``,
  ``num_leaves`` and the learning rate (``--variants``);
- ``--shared-dataset``: binning once per fold (one LightGBM ``Dataset`` on all
  columns, each state restricted to its columns by ``interaction_constraints``)
  against one ``Dataset`` per state, on the states of a 4-sensor DAG.

Times are noisy on a shared machine: compare rows of one run, and repeat
(``--repeat``). Run ``PYTHONPATH=. python benchmarks/bench_bank_options.py``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.model_selection import StratifiedKFold

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent), str(HERE)]  # this checkout's package first

from _common import load  # noqa: E402

#: The bank's own settings (``budgetdag_core.bank.boosting_classifier``).
BANK = {"cv": 5, "learning_rate": 0.2, "patience": 10, "max_bin": 255, "leaves": 31}
VARIANTS: list[dict[str, Any]] = [
    {},
    {"cv": 3},
    {"patience": 5},
    {"max_bin": 63},
    {"leaves": 15},
    {"leaves": 15, "learning_rate": 0.3, "patience": 5},
]


def _params(n_classes: int, s: dict[str, Any]) -> dict[str, Any]:
    params = {
        "learning_rate": s["learning_rate"],
        "num_leaves": s["leaves"],
        "min_child_samples": 20,
        "lambda_l2": 1.0,
        "num_threads": 1,
        "deterministic": True,
        "force_row_wise": True,
        "seed": 0,
        "verbose": -1,
        "max_bin": s["max_bin"],
    }
    if n_classes == 2:
        params["objective"] = "binary"
    else:
        params.update(objective="multiclass", num_class=n_classes)
    return params


def ensemble(X, y, X_test, y_test, n_classes: int, **changes: Any) -> None:
    """Time and test error of the cv fold models (all features), averaged."""
    import lightgbm as lgb

    s = {**BANK, **changes}
    folds = StratifiedKFold(s["cv"], shuffle=True, random_state=0).split(X, y)
    t = time.perf_counter()
    proba, rounds = 0.0, []
    for train, test in folds:
        data = lgb.Dataset(X[train], y[train], params={"max_bin": s["max_bin"]})
        booster = lgb.train(
            _params(n_classes, s),
            data,
            100,
            valid_sets=[data.create_valid(X[test], y[test])],
            callbacks=[lgb.early_stopping(s["patience"], verbose=False)],
        )
        rounds.append(booster.best_iteration)
        raw = booster.predict(X_test, num_iteration=booster.best_iteration)
        proba = proba + (np.column_stack([1 - raw, raw]) if raw.ndim == 1 else raw)
    seconds = time.perf_counter() - t
    error = np.mean(np.argmax(proba, axis=1) != y_test)
    print(
        f"{str(changes or 'bank settings'):55s} {seconds:6.2f} s  test error "
        f"{error:.4f}  best rounds {rounds}",
        flush=True,
    )


def shared_dataset(X, y, n_classes: int, n_sensors: int = 4) -> None:
    """Per-state Datasets against one Dataset per fold + interaction constraints."""
    import lightgbm as lgb

    groups = np.array_split(np.arange(X.shape[1]), n_sensors)
    states = [
        np.concatenate([groups[m] for m in range(n_sensors) if s >> m & 1])
        for s in range(1, 2**n_sensors)
    ]
    train, test = next(StratifiedKFold(5, shuffle=True, random_state=0).split(X, y))
    params = _params(n_classes, BANK)
    stop = [lgb.early_stopping(BANK["patience"], verbose=False)]
    t = time.perf_counter()
    for cols in states:
        data = lgb.Dataset(X[train][:, cols], y[train])
        valid = data.create_valid(X[test][:, cols], y[test])
        lgb.train(params, data, 100, valid_sets=[valid], callbacks=stop)
    per_state = time.perf_counter() - t
    t = time.perf_counter()
    data = lgb.Dataset(X[train], y[train], free_raw_data=False)
    valid = data.create_valid(X[test], y[test])
    for cols in states:
        constrained = {**params, "interaction_constraints": [cols.tolist()]}
        lgb.train(constrained, data, 100, valid_sets=[valid], callbacks=stop)
    shared = time.perf_counter() - t
    print(
        f"one fold, {len(states)} states: a Dataset per state {per_state:.2f} s, "
        f"one shared Dataset + interaction_constraints {shared:.2f} s "
        f"({shared / per_state:.2f}x)",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="landsat")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--shared-dataset", action="store_true")
    args = parser.parse_args()
    data = load(args.dataset, quick=False, max_train=None)
    classes, y = np.unique(np.asarray(data.y_train), return_inverse=True)
    X = data.X_train.to_numpy(dtype=float)
    X_test = data.X_test[data.X_train.columns].to_numpy(dtype=float)
    y_test = np.searchsorted(classes, np.asarray(data.y_test))
    print(f"{args.dataset}: {len(X)} training rows, {len(classes)} classes")
    for _ in range(args.repeat):
        for changes in VARIANTS:
            ensemble(X, y, X_test, y_test, len(classes), **changes)
        if args.shared_dataset:
            shared_dataset(X, y, len(classes))


if __name__ == "__main__":
    main()
