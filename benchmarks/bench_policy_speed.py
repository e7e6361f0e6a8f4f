"""Policy learning speed (issue 13): ``refit_policies`` for a new cost scale as a
ratio to one single-threaded ``HistGradientBoostingClassifier(max_iter=200,
early_stopping=True)`` fit on all features of the same training rows, measured
side by side in one run; and Graph-Reduce on a long synthetic loss table.

    PYTHONPATH=. python benchmarks/bench_policy_speed.py [landsat letter]

The bank is fitted once per dataset (cached, see ``_policy_problems.py``); only
policy learning is timed. Each timing is the best of ``--repeats`` runs (the
machine is shared: the minimum is the least disturbed).
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.ensemble import HistGradientBoostingClassifier
from threadpoolctl import threadpool_limits

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))  # this checkout's budgetdag_core wins

from _policy_problems import bank_params, cached_bank, problems  # noqa: E402

from budgetdag_core import BudgetDAGClassifier, SensorDAG, graph_reduce  # noqa: E402
from budgetdag_core.policy import make_learner  # noqa: E402

PAPER = {"policy_features": "sensors", "stop_loss": "zero_one"}


def best_of(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def dataset_ratios(name: str, cache_dir: Path, repeats: int) -> None:
    p = next(q for q in problems(name) if q.role == "test")
    bank = cached_bank(p, cache_dir)
    X = p.X_fit[list(p.spec.columns)].to_numpy(float)

    def hgb() -> None:
        with threadpool_limits(1):
            HistGradientBoostingClassifier(
                max_iter=200, early_stopping=True, random_state=0
            ).fit(X, p.y_fit)

    hgb_s = best_of(hgb, repeats)
    print(f"{name}: one single-threaded HGB fit {hgb_s:.2f} s", flush=True)
    for label, extra in (("default", {}), ("paper", PAPER)):
        model = BudgetDAGClassifier(p.spec, cost_scale=0.05, **bank_params(p), **extra)
        model.fit(p.X_fit, p.y_fit, bank=bank)
        s = best_of(lambda m=model: m.refit_policies(p.X_fit, p.y_fit, 0.1), repeats)
        print(
            f"  {label:8s} refit_policies {s:.2f} s = {s / hgb_s:.2f} x HGB",
            flush=True,
        )


def long_table(n_rows: int, n_sensors: int, n_inputs: int) -> None:
    """Graph-Reduce of the default learner on n_rows x 2^n_sensors states."""
    rng = np.random.default_rng(0)
    dag = SensorDAG([f"s{i}" for i in range(n_sensors)])
    losses = rng.random((n_rows, dag.n_states)).astype(float)
    Z = rng.random((n_rows, n_inputs))
    default = BudgetDAGClassifier({})
    learner = make_learner(default.policy_learner, default.policy_degree_, 1000, n_rows)
    t0 = time.perf_counter()
    graph_reduce(
        lambda k: Z if k else Z[:, :0],
        losses,
        np.full(n_sensors, 0.01),
        dag,
        learner,
    )
    print(
        f"graph_reduce, default learner: {n_rows} rows x {dag.n_states} states, "
        f"{n_inputs} inputs per node: {time.perf_counter() - t0:.1f} s",
        flush=True,
    )


def main() -> None:
    warnings.filterwarnings("ignore")
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("datasets", nargs="*", default=["landsat", "letter"])
    parser.add_argument("--cache-dir", type=Path, default=Path("/tmp/h4_banks"))
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--long-rows", type=int, default=100_000)
    args = parser.parse_args()
    for name in args.datasets:
        dataset_ratios(name, args.cache_dir, args.repeats)
    if args.long_rows:
        long_table(args.long_rows, 7, 9)


if __name__ == "__main__":
    main()
