"""Design A prototype (issue 30): a sparse DAG of one-sensor additions grown from
the data, Graph-Reduce on it (research only; the library version will follow).

- AnyMaskBank: one LightGBM per fold on random sensor masks (size uniform),
  early-stopped on the held-out rows' masks; out-of-fold probabilities of any
  (row, mask); a temperature per mask-size bin (fitted on held-out masks).
- grow(): states are sensor sets; rows flow from the root; at a state a subsample
  of its rows scores every unacquired sensor (out-of-fold expected-loss gain per
  cost, the row's true value); children = top one-step sensors + routing sensors
  (a sensor whose value lets neighbours agree on the best next sensor) + the
  per-row favourites with support; each row goes on to its top ``explore``
  children; states merge by set; a cap on states and a floor on rows.
- graph_reduce_sparse(): leaf to root (by set size); a state's policy is fitted
  on its flow rows, the action costs are stop = expected loss, child = cost +
  child's cost-to-go, where rows a child never saw are rolled out lazily under
  the child's (already fitted) policies.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
from sklearn.base import clone
from sklearn.model_selection import StratifiedKFold

from budgetdag_core.bank._calibration import apply_temperature, fit_temperature
from budgetdag_core.bank._masked import _fit_fold
from budgetdag_core.bank._models import masked_classifier
from budgetdag_core.estimator._inputs import confidence_features
from budgetdag_core.estimator._policy import make_learner
from budgetdag_core.graph_reduce import _fit_node

SIZE_BINS = np.array([0.0, 0.04, 0.08, 0.15, 0.25, 0.4, 0.6, 0.8, 1.01])


def size_bin(sizes: np.ndarray, n_sensors: int) -> np.ndarray:
    frac = np.asarray(sizes) / max(n_sensors, 1)
    return np.clip(
        np.searchsorted(SIZE_BINS, frac, side="right") - 1, 0, len(SIZE_BINS) - 2
    )


class AnyMaskBank:
    def __init__(
        self,
        sensor_columns,
        n_columns,
        *,
        cv=5,
        masks_per_row=16,
        seed=0,
        calibrate=True,
    ):
        self.sensor_columns = [np.asarray(c) for c in sensor_columns]
        self.M = len(sensor_columns)
        self.d = n_columns
        self.S = np.zeros((self.M, n_columns), dtype=bool)
        for m, cols in enumerate(self.sensor_columns):
            self.S[m, cols] = True
        self.cv = cv
        self.masks_per_row = masks_per_row
        self.seed = seed
        self.n_evals = 0
        self.calibrate = calibrate

    def column_masks(self, sensor_masks: np.ndarray) -> np.ndarray:
        return (sensor_masks.astype(np.uint8) @ self.S.astype(np.uint8)) > 0

    def random_masks(self, n, rng):
        sizes = rng.integers(1, self.M + 1, size=n)
        ranks = rng.random((n, self.M)).argsort(axis=1).argsort(axis=1)
        return ranks < sizes[:, None]

    def fit(self, X, y, n_classes):
        rng = np.random.default_rng(self.seed)
        n = len(X)
        self.n_classes = n_classes
        per = self.masks_per_row
        pair_rows = np.repeat(np.arange(n), per)
        smasks = self.random_masks(n * per, rng)
        cmasks = self.column_masks(smasks)
        folds = list(
            StratifiedKFold(self.cv, shuffle=True, random_state=self.seed).split(X, y)
        )
        self.fold_of = np.empty(n, dtype=int)
        self.models = []
        template = masked_classifier(self.seed)
        raw_parts, y_parts, size_parts = [], [], []
        for f, (train, test) in enumerate(folds):
            self.fold_of[test] = f
            model, _, used = _fit_fold(
                template,
                X,
                y,
                pair_rows,
                np.arange(len(pair_rows)),
                cmasks,
                train,
                test,
                n_classes,
                int(rng.integers(2**31 - 1)),
                True,
                False,
            )
            assert used.all()
            self.models.append(model)
            # held-out masks of the test rows: calibration data
            sel = np.isin(pair_rows, test)
            take = np.flatnonzero(sel)[:: max(1, per // 4)]
            raw = self._raw_pairs(model, X[pair_rows[take]], cmasks[take])
            raw_parts.append(raw)
            y_parts.append(y[pair_rows[take]])
            size_parts.append(smasks[take].sum(axis=1))
        raw = np.concatenate(raw_parts)
        yy = np.concatenate(y_parts)
        bins = size_bin(np.concatenate(size_parts), self.M)
        self.temperatures = np.ones(len(SIZE_BINS) - 1)
        for b in range(len(self.temperatures)):
            sel = bins == b
            if sel.sum() >= 50 and self.calibrate:
                self.temperatures[b] = fit_temperature(raw[sel], yy[sel])
        self.prior = np.bincount(y, minlength=n_classes) / n
        return self

    def _raw_pairs(self, model, Xr, cmasks):
        """One mask per row (row i at cmasks[i])."""
        out = np.zeros((len(Xr), self.n_classes))
        known = np.asarray(model.classes_, dtype=int)
        # group rows by identical masks is rare; score row by row in chunks via present
        for i in range(len(Xr)):
            out[i, known] = model.predict_proba(Xr[i : i + 1], present=cmasks[i])[0]
        return out

    def _proba_model(self, model, Xr, smasks):
        """(rows, masks, classes) of one model, calibrated."""
        K = len(smasks)
        out = np.zeros((len(Xr), K, self.n_classes))
        empty = ~smasks.any(axis=1)
        if (~empty).any():
            cm = self.column_masks(smasks[~empty])
            raw = model.state_decision_function(Xr, cm)
            p = model.proba_from_scores(raw)
            known = np.asarray(model.classes_, dtype=int)
            idx = np.flatnonzero(~empty)
            out[:, idx[:, None], known[None, :]] = p
        out[:, empty] = self.prior
        self.n_evals += len(Xr) * K
        bins = size_bin(smasks.sum(axis=1), self.M)
        for k in range(K):
            if not empty[k]:
                out[:, k] = apply_temperature(
                    out[:, k], float(self.temperatures[bins[k]])
                )
        return out

    def oof(self, X, rows, smasks):
        """Out-of-fold probabilities of ``rows`` at every mask of ``smasks``."""
        out = np.zeros((len(rows), len(smasks), self.n_classes))
        folds = self.fold_of[rows]
        for f in np.unique(folds):
            sel = np.flatnonzero(folds == f)
            out[sel] = self._proba_model(self.models[f], X[rows[sel]], smasks)
        return out

    def serve(self, Xr, smasks):
        """Fold average (prototype serving)."""
        return np.mean([self._proba_model(m, Xr, smasks) for m in self.models], axis=0)


def expected_loss(p):
    return 1.0 - p.max(axis=-1)


@dataclass
class State:
    mask: np.ndarray  # bool (M,)
    size: int
    rows: np.ndarray = field(
        default_factory=lambda: np.zeros(0, dtype=int)
    )  # flow rows
    children: list = field(default_factory=list)  # [(sensor, state_id)]
    value_inputs: bool = False


class SparseDAG:
    def __init__(
        self,
        bank,
        X,
        y,
        costs,
        *,
        max_states=800,
        min_rows=10,
        n_onestep=4,
        n_routing=1,
        n_favourite=4,
        explore=0.3,
        beam=3,
        routing_threshold=0.3,
        score_rows=96,
        k_neighbors=15,
        seed=0,
        max_depth=None,
        log=print,
    ):
        self.bank, self.X, self.y = bank, X, y
        self.costs = np.asarray(costs, float)
        self.M = bank.M
        self.states: list[State] = []
        self.index: dict[bytes, int] = {}
        self.proba: dict[int, dict[int, np.ndarray]] = {}  # state -> row -> proba
        self.max_states, self.min_rows = max_states, min_rows
        self.n_onestep, self.n_routing, self.n_favourite = (
            n_onestep,
            n_routing,
            n_favourite,
        )
        self.explore, self.score_rows, self.k = explore, score_rows, k_neighbors
        self.beam, self.routing_threshold = beam, routing_threshold
        self.rng = np.random.default_rng(seed)
        self.max_depth = max_depth or self.M
        self.log = log

    # ---------------------------------------------------------------- cache
    def _state(self, mask):
        key = np.packbits(mask).tobytes()
        k = self.index.get(key)
        if k is None:
            k = len(self.states)
            self.index[key] = k
            self.states.append(State(mask.copy(), int(mask.sum())))
            self.proba[k] = {}
        return k

    def proba_at(self, k, rows):
        cache = self.proba[k]
        missing = np.array([r for r in rows if r not in cache], dtype=int)
        if missing.size:
            p = self.bank.oof(self.X, missing, self.states[k].mask[None, :])[:, 0]
            for r, pr in zip(missing, p):
                cache[r] = pr
        return np.array([cache[r] for r in rows]).reshape(len(rows), -1)

    # ---------------------------------------------------------------- grow
    def routing_value(self, sub, mask, G):
        """Per candidate j: mean gain of the best next sensor chosen from the
        neighbours on x_{s+j} minus that of the best fixed next sensor."""
        Xs = self.X[sub]
        Z = (Xs - Xs.mean(0)) / (Xs.std(0) + 1e-9)
        base = np.nanmax(np.nanmean(G, axis=0))
        cols_s = self.bank.column_masks(mask[None])[0]
        out = np.full(self.M, -np.inf)
        k = min(self.k, len(sub) - 1)
        if k < 3:
            return out
        for j in np.flatnonzero(~mask):
            cols = cols_s | self.bank.S[j]
            Zc = Z[:, cols]
            D = ((Zc[:, None, :] - Zc[None, :, :]) ** 2).sum(-1)
            np.fill_diagonal(D, np.inf)
            nb = np.argpartition(D, k, axis=1)[:, :k]
            Gn = G.copy()
            Gn[:, j] = np.nan
            est = np.nanmean(Gn[nb], axis=1)  # (rows, M)
            est = np.where(np.isnan(est), -np.inf, est)
            pick = est.argmax(axis=1)
            out[j] = np.nanmean(Gn[np.arange(len(sub)), pick]) - base
        return out

    def grow(self):
        t0 = time.perf_counter()
        n = len(self.X)
        root = self._state(np.zeros(self.M, dtype=bool))
        self.states[root].rows = np.arange(n)
        p0 = np.tile(self.bank.prior, (n, 1))
        for r in range(n):
            self.proba[root][r] = p0[r]
        depth_states = [root]
        while depth_states:
            nxt: dict[int, list] = {}
            for k in depth_states:
                st = self.states[k]
                if st.size >= self.max_depth or st.size >= self.M:
                    continue
                if len(self.states) >= self.max_states or len(st.rows) < self.min_rows:
                    continue
                self._expand(k, nxt)
            # beam: each row keeps its best `beam` states of the next depth
            per_row: dict[int, list] = {}
            for c, lst in nxt.items():
                for r, score in lst:
                    per_row.setdefault(r, []).append((score, c))
            assign: dict[int, set] = {}
            for r, lst in per_row.items():
                lst.sort()
                for _, c in lst[: self.beam]:
                    assign.setdefault(c, set()).add(r)
            for c, rows in assign.items():
                self.states[c].rows = np.array(sorted(rows), dtype=int)
            depth_states = sorted(assign)
        self.log(
            f"grew {len(self.states)} states in {time.perf_counter() - t0:.1f}s, "
            f"evals {self.bank.n_evals}"
        )
        return self

    def _expand(self, k, nxt):
        st = self.states[k]
        rows = st.rows
        cand = np.flatnonzero(~st.mask)
        sub = (
            rows
            if len(rows) <= self.score_rows
            else np.sort(self.rng.choice(rows, self.score_rows, replace=False))
        )
        masks = np.repeat(st.mask[None], len(cand), axis=0)
        masks[np.arange(len(cand)), cand] = True
        P = self.bank.oof(self.X, sub, masks)  # (sub, cand, C)
        Ls = expected_loss(self.proba_at(k, sub))
        G = np.full((len(sub), self.M), np.nan)
        G[:, cand] = (Ls[:, None] - expected_loss(P)) / self.costs[cand]
        mean_gain = np.full(self.M, -np.inf)
        mean_gain[cand] = G[:, cand].mean(axis=0)
        chosen = set(cand[np.argsort(-mean_gain[cand])][: self.n_onestep].tolist())
        fav = np.argmax(np.where(np.isnan(G), -np.inf, G), axis=1)
        counts = np.bincount(fav, minlength=self.M)
        for j in np.argsort(-counts)[: self.n_favourite]:
            if counts[j] * len(rows) / len(sub) >= self.min_rows:
                chosen.add(int(j))
        routing = []
        if self.n_routing and len(sub) > 8 and len(rows) >= 2 * self.min_rows:
            rv = self.routing_value(sub, st.mask, G) / self.costs
            st.routing = {int(j): float(rv[j]) for j in np.argsort(-rv)[:3]}
            scale = max(np.max(mean_gain[cand]), 1e-9)
            for j in np.argsort(-rv)[: self.n_routing]:
                if rv[j] > self.routing_threshold * scale and j not in chosen:
                    routing.append(int(j))
        chosen = sorted(chosen)
        # per-row gains of every row at the one-step candidates
        cmask = np.repeat(st.mask[None], len(chosen), axis=0)
        cmask[np.arange(len(chosen)), chosen] = True
        Pall = self.bank.oof(self.X, rows, cmask)
        L0 = expected_loss(np.array([self.proba[k][r] for r in rows]))
        gains = (L0[:, None] - expected_loss(Pall)) / self.costs[chosen]
        alive = np.ones(len(chosen), dtype=bool)
        while True:  # drop candidates that fewer than min_rows rows prefer
            g = np.where(alive, gains, -np.inf)
            best = g.argmax(axis=1)
            support = np.bincount(best, minlength=len(chosen))
            weak = alive & (support < self.min_rows)
            if not weak.any() or alive.sum() == 1:
                break
            alive[np.flatnonzero(weak)[np.argmin(support[weak])]] = False
        keep = np.flatnonzero(alive)
        if len(rows) < self.min_rows and len(keep) > 1:  # a chain: the best on average
            keep = np.array([int(np.argmax(gains.mean(axis=0)))])
        kept = [chosen[a] for a in keep]
        g = gains[:, keep]
        best = g.argmax(axis=1)
        second = np.argsort(-g, axis=1)[:, 1] if len(keep) > 1 else best
        explore = self.rng.random(len(rows)) < self.explore
        kids = []
        for a, j in zip(keep, kept):
            c = self._state(cmask[a])
            kids.append(c)
            cache = self.proba[c]
            for i, r in enumerate(rows):
                cache[r] = Pall[i, a]
        for i, r in enumerate(rows):
            nxt.setdefault(kids[best[i]], []).append((int(r), -float(g[i, best[i]])))
            if explore[i] and second[i] != best[i]:
                nxt.setdefault(kids[second[i]], []).append(
                    (int(r), -float(g[i, second[i]]))
                )
        children = list(zip(kept, kids))
        if routing:
            rmask = np.repeat(st.mask[None], len(routing), axis=0)
            rmask[np.arange(len(routing)), routing] = True
            Pr = self.bank.oof(self.X, rows, rmask)
            for a, j in enumerate(routing):
                c = self._state(rmask[a])
                children.append((j, c))
                cache = self.proba[c]
                for i, r in enumerate(rows):
                    cache[r] = Pr[i, a]
                    nxt.setdefault(c, []).append(
                        (int(r), -1e9)
                    )  # every row explores it
        st.children = sorted(children)


# ------------------------------------------------------------------ policies
SPREAD = 0.03


class SparsePolicy:
    def __init__(self, dag: SparseDAG, cost_scale: float, learner=None):
        self.dag = dag
        self.cost_scale = cost_scale
        self.learner = learner

    def inputs(self, k, rows, P, X):
        st = self.dag.states[k]
        if st.size == 0:
            return np.zeros((len(rows), 0))
        Z = np.hstack([P, confidence_features(P)])
        if st.value_inputs:
            cols = self.dag.bank.column_masks(st.mask[None])[0]
            Z = np.hstack([X[rows][:, cols], Z])
        return Z

    def fit(self):
        dag = self.dag
        K = len(dag.states)
        self.policies = [None] * K
        self.V: list[dict[int, float]] = [dict() for _ in range(K)]
        order = sorted(range(K), key=lambda k: -dag.states[k].size)
        for k in order:
            st = dag.states[k]
            if len(st.rows) == 0:
                continue
            rows = st.rows
            P = dag.proba_at(k, rows)
            spread = np.abs(P - P.mean(0)).sum(1).mean() / 2
            st.value_inputs = bool(st.size > 0 and spread < SPREAD)
            stop = expected_loss(P)
            if not st.children:
                for r, v in zip(rows, stop):
                    self.V[k][r] = v
                continue
            C = np.empty((len(rows), 1 + len(st.children)))
            C[:, 0] = stop
            for a, (j, c) in enumerate(st.children, start=1):
                C[:, a] = self.cost_scale * dag.costs[j] + self.values(c, rows)
            Z = self.inputs(k, rows, P, dag.X)
            learner = self.learner or make_learner("filter_tree", 1, 1000, len(rows))
            if st.size == 0:
                best = int(np.argmin(C.sum(0)))
                from budgetdag_core.graph_reduce import ConstantAction

                model, act = ConstantAction(best, C.shape[1]), np.full(len(rows), best)
            else:
                model, act = _fit_node(learner, Z, C)
            self.policies[k] = model
            for r, v in zip(rows, C[np.arange(len(rows)), act]):
                self.V[k][r] = v
        return self

    def values(self, k, rows):
        """Cost-to-go of ``rows`` at state k under the fitted policies (rolls
        out rows the state has not valued yet)."""
        V = self.V[k]
        need = np.array([r for r in rows if r not in V], dtype=int)
        if need.size:
            dag = self.dag
            st = dag.states[k]
            P = dag.proba_at(k, need)
            v = expected_loss(P)
            if st.children and self.policies[k] is not None:
                act = np.asarray(
                    self.policies[k].predict(self.inputs(k, need, P, dag.X))
                )
                for a, (j, c) in enumerate(st.children, start=1):
                    sel = act == a
                    if sel.any():
                        v[sel] = self.cost_scale * dag.costs[j] + self.values(
                            c, need[sel]
                        )
            for r, val in zip(need, v):
                V[r] = val
        return np.array([V[r] for r in rows])

    def route(self, X):
        """Test routing: (stop state, proba at stop, cost, first sensor)."""
        dag = self.dag
        n = len(X)
        cur = np.zeros(n, dtype=int)
        done = np.zeros(n, dtype=bool)
        proba = np.tile(dag.bank.prior, (n, 1))
        cost = np.zeros(n)
        first = np.full(n, -1)
        order = sorted(range(len(dag.states)), key=lambda k: dag.states[k].size)
        for k in order:
            rows = np.flatnonzero((cur == k) & ~done)
            if rows.size == 0:
                continue
            st = dag.states[k]
            P = (
                proba[rows]
                if st.size == 0
                else dag.bank.serve(X[rows], st.mask[None])[:, 0]
            )
            proba[rows] = P
            pol = self.policies[k]
            if pol is None or not st.children:
                done[rows] = True
                continue
            act = np.asarray(pol.predict(self.inputs(k, rows, P, X)))
            done[rows[act == 0]] = True
            for a, (j, c) in enumerate(st.children, start=1):
                sel = rows[act == a]
                cur[sel] = c
                cost[sel] += dag.costs[j]
                first[sel] = np.where(first[sel] < 0, j, first[sel])
        return cur, proba, cost, first
