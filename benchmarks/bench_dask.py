"""A many-sensor fit on this process against a 2-worker Dask cluster.

Issue 57: where does a Dask cluster pay? Twenty one-feature sensors, the
classifier's many-sensor fit (``dag="auto"``: an any-subset bank, the
strategies' growths, the choice on held-out rows, Graph-Reduce), at each of
``--rows``: the local fit (joblib's default backend, ``n_jobs=None``) and the
same fit under ``joblib.parallel_config(backend="dask")`` on a
``LocalCluster`` of 2 worker processes of one thread each (tasks pickled and
sent as on a real cluster). It prints the times, the cluster's tasks by
function, and what the tasks ship: the growth's shared bank and data (sent
once per growth), and the arguments of a growth task and of a node fit.

Run: ``nice -n 10 python benchmarks/bench_dask.py --save
benchmarks/results/dask/dask.json`` (many minutes on a busy machine), then
``python benchmarks/render_report.py``;
``--threads-only`` times the local fit with ``n_jobs=2`` (threads) instead.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import importlib
import json
import os
import subprocess
import time
import warnings
from pathlib import Path

import cloudpickle
import joblib
import numpy as np
import pandas as pd

from budgetdag_core import BudgetDAGClassifier

# The modules, not the package's same-named function.
graph_reduce = importlib.import_module("budgetdag_core.graph_reduce")
growth_module = importlib.import_module("budgetdag_core.strategies._growth")
routed_module = importlib.import_module("budgetdag_core.strategies._routed")

PARAMS = {"cost_scale": 0.01, "random_state": 0, "cv": 3, "max_states": 200}


def one_feature_sensors(n: int, m: int = 20) -> tuple[pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(n, m)), columns=[f"s{i}" for i in range(m)])
    signal = X["s0"] + 0.5 * X["s1"] + X["s2"] * X["s3"]
    return X, (signal + rng.normal(scale=0.5, size=n) > 0).astype(int).to_numpy()


class Shipped:
    """Bytes the cluster's tasks would carry, recorded on a local fit: per
    ``task_map`` block (a growth, a routing search) its shared arguments
    (sent once per block), per task its own arguments, per node fit its
    learner, inputs and cost table."""

    def __init__(self) -> None:
        self.shared: list[int] = []
        self.own: dict[str, list[int]] = collections.defaultdict(list)

    def __enter__(self) -> Shipped:
        maps = growth_module.task_map, routed_module.task_map
        fit_node = graph_reduce.fit_node
        self._saved = (*maps, fit_node)

        @contextlib.contextmanager
        def recording(function, shared, n_jobs):
            self.shared.append(len(cloudpickle.dumps(shared)))

            def one(*args):
                own = cloudpickle.dumps(args[len(shared) :])
                self.own[function.__name__].append(len(own))
                return function(*args)

            with maps[0](one, shared, n_jobs) as run:
                yield run

        def node(learner, Z, C):
            self.own["fit_node"].append(len(cloudpickle.dumps((learner, Z, C))))
            return fit_node(learner, Z, C)

        growth_module.task_map = routed_module.task_map = recording
        graph_reduce.fit_node = node
        return self

    def __exit__(self, *exc: object) -> None:
        growth_module.task_map, routed_module.task_map, graph_reduce.fit_node = (
            self._saved
        )


def in_kb(size: float) -> float:
    return round(float(size) / 1e3, 1)


def kb(values: list[int]) -> str:
    if not values:
        return "-"
    return f"{np.median(values) / 1e3:.1f} kB (max {max(values) / 1e3:.1f})"


def threads_only(rows: list[int]) -> int:
    """The local fit in two threads (``n_jobs=2``) at each of ``rows``."""
    X, y = one_feature_sensors(200)
    # Warm-up, n_jobs=2: the bank's network fits go to joblib's loky worker
    # processes, which start (and load numba's kernels) once.
    BudgetDAGClassifier(**PARAMS, n_jobs=2).fit(X, y)
    for n in rows:
        X, y = one_feature_sensors(n)
        start = time.perf_counter()
        BudgetDAGClassifier(**PARAMS, n_jobs=2).fit(X, y)
        took = time.perf_counter() - start
        print(f"rows {n}: local n_jobs=2 {took:.1f} s", flush=True)
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", nargs="+", type=int, default=[300, 1000, 3000])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument(
        "--save",
        type=Path,
        help="write the runs as JSON (benchmarks/results/dask/dask.json is "
        "what docs/user_guide/scale_out.rst's generated table reads)",
    )
    parser.add_argument(
        "--threads-only",
        action="store_true",
        help="time only the local fit with n_jobs=2 (threads), no cluster",
    )
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    if args.threads_only:
        return threads_only(args.rows)
    from distributed import Client, LocalCluster, get_task_stream

    print(f"params {PARAMS}, 20 one-feature sensors")
    runs, loads = [], [os.getloadavg()[0]]
    with (
        LocalCluster(
            n_workers=args.workers,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
        ) as cluster,
        Client(cluster) as client,
    ):
        # Warm-up: numba's kernels load (or compile) once per process, here
        # and in each worker; the timed fits below start warm.
        X, y = one_feature_sensors(200)
        BudgetDAGClassifier(**PARAMS).fit(X, y)
        with joblib.parallel_config("dask"):
            BudgetDAGClassifier(**PARAMS).fit(X, y)
        print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
        for n in args.rows:
            X, y = one_feature_sensors(n)
            start = time.perf_counter()
            local = BudgetDAGClassifier(**PARAMS).fit(X, y)
            t_local = time.perf_counter() - start
            with Shipped() as shipped:
                BudgetDAGClassifier(**PARAMS).fit(X, y)
            with get_task_stream(client) as stream, joblib.parallel_config("dask"):
                start = time.perf_counter()
                remote = BudgetDAGClassifier(**PARAMS).fit(X, y)
                t_dask = time.perf_counter() - start
            same = np.array_equal(local.predict_proba(X), remote.predict_proba(X))
            kinds = collections.Counter(
                task["key"].split("batch_of_")[1].rsplit("_", 2)[0]
                for task in stream.data
            )
            print(
                f"rows {n}: local {t_local:.1f} s, dask {t_dask:.1f} s "
                f"({t_dask / t_local:.2f}x), same model {same}, "
                f"strategy {local.strategy_}, {local.sensor_dag_.n_states} states",
                flush=True,
            )
            print(f"  tasks {dict(kinds)}")
            loads.append(os.getloadavg()[0])
            own = {k: v for k, v in shipped.own.items() if v}
            runs.append(
                {
                    "rows": n,
                    "kept": local.strategy_,
                    "states": local.sensor_dag_.n_states,
                    "local_s": round(t_local, 1),
                    "dask_s": round(t_dask, 1),
                    "tasks": dict(kinds),
                    "shared_kB": round(float(np.median(shipped.shared)) / 1e3, 1),
                    "task_kB": {
                        k: round(float(np.median(v)) / 1e3, 1) for k, v in own.items()
                    },
                    "task_max_kB": {k: round(max(v) / 1e3, 1) for k, v in own.items()},
                }
            )
            tasks = "; ".join(
                f"{name} {kb(sizes)} x {len(sizes)}"
                for name, sizes in shipped.own.items()
            )
            print(
                f"  shipped: shared per block {kb(shipped.shared)} x "
                f"{len(shipped.shared)}; per task {tasks}",
                flush=True,
            )
        print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    if args.save is not None:
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True
        ).stdout.strip()
        saved = {
            "command": "nice -n 10 python benchmarks/bench_dask.py --rows "
            + " ".join(map(str, args.rows)),
            "commit": commit,
            "load_average": f"{min(loads):.0f} to {max(loads):.0f}",
            "runs": runs,
        }
        args.save.parent.mkdir(parents=True, exist_ok=True)
        args.save.write_text(json.dumps(saved, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
