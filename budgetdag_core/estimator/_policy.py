"""Learned DAG policies: routing examples through them, and learning them from a
loss table alone (section 2.4 of the paper).

:class:`PolicyRoutingMixin` holds what every fitted policy does with new rows
(route, list the real sensors bought, add up costs, count the flow); the
estimators and :class:`LossTablePolicy` share it. All policy learning goes
through the one :func:`~budgetdag_core.graph_reduce`.
"""

from __future__ import annotations

from collections.abc import Callable
from numbers import Integral, Real
from typing import Any

import networkx as nx
import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator
from sklearn.ensemble import HistGradientBoostingRegressor
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from .._progress import Progress
from ..dag import SensorDAG, build_dag
from ..graph_reduce import Routing, graph_reduce, route
from ..reductions import CostRegression, FilterTree
from ..sensors import SensorSpec
from ..validation import (
    NAN_REFUSED,
    align_rows,
    as_frame,
    as_spec,
    check_features,
    check_index,
    check_sample_costs,
)
from ._inputs import PolicyInputs

#: Budget of a node's expanded policy features in values (rows x features):
#: 2^25 float64 values are 256 MiB per copy, and a node fit holds a few copies.
MAX_POLICY_VALUES = 2**25


def policy_feature_cap(max_features: int, n_rows: int) -> int:
    """The expanded-feature cap of a node: ``max_features``, lowered on long
    tables so that rows x features stays within :data:`MAX_POLICY_VALUES`.

    With ``reductions.effective_degree`` this is the policy feature rule: a
    node uses the largest degree <= ``policy_degree`` whose expansion fits the
    cap, and degree 1 (its raw columns) when none does. Below 33 554 rows the
    default cap of 1000 is unchanged; at 104 000 rows it is 322 (degree 2 for
    at most 24 columns).
    """
    return max(1, min(int(max_features), MAX_POLICY_VALUES // max(int(n_rows), 1)))


#: Named node learners of ``policy_learner``.
POLICY_LEARNERS = ("filter_tree", "cost_regression", "boosted")


def boosted_regressor() -> HistGradientBoostingRegressor:
    """The node regressor of ``policy_learner="boosted"``: small, fixed rounds
    (no early stopping, so no random validation split: deterministic)."""
    return HistGradientBoostingRegressor(
        max_iter=60,
        learning_rate=0.1,
        max_leaf_nodes=15,
        min_samples_leaf=40,
        early_stopping=False,
        random_state=0,
    )


def make_learner(
    policy_learner: Any, degree: int, max_features: int, n_rows: int | None = None
) -> Any:
    """The cost-sensitive learner named by ``policy_learner`` (or the object).

    ``"filter_tree"``: the paper's tournament of logistic regressions on
    degree-``degree`` polynomial features; ``"cost_regression"``: one ridge
    regression of each action's cost-to-go; ``"boosted"``: one boosted-tree
    regression (:func:`boosted_regressor`) of each action's cost-to-go on the
    raw inputs (CSOAA). With ``n_rows`` the feature cap follows
    :func:`policy_feature_cap`.
    """
    if n_rows is not None:
        max_features = policy_feature_cap(max_features, n_rows)
    if policy_learner == "filter_tree":
        return FilterTree(degree, max_features=max_features)
    if policy_learner == "cost_regression":
        return CostRegression(degree, max_features=max_features)
    if policy_learner == "boosted":
        return CostRegression(1, estimator=boosted_regressor())
    return policy_learner


def unique_paths(path: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct rows of ``path`` (states visited, -1 padded) and each
    row's index among them.

    ``np.unique(path, axis=0)`` sorts the rows as opaque bytes, which cost
    more than routing them on deep DAGs (a second per 20 000 rows of a
    56-sensor DAG). Here each column in turn refines a row's group number
    (its groups so far times the states, plus the column's state), one
    integer sort per column the paths reach.

    Examples
    --------
    >>> uniq, inverse = unique_paths(np.array([[0, 2, -1], [0, 1, 3], [0, 2, -1]]))
    >>> uniq.tolist(), inverse.tolist()
    ([[0, 1, 3], [0, 2, -1]], [1, 0, 1])
    """
    path = np.asarray(path)
    if len(path) == 0:
        return path[:0], np.zeros(0, dtype=np.intp)
    width = int(np.flatnonzero((path >= 0).any(axis=0)).max(initial=0)) + 1
    group = np.zeros(len(path), dtype=np.int64)
    span = int(path.max(initial=0)) + 2  # states and the padding -1
    for column in path[:, :width].T:
        group = np.unique(group * span + (column + 1), return_inverse=True)[1]
        group = group.astype(np.int64, copy=False)
    first = np.unique(group, return_index=True)[1]  # a row of each group
    return path[first], group.astype(np.intp, copy=False)


def route_rows(
    model: Any,
    Xv: np.ndarray,
    inputs: Callable[[int, np.ndarray], Any] | None = None,
) -> Routing:
    """Route the rows of ``Xv`` (the spec's columns, checked) through the
    fitted policies of ``model``.

    ``inputs(k, rows)`` gives the inputs of the policy at state ``k`` for
    ``rows`` (e.g. :meth:`PolicyInputs.given` precomputed probabilities);
    default the model's own, asking its bank where the policies read it.
    """
    dag = model.sensor_dag_
    return route(
        model.policies_,
        inputs or (lambda k, rows: model._policy_inputs(Xv, k, rows)),
        len(Xv),
        min(len(dag.units), dag.n_sensors),
    )


class PolicyRoutingMixin:
    """Routing, acquisition order, costs and flow of a fitted DAG policy.

    Needs the fitted attributes ``spec_``, ``sensor_dag_``, ``dag_``,
    ``state_columns_``, ``policies_`` and ``bank_`` (None when no policy reads
    a classifier), and ``inputs_``: what each policy sees.
    """

    @property
    def inputs_(self) -> PolicyInputs:
        """What the policy at each state sees: its sensors' values."""
        check_is_fitted(self)
        return PolicyInputs("sensors", self.state_columns_)

    def _nan_refused(self, spec: Any) -> str | None:
        """Why this model refuses missing values (NaN) in ``X``; None where
        its bank and policies take them (a NaN is a value not measured)."""
        return NAN_REFUSED

    def _features(self, X: pd.DataFrame) -> np.ndarray:
        check_is_fitted(self)
        return check_features(
            X,
            self.spec_,
            type(self).__name__,
            nan_refused=self._nan_refused(self.spec_),
        )

    def _inputs_and_proba(
        self, Xv: np.ndarray, state: int, rows: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray | None]:
        """The policy inputs of ``rows`` at ``state``, and the bank's
        probabilities there when the inputs needed them (else None)."""
        return self.inputs_.predicted(self.bank_, Xv, state, rows)

    def _policy_inputs(self, Xv: np.ndarray, state: int, rows: np.ndarray) -> Any:
        """What the policy of ``state`` sees for ``rows``."""
        return self._inputs_and_proba(Xv, state, rows)[0]

    def inputs_at(self, Z: np.ndarray, state: int) -> np.ndarray:
        """Policy inputs at ``state`` for rows whose state columns are ``Z``
        (other columns are never read: they are not acquired there).

        Parameters
        ----------
        Z : ndarray of shape (n_rows, n_state_columns)
            The values of the columns acquired at ``state``
            (``state_columns_[state]``, in that order).
        state : int
            The state (an index into ``dag_``).

        Returns
        -------
        ndarray of shape (n_rows, n_inputs)
            What the policy of ``state`` sees for these rows: sensor values and,
            when the policies read the bank, its class probabilities.

        Examples
        --------
        >>> from budgetdag_core import BudgetDAGClassifier, toy_dataset
        >>> demo = toy_dataset(300, 20)
        >>> model = BudgetDAGClassifier(
        ...     demo.spec, cost_scale=0.05, cv=2, random_state=0
        ... ).fit(demo.X_train, demo.y_train)
        >>> state = model.state_indices([["precise"]])[0]
        >>> Z = demo.X_test[["precise"]].to_numpy()
        >>> model.inputs_at(Z, state).shape[0]
        20
        """
        state = check_index("inputs_at", "state", state, len(self.policies_))
        Z = np.asarray(Z, dtype=float).reshape(len(Z), -1)
        Xv = np.zeros((len(Z), len(self.spec_.columns)))
        Xv[:, self.state_columns_[state]] = Z
        return self._policy_inputs(Xv, state, np.arange(len(Z)))

    def _route(
        self,
        Xv: np.ndarray,
        inputs: Callable[[int, np.ndarray], Any] | None = None,
    ) -> Routing:
        """Route all rows; ``inputs(k, rows)`` overrides ``_policy_inputs``."""
        return route_rows(self, Xv, inputs)

    def route(self, X: pd.DataFrame) -> Routing:
        """Where each row of ``X`` goes under the fitted policies.

        Parameters
        ----------
        X : DataFrame
            Examples with the spec's columns.

        Returns
        -------
        Routing
            ``stop_state`` (n,): the state each row stops at; ``path``
            (n, depth + 1): the states it visits from the root, -1 padded.

        Examples
        --------
        >>> from budgetdag_core import BudgetDAGClassifier, toy_dataset
        >>> demo = toy_dataset(300, 20)
        >>> model = BudgetDAGClassifier(
        ...     demo.spec, cost_scale=0.05, cv=2, random_state=0
        ... ).fit(demo.X_train, demo.y_train)
        >>> routing = model.route(demo.X_test)
        >>> routing.path[1].tolist(), int(routing.stop_state[1])
        ([0, 1, 5, -1], 5)
        """
        return self._route(self._features(X))

    def node_actions(
        self, X: pd.DataFrame, state: int
    ) -> tuple[np.ndarray, np.ndarray]:
        """The rows of ``X`` whose path visits ``state``, and the action its
        policy picks for each (0: stop, a: ``policies_[state].children[a - 1]``),
        on the inputs the policy sees there (confidence features included).

        Parameters
        ----------
        X : DataFrame
            Examples with the spec's columns.
        state : int
            The state (an index into ``dag_``); 0 is the root.

        Returns
        -------
        rows : ndarray of int
            Positions in ``X``.
        actions : ndarray of int
            Same length as ``rows``.

        Examples
        --------
        >>> from budgetdag_core import BudgetDAGClassifier, toy_dataset
        >>> demo = toy_dataset(300, 20)
        >>> model = BudgetDAGClassifier(
        ...     demo.spec, cost_scale=0.05, cv=2, random_state=0
        ... ).fit(demo.X_train, demo.y_train)
        >>> rows, actions = model.node_actions(demo.X_test, 0)
        >>> len(rows), sorted(set(actions.tolist()))  # all start at the root
        (20, [1])
        """
        state = check_index("node_actions", "state", state, len(self.policies_))
        Xv = self._features(X)
        routing = self._route(Xv)
        rows = np.flatnonzero((routing.path == state).any(axis=1))
        if not rows.size:
            return rows, np.zeros(0, dtype=np.intp)
        inputs = self._policy_inputs(Xv, state, rows)
        return rows, self.policies_[state].predict(inputs)

    def _acquired_order(self, path: np.ndarray) -> list[tuple[str, ...]]:
        """Names of real sensors acquired, in order, for each row's path."""
        dag = self.sensor_dag_
        uniq, inverse = unique_paths(path)
        per_path = []
        for p in uniq:
            names: list[str] = []
            visited = [int(s) for s in p if s >= 0]
            for a, b in zip(visited, visited[1:], strict=False):
                names.extend(dag.sensor_names[m] for m in dag.added_sensors(a, b))
            per_path.append(tuple(names))
        return [per_path[i] for i in np.asarray(inverse).ravel()]

    def _costs_of(
        self, stops: np.ndarray, sample_costs: Any, n_rows: int
    ) -> np.ndarray:
        """Each row's acquisition cost: the real sensors of its stop state."""
        member = self.sensor_dag_.membership(stops)
        costs = check_sample_costs(sample_costs, self.spec_, n_rows)
        if costs is None:
            return member @ self.spec_.cost_vector
        return (member * costs).sum(axis=1)

    def _route_frame(
        self, X: pd.DataFrame, sample_costs: Any
    ) -> tuple[np.ndarray, Routing, pd.DataFrame]:
        """Route ``X``; the per-row ``acquired``, ``n_sensors``, ``cost``,
        ``stop_state`` table."""
        check_is_fitted(self)
        X = as_frame(X, self.spec_, type(self).__name__)
        sample_costs = align_rows(X, sample_costs, "sample_costs")
        Xv = self._features(X)
        routing = self._route(Xv)
        acquired = self._acquired_order(routing.path)
        frame = pd.DataFrame(
            {
                "acquired": acquired,
                "n_sensors": [len(a) for a in acquired],
                "cost": self._costs_of(routing.stop_state, sample_costs, len(Xv)),
                "stop_state": routing.stop_state,
            },
            index=X.index,
        )
        return Xv, routing, frame

    def _flow_graph(self, routing: Routing) -> nx.DiGraph:
        """``dag_`` with node ``arrived``/``stopped`` and edge ``count``."""
        g = self.dag_.copy()
        K = self.sensor_dag_.n_states
        visited = routing.path[routing.path >= 0]
        arrived = np.bincount(visited, minlength=K)
        stopped = np.bincount(routing.stop_state, minlength=K)
        for k in range(K):
            g.nodes[k]["arrived"] = int(arrived[k])
            g.nodes[k]["stopped"] = int(stopped[k])
        for u, v in g.edges:
            g.edges[u, v]["count"] = 0
        p = routing.path
        for d in range(p.shape[1] - 1):
            moved = p[:, d + 1] >= 0
            pairs, counts = np.unique(
                np.stack([p[moved, d], p[moved, d + 1]], axis=1),
                axis=0,
                return_counts=True,
            )
            for (u, v), c in zip(pairs, counts, strict=True):
                g.edges[int(u), int(v)]["count"] += int(c)
        return g

    def predict_state(self, X: pd.DataFrame) -> np.ndarray:
        """The DAG state where each example stops.

        Parameters
        ----------
        X : DataFrame
            Examples with the spec's columns.

        Returns
        -------
        ndarray of int, shape (n_samples,)
            Indices into ``dag_`` (and ``sensor_dag_``).

        Examples
        --------
        >>> from budgetdag_core import BudgetDAGClassifier, toy_dataset
        >>> demo = toy_dataset(300, 20)
        >>> model = BudgetDAGClassifier(
        ...     demo.spec, cost_scale=0.05, cv=2, random_state=0
        ... ).fit(demo.X_train, demo.y_train)
        >>> states = model.predict_state(demo.X_test)
        >>> [model.sensor_dag_.state_names(k) for k in states[:2]]
        [('cheap_a',), ('cheap_a', 'precise')]
        """
        return self._route(self._features(X)).stop_state


class LossTablePolicy(PolicyRoutingMixin, BaseEstimator):
    """Learn DAG policies from a loss table only: no labels, no classifiers.

    Section 2.4 of the paper: the system needs only the empirical loss of
    stopping each example at each state, ``losses[i, k]`` (e.g. a human's or an
    external model's errors per sensor subset), and the acquisition costs.
    This is the same Graph-Reduce the estimators run on their out-of-fold
    losses: given those losses it learns the same policies.

    Parameters
    ----------
    sensors : SensorSpec or dict
    subsets : list of list of str, optional
        Sensor subsets acting as units (the DAG over their unions, section 3);
        default one unit per sensor (the full DAG).
    cost_scale : float, default=1.0
        Weight of acquisition cost against one unit of loss.
    policy_learner, policy_degree, max_policy_features, n_jobs
        As in :class:`~budgetdag_core.BudgetDAGClassifier`.

    Attributes
    ----------
    spec_, sensor_dag_, dag_, state_columns_, policies_
        As in the estimators.
    train_cost_to_go_ : ndarray (n_samples,)
        Each training row's loss + ``cost_scale`` x cost under the policy.
    bank_ : None
        No classifier bank: the policies see only sensor values.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> spec = SensorSpec.per_column(["a", "b"], cost=0.1)
    >>> ltp = LossTablePolicy(spec)
    >>> ltp.state_labels()
    [(), ('a',), ('b',), ('a', 'b')]
    >>> rng = np.random.default_rng(0)
    >>> Z = pd.DataFrame(rng.normal(size=(100, 2)), columns=["a", "b"])
    >>> losses = np.tile([1.0, 0.5, 0.0, 0.0], (100, 1))  # "b" makes it right
    >>> ltp.fit(Z, losses).trace(Z)["acquired"].iloc[0]
    ('b',)
    """

    _parameter_constraints: dict = {
        "sensors": [SensorSpec, dict, str],
        "subsets": [list, None],
        "cost_scale": [Interval(Real, 0, None, closed="left")],
        "policy_learner": [
            StrOptions(set(POLICY_LEARNERS)),
            HasMethods(["fit", "predict"]),
        ],
        "policy_degree": [Interval(Integral, 1, 3, closed="both")],
        "max_policy_features": [Interval(Integral, 1, None, closed="left")],
        "n_jobs": [Integral, None],
    }
    bank_ = None

    def __init__(
        self,
        sensors: SensorSpec | dict,
        *,
        subsets: list[list[str]] | None = None,
        cost_scale: float = 1.0,
        policy_learner: str | Any = "filter_tree",
        policy_degree: int = 2,
        max_policy_features: int = 1000,
        n_jobs: int | None = None,
    ) -> None:
        self.sensors = sensors
        self.subsets = subsets
        self.cost_scale = cost_scale
        self.policy_learner = policy_learner
        self.policy_degree = policy_degree
        self.max_policy_features = max_policy_features
        self.n_jobs = n_jobs

    def _dag(self, spec: SensorSpec) -> SensorDAG:
        units = None
        if self.subsets is not None:
            index = {n: i for i, n in enumerate(spec.names)}
            units = []
            for subset in self.subsets:
                unknown = [s for s in subset if s not in index]
                if unknown or not subset:
                    raise ValueError(
                        f"Subset {list(subset)} is empty or names unknown "
                        f"sensor(s) {unknown}; known: {list(spec.names)}."
                    )
                units.append([index[s] for s in subset])
        return build_dag(spec, units)

    def state_labels(self) -> list[tuple[str, ...]]:
        """The states (sensor names) in the column order ``losses`` must have."""
        dag = self._dag(as_spec(self.sensors))
        return [dag.state_names(k) for k in range(dag.n_states)]

    def _loss_table(self, losses: Any, dag: SensorDAG, n_rows: int) -> np.ndarray:
        if isinstance(losses, pd.DataFrame):
            wanted = [dag.state_names(k) for k in range(dag.n_states)]
            by_set = {
                frozenset(s for s in str(col).split("+") if s): col
                for col in losses.columns
            }
            missing = [w for w in wanted if frozenset(w) not in by_set]
            if missing:
                raise ValueError(
                    f"losses has no column for state(s) {missing[:3]}: name columns by "
                    "the state's sensor names joined by '+' ('' for no sensor)."
                )
            losses = losses[[by_set[frozenset(w)] for w in wanted]]
        L = np.asarray(losses, dtype=float)
        if L.shape != (n_rows, dag.n_states):
            raise ValueError(
                f"losses must have shape ({n_rows}, {dag.n_states}) (rows x states in "
                f"the order of state_labels()); got {L.shape}."
            )
        bad = ~np.isfinite(L)
        if bad.any():
            i, k = map(int, np.argwhere(bad)[0])
            raise ValueError(
                f"losses at row {i}, state {dag.state_names(k)} is {L[i, k]}: "
                "losses must be finite."
            )
        return L

    def fit(
        self,
        Z: pd.DataFrame,
        losses: Any,
        *,
        sample_costs: Any = None,
        progress: Progress | None = None,
    ) -> LossTablePolicy:
        """Learn the policies from measurements ``Z`` and the loss table.

        Parameters
        ----------
        Z : DataFrame with the spec's columns
            What each policy may look at (the columns of acquired sensors).
        losses : ndarray (n_samples, n_states) or DataFrame
            Loss of stopping each row at each state, columns in the order of
            :meth:`state_labels`; a DataFrame may instead name its columns by
            the state's sensor names joined by ``"+"`` (``""`` for no sensor).
        sample_costs : DataFrame (rows x sensors), optional
            Example-dependent acquisition costs; default the spec's.
        progress : callable(stage, done, total), optional
        """
        self._validate_params()
        spec = as_spec(self.sensors)
        Xv = check_features(Z, spec)
        dag = self._dag(spec)
        L = self._loss_table(align_rows(Z, losses, "losses"), dag, len(Xv))
        sample_costs = align_rows(Z, sample_costs, "sample_costs")
        costs = check_sample_costs(sample_costs, spec, len(Xv))
        state_cols = dag.state_columns(spec.column_indices())
        result = graph_reduce(
            PolicyInputs("sensors", state_cols).training(Xv, None),
            L,
            spec.cost_vector if costs is None else costs,
            dag,
            make_learner(
                self.policy_learner,
                self.policy_degree,
                self.max_policy_features,
                len(Xv),
            ),
            cost_scale=self.cost_scale,
            n_jobs=self.n_jobs,
            progress=progress,
        )
        self.spec_ = spec
        self.feature_names_in_ = np.asarray(spec.columns, dtype=object)
        self.n_features_in_ = len(spec.columns)
        self.sensor_dag_ = dag
        self.dag_ = dag.to_networkx()
        self.state_columns_ = state_cols
        self.policies_ = result.policies
        self.train_cost_to_go_ = result.root_cost_to_go()
        return self

    def trace(self, Z: pd.DataFrame, *, sample_costs: Any = None) -> pd.DataFrame:
        """Per row: ``acquired`` (sensor names, in order), ``n_sensors``,
        ``cost`` (without ``cost_scale``), ``stop_state`` and ``stop_sensors``."""
        _, _, frame = self._route_frame(Z, sample_costs)
        frame["stop_sensors"] = [
            self.sensor_dag_.state_names(k) for k in frame["stop_state"]
        ]
        return frame

    def evaluate(
        self, Z: pd.DataFrame, losses: Any, *, sample_costs: Any = None
    ) -> dict[str, float]:
        """Average loss at the stop states, average cost and sensors on ``Z``."""
        tr = self.trace(Z, sample_costs=sample_costs)
        L = self._loss_table(align_rows(Z, losses, "losses"), self.sensor_dag_, len(tr))
        loss = float(L[np.arange(len(tr)), tr["stop_state"].to_numpy()].mean())
        avg_cost = float(tr["cost"].mean())
        return {
            "loss": loss,
            "avg_cost": avg_cost,
            "avg_sensors": float(tr["n_sensors"].mean()),
            "n_samples": len(tr),
            "avg_loss": loss + self.cost_scale * avg_cost,
        }

    def flow(self, Z: pd.DataFrame) -> nx.DiGraph:
        """The DAG with ``arrived``/``stopped`` per node and ``count`` per edge."""
        return self._flow_graph(self._route(self._features(Z)))
