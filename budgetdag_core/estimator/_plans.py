"""How a fit builds its states, one plan per kind of DAG, behind one protocol.

Every fit is the same short sequence (``BudgetDAGBase._fit``)::

    data    = checked training data                 (TrainingData)
    plan    = estimator.fit_plan(spec, n_rows)      (EveryRowPlan or GrownPlan)
    bank    = plan.fit_bank(data) or a given bank    (plan.check_bank)
    problem = plan.problem(bank, data)              (states, stop losses, inputs)
    result  = graph_reduce(problem...)              (one Graph-Reduce)

Two plans answer the same calls:

- :class:`EveryRowPlan`: the paper's DAG, every sensor subset or the unions of
  Alg. 2's subsets, where every training row reaches every state; the bank
  is fitted per state of that DAG, so the DAG comes first.
- :class:`GrownPlan`: many sensors; the any-subset bank comes first, then
  each strategy of ``budgetdag_core.strategies`` grows its DAG on it and one
  is kept on validation rows.

The estimator supplies the task (classifier or regressor) through the hooks
of :class:`FitHooks`, which it inherits.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from .._bounded_io import short_repr
from .._progress import Progress
from ..dag import SensorDAG, build_dag
from ..sensors import SensorSpec
from ..strategies import (
    AUTO_STRATEGIES,
    EVERY_ROW,
    REGISTRY,
    SIMPLEST_FIRST,
    EveryRowInputs,
    GrowthInputs,
    GrowthSettings,
    LossMemo,
    SparseRollout,
    SparseSensorDAG,
    StrategyBanks,
    SubsetSelection,
    choose_strategy,
    cross_entropy,
    expected_loss,
    grow_strategy,
    most_states,
    state_spreads,
    strategy_key,
    strategy_name,
)
from ..validation import MAX_FULL_DAG_SENSORS, int_seed
from ._dag_choice import check_n_rows, full_dag_too_slow
from ._inputs import CONSTANT_STATE_SPREAD, GrowthStateInputs, PolicyInputs
from ._policy import make_learner

#: Rows scored per candidate subset by the estimators' subset selection.
SUBSET_MAX_ROWS = 20_000


@dataclass(frozen=True)
class TrainingData:
    """A fit's checked inputs: the spec, the spec's columns, the target as
    fitted, the fitted attributes the target sets (``classes_``), the
    example-dependent costs (None: the spec's) and the row weights (None:
    each row once)."""

    spec: SensorSpec
    Xv: np.ndarray
    y_fit: np.ndarray
    target_attrs: dict
    costs: np.ndarray | None = None
    sample_weight: np.ndarray | None = None

    @property
    def n_rows(self) -> int:
        return len(self.Xv)

    @property
    def n_classes(self) -> int:
        """Classes of a classifier's target; 0 for a regressor's."""
        return len(self.target_attrs.get("classes_", ()))

    @property
    def acquisition_costs(self) -> np.ndarray:
        """(n_sensors,) or (n_rows, n_sensors): what Graph-Reduce charges."""
        return self.spec.cost_vector if self.costs is None else self.costs

    @property
    def mean_costs(self) -> np.ndarray:
        """(n_sensors,): what the strategies and Alg. 2 rank sensors by."""
        return self.spec.cost_vector if self.costs is None else self.costs.mean(axis=0)


@dataclass
class PolicyProblem:
    """What Graph-Reduce learns the policies from, and what the fitted model
    keeps of it.

    ``walk`` is what :func:`~budgetdag_core.graph_reduce.graph_reduce` walks
    (the DAG itself where every row reaches every state, else the growth
    that knows which rows reached each state); ``state_inputs`` and
    ``stop_loss`` are in the form that walk asks for.
    """

    strategy: str
    dag: Any
    walk: Any
    bank: Any
    selection: SubsetSelection | None
    state_columns: list[np.ndarray]
    value_states: np.ndarray | None
    route_states: np.ndarray | None
    inputs: PolicyInputs
    state_inputs: Callable[..., np.ndarray]
    stop_loss: Any
    choice: dict | None = None
    #: The DAGs a many-sensor fit chose among (``StrategyBanks``), else None.
    candidates: Any = None


class FitHooks:
    """What a plan asks of the estimator it fits: the task's hooks (the
    classifier and the regressor each implement them) and the settings every
    plan reads alike."""

    @property
    def _seed(self) -> int | None:
        """``random_state`` as the one int seed every part of a fit uses
        (see :func:`~budgetdag_core.validation.int_seed`)."""
        return int_seed(self.random_state)

    def _growth_settings(self) -> dict:
        """The ``strategies.GrowthSettings`` of this estimator (part of its
        any-subset bank's fingerprint)."""
        return {"max_states": int(getattr(self, "max_states", 1000))}

    def _make_learner(self, n_rows: int | None = None) -> Any:
        """The cost-sensitive learner of every node (cloned per node)."""
        return make_learner(
            self.policy_learner, self.policy_degree_, self.max_policy_features, n_rows
        )

    def _new_bank(self, dag: SensorDAG | None = None) -> Any:
        """The unfitted bank of a DAG every row reaches (``dag`` lets the
        bank kind depend on its size)."""
        raise NotImplementedError

    def _fit_bank(
        self,
        bank: Any,
        Xv: np.ndarray,
        y_fit: np.ndarray,
        dag: SensorDAG,
        spec: SensorSpec,
        progress: Progress | None,
        sample_weight: np.ndarray | None = None,
    ) -> Any:
        """Fit that bank at every state of ``dag`` (rows weighted by
        ``sample_weight``)."""
        raise NotImplementedError

    def _stop_losses(self, bank: Any, y_fit: np.ndarray) -> np.ndarray:
        """(n_samples, n_states) loss of stopping each training row at each
        state of that bank's DAG."""
        raise NotImplementedError

    def _new_sparse_bank(self) -> Any:
        """The unfitted any-subset bank of a many-sensor fit."""
        raise NotImplementedError

    def _fit_sparse_models(
        self,
        bank: Any,
        Xv: np.ndarray,
        y_fit: np.ndarray,
        spec: SensorSpec,
        progress: Progress | None,
        sample_weight: np.ndarray | None = None,
    ) -> Any:
        """Fit the any-subset bank's fold models (before any DAG is built;
        rows weighted by ``sample_weight``)."""
        raise NotImplementedError

    def _sparse_stop_loss(
        self, bank: Any, y_fit: np.ndarray, kind: str | None = None
    ) -> Any:
        """``stop_loss(rows, proba)`` of Graph-Reduce on a grown DAG (``kind``:
        another stop loss than the policies', e.g. ``"zero_one"`` to judge
        them on validation rows)."""
        raise NotImplementedError

    def _growth_row_loss(self, y_fit: np.ndarray) -> Any:
        """The ``row_loss(rows, values)`` the strategies rank sensors by
        (see ``strategies.RowLoss``); None: their defaults (a classifier's
        expected loss and cross-entropy)."""
        return None

    def _growth_loss_key(self) -> Any:
        """What names :meth:`_growth_row_loss`: the key of its kept losses
        (``strategies.LossMemo``)."""
        return "cross_entropy"

    def _selection_task(self) -> dict[str, str]:
        """``task``, ``loss`` and ``reward`` of the greedy subset selection."""
        raise NotImplementedError

    def _bank_nan_refused(self, spec: SensorSpec | None) -> str | None:
        """Why the bank of a DAG every row reaches refuses NaN, or None."""
        return None

    def _value_states(self, bank: Any) -> np.ndarray | None:
        """Per state, whether its policy also sees the acquired values (the
        ``"auto"`` inputs; computed from the bank before Graph-Reduce)."""
        return None

    def _input_kind(self) -> str:
        """What the node policies see (a ``POLICY_FEATURES`` kind): the
        regressor's see the values of their sensors."""
        return "sensors"

    def _oof_route(self, Xv: np.ndarray) -> Any:
        """The training rows' routes with the bank's out-of-fold outputs
        (a regressor's policies read sensor values only)."""
        if hasattr(self.bank_, "oof_proba_"):
            return self._route(Xv, state_proba=self.bank_.oof_proba_)
        return self._route(Xv)

    def _inputs(
        self,
        state_columns: list[np.ndarray],
        n_classes: int,
        value_states: np.ndarray | None,
        value_kind: str,
        route_states: np.ndarray | None = None,
    ) -> PolicyInputs:
        """The policies' inputs (``value_kind``: what a value state adds)."""
        return PolicyInputs(
            self._input_kind(),
            state_columns,
            n_classes,
            value_states,
            value_kind,
            route_states,
        )


def plan_for(est: Any, spec: SensorSpec | None, n_rows: int | None = None) -> FitPlan:
    """The plan a fit of ``est`` with ``spec`` on ``n_rows`` rows follows:
    :class:`GrownPlan` for ``dag="sparse"``, ``"chain"`` or ``"routed"``, or
    ``"auto"`` without ``n_subsets`` beyond 12 sensors or where the full
    DAG's estimated bank fit is long (``estimator._dag_choice``); else
    :class:`EveryRowPlan`. ``spec`` None (not yet known, scikit-learn's
    tags): the plan of a forced ``dag``, else :class:`EveryRowPlan`."""
    check_n_rows(n_rows)
    kind = getattr(est, "dag", "full")
    if kind in GrownPlan.FORCED:
        if est.n_subsets is not None:
            raise ValueError(
                f"dag={short_repr(kind)} builds its own states: leave n_subsets=None."
            )
        return GrownPlan(est, spec, n_rows)
    grows = (
        spec is not None
        and kind == "auto"
        and est.n_subsets is None
        and (
            spec.n_sensors > MAX_FULL_DAG_SENSORS
            or full_dag_too_slow(est, spec.n_sensors, n_rows)
        )
    )
    return (GrownPlan if grows else EveryRowPlan)(est, spec, n_rows)


def fitted_plan(model: Any) -> FitPlan:
    """The plan a fitted model followed (read from its DAG)."""
    grown = isinstance(model.sensor_dag_, SparseSensorDAG)
    return (GrownPlan if grown else EveryRowPlan)(model, model.spec_, None)


class FitPlan:
    """The protocol of a plan: its bank, its states, its policy problem."""

    #: Whether the states are grown on an any-subset bank (many sensors).
    grows_states: ClassVar[bool]
    #: What a value state's policy sees besides the sensors' values.
    value_kind: ClassVar[str]

    def __init__(self, est: Any, spec: SensorSpec, n_rows: int | None) -> None:
        self.est, self.spec, self.n_rows = est, spec, n_rows

    def strategies(self) -> dict[str, int]:
        """The many-sensor strategies this plan grows, each with its most
        states (empty: one DAG every row reaches)."""
        return {}

    def nan_refused(self) -> str | None:
        """Why this plan's bank refuses NaN, or None."""
        raise NotImplementedError

    def weights_refused(self) -> str | None:
        """Why this plan cannot weigh rows (``sample_weight``), or None."""
        raise NotImplementedError

    def new_bank(self, dag: SensorDAG | None = None) -> Any:
        """The unfitted bank a fit would fit (for ``dag``, where it matters)."""
        raise NotImplementedError

    def fit_bank(self, data: TrainingData, progress: Progress | None) -> Any:
        """The bank a fit on ``data`` fits (costs-free: reusable across scales)."""
        raise NotImplementedError

    def bank_dag(
        self, bank: Any, data: TrainingData, progress: Progress | None = None
    ) -> tuple[Any, SubsetSelection | None]:
        """The DAG a fit on ``bank`` builds its policies on, and its Alg. 2
        subsets (None where none were selected)."""
        raise NotImplementedError

    def check_bank(
        self, bank: Any, data: TrainingData, dag: SensorDAG | None = None
    ) -> None:
        """Refuse a given bank that was not fitted on this data with these
        settings (``dag``: the DAG it serves, where known)."""
        raise NotImplementedError

    def problem(
        self,
        data: TrainingData,
        bank: Any,
        progress: Progress | None,
        dag: SensorDAG | None = None,
        selection: SubsetSelection | None = None,
        incumbent: str | None = None,
    ) -> PolicyProblem:
        """The policy problem on a fitted ``bank``: its states (``dag`` and
        ``selection``: a fitted model's own, where a refit reuses them;
        ``incumbent``: its candidate's key, which a refit's close call among
        many-sensor candidates keeps),
        stop losses and policy inputs."""
        raise NotImplementedError

    def check_replay(self, model: Any, Xv: np.ndarray) -> None:
        """Refuse a replay that cannot be: a bank without its out-of-fold
        outputs (slim, saved), or rows that are not the training rows."""
        raise NotImplementedError

    def reusable_bank(self, model: Any) -> Any | None:
        """What a fitted ``model`` gives a fit at another cost scale
        (``fit(X, y, bank=...)``, as ``refit_policies`` does), or None where
        its bank cannot teach new policies (saved slim, without its
        out-of-fold outputs)."""
        raise NotImplementedError

    def replay_problem(self, model: Any, Xv: np.ndarray, y_fit: np.ndarray) -> Any:
        """A fitted model's ``(state_inputs, stop_loss, walk)`` on its
        training rows, for Graph-Reduce's replay (teaching)."""
        raise NotImplementedError

    def oof_outputs(self, model: Any, k: Any, rows: np.ndarray) -> np.ndarray:
        """The bank's out-of-fold outputs of training ``rows`` at state ``k``."""
        raise NotImplementedError

    def oof_policy(
        self,
        model: Any,
        Xv: np.ndarray,
        judged: Any,
        costs: np.ndarray,
        weight: np.ndarray | None = None,
    ) -> tuple[float, float]:
        """Mean ``judged(rows, outputs)`` loss and mean cost of a fitted
        model's policies on its training rows, out of fold (``weight``: the
        rows' weights)."""
        raise NotImplementedError

    def reused_by_refits(self, model: Any) -> dict[str, Any]:
        """The ``bank``, ``dag`` and ``selection`` a refit of a fitted model
        at another cost scale reuses (its states, no new choice)."""
        raise NotImplementedError

    def restore_choice(self, model: Any, first: Any) -> None:
        """Give a refit of ``first`` the strategy choice ``first`` made."""

    def refit_incumbent(self, model: Any) -> str | None:
        """The candidate key ``refit_policies`` of a fitted model keeps on a
        close call among many-sensor candidates (None: no choice to make)."""
        return None


def _stale_bank() -> ValueError:
    return ValueError(
        "The given bank was fitted on other data or settings (rows, columns, "
        "cv, random_state, bank kind, model or sensor subsets differ), or is a "
        "saved bank without its out-of-fold outputs: refit it."
    )


class EveryRowPlan(FitPlan):
    """The full DAG, or with ``n_subsets`` the DAG over the unions of Alg.
    2's subsets (selected first): every training row reaches every state."""

    grows_states = False
    value_kind = "sensors+proba"

    def nan_refused(self) -> str | None:
        if self.est.n_subsets is not None:
            return (
                "n_subsets's subset selection (Alg. 2) scores subsets with a "
                "ridge regression, which needs every value"
            )
        return self.est._bank_nan_refused(self.spec)

    def weights_refused(self) -> str | None:
        return None  # the banks, Alg. 2's ridge scores and Graph-Reduce weigh rows

    def new_bank(self, dag: SensorDAG | None = None) -> Any:
        return self.est._new_bank(dag)

    def build_dag(
        self, data: TrainingData, progress: Progress | None = None
    ) -> tuple[SensorDAG, SubsetSelection | None]:
        """The full DAG, or with ``n_subsets`` the DAG over subsets selected
        here (Alg. 2): the strategy ``"full"`` or ``"subsets"`` of
        ``strategies.EVERY_ROW``."""
        est = self.est
        if est.n_subsets is None:
            return EVERY_ROW["full"].build(EveryRowInputs(data.spec))
        selection = dict(
            n_subsets=est.n_subsets,
            subset_budget=est.subset_budget,
            include_all=est.include_all,
            costs=None if data.costs is None else data.mean_costs,
            **est._selection_task(),
            scorer=est.subset_scorer,
            max_rows=SUBSET_MAX_ROWS,
            cv=min(est.cv, 3),
            random_state=est._seed,
            n_jobs=est.n_jobs,
            progress=progress,
            sample_weight=data.sample_weight,
        )
        given = EveryRowInputs(data.spec, data.Xv, data.y_fit, selection)
        return EVERY_ROW["subsets"].build(given)

    def _selection_key(self, costs: np.ndarray | None) -> tuple:
        """What a subset selection depends on besides the data."""
        est = self.est
        mean_costs = None if costs is None else tuple(costs.mean(axis=0).round(12))
        return (
            est.n_subsets,
            est.subset_budget,
            est.include_all,
            est._selection_task()["reward"],
            repr(est.subset_scorer),
            min(est.cv, 3),
            est._seed,
            mean_costs,
        )

    def check_bank(
        self, bank: Any, data: TrainingData, dag: SensorDAG | None = None
    ) -> None:
        if dag is None:  # the same data is checked by the bank's fingerprint
            dag = self.bank_dag(bank, data)[0]
        expected = self.new_bank(dag).fingerprint_for(
            data.Xv, data.y_fit, dag, data.sample_weight
        )
        if getattr(bank, "fingerprint_", None) != expected:
            raise _stale_bank()

    def bank_dag(
        self, bank: Any, data: TrainingData, progress: Progress | None = None
    ) -> tuple[SensorDAG, SubsetSelection | None]:
        """The DAG to fit: a given bank's subsets when this estimator would
        select the same ones (a bank serves one DAG only), else a new one."""
        reused = self._reusable_selection(bank, data.costs)
        if reused is not None:
            return build_dag(data.spec, reused.units), reused
        return self.build_dag(data, progress)

    def fit_bank(self, data: TrainingData, progress: Progress | None) -> Any:
        dag, selection = self.build_dag(data, progress)
        bank = self.est._fit_bank(
            self.new_bank(dag),
            data.Xv,
            data.y_fit,
            dag,
            data.spec,
            progress,
            data.sample_weight,
        )
        # Kept on the bank: a bank serves this DAG only.
        bank.subset_selection_ = selection
        bank.subset_key_ = (
            None if selection is None else self._selection_key(data.costs)
        )
        return bank

    def _reusable_selection(
        self, bank: Any, costs: np.ndarray | None
    ) -> SubsetSelection | None:
        selection = getattr(bank, "subset_selection_", None)
        if self.est.n_subsets is None or selection is None:
            return None
        if getattr(bank, "subset_key_", None) != self._selection_key(costs):
            return None
        return selection

    def problem(
        self,
        data: TrainingData,
        bank: Any,
        progress: Progress | None,
        dag: SensorDAG | None = None,
        selection: SubsetSelection | None = None,
        incumbent: str | None = None,
    ) -> PolicyProblem:
        if dag is None:
            dag, selection = self.bank_dag(bank, data, progress)
        est = self.est
        state_cols = dag.state_columns(data.spec.column_indices())
        value_states = est._value_states(bank)
        inputs = est._inputs(state_cols, data.n_classes, value_states, self.value_kind)
        return PolicyProblem(
            strategy="full" if selection is None else "subsets",
            dag=dag,
            walk=dag,
            bank=bank,
            selection=selection,
            state_columns=state_cols,
            value_states=value_states,
            route_states=None,
            inputs=inputs,
            state_inputs=inputs.training(data.Xv, getattr(bank, "oof_proba_", None)),
            stop_loss=est._stop_losses(bank, data.y_fit),
        )

    def check_replay(self, model: Any, Xv: np.ndarray) -> None:
        bank = model.bank_
        oof = getattr(bank, "oof_proba_", getattr(bank, "oof_pred_", None))
        if oof is None:
            raise _no_out_of_fold()
        _check_training_rows(Xv, len(oof))

    def reusable_bank(self, model: Any) -> Any | None:
        bank = model.bank_
        teaches = hasattr(bank, "oof_proba_") or hasattr(bank, "oof_pred_")
        return bank if teaches else None

    def replay_problem(self, model: Any, Xv: np.ndarray, y_fit: np.ndarray) -> Any:
        bank = model.bank_
        return (
            model.inputs_.training(Xv, getattr(bank, "oof_proba_", None)),
            model._stop_losses(bank, y_fit),
            model.sensor_dag_,
        )

    def oof_outputs(self, model: Any, k: Any, rows: np.ndarray) -> np.ndarray:
        bank = model.bank_
        if hasattr(bank, "oof_proba_"):
            return bank.oof_proba_[rows, k]
        return np.asarray(bank.oof_pred_[rows, k], dtype=float).reshape(len(rows), 1)

    def oof_policy(
        self,
        model: Any,
        Xv: np.ndarray,
        judged: Any,
        costs: np.ndarray,
        weight: np.ndarray | None = None,
    ) -> tuple[float, float]:
        rows = np.arange(len(Xv))
        stop = model._oof_route(Xv).stop_state
        loss = judged(rows, self.oof_outputs(model, stop, rows))
        member = model.sensor_dag_.membership(stop)
        cost = member @ costs if costs.ndim == 1 else member * costs
        if weight is not None:  # each row's cost, weighted
            row_costs = np.reshape(cost, (len(rows), -1)).sum(axis=1)
            return (
                float(np.average(loss, weights=weight)),
                float(np.average(row_costs, weights=weight)),
            )
        return float(loss.mean()), float(np.sum(cost) / len(rows))

    def reused_by_refits(self, model: Any) -> dict[str, Any]:
        return {
            "bank": model.bank_,
            "dag": model.sensor_dag_,
            "selection": model.subset_selection_,
        }


def _no_out_of_fold() -> ValueError:
    return ValueError(
        "This model's bank has no out-of-fold predictions (a slim, saved "
        "model): Graph-Reduce cannot be replayed; refit the model."
    )


def _check_training_rows(
    Xv: np.ndarray, n_bank: int, trained: np.ndarray | None = None
) -> None:
    """The rows of a replay are the training rows (their out-of-fold
    outputs exist for those only; ``trained``: the table itself, where the
    bank keeps it)."""
    if len(Xv) != n_bank:
        raise ValueError(
            f"X has {len(Xv)} rows but the model was trained on {n_bank}: pass "
            "the training data (the out-of-fold losses exist for those rows only)."
        )
    if trained is not None and not np.array_equal(Xv, trained):
        raise ValueError(
            "X is not the table the model was trained on: pass the training "
            "data (the out-of-fold losses exist for those rows only)."
        )


def _weighted_inputs(given: GrowthInputs, name: str, data: TrainingData) -> Any:
    """``given`` for strategy ``name``, its ``row_loss`` weighted by the fit's
    ``sample_weight`` (``given`` itself without weights): each row's loss
    times its weight over the mean weight, so that every mean of losses and
    gains a strategy ranks sensors by is the weighted mean (a row of weight
    w as w copies). The strategies' own defaults where the task gives none:
    the grown DAG's expected loss, the chain's and routed DAG's
    cross-entropy."""
    w = data.sample_weight
    if w is None:
        return given
    base = given.row_loss
    if base is None:
        base = expected_loss if name == "grown" else cross_entropy(data.y_fit)
    scale = w * (len(w) / w.sum())

    def row_loss(rows: np.ndarray, values: np.ndarray) -> np.ndarray:
        loss = base(rows, values)
        return loss * scale[rows].reshape((-1,) + (1,) * (np.ndim(loss) - 1))

    return dataclasses.replace(given, row_loss=row_loss)


@dataclass
class PendingStrategy:
    """A candidate strategy a many-sensor bank fit has not grown yet
    (``strategies.PendingBank``): its DAG on every training row, grown when
    a fit keeps it, as the bank fit would have grown it (``plan``'s
    settings, ``data``'s rows, ``chain``: the chain the same fit grew)."""

    plan: GrownPlan
    data: TrainingData
    bank: Any
    name: str
    chain: Any = None

    def grow(self, loss_memo: LossMemo) -> Any | None:
        """The bank bound to the DAG grown (None: nothing to grow)."""
        return self.plan.grown_bank(
            self.name, self.bank, self.data, loss_memo, chain=self.chain
        )


class GrownPlan(FitPlan):
    """Many sensors: the any-subset bank first, then each strategy's DAG of
    one-sensor additions grown on it (``budgetdag_core.strategies``; the
    simplest's at once, the others' when kept), one kept on validation rows
    at the fit's cost scale."""

    grows_states = True
    value_kind = "sensors"
    #: ``dag`` values that build one strategy only.
    FORCED: ClassVar[dict[str, tuple[str, ...]]] = {
        "sparse": ("grown",),
        "chain": ("chain",),
        "routed": ("routed",),
    }

    def names(self) -> tuple[str, ...]:
        """The strategies this fit builds (``"auto"``: those of
        ``strategies.AUTO_STRATEGIES``, one kept on validation rows, simplest
        first)."""
        return self.FORCED.get(getattr(self.est, "dag", "auto"), AUTO_STRATEGIES)

    def kept_from(self) -> tuple[str, ...]:
        """The strategies a given bank's candidates may be kept from: those
        this fit builds, or with ``dag="auto"`` any of them, simplest first
        (a bank grown with ``dag="sparse"``, or candidates fitted when
        ``"auto"`` still grew the grown DAG, choose as they were fitted)."""
        return self.FORCED.get(getattr(self.est, "dag", "auto"), SIMPLEST_FIRST)

    def strategies(self) -> dict[str, int]:
        max_states = self.est._growth_settings()["max_states"]
        n = self.spec.n_sensors
        return {name: most_states(name, n, max_states) for name in self.names()}

    def nan_refused(self) -> str | None:
        return None  # any-subset masked banks: a NaN is a sensor not read

    def weights_refused(self) -> str | None:
        # The any-subset banks, the strategies' gains (:func:`_weighted_loss`),
        # the validation choice and Graph-Reduce weigh rows.
        return None

    def check_bank(
        self, bank: Any, data: TrainingData, dag: SensorDAG | None = None
    ) -> None:
        for one in StrategyBanks.of(bank).grown().values():
            growth = getattr(one, "sparse_growth_", None)
            expected = (
                None
                if growth is None
                else self.new_bank().fingerprint_for(
                    data.Xv, data.y_fit, growth.dag, data.sample_weight
                )
            )
            if getattr(one, "fingerprint_", None) != expected:
                raise _stale_bank()

    def bank_dag(
        self, bank: Any, data: TrainingData, progress: Progress | None = None
    ) -> tuple[Any, SubsetSelection | None]:
        growth = getattr(StrategyBanks.of(bank).default, "sparse_growth_", None)
        if growth is None:
            raise ValueError(
                "This bank did not grow a sparse DAG here, or was saved "
                "without its growth (slim): refit it."
            )
        return growth.dag, None  # the DAG the bank grew

    def new_bank(self, dag: SensorDAG | None = None) -> Any:
        return self.est._new_sparse_bank()

    def fit_bank(self, data: TrainingData, progress: Progress | None) -> StrategyBanks:
        """Fit the any-mask models and each strategy's candidate on them: one
        bank per strategy (sharing the fold models), each bound to its DAG,
        as a ``strategies.StrategyBanks``: a fit keeps one of them on
        validation rows at its own cost scale (``dag="auto"``: those of
        ``strategies.AUTO_STRATEGIES``). The simplest strategy's DAG is
        grown here; the others' when a fit keeps them
        (:class:`PendingStrategy`): the choice grows each again on its own
        fit rows, so the DAG on every row of a strategy not kept would be
        thrown away. Where an ``"auto"`` bank's log loss leaves a rival
        kind close (``fit_rival``), that kind's bank is fitted too and its
        routed DAG joins the candidates (key ``strategies.strategy_key``):
        the policies, not the log loss at random subsets, then judge the
        kinds. Only the routed DAG: it is where an interaction the log loss
        missed pays (a routing sensor, then the sensors it points to); a
        rival's chain and grown DAG doubled the fit's time for no measured
        gain."""
        est, spec = self.est, data.spec
        bank = est._fit_sparse_models(
            self.new_bank(), data.Xv, data.y_fit, spec, progress, data.sample_weight
        )
        first, *others = self.names()
        memo = LossMemo()
        if progress is not None:
            progress("strategies", 0, 1)
        banks: dict[str, Any] = {
            first: self.grown_bank(first, bank, data, memo, progress=progress)
        }
        if progress is not None:
            progress("strategies", 1, 1)
        chain = banks[first].sparse_growth_ if first == "chain" else None
        for name in others:
            banks[name] = PendingStrategy(self, data, bank, name, chain)
        if hasattr(bank, "fit_rival") and "routed" in others:
            rival = bank.fit_rival(
                data.Xv, data.y_fit, spec.column_indices(), bank.n_classes_,
                progress, sample_weight=data.sample_weight,
            )  # fmt: skip
            if rival is not None:
                key = strategy_key("routed", rival.kind_)
                banks[key] = PendingStrategy(self, data, rival, "routed")
        return StrategyBanks(banks, memo)

    def grown_bank(
        self,
        name: str,
        bank: Any,
        data: TrainingData,
        memo: LossMemo | None,
        *,
        rows: np.ndarray | None = None,
        chain: Any = None,
        progress: Progress | None = None,
    ) -> Any:
        """Strategy ``name``'s DAG grown on ``bank``'s fold models (on
        ``rows``, default every training row) and a copy of the bank bound
        to it (the growth's ``bank``), or None where the strategy finds
        nothing to grow; the row losses its search asks kept in ``memo``.
        ``chain``: the chain grown on the same rows (a routed DAG joins its
        groups' orders to the chain's)."""
        given = self._growth_inputs(bank, data, progress, rows)
        if chain is not None:
            given.grown["chain"] = chain
        growth = grow_strategy(name, self._loss_inputs(given, name, data, memo))
        if growth is None:  # None: no sensor's value says where to look
            return None
        bound = copy.copy(bank).bind(growth, data.Xv, data.y_fit, data.sample_weight)
        growth.bank = bound  # its outputs under the bound temperatures
        return bound

    def _growth_inputs(
        self,
        bank: Any,
        data: TrainingData,
        progress: Progress | None = None,
        rows: np.ndarray | None = None,
    ) -> GrowthInputs:
        """What a strategy grows its DAG from on ``bank`` (on ``rows``, by
        default every training row)."""
        est, spec = self.est, data.spec
        return GrowthInputs(
            bank, data.Xv, data.y_fit, spec.names, spec.column_indices(),
            data.mean_costs, GrowthSettings(**est._growth_settings()), est._seed,
            est._growth_row_loss(data.y_fit),
            required=self.names() == ("routed",),
            progress=None if progress is None
            else functools.partial(progress, "grown"),
            rows=rows,
        )  # fmt: skip

    def _loss_inputs(
        self,
        given: GrowthInputs,
        name: str,
        data: TrainingData,
        memo: LossMemo | None,
    ) -> GrowthInputs:
        """``given`` for strategy ``name``: its ``row_loss`` weighted
        (:func:`_weighted_inputs`), and for the searches that rank sensors by
        blocks of row losses (the chain's and the routed DAG's: what the
        choice's growths on its fit rows ask again) kept in ``memo`` under
        the loss's name (the memo's training data are fixed: a fit handed
        these candidates checks the data against their bank first)."""
        given = _weighted_inputs(given, name, data)
        if memo is None or not REGISTRY[name].searches_blocks:
            return given
        row_loss = given.row_loss
        if row_loss is None:
            row_loss = cross_entropy(data.y_fit)
        kept = memo.kept(row_loss, self.est._growth_loss_key())
        return dataclasses.replace(given, row_loss=kept)

    def _held_out_grower(
        self, banks: StrategyBanks, data: TrainingData
    ) -> Callable[[str, np.ndarray], Any]:
        """``grow_on(key, fit_rows)`` of ``strategies.choose_strategy``:
        candidate ``key``'s strategy grown again on ``fit_rows`` alone, on
        (a copy of) its own bank, bound as a fit binds it; None where it
        finds nothing to grow there. Kept on ``banks``
        (``StrategyBanks.held_out_growth``): a sweep's points reuse them."""

        def grow_on(key: str, fit_rows: np.ndarray) -> Any:
            def grow() -> Any:
                name = strategy_name(key)
                chain = None
                if name != "chain" and key == name and "chain" in banks:
                    # As in the fit: the routed DAG joins its groups' orders
                    # to the chain's (grown on the same rows).
                    chain = grow_on("chain", fit_rows)
                bound = self.grown_bank(
                    name, banks.fold_bank(key), data, banks.loss_memo,
                    rows=fit_rows, chain=chain,
                )  # fmt: skip
                return None if bound is None else bound.sparse_growth_

            return banks.held_out_growth(key, fit_rows, grow)

        return grow_on

    def problem(
        self,
        data: TrainingData,
        bank: Any,
        progress: Progress | None,
        dag: SensorDAG | None = None,
        selection: SubsetSelection | None = None,
        incumbent: str | None = None,
    ) -> PolicyProblem:
        candidates = StrategyBanks.of(bank)
        key, choice = self._choose(candidates, data, progress, incumbent)
        bank = self._kept_bank(candidates, key, progress)
        if bank is None:  # the kept found nothing to grow on every row
            first = next(iter(candidates))
            if strategy_name(first) not in self.kept_from():
                raise ValueError(
                    f"This bank's {key} DAG finds nothing to grow on these "
                    f"rows; dag={short_repr(self.est.dag)} needs it: refit the "
                    "bank with it."
                )
            key, bank = first, candidates[first]
            choice = None if choice is None else {**choice, "strategy": key}
        growth = bank.sparse_growth_
        state_cols, value_states, route_states, inputs = self.policy_inputs(
            growth, data.n_classes
        )
        if progress is not None:
            progress("policies", 0, growth.dag.n_states)
        Xv = data.Xv
        return PolicyProblem(
            strategy=strategy_name(key),
            dag=growth.dag,
            walk=growth,
            bank=bank,
            selection=None,
            state_columns=state_cols,
            value_states=value_states,
            route_states=route_states,
            inputs=inputs,
            state_inputs=GrowthStateInputs(inputs, Xv),
            stop_loss=self.est._sparse_stop_loss(bank, data.y_fit),
            choice=choice,
            candidates=candidates,
        )

    @staticmethod
    def _kept_bank(
        banks: StrategyBanks, key: str, progress: Progress | None
    ) -> Any | None:
        """Candidate ``key``'s bank, grown on every row now where it waited
        (``strategies.PendingBank``); None where it found nothing to grow."""
        pending = not banks.is_grown(key)
        if pending and progress is not None:
            progress("grown", 0, 1)
        try:
            return banks[key]
        except KeyError:
            return None
        finally:
            if pending and progress is not None:
                progress("grown", 1, 1)

    def _choose(
        self,
        banks: StrategyBanks,
        data: TrainingData,
        progress: Progress | None,
        incumbent: str | None = None,
    ) -> tuple[str, dict | None]:
        """The key of the candidate to fit (validation rows decide among the
        candidates at this cost scale, the chosen bank kind's simplest
        first, then a rival kind's; a close call keeps ``incumbent``, a
        refitted model's own, where it is within one standard error), and
        the validation numbers."""
        est = self.est
        names = self.kept_from()
        # A rival kind's banks are keyed "strategy@kind" (strategy_key).
        rivals = [
            key
            for name in names
            for key in banks
            if key != name and strategy_name(key) == name
        ]
        wanted = [n for n in names if n in banks] + rivals
        if not wanted:
            raise ValueError(
                f"This bank holds the {sorted(banks)} DAG(s); "
                f"dag={short_repr(est.dag)} needs {list(names)}: refit "
                "the bank with it."
            )
        if len(wanted) == 1:
            return wanted[0], None
        bank = banks.default
        n_classes = int(getattr(bank, "n_classes_", 0))  # 0: a regressor's
        Xv = data.Xv

        def inputs_for(growth: Any) -> Any:
            inputs = self.policy_inputs(growth, n_classes)[-1]
            return GrowthStateInputs(inputs, Xv)

        choice = choose_strategy(
            dict.fromkeys(wanted),  # grown on the choice's fit rows (grow_on)
            data.y_fit,
            inputs_for,
            est._sparse_stop_loss(bank, data.y_fit),
            est._sparse_stop_loss(bank, data.y_fit, kind="zero_one"),
            data.acquisition_costs,
            est._make_learner(data.n_rows),
            [est.cost_scale],
            random_state=est._seed,
            progress=progress,
            sample_weight=data.sample_weight,
            grow_on=self._held_out_grower(banks, data),
            incumbent=incumbent if incumbent in wanted else None,
        )
        return choice.strategy, choice.to_dict()

    def policy_inputs(
        self, growth: Any, n_classes: int
    ) -> tuple[Any, np.ndarray | None, np.ndarray | None, PolicyInputs]:
        """State columns, ``"auto"`` value and route states, and policy
        inputs of a grown DAG."""
        est = self.est
        state_cols = growth.dag.state_columns(self.spec.column_indices())
        value_states = route_states = None
        if est._input_kind() == "auto":
            spreads = state_spreads(growth)
            value_states = np.nan_to_num(spreads, nan=1.0) < CONSTANT_STATE_SPREAD
            value_states[0] = False
            # A routing sensor's state picks its route by the sensor's values,
            # which the probabilities alone need not show: an any-subset
            # network's posterior there can spread with noise (CUBE-NM's
            # context), or with what the sensor says of the class (a pixel).
            route_states = np.zeros(growth.dag.n_states, dtype=bool)
            route_states[list(growth.route_states)] = True
            route_states &= ~value_states
        inputs = est._inputs(
            state_cols, n_classes, value_states, self.value_kind, route_states
        )
        return state_cols, value_states, route_states, inputs

    def check_replay(self, model: Any, Xv: np.ndarray) -> None:
        growth = getattr(model.bank_, "sparse_growth_", None)
        if growth is None:
            raise _no_out_of_fold()
        _check_training_rows(Xv, len(growth.X), growth.X)

    def reusable_bank(self, model: Any) -> Any | None:
        # Every candidate DAG, chosen among again at the new scale.
        candidates = getattr(model, "strategy_banks_", None) or model.bank_
        default = StrategyBanks.of(candidates).default
        return None if getattr(default, "sparse_growth_", None) is None else candidates

    def replay_problem(self, model: Any, Xv: np.ndarray, y_fit: np.ndarray) -> Any:
        growth = model.bank_.sparse_growth_
        inputs = model.inputs_
        return (
            GrowthStateInputs(inputs, Xv),
            model._sparse_stop_loss(model.bank_, y_fit),
            growth.replica(),
        )

    def oof_outputs(self, model: Any, k: Any, rows: np.ndarray) -> np.ndarray:
        return model.bank_.sparse_growth_.proba_at(k, rows)

    def oof_policy(
        self,
        model: Any,
        Xv: np.ndarray,
        judged: Any,
        costs: np.ndarray,
        weight: np.ndarray | None = None,
    ) -> tuple[float, float]:
        inputs = model.inputs_
        rollout = SparseRollout(
            model.bank_.sparse_growth_,
            GrowthStateInputs(inputs, Xv),
            judged,
            costs,
            model.cost_scale_,
        )
        rollout.policies = list(model.policies_)
        parts = rollout.parts(0, np.arange(len(Xv)))
        return (
            float(np.average(parts[:, 0], weights=weight)),
            float(np.average(parts[:, 1], weights=weight)),
        )

    def reused_by_refits(self, model: Any) -> dict[str, Any]:
        # The strategy kept, alone: no new choice.
        return {"bank": model.bank_, "dag": None, "selection": None}

    def refit_incumbent(self, model: Any) -> str | None:
        banks = getattr(model, "strategy_banks_", None)
        return None if not banks else banks.key_of(model.bank_)

    def restore_choice(self, model: Any, first: Any) -> None:
        # It keeps every candidate again (sweeps on them choose among
        # them), and its strategy is the one the first fit kept on
        # validation rows.
        model.strategy_banks_ = first.strategy_banks_
        model.strategy_validation_ = first.strategy_validation_
