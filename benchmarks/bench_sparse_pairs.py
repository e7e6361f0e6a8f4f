"""A many-sensor bank's stack on long tables: 16 random subsets per row, or
at most ``SPARSE_FIT_PAIRS`` (row, subset) pairs.

For each table and seed, the default classifier is fitted twice in this
process, one thread each: with every row's 16 random subsets (the stack
capped only by ``MAX_STACK_ROWS``, as before the pair cap) and with today's
``subsets_per_row`` (fewer subsets per row beyond 6 250 rows). Per fit it
prints the CPU seconds (``time.process_time``), the subsets per row, the
numbers ``cost_scale="auto"`` chose on (out of fold, on the training rows:
the richest state's error and the kept policy's error and average cost) and
the kept policy's test error and average cost.

    python benchmarks/bench_sparse_pairs.py --datasets shuttle letter16 --seeds 0

``letter16`` is letter's 16 features as 16 one-feature sensors (26 classes,
``bench_bank_kinds.py``); ``--max-train`` draws that many of its training
rows. The machine is shared: the CPU seconds of the two fits compare, their
wall-clock seconds do not.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

from threadpoolctl import threadpool_limits

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))  # this checkout's budgetdag_core wins

from bench_bank_kinds import many_sensor_data  # noqa: E402

import budgetdag_core.bank._masked as masked  # noqa: E402
from budgetdag_core import BudgetDAGClassifier  # noqa: E402

#: The two stacks compared: every row's 16 subsets, and today's cap.
STACKS = {"16 per row": masked.MAX_STACK_ROWS, "pair cap": masked.SPARSE_FIT_PAIRS}


def one_fit(d, seed: int, pairs: int) -> str:
    """Fit the default with the stack capped at ``pairs``; its line."""
    masked.SPARSE_FIT_PAIRS = pairs
    try:
        with threadpool_limits(1), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            per_row = masked.subsets_per_row(16, len(d.X_train))
            start = time.process_time()
            model = BudgetDAGClassifier(d.spec, random_state=seed, n_jobs=1)
            model.fit(d.X_train, d.y_train)
            seconds = time.process_time() - start
            tested = model.evaluate(d.X_test, d.y_test)
    finally:
        masked.SPARSE_FIT_PAIRS = STACKS["pair cap"]
    search = model.cost_scale_search_
    kept = next(p for p in search["tried"] if p["cost_scale"] == model.cost_scale_)
    return (
        f"subsets/row {per_row:2d}  fit {seconds:6.1f} s CPU  "
        f"oof: richest {search['reference_error']:.4f} kept {kept['error']:.4f} "
        f"at cost {kept['avg_cost']:.2f}  test: {tested['error']:.4f} "
        f"at cost {tested['avg_cost']:.2f}  "
        f"({model.strategy_choice_.strategy}, {model.bank_.kind_})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=["shuttle"])
    parser.add_argument("--seeds", nargs="+", type=int, default=[0])
    parser.add_argument("--max-train", type=int, default=None)
    args = parser.parse_args()
    for name in args.datasets:
        for seed in args.seeds:
            d = many_sensor_data(name, seed, args.max_train)
            print(f"{name} seed {seed} ({len(d.X_train)} training rows)", flush=True)
            for label, pairs in STACKS.items():
                print(f"  {label:10s} {one_fit(d, seed, pairs)}", flush=True)


if __name__ == "__main__":
    main()
