"""What the active-feature-acquisition peers share: sensors as column masks, a
masked classifier, nearest neighbours on observed values, and the record of a
rollout from which cost-error points are read.

The peers (``_aaco.py``, ``_greedy_cmi.py``) acquire one *sensor* at a time; a
sensor may have several columns and its own cost, as in a ``SensorSpec``.
State = a boolean vector over sensors; the columns it reveals =
``state @ SensorColumns.matrix``.

The masked classifier is one model for every subset of sensors, trained on the
training rows repeated with random sensor masks (subset size uniform on
0..n_sensors, then a uniform subset), as AFABench trains its masked MLP for
AACO and as GDFS/DIME train their predictors. Two engines: ``"mlp"``
(scikit-learn's MLPClassifier on standardised values with unobserved ones set
to 0, plus the mask as inputs: AFABench's encoding; about 10x faster to
predict than boosting, which the peers' inner loops need) and ``"hgb"``
(HistGradientBoostingClassifier with NaN for unobserved values).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.model_selection import StratifiedKFold
from sklearn.neural_network import MLPClassifier
from threadpoolctl import threadpool_limits

from budgetdag_core import SensorSpec

#: Rows of one prediction batch inside the peers' loops (memory bound).
BATCH_ROWS = 50_000


@dataclass(frozen=True)
class SensorColumns:
    """The columns and costs of a spec's sensors, as arrays.

    ``matrix[s, c]`` is True when sensor ``s`` reveals column ``c`` (columns
    in the spec's order); ``costs[s]`` is its cost.
    """

    names: tuple[str, ...]
    columns: tuple[str, ...]
    matrix: np.ndarray
    costs: np.ndarray

    @classmethod
    def from_spec(cls, spec: SensorSpec) -> SensorColumns:
        columns = tuple(spec.columns)
        where = {c: i for i, c in enumerate(columns)}
        matrix = np.zeros((spec.n_sensors, len(columns)), dtype=bool)
        for s, name in enumerate(spec.names):
            matrix[s, [where[c] for c in spec.groups[name]]] = True
        costs = np.array([float(spec.costs[n]) for n in spec.names])
        return cls(tuple(spec.names), columns, matrix, costs)

    @property
    def n_sensors(self) -> int:
        return len(self.names)

    def column_mask(self, sensor_mask: np.ndarray) -> np.ndarray:
        """Columns revealed by sensor masks (``(..., n_sensors)`` -> ``(..., D)``).

        A float32 product (BLAS; exact for counts below 2**24): the peers call
        this on millions of candidate rows, where numpy's integer product,
        without BLAS, took about a tenth of a second per 20 000 rows."""
        return (sensor_mask.astype(np.float32) @ self.matrix.astype(np.float32)) > 0

    def cost(self, sensor_mask: np.ndarray) -> np.ndarray:
        """Total cost of the sensors in each mask."""
        return sensor_mask.astype(float) @ self.costs


def random_sensor_masks(
    n: int, n_sensors: int, rng: np.random.Generator, *, max_size: int | None = None
) -> np.ndarray:
    """``n`` masks: a size uniform on 0..max_size (default n_sensors), then a
    uniform subset of that size."""
    top = n_sensors if max_size is None else max_size
    sizes = rng.integers(0, top + 1, size=n)
    ranks = rng.random((n, n_sensors)).argsort(axis=1).argsort(axis=1)
    return ranks < sizes[:, None]


class MaskedClassifier:
    """One classifier for every subset of sensors (unobserved values masked).

    Parameters
    ----------
    sensors : SensorColumns
    engine : {"mlp", "hgb"}
        See the module docstring.
    n_masks : int
        Masked copies of each training row.
    oof_folds : int
        With ``k >= 2``, also fit ``k`` fold models, so that predictions for a
        training row can come from a model that did not see it
        (:meth:`predict_proba_rows`); 0: none (in-sample).
    random_state : int
    n_jobs : int
        Threads for the engine's BLAS / OpenMP.
    params : dict
        Extra parameters of the engine's estimator.
    """

    def __init__(
        self,
        sensors: SensorColumns,
        *,
        engine: str = "mlp",
        n_masks: int = 16,
        oof_folds: int = 0,
        random_state: int = 0,
        n_jobs: int = 1,
        params: dict | None = None,
    ) -> None:
        if engine not in ("mlp", "hgb"):
            raise ValueError(f"engine must be 'mlp' or 'hgb'; got {engine!r}.")
        if oof_folds == 1 or oof_folds < 0:
            raise ValueError(f"oof_folds must be 0 or >= 2; got {oof_folds}.")
        self.sensors = sensors
        self.engine = engine
        self.n_masks = int(n_masks)
        self.oof_folds = int(oof_folds)
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.params = dict(params or {})

    # ----------------------------------------------------------------- fitting
    def _estimator(self):
        if self.engine == "mlp":
            base = {
                "hidden_layer_sizes": (256, 256),
                "early_stopping": True,
                "max_iter": 200,
                "random_state": self.random_state,
            }
            return MLPClassifier(**{**base, **self.params})
        base = {
            "max_iter": 200,
            "early_stopping": True,
            "random_state": self.random_state,
        }
        return HistGradientBoostingClassifier(**{**base, **self.params})

    def encode(self, X: np.ndarray, column_mask: np.ndarray) -> np.ndarray:
        """The engine's inputs for rows ``X`` with ``column_mask`` observed."""
        if self.engine == "hgb":
            return np.where(column_mask, X, np.nan)
        Z = np.where(column_mask, (X - self.mean_) / self.scale_, 0.0)
        return np.hstack([Z, column_mask.astype(float)])

    def _fit_one(self, X: np.ndarray, y: np.ndarray, seed: int):
        rng = np.random.default_rng(seed)
        rows = np.repeat(np.arange(len(X)), self.n_masks)
        masks = random_sensor_masks(len(rows), self.sensors.n_sensors, rng)
        inputs = self.encode(X[rows], self.sensors.column_mask(masks))
        return self._estimator().fit(inputs, y[rows])

    def fit(self, X: np.ndarray, y: np.ndarray) -> MaskedClassifier:
        X = np.asarray(X, dtype=float)
        y = np.asarray(y)
        self.classes_ = np.unique(y)
        self.mean_ = X.mean(axis=0)
        self.scale_ = np.where(X.std(axis=0) > 0, X.std(axis=0), 1.0)
        with threadpool_limits(self.n_jobs):
            t0 = time.perf_counter()
            self.model_ = self._fit_one(X, y, self.random_state)
            t1 = time.perf_counter()
            self.fold_of_ = np.zeros(len(X), dtype=int)
            self.fold_models_ = []
            if self.oof_folds:
                cv = StratifiedKFold(
                    self.oof_folds, shuffle=True, random_state=self.random_state
                )
                for k, (fit_idx, held) in enumerate(cv.split(X, y)):
                    self.fold_of_[held] = k
                    seed = self.random_state + 1 + k
                    self.fold_models_.append(
                        self._fit_one(X[fit_idx], y[fit_idx], seed)
                    )
        #: Seconds of the full model and of the fold models (the greedy
        #: acquirer needs the first only, AACO both).
        self.fit_seconds_ = {"full": t1 - t0, "folds": time.perf_counter() - t1}
        return self

    # -------------------------------------------------------------- prediction
    def _proba(self, model, inputs: np.ndarray) -> np.ndarray:
        out = np.empty((len(inputs), len(self.classes_)))
        with threadpool_limits(self.n_jobs):
            for start in range(0, len(inputs), BATCH_ROWS):
                part = inputs[start : start + BATCH_ROWS]
                out[start : start + BATCH_ROWS] = model.predict_proba(part)
        return out

    def predict_proba(self, X: np.ndarray, column_mask: np.ndarray) -> np.ndarray:
        """Class probabilities (classes sorted) with ``column_mask`` observed."""
        return self._proba(self.model_, self.encode(X, column_mask))

    def predict_proba_rows(
        self, X: np.ndarray, column_mask: np.ndarray, train_rows: np.ndarray
    ) -> np.ndarray:
        """As :meth:`predict_proba` for training rows ``train_rows`` (indices
        into the fitted ``X``), each by the fold model that did not see it
        (the full model without ``oof_folds``)."""
        if not self.fold_models_:
            return self.predict_proba(X, column_mask)
        inputs = self.encode(X, column_mask)
        out = np.empty((len(inputs), len(self.classes_)))
        folds = self.fold_of_[train_rows]
        for k, model in enumerate(self.fold_models_):
            pick = np.flatnonzero(folds == k)
            if len(pick):
                out[pick] = self._proba(model, inputs[pick])
        return out


def nearest_rows(
    Z_train: np.ndarray, Z_query: np.ndarray, column_mask: np.ndarray, k: int
) -> np.ndarray:
    """Indices of the ``k`` training rows nearest each query row, the squared
    distance summed over that row's observed columns only (``column_mask``),
    as AACO's k-NN. Ties (e.g. nothing observed) go to the lower index."""
    W = column_mask.astype(float)
    Q = np.where(column_mask, Z_query, 0.0)
    dist = W @ (Z_train**2).T - 2.0 * Q @ Z_train.T + (Q**2).sum(axis=1)[:, None]
    k = min(k, Z_train.shape[0])
    part = np.argpartition(dist, k - 1, axis=1)[:, :k]
    order = np.take_along_axis(dist, part, axis=1).argsort(axis=1, kind="stable")
    return np.take_along_axis(part, order, axis=1)


def cross_entropy(proba: np.ndarray, y_index: np.ndarray) -> np.ndarray:
    """Per-row log loss of class indices ``y_index`` under ``proba``."""
    picked = np.take_along_axis(proba, y_index[..., None], axis=-1)[..., 0]
    return -np.log(np.clip(picked, 1e-12, None))


@dataclass
class Rollout:
    """What a peer did on each test row, step by step.

    Step ``t`` (0..T) is the state after ``t`` acquisitions. ``cost[i, t]``
    is the cost row ``i`` has paid then, ``pred[i, t]`` its prediction then
    (class label), ``acquired[i, t-1]`` the sensor bought at step ``t``
    (-1: none, the row had stopped or nothing was left). ``stop_score[i, t]``
    is a per-step score whose threshold gives soft-stopping policies (the
    greedy acquirer's best CMI per unit cost; NaN when not defined), and
    ``wants_stop[i, t]`` says whether the peer's own stopping rule would stop
    there (AACO: the current mask beats every candidate).
    """

    cost: np.ndarray
    pred: np.ndarray
    acquired: np.ndarray
    stop_score: np.ndarray
    wants_stop: np.ndarray
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)

    def budget_points(self, y: np.ndarray) -> pd.DataFrame:
        """One point per step: every row buys ``t`` sensors, then predicts."""
        err = (self.pred != np.asarray(y)[:, None]).mean(axis=0)
        return pd.DataFrame(
            {
                "avg_cost": self.cost.mean(axis=0),
                "error": err,
                "rule": "budget",
                "param": np.arange(self.cost.shape[1], dtype=float),
            }
        )

    def stopped_at(self, stop: np.ndarray) -> tuple[float, np.ndarray]:
        """Average cost and predictions when row ``i`` stops at its step
        ``stop[i]``."""
        rows = np.arange(len(stop))
        return float(self.cost[rows, stop].mean()), self.pred[rows, stop]

    def own_stop_point(self, y: np.ndarray) -> pd.DataFrame:
        """The point of the peer's own stopping rule (first step it would stop;
        rows that never would stop at the last step recorded)."""
        last = self.cost.shape[1] - 1
        first = np.where(
            self.wants_stop.any(axis=1), self.wants_stop.argmax(axis=1), last
        )
        cost, pred = self.stopped_at(first)
        err = float((pred != np.asarray(y)).mean())
        return pd.DataFrame(
            {"avg_cost": [cost], "error": [err], "rule": ["own stop"], "param": [0.0]}
        )

    def threshold_points(self, y: np.ndarray, n: int = 20) -> pd.DataFrame:
        """Soft stopping: row ``i`` stops at the first step whose
        ``stop_score`` is below a threshold; thresholds at quantiles of the
        scores seen. The acquisition order does not depend on the threshold,
        so one rollout gives every such policy (up to the rollout's cap)."""
        scores = self.stop_score[:, :-1]
        finite = scores[np.isfinite(scores)]
        if not len(finite):
            return pd.DataFrame(columns=["avg_cost", "error", "rule", "param"])
        last = self.cost.shape[1] - 1
        rows = []
        taus = np.unique(np.quantile(finite, np.linspace(0, 1, n)))
        for tau in [*taus, np.inf]:  # inf: stop before buying anything
            below = np.isfinite(self.stop_score) & (self.stop_score < tau)
            below[:, -1] = True
            first = np.minimum(below.argmax(axis=1), last)
            cost, pred = self.stopped_at(first)
            err = float((pred != np.asarray(y)).mean())
            rows.append(
                {"avg_cost": cost, "error": err, "rule": "threshold", "param": tau}
            )
        return pd.DataFrame(rows)


#: ``choose(X_rows, states)`` of a peer: for each row, the sensor to buy
#: next (-1: stop), whether its own rule would stop there, and its stop score.
Choice = tuple[np.ndarray, np.ndarray, np.ndarray]


def run_rollout(
    choose,
    classifier: MaskedClassifier,
    X: np.ndarray,
    *,
    force: bool,
    max_cost: float | None = None,
) -> Rollout:
    """Walk every row of ``X`` through a peer, one acquisition per step.

    ``force=True`` (AFABench's hard budget): a row keeps buying until every
    sensor is bought or its cost reaches ``max_cost``; ``force=False`` (soft
    budget): a row also stops when ``choose`` returns -1. After each step every
    row is predicted by ``classifier`` (full model) with what it has.
    """
    t0 = time.perf_counter()
    sensors = classifier.sensors
    X = np.asarray(X, dtype=float)
    n, S = len(X), sensors.n_sensors
    cap = np.inf if max_cost is None else float(max_cost)
    state = np.zeros((n, S), dtype=bool)
    stopped = np.zeros(n, dtype=bool)

    def predict() -> np.ndarray:
        proba = classifier.predict_proba(X, sensors.column_mask(state))
        return classifier.classes_[proba.argmax(axis=1)]

    costs, preds, bought, scores, wants = [np.zeros(n)], [predict()], [], [], []
    for _ in range(S):
        rows = np.flatnonzero(~stopped & ~state.all(axis=1) & (costs[-1] < cap))
        if not len(rows):
            break
        sensor = np.full(n, -1)
        want = np.zeros(n, dtype=bool)
        score = np.full(n, np.nan)
        sensor[rows], want[rows], score[rows] = choose(X[rows], state[rows])
        if not force:
            stopped |= np.isin(np.arange(n), rows) & (sensor < 0)
            sensor[stopped] = -1
        buy = np.flatnonzero(sensor >= 0)
        state[buy, sensor[buy]] = True
        bought.append(sensor)
        wants.append(want)
        scores.append(score)
        costs.append(sensors.cost(state))
        preds.append(predict() if len(buy) else preds[-1])
    wants.append(np.zeros(n, dtype=bool))
    scores.append(np.full(n, np.nan))
    return Rollout(
        cost=np.stack(costs, axis=1),
        pred=np.stack(preds, axis=1),
        acquired=np.stack(bought, axis=1) if bought else np.zeros((n, 0), int),
        stop_score=np.stack(scores, axis=1),
        wants_stop=np.stack(wants, axis=1),
        seconds=time.perf_counter() - t0,
    )


def first_acquisitions(rollout: Rollout, names: Sequence[str]) -> pd.Series:
    """How often each sensor is the first purchase (fraction of rows)."""
    first = rollout.acquired[:, 0]
    labels = np.where(first >= 0, np.asarray(names, dtype=object)[first], "(none)")
    return pd.Series(labels).value_counts(normalize=True)
