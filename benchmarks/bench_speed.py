"""Speed targets of the trade-off issue, measured (not asserted).

1. A 10-point trade-off sweep on letter against one plain fit (target: <= 3x).
2. Graph-Reduce on 256 states (8 sensors) x 100k rows from a synthetic loss table
   (target: minutes).
3. Prediction throughput on letter, rows per second (target: >= 100k/s).

Run ``python benchmarks/bench_speed.py`` (add ``--only sweep|graph-reduce|predict``
to run one part, ``--rows N`` to size the Graph-Reduce table, ``--blas-threads 1``
to cap BLAS threads). Timings are wall-clock on whatever else the machine runs.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent), str(HERE)]  # this checkout's package first

from _synthetic import synthetic_losses  # noqa: E402

from budgetdag_core import (  # noqa: E402
    BudgetDAGClassifier,
    FilterTree,
    learn_policies_from_losses,
    load_demo,
)


def bench_sweep() -> BudgetDAGClassifier:
    from budgetdag_core import tradeoff_curve

    demo = load_demo("letter")
    t = time.perf_counter()
    model = BudgetDAGClassifier(demo.spec, cost_scale=0.05, random_state=0)
    model.fit(demo.X_train, demo.y_train)
    single = time.perf_counter() - t
    t = time.perf_counter()
    res = tradeoff_curve(
        demo.X_train,
        demo.y_train,
        demo.spec,
        n_points=10,
        X_test=demo.X_test,
        y_test=demo.y_test,
        random_state=0,
    )
    sweep = time.perf_counter() - t
    print(f"letter single fit (bank + policies): {single:8.1f} s")
    print(
        f"letter 10-point sweep ({len(res.models)} models, bank once, train+test "
        f"evaluation): {sweep:8.1f} s  = {sweep / single:.2f} x single fit"
    )
    return model


def bench_predict(model: BudgetDAGClassifier | None) -> None:
    demo = load_demo("letter")
    modes = ["sensors"]
    if "policy_features" in BudgetDAGClassifier._parameter_constraints:
        modes.append("sensors+confidence")
    reps = -(-100_000 // len(demo.X_test))
    big = pd.concat([demo.X_test] * reps, ignore_index=True).iloc[:100_000]
    for features in modes:
        if model is None or getattr(model, "policy_features", "sensors") != features:
            bank = model.bank_ if model is not None else None
            extra = {} if features == "sensors" else {"policy_features": features}
            model = BudgetDAGClassifier(
                demo.spec, cost_scale=0.05, random_state=0, **extra
            ).fit(demo.X_train, demo.y_train, bank=bank)
        model.predict(big.iloc[:1000])  # warm up
        for name, call in (("predict", model.predict), ("trace", model.trace)):
            wall, cpu = [], []
            for _ in range(5):  # best of 5: the machine is shared
                t, c = time.perf_counter(), time.process_time()
                call(big)
                wall.append(time.perf_counter() - t)
                cpu.append(time.process_time() - c)
            print(
                f"letter {name:8s} [{features:18s}] {len(big)} rows: best wall "
                f"{min(wall):5.2f} s = {len(big) / min(wall):9,.0f} rows/s "
                f"(CPU {min(cpu):5.2f} s = {len(big) / min(cpu):9,.0f} rows/s)"
            )


def bench_graph_reduce(n_rows: int) -> None:
    Z, losses, dag, costs, columns = synthetic_losses(n_rows, 8)
    t, c = time.perf_counter(), time.process_time()
    result = learn_policies_from_losses(
        Z, losses, dag, costs, columns, FilterTree(2), cost_scale=0.05
    )
    dt, cpu = time.perf_counter() - t, time.process_time() - c
    stops = np.mean(result.actions[:, 0] == 0)
    print(
        f"Graph-Reduce {dag.n_states} states x {n_rows} rows (filter tree, degree 2): "
        f"{dt:8.1f} s wall ({dt / 60:.1f} min), CPU {cpu:.1f} s; root stops for "
        f"{stops:.0%} of rows"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=["sweep", "graph-reduce", "predict"])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--blas-threads", type=int, default=None)
    args = parser.parse_args()
    if args.blas_threads is not None:
        from threadpoolctl import threadpool_limits

        threadpool_limits(args.blas_threads)
    print(f"BLAS threads: {args.blas_threads or 'library default'}")
    model = None
    if args.only in (None, "sweep"):
        model = bench_sweep()
    if args.only in (None, "predict"):
        bench_predict(model)
    if args.only in (None, "graph-reduce"):
        bench_graph_reduce(args.rows)


if __name__ == "__main__":
    main()
