"""A curve's CPU seconds and frame, for side-by-side runs of two checkouts.

The default's bank (``fit_bank``) and its 20-point ``tradeoff_curve`` with
that bank, on ``bench_afa.py``'s tables and splits, one thread, in CPU
seconds of this process (``time.process_time``: two checkouts run side by
side on a shared machine move their wall clocks more than their CPU time),
and a hash of the curve's frame: equal hashes, equal curves. Run it from
each checkout (each one's ``budgetdag_core`` is imported) at the same time,
one process per core, and compare the lines.

    python benchmarks/bench_sweep_cpu.py --datasets dna_400 digits --seeds 0 1 2
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import time
import warnings
from pathlib import Path

from threadpoolctl import threadpool_limits

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))  # this checkout's budgetdag_core wins

from _common import default_params, load  # noqa: E402

from budgetdag_core import BudgetDAGClassifier, tradeoff_curve  # noqa: E402


def frame_hash(frame) -> str:
    """A short hash of a curve's frame (rounded to 12 decimals)."""
    text = repr(frame.round(12).to_csv())
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def one(name: str, seed: int, n_points: int) -> str:
    """The line of one table and seed: bank and curve CPU seconds, frame hash."""
    d = load(name, quick=False, max_train=None, seed=seed)
    params = {"random_state": seed, "n_jobs": 1, **default_params(d)}
    params = {k: v for k, v in params.items() if v is not None}
    with threadpool_limits(1):
        start = time.process_time()
        bank = BudgetDAGClassifier(d.spec, **params).fit_bank(d.X_train, d.y_train)
        bank_s = time.process_time() - start
        start = time.process_time()
        curve = tradeoff_curve(
            d.X_train, d.y_train, d.spec, n_points=n_points, X_test=d.X_test,
            y_test=d.y_test, bank=bank, **params,
        )  # fmt: skip
        sweep_s = time.process_time() - start
    return (
        f"{name} seed {seed} bank {bank_s:.1f}s sweep {sweep_s:.1f}s "
        f"hash {frame_hash(curve.frame)}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=["dna_400", "digits"])
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    parser.add_argument("--n-points", type=int, default=20)
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    for name in args.datasets:
        for seed in args.seeds:
            print(one(name, seed, args.n_points), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
