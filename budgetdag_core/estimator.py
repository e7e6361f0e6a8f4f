"""``BudgetDAGClassifier``: adaptive sensor acquisition as a scikit-learn estimator."""

from __future__ import annotations

from numbers import Integral, Real
from typing import Any

import networkx as nx
import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from .bank import BANK_KINDS, BaseBank, Progress, make_bank, resolve_bank_kind
from .confidence import POLICY_FEATURES, confidence_features, policy_inputs
from .dag import SensorDAG
from .graph_reduce import NodePolicy, Routing, graph_reduce, route
from .reductions import CostRegression, FilterTree
from .sensors import SensorSpec
from .validation import (
    MAX_FULL_DAG_SENSORS,
    as_spec,
    check_features,
    check_labels,
    check_sample_costs,
)


class BudgetDAGClassifier(ClassifierMixin, BaseEstimator):
    """Learn which sensor to acquire next, or to stop and classify, per example.

    Implements Graph-Reduce (Wang, Trapeznikov & Saligrama, NIPS 2015): a DAG over
    sensor subsets, a classifier bank with one classifier per subset, and one
    cost-sensitive policy per subset learned leaf to root from out-of-fold losses.

    Parameters
    ----------
    sensors : SensorSpec or dict
        The sensors: groups of feature columns with acquisition costs.
    cost_scale : float, default=1.0
        Weight of acquisition cost against one misclassification. 0 buys
        everything that helps; a large value buys nothing.
    classifier : scikit-learn classifier, optional
        The bank's model: cloned per state (``bank_kind="per_subset"``, default
        standardised logistic regression) or the one masked model (must accept
        NaN).
    bank_kind : {"auto", "per_subset", "hgb", "masked"}, default="auto"
        How the classifier bank is built (see :func:`budgetdag_core.make_bank`):
        one ``classifier`` per state, one early-stopped gradient boosting per
        state, or one missing-value model for all states. ``"auto"`` is
        ``"per_subset"`` when ``classifier`` is given, else the measured default
        :data:`budgetdag_core.bank.DEFAULT_BANK_KIND`.
    policy_learner : {"filter_tree", "cost_regression"} or learner object
        Cost-sensitive learner at each node.
    policy_degree : int, default=2
        Polynomial degree (1-3) of policy features.
    cv : int, default=5
        Stratified folds of the out-of-fold losses.
    random_state : int or None
        Seeds the fold split.
    n_jobs : int or None
        Parallel bank fits and node fits (joblib; honours the active backend).
    max_policy_features : int, default=1000
        Cap on the expanded policy features at a node: wider states use a lower
        polynomial degree (see ``reductions.effective_degree``).
    loss_matrix : array (n_classes, n_classes), optional
        Misclassification loss of predicting class j for truth i (classes in
        sorted order); default 0/1.
    policy_features : {"sensors", "sensors+confidence"}, default="sensors"
        Inputs of each node's policy. ``"sensors"`` (the paper): the features of
        the acquired sensors. ``"sensors+confidence"`` adds the top-class
        probability, margin and entropy of the state's classifier (out-of-fold
        at training, the refit bank at predict time; the root has none).

    Attributes
    ----------
    spec_ : SensorSpec
    classes_ : ndarray
    dag_ : networkx.DiGraph
        States with attribute ``sensors`` (tuple of names).
    bank_ : ClassifierBank
    policies_ : list of NodePolicy
    feature_names_in_ : ndarray of str

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> rng = np.random.default_rng(0)
    >>> X = pd.DataFrame({"a": rng.normal(size=200), "b": rng.normal(size=200)})
    >>> y = (X["a"] + X["b"] > 0).astype(int)
    >>> spec = SensorSpec.per_column(["a", "b"], cost=0.05)
    >>> model = BudgetDAGClassifier(spec, random_state=0).fit(X, y)
    >>> model.evaluate(X, y)["avg_sensors"] > 0
    True
    """

    _parameter_constraints: dict = {
        "sensors": [SensorSpec, dict, str],
        "cost_scale": [Interval(Real, 0, None, closed="left")],
        "classifier": [HasMethods(["fit", "predict"]), None],
        "bank_kind": [StrOptions({"auto", *BANK_KINDS})],
        "policy_learner": [
            StrOptions({"filter_tree", "cost_regression"}),
            HasMethods(["fit", "predict"]),
        ],
        "policy_degree": [Interval(Integral, 1, 3, closed="both")],
        "cv": [Interval(Integral, 2, None, closed="left")],
        "random_state": ["random_state"],
        "n_jobs": [Integral, None],
        "max_policy_features": [Interval(Integral, 1, None, closed="left")],
        "loss_matrix": ["array-like", None],
        "policy_features": [StrOptions(set(POLICY_FEATURES))],
    }

    def __init__(
        self,
        sensors: SensorSpec | dict,
        *,
        cost_scale: float = 1.0,
        classifier: Any = None,
        bank_kind: str = "auto",
        policy_learner: str | Any = "filter_tree",
        policy_degree: int = 2,
        cv: int = 5,
        random_state: int | None = None,
        n_jobs: int | None = None,
        max_policy_features: int = 1000,
        loss_matrix: Any = None,
        policy_features: str = "sensors",
    ) -> None:
        self.sensors = sensors
        self.cost_scale = cost_scale
        self.classifier = classifier
        self.bank_kind = bank_kind
        self.policy_learner = policy_learner
        self.policy_degree = policy_degree
        self.cv = cv
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.max_policy_features = max_policy_features
        self.loss_matrix = loss_matrix
        self.policy_features = policy_features

    # ------------------------------------------------------------------ fitting
    def _make_learner(self) -> Any:
        if self.policy_learner == "filter_tree":
            return FilterTree(self.policy_degree, max_features=self.max_policy_features)
        if self.policy_learner == "cost_regression":
            return CostRegression(
                self.policy_degree, max_features=self.max_policy_features
            )
        return self.policy_learner

    def _build_dag(self, spec: SensorSpec) -> SensorDAG:
        if spec.n_sensors > MAX_FULL_DAG_SENSORS:
            raise ValueError(
                f"The spec has {spec.n_sensors} sensors: a full DAG would have "
                f"2^{spec.n_sensors} states. Group columns into at most "
                f"{MAX_FULL_DAG_SENSORS} sensors, or use subset selection "
                "(n_subsets=t) to build the DAG over t selected sensor subsets."
            )
        return SensorDAG(spec.names)

    def _check_loss_matrix(self, n_classes: int) -> np.ndarray | None:
        if self.loss_matrix is None:
            return None
        lm = np.asarray(self.loss_matrix, dtype=float)
        if lm.shape != (n_classes, n_classes):
            raise ValueError(
                f"loss_matrix must be {n_classes}x{n_classes} (one row and column "
                f"per class); got shape {lm.shape}."
            )
        if not np.isfinite(lm).all() or (lm < 0).any():
            raise ValueError("loss_matrix entries must be finite and non-negative.")
        return lm

    def fit(
        self,
        X: pd.DataFrame,
        y: Any,
        *,
        sample_costs: pd.DataFrame | np.ndarray | None = None,
        bank: BaseBank | None = None,
        progress: Progress | None = None,
    ) -> BudgetDAGClassifier:
        """Fit the classifier bank (unless ``bank`` is given) and the policies.

        Parameters
        ----------
        X : DataFrame with the spec's columns.
        y : labels.
        sample_costs : DataFrame (rows x sensor names), optional
            Example-dependent acquisition costs; default the spec's costs.
        bank : fitted bank (ClassifierBank or MaskedBank), optional
            A bank fitted on the same data (e.g. ``other_model.bank_``): reused
            instead of refitted, so only the policies are learned.
        progress : callable(stage, done, total), optional
            Called as the bank ("bank") and the policies ("policies") progress.
        """
        self._validate_params()
        spec, Xv, y_enc, classes, dag = self._check_fit_data(X, y)
        costs = check_sample_costs(sample_costs, spec, len(Xv))
        loss_matrix = self._check_loss_matrix(len(classes))
        sensor_columns = spec.column_indices()
        if bank is not None:
            expected = self._make_bank(dag).fingerprint_for(Xv, y_enc, dag)
            if getattr(bank, "fingerprint_", None) != expected:
                raise ValueError(
                    "The given bank was fitted on other data or settings (rows, "
                    "columns, cv, random_state, bank kind or classifier differ): "
                    "refit it."
                )
        else:
            bank = self._make_bank(dag).fit(
                Xv, y_enc, dag, sensor_columns, len(classes), progress
            )
        state_cols = dag.state_columns(sensor_columns)
        use_conf = self.policy_features == "sensors+confidence"
        if use_conf and not hasattr(bank, "oof_proba_"):
            raise ValueError(
                "policy_features='sensors+confidence' needs the bank's out-of-fold "
                "probabilities, which this (slim, saved) bank lacks: refit it."
            )

        def state_inputs(k: int) -> np.ndarray:
            conf = None
            if use_conf and len(state_cols[k]):
                conf = confidence_features(bank.oof_proba_[:, k])
            return policy_inputs(Xv[:, state_cols[k]], conf)

        result = graph_reduce(
            state_inputs,
            bank.oof_losses(y_enc, loss_matrix),
            spec.cost_vector if costs is None else costs,
            dag,
            self._make_learner(),
            cost_scale=self.cost_scale,
            n_jobs=self.n_jobs,
            progress=progress,
        )
        # Only now, with everything computed, touch the estimator's state.
        self.spec_ = spec
        self.classes_ = classes
        self.feature_names_in_ = np.asarray(spec.columns, dtype=object)
        self.n_features_in_ = len(spec.columns)
        self.sensor_dag_ = dag
        self.dag_ = dag.to_networkx()
        self.state_columns_ = state_cols
        self.bank_ = bank
        self.uses_confidence_ = use_conf
        self.policies_: list[NodePolicy] = result.policies
        self.train_cost_to_go_ = result.cost_to_go[:, 0]
        return self

    def _check_fit_data(
        self, X: pd.DataFrame, y: Any
    ) -> tuple[SensorSpec, np.ndarray, np.ndarray, np.ndarray, SensorDAG]:
        """Checked spec, feature matrix, encoded labels, classes and DAG."""
        spec = as_spec(self.sensors)
        Xv = check_features(X, spec)
        y = check_labels(y, len(Xv), self.cv)
        classes, y_enc = np.unique(y, return_inverse=True)
        return spec, Xv, y_enc, classes, self._build_dag(spec)

    def _make_bank(self, dag: SensorDAG) -> BaseBank:
        """The unfitted bank of ``bank_kind`` for this DAG."""
        return make_bank(
            resolve_bank_kind(self.bank_kind, self.classifier, dag.n_states),
            self.classifier,
            cv=self.cv,
            random_state=self.random_state,
            n_jobs=self.n_jobs,
        )

    def fit_bank(
        self, X: pd.DataFrame, y: Any, *, progress: Progress | None = None
    ) -> BaseBank:
        """Fit only the classifier bank, for reuse by ``fit(X, y, bank=...)``.

        The bank does not depend on costs, ``cost_scale`` or the policy settings:
        fit it once and learn policies for many cost scales (see
        :func:`budgetdag_core.tradeoff_curve`). The estimator itself is unchanged.
        """
        self._validate_params()
        spec, Xv, y_enc, classes, dag = self._check_fit_data(X, y)
        return self._make_bank(dag).fit(
            Xv, y_enc, dag, spec.column_indices(), len(classes), progress
        )

    def _bank_template(self) -> Any:
        """The classifier the bank fits (per state, or the one masked model)."""
        kind = resolve_bank_kind(self.bank_kind, self.classifier)
        return make_bank(
            kind, self.classifier, random_state=self.random_state
        ).template()

    def refit_policies(
        self,
        X: pd.DataFrame,
        y: Any,
        cost_scale: float,
        *,
        sample_costs: Any = None,
        progress: Progress | None = None,
    ) -> BudgetDAGClassifier:
        """A new model with another ``cost_scale``, reusing this model's bank."""
        check_is_fitted(self)
        from sklearn.base import clone

        other = clone(self).set_params(cost_scale=cost_scale)
        return other.fit(
            X, y, sample_costs=sample_costs, bank=self.bank_, progress=progress
        )

    # --------------------------------------------------------------- inference
    def _features(self, X: pd.DataFrame) -> np.ndarray:
        check_is_fitted(self)
        return check_features(X, self.spec_)

    def _uses_confidence(self, k: int) -> bool:
        # Models pickled before policy_features existed have no such attribute.
        return getattr(self, "uses_confidence_", False) and bool(
            len(self.state_columns_[k])
        )

    def _route(
        self,
        Xv: np.ndarray,
        conf: np.ndarray | None = None,
        stop_proba: dict[int, tuple[np.ndarray, np.ndarray]] | None = None,
    ) -> Routing:
        """Route all rows; ``conf`` (n, n_states, 3) are precomputed confidences.

        Without ``conf``, confidence policies ask the bank at each node for the
        rows there; those probabilities are kept in ``stop_proba`` (state ->
        (rows, proba)) so that the stop state's prediction need not recompute them.
        """
        cols = self.state_columns_

        def inputs(k: int, rows: np.ndarray) -> np.ndarray:
            if not self._uses_confidence(k):
                return Xv[np.ix_(rows, cols[k])]
            if conf is not None:
                return policy_inputs(Xv[np.ix_(rows, cols[k])], conf[rows, k])
            proba = self.bank_.predict_proba(Xv[rows], k)
            if stop_proba is not None:
                stop_proba[k] = (rows, proba)
            return policy_inputs(Xv[np.ix_(rows, cols[k])], confidence_features(proba))

        return route(self.policies_, inputs, len(Xv), self.sensor_dag_.n_sensors)

    def _route_and_proba(self, Xv: np.ndarray) -> tuple[Routing, np.ndarray]:
        """Routing and the stop-state class probabilities of every row."""
        known: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        routing = self._route(Xv, stop_proba=known)
        return routing, self._proba_at_stops(Xv, routing.stop_state, known)

    def _proba_at_stops(
        self,
        Xv: np.ndarray,
        stops: np.ndarray,
        known: dict[int, tuple[np.ndarray, np.ndarray]] | None = None,
    ) -> np.ndarray:
        proba = np.zeros((len(Xv), len(self.classes_)))
        for k in np.unique(stops):
            rows = np.flatnonzero(stops == k)
            if known is not None and int(k) in known:
                seen, p = known[int(k)]
                proba[rows] = p[np.searchsorted(seen, rows)]
            else:
                proba[rows] = self.bank_.predict_proba(Xv[rows], int(k))
        return proba

    def predict_proba(self, X: pd.DataFrame) -> np.ndarray:
        """Class probabilities from the classifier of each example's stop state."""
        Xv = self._features(X)
        return self._route_and_proba(Xv)[1]

    def predict(self, X: pd.DataFrame) -> np.ndarray:
        return self.classes_[self.predict_proba(X).argmax(axis=1)]

    def _acquired_order(self, path: np.ndarray) -> list[tuple[str, ...]]:
        """Names of real sensors acquired, in order, for each row's path."""
        dag = self.sensor_dag_
        uniq, inverse = np.unique(path, axis=0, return_inverse=True)
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
        member = self.sensor_dag_.membership()[stops]
        costs = check_sample_costs(sample_costs, self.spec_, n_rows)
        if costs is None:
            return member @ self.spec_.cost_vector
        return (member * costs).sum(axis=1)

    def trace(self, X: pd.DataFrame, *, sample_costs: Any = None) -> pd.DataFrame:
        """One row per example: what the policy acquired, paid and predicted.

        Columns: ``prediction``, ``acquired`` (sensor names in acquisition
        order), ``n_sensors``, ``cost`` (spec units, without ``cost_scale``),
        ``stop_state`` (state index), ``confidence`` (top class probability).
        """
        Xv = self._features(X)
        routing, proba = self._route_and_proba(Xv)
        acquired = self._acquired_order(routing.path)
        return pd.DataFrame(
            {
                "prediction": self.classes_[proba.argmax(axis=1)],
                "acquired": acquired,
                "n_sensors": [len(a) for a in acquired],
                "cost": self._costs_of(routing.stop_state, sample_costs, len(Xv)),
                "stop_state": routing.stop_state,
                "confidence": proba.max(axis=1),
            },
            index=X.index,
        )

    def evaluate(
        self, X: pd.DataFrame, y: Any, *, sample_costs: Any = None
    ) -> dict[str, float]:
        """Test error, average acquisition cost and average number of sensors."""
        tr = self.trace(X, sample_costs=sample_costs)
        y = check_labels(y, len(tr), None)
        wrong = tr["prediction"].to_numpy() != y
        out = {
            "error": float(wrong.mean()),
            "avg_cost": float(tr["cost"].mean()),
            "avg_sensors": float(tr["n_sensors"].mean()),
            "n_samples": len(tr),
        }
        out["avg_loss"] = out["error"] + self.cost_scale * out["avg_cost"]
        return out

    def evaluate_states(
        self,
        X: pd.DataFrame,
        y: Any,
        *,
        sample_costs: Any = None,
        states: Any = None,
    ) -> pd.DataFrame:
        """Non-adaptive baselines: every state's classifier applied to all rows.

        One row per DAG state with ``state``, ``sensors`` (names), ``n_sensors``,
        ``avg_cost`` (everyone pays for all of the state's sensors) and ``error``.
        State 0 is the no-sensor baseline, the last state all sensors.

        ``states`` restricts the rows to some states, given as state indices or
        as collections of sensor names (e.g. greedily selected subsets); each
        must be a state of the DAG.
        """
        Xv = self._features(X)
        y = check_labels(y, len(Xv), None)
        dag = self.sensor_dag_
        rows = []
        for k in self.state_indices(states):
            pred = self.classes_[self.bank_.predict_proba(Xv, k).argmax(axis=1)]
            stops = np.full(len(Xv), k)
            rows.append(
                {
                    "state": k,
                    "sensors": dag.state_names(k),
                    "n_sensors": len(dag.sensors_in(k)),
                    "avg_cost": float(
                        self._costs_of(stops, sample_costs, len(Xv)).mean()
                    ),
                    "error": float((pred != y).mean()),
                }
            )
        return pd.DataFrame(rows)

    def state_indices(self, states: Any = None) -> list[int]:
        """DAG state indices of ``states`` (indices or sensor-name collections).

        ``None`` gives all states. A sensor subset that is not a state of the DAG
        (possible when the DAG is built over selected subsets) is a ``ValueError``.
        """
        check_is_fitted(self)
        dag = self.sensor_dag_
        if states is None:
            return list(range(dag.n_states))
        position = {name: i for i, name in enumerate(dag.sensor_names)}
        out = []
        for state in states:
            if isinstance(state, Integral):
                if not 0 <= int(state) < dag.n_states:
                    raise ValueError(
                        f"State index {state} is out of range (0..{dag.n_states - 1})."
                    )
                out.append(int(state))
                continue
            names = [state] if isinstance(state, str) else list(state)
            unknown = [n for n in names if n not in position]
            if unknown:
                raise ValueError(
                    f"Unknown sensor(s) {unknown} in subset {tuple(names)}; known: "
                    f"{list(dag.sensor_names)}."
                )
            mask = 0
            for n in names:
                mask |= 1 << position[n]
            if mask not in dag.index:
                raise ValueError(
                    f"The subset {tuple(names)} is not a state of this model's DAG."
                )
            out.append(dag.index[mask])
        return out

    def flow(self, X: pd.DataFrame, y: Any = None) -> nx.DiGraph:
        """The DAG annotated with how examples of ``X`` flow through it.

        Node attributes: ``arrived``, ``stopped`` and, when ``y`` is given,
        ``errors`` (misclassified among those stopping there). Edge attribute:
        ``count``.
        """
        Xv = self._features(X)
        routing, stop_proba = self._route_and_proba(Xv)
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
        if y is not None:
            y = check_labels(y, len(Xv), None)
            wrong = self.classes_[stop_proba.argmax(axis=1)] != y
            errors = np.bincount(routing.stop_state, weights=wrong, minlength=K)
            for k in range(K):
                g.nodes[k]["errors"] = int(errors[k])
        return g

    def start(self, sample_costs: dict[str, float] | None = None) -> Any:
        """A session that decides for one example at a time, as in deployment."""
        from .session import PolicySession

        check_is_fitted(self)
        return PolicySession(self, sample_costs)

    def __sklearn_tags__(self):  # noqa: D105
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = False
        return tags
