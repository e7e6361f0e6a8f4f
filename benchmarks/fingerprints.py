"""Print hashes of what fitted models compute, to check that a change keeps numbers.

For spam (57 one-column sensors, greedy subsets), landsat and pima this fits the
default classifier (and a few non-default configurations: the paper's sensor
inputs, the masked bank, a loss matrix, the regressor) and prints one sha256 per
quantity: test probabilities, traces, training costs-to-go, and the frame of a
small trade-off sweep. Run it before and after a refactor; the lines must match.

    python benchmarks/fingerprints.py > before.txt
    ... change ...
    python benchmarks/fingerprints.py > after.txt && diff before.txt after.txt
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import warnings

import numpy as np
import pandas as pd

from budgetdag_core import (
    BudgetDAGClassifier,
    BudgetDAGRegressor,
    load_demo,
    tradeoff_curve,
)


def digest(value) -> str:
    """A short sha256 of an array or frame (values, dtypes and labels)."""
    h = hashlib.sha256()
    if isinstance(value, pd.DataFrame):
        h.update(repr(list(value.columns)).encode())
        for col in value.columns:
            h.update(digest(value[col].to_numpy()).encode())
    else:
        arr = np.asarray(value)
        if arr.dtype == object:
            h.update(repr(arr.tolist()).encode())
        else:
            h.update(str(arr.dtype).encode() + str(arr.shape).encode())
            h.update(np.ascontiguousarray(arr).tobytes())
    return h.hexdigest()[:16]


def configurations(name: str) -> dict[str, dict]:
    spam = {"n_subsets": 8} if name == "spam" else {}
    configs = {
        "default": {**spam},
        "paper": {**spam, "policy_features": "sensors"},
    }
    if name != "spam":
        configs["masked"] = {"bank_kind": "masked"}
        configs["cost_regression"] = {"policy_learner": "cost_regression"}
    if name == "pima":
        configs["loss_matrix"] = {"loss_matrix": [[0, 1], [5, 0]]}
    return configs


def model_lines(name: str, demo, config: str, params: dict) -> list[str]:
    # About a tenth of an error per all-sensor cost: the policies buy some
    # sensors for some rows, so routes, not only the root, are fingerprinted.
    scale = 0.1 / float(demo.spec.cost_vector.sum())
    model = BudgetDAGClassifier(
        demo.spec, cost_scale=scale, cv=3, random_state=0, n_jobs=2, **params
    ).fit(demo.X_train, demo.y_train)
    X_test = demo.X_test.iloc[:500]
    trace = model.trace(X_test)
    return [
        f"{name} {config} proba {digest(model.predict_proba(X_test))}",
        f"{name} {config} trace {digest(trace)}",
        f"{name} {config} cost_to_go {digest(model.train_cost_to_go_)}",
    ]


def sweep_line(name: str, demo) -> str:
    params = {"n_subsets": 8} if name == "spam" else {}
    result = tradeoff_curve(
        demo.X_train,
        demo.y_train,
        demo.spec,
        n_points=4,
        X_test=demo.X_test.iloc[:500],
        y_test=demo.y_test.iloc[:500],
        cv=3,
        random_state=0,
        n_jobs=2,
        **params,
    )
    frame = result.frame.drop(columns=["sensors"], errors="ignore")
    return f"{name} sweep frame {digest(frame)}"


def regressor_line(demo) -> str:
    y = demo.train["glucose"].to_numpy(float)
    X = demo.X_train.drop(columns=["glucose"])
    spec = {"groups": {"patient": demo.spec.groups["patient"]}, "costs": {"patient": 1}}
    spec["groups"]["insulin"] = ["insulin"]
    spec["costs"]["insulin"] = 3.0
    model = BudgetDAGRegressor(spec, cost_scale=0.001, cv=3, random_state=0)
    model.fit(X, y)
    return f"pima regressor predict {digest(model.predict(X.iloc[:300]))}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=["pima", "landsat", "spam"])
    parser.add_argument("--no-sweep", action="store_true")
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    for name in args.datasets:
        demo = load_demo(name)
        for config, params in configurations(name).items():
            for line in model_lines(name, demo, config, params):
                print(line, flush=True)
        if not args.no_sweep:
            print(sweep_line(name, demo), flush=True)
        if name == "pima":
            print(regressor_line(demo), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
