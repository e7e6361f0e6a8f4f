"""How much of "reaches the all-sensor error + 0.5 points at <= 50 % of the cost"
is the test split's luck? A bootstrap over the test rows.

    PYTHONPATH=. python benchmarks/bench_reach_bootstrap.py [letter landsat] \
        [--resamples 1000] [--roles test val] [--val-seeds 0 1 2] \
        [--out benchmarks/out/reach_bootstrap.txt]

For each dataset the default ``BudgetDAGClassifier`` is fitted once per cost
scale (0 and a geometric grid over the data's scale range, the bank reused;
banks cached as in ``bench_policy_configs.py``) and routes the test rows. Each
bootstrap resample of the test rows then reads, from the same policies, the
lower convex hull of (average cost, error), the least cost fraction at which it
is within 0.5 points of the all-sensor classifier's error on that resample, and
the hull's error at 50 % of the cost minus the all-sensor error. Printed: the
estimate on the test split itself, the 5/50/95 % quantiles over the resamples
and the share of resamples that reach the target at <= 50 %. With
``--roles val`` the same reading is made on each seeded validation split of
the training rows (the bank fitted on the other 75 %), so the spread between
splits shows beside the spread within one. Nothing is chosen here: it measures
the noise of a reading.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))  # this checkout's budgetdag_core wins

from _common import (  # noqa: E402
    TOLERANCE,
    bank_params,
    cached_bank,
    cost_to_reach,
    error_at,
    problems,
)
from bench_policy_configs import prepared  # noqa: E402

from budgetdag_core import BudgetDAGClassifier  # noqa: E402
from budgetdag_core.tradeoff import lower_convex_hull  # noqa: E402

FRACTION = 0.5


def per_row_points(p, bank, n_scales: int) -> tuple[np.ndarray, ...]:
    """(scales x rows) cost and error of the default policies on the evaluation
    rows of ``p`` (its test or validation rows), the all-sensor classifier's
    per-row error, and the all-sensor cost."""
    _, _, evalv, (low, high) = prepared(p, bank)
    rows = np.arange(evalv.n_samples)
    cost, wrong = [], []
    for scale in [0.0, *np.geomspace(low, high, n_scales - 1)]:
        model = BudgetDAGClassifier(p.spec, cost_scale=float(scale), **bank_params(p))
        model.fit(p.X_fit, p.y_fit, bank=bank)
        routed = model._route(evalv.Xv, conf=evalv.conf, state_proba=evalv.proba)
        stop = routed.stop_state
        cost.append(evalv.costs[rows, stop])
        wrong.append(evalv.pred[rows, stop] != evalv.y)
    all_wrong = (evalv.pred[:, -1] != evalv.y).astype(float)
    all_cost = float(evalv.costs[:, -1].mean())
    return np.array(cost), np.array(wrong, float), all_wrong, all_cost


def readings(cost, wrong, all_wrong, all_cost, idx) -> tuple[float, float]:
    """(cost fraction reaching all-sensor + TOLERANCE, hull error at FRACTION
    minus all-sensor error) on the rows ``idx``, read as BENCHMARKS.md reads
    them."""
    c, e = cost[:, idx].mean(axis=1), wrong[:, idx].mean(axis=1)
    a = all_wrong[idx].mean()
    hull = lower_convex_hull(c, e)
    hc, he = c[hull], e[hull]
    reach = cost_to_reach(hc, he, a + TOLERANCE) / all_cost
    return reach, error_at(hc, he, FRACTION * all_cost) - a


def main() -> None:
    warnings.filterwarnings("ignore")
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("datasets", nargs="*", default=["letter", "landsat"])
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--n-scales", type=int, default=20)
    parser.add_argument("--roles", nargs="*", default=["test"])
    parser.add_argument("--val-seeds", nargs="*", type=int, default=[0, 1, 2])
    parser.add_argument("--cache-dir", type=Path, default=Path("/tmp/h4_banks"))
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    lines = []
    chosen = [
        p
        for name in args.datasets
        for p in problems(name, val_seeds=tuple(args.val_seeds))
        if p.role in args.roles
    ]
    for p in chosen:
        cost, wrong, all_wrong, all_cost = per_row_points(
            p, cached_bank(p, args.cache_dir), args.n_scales
        )
        n = cost.shape[1]
        reach, gap = readings(cost, wrong, all_wrong, all_cost, np.arange(n))
        rng = np.random.default_rng(0)
        boot = np.array(
            [
                readings(cost, wrong, all_wrong, all_cost, rng.integers(0, n, n))
                for _ in range(args.resamples)
            ]
        )
        q_reach = np.nanpercentile(boot[:, 0], [5, 50, 95])
        q_gap = np.percentile(boot[:, 1], [5, 50, 95])
        lines.append(
            f"{p.tag:16s} rows {n:5d} | reach all-sensor + 0.5 pt at "
            f"{reach:.1%} of the cost (resamples 5/50/95 %: "
            + " / ".join(f"{q:.1%}" for q in q_reach)
            + f"; at <= 50 % in {np.mean(boot[:, 0] <= FRACTION):.0%} of "
            f"{args.resamples}) | error at 50 % minus all-sensor {gap:+.4f} "
            "(" + " / ".join(f"{q:+.4f}" for q in q_gap) + ")"
        )
        print(lines[-1], flush=True)
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        head = "# python benchmarks/bench_reach_bootstrap.py " + " ".join(
            [*args.datasets, "--roles", *args.roles]
        )
        args.out.write_text(head + "\n" + "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
