"""Greedy sensor-subset selection (Alg. 2 of the paper) for many sensors.

With M sensors the full DAG has 2^M states. Section 3 of the paper instead selects
t sensor subsets σ1..σt and builds the DAG over their unions (at most 2^t states).
The subsets greedily maximise the reward

    G = Σ_i max_j r(i, σj),

the number of training rows that at least one subset classifies correctly
(out-of-fold; ``r`` is 1 for a correct prediction, 0 otherwise), under a budget on
the total size ``Σ_j |σ_j|`` (the paper's B/δ). For regression ``r`` is the reduction
of the row's loss below that of the mean predictor (clipped at 0), so G stays a
sum of per-row maxima (a facility-location objective).

With many classes the 0/1 reward saturates early: a few one-sensor subsets are
each right on different rows, so nearly every row is "covered" and the greedy
stops adding sensors. ``reward="soft"`` uses the scorer's out-of-fold probability
of the row's true class instead (clipped to [0, 1]); G is still a sum of per-row
maxima, hence monotone submodular, and keeps growing while subsets become more
confident.

Each greedy step adds one sensor to one subset. Only the subset that changed needs
new candidate fits; every other candidate's out-of-fold reward vector is cached, so
a step costs M scorer fits, not t x M. The default scorer is a ridge (least-squares)
classifier solved from per-fold Gram matrices: one small linear solve per fold and
candidate, no refit over the rows.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from numbers import Integral
from typing import Any

import numpy as np
import pandas as pd
from sklearn.base import clone
from sklearn.dummy import DummyClassifier, DummyRegressor
from sklearn.model_selection import KFold, StratifiedKFold
from sklearn.utils.parallel import Parallel, delayed
from sklearn.utils.validation import has_fit_parameter

from .._bounded_io import short_repr
from .._progress import Progress
from ..sensors import SensorSpec
from ..validation import (
    MAX_CV,
    MAX_N_SUBSETS,
    check_params,
    check_sample_weight,
    int_in,
    real_in,
)

_TOL = 1e-9


@dataclass
class SubsetSelection:
    """The result of :func:`select_subsets`.

    Attributes
    ----------
    subsets : list of tuple of str
        The selected sensor subsets (sensor names, spec order), greedy ones
        first; with ``include_all`` the subset of all sensors is last. Empty and
        duplicate subsets are dropped, so there may be fewer than ``n_subsets``.
    units : list of list of int
        The same subsets as sensor indices (the DAG's units).
    reward : float
        Final G of the greedy subsets as a fraction of the rows (classification:
        share of rows some subset classifies correctly out-of-fold).
    method : str
        ``"greedy"`` (largest gain) or ``"cost_benefit"`` (largest gain per unit
        cost): which greedy run was kept.
    budget : float
        The budget in cost units: ``subset_budget`` x the mean sensor cost.
    budget_used : float
        Σ_j cost(σj) of the greedy subsets, in cost units.
    history : pandas.DataFrame
        One row per greedy step of the kept run: ``step``, ``subset`` (index),
        ``sensor`` (name added), ``gain`` (rows), ``G`` (rows), ``spent``.
    n_rows : int
        Rows used to score the candidates (after subsampling).
    n_evaluations : int
        Scorer fits (candidate subsets scored), over all runs.
    runs : dict
        Final G (rows) of each greedy run made (``"greedy"``,
        ``"cost_benefit"``).

    Examples
    --------
    >>> from budgetdag_core import load_demo, select_subsets
    >>> demo = load_demo("spam")
    >>> rows = demo.train.sample(400, random_state=0)
    >>> sel = select_subsets(rows[demo.spec.columns], rows[demo.label], demo.spec,
    ...                      n_subsets=3, subset_budget=6, random_state=0)
    >>> len(sel.subsets) <= 3, sel.method in ("greedy", "cost_benefit")
    (True, True)
    >>> list(sel.history.columns)
    ['step', 'subset', 'sensor', 'gain', 'G', 'spent']
    """

    subsets: list[tuple[str, ...]]
    units: list[list[int]]
    reward: float
    method: str
    budget: float
    budget_used: float
    history: pd.DataFrame
    n_rows: int
    n_evaluations: int = 0
    runs: dict[str, float] = field(default_factory=dict)


# --------------------------------------------------------------------- scorers
class RidgeReward:
    """Out-of-fold rewards of a ridge classifier/regressor on any column subset.

    Standardises the columns once, then per fold keeps the centred Gram matrix
    ``X'X`` and ``X'Y`` of the training rows; a subset's model is one solve of
    its |cols| x |cols| block, its out-of-fold predictions one product. Targets
    are one-hot classes (a least-squares classifier, predicting the argmax) or
    the regression target.
    """

    def __init__(
        self,
        X: np.ndarray,
        y: np.ndarray,
        *,
        task: str,
        loss: str = "squared",
        cv: int = 3,
        alpha: float = 1e-3,
        random_state: int | None = None,
        reward: str = "correct",
        sample_weight: np.ndarray | None = None,
    ) -> None:
        X = np.asarray(X, dtype=float)
        self.weight = sample_weight
        if sample_weight is None:
            mean, std = X.mean(axis=0), X.std(axis=0)
        else:
            mean = np.average(X, axis=0, weights=sample_weight)
            std = np.sqrt(np.average((X - mean) ** 2, axis=0, weights=sample_weight))
        X = (X - mean) / np.where(std > 0, std, 1.0)
        self.task, self.loss, self.alpha, self.reward = task, loss, alpha, reward
        if task == "classification":
            classes, self.y = np.unique(y, return_inverse=True)
            Y = np.eye(len(classes))[self.y]
            splitter: Any = StratifiedKFold(cv, shuffle=True, random_state=random_state)
        else:
            self.y = np.asarray(y, dtype=float)
            Y = self.y[:, None]
            splitter = KFold(cv, shuffle=True, random_state=random_state)
        self.folds = []
        self.baseline = np.empty(len(X))
        for train, test in splitter.split(X, self.y):
            Xtr, Ytr = X[train], Y[train]
            if sample_weight is None:
                mu, ybar = Xtr.mean(axis=0), Ytr.mean(axis=0)
                gram = Xtr.T @ Xtr - len(train) * np.outer(mu, mu)
                cross = Xtr.T @ Ytr - len(train) * np.outer(mu, ybar)
                self.folds.append((test, X[test] - mu, gram, cross, ybar, len(train)))
            else:  # the Gram matrices of the rows copied w times
                wtr = _fold_weights(sample_weight, train)
                mu = np.average(Xtr, axis=0, weights=wtr)
                ybar = np.average(Ytr, axis=0, weights=wtr)
                total = float(wtr.sum())
                gram = (Xtr * wtr[:, None]).T @ Xtr - total * np.outer(mu, mu)
                cross = (Xtr * wtr[:, None]).T @ Ytr - total * np.outer(mu, ybar)
                self.folds.append((test, X[test] - mu, gram, cross, ybar, total))
            if task == "regression":
                self.baseline[test] = _row_loss(self.y[test], ybar[0], loss)
        # The rows fold after fold (test rows of each fold together): ``grow``
        # writes each fold's predictions as one slice in this order.
        self.fold_order = np.concatenate([fold[0] for fold in self.folds])
        self.fold_rank = np.argsort(self.fold_order)

    def __call__(self, cols: np.ndarray) -> np.ndarray:
        cols = np.asarray(cols, dtype=int)
        n_out = self.folds[0][3].shape[1]
        pred = np.empty((len(self.y), n_out))
        for test, Xte, gram, cross, ybar, n_tr in self.folds:
            A = gram[np.ix_(cols, cols)]
            A[np.diag_indices_from(A)] += self.alpha * n_tr
            W = np.linalg.solve(A, cross[cols])
            pred[test] = Xte[:, cols] @ W + ybar
        return self._reward(pred)

    def grow(self, base: np.ndarray, blocks: Sequence[np.ndarray]) -> list[np.ndarray]:
        """Rewards of ``base + block`` for each column block (disjoint from
        ``base``), all from one factorisation of the base's Gram block.

        The same models as :meth:`__call__` (up to rounding): adding a block
        B to the base S, the bordered system's solution is
        ``W_B = (A_BB - A_BS A_S^-1 A_SB)^-1 (c_B - A_BS W_S)`` and the
        prediction that of S plus ``(X_B - X_S A_S^-1 A_SB) W_B``. Blocks of
        one size are solved together.
        """
        base = np.asarray(base, dtype=int)
        n_out = self.folds[0][3].shape[1]
        preds = np.empty((len(blocks), len(self.y), n_out))
        by_size: dict[int, list[int]] = {}
        for b, block in enumerate(blocks):
            by_size.setdefault(len(block), []).append(b)
        start = 0
        for test, Xte, gram, cross, ybar, n_tr in self.folds:
            rows = slice(start, start + len(test))  # in fold order
            start += len(test)
            ridge = self.alpha * n_tr
            if base.size:
                A = gram[np.ix_(base, base)]
                A[np.diag_indices_from(A)] += ridge
                W_S = np.linalg.solve(A, cross[base])
                X_S = Xte[:, base]
                P_S = X_S @ W_S + ybar
            else:
                P_S = np.broadcast_to(ybar, (len(test), n_out))
            for size, members in by_size.items():
                cols = np.stack([np.asarray(blocks[b], dtype=int) for b in members])
                flat = cols.ravel()
                A_BB = gram[cols[:, :, None], cols[:, None, :]]
                A_BB[:, np.arange(size), np.arange(size)] += ridge
                rhs = cross[cols]  # (blocks, size, out)
                E = Xte[:, flat]  # (rows, blocks * size)
                if base.size:
                    Q = np.linalg.solve(A, gram[np.ix_(base, flat)])  # A_S^-1 A_SB
                    A_BS = gram[np.ix_(flat, base)].reshape(len(members), size, -1)
                    Q_B = Q.T.reshape(len(members), size, -1).transpose(0, 2, 1)
                    A_BB = A_BB - A_BS @ Q_B
                    rhs = rhs - A_BS @ W_S
                    E = E - X_S @ Q
                W_B = np.linalg.solve(A_BB, rhs)  # (blocks, size, out)
                E = E.reshape(len(test), len(members), size).transpose(1, 0, 2)
                preds[members, rows] = P_S[None] + E @ W_B
        # Rewards are per row: computed in fold order, then put in row order.
        return list(self._reward(preds, self.fold_order)[:, self.fold_rank])

    def _reward(self, pred: np.ndarray, rows: np.ndarray | None = None) -> np.ndarray:
        """Per-row rewards of predictions ``pred`` (..., n_rows, n_out) of the
        rows ``rows`` (default: all, in order)."""
        y = self.y if rows is None else self.y[rows]
        if self.task == "classification":
            if self.reward == "soft":  # least-squares estimate of P(true class)
                true = pred[..., np.arange(len(y)), y]
                out = np.clip(true, 0.0, 1.0).astype(np.float32)
            else:
                out = pred.argmax(axis=-1) == y
        else:
            baseline = self.baseline if rows is None else self.baseline[rows]
            out = _regression_reward(y, pred[..., 0], baseline, self.loss)
        return _weighted_reward(out, self.weight, rows)


class EstimatorReward:
    """Out-of-fold rewards of any scikit-learn estimator (cloned per fold)."""

    def __init__(
        self,
        estimator: Any,
        X: np.ndarray,
        y: np.ndarray,
        *,
        task: str,
        loss: str = "squared",
        cv: int = 3,
        random_state: int | None = None,
        reward: str = "correct",
        sample_weight: np.ndarray | None = None,
    ) -> None:
        self.estimator, self.task, self.loss = estimator, task, loss
        self.reward = reward
        self.weight = sample_weight
        if sample_weight is not None and not has_fit_parameter(
            estimator, "sample_weight"
        ):
            raise ValueError(
                f"sample_weight: the subset scorer {type(estimator).__name__} "
                "takes no sample_weight in its fit; use scorer='ridge' or one "
                "that does."
            )
        self.X = np.asarray(X, dtype=float)
        self.y = np.asarray(y) if task == "classification" else np.asarray(y, float)
        splitter: Any = (
            StratifiedKFold(cv, shuffle=True, random_state=random_state)
            if task == "classification"
            else KFold(cv, shuffle=True, random_state=random_state)
        )
        self.folds = list(splitter.split(self.X, self.y))
        self.baseline = np.empty(len(self.y))
        if task == "regression":
            for train, test in self.folds:
                mean = (
                    self.y[train].mean()
                    if sample_weight is None
                    else np.average(
                        self.y[train], weights=_fold_weights(sample_weight, train)
                    )
                )
                self.baseline[test] = _row_loss(self.y[test], mean, loss)

    def __call__(self, cols: np.ndarray) -> np.ndarray:
        cols = np.asarray(cols, dtype=int)
        if self.task == "classification" and self.reward == "soft":
            return self._true_class_proba(cols)
        pred = np.empty(len(self.y), dtype=self.y.dtype)
        for train, test in self.folds:
            if len(cols):
                model = clone(self.estimator)
                Xs = self.X[:, cols]
            else:
                model = (
                    DummyClassifier()
                    if self.task == "classification"
                    else DummyRegressor()
                )
                Xs = np.zeros((len(self.X), 1))
            self._fit(model, Xs, train)
            pred[test] = model.predict(Xs[test])
        if self.task == "classification":
            return _weighted_reward(pred == self.y, self.weight)
        reward = _regression_reward(self.y, pred, self.baseline, self.loss)
        return _weighted_reward(reward, self.weight)

    def _fit(self, model: Any, Xs: np.ndarray, train: np.ndarray) -> None:
        """Fit ``model`` on the ``train`` rows (weighted, where weights are)."""
        if self.weight is None:
            model.fit(Xs[train], self.y[train])
        else:
            w = _fold_weights(self.weight, train)
            model.fit(Xs[train], self.y[train], sample_weight=w)

    def _true_class_proba(self, cols: np.ndarray) -> np.ndarray:
        out = np.zeros(len(self.y), dtype=np.float32)
        for train, test in self.folds:
            model = clone(self.estimator) if len(cols) else DummyClassifier()
            Xs = self.X[:, cols] if len(cols) else np.zeros((len(self.X), 1))
            self._fit(model, Xs, train)
            if not hasattr(model, "predict_proba"):
                raise ValueError(
                    "subset reward 'soft' needs a scorer with predict_proba; "
                    f"{type(model).__name__} has none."
                )
            proba = model.predict_proba(Xs[test])
            # A class missing from this fold's training rows has probability 0.
            pos = np.searchsorted(model.classes_, self.y[test])
            seen = (pos < len(model.classes_)) & (
                model.classes_[np.minimum(pos, len(model.classes_) - 1)] == self.y[test]
            )
            rows = np.flatnonzero(seen)
            out[test[rows]] = proba[rows, pos[rows]]
        return _weighted_reward(out, self.weight)


def _fold_weights(sample_weight: np.ndarray, train: np.ndarray) -> np.ndarray:
    """The weights of a fold's ``train`` rows, refused when all are 0."""
    w = np.asarray(sample_weight, dtype=float)[train]
    if not w.sum() > 0:
        raise ValueError(
            "sample_weight: every training row of one of the subset "
            "selection's folds weighs 0; give more rows a positive weight."
        )
    return w


def _weighted_reward(
    reward: np.ndarray, weight: np.ndarray | None, rows: np.ndarray | None = None
) -> np.ndarray:
    """Per-row ``reward`` (..., n_rows) times each row's weight (None:
    unchanged): G, a sum of per-row maxima, then counts row i ``weight[i]``
    times."""
    if weight is None:
        return reward
    w = weight if rows is None else weight[rows]
    return (reward * w).astype(np.float32)


def _row_loss(y: np.ndarray, pred: Any, loss: str) -> np.ndarray:
    diff = np.asarray(y, dtype=float) - pred
    return diff**2 if loss == "squared" else np.abs(diff)


def _regression_reward(
    y: np.ndarray, pred: np.ndarray, baseline: np.ndarray, loss: str
) -> np.ndarray:
    return np.maximum(baseline - _row_loss(y, pred, loss), 0.0).astype(np.float32)


# ---------------------------------------------------------------- subsampling
def stratified_subsample(
    y: np.ndarray, max_rows: int | None, *, stratify: bool, random_state: Any
) -> np.ndarray:
    """Sorted row indices of at most ``max_rows`` rows, class shares kept."""
    n = len(y)
    if max_rows is None or n <= max_rows:
        return np.arange(n)
    rng = np.random.default_rng(random_state)
    if not stratify:
        return np.sort(rng.choice(n, max_rows, replace=False))
    frac = max_rows / n
    picked = []
    for c in np.unique(y):
        rows = np.flatnonzero(y == c)
        take = min(len(rows), max(int(round(frac * len(rows))), 1))
        picked.append(rng.choice(rows, take, replace=False))
    return np.sort(np.concatenate(picked))


# ---------------------------------------------------------------------- greedy
@dataclass
class _Run:
    subsets: list[frozenset[int]]
    rewards: np.ndarray  # (t, n_rows) reward of each current subset
    spent: float
    history: list[dict[str, Any]]

    @property
    def G(self) -> float:
        if not self.rewards.size:  # no greedy subsets (n_subsets=1, include_all)
            return 0.0
        return float(self.rewards.max(axis=0).sum())


class _Greedy:
    """Alg. 2 with a cache of out-of-fold reward vectors per sensor subset."""

    def __init__(
        self,
        reward_of: Callable[[np.ndarray], np.ndarray],
        sensor_columns: Sequence[np.ndarray],
        costs: np.ndarray,
        n_rows: int,
        n_jobs: int | None,
    ) -> None:
        self.reward_of = reward_of
        self.sensor_columns = sensor_columns
        self.costs = costs
        self.n_rows = n_rows
        self.n_jobs = n_jobs
        self.n_evaluations = 0

    def _score(self, subsets: list[frozenset[int]]) -> list[np.ndarray]:
        cols = [
            np.concatenate([self.sensor_columns[m] for m in sorted(s)]) for s in subsets
        ]
        self.n_evaluations += len(cols)
        if self.n_jobs in (None, 1) or len(cols) < 2:
            return [self.reward_of(c) for c in cols]
        # Threads: the scorers are numpy/BLAS bound and share the cached folds.
        return Parallel(n_jobs=self.n_jobs, prefer="threads")(
            delayed(self.reward_of)(c) for c in cols
        )

    def _fill(
        self,
        cache: dict[frozenset[int], np.ndarray],
        candidates: list[tuple[int, int, frozenset[int]]],
        subsets: list[frozenset[int]],
    ) -> None:
        """Score the candidates not yet in ``cache``: grown from their base
        subset all at once when the scorer can (``RidgeReward.grow``)."""
        new = list(dict.fromkeys(c for _, _, c in candidates if c not in cache))
        if not new:
            return
        if not hasattr(self.reward_of, "grow"):
            cache.update(zip(new, self._score(new), strict=True))
            return
        pending = set(new)
        by_base: dict[frozenset[int], list[tuple[int, frozenset[int]]]] = {}
        for i, j, cand in candidates:
            if cand in pending:  # each new candidate once, from its first base
                pending.discard(cand)
                by_base.setdefault(subsets[i], []).append((j, cand))
        for base, grown in by_base.items():
            self.n_evaluations += len(grown)
            rewards = self.reward_of.grow(
                self._columns(base), [self.sensor_columns[j] for j, _ in grown]
            )
            cache.update(zip((c for _, c in grown), rewards, strict=True))

    def _columns(self, subset: frozenset[int]) -> np.ndarray:
        if not subset:
            return np.zeros(0, dtype=int)
        return np.concatenate([self.sensor_columns[m] for m in sorted(subset)])

    def run(
        self,
        n_subsets: int,
        budget: float,
        ratio: bool,
        progress: Callable[[int], None] | None,
    ) -> _Run:
        M = len(self.costs)
        run = _Run(
            [frozenset()] * n_subsets,
            np.zeros((n_subsets, self.n_rows), dtype=np.float32),
            0.0,
            [],
        )
        cache: dict[frozenset[int], np.ndarray] = {}
        G = 0.0
        while True:
            # Best reward per row among the other subsets: top-2 trick.
            order = np.argsort(-run.rewards, axis=0, kind="stable")
            top1 = np.take_along_axis(run.rewards, order[:1], axis=0)[0]
            top2 = (
                np.take_along_axis(run.rewards, order[1:2], axis=0)[0]
                if n_subsets > 1
                else np.zeros(self.n_rows, dtype=np.float32)
            )
            candidates: list[tuple[int, int, frozenset[int]]] = []
            first_empty = True
            for i, s in enumerate(run.subsets):
                if not s:
                    if not first_empty:  # empty subsets are interchangeable
                        continue
                    first_empty = False
                for j in range(M):
                    if j in s or run.spent + self.costs[j] > budget + _TOL:
                        continue
                    candidates.append((i, j, s | {j}))
            if not candidates:
                break
            self._fill(cache, candidates, run.subsets)
            grown = {c[0] for c in candidates}
            others = {i: np.where(order[0] == i, top2, top1) for i in grown}
            best: tuple | None = None
            for i, j, cand in candidates:
                gain = float(np.maximum(others[i], cache[cand]).sum()) - G
                if gain <= _TOL:
                    continue
                cost = float(self.costs[j])
                if ratio:
                    key = (gain / cost if cost > 0 else np.inf, gain, -cost)
                else:
                    key = (gain, -cost)
                if best is None or key > best[0]:
                    best = (key, i, j, cand, gain)
            if best is None:
                break
            _, i, j, cand, gain = best
            run.subsets = [*run.subsets[:i], cand, *run.subsets[i + 1 :]]
            run.rewards[i] = cache[cand]
            run.spent += float(self.costs[j])
            G = run.G
            run.history.append(
                {
                    "step": len(run.history) + 1,
                    "subset": i,
                    "sensor": j,
                    "gain": gain,
                    "G": G,
                    "spent": run.spent,
                }
            )
            # Only candidates grown from the current subsets can be asked again:
            # a current subset, or one plus a sensor.
            asked = set(run.subsets)
            asked.update(s | {j} for s in run.subsets for j in range(M))
            cache = {k: v for k, v in cache.items() if k in asked}
            if progress is not None:
                progress(len(run.history))
        return run


def select_subsets(
    X: pd.DataFrame | np.ndarray,
    y: Any,
    spec: SensorSpec,
    n_subsets: int,
    subset_budget: float | None = None,
    *,
    include_all: bool = False,
    costs: np.ndarray | None = None,
    strategy: str = "auto",
    task: str = "classification",
    loss: str = "squared",
    scorer: Any = "ridge",
    reward: str = "correct",
    max_rows: int | None = 20_000,
    cv: int = 3,
    random_state: int | None = None,
    n_jobs: int | None = None,
    progress: Progress | None = None,
    sample_weight: Any = None,
) -> SubsetSelection:
    """Select sensor subsets greedily (Alg. 2) for a DAG over their unions.

    Parameters
    ----------
    X : DataFrame or ndarray
        The spec's columns (a DataFrame is read by column name).
    y : array-like
        Labels (classification) or targets (regression).
    spec : SensorSpec
    n_subsets : int
        t <= ``MAX_N_SUBSETS`` (16), the number of subsets (at most 2^t states).
    subset_budget : float, optional
        Budget on the greedy subsets' total size ``Σ_j |σ_j|`` (the paper's B/δ).
        With unequal costs it counts "average sensors": Σ_j cost(σj) may not
        exceed ``subset_budget`` x the mean sensor cost. Default: the number of
        sensors. A sensor in two subsets is paid twice.
    include_all : bool, default=False
        Add the subset of all sensors as the last one (the paper used 7 greedy
        subsets + all features): then t - 1 subsets are chosen greedily. It is
        outside the budget.
    costs : ndarray (n_sensors,), optional
        Sensor costs for the budget and the cost-benefit rule; default the
        spec's. (The estimators pass the mean of example-dependent costs.)
    strategy : {"auto", "greedy", "cost_benefit"}, default="auto"
        ``"greedy"`` adds the (subset, sensor) of largest gain in G (Alg. 2);
        ``"cost_benefit"`` the one of largest gain per unit cost. ``"auto"``
        runs plain greedy when all costs are equal and otherwise both, keeping
        the run with the larger G (ties: the cheaper one), as Leskovec et al.
        (KDD 2007) do to keep a constant-factor guarantee under non-uniform
        costs. Ties between candidates go to the cheaper sensor, then the lower
        subset and sensor index. The loop stops when the budget is spent or no
        candidate adds any reward.
    task : {"classification", "regression"}
    loss : {"squared", "absolute"}
        Regression loss of the reward.
    scorer : "ridge" or scikit-learn estimator, default="ridge"
        ``"ridge"``: least-squares classifier/regressor from per-fold Gram
        matrices (fast, refit-free). An estimator is cloned per fold and
        candidate (slower; candidates are scored in parallel with ``n_jobs``).
    reward : {"correct", "soft"}, default="correct"
        Classification reward of a row: 1 when the subset's scorer is right on
        it out-of-fold (the paper), or ``"soft"``: the scorer's probability of
        the true class (ridge: its least-squares estimate clipped to [0, 1];
        an estimator needs ``predict_proba``). Use "soft" with many classes,
        where the 0/1 reward saturates after a few one-sensor subsets.
    max_rows : int or None, default=20000
        Score on a (stratified) subsample of at most this many rows.
    cv : int, default=3
        Folds of the out-of-fold rewards (2 to ``MAX_CV``, 20).
    random_state : int or None
        Seeds the subsample and the folds.
    n_jobs : int or None
        Threads scoring the candidates of one step.
    progress : callable(stage, done, total), optional
        Called with stage ``"subsets"`` after each greedy step; ``total`` is an
        upper bound on the steps (it ends with ``done == total``).
    sample_weight : array-like of shape (n_samples,), optional
        Row i counts that many times in the scorer's fits (the ridge's Gram
        matrices, an estimator's ``sample_weight``) and in G.

    Returns
    -------
    SubsetSelection

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> rng = np.random.default_rng(0)
    >>> X = pd.DataFrame(rng.normal(size=(300, 6)), columns=list("abcdef"))
    >>> y = (X["a"] + X["b"] > 0).astype(int)
    >>> spec = SensorSpec.per_column(list("abcdef"))
    >>> # Alone, "a" or "b" classifies each row correctly: G needs both subsets.
    >>> select_subsets(X, y, spec, n_subsets=2, subset_budget=3, random_state=0).subsets
    [('a',), ('b',)]
    """
    _check_arguments(locals())  # before any work: nothing else is defined yet
    Xv, y = _checked_data(X, y, spec)
    costs, budget = _checked_budget(spec, costs, subset_budget)
    rows = stratified_subsample(
        y, max_rows, stratify=task == "classification", random_state=random_state
    )
    weight = check_sample_weight(sample_weight, len(y))
    weight = None if weight is None else weight[rows]
    options = {"task": task, "loss": loss, "cv": cv, "random_state": random_state}
    reward_of = _reward_of(
        scorer, Xv[rows], y[rows], reward=reward, sample_weight=weight, **options
    )
    n_greedy = n_subsets - 1 if include_all else n_subsets
    # The ridge scorer's solves are too small to gain from threads: only
    # estimators are scored in parallel.
    scorer_jobs = 1 if isinstance(reward_of, RidgeReward) else n_jobs
    greedy = _Greedy(reward_of, spec.column_indices(), costs, len(rows), scorer_jobs)
    runs = _greedy_runs(greedy, strategy, costs, n_greedy, budget, progress)
    scale = _reward_scale(task, reward_of, len(rows), weight)
    return _kept_selection(runs, greedy, spec, include_all, n_greedy, budget, scale)


def _kept_selection(
    runs: dict[str, _Run],
    greedy: _Greedy,
    spec: SensorSpec,
    include_all: bool,
    n_greedy: int,
    budget: float,
    scale: float,
) -> SubsetSelection:
    """The :class:`SubsetSelection` of the run of larger G (ties to the
    cheaper run); ``scale``: what G is divided by (:func:`_reward_scale`)."""
    method = max(runs, key=lambda v: (round(runs[v].G, 6), -runs[v].spent))
    kept = runs[method]
    return SubsetSelection(
        **_kept_units(kept, spec, include_all),
        reward=(kept.G if n_greedy else 0.0) / scale if scale > 0 else 0.0,
        method=method,
        budget=budget,
        budget_used=kept.spent,
        n_rows=greedy.n_rows,
        n_evaluations=greedy.n_evaluations,
        runs={v: r.G for v, r in runs.items()},
    )


def _reward_scale(
    task: str, reward_of: Any, n_rows: int, weight: np.ndarray | None
) -> float:
    """What G is divided by in ``SubsetSelection.reward``: the rows (their
    total weight), or the baseline's total loss (weighted)."""
    if weight is None:
        return float(n_rows if task == "classification" else reward_of.baseline.sum())
    if task == "classification":
        return float(weight.sum())
    return float(weight @ reward_of.baseline)


def _reward_of(scorer: Any, Xs: np.ndarray, ys: np.ndarray, **options: Any) -> Any:
    """The out-of-fold reward of column subsets, by ridge or by ``scorer``."""
    if isinstance(scorer, str):
        if scorer != "ridge":
            raise ValueError(
                f"scorer must be 'ridge' or an estimator; got {short_repr(scorer)}."
            )
        return RidgeReward(Xs, ys, **options)
    return EstimatorReward(scorer, Xs, ys, **options)


def _kept_units(kept: _Run, spec: SensorSpec, include_all: bool) -> dict[str, Any]:
    """The kept run's distinct subsets (sensor names and indices) and its
    history with sensor names."""
    units: list[list[int]] = []
    for s in kept.subsets:
        u = sorted(s)
        if u and u not in units:
            units.append(u)
    M = spec.n_sensors
    if include_all and list(range(M)) not in units:
        units.append(list(range(M)))
    history = pd.DataFrame(
        kept.history, columns=["step", "subset", "sensor", "gain", "G", "spent"]
    )
    history["sensor"] = [spec.names[j] for j in history["sensor"]]
    return {
        "subsets": [tuple(spec.names[m] for m in u) for u in units],
        "units": units,
        "history": history,
    }


#: What :func:`select_subsets` accepts of its numeric arguments.
SELECT_CONSTRAINTS: dict[str, list] = {
    "n_subsets": [int_in(1, MAX_N_SUBSETS)],
    "subset_budget": [real_in(0.0, None, closed="neither"), None],
    "max_rows": [int_in(1), None],
    "cv": [int_in(2, MAX_CV)],
    "random_state": ["random_state"],
    "n_jobs": [Integral, None],
}


def _check_arguments(arguments: dict[str, Any]) -> None:
    """Check :func:`select_subsets`'s ``arguments`` (its ``locals()`` on
    entry): the options are known ones, the numbers in range
    (:data:`SELECT_CONSTRAINTS`), naming the parameter."""
    task, strategy, reward = (arguments[k] for k in ("task", "strategy", "reward"))
    if task not in ("classification", "regression"):
        raise ValueError(
            f"task must be 'classification' or 'regression'; got {short_repr(task)}."
        )
    if strategy not in ("auto", "greedy", "cost_benefit"):
        raise ValueError(
            "strategy must be 'auto', 'greedy' or 'cost_benefit'; got "
            f"{short_repr(strategy)}."
        )
    if reward not in ("correct", "soft"):
        raise ValueError(
            f"reward must be 'correct' or 'soft'; got {short_repr(reward)}."
        )
    numbers = {name: arguments[name] for name in SELECT_CONSTRAINTS}
    check_params("select_subsets", SELECT_CONSTRAINTS, **numbers)


def _checked_data(
    X: pd.DataFrame | np.ndarray, y: Any, spec: SensorSpec
) -> tuple[np.ndarray, np.ndarray]:
    """The spec's columns as floats, and the targets, of matching lengths."""
    Xv = (
        X[spec.columns].to_numpy(dtype=float)
        if isinstance(X, pd.DataFrame)
        else np.asarray(X, dtype=float)
    )
    y = np.asarray(y)
    if len(y) != len(Xv):
        raise ValueError(f"X has {len(Xv)} rows but y has {len(y)} values.")
    if Xv.shape[1] != len(spec.columns):
        raise ValueError(
            f"X has {Xv.shape[1]} columns; the spec has {len(spec.columns)}."
        )
    return Xv, y


def _checked_budget(
    spec: SensorSpec, costs: np.ndarray | None, subset_budget: float | None
) -> tuple[np.ndarray, float]:
    """The sensor costs the greedy pays (all ones when every sensor is free)
    and the budget in those units."""
    M = spec.n_sensors
    costs = spec.cost_vector if costs is None else np.asarray(costs, dtype=float)
    if costs.shape != (M,) or not np.isfinite(costs).all() or (costs < 0).any():
        raise ValueError(
            f"costs must be {M} finite non-negative values (one per sensor)."
        )
    if not costs.any():
        costs = np.ones(M)  # all free: the budget counts sensors
    if subset_budget is None:
        subset_budget = float(M)
    if not np.isfinite(subset_budget) or subset_budget <= 0:
        raise ValueError(f"subset_budget must be positive; got {subset_budget}.")
    return costs, float(subset_budget) * float(costs.mean())


def _greedy_runs(
    greedy: _Greedy,
    strategy: str,
    costs: np.ndarray,
    n_greedy: int,
    budget: float,
    progress: Progress | None,
) -> dict[str, _Run]:
    """One greedy run per variant the strategy asks for, with progress."""
    uniform = np.ptp(costs) == 0
    variants = (
        ["greedy"]
        if strategy == "greedy" or (strategy == "auto" and uniform)
        else ["cost_benefit"]
        if strategy == "cost_benefit"
        else ["greedy", "cost_benefit"]
    )
    positive = costs[costs > 0]
    M = len(costs)
    per_run = min(n_greedy * M, M)
    if positive.size:
        per_run, smallest = n_greedy * M, float(positive.min())
        # Compared before dividing: a subnormal cost makes budget // cost
        # overflow (numpy warns, and the quotient is not a number).
        if budget < per_run * smallest:
            per_run = min(per_run, int(budget // smallest))
    total = max(per_run * len(variants), 1)
    runs: dict[str, _Run] = {}
    for v_i, variant in enumerate(variants):
        offset = v_i * per_run

        def step(done: int, offset: int = offset) -> None:
            if progress is not None:
                progress("subsets", min(offset + done, total - 1), total)

        runs[variant] = (
            greedy.run(n_greedy, budget, variant == "cost_benefit", step)
            if n_greedy
            else _Run([], np.zeros((0, greedy.n_rows), np.float32), 0.0, [])
        )
    if progress is not None:
        progress("subsets", total, total)
    return runs
