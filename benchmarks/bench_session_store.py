"""Bytes the session store keeps per session (``ui/store.py``), as README states.

Builds the snapshots ``ui.session.keep`` writes for: a fresh visit (the
landsat demo at the defaults), landsat with a model trained at the app's
defaults, and the same with its trade-off curve (10 points); saves each with
``ui.store.save`` into a temporary folder and prints the file sizes, beside
the pickles' size before compression.

    PYTHONPATH=$PWD python benchmarks/bench_session_store.py [--demo landsat]
"""

from __future__ import annotations

import argparse
import os
import pickle
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ui import session, state, store  # noqa: E402
from ui.data import demo_dataset, load_app_demo  # noqa: E402
from ui.spec_table import spec_to_table  # noqa: E402
from ui.sweep import compute_sweep, sweep_key  # noqa: E402
from ui.training import TrainSettings, train  # noqa: E402


def stored_bytes(snapshot: dict) -> tuple[int, int]:
    """(file size written by ui.store.save, pickle size before compression)."""
    token = store.new_token()
    assert store.save(token, snapshot) is None
    size = (store.store_dir() / f"{token}.pkl").stat().st_size
    raw = len(pickle.dumps({"format": store.FORMAT, **snapshot}, protocol=5))
    assert store.load(token) is not None
    return size, raw


def _size(n: int) -> str:
    return f"{n / 2**10:.1f} KB" if n < 2**20 else f"{n / 2**20:.2f} MB"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--demo", default="landsat")
    parser.add_argument("--points", type=int, default=10)
    args = parser.parse_args()
    os.environ[store.ENV_DIR] = tempfile.mkdtemp(prefix="bench-store-")

    dataset = demo_dataset(load_app_demo(args.demo))
    ss = dict(state.DEFAULTS)
    ss.update(
        {
            state.DATASET: dataset,
            state.SPEC_TABLE: spec_to_table(dataset.spec),
            state.W_DEMO: args.demo,
        }
    )
    rows = []
    rows.append(("fresh visit", *stored_bytes(session.snapshot(ss))))

    settings = TrainSettings(cost_scale=float(ss[state.W_COST_SCALE]))
    start = time.perf_counter()
    run = train(dataset, dataset.spec, settings)
    print(f"trained {args.demo} in {time.perf_counter() - start:.1f} s")
    ss[state.RUN] = run
    rows.append(("with a model", *stored_bytes(session.snapshot(ss))))

    start = time.perf_counter()
    params = run.params
    result = compute_sweep(dataset, dataset.spec, params, args.points, previous=run)
    print(f"traced {args.points} points in {time.perf_counter() - start:.1f} s")
    key = sweep_key(dataset, dataset.spec, params, args.points)
    ss[state.SWEEP] = {"key": key, "dataset": dataset.token, "result": result}
    rows.append(("with a model and its curve", *stored_bytes(session.snapshot(ss))))

    print(
        f"\n{args.demo}: bytes kept per session (ui.store, zlib level "
        f"{store.COMPRESSION})"
    )
    print(f"{'snapshot':<28} {'file':>10} {'pickle':>10}")
    for what, size, raw in rows:
        print(f"{what:<28} {_size(size):>10} {_size(raw):>10}")
    fresh = rows[0][1]
    print(
        f"\n{store.MAX_TOTAL_BYTES / 2**30:g} GB in all holds "
        f"{store.MAX_TOTAL_BYTES // fresh:,} fresh visits or "
        f"{store.MAX_TOTAL_BYTES // rows[-1][1]:,} sessions with a model and curve."
    )


if __name__ == "__main__":
    main()
