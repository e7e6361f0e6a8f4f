"""Stage-wise Graph-Reduce for many sensors, one sensor at a time (issue 30).

The full DAG has 2^M states; beyond a dozen sensors it cannot be enumerated. Here
the states of one depth d (d sensors acquired) share one policy model ("masked
policies"): it sees the acquired sensors' values (zero elsewhere), the acquisition
mask and the masked bank's class probabilities at the state, and predicts the cost
of acquiring each sensor next. Graph-Reduce's leaf-to-root order becomes a
backward pass over depths (fitted value iteration): the cost of acquiring sensor
m at a training (row, state) pair is ``c_m`` plus the cost-to-go of the child
state, the smaller of stopping there (the bank's out-of-fold expected loss) and
the deeper model's best predicted action. Training pairs come from trajectories
of the training rows: random acquisition orders first, then the learned policy
with exploration, so that states worth visiting are well covered.

Stopping needs no model: the loss of stopping at a state is the calibrated bank's
expected loss there, known at predict time too.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from sklearn.base import clone
from sklearn.model_selection import StratifiedKFold

from budgetdag_core._threads import single_threaded
from budgetdag_core.bank import boosting_classifier
from budgetdag_core.bank._calibration import apply_temperature, fit_temperatures

#: Mask-size bins of the any-mask bank's temperatures.
N_SIZE_BINS = 8


def _column_masks(smask: np.ndarray, member: np.ndarray) -> np.ndarray:
    """Column masks (n, p) of sensor masks (n, M) given membership (M, p)."""
    return (smask.astype(np.float32) @ member.astype(np.float32)) > 0


class AnyMaskBank:
    """One missing-value classifier for any set of acquired sensors.

    Fitted on each training row under ``masks_per_row`` random sensor masks
    (a size drawn uniformly, then a subset of that size), cross-fitted: the
    out-of-fold probabilities of a training row at any mask come from the fold
    model that did not see the row; predictions from one model refit on all rows.
    """

    def __init__(
        self,
        classifier: Any = None,
        *,
        cv: int = 3,
        masks_per_row: int = 8,
        random_state: int | None = None,
    ) -> None:
        self.classifier = classifier
        self.cv = cv
        self.masks_per_row = masks_per_row
        self.random_state = random_state

    def _stack(self, X, rows, smask):
        cm = _column_masks(smask, self.member_)
        return np.where(cm, X[rows], np.nan)

    def fit(
        self, X: np.ndarray, y: np.ndarray, member: np.ndarray, n_classes: int
    ) -> AnyMaskBank:
        rng = np.random.default_rng(self.random_state)
        n, M = len(X), member.shape[0]
        self.member_, self.n_classes_ = member, n_classes
        rows = np.repeat(np.arange(n), self.masks_per_row)
        smask = random_masks(len(rows), M, rng)
        template = (
            self.classifier
            if self.classifier is not None
            else boosting_classifier(self.random_state)
        )
        splitter = StratifiedKFold(
            self.cv, shuffle=True, random_state=self.random_state
        )
        folds = list(splitter.split(X, y))
        self.fold_of_ = np.empty(n, dtype=np.intp)
        self.fold_models_ = []
        with single_threaded():
            for f, (train, test) in enumerate(folds):
                self.fold_of_[test] = f
                keep = np.isin(rows, train)
                model = clone(template).fit(
                    self._stack(X, rows[keep], smask[keep]), y[rows[keep]]
                )
                self.fold_models_.append(model)
            self.model_ = clone(template).fit(self._stack(X, rows, smask), y[rows])
        self.prior_ = np.bincount(y, minlength=n_classes) / n
        # Temperature per mask-size bin, fitted on out-of-fold probabilities
        # of fresh random masks: the stop loss (1 - max p) must be calibrated.
        self.size_edges_ = np.unique(np.linspace(0, M, N_SIZE_BINS + 1).round())
        self.temperatures_ = np.ones(len(self.size_edges_) + 1)
        cal_rows = np.repeat(np.arange(n), 2)
        cal_mask = random_masks(len(cal_rows), M, rng)
        proba = self.oof_proba(X, cal_rows, cal_mask)
        bins = self._size_bin(cal_mask)
        for b in np.unique(bins):
            sel = bins == b
            if sel.sum() >= 50:
                self.temperatures_[b] = fit_temperatures(
                    proba[sel][:, None, :], y[cal_rows[sel]], rng
                )[0]
        return self

    def _size_bin(self, smask: np.ndarray) -> np.ndarray:
        return np.searchsorted(self.size_edges_, smask.sum(axis=1), side="right")

    def _calibrate(self, proba: np.ndarray, smask: np.ndarray) -> np.ndarray:
        temps = getattr(self, "temperatures_", None)
        if temps is None:
            return proba
        bins = self._size_bin(smask)
        for b in np.unique(bins):
            sel = bins == b
            proba[sel] = apply_temperature(proba[sel], float(temps[b]))
        return proba

    def _proba(self, model, Xs):
        out = np.zeros((len(Xs), self.n_classes_))
        out[:, np.asarray(model.classes_, dtype=int)] = model.predict_proba(Xs)
        return out

    def oof_proba(self, X: np.ndarray, rows: np.ndarray, smask: np.ndarray):
        """Out-of-fold probabilities of training rows ``rows`` at sensor masks."""
        out = np.empty((len(rows), self.n_classes_))
        empty = ~smask.any(axis=1)
        out[empty] = self.prior_
        with single_threaded():
            for f, model in enumerate(self.fold_models_):
                sel = np.flatnonzero((self.fold_of_[rows] == f) & ~empty)
                if sel.size:
                    out[sel] = self._proba(model, self._stack(X, rows[sel], smask[sel]))
        return self._calibrate(out, smask)

    def predict_proba(self, X: np.ndarray, smask: np.ndarray) -> np.ndarray:
        out = np.empty((len(X), self.n_classes_))
        empty = ~smask.any(axis=1)
        out[empty] = self.prior_
        sel = np.flatnonzero(~empty)
        if sel.size:
            with single_threaded():
                out[sel] = self._proba(self.model_, self._stack(X, sel, smask[sel]))
        return self._calibrate(out, smask)


def random_masks(n: int, M: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` sensor masks: a size uniform on 0..M, then a uniform subset."""
    sizes = rng.integers(0, M + 1, n)
    order = np.argsort(rng.random((n, M)), axis=1)
    ranks = np.empty_like(order)
    ranks[np.arange(n)[:, None], order] = np.arange(M)[None, :]
    return ranks < sizes[:, None]


def expected_loss(proba: np.ndarray) -> np.ndarray:
    return 1.0 - proba.max(axis=1)


@dataclass
class StageInputs:
    """The policy inputs of (row, state) pairs: standardised acquired values
    (zero where not acquired), the sensor mask, probabilities, confidence."""

    mean: np.ndarray
    scale: np.ndarray
    member: np.ndarray

    def __call__(self, X: np.ndarray, smask: np.ndarray, proba: np.ndarray):
        cm = _column_masks(smask, self.member)
        xs = np.where(cm, (X - self.mean) / self.scale, 0.0)
        top2 = np.sort(proba, axis=1)[:, -2:]
        with np.errstate(divide="ignore", invalid="ignore"):
            ent = -np.where(proba > 0, proba * np.log(proba), 0.0).sum(axis=1)
        conf = np.stack([top2[:, 1], top2[:, 1] - top2[:, 0], ent], axis=1)
        return np.hstack([xs, smask.astype(float), proba, conf])


class RidgeHeads:
    """Per-action ridge regressions of the cost of acquiring each sensor,
    each fitted on the pairs where that action's cost is known."""

    def __init__(self, alpha: float = 1.0) -> None:
        self.alpha = alpha

    def fit(self, Z: np.ndarray, T: np.ndarray) -> RidgeHeads:
        """``T`` (n, M): cost of acquiring each sensor, NaN where unknown."""
        self.mu_ = Z.mean(axis=0)
        sd = Z.std(axis=0)
        self.sd_ = np.where(sd > 1e-12, sd, 1.0)
        Zs = np.hstack([(Z - self.mu_) / self.sd_, np.ones((len(Z), 1))])
        d = Zs.shape[1]
        M = T.shape[1]
        self.W_ = np.zeros((d, M))
        self.fallback_ = np.full(M, np.inf)
        reg = self.alpha * np.eye(d)
        reg[-1, -1] = 0.0
        for m in range(M):
            known = np.isfinite(T[:, m])
            if known.sum() < 2:
                continue
            A = Zs[known]
            self.W_[:, m] = np.linalg.solve(A.T @ A + reg, A.T @ T[known, m])
            self.fallback_[m] = 0.0
        return self

    def predict(self, Z: np.ndarray) -> np.ndarray:
        Zs = np.hstack([(Z - self.mu_) / self.sd_, np.ones((len(Z), 1))])
        return Zs @ self.W_ + self.fallback_


@dataclass
class PairSet:
    """Training (row, state) pairs of one depth with their children's data."""

    rows: np.ndarray
    smask: np.ndarray
    Z: np.ndarray
    stop: np.ndarray
    cand: np.ndarray  # (n_pairs, k) sensor index of each candidate, -1 none
    child_Z: np.ndarray  # (n_pairs * k, dz)
    child_stop: np.ndarray  # (n_pairs * k,)
    child_mask: np.ndarray  # (n_pairs * k, M)


class StagewiseLearner:
    """Collect pairs (bank evaluations) once; fit policies per cost scale."""

    def __init__(
        self,
        X: np.ndarray,
        y: np.ndarray,
        member: np.ndarray,
        costs: np.ndarray,
        bank: AnyMaskBank,
        *,
        max_depth: int | None = None,
        n_candidates: int = 6,
        trajectories_per_row: int = 2,
        alpha: float = 1.0,
        random_state: int = 0,
    ) -> None:
        self.X, self.y, self.member, self.costs, self.bank = X, y, member, costs, bank
        self.M = member.shape[0]
        self.D = min(self.M, max_depth or 32)
        self.k = n_candidates
        self.r = trajectories_per_row
        self.alpha = alpha
        self.rng = np.random.default_rng(random_state)
        self.inputs = StageInputs(
            X.mean(axis=0), np.where(X.std(axis=0) > 0, X.std(axis=0), 1.0), member
        )
        self.pairs: list[list[PairSet]] = [[] for _ in range(self.D)]
        self.n_bank_evals = 0

    def _oof(self, rows, smask):
        self.n_bank_evals += int(smask.any(axis=1).sum())
        proba = self.bank.oof_proba(self.X, rows, smask)
        return proba

    def collect(self, policy: list[RidgeHeads] | None, epsilon: float) -> None:
        """Roll every training row in ``r`` times (random orders, or the
        ``policy`` with exploration) to depth D, adding the visited pairs and
        ``k`` candidate children of each."""
        n, M, D, k = len(self.X), self.M, self.D, self.k
        rows = np.tile(np.arange(n), self.r)
        smask = np.zeros((len(rows), M), dtype=bool)
        proba = self._oof(rows, smask)
        for d in range(D):
            Z = self.inputs(self.X[rows], smask, proba)
            stop = expected_loss(proba)
            # candidates: policy's best (if any) + random unobserved sensors
            scores = self.rng.random((len(rows), M))
            if policy is not None and policy[d] is not None:
                q = policy[d].predict(Z)
                greedy = np.where(smask, np.inf, q)
                best = greedy.argmin(axis=1)
                scores[np.arange(len(rows)), best] = -1.0  # always a candidate
            scores[smask] = np.inf
            kk = min(k, M - d)
            cand = np.argsort(scores, axis=1)[:, :kk]
            child_mask = np.repeat(smask, kk, axis=0)
            child_mask[np.arange(len(child_mask)), cand.ravel()] = True
            child_rows = np.repeat(rows, kk)
            child_proba = self._oof(child_rows, child_mask)
            child_Z = self.inputs(self.X[child_rows], child_mask, child_proba)
            self.pairs[d].append(
                PairSet(
                    rows,
                    smask.copy(),
                    Z,
                    stop,
                    cand,
                    child_Z,
                    expected_loss(child_proba),
                    child_mask,
                )
            )
            # next state of each trajectory: the policy's choice, or a random
            # candidate with probability epsilon (first round: random)
            explore = (
                np.ones(len(rows), bool)
                if policy is None
                else self.rng.random(len(rows)) < epsilon
            )
            pick = np.where(explore, self.rng.integers(0, kk, len(rows)), 0)
            nxt = np.arange(len(rows)) * kk + pick
            smask = child_mask[nxt]
            proba = child_proba[nxt]

    def fit_policy(self, cost_scale: float) -> list[RidgeHeads | None]:
        """Backward fitted value iteration over depths."""
        D, M = self.D, self.M
        heads: list[RidgeHeads | None] = [None] * D
        for d in range(D - 1, -1, -1):
            Zs, Ts = [], []
            for ps in self.pairs[d]:
                if d + 1 < D and heads[d + 1] is not None:
                    q = heads[d + 1].predict(ps.child_Z)
                    q = np.where(ps.child_mask, np.inf, q)
                    v = np.minimum(ps.child_stop, q.min(axis=1))
                else:
                    v = ps.child_stop
                kk = ps.cand.shape[1]
                T = np.full((len(ps.rows), M), np.nan)
                cand_cost = cost_scale * self.costs[ps.cand] + v.reshape(-1, kk)
                T[np.arange(len(ps.rows))[:, None], ps.cand] = cand_cost
                Zs.append(ps.Z)
                Ts.append(T)
            heads[d] = RidgeHeads(self.alpha).fit(np.vstack(Zs), np.vstack(Ts))
        return heads


def route(
    heads: Sequence[RidgeHeads | None],
    X: np.ndarray,
    bank: AnyMaskBank,
    inputs: StageInputs,
    costs: np.ndarray,
    cost_scale: float,
):
    """Run the stage policies on rows ``X``: stop masks, probabilities there."""
    n, M = len(X), inputs.member.shape[0]
    smask = np.zeros((n, M), dtype=bool)
    active = np.ones(n, dtype=bool)
    proba = np.tile(bank.prior_, (n, 1))
    first = np.full(n, -1)
    for d in range(len(heads)):
        idx = np.flatnonzero(active)
        if not idx.size:
            break
        Z = inputs(X[idx], smask[idx], proba[idx])
        q = heads[d].predict(Z)
        q = np.where(smask[idx], np.inf, q)
        best = q.argmin(axis=1)
        go = q[np.arange(len(idx)), best] < expected_loss(proba[idx])
        active[idx[~go]] = False
        mv = idx[go]
        smask[mv, best[go]] = True
        if d == 0:
            first[mv] = best[go]
        if mv.size:
            proba[mv] = bank.predict_proba(X[mv], smask[mv])
    return smask, proba, first


# ---------------------------------------------------------------- action-in
def _lgbm(seed: int, n_estimators: int = 100):
    import lightgbm as lgb

    return lgb.LGBMRegressor(
        n_estimators=n_estimators,
        learning_rate=0.1,
        num_leaves=15,
        min_child_samples=20,
        subsample=0.8,
        subsample_freq=1,
        colsample_bytree=0.8,
        random_state=seed,
        n_jobs=1,
        verbose=-1,
    )


class ActionInQ:
    """One tree regression of an action's cost from (state inputs, action):
    shared by all actions, so every action's cost is learned from all pairs."""

    def __init__(self, n_actions: int, seed: int = 0) -> None:
        self.n_actions, self.seed = n_actions, seed

    def fit(self, Z, actions, targets):
        F = np.hstack([Z, actions[:, None].astype(float)])
        self.model_ = _lgbm(self.seed).fit(
            F, targets, categorical_feature=[F.shape[1] - 1]
        )
        return self

    def predict_pairs(self, Z, actions):
        F = np.hstack([Z, actions[:, None].astype(float)])
        return self.model_.predict(F)

    def predict_all(self, Z, smask):
        n, M = len(Z), self.n_actions
        Zr = np.repeat(Z, M, axis=0)
        act = np.tile(np.arange(M), n)
        q = self.predict_pairs(Zr, act).reshape(n, M)
        return np.where(smask, np.inf, q)


class ValueModel:
    def __init__(self, seed: int = 0) -> None:
        self.seed = seed

    def fit(self, Z, v):
        self.model_ = _lgbm(self.seed).fit(Z, v)
        return self

    def predict(self, Z):
        return self.model_.predict(Z)


def fit_actionin(L: StagewiseLearner, cost_scale: float):
    """Backward pass: Q_d (action-in) on targets c_m + V_{d+1}(child); the
    policy's own choice among the candidates gives the realized value that
    V_d regresses (Graph-Reduce's cost-to-go, cost_to_go = C[row, pi(row)])."""
    D = L.D
    qs: list[Any] = [None] * D
    vs: list[Any] = [None] * (D + 1)
    for d in range(D - 1, -1, -1):
        Z_all, A_all, T_all, meta = [], [], [], []
        for ps in L.pairs[d]:
            kk = ps.cand.shape[1]
            v_child = (
                ps.child_stop
                if vs[d + 1] is None
                else np.minimum(ps.child_stop, vs[d + 1].predict(ps.child_Z))
            )
            T = cost_scale * L.costs[ps.cand] + v_child.reshape(-1, kk)
            Z_all.append(np.repeat(ps.Z, kk, axis=0))
            A_all.append(ps.cand.ravel())
            T_all.append(T.ravel())
            meta.append((ps, T))
        q = ActionInQ(L.M, d).fit(
            np.vstack(Z_all), np.concatenate(A_all), np.concatenate(T_all)
        )
        qs[d] = q
        Zv, vv = [], []
        for ps, T in meta:
            kk = ps.cand.shape[1]
            pred = q.predict_pairs(np.repeat(ps.Z, kk, axis=0), ps.cand.ravel())
            pred = pred.reshape(-1, kk)
            best = pred.argmin(axis=1)
            go = pred[np.arange(len(pred)), best] < ps.stop
            v = np.where(go, T[np.arange(len(T)), best], ps.stop)
            Zv.append(ps.Z)
            vv.append(v)
        vs[d] = ValueModel(d).fit(np.vstack(Zv), np.concatenate(vv))
    return qs


def route_actionin(qs, X, bank, inputs):
    n, M = len(X), inputs.member.shape[0]
    smask = np.zeros((n, M), dtype=bool)
    active = np.ones(n, dtype=bool)
    proba = np.tile(bank.prior_, (n, 1))
    first = np.full(n, -1)
    for d in range(len(qs)):
        idx = np.flatnonzero(active)
        if not idx.size:
            break
        Z = inputs(X[idx], smask[idx], proba[idx])
        q = qs[d].predict_all(Z, smask[idx])
        best = q.argmin(axis=1)
        go = q[np.arange(len(idx)), best] < expected_loss(proba[idx])
        active[idx[~go]] = False
        mv = idx[go]
        smask[mv, best[go]] = True
        if d == 0:
            first[mv] = best[go]
        if mv.size:
            proba[mv] = bank.predict_proba(X[mv], smask[mv])
    return smask, proba, first


# ------------------------------------------- value models on masked values
def value_inputs(X: np.ndarray, smask: np.ndarray, member: np.ndarray) -> np.ndarray:
    """What a value model sees of a state: the acquired values (NaN elsewhere)
    and the sensor mask. No bank call, so every child of a pair is cheap."""
    cm = _column_masks(smask, member)
    return np.hstack([np.where(cm, X, np.nan), smask.astype(np.float32)])


def fit_fvi(L: StagewiseLearner, cost_scale: float, learner: Any = None):
    """Backward fitted value iteration with full cost vectors.

    At depth d every pair gets the cost of every action: stopping (the bank's
    out-of-fold expected loss at the pair) and acquiring each unobserved
    sensor m (``cost_scale * c_m + V_{d+1}(child)``, V a tree regression on the
    child's masked values). The node learner (one per depth, shared by its
    states) is fitted on those vectors; the cost of its own choice is the
    pair's cost-to-go (Graph-Reduce's ``C[row, pi(row)]``), which V_d regresses.
    """
    from budgetdag_core.reductions import CostRegression

    D, M = L.D, L.M
    policies: list[Any] = [None] * D
    v_next = None
    for d in range(D - 1, -1, -1):
        Zs, Cs = [], []
        for ps in L.pairs[d]:
            n_p = len(ps.rows)
            C = np.full((n_p, M + 1), np.inf)
            C[:, 0] = ps.stop
            if d + 1 <= D:
                Xr = L.X[ps.rows]
                for m in range(M):
                    free = ~ps.smask[:, m]
                    if not free.any():
                        continue
                    child = ps.smask[free].copy()
                    child[:, m] = True
                    if v_next is None:
                        v = ps.stop[free]  # no deeper model: stop there
                    else:
                        v = v_next.predict(value_inputs(Xr[free], child, L.member))
                    C[free, 1 + m] = cost_scale * L.costs[m] + v
            Zs.append(ps.Z)
            Cs.append(C)
        Z, C = np.vstack(Zs), np.vstack(Cs)
        # acquired sensors: a large finite cost (learners need finite costs)
        C = np.where(np.isfinite(C), C, C[np.isfinite(C)].max() + 1.0)
        pol = clone(learner) if learner is not None else CostRegression(1)
        pol.fit(Z, C)
        act = np.asarray(pol.predict(Z), dtype=np.intp)
        v = C[np.arange(len(C)), act]
        policies[d] = pol
        VX = np.vstack(
            [value_inputs(L.X[ps.rows], ps.smask, L.member) for ps in L.pairs[d]]
        )
        v_next = ValueModel(d).fit(VX, v)
    return policies


def route_fvi(policies, X, bank, inputs):
    n, M = len(X), inputs.member.shape[0]
    smask = np.zeros((n, M), dtype=bool)
    active = np.ones(n, dtype=bool)
    proba = np.tile(bank.prior_, (n, 1))
    first = np.full(n, -1)
    for d in range(len(policies)):
        idx = np.flatnonzero(active)
        if not idx.size:
            break
        Z = inputs(X[idx], smask[idx], proba[idx])
        act = np.asarray(policies[d].predict(Z), dtype=np.intp)
        # an acquired sensor is never bought twice: treat it as stop
        go = act > 0
        go[go] &= ~smask[idx[go], act[go] - 1]
        active[idx[~go]] = False
        mv = idx[go]
        smask[mv, act[go] - 1] = True
        if d == 0:
            first[mv] = act[go] - 1
        if mv.size:
            proba[mv] = bank.predict_proba(X[mv], smask[mv])
    return smask, proba, first
