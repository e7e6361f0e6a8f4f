"""``BudgetDAGClassifier``: adaptive sensor acquisition as a scikit-learn estimator."""

from __future__ import annotations

import hashlib
import warnings
from numbers import Integral
from typing import Any

import numpy as np
import pandas as pd
from sklearn.base import ClassifierMixin
from sklearn.utils import get_tags
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions

from .._bounded_io import short_repr
from .._progress import Progress
from .._threads import map_in_threads, single_threaded
from ..bank import (
    BANK_KINDS,
    SERVE_MODES,
    SPARSE_BANK_KINDS,
    BaseBank,
    ClassifierBank,
    SparseMaskedBank,
    make_bank,
    make_sparse_bank,
    resolve_bank_kind,
    row_blocks,
)
from ..dag import SensorDAG
from ..decisions import (
    STOP_LOSSES,
    check_loss_matrix,
    decide,
    encode_labels,
    matrix_loss,
    stop_losses,
)
from ..graph_reduce import Routing
from ..sensors import SensorSpec
from ..strategies import MAX_SPARSE_STATES
from ..validation import (
    check_labels,
)
from ._base import COMMON_CONSTRAINTS, BudgetDAGBase
from ._inputs import (
    POLICY_FEATURES,
    constant_states,
    uses_model_inputs,
)

#: Probabilities (rows x states x classes) per stop-loss batch.
STOP_LOSS_VALUES = 2**22


class BudgetDAGClassifier(ClassifierMixin, BudgetDAGBase):
    """Learn which sensor to acquire next, or to stop and classify, per example.

    Implements Graph-Reduce (Wang, Trapeznikov & Saligrama, NIPS 2015): a DAG over
    sensor subsets, a classifier bank with one classifier per subset, and one
    cost-sensitive policy per subset learned leaf to root from out-of-fold losses.

    Parameters
    ----------
    sensors : SensorSpec, dict, JSON text or None, default=None
        The sensors: groups of feature columns with acquisition costs. None:
        one sensor of cost 1 per column of ``X`` (named after the DataFrame's
        columns, or ``x0, x1, ...`` for an array), as scikit-learn's checks
        and pipelines build estimators.
    cost_scale : float or "auto", default="auto"
        Weight of acquisition cost against one misclassification. 0 buys
        everything that helps; a large value buys nothing.
        ``"auto"``: the bank is fitted once and the policies learned at a
        few scales on it; the one kept has the least average cost on the
        training rows, with the bank's out-of-fold predictions, among those
        whose out-of-fold error is within one point (``loss_matrix``: times
        its largest loss) of the richest state's (all sensors on a full
        DAG); see ``budgetdag_core.estimator._auto_scale``.
        The chosen number is in ``cost_scale_``, the scales tried and the
        reason in ``cost_scale_search_``. A ``fit`` whose policy buys nothing
        although a first sensor lowers the out-of-fold error warns
        (:class:`~budgetdag_core.NothingBoughtWarning`).
    classifier : scikit-learn classifier, optional
        The bank's model: cloned per state (``bank_kind="per_subset"``, default
        standardised logistic regression) or the one masked model (must accept
        NaN).
    bank_kind : {"auto", "per_subset", "hgb", "masked", "masked_mlp", \
"masked_logistic", "masked_auto"}, default="auto"
        How the classifier bank is built (see :func:`budgetdag_core.bank.make_bank`):
        one ``classifier`` per state, one early-stopped gradient boosting per
        state, or one model for all states on masked rows (boosting, or a
        network or logistic regression on the mask encoding). ``"auto"``:
        ``"per_subset"`` when ``classifier`` is given, ``"masked"`` for DAGs of
        33 states or more, else ``"hgb"`` (chosen by measurement, see the user
        guide's "Classifier banks", ``docs/user_guide/banks.rst``); on a
        sparse DAG ``"masked_auto"``. ``"masked_auto"`` (sparse DAGs only):
        the masked kind (boosting, network, logistic regression) of least log
        loss on validation rows carved from the training rows
        (``budgetdag_core.bank.AutoMaskedBank``: ``bank_.kind_``,
        ``bank_.validation_``; on a few hundred rows with many sensors the
        network or the logistic regression often beats boosting, see
        ``benchmarks/bench_afa.py``). When the logistic regression wins by
        little, the close kind that learns interactions is fitted too and
        its routed DAG joins ``dag="auto"``'s choice on held-out rows (as
        ``"routed@masked_mlp"``, say): the policies judge the kinds.
    policy_learner : {"filter_tree", "cost_regression", "boosted"} or learner
        Cost-sensitive learner at each node: the paper's filter tree of
        logistic regressions, one ridge regression of each action's cost, or one
        small boosted-tree regression per action (see
        ``make_learner()``); or any object with
        ``fit(Z, C)``/``predict(Z)`` (e.g. ``FilterTree(estimator=...)``).
    policy_degree : int or None, default=None
        Polynomial degree (1-3) of policy features; ``None``: 2 with sensor
        inputs (the paper), 1 with the classifier's probabilities.
    cv : int, default=5
        Stratified folds of the out-of-fold losses, 2 to ``MAX_CV`` (20): each
        state's classifier is fitted once per fold. Where the smallest class
        has fewer rows (at least 2), that many folds (``cv_``).
    random_state : int or None
        Seeds the fold split.
    n_jobs : int or None
        Parallel bank fits and node fits (joblib; honours the active backend).
    max_policy_features : int, default=1000
        Cap on the expanded policy features at a node: wider states use a lower
        polynomial degree (see ``reductions.effective_degree``), down to 1. On
        long tables the cap is lowered so that rows x features <= 2^25
        (``estimator._policy.policy_feature_cap``; from 33 554 rows on).
    loss_matrix : array (n_classes, n_classes), optional
        Misclassification loss of predicting class j for truth i (classes in
        sorted order); default 0/1. It is the stop loss the policies learn from,
        and predictions are the class of least expected loss under it.
    n_subsets : int or None, default=None
        With many sensors: build the DAG over the unions of ``n_subsets``
        sensor subsets chosen by greedy Alg. 2 (see
        :func:`~budgetdag_core.select_subsets`), at most 2^n_subsets states
        (``n_subsets`` at most ``MAX_N_SUBSETS``, 16), instead of the full DAG
        (limited to 12 sensors). Each subset acts as one "super-sensor"; its
        edge cost is the cost of the sensors it adds that are not yet
        acquired. ``trace`` still lists real sensors.
    subset_budget : float or None, default=None
        Budget ``Σ_j |σ_j|`` of the greedy subsets (the paper's B/δ; with unequal
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
        paper). With many classes the 0/1 reward saturates after a few
        one-sensor subsets, so the greedy stops growing subsets; the soft
        reward keeps G informative, and on the many-sensor benchmarks (spam,
        DNA) the DAG over its subsets errs less at the same cost (see the
        README on Alg. 2). See :func:`~budgetdag_core.select_subsets`.
    policy_features : {"auto", "proba", "confidence", "sensors", \
"sensors+confidence", "sensors+proba"}, default="auto"
        Inputs of each node's policy (out-of-fold at training, the bank at
        predict time; the root sees nothing, its classifier is the same for
        every row). ``"proba"``: the state classifier's calibrated class
        probabilities, then its top-class probability, margin and entropy.
        ``"confidence"``: those three only. ``"sensors"`` (the paper): the
        features of the acquired sensors. ``"sensors+confidence"``: both.
        ``"sensors+proba"``: the features beside the probabilities and the
        three confidences. ``"auto"``: ``"proba"``, except at states whose
        classifier says much the same for every row (``value_states_``, see
        ``constant_states()``), where the
        policy sees ``"sensors+proba"`` (``"sensors"`` on a sparse DAG): a
        sensor that only says where to look (a context that leaves the
        probabilities at the prior) is visible only through its values. Where
        every state's classifier is informative (all of the paper's data sets)
        ``"auto"`` is ``"proba"``. The probabilities use only acquired
        sensors, so Theorem 2.1 still holds.
        With ``sample_costs`` that depend on an acquired sensor's value which
        says nothing about the class (e.g. a flag for where a sensor is free),
        only sensor inputs let the policy see it: use ``"sensors"`` or
        ``"sensors+confidence"``.
    stop_loss : {"auto", "expected", "zero_one", "soft"}, default="auto"
        The loss of stopping at a state that the policies learn from, per
        training row (see ``stop_losses()``).
        ``"zero_one"`` (the paper): the out-of-fold decision's 0/1 (or
        ``loss_matrix``) loss. ``"expected"``: the loss the calibrated
        out-of-fold probabilities expect of that decision (0/1: one minus the
        top probability), a far less noisy estimate of the same risk.
        ``"soft"``: the expected loss of a class drawn from the probabilities
        (0/1: one minus the probability of the true class); it is not the
        risk of the decision and misses the Bayes optimum of
        ``tests/core/test_optimality.py`` by 0.023. ``"auto"``: ``"zero_one"``
        with the paper's sensor inputs (``"sensors"``, ``"sensors+confidence"``:
        those configurations stay reproducible), else ``"expected"``.
    bank_serve : {"folds", "refit"}, default="folds"
        What the cross-fitted boosting banks (``"hgb"``, ``"masked"`` without
        ``classifier``) predict with: the average of their ``cv`` fold models,
        or one model per state refit on all rows after the folds, which
        predicts ``cv`` times faster (for high-throughput serving) and is a
        little less accurate (no averaging; see the user guide's "Classifier
        banks").
    dag : {"auto", "full", "sparse", "chain", "routed"}, default="auto"
        The states. ``"full"``: every sensor subset (at most 12 sensors), or
        with ``n_subsets`` the unions of Alg. 2's subsets. ``"sparse"``: a DAG
        of one-sensor additions grown from the training rows (states that
        enough rows reach acquiring one sensor at a time, each state's
        children the sensors that help its rows most, and sensors whose value
        says which to read next; see ``budgetdag_core.strategies``), with
        an any-subset masked boosting bank; needs ``n_subsets=None`` and the
        default ``classifier`` and ``bank_kind``. ``"chain"``: the same bank,
        the states one greedy order's prefixes (the confidence cascade's
        order; every row may stop after each sensor). ``"routed"``: the
        chain, plus a routing sensor (the one whose value best tells which
        sensor helps next) followed by one greedy order per group of its
        values: each row buys it or not and follows its group's order, as
        its policies learn. ``"auto"``: beyond 12 sensors when ``n_subsets``
        is None, the simpler of ``"chain"`` and ``"routed"`` (built only
        where a sensor's value tells which sensor helps next; not
        ``"sparse"``, whose growth cost most of a fit for no measured gain,
        ``strategies.AUTO_STRATEGIES``) whose loss is within one standard
        error of the best on validation rows carved from the training data
        (a close call judged again on every training row, each held out in
        turn; ``strategy_``, :attr:`strategy_choice_`; see
        ``budgetdag_core.strategies``), else
        ``"full"``; with at most 12 sensors, the chain and routed DAGs where
        the full DAG's estimated fit (six policy fits of 2^n learners) is
        long (``budgetdag_core.estimator._dag_choice``: 10 sensors on a few
        dozen rows).
        Every strategy is bounded whatever the costs (zero, equal
        or tiny: sensors are ranked by gain per unit of cost, a cost below
        ``MIN_RANKING_COST`` (1e-12) times the largest counting as that
        share, all zero as equal): the chain holds ``n_sensors + 1`` states;
        the grown DAG at most ``max(8, max_states // n_sensors)`` x 5 states
        of one size and ``max_states`` + 4 in all (the last state grown adds
        its children, at most 5), never past ``MAX_SPARSE_STATES``
        (``GrowthSettings.most_states``). A fit takes at most
        ``MAX_SENSORS`` (256) sensors, refused before any work: these DAGs'
        work grows with the square of the sensors.
    max_states : int, default=1000
        Most states a sparse DAG grows, 2 to ``MAX_SPARSE_STATES`` (20 000):
        each state gets a policy and its bank's probabilities (the grown
        DAG's last state grown may add up to 4 more, see ``dag``).
    verbose : int, default=0
        1 or more: ``fit`` draws one progress bar (``tqdm``, on stderr)
        through its stages, which reaches its end with the fit; 0: silent.
        A ``progress=`` callback given to ``fit`` replaces the bar
        (:doc:`/user_guide/progress`).

    Attributes
    ----------
    spec_ : SensorSpec
    cost_scale_ : float
        The cost scale the policies were learned at (``cost_scale``, or the
        one ``"auto"`` chose).
    cost_scale_search_ : dict or None
        With ``cost_scale="auto"``: ``rule``, ``reference_state`` and
        ``reference_error`` (the richest state's), ``best_error`` (the bar:
        the least error seen), ``no_sensor_error``, ``margin``, ``met``
        (whether a scale came within the margin of the reference),
        ``tried`` (each scale's out-of-fold ``error`` and ``avg_cost``) and
        ``reason`` (a sentence); else None.
    cv_ : int
        The folds used (``cv``, or fewer for small classes).
    classes_ : ndarray
    dag_ : networkx.DiGraph
        States with attribute ``sensors`` (tuple of names).
    bank_ : ClassifierBank or MaskedBank
        A classifier per state, or (many sensors) the any-subset masked
        models bound to the kept strategy's DAG.
    strategy_ : str
        How the states were built: ``"full"`` (every subset), ``"subsets"``
        (unions of Alg. 2's subsets), ``"grown"``, ``"chain"`` or
        ``"routed"`` (many sensors; with ``dag="auto"`` the one kept on
        validation rows, see :attr:`strategy_choice_`).
    strategy_banks_ : StrategyBanks or None
        Many sensors: every strategy's DAG the fit chose among, each bound to
        a copy of the bank (``bank_`` is one of them; one not kept waits
        ungrown until asked for, ``strategies.PendingBank``; pass them to
        ``fit(X, y, bank=...)`` or ``tradeoff_curve`` to choose again at
        other cost scales; a saved model leaves them out); else None.
    policies_ : list of NodePolicy
    feature_names_in_ : ndarray of str
        The spec's columns; set only after a fit on a table whose column
        names are all strings (scikit-learn's convention; not after a fit on
        an array).
    subset_selection_ : SubsetSelection or None
        The greedy subsets (with ``n_subsets``), their reward and history.
    value_states_ : ndarray of bool or None
        With ``policy_features="auto"``: per state, whether its policy also
        sees the acquired sensor values; else None.
    route_states_ : ndarray of bool or None
        With ``policy_features="auto"`` on a many-sensor DAG: per state,
        whether it is a routed DAG's routing-sensor state (not a value
        state), whose policy sees the sensor's values beside the
        probabilities (all False without a route); else None.

    Notes
    -----
    The defaults (filter tree, ``"proba"`` inputs, ``"expected"`` losses) were
    chosen on validation splits of the training data by
    ``benchmarks/bench_policy_configs.py`` (see the user guide, "Policies"): the policy
    sees what a confidence cascade sees, and more (which classes are still in
    play decides which sensor helps), and learns from smooth losses. The paper's
    configuration is ``policy_features="sensors"`` (with ``stop_loss="auto"``
    or ``"zero_one"``).

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
        **COMMON_CONSTRAINTS,
        # The banks read class probabilities: a regressor (Ridge) or a classifier
        # without predict_proba (SVC) is refused here, naming the parameter.
        "classifier": [HasMethods(["fit", "predict_proba"]), None],
        "bank_kind": [StrOptions({"auto", "masked_auto", *BANK_KINDS})],
        "loss_matrix": ["array-like", None],
        "policy_features": [StrOptions(set(POLICY_FEATURES))],
        "stop_loss": [StrOptions({"auto", *STOP_LOSSES})],
        "subset_reward": [StrOptions({"correct", "soft"})],
        "bank_serve": [StrOptions(set(SERVE_MODES))],
        "dag": [StrOptions({"auto", "full", "sparse", "chain", "routed"})],
        "max_states": [Interval(Integral, 2, MAX_SPARSE_STATES, closed="both")],
    }

    def __init__(
        self,
        sensors: SensorSpec | dict | str | None = None,
        *,
        cost_scale: float | str = "auto",
        classifier: Any = None,
        bank_kind: str = "auto",
        policy_learner: str | Any = "filter_tree",
        policy_degree: int | None = None,
        cv: int = 5,
        random_state: int | None = None,
        n_jobs: int | None = None,
        max_policy_features: int = 1000,
        loss_matrix: Any = None,
        n_subsets: int | None = None,
        subset_budget: float | None = None,
        include_all: bool = False,
        subset_scorer: Any = "ridge",
        policy_features: str = "auto",
        subset_reward: str = "soft",
        stop_loss: str = "auto",
        bank_serve: str = "folds",
        dag: str = "auto",
        max_states: int = 1000,
        verbose: int = 0,
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
        self.stop_loss = stop_loss
        self.bank_serve = bank_serve
        self.dag = dag
        self.max_states = max_states
        self.verbose = verbose

    # ------------------------------------------------------------------ fitting
    def _check_loss_matrix(self, n_classes: int) -> np.ndarray | None:
        return check_loss_matrix(self.loss_matrix, n_classes)

    @property
    def policy_features_(self) -> str:
        """The kind of policy inputs (``policy_features``)."""
        return self.policy_features

    @property
    def uses_confidence_(self) -> bool:
        """Whether the node policies also see the state classifier's output."""
        return uses_model_inputs(self.policy_features_)

    def _input_kind(self) -> str:
        return self.policy_features

    def _value_states(self, bank: Any) -> np.ndarray | None:
        """With ``policy_features="auto"``: the states whose classifier says
        much the same for every row (:func:`constant_states` of the bank's
        out-of-fold probabilities), where the policy also sees the values."""
        if self.policy_features_ != "auto":
            return None
        oof = getattr(bank, "oof_proba_", None)
        if oof is None:
            raise ValueError(
                "policy_features='auto' needs the bank's out-of-fold "
                "probabilities, which this (slim, saved) bank lacks: refit it."
            )
        return constant_states(oof)

    def _selection_task(self) -> dict[str, str]:
        return {
            "task": "classification",
            "loss": "squared",
            "reward": self.subset_reward,
        }

    def _route(
        self,
        Xv: np.ndarray,
        conf: np.ndarray | None = None,
        state_proba: np.ndarray | None = None,
    ) -> Routing:
        """Route all rows, with the state classifiers' outputs given or asked.

        ``conf`` (n, n_states, d) are precomputed ``model_inputs``;
        ``state_proba`` (n, n_states, n_classes) are the classifiers'
        probabilities (e.g. the bank's out-of-fold ones), from which the inputs
        of the rows at a state are computed when the route gets there. Either
        is used instead of asking the bank.

        Without either, the bank's probabilities computed for the policies'
        inputs are kept as ``stop_proba`` where a row stopped at the state they
        were computed for, so prediction does not ask the bank twice.
        """
        inputs = self.inputs_
        if not inputs.reads_model:
            return super()._route(Xv)
        if conf is None and state_proba is None:
            return self._route_keeping_proba(Xv)
        return super()._route(
            Xv, inputs.given(Xv, state_proba=state_proba, model_part=conf)
        )

    def _route_keeping_proba(self, Xv: np.ndarray) -> Routing:
        """Large batches are routed in row blocks, one thread each (up to
        ``n_jobs``; every row's route and probabilities are its own, so the
        result does not depend on the blocks)."""
        blocks = row_blocks(len(Xv), self.n_jobs)
        if len(blocks) == 1:
            return self._route_block(Xv)
        with single_threaded():
            parts = map_in_threads(
                lambda rows: self._route_block(Xv[rows]), blocks, len(blocks)
            )
        return Routing(
            np.concatenate([p.stop_state for p in parts]),
            np.concatenate([p.path for p in parts]),
            np.concatenate([p.stop_proba for p in parts]),
        )

    def _route_block(self, Xv: np.ndarray) -> Routing:
        proba = np.full((len(Xv), len(self.classes_)), np.nan)
        last = np.full(len(Xv), -1)  # the state of each row's latest probabilities

        def inputs(k: int, rows: np.ndarray) -> Any:
            features, state_proba = self._inputs_and_proba(Xv, k, rows)
            if state_proba is not None:
                proba[rows], last[rows] = state_proba, k
            return features

        routing = super()._route(Xv, inputs)
        proba[last != routing.stop_state] = np.nan
        routing.stop_proba = proba
        return routing

    def _prepare_target(self, y: Any, n_rows: int) -> tuple[np.ndarray, dict]:
        y = check_labels(y, n_rows, self.cv)
        classes, y_enc = np.unique(y, return_inverse=True)
        self._check_loss_matrix(len(classes))
        return y_enc, {"classes_": classes}

    def _record_target(self, y: Any, n_rows: int) -> np.ndarray:
        labels = check_labels(y, n_rows, None)
        unknown = ~np.isin(labels, self.classes_)
        if unknown.any():
            row = int(np.flatnonzero(unknown)[0])
            label = labels[row].item() if hasattr(labels[row], "item") else labels[row]
            raise ValueError(
                f"y has label {short_repr(label)} (row {row}) that the model was not "
                "trained on: pass the training labels."
            )
        return np.searchsorted(self.classes_, labels)

    def _bank_template(self) -> Any:
        """The classifier the bank fits (per state, or the one masked model)."""
        return self._new_bank().template()

    def _bank_nan_refused(self, spec: SensorSpec | None) -> str | None:
        template = self.classifier
        if template is not None and not get_tags(template).input_tags.allow_nan:
            return f"classifier={type(template).__name__} does not accept NaN"
        if self.bank_kind == "per_subset" and template is None:
            return (
                'bank_kind="per_subset" fits a logistic regression per state, '
                "which needs every value"
            )
        return None

    def _new_bank(self, dag: SensorDAG | None = None) -> BaseBank:
        if self.bank_kind == "masked_auto":
            raise ValueError(
                "bank_kind='masked_auto' chooses a sparse DAG's bank: use it "
                "with dag='auto' beyond 12 sensors, 'sparse' or 'chain'."
            )
        n_states = None if dag is None else dag.n_states
        return make_bank(
            resolve_bank_kind(self.bank_kind, self.classifier, n_states),
            self.classifier,
            cv=self.cv,
            random_state=self._seed,
            n_jobs=self.n_jobs,
            serve=self.bank_serve,
        )

    def _new_sparse_bank(self) -> SparseMaskedBank:
        # "auto" and "masked_auto" here: the masked kind chosen on validation.
        kind = {"auto": "auto", "masked_auto": "auto"}.get(
            self.bank_kind, self.bank_kind
        )
        if self.classifier is not None or kind not in SPARSE_BANK_KINDS:
            raise ValueError(
                "A sparse DAG needs an any-subset masked bank of its own model: "
                "leave classifier=None and bank_kind one of "
                f"{['auto', 'masked_auto', *SPARSE_BANK_KINDS[1:]]}."
            )
        return make_sparse_bank(
            kind,
            cv=self.cv,
            random_state=self._seed,
            n_jobs=self.n_jobs,
            serve=self.bank_serve,
            growth=self._growth_settings(),
        )

    def _fit_sparse_models(
        self,
        bank: SparseMaskedBank,
        Xv: np.ndarray,
        y_fit: np.ndarray,
        spec: SensorSpec,
        progress: Progress | None,
        sample_weight: np.ndarray | None = None,
    ) -> SparseMaskedBank:
        n_classes = int(y_fit.max()) + 1
        return bank.fit_models(
            Xv, y_fit, spec.column_indices(), n_classes, progress,
            sample_weight=sample_weight,
        )  # fmt: skip

    def _sparse_stop_loss(
        self, bank: Any, y_fit: np.ndarray, kind: str | None = None
    ) -> Any:
        lm = self._check_loss_matrix(bank.n_classes_)
        kind = self.stop_loss_ if kind is None else kind

        def stop_loss(rows: np.ndarray, proba: np.ndarray) -> np.ndarray:
            return stop_losses(proba, y_fit[rows], lm, kind)

        if lm is None:  # row by row (a loss matrix's products are not)
            # A grown DAG's walks keep each row's loss at a state under this
            # key (strategies.SparseGrowth.stop_at): it names the function.
            labels = np.ascontiguousarray(y_fit, dtype=np.int64).tobytes()
            digest = hashlib.blake2b(labels, digest_size=20).digest()
            stop_loss.cache_key = ("classifier", kind, digest)  # type: ignore[attr-defined]
        return stop_loss

    def _fit_bank(
        self,
        bank: ClassifierBank,
        Xv: np.ndarray,
        y_fit: np.ndarray,
        dag: SensorDAG,
        spec: SensorSpec,
        progress: Progress | None,
        sample_weight: np.ndarray | None = None,
    ) -> ClassifierBank:
        n_classes = int(y_fit.max()) + 1
        return bank.fit(
            Xv,
            y_fit,
            dag,
            spec.column_indices(),
            n_classes,
            progress,
            sample_weight=sample_weight,
        )

    @property
    def stop_loss_(self) -> str:
        """The stop loss the policies learn from (``"auto"`` resolved)."""
        if self.stop_loss != "auto":
            return self.stop_loss
        paper_inputs = self.policy_features_ in ("sensors", "sensors+confidence")
        return "zero_one" if paper_inputs else "expected"

    def _stop_losses(self, bank: ClassifierBank, y_fit: np.ndarray) -> np.ndarray:
        lm = self._check_loss_matrix(bank.n_classes_)
        kind = self.stop_loss_
        if kind == "zero_one":
            return bank.oof_losses(y_fit, lm)
        if not hasattr(bank, "oof_proba_"):
            raise ValueError(
                f"stop_loss={short_repr(kind)} needs the bank's out-of-fold "
                "probabilities, which this (slim, saved) bank lacks: refit it."
            )
        proba = bank.oof_proba_
        n, n_states, n_classes = proba.shape
        out = np.empty((n, n_states))
        if lm is not None:  # decisions by matrix products: one state at a time
            for k in range(n_states):
                out[:, k] = stop_losses(proba[:, k], y_fit, lm, kind)
            return out
        # Groups of states (bounded float64 copies) cut the per-call overhead
        # on DAGs of hundreds of states; each value is still its own row and
        # state's arithmetic.
        size = max(1, STOP_LOSS_VALUES // (n * n_classes))
        for start in range(0, n_states, size):
            states = slice(start, start + size)
            out[:, states] = stop_losses(proba[:, states], y_fit, None, kind)
        return out

    def fit(
        self,
        X: pd.DataFrame,
        y: Any,
        *,
        sample_costs: pd.DataFrame | np.ndarray | None = None,
        bank: BaseBank | None = None,
        progress: Progress | None = None,
        sample_weight: Any = None,
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
            instead of refitted, so only the policies are learned. Beyond 12
            sensors also a ``StrategyBanks`` (``fit_bank``'s, or
            ``other_model.strategy_banks_``): the strategy is chosen among
            its DAGs at this cost scale.
        progress : callable(stage, done, total), optional
            Called as the subsets (``"subsets"``, with ``n_subsets`` only), the
            bank (``"bank"``) and the policies (``"policies"``) progress.
        sample_weight : array-like of shape (n_samples,), optional
            Row weights, finite and >= 0, not all 0 (a Series goes by X's
            index, as ``y`` does): a row of weight w counts as w copies of it,
            in every model of the bank (out-of-fold models, calibration,
            prior) and in Graph-Reduce's node problems (its action costs count
            w times), and in the ``cost_scale="auto"`` search. Rows of weight
            0 are left out of every fit. The folds are those of the rows. Also
            in ``n_subsets``'s subset selection (weighted ridge scores and
            rewards) and in the many-sensor DAGs (the any-subset bank, the
            strategies' gains, the validation choice among them). Refused
            (ValueError naming it) only by a bank model or ``subset_scorer``
            whose ``fit`` takes no ``sample_weight``.

        Returns
        -------
        BudgetDAGClassifier
            This estimator, fitted.

        Examples
        --------
        >>> from budgetdag_core import BudgetDAGClassifier, toy_dataset
        >>> demo = toy_dataset(300, 20)
        >>> model = BudgetDAGClassifier(demo.spec, cost_scale=0.05, random_state=0)
        >>> model.fit(demo.X_train, demo.y_train).sensor_dag_.n_states  # 2^3
        8
        """
        return self._fit_warned(
            X, y, sample_costs=sample_costs, bank=bank, progress=progress,
            sample_weight=sample_weight,
        )  # fmt: skip

    # --------------------------------------------------------------- inference
    def _proba_at_stops(
        self, Xv: np.ndarray, stops: np.ndarray, known: np.ndarray | None = None
    ) -> np.ndarray:
        """Probabilities at each row's stop state; rows of ``known`` that are not
        NaN (a routing's ``stop_proba``) are taken as they are."""
        proba = np.zeros((len(Xv), len(self.classes_)))
        todo = np.ones(len(Xv), dtype=bool)
        if known is not None:
            todo = np.isnan(known).any(axis=1)
            proba[~todo] = known[~todo]
        for k in np.unique(stops[todo]):
            rows = np.flatnonzero(todo & (stops == k))
            proba[rows] = self.bank_.predict_proba(Xv[rows], int(k))
        return proba

    def _routed_proba(self, Xv: np.ndarray, routing: Routing) -> np.ndarray:
        return self._proba_at_stops(Xv, routing.stop_state, routing.stop_proba)

    def labels_from_proba(self, proba: np.ndarray) -> np.ndarray:
        """Labels for rows of class probabilities: the most probable class, or with
        ``loss_matrix`` the class of least expected loss.

        Parameters
        ----------
        proba : ndarray of shape (n_rows, n_classes)
            Class probabilities, columns in the order of ``classes_``.

        Returns
        -------
        ndarray of shape (n_rows,)
            Labels (values of ``classes_``).

        Examples
        --------
        >>> from budgetdag_core import BudgetDAGClassifier, toy_dataset
        >>> demo = toy_dataset(300, 20)
        >>> model = BudgetDAGClassifier(
        ...     demo.spec, cost_scale=0.05, cv=2, random_state=0
        ... ).fit(demo.X_train, demo.y_train)
        >>> model.labels_from_proba([[0.9, 0.1], [0.2, 0.8]]).tolist()
        [0, 1]
        """
        return self.classes_[decide(proba, self._check_loss_matrix(len(self.classes_)))]

    def predict_at(self, Xv: np.ndarray, stops: np.ndarray) -> np.ndarray:
        return self.labels_from_proba(self._proba_at_stops(Xv, stops))

    def _trace_columns(self, Xv: np.ndarray, routing: Routing) -> dict[str, np.ndarray]:
        proba = self._routed_proba(Xv, routing)
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

    def _metrics(
        self, pred: np.ndarray, y: np.ndarray, weight: np.ndarray | None = None
    ) -> dict[str, float]:
        return {"error": float(np.average(pred != y, weights=weight))}

    def _flow_annotations(self, pred: np.ndarray, y: np.ndarray) -> dict[str, Any]:
        return {"errors": pred != y}

    def predict_proba(self, X: pd.DataFrame) -> np.ndarray:
        """Class probabilities from the classifier of each example's stop state.

        Parameters
        ----------
        X : DataFrame
            Examples with the spec's columns.

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            Columns in the order of ``classes_``; rows sum to 1.

        Examples
        --------
        >>> from budgetdag_core import BudgetDAGClassifier, toy_dataset
        >>> demo = toy_dataset(300, 20)
        >>> model = BudgetDAGClassifier(
        ...     demo.spec, cost_scale=0.05, cv=2, random_state=0
        ... ).fit(demo.X_train, demo.y_train)
        >>> model.predict_proba(demo.X_test).shape
        (20, 2)
        """
        Xv = self._features(X)
        return self._routed_proba(Xv, self._route(Xv))

    def predict(self, X: pd.DataFrame) -> np.ndarray:
        """Labels: the most probable class at each example's stop state, or with
        ``loss_matrix`` the class of least expected loss.

        Parameters
        ----------
        X : DataFrame
            Examples with the spec's columns.

        Returns
        -------
        ndarray of shape (n_samples,)
            Labels (values of ``classes_``).

        Examples
        --------
        >>> from budgetdag_core import BudgetDAGClassifier, toy_dataset
        >>> demo = toy_dataset(300, 20)
        >>> model = BudgetDAGClassifier(
        ...     demo.spec, cost_scale=0.05, cv=2, random_state=0
        ... ).fit(demo.X_train, demo.y_train)
        >>> model.predict(demo.X_test)[:5].tolist()
        [1, 1, 1, 0, 1]
        """
        return self.labels_from_proba(self.predict_proba(X))
