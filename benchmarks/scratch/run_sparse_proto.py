"""Run the design-A prototype on a bench_afa dataset and print hull readings.

python benchmarks/scratch/run_sparse_proto.py cube_nm 0 '{"max_states": 800}'
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE.parent.parent))

from _bench_data import load  # noqa: E402
from _report import error_at, hull_of  # noqa: E402
from sparse_proto import AnyMaskBank, SparseDAG, SparsePolicy  # noqa: E402

name = sys.argv[1]
seed = int(sys.argv[2])
params = json.loads(sys.argv[3]) if len(sys.argv) > 3 else {}
bank_params = params.pop("bank", {})
scales = params.pop("scales", None)
validation = params.pop("validation", False)

d = load(name, quick=False, max_train=None, seed=seed)
spec = d.spec
Xtr = d.X_train[list(spec.columns)].to_numpy(float)
Xte = d.X_test[list(spec.columns)].to_numpy(float)
classes, ytr = np.unique(d.y_train, return_inverse=True)
yte = np.searchsorted(classes, d.y_test)
if validation:  # choose on training rows: 75/25 split of the training rows
    rng = np.random.default_rng(seed)
    perm = rng.permutation(len(Xtr))
    cut = int(0.75 * len(Xtr))
    Xte, yte = Xtr[perm[cut:]], ytr[perm[cut:]]
    Xtr, ytr = Xtr[perm[:cut]], ytr[perm[:cut]]
costs = spec.cost_vector
total = float(costs.sum())
t0 = time.perf_counter()
bank = AnyMaskBank(spec.column_indices(), Xtr.shape[1], seed=0, **bank_params).fit(
    Xtr, ytr, len(classes)
)
t_bank = time.perf_counter() - t0
print(f"bank {t_bank:.1f}s temperatures {np.round(bank.temperatures, 2)}", flush=True)
t0 = time.perf_counter()
dag = SparseDAG(bank, Xtr, ytr, costs, **params).grow()
t_grow = time.perf_counter() - t0
sizes = np.bincount([s.size for s in dag.states])
print("states per size", sizes.tolist())
root = dag.states[0]
print(
    "root children",
    [(spec.names[j], len(dag.states[c].rows)) for j, c in root.children],
)
print(
    "root routing",
    {spec.names[j]: round(v, 4) for j, v in getattr(root, "routing", {}).items()},
)
rows = []
scales = scales or list(np.geomspace(3e-4, 0.3, 14))
t0 = time.perf_counter()
for cs in scales:
    pol = SparsePolicy(dag, cs).fit()
    stop, proba, cost, first = pol.route(Xte)
    err = float((proba.argmax(1) != yte).mean())
    firsts = pd.Series(first).map(lambda j: spec.names[j] if j >= 0 else None)
    ctx = float((firsts == "context").mean()) if "context" in spec.names else np.nan
    rows.append(
        {
            "cost_scale": cs,
            "avg_cost": cost.mean(),
            "error": err,
            "ctx": ctx,
            "top_first": firsts.value_counts().index[0]
            if firsts.notna().any()
            else None,
        }
    )
    print(
        f"  cs={cs:.4g} cost={cost.mean():.2f} err={err:.3f} ctx={ctx:.2f} "
        f"first={rows[-1]['top_first']}",
        flush=True,
    )
t_pol = time.perf_counter() - t0
frame = pd.DataFrame(rows)
hc, he = hull_of(frame)
read = {f: error_at(hc, he, f * total) for f in (0.1, 0.25, 0.5, 0.75)}
print(
    f"{name} seed {seed} {'VALIDATION' if validation else 'TEST'} hull:",
    {f"{int(f * 100)}%": round(v, 3) for f, v in read.items()},
)
print(
    f"bank {t_bank:.1f}s grow {t_grow:.1f}s policies {t_pol:.1f}s "
    f"({len(scales)} scales), evals {bank.n_evals}"
)
