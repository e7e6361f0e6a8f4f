"""``BudgetDAGClassifier``: adaptive sensor acquisition as a scikit-learn estimator."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pandas as pd
from sklearn.base import ClassifierMixin
from sklearn.utils._param_validation import HasMethods, StrOptions
from sklearn.utils.validation import check_is_fitted

from ._estimator_base import BudgetDAGBase
from ._progress import Progress
from .bank import (
    BANK_KINDS,
    BaseBank,
    ClassifierBank,
    make_bank,
    resolve_bank_kind,
)
from .confidence import POLICY_FEATURES, confidence_features, policy_inputs
from .dag import SensorDAG
from .decisions import check_loss_matrix, decide, encode_labels, matrix_loss
from .graph_reduce import GraphReduceResult, graph_reduce
from .sensors import SensorSpec
from .validation import check_features, check_labels, check_sample_costs


class BudgetDAGClassifier(ClassifierMixin, BudgetDAGBase):
    """Learn which sensor to acquire next, or to stop and classify, per example.

    Implements Graph-Reduce (Wang, Trapeznikov & Saligrama, NIPS 2015): a DAG over
    sensor subsets, a classifier bank with one classifier per subset, and one
    cost-sensitive policy per subset learned leaf to root from out-of-fold losses.

    Parameters
    ----------
    sensors : SensorSpec, dict, JSON str or None, default=None
        The sensors: groups of feature columns with acquisition costs. None:
        one sensor of cost 1 per column of ``X`` (named after the DataFrame's
        columns, or ``x0, x1, ...`` for an array), as scikit-learn's checks
        and pipelines build estimators.
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
        state, or one missing-value model for all states. ``"auto"``:
        ``"per_subset"`` when ``classifier`` is given, ``"masked"`` for DAGs of
        33 states or more, else ``"hgb"`` (chosen by measurement, see the
        README's bank benchmark).
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
        polynomial degree (see ``reductions.effective_degree``), down to 1. On
        long tables the cap is lowered so that rows x features <= 2^25
        (``policy.policy_feature_cap``; from 33 554 rows on).
    loss_matrix : array (n_classes, n_classes), optional
        Misclassification loss of predicting class j for truth i (classes in
        sorted order); default 0/1. It is the stop loss the policies learn from,
        and predictions are the class of least expected loss under it.
    n_subsets : int or None, default=None
        With many sensors: build the DAG over the unions of ``n_subsets``
        sensor subsets chosen by greedy Alg. 2 (see
        :func:`~budgetdag_core.select_subsets`), at most 2^n_subsets states,
        instead of the full DAG (limited to 12 sensors). Each subset acts as one
        "super-sensor"; its edge cost is the cost of the sensors it adds that
        are not yet acquired. ``trace`` still lists real sensors.
    subset_budget : float or None, default=None
        Budget Σ_j |σj| of the greedy subsets (the paper's B/δ; with unequal
        costs, in units of the mean sensor cost). Default: the number of
        sensors.
    include_all : bool, default=False
        Make the last subset the set of all sensors (the paper's 7 greedy
        subsets + all features for ``n_subsets=8``).
    subset_scorer : "ridge" or classifier, default="ridge"
        Cheap out-of-fold scorer of candidate subsets on at most 20000 rows
        (``"ridge"``: a least-squares classifier solved from Gram matrices).
    subset_reward : {"soft", "correct"}, default="soft"
        Alg. 2's per-row reward: the subset scorer's out-of-fold probability of
        the true class (``"soft"``), or 1 when it is right (``"correct"``, the
        paper). The 0/1 reward saturates after a few one-sensor subsets (DNA:
        G = 0.9995 after five single positions), so the greedy stops growing
        subsets; the soft reward keeps G informative. Measured on spam and DNA
        (t = 7 + all), it lowers the DAG's test error at 50 % of the all-sensor
        cost from 0.055 to 0.040 and from 0.047 to 0.043. See
        :func:`~budgetdag_core.select_subsets`.
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
    bank_ : ClassifierBank or MaskedBank
    policies_ : list of NodePolicy
    feature_names_in_ : ndarray of str
    subset_selection_ : SubsetSelection or None
        The greedy subsets (with ``n_subsets``), their reward and history.

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
        **BudgetDAGBase._common_constraints,
        # The banks read class probabilities: a regressor (Ridge) or a classifier
        # without predict_proba (SVC) is refused here, naming the parameter.
        "classifier": [HasMethods(["fit", "predict_proba"]), None],
        "bank_kind": [StrOptions({"auto", *BANK_KINDS})],
        "loss_matrix": ["array-like", None],
        "policy_features": [StrOptions(set(POLICY_FEATURES))],
        "subset_reward": [StrOptions({"correct", "soft"})],
    }
    _task = "classification"

    def __init__(
        self,
        sensors: SensorSpec | dict | str | None = None,
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
        n_subsets: int | None = None,
        subset_budget: float | None = None,
        include_all: bool = False,
        subset_scorer: Any = "ridge",
        policy_features: str = "sensors",
        subset_reward: str = "soft",
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
        self.n_subsets = n_subsets
        self.subset_budget = subset_budget
        self.include_all = include_all
        self.subset_scorer = subset_scorer
        self.policy_features = policy_features
        self.subset_reward = subset_reward

    # ------------------------------------------------------------------ fitting
    def _check_loss_matrix(self, n_classes: int) -> np.ndarray | None:
        return check_loss_matrix(self.loss_matrix, n_classes)

    @property
    def uses_confidence_(self) -> bool:
        """Whether the node policies also see the classifier's confidence."""
        return self.policy_features == "sensors+confidence"

    def _uses_confidence(self, state: int) -> bool:
        return self.uses_confidence_ and bool(len(self.state_columns_[state]))

    def _train_inputs(
        self, Xv: np.ndarray, bank: ClassifierBank, state_columns: list[np.ndarray]
    ):
        if not self.uses_confidence_:
            return super()._train_inputs(Xv, bank, state_columns)
        if not hasattr(bank, "oof_proba_"):
            raise ValueError(
                "policy_features='sensors+confidence' needs the bank's out-of-fold "
                "probabilities, which this (slim, saved) bank lacks: refit it."
            )

        def inputs(k: int) -> np.ndarray:
            conf = None
            if len(state_columns[k]):
                conf = confidence_features(bank.oof_proba_[:, k])
            return policy_inputs(Xv[:, state_columns[k]], conf)

        return inputs

    def _policy_inputs(self, Xv: np.ndarray, state: int, rows: np.ndarray) -> Any:
        features = super()._policy_inputs(Xv, state, rows)
        if not self._uses_confidence(state):
            return features
        proba = self.bank_.predict_proba(Xv[rows], state)
        return policy_inputs(features, confidence_features(proba))

    def _route(self, Xv: np.ndarray, conf: np.ndarray | None = None) -> Any:
        """Route all rows; ``conf`` (n, n_states, 3) are precomputed confidences
        (e.g. out-of-fold ones), used instead of asking the bank."""
        if conf is None or not self.uses_confidence_:
            return super()._route(Xv)

        def inputs(k: int, rows: np.ndarray) -> np.ndarray:
            features = Xv[np.ix_(rows, self.state_columns_[k])]
            if not self._uses_confidence(k):
                return features
            return policy_inputs(features, conf[rows, k])

        return super()._route(Xv, inputs)

    def _prepare_target(self, y: Any, n_rows: int) -> tuple[np.ndarray, dict]:
        y = check_labels(y, n_rows, self.cv)
        classes, y_enc = np.unique(y, return_inverse=True)
        self._check_loss_matrix(len(classes))
        return y_enc, {"classes_": classes}

    def _bank_template(self) -> Any:
        """The classifier the bank fits (per state, or the one masked model)."""
        return self._new_bank().template()

    def _new_bank(self, dag: SensorDAG | None = None) -> BaseBank:
        n_states = None if dag is None else dag.n_states
        return make_bank(
            resolve_bank_kind(self.bank_kind, self.classifier, n_states),
            self.classifier,
            cv=self.cv,
            random_state=self.random_state,
            n_jobs=self.n_jobs,
        )

    def _fit_bank(
        self,
        bank: ClassifierBank,
        Xv: np.ndarray,
        y_fit: np.ndarray,
        dag: SensorDAG,
        spec: SensorSpec,
        progress: Progress | None,
    ) -> ClassifierBank:
        n_classes = int(y_fit.max()) + 1
        return bank.fit(Xv, y_fit, dag, spec.column_indices(), n_classes, progress)

    def _stop_losses(self, bank: ClassifierBank, y_fit: np.ndarray) -> np.ndarray:
        return bank.oof_losses(y_fit, self._check_loss_matrix(bank.n_classes_))

    def graph_reduce_record(
        self, X: pd.DataFrame, y: Any, *, sample_costs: Any = None
    ) -> GraphReduceResult:
        """Graph-Reduce on the training data again, with the fitted policies.

        Replays the leaf-to-root walk of ``fit`` (:func:`graph_reduce` with
        ``replay=self.policies_, record=True``): each state's action cost
        table, each row's cost-to-go and the action each policy picks, on the
        policy inputs the model was trained on (confidence features included).
        Nothing is refitted.

        Parameters
        ----------
        X, y : the training data the model was fitted on.
        sample_costs : optional
            The example-dependent costs given to ``fit``, if any.

        Returns
        -------
        GraphReduceResult
            With ``tables``; ``cost_to_go[:, 0]`` equals ``train_cost_to_go_``.

        Examples
        --------
        >>> from budgetdag_core import toy_dataset
        >>> demo = toy_dataset(200, 10)
        >>> record = (
        ...     BudgetDAGClassifier(demo.spec, cv=3, random_state=0)
        ...     .fit(demo.X_train, demo.y_train)
        ...     .graph_reduce_record(demo.X_train, demo.y_train)
        ... )
        >>> [table.shape[1] for table in record.tables]  # stop + one per child
        [4, 3, 3, 3, 2, 2, 2, 1]
        """
        check_is_fitted(self)
        Xv = check_features(X, self.spec_)
        bank = self.bank_
        if not hasattr(bank, "oof_proba_"):
            raise ValueError(
                "This model's bank has no out-of-fold predictions (a slim, saved "
                "model): Graph-Reduce cannot be replayed; refit the model."
            )
        n_bank = bank.oof_proba_.shape[0]
        if len(Xv) != n_bank:
            raise ValueError(
                f"X has {len(Xv)} rows but the model was trained on {n_bank}: pass "
                "the training data (the out-of-fold losses exist for those rows "
                "only)."
            )
        labels = check_labels(y, len(Xv), None)
        unknown = ~np.isin(labels, self.classes_)
        if unknown.any():
            row = int(np.flatnonzero(unknown)[0])
            label = labels[row].item() if hasattr(labels[row], "item") else labels[row]
            raise ValueError(
                f"y has label {label!r} (row {row}) that the model was not "
                "trained on: pass the training labels."
            )
        costs = check_sample_costs(sample_costs, self.spec_, len(Xv))
        return graph_reduce(
            self._train_inputs(Xv, bank, self.state_columns_),
            self._stop_losses(bank, np.searchsorted(self.classes_, labels)),
            self.spec_.cost_vector if costs is None else costs,
            self.sensor_dag_,
            None,
            cost_scale=self.cost_scale,
            replay=self.policies_,
            record=True,
        )

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

        With ``n_subsets`` the sensor subsets are selected first.

        Parameters
        ----------
        X : DataFrame with the spec's columns.
        y : labels.
        sample_costs : DataFrame (rows x sensor names), optional
            Example-dependent acquisition costs (eq. 9 of the paper); default
            the spec's costs. Subset selection uses their column means.
        bank : fitted bank (ClassifierBank or MaskedBank), optional
            A bank fitted on the same data (e.g. ``other_model.bank_``): reused
            instead of refitted, so only the policies are learned.
        progress : callable(stage, done, total), optional
            Called as the subsets (``"subsets"``, with ``n_subsets`` only), the
            bank (``"bank"``) and the policies (``"policies"``) progress.
        """
        return self._fit(X, y, sample_costs=sample_costs, bank=bank, progress=progress)

    # --------------------------------------------------------------- inference
    def _proba_at_stops(self, Xv: np.ndarray, stops: np.ndarray) -> np.ndarray:
        proba = np.zeros((len(Xv), len(self.classes_)))
        for k in np.unique(stops):
            rows = np.flatnonzero(stops == k)
            proba[rows] = self.bank_.predict_proba(Xv[rows], int(k))
        return proba

    def labels_from_proba(self, proba: np.ndarray) -> np.ndarray:
        """Labels for rows of class probabilities: the most probable class, or with
        ``loss_matrix`` the class of least expected loss."""
        return self.classes_[decide(proba, self._check_loss_matrix(len(self.classes_)))]

    def _predict_rows(self, Xv: np.ndarray, stops: np.ndarray) -> np.ndarray:
        return self.labels_from_proba(self._proba_at_stops(Xv, stops))

    def _trace_columns(
        self, Xv: np.ndarray, stops: np.ndarray
    ) -> dict[str, np.ndarray]:
        proba = self._proba_at_stops(Xv, stops)
        return {
            "prediction": self.labels_from_proba(proba),
            "confidence": proba.max(axis=1),
        }

    def _check_eval_target(self, y: Any, n_rows: int) -> np.ndarray:
        y = check_labels(y, n_rows, None, min_classes=1)
        unseen = [c for c in pd.unique(y) if c not in set(self.classes_.tolist())]
        if unseen:
            warnings.warn(
                f"Label(s) {sorted(map(str, unseen))} were not seen in training: the "
                "model never predicts them, so their rows all count as errors.",
                UserWarning,
                stacklevel=3,
            )
        return y

    def _row_loss(self, pred: np.ndarray, y: np.ndarray) -> np.ndarray:
        if self.loss_matrix is None:
            return (pred != y).astype(float)
        truth = encode_labels(y, self.classes_)  # -1 (loss 1) if never seen
        predicted = np.searchsorted(self.classes_, pred)[:, None]
        return matrix_loss(self.loss_matrix, truth, predicted)[:, 0]

    def _metrics(self, pred: np.ndarray, y: np.ndarray) -> dict[str, float]:
        return {"error": float((pred != y).mean())}

    def _flow_annotations(self, pred: np.ndarray, y: np.ndarray) -> dict[str, Any]:
        return {"errors": pred != y}

    def predict_proba(self, X: pd.DataFrame) -> np.ndarray:
        """Class probabilities from the classifier of each example's stop state."""
        Xv = self._features(X)
        return self._proba_at_stops(Xv, self._route(Xv).stop_state)

    def predict(self, X: pd.DataFrame) -> np.ndarray:
        """Labels: the most probable class at each example's stop state, or with
        ``loss_matrix`` the class of least expected loss."""
        return self.labels_from_proba(self.predict_proba(X))
