"""The estimator's sparse DAG on a bench_afa dataset: hull readings (test, or
validation rows with --validation), timings.

    python benchmarks/scratch/run_sparse_est.py cube 0 '{"max_states": 1000}'
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE.parent.parent))

from _bench_data import load  # noqa: E402
from _report import cost_to_reach, error_at, hull_of  # noqa: E402

from budgetdag_core import BudgetDAGClassifier  # noqa: E402

name, seed = sys.argv[1], int(sys.argv[2])
params = json.loads(sys.argv[3]) if len(sys.argv) > 3 else {}
scales = params.pop(
    "scales", [1e-4, 3e-4, 1e-3, 3e-3, 0.006, 0.01, 0.02, 0.04, 0.08, 0.15, 0.3, 0.6]
)
validation = params.pop("validation", False)
d = load(name, quick=False, max_train=None, seed=seed)
Xtr, ytr, Xte, yte = d.X_train, np.asarray(d.y_train), d.X_test, np.asarray(d.y_test)
if validation:
    rng = np.random.default_rng(seed)
    perm = rng.permutation(len(Xtr))
    cut = int(0.75 * len(Xtr))
    Xte, yte = Xtr.iloc[perm[cut:]], ytr[perm[cut:]]
    Xtr, ytr = Xtr.iloc[perm[:cut]], ytr[perm[:cut]]
base = {"random_state": 0, "n_jobs": 1, **params}
t0 = time.perf_counter()
bank = BudgetDAGClassifier(d.spec, **base).fit_bank(Xtr, ytr)
t_bank = time.perf_counter() - t0
print(
    f"bank+growth {t_bank:.1f}s, states {bank.sparse_growth_.dag.n_states}", flush=True
)
rows = []
for cs in scales:
    t0 = time.perf_counter()
    m = BudgetDAGClassifier(d.spec, **base, cost_scale=cs).fit(Xtr, ytr, bank=bank)
    t_fit = time.perf_counter() - t0
    t0 = time.perf_counter()
    tr = m.trace(Xte)
    t_pred = time.perf_counter() - t0
    err = float((tr["prediction"].to_numpy() != yte).mean())
    first = tr["acquired"].map(lambda a: a[0] if a else None)
    ctx = float((first == "context").mean())
    rows.append({"cost_scale": cs, "avg_cost": float(tr["cost"].mean()), "error": err})
    print(
        f"  cs={cs:.4g} cost={rows[-1]['avg_cost']:.2f} err={err:.3f} ctx={ctx:.2f} "
        f"policy fit {t_fit:.1f}s predict {len(Xte) / t_pred:.0f} rows/s",
        flush=True,
    )
frame = pd.DataFrame(rows)
hc, he = hull_of(frame)
total = d.spec.total_cost
read = {
    f"{int(f * 100)}%": round(error_at(hc, he, f * total), 3) for f in (0.1, 0.25, 0.5)
}
print(
    f"{name} seed {seed} {'VALIDATION' if validation else 'TEST'} hull {read} "
    f"lowest {he.min():.3f}"
)
