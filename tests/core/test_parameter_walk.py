"""Every numeric parameter of the public API refuses NaN, a negative number and
a string, naming the parameter (issue 39).

The walk finds the functions (``budgetdag_core.__all__`` and its subpackages')
and the public methods of the exported classes, and in each signature the
parameters that take a number (an ``int``/``float`` default or annotation).
Each has a call below on tiny data; a new public function with a numeric
parameter and no call here fails :func:`test_every_numeric_parameter_has_a_call`.
"""

from __future__ import annotations

import dataclasses
import inspect
import math
import re
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import budgetdag_core as bd
from budgetdag_core import (
    BudgetDAGClassifier,
    BudgetDAGRegressor,
    LossTablePolicy,
    SensorDAG,
    SensorSpec,
    toy_dataset,
)
from budgetdag_core.bank import MaskedBank, RegressorBank, make_bank
from budgetdag_core.estimates import (
    estimate_fit_seconds,
    estimate_fit_seconds_for,
    probe_fit,
    strategy_states,
)
from budgetdag_core.explain import action_names, node_details, state_label, subsets_in
from budgetdag_core.plotting import (
    acquisition_grid_figure,
    acquisition_heatmap_figure,
    acquisition_paths_figure,
    acquisition_steps_figure,
    dag_figure,
    decision_regions_figure,
    tradeoff_figure,
)
from budgetdag_core.reductions import CostRegression, FilterTree
from budgetdag_core.teaching import graph_reduce_steps, pending_states
from budgetdag_core.tradeoff import cascade_points, dominance_summary, fit_cascade
from tests.public_api import public_objects

#: Result records: the library fills them from checked values; their fields
#: are outputs (NaN is a legitimate "no cascade" in DominanceSummary), not
#: settings a caller hands over.
RECORDS = {
    "BudgetReport.__init__",
    "DominanceSummary.__init__",
    "FitProbe.__init__",
    "PathResult.__init__",
    "ReduceStep.__init__",
    "SubsetSelection.__init__",
}

#: Parameters for which a negative number is a legitimate value, and why.
NEGATIVE_IS_VALID = {
    # joblib's convention: -1 all cores, -2 all but one, ...
    "n_jobs": "joblib counts negative n_jobs back from the number of cores",
    # Confidences are in [0, 1]; a threshold below 0 means "always stop".
    ("ConfidenceCascade.__init__", "threshold"): "any float is a threshold",
    ("ConfidenceCascade.at", "threshold"): "any float is a threshold",
    # A sensor measures whatever it measures: negative readings are data.
    ("PolicySession.observe", "values"): "sensor values may be negative",
    ("PolicySession.buy", "values"): "sensor values may be negative",
}

#: Parameters for which NaN is a legitimate value, and why.
NAN_IS_VALID = {
    # A sensor acquired but not measured: the default bank takes it
    # (test_missing_values; a bank that cannot is refused there).
    ("PolicySession.observe", "values"): "a NaN is a value not measured",
    ("PolicySession.buy", "values"): "a NaN is a value not measured",
}

BAD_VALUES = {"nan": math.nan, "negative": -1, "string": "3"}

_SCALARS = {"int", "float"}


def _is_numeric(param: inspect.Parameter) -> bool:
    """Whether ``param`` takes a scalar number (its default or annotation)."""
    default = param.default
    if isinstance(default, int | float) and not isinstance(default, bool):
        return True
    if param.annotation is inspect.Parameter.empty:
        return False
    parts = {part.strip() for part in str(param.annotation).split("|")}
    return bool(parts & _SCALARS)


def _public_callables() -> dict[str, Callable]:
    """Qualified name -> function, for the public API's functions (the
    root's and its subpackages' ``__all__``) and the public methods of its
    classes (an inherited method once, by its defining class)."""
    found: dict[str, Callable] = {}
    for _, obj in public_objects().values():
        if inspect.isclass(obj):
            if issubclass(obj, BaseException):
                continue
            members = [obj.__init__] + [
                f
                for m, f in inspect.getmembers(obj)
                if not m.startswith("_")
                and (inspect.isfunction(f) or inspect.ismethod(f))
            ]
        elif inspect.isfunction(obj):
            members = [obj]
        else:
            continue
        for f in members:
            found.setdefault(f.__qualname__, f)
    return found


def numeric_parameters() -> list[tuple[str, str]]:
    """(qualified name, parameter) for every numeric parameter of the API."""
    pairs = []
    for qualname, f in _public_callables().items():
        try:
            signature = inspect.signature(f)
        except (TypeError, ValueError):  # a type alias (Progress)
            continue
        if qualname in RECORDS:
            continue
        pairs += [
            (qualname, p.name) for p in signature.parameters.values() if _is_numeric(p)
        ]
    return pairs


# ------------------------------------------------------------------ tiny data
DEMO = toy_dataset(80, 20, random_state=0)
X, Y, SPEC = DEMO.X_train, DEMO.y_train, DEMO.spec
#: The toy's columns on a 1 x 3 "image" (for the acquisition figures).
GRID = [list(SPEC.columns)]
XV = X[list(SPEC.columns)].to_numpy(float)
DAG = SensorDAG(list(SPEC.names))
COLUMNS = SPEC.column_indices()
COSTS = np.array([SPEC.costs[name] for name in SPEC.names])


@pytest.fixture(scope="module")
def fitted(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A fitted classifier (and its policy file), regressor, loss table,
    trade-off curve and cascade."""
    model = BudgetDAGClassifier(SPEC, cv=2, cost_scale=0.03, random_state=0).fit(X, Y)
    regressor = BudgetDAGRegressor(SPEC, cv=2, regressor="ridge", random_state=0)
    losses = np.tile([1.0, 0.5, 0.5, 0.3, 0.2, 0.2, 0.1, 0.0], (len(X), 1))
    curve = bd.tradeoff_curve(X, Y, SPEC, n_points=2, cv=2, random_state=0)
    policy_file = tmp_path_factory.mktemp("walk") / "toy.skops"
    return {
        "model": model,
        "policy": bd.dumps_policy_skops(model),
        "policy_file": bd.save_policy_skops(model, policy_file),
        "regressor": regressor.fit(X, X["precise"]),
        "losses": losses,
        "curve": curve,
        "cascade": fit_cascade(model, X, Y, n_thresholds=3),
    }


def _calls(f: dict[str, Any]) -> dict[str, Callable[[dict[str, Any]], Any]]:
    """Qualified name -> a call of it on tiny data with ``kw`` replacing the
    valid arguments of the same names."""
    model, curve = f["model"], f["curve"]

    def with_defaults(defaults: dict[str, Any], kw: dict[str, Any]) -> dict:
        return {**defaults, **kw}

    csv = X.assign(label=Y).to_csv(index=False).encode()
    steps = graph_reduce_steps(model, X, Y)
    table = bd.read_table(csv, label="label")
    return {
        "read_table": lambda kw: bd.read_table(
            csv, **with_defaults({"label": "label"}, kw)
        ),
        "Table.check": lambda kw: table.check(**kw),
        "Table.findings": lambda kw: table.findings(**kw),
        "Table.to_dataset": lambda kw: table.to_dataset(SPEC, **kw),
        "state_label": lambda kw: state_label(model, **with_defaults({"state": 0}, kw)),
        "subsets_in": lambda kw: subsets_in(model, **with_defaults({"state": 0}, kw)),
        "BudgetDAGClassifier.__init__": lambda kw: BudgetDAGClassifier(
            SPEC, **with_defaults({"cv": 2}, kw)
        ).fit(X, Y),
        "BudgetDAGRegressor.__init__": lambda kw: BudgetDAGRegressor(
            SPEC, **with_defaults({"cv": 2, "regressor": "ridge"}, kw)
        ).fit(X, X["precise"]),
        "PolicyRoutingMixin.inputs_at": lambda kw: model.inputs_at(
            XV[:, :0], **with_defaults({"state": 0}, kw)
        ),
        "PolicyRoutingMixin.node_actions": lambda kw: model.node_actions(
            X, **with_defaults({"state": 0}, kw)
        ),
        "BudgetDAGBase.fit_plan": lambda kw: model.fit_plan(
            model.spec_, **with_defaults({"n_rows": 100}, kw)
        ),
        "BudgetDAGBase.builds_sparse_dag": lambda kw: model.builds_sparse_dag(
            model.spec_, **with_defaults({"n_rows": 100}, kw)
        ),
        "BudgetDAGBase.refit_policies": lambda kw: model.refit_policies(
            X, Y, **with_defaults({"cost_scale": 0.1}, kw)
        ),
        "BaseBank.__init__": lambda kw: make_bank(
            "hgb", **with_defaults({"cv": 2}, kw)
        ).fit(XV, Y, DAG, COLUMNS, 2),
        "ClassifierBank.fit": lambda kw: make_bank("hgb", cv=2).fit(
            XV, Y, DAG, COLUMNS, **with_defaults({"n_classes": 2}, kw)
        ),
        "ClassifierBank.fit_state_fold": lambda kw: make_bank(
            "hgb", cv=2
        ).fit_state_fold(
            XV, Y, DAG, COLUMNS, **with_defaults({"n_classes": 2, "state": 1}, kw)
        ),
        "BaseBank.predict_proba": lambda kw: model.bank_.predict_proba(
            XV, **with_defaults({"state": 1}, kw)
        ),
        "ConfidenceCascade.__init__": lambda kw: dataclasses.replace(
            f["cascade"], **kw
        ),
        "ConfidenceCascade.at": lambda kw: f["cascade"].at(
            **with_defaults({"threshold": 0.5}, kw)
        ),
        "ConfidenceCascade.for_budget": lambda kw: f["cascade"].for_budget(
            **with_defaults({"avg_cost": 10.0}, kw)
        ),
        "MaskedBank.__init__": lambda kw: MaskedBank(
            **with_defaults({"cv": 2}, kw)
        ).fit(XV, Y, DAG, COLUMNS, 2),
        "MaskedBank.fit": lambda kw: MaskedBank(cv=2).fit(
            XV, Y, DAG, COLUMNS, **with_defaults({"n_classes": 2}, kw)
        ),
        "MaskedBank.fit_first_fold": lambda kw: MaskedBank(cv=2).fit_first_fold(
            XV, Y, DAG, COLUMNS, **with_defaults({"n_classes": 2}, kw)
        ),
        "MaskedBank.mask_pairs": lambda kw: MaskedBank().mask_pairs(
            DAG, rng=np.random.default_rng(0), **with_defaults({"n_rows": 10}, kw)
        ),
        "CostRegression.__init__": lambda kw: CostRegression(**kw).fit(
            XV, f["losses"][:, :2]
        ),
        "CostRegression.check_integrity": lambda kw: _check_learner(
            CostRegression(), f["losses"], kw
        ),
        "FilterTree.__init__": lambda kw: FilterTree(**kw).fit(XV, f["losses"][:, :2]),
        "FilterTree.check_integrity": lambda kw: _check_learner(
            FilterTree(), f["losses"], kw
        ),
        "LossTablePolicy.__init__": lambda kw: LossTablePolicy(SPEC, **kw).fit(
            X, f["losses"]
        ),
        "PolicySession.observe": lambda kw: _observe(
            model, with_defaults({"values": 0.5}, kw)["values"]
        ),
        "PolicySession.buy": lambda kw: _buy(
            model, with_defaults({"values": 0.5}, kw)["values"]
        ),
        "RegressorBank.__init__": lambda kw: RegressorBank(
            **with_defaults({"cv": 2}, kw)
        ).fit(XV, X["precise"].to_numpy(), DAG, COLUMNS),
        "RegressorBank.predict": lambda kw: f["regressor"].bank_.predict(
            XV, **with_defaults({"state": 1}, kw)
        ),
        "SensorDAG.added_sensors": lambda kw: DAG.added_sensors(
            **with_defaults({"state": 0, "child": 1}, kw)
        ),
        "SensorDAG.columns_of": lambda kw: DAG.columns_of(
            **with_defaults({"state": 1, "sensor_columns": COLUMNS}, kw)
        ),
        "SensorDAG.sensors_in": lambda kw: DAG.sensors_in(
            **with_defaults({"state": 1}, kw)
        ),
        "SensorDAG.state_names": lambda kw: DAG.state_names(
            **with_defaults({"state": 1}, kw)
        ),
        "SensorSpec.by_prefix": lambda kw: SensorSpec.by_prefix(["a_1", "b_1"], **kw),
        "SensorSpec.per_column": lambda kw: SensorSpec.per_column(["a", "b"], **kw),
        "TradeoffResult.index_for_budget": lambda kw: curve.index_for_budget(
            **with_defaults({"avg_cost": 10.0}, kw)
        ),
        "TradeoffResult.model_at": lambda kw: curve.model_at(
            **with_defaults({"cost_scale": 0.1}, kw)
        ),
        "TradeoffResult.model_for_budget": lambda kw: curve.model_for_budget(
            **with_defaults({"avg_cost": 10.0}, kw)
        ),
        "TradeoffResult.model_rows": lambda kw: curve.model_rows(
            **with_defaults({"index": 0}, kw)
        ),
        "action_names": lambda kw: action_names(
            model, **with_defaults({"state": 0}, kw)
        ),
        "cascade_points": lambda kw: cascade_points(model, X, Y, **kw),
        "dag_figure": lambda kw: dag_figure(model, X, Y, **kw),
        "acquisition_grid_figure": lambda kw: acquisition_grid_figure(
            X.iloc[0], ["precise"], GRID, SPEC.groups, **kw
        ),
        "acquisition_heatmap_figure": lambda kw: acquisition_heatmap_figure(
            model.trace(X), GRID, SPEC.groups, **kw
        ),
        "acquisition_paths_figure": lambda kw: acquisition_paths_figure(
            model.trace(X), **kw
        ),
        "acquisition_steps_figure": lambda kw: acquisition_steps_figure(
            model.trace(X), SPEC.names, **kw
        ),
        "pending_states": lambda kw: pending_states(
            steps, **with_defaults({"current": 0}, kw)
        ),
        "decision_regions_figure": lambda kw: decision_regions_figure(
            model, **with_defaults({"state": 0, "grid": 5, "max_points": 10}, kw)
        ),
        "dominance_summary": lambda kw: dominance_summary(
            curve.frame, split="train", **kw
        ),
        "fit_cascade": lambda kw: fit_cascade(model, X, Y, **kw),
        "fit_for_budget": lambda kw: bd.fit_for_budget(
            X,
            Y,
            SPEC,
            **with_defaults({"target_avg_cost": 1.0, "max_iter": 1}, kw),
            cv=2,
        ),
        "graph_reduce": lambda kw: bd.graph_reduce(
            lambda k: XV,
            f["losses"],
            COSTS,
            DAG,
            FilterTree(),
            **kw,
        ),
        "graph_reduce_steps": lambda kw: graph_reduce_steps(model, X, Y, **kw),
        "learn_policies_from_losses": lambda kw: bd.learn_policies_from_losses(
            XV, f["losses"], DAG, COSTS, COLUMNS, FilterTree(), **kw
        ),
        "load_demo": lambda kw: bd.load_demo("pima", **kw),
        "load_policy_skops": lambda kw: bd.load_policy_skops(f["policy_file"], **kw),
        "loads_policy_skops": lambda kw: bd.loads_policy_skops(f["policy"], **kw),
        "make_bank": lambda kw: make_bank("hgb", **with_defaults({"cv": 2}, kw)).fit(
            XV, Y, DAG, COLUMNS, 2
        ),
        "estimate_fit_seconds": lambda kw: estimate_fit_seconds(
            **with_defaults({"n_rows": 40, "n_states": 8, "n_classes": 2}, kw),
            kernels_ready=True,
            first_fit=False,
        ),
        "estimate_fit_seconds_for": lambda kw: estimate_fit_seconds_for(
            SPEC, X, Y, first_fit=False, **kw
        ),
        "probe_fit": lambda kw: probe_fit(SPEC, X, Y, cv=2, **kw),
        "strategy_states": lambda kw: strategy_states(
            {"grown": 100, "chain": 5},
            **with_defaults({"n_rows": 40, "n_sensors": 4}, kw),
        ),
        "node_details": lambda kw: node_details(
            model, X, Y, **with_defaults({"state": 0}, kw)
        ),
        "select_subsets": lambda kw: bd.select_subsets(
            X, Y, SPEC, **with_defaults({"n_subsets": 2, "cv": 2}, kw)
        ),
        "toy_dataset": lambda kw: toy_dataset(**with_defaults({"n_train": 10}, kw)),
        "tradeoff_curve": lambda kw: bd.tradeoff_curve(
            X, Y, SPEC, bank=model.bank_, cv=2, random_state=0, **kw
        ),
        "tradeoff_figure": lambda kw: tradeoff_figure(curve.frame, split="train", **kw),
    }


def _check_learner(learner: Any, losses: np.ndarray, kw: dict[str, Any]) -> None:
    """``check_integrity`` of ``learner`` fitted on two actions."""
    learner.fit(XV, losses[:, :2])
    learner.check_integrity("learner", **{"n_actions": 2, "n_inputs": 3, **kw})


def _observe(model: BudgetDAGClassifier, value: Any) -> None:
    """Observe ``value`` for the first sensor the policy asks for."""
    session = model.start()
    sensor = session.next_sensor()
    assert sensor is not None, "the test model should acquire a sensor first"
    session.observe(sensor, value)


def _buy(model: BudgetDAGClassifier, value: Any) -> None:
    """Buy ``value`` for a sensor other than the one the policy asks for."""
    session = model.start()
    asked = session.next_sensor()
    mine = next(n for n in model.spec_.names if n != asked)
    session.buy(mine, value)


def test_every_numeric_parameter_has_a_call(fitted) -> None:
    missing = {name for name, _ in numeric_parameters()} - set(_calls(fitted))
    assert not missing, f"add a call to _calls for {sorted(missing)}"


def test_every_call_runs_with_valid_arguments(fitted) -> None:
    """The calls are valid but for the value tried: a refusal is the value's."""
    calls = _calls(fitted)
    for qualname in sorted({name for name, _ in numeric_parameters()}):
        calls[qualname]({})


def test_the_walk_finds_the_known_cases() -> None:
    pairs = set(numeric_parameters())
    for case in [
        ("probe_fit", "max_seconds"),
        ("probe_fit", "fold_max_seconds"),
        ("load_demo", "test_fraction"),
        ("tradeoff_curve", "n_points"),
        ("BudgetDAGClassifier.__init__", "cv"),
    ]:
        assert case in pairs


@pytest.mark.parametrize("kind", sorted(BAD_VALUES))
def test_numeric_parameters_refuse_bad_values(fitted, kind: str) -> None:
    calls = _calls(fitted)
    accepted = []
    for qualname, param in numeric_parameters():
        if kind == "negative" and (
            param in NEGATIVE_IS_VALID or (qualname, param) in NEGATIVE_IS_VALID
        ):
            continue
        if kind == "nan" and (qualname, param) in NAN_IS_VALID:
            continue
        try:
            calls[qualname]({param: BAD_VALUES[kind]})
        except (ValueError, TypeError) as exc:
            if not re.search(rf"\b{re.escape(param)}\b", str(exc)):
                accepted.append(f"{qualname}({param}=...): {exc}")
        else:
            accepted.append(f"{qualname}({param}={BAD_VALUES[kind]!r}) accepted")
    assert not accepted, "\n".join(accepted)


# --------------------------------------------------- the cases of issue 39
def test_probe_fit_refuses_negative_and_nan_budgets() -> None:
    with pytest.raises(ValueError, match="'max_seconds' parameter of probe_fit"):
        probe_fit(SPEC, X, Y, max_seconds=-1.0)
    with pytest.raises(ValueError, match="'fold_max_seconds' parameter of probe_fit"):
        probe_fit(SPEC, X, Y, fold_max_seconds=math.nan)


def test_load_demo_refuses_a_test_fraction_above_one() -> None:
    with pytest.raises(ValueError, match="'test_fraction' parameter of load_demo"):
        bd.load_demo("pima", test_fraction=1.5)


def test_tradeoff_curve_refuses_unbounded_points(fitted) -> None:
    with pytest.raises(ValueError, match=r"'n_points' parameter .* \[2, 100\]"):
        bd.tradeoff_curve(X, Y, SPEC, n_points=10**7, bank=fitted["model"].bank_, cv=2)
    with pytest.raises(ValueError, match="cost_scales holds 101 distinct scales"):
        bd.tradeoff_curve(X, Y, SPEC, cost_scales=np.linspace(0, 1, 101), cv=2)


def test_observe_refuses_columns_of_another_sensor(fitted) -> None:
    model = fitted["model"]
    session = model.start()
    sensor = session.next_sensor()
    other = next(name for name in SPEC.names if name != sensor)
    values = dict.fromkeys(SPEC.groups[sensor], 0.5)
    foreign = SPEC.groups[other][0]
    with pytest.raises(ValueError, match=rf"{foreign!r} \(sensor {other!r}'s\)"):
        session.observe(sensor, {**values, foreign: 1.0})
    with pytest.raises(ValueError, match=r"'typo' \(not a column of the spec\)"):
        session.observe(sensor, {**values, "typo": 1.0})
    assert session.acquired == [] and np.isnan(session.values).all()  # nothing kept
    session.observe(sensor, values)
    assert session.acquired == [sensor]


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: BudgetDAGClassifier(SPEC, cv=21).fit(X, Y), r"'cv' .* \[2, 20\]"),
        (lambda: make_bank("hgb", cv=21).fit(XV, Y, DAG, COLUMNS, 2), r"\[2, 20\]"),
        (lambda: MaskedBank(masks_per_row=10**6).fit(XV, Y, DAG, COLUMNS, 2), "1024"),
        (lambda: FilterTree(degree=9).fit(XV, np.eye(2)[Y]), r"'degree' .* \[1, 4\]"),
        (lambda: fit_cascade(None, X, Y, n_thresholds=10**6), r"\[2, 1000\]"),
        (lambda: toy_dataset(10**7), r"'n_train' .* 1000000\]"),
        (lambda: bd.select_subsets(X, Y, SPEC, n_subsets=17), r"\[1, 16\]"),
        (
            lambda: bd.fit_for_budget(X, Y, SPEC, 1.0, max_iter=10**6),
            r"'max_iter' .* \[1, 60\]",
        ),
    ],
)
def test_work_that_grows_with_a_parameter_is_bounded(call, message) -> None:
    with pytest.raises(ValueError, match=message):
        call()
