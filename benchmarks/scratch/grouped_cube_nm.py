"""CUBE-NM grouped as 6 sensors (full DAG): policy inputs that route (issue 30).

Test error at 25 % of the all-sensor cost (12.75) read on the lower convex hull
of a cost_scale sweep, and the share of test rows buying the context first."""
import sys, json, time
import numpy as np
from budgetdag_core import BudgetDAGClassifier
from budgetdag_core.baselines import lower_convex_hull, curve_at
from benchmarks import _afa_data

configs = {
    "default": {},
    "sensors": {"policy_features": "sensors"},
    "sensors+confidence-expected-deg1": {"policy_features": "sensors+confidence", "stop_loss": "expected", "policy_degree": 1},
    "sensors+confidence-expected-deg2": {"policy_features": "sensors+confidence", "stop_loss": "expected", "policy_degree": 2},
    "sensors+proba": {"policy_features": "sensors+proba"},
}
ntr = int(sys.argv[1]); seed = int(sys.argv[2]); names = sys.argv[3].split(",") if len(sys.argv) > 3 else list(configs)
X, y, spec = _afa_data.cube_nm(ntr + 5000, seed, grouped=True)
tr, te = slice(0, ntr), slice(ntr, None)
scales = [0.3, 0.1, 0.05, 0.03, 0.02, 0.01, 0.005, 0.003, 0.001]
bank = None
for name in names:
    t = time.time(); pts = []; ctx_first = []
    base = BudgetDAGClassifier(spec, random_state=seed, n_jobs=1, **configs[name])
    if bank is None:
        bank = base.fit_bank(X[tr], y[tr])
    for s in scales:
        m = base.set_params(cost_scale=s).fit(X[tr], y[tr], bank=bank)
        tr_ = m.trace(X[te])
        err = float((tr_["prediction"].to_numpy() != y[te]).mean()); cost = float(tr_["cost"].mean())
        pts.append((cost, err))
        ctx_first.append(float(np.mean([a[:1] == ("context",) for a in tr_["acquired"]])))
    c, e = np.array(pts).T; o = np.argsort(c); c, e = c[o], e[o]; h = lower_convex_hull(c, e)
    print(json.dumps({"config": name, "rows": ntr, "seed": seed, "err_at_25pct": round(float(curve_at(c[h], e[h], 12.75)), 4), "err_at_10pct": round(float(curve_at(c[h], e[h], 5.1)), 4), "err_at_50pct": round(float(curve_at(c[h], e[h], 25.5)), 4), "points": [(round(a, 2), round(b, 3)) for a, b in pts], "ctx_first": [round(v, 2) for v in ctx_first], "sec": round(time.time() - t)}), flush=True)
