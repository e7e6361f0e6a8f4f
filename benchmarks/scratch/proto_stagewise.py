# ruff: noqa: E501, E701, E702
# Research script of issue 30 (see /work/notes/many_sensors_log.md).
"""Prototype run of budgetdag_core.stagewise on one split (issue 30 research)."""

import argparse
import json
import time

import numpy as np
from sklearn.ensemble import HistGradientBoostingClassifier
from threadpoolctl import threadpool_limits

from benchmarks import _afa_data
from benchmarks.scratch.stagewise import (
    AnyMaskBank,
    StagewiseLearner,
    fit_actionin,
    fit_fvi,
    route,
    route_actionin,
    route_fvi,
)
from budgetdag_core.tradeoff._baselines import curve_at, lower_convex_hull

p = argparse.ArgumentParser()
p.add_argument("--data", default="cube_nm")
p.add_argument("--train", type=int, default=600)
p.add_argument("--test", type=int, default=2000)
p.add_argument("--seed", type=int, default=0)
p.add_argument("--iters", type=int, default=2)
p.add_argument("--k", type=int, default=6)
p.add_argument("--r", type=int, default=2)
p.add_argument("--depth", type=int, default=None)
p.add_argument("--masks", type=int, default=8)
p.add_argument("--alpha", type=float, default=1.0)
p.add_argument("--eps", type=float, default=0.3)
p.add_argument("--learner", default="actionin")
p.add_argument("--scales", default="0.3,0.1,0.05,0.03,0.02,0.01,0.005,0.002,0.001")
a = p.parse_args()


class _PolWrap:
    """A depth policy as a heads-like scorer for roll-in: its action lowest."""

    def __init__(self, p, M):
        self.p, self.M = p, M

    def predict(self, Z):
        act = np.asarray(self.p.predict(Z), dtype=int)
        q = np.ones((len(Z), self.M))
        ok = act > 0
        q[np.flatnonzero(ok), act[ok] - 1] = 0.0
        return q


class _QWrap:
    """Q_d as a heads-like predictor for roll-in (predict -> (n, M))."""

    def __init__(self, q):
        self.q = q

    def predict(self, Z):
        return self.q.predict_all(Z, np.zeros((len(Z), self.q.n_actions), bool))


if a.data == "digits":
    X, y, spec = _afa_data.digits()
    rng = np.random.default_rng(a.seed)
    perm = rng.permutation(len(X))
    ntr = int(0.8 * len(X))
    tr, te = perm[:ntr], perm[ntr:]
else:
    gen = getattr(_afa_data, a.data)
    X, y, spec = gen(a.train + a.test, a.seed)
    tr, te = np.arange(a.train), np.arange(a.train, a.train + a.test)
Xv = X.to_numpy(float)
cols = spec.column_indices()
M = len(cols)
member = np.zeros((M, Xv.shape[1]), bool)
for m, c in enumerate(cols):
    member[m, c] = True
costs = spec.cost_vector
total = costs.sum()
with threadpool_limits(1):
    t = time.time()
    hgb = HistGradientBoostingClassifier(
        max_iter=200, early_stopping=True, random_state=0
    ).fit(Xv[tr], y[tr])
    t_hgb = time.time() - t
hgb_err = float((hgb.predict(Xv[te]) != y[te]).mean())
t = time.time()
bank = AnyMaskBank(masks_per_row=a.masks, random_state=a.seed).fit(
    Xv[tr], y[tr], member, int(y.max()) + 1
)
t_bank = time.time() - t
t = time.time()
L = StagewiseLearner(
    Xv[tr],
    y[tr],
    member,
    costs,
    bank,
    max_depth=a.depth,
    n_candidates=a.k,
    trajectories_per_row=a.r,
    alpha=a.alpha,
    random_state=a.seed,
)
L.collect(None, a.eps)
heads = None
t_collect = time.time() - t
scales = [float(s) for s in a.scales.split(",")]
mid = scales[len(scales) // 2]
for it in range(1, a.iters):
    t = time.time()
    heads = L.fit_policy(mid) if a.learner == "ridge" else None
    if a.learner.startswith("fvi"):
        from budgetdag_core.reductions import CostRegression, FilterTree

        pols = fit_fvi(
            L, mid, FilterTree(1) if a.learner == "fvi-ft" else CostRegression(1)
        )
        heads = [_PolWrap(p, M) for p in pols]
    elif a.learner != "ridge":
        qs = fit_actionin(L, mid)
        heads = [_QWrap(q) for q in qs]
    L.collect(heads, a.eps)
    t_collect += time.time() - t
pts = []
t = time.time()
for s in scales:
    if a.learner.startswith("fvi"):
        from budgetdag_core.reductions import CostRegression, FilterTree

        lrn = FilterTree(1) if a.learner == "fvi-ft" else CostRegression(1)
        pols = fit_fvi(L, s, lrn)
        smask, proba, first = route_fvi(pols, Xv[te], bank, L.inputs)
    elif a.learner == "ridge":
        h = L.fit_policy(s)
        smask, proba, first = route(h, Xv[te], bank, L.inputs, costs, s)
    else:
        qs = fit_actionin(L, s)
        smask, proba, first = route_actionin(qs, Xv[te], bank, L.inputs)
        z0 = L.inputs(Xv[te[:1]], np.zeros((1, M), bool), np.tile(bank.prior_, (1, 1)))
        q0 = qs[0].predict_all(z0, np.zeros((1, M), bool))[0]
        print(
            f"  root Q: {spec.names[0]} {q0[0]:.3f} rank {int((q0 < q0[0]).sum())}, best {spec.names[int(q0.argmin())]} {q0.min():.3f}, stop {1 - bank.prior_.max():.3f}"
        )
    err = float((proba.argmax(1) != y[te]).mean())
    cost = float((smask * costs).sum(1).mean())
    fst = np.bincount(first[first >= 0], minlength=M)
    top = int(fst.argmax()) if fst.sum() else -1
    pts.append((cost, err))
    print(
        f"scale {s:g}: cost {cost:.2f} ({cost / total:.1%}) err {err:.3f} first={spec.names[top] if top >= 0 else None} ({fst.max() / len(te) if fst.sum() else 0:.0%})",
        flush=True,
    )
t_fit = time.time() - t
c, e = np.array(pts).T
o = np.argsort(c)
c, e = c[o], e[o]
hull = lower_convex_hull(c, e)
at = {f: float(curve_at(c[hull], e[hull], f * total)) for f in (0.1, 0.25, 0.5)}
print(
    json.dumps(
        {
            "data": a.data,
            "train": len(tr),
            "seed": a.seed,
            "hgb_err": hgb_err,
            "t_hgb": round(t_hgb, 1),
            "t_bank": round(t_bank, 1),
            "t_collect": round(t_collect, 1),
            "t_policies_all_scales": round(t_fit, 1),
            "bank_evals": L.n_bank_evals,
            "err_at": at,
            "args": vars(a),
        }
    )
)
