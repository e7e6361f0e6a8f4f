"""Policy learning speed: refits, Graph-Reduce on a long table, node solvers.

``refit_policies`` for a new cost scale as a
ratio to one single-threaded ``HistGradientBoostingClassifier(max_iter=200,
early_stopping=True)`` fit on all features of the same training rows, measured
side by side in one run; Graph-Reduce on a long synthetic loss table; and
(``--node-solvers spam``) the filter-tree node problems of one refit trained
four ways side by side: node by node or in one compiled call, each with the
line search's objective at every Newton step or only where needed.

    PYTHONPATH=. python benchmarks/bench_policy_speed.py [landsat letter]
    PYTHONPATH=. python benchmarks/bench_policy_speed.py --node-solvers spam shuttle

The bank is fitted once per dataset (cached, see ``_common.cached_bank``); only
policy learning is timed. Each timing is the best of ``--repeats`` runs (the
machine is shared: the minimum is the least disturbed).
"""

from __future__ import annotations

import argparse
import functools
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.ensemble import HistGradientBoostingClassifier
from threadpoolctl import threadpool_limits

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))  # this checkout's budgetdag_core wins

from _common import (  # noqa: E402
    bank_params,
    cached_bank,
    problems,
)

from budgetdag_core import BudgetDAGClassifier, SensorDAG, graph_reduce  # noqa: E402
from budgetdag_core.estimator._policy import make_learner  # noqa: E402
from budgetdag_core.reductions import _filter_tree  # noqa: E402
from budgetdag_core.reductions._filter_tree import FilterTree  # noqa: E402
from budgetdag_core.reductions._logistic import SAFE_STEP, fit_logistic  # noqa: E402
from budgetdag_core.reductions._tournament import (  # noqa: E402
    tournament_layout,
    train_tournament,
)

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


def node_problems(name: str, cache_dir: Path) -> list[tuple[FilterTree, Any, Any]]:
    """(tree, features, cost table) of every filter-tree fit of one default
    ``refit_policies`` on the dataset's test problem (its cached bank)."""
    p = next(q for q in problems(name) if q.role == "test")
    bank = cached_bank(p, cache_dir)
    model = BudgetDAGClassifier(p.spec, cost_scale=0.05, **bank_params(p))
    model.fit(p.X_fit, p.y_fit, bank=bank)
    captured = []
    original = FilterTree._train_logistic

    def capture(tree: FilterTree, F: np.ndarray, C: np.ndarray) -> Any:
        captured.append((tree, F, C))
        return original(tree, F, C)

    FilterTree._train_logistic = capture
    try:
        model.refit_policies(p.X_fit, p.y_fit, 0.1)
    finally:
        FilterTree._train_logistic = original
    return captured


def node_solvers(name: str, cache_dir: Path, repeats: int) -> None:
    """One thread; the variants alternate within each repeat (best of repeats)."""
    captured = node_problems(name, cache_dir)

    def node_by_node(safe_step: float) -> list:
        solver = functools.partial(fit_logistic, safe_step=safe_step)
        _filter_tree.fit_logistic, saved = solver, _filter_tree.fit_logistic
        try:
            return [
                tree._train(F, C, np.arange(C.shape[1]))[1] for tree, F, C in captured
            ]
        finally:
            _filter_tree.fit_logistic = saved

    def compiled(safe_step: float) -> list:
        return [
            train_tournament(
                F,
                C,
                np.ones(len(C)),
                *tournament_layout(C.shape[1]),
                1.0 / tree.C,
                tree.max_iter,
                safe_step,
            )[-1]
            for tree, F, C in captured
        ]

    variants = {
        "node by node, objective at every step (before)": lambda: node_by_node(0.0),
        "node by node, objective where needed": lambda: node_by_node(SAFE_STEP),
        "compiled, objective at every step": lambda: compiled(0.0),
        "compiled, objective where needed (default)": lambda: compiled(SAFE_STEP),
    }
    times: dict[str, list[float]] = {label: [] for label in variants}
    winners: dict[str, list] = {}
    with threadpool_limits(1):
        for _ in range(repeats):
            for label, run in variants.items():
                t0 = time.perf_counter()
                winners[label] = run()
                times[label].append(time.perf_counter() - t0)
    first = next(iter(variants))
    same = all(
        all(np.array_equal(a, b) for a, b in zip(w, winners[first], strict=True))
        for w in winners.values()
    )
    rows = sum(len(F) for _, F, _ in captured)
    print(
        f"{name}: {len(captured)} filter trees ({rows} rows in all), one thread, "
        f"best of {repeats}; same winners in all four: {same}"
    )
    for label, ts in times.items():
        print(f"  {label:48s} {min(ts):6.2f} s = {min(ts) / min(times[first]):.2f}x")


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
    parser.add_argument(
        "--long-rows",
        type=int,
        default=100_000,
        help="rows of the synthetic Graph-Reduce table (0: skip it)",
    )
    parser.add_argument(
        "--long-sensors",
        type=int,
        default=7,
        help="sensors of the synthetic table's full DAG (8: 256 states)",
    )
    parser.add_argument("--node-solvers", nargs="*", default=[], metavar="DATASET")
    args = parser.parse_args()
    if args.node_solvers:
        for name in args.node_solvers:
            node_solvers(name, args.cache_dir, args.repeats)
        return
    for name in args.datasets:
        dataset_ratios(name, args.cache_dir, args.repeats)
    if args.long_rows:
        long_table(args.long_rows, args.long_sensors, 9)


if __name__ == "__main__":
    main()
