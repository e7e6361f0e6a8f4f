"""Per-example acquisition by depth-shared policies: issue 37's design (a).

A prototype measured beside the default on the SAME bank, not (yet) a
strategy of the library. The default's fitted any-subset bank
(``model.bank_``, cross-fitted fold models) is reused; on it:

- one policy per depth ``t`` (shared by every state of that depth): an
  extra-trees regressor predicting the cost of each action (stop, or any
  unacquired sensor) from the state's inputs: the bank's class probabilities,
  top probability and entropy, the acquired values (standardised, 0 where not
  acquired) and the mask; the action is the least predicted cost;
- learned leaf to root as Graph-Reduce does (Alg. 1): the cost of stopping is
  the expected 0/1 loss of the out-of-fold probabilities, the cost of buying
  sensor ``j`` is ``cost_scale * c_j`` plus the cost-to-go of the row from
  the state with ``j`` added, *rolled out* under the already learned deeper
  policies (so a sensor worthless alone, CUBE-NM's context, is bought where
  what it lets the deeper policies do pays);
- the states each depth learns from are sampled forward: round 0 walks every
  training row (twice) along its best one-step sensor in hindsight or a
  random one; each later round rolls the current policies forward with 25 %
  random actions; ``--rounds`` alternations of forward sampling and backward
  reduction.

Prediction rolls a row through the depth policies; it reads only acquired
values and searches no neighbours. For each dataset and seed it prints the
test error of the depth policies at each cost scale, the lower hull's error
at 10 / 25 / 50 % of the all-sensor cost beside the default's, its cascade's
and its fixed-subset hull's (``tradeoff_curve`` with the same data, spec and
``random_state``: the same bank), and on CUBE-NM the share of test rows whose
first purchase is the context (the largest share over the cost scales).

    python benchmarks/bench_per_example.py --datasets cube_nm --seeds 0 1 2 \
        --depth 14 --cost-scales 0.03 0.01 0.004 --rounds 3 \
        [--params '{"bank_kind": "masked_mlp"}']
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.ensemble import ExtraTreesRegressor

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))  # this checkout's budgetdag_core wins

from _common import error_at, hull_of, load  # noqa: E402

from budgetdag_core import BudgetDAGClassifier, tradeoff_curve  # noqa: E402
from budgetdag_core.bank._calibration import apply_temperature  # noqa: E402
from budgetdag_core.bank._masked import masked_proba, stack_masked  # noqa: E402
from budgetdag_core.bank._sparse import size_bins  # noqa: E402

FRACTIONS = (0.10, 0.25, 0.50)
#: Most (row, state) pairs a depth's policy learns from.
MAX_STATES = 3000
#: Share of random actions when states are sampled forward.
EXPLORE = 0.25


class BankView:
    """The fitted any-subset bank's probabilities of rows, each at its own
    sensor subset: out-of-fold for training rows, the fold models' average
    for new rows, under the bank's subset-size temperatures."""

    def __init__(self, model: BudgetDAGClassifier) -> None:
        self.bank = model.bank_
        self.C = self.bank.n_classes_
        self.M = model.spec_.n_sensors

    def proba(self, X, rows, masks, oof: bool) -> np.ndarray:
        bank, n = self.bank, len(rows)
        out = np.zeros((n, self.C))
        empty = ~masks.any(axis=1)
        cmasks = bank._columns_of(masks)
        n_folds = len(bank.fold_models_)
        if oof:
            folds = bank.fold_of_[rows]
            parts = [(np.flatnonzero(folds == f), [f]) for f in range(n_folds)]
        else:
            parts = [(np.arange(n), list(range(n_folds)))]
        for sel, fold_ids in parts:
            todo = sel[~empty[sel]]
            for f in fold_ids:
                model, cols = bank.fold_models_[f], bank.fold_columns_[f]
                if len(todo):
                    Xs = stack_masked(
                        X[rows[todo]][:, cols],
                        np.arange(len(todo)),
                        np.arange(len(todo)),
                        cmasks[todo][:, cols],
                    )
                    out[todo] += masked_proba(model, Xs, self.C) / len(fold_ids)
        out[empty] = bank.prior_
        sizes = masks.sum(axis=1)
        bins = size_bins(sizes, self.M)
        for b in np.unique(bins[sizes > 0]):
            sel = np.flatnonzero((bins == b) & (sizes > 0))
            out[sel] = apply_temperature(out[sel], float(bank.size_temperatures_[b]))
        return out


def stop_loss(P: np.ndarray) -> np.ndarray:
    """Expected 0/1 loss of predicting the top class."""
    return 1.0 - P.max(axis=1)


class DepthPolicies:
    """One cost regressor per depth, learned leaf to root (module docstring)."""

    def __init__(self, view, X, costs, cost_scale, depth, seed) -> None:
        self.view, self.X, self.costs = view, X, costs
        self.cost_scale, self.depth, self.seed = cost_scale, depth, seed
        self.models: list = [None] * depth
        self.mean = X.mean(axis=0)
        self.scale = X.std(axis=0) + 1e-9

    def inputs(self, X, rows, masks, P) -> np.ndarray:
        cmasks = self.view.bank._columns_of(masks)
        Z = np.where(cmasks, (X[rows] - self.mean) / self.scale, 0.0)
        top = P.max(axis=1, keepdims=True)
        ent = -(P * np.log(np.clip(P, 1e-12, None))).sum(axis=1, keepdims=True)
        return np.hstack([P, top, ent, Z, masks.astype(float)])

    def act(self, t, X, rows, masks, P) -> np.ndarray:
        """0: stop; j + 1: buy sensor j."""
        if t >= self.depth or self.models[t] is None:
            return np.zeros(len(rows), dtype=int)
        Q = self.models[t].predict(self.inputs(X, rows, masks, P))
        Q[:, 1:][masks] = np.inf
        return Q.argmin(axis=1)

    def rollout(self, X, rows, masks, t, oof, *, explore=None, record=None):
        """Rows from depth ``t`` to their stop: (final probabilities, cost
        paid, final masks); ``explore`` = (share, rng) of random actions;
        ``record[t]`` collects the (rows, masks) met at depth t."""
        masks = masks.copy()
        n = len(rows)
        cost, final = np.zeros(n), np.zeros((n, self.view.C))
        active = np.arange(n)
        while len(active):
            P = self.view.proba(X, rows[active], masks[active], oof)
            if record is not None and t < self.depth:
                record[t].append((rows[active].copy(), masks[active].copy()))
            a = self.act(t, X, rows[active], masks[active], P)
            if explore is not None and t < self.depth:
                share, rng = explore
                for i in np.flatnonzero(rng.random(len(active)) < share):
                    free = np.flatnonzero(~masks[active[i]])
                    if len(free):
                        a[i] = 1 + rng.choice(free)
            stop = a == 0
            final[active[stop]] = P[stop]
            go, j = active[~stop], a[~stop] - 1
            cost[go] += self.costs[j]
            masks[go, j] = True
            active, t = go, t + 1
        return final, cost, masks

    def backward(self, states, rng) -> None:
        """Graph-Reduce over depths, deepest first."""
        X, M = self.X, len(self.costs)
        for t in range(self.depth - 1, -1, -1):
            if not states[t]:
                continue
            rows = np.concatenate([r for r, _ in states[t]])
            masks = np.concatenate([m for _, m in states[t]])
            key = np.hstack([rows[:, None], masks]).astype(np.int64)
            _, first = np.unique(key, axis=0, return_index=True)
            rows, masks = rows[first], masks[first]
            if len(rows) > MAX_STATES:
                keep = np.sort(rng.choice(len(rows), MAX_STATES, replace=False))
                rows, masks = rows[keep], masks[keep]
            P = self.view.proba(X, rows, masks, True)
            Q = np.zeros((len(rows), M + 1))
            Q[:, 0] = stop_loss(P)
            Q[:, 1:] = Q[:, [0]] + 1.0  # acquired sensors: never chosen
            pair, cand = np.nonzero(~masks)
            after = masks[pair].copy()
            after[np.arange(len(pair)), cand] = True
            final, paid, _ = self.rollout(X, rows[pair], after, t + 1, True)
            Q[pair, 1 + cand] = stop_loss(final) + self.cost_scale * (
                paid + self.costs[cand]
            )
            model = ExtraTreesRegressor(
                n_estimators=40,
                min_samples_leaf=5,
                max_features=0.5,
                random_state=self.seed,
                n_jobs=1,
            )
            self.models[t] = model.fit(self.inputs(X, rows, masks, P), Q)


def hindsight_states(view, X, costs, depth, rng, copies=2):
    """Round 0's states: each row walks ``depth`` steps, each step its best
    one-step sensor in hindsight (its own value) or, half the time, a
    random one."""
    M = len(costs)
    states = [[] for _ in range(depth)]
    rows = np.repeat(np.arange(len(X)), copies)
    masks = np.zeros((len(rows), M), dtype=bool)
    for t in range(depth):
        states[t].append((rows.copy(), masks.copy()))
        now = stop_loss(view.proba(X, rows, masks, True))
        best, gain = np.zeros(len(rows), dtype=int), np.full(len(rows), -np.inf)
        for j in range(M):
            trial = masks.copy()
            trial[:, j] = True
            g = (now - stop_loss(view.proba(X, rows, trial, True))) / costs[j]
            g[masks[:, j]] = -np.inf
            better = g > gain
            best[better], gain[better] = j, g[better]
        for i in np.flatnonzero(rng.random(len(rows)) < 0.5):
            best[i] = rng.choice(np.flatnonzero(~masks[i]))
        masks[np.arange(len(rows)), best] = True
    return states


def run(name: str, seed: int, args) -> dict:
    d = load(name, seed=seed, quick=False, max_train=None)
    t0 = time.perf_counter()
    model = BudgetDAGClassifier(d.spec, random_state=seed, **args.params)
    model.fit(d.X_train, d.y_train)
    fit_s = time.perf_counter() - t0
    cols = list(model.spec_.columns)
    Xtr = d.X_train[cols].to_numpy(float)
    Xte = d.X_test[cols].to_numpy(float)
    yte = np.searchsorted(model.classes_, np.asarray(d.y_test))
    costs = np.array([float(model.spec_.costs[s]) for s in model.spec_.names])
    M, total = len(costs), float(costs.sum())
    view = BankView(model)
    rng = np.random.default_rng(seed)
    t0 = time.perf_counter()
    start = hindsight_states(view, Xtr, costs, args.depth, rng)
    points, context_first = [], []
    test_rows = np.arange(len(Xte))
    for scale in args.cost_scales:
        policies = DepthPolicies(view, Xtr, costs, scale, args.depth, seed)
        states = start
        for r in range(args.rounds):
            policies.backward(states, rng)
            if r + 1 < args.rounds:
                record = [[] for _ in range(args.depth)]
                rows = np.repeat(np.arange(len(Xtr)), 2)
                policies.rollout(
                    Xtr, rows, np.zeros((len(rows), M), dtype=bool), 0, True,
                    explore=(EXPLORE, rng), record=record,
                )  # fmt: skip
                states = [start[t] + record[t] if r == 0 else record[t]
                          for t in range(args.depth)]  # fmt: skip
        empty = np.zeros((len(Xte), M), dtype=bool)
        P, paid, _ = policies.rollout(Xte, test_rows, empty, 0, False)
        error, cost = float((P.argmax(axis=1) != yte).mean()), float(paid.mean())
        points.append({"avg_cost": cost, "error": error})
        print(f"  {name} seed {seed} scale {scale}: error {error:.3f} at cost "
              f"{cost:.2f} ({cost / total:.1%})", flush=True)  # fmt: skip
        if "context" in model.spec_.names:
            first = policies.act(
                0, Xte, test_rows, empty, view.proba(Xte, test_rows, empty, False)
            )
            context_first.append(
                float(np.mean(first - 1 == model.spec_.names.index("context")))
            )
    learn_s = time.perf_counter() - t0
    curve = tradeoff_curve(
        d.X_train, d.y_train, d.spec, n_points=20, X_test=d.X_test,
        y_test=d.y_test, random_state=seed, **args.params,
    ).frame  # fmt: skip
    test = curve[curve.split == "test"]
    out = {
        "dataset": name,
        "seed": seed,
        "fit_s": fit_s,
        "learn_s": learn_s,
        "strategy": model.strategy_,
        "bank": getattr(model.bank_, "kind_", ""),
    }
    methods = {"per_example": pd.DataFrame(points)}
    for m in ("dag", "cascade", "hull", "hull_oof"):
        methods[m] = test[test.method == m]
    for m, part in methods.items():
        hc, he = hull_of(part)
        for f in FRACTIONS:
            out[f"{m}@{int(f * 100)}"] = error_at(hc, he, f * total)
    if context_first:
        out["context_first"] = max(context_first)
    return out


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--datasets", nargs="+", default=["cube_nm"])
    p.add_argument("--seeds", nargs="+", type=int, default=[0])
    p.add_argument("--depth", type=int, default=14, help="most sensors a row buys")
    p.add_argument("--cost-scales", nargs="+", type=float, default=[0.03, 0.01, 0.004])
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument(
        "--params", type=json.loads, default={},
        help='JSON of BudgetDAGClassifier parameters, e.g. {"bank_kind": "masked_mlp"}',
    )  # fmt: skip
    args = p.parse_args(argv)
    rows = []
    for name in args.datasets:
        for seed in args.seeds:
            rows.append(run(name, seed, args))
            frame = pd.DataFrame(rows)
            print(frame.round(3).to_string(index=False), flush=True)
    frame = pd.DataFrame(rows)
    numeric = frame.drop(columns=["seed", "strategy", "bank"])
    print("\nmean over seeds (test error at 10/25/50 % of the all-sensor cost)")
    print(numeric.groupby("dataset").mean().round(3).T.to_string())


if __name__ == "__main__":
    main()
