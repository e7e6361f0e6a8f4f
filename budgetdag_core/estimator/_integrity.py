"""The estimators' structural check: a loaded model's parts against each other.

Each part checks its own arrays (the DAG, every node policy, the bank); this
check hands each the sizes the rest of the model implies (the spec's sensors
and columns, the DAG's states and children, each policy's input width, the
classes) and compares what the parts share.
"""

from __future__ import annotations

from typing import Any

import networkx as nx
import numpy as np

from .._integrity import check_array, check_state_columns, fail
from ..dag import SensorDAG
from ..decisions import check_loss_matrix
from ..graph_reduce import NodePolicy
from ..sensors import SensorSpec
from ..strategies import ALL_STRATEGIES, StrategyBanks, strategy_name


def check_estimator(model: Any) -> None:
    """Raise ``ValueError`` naming the first attribute of ``model`` (a fitted
    BudgetDAG estimator) found inconsistent."""
    spec = getattr(model, "spec_", None)
    if not isinstance(spec, SensorSpec):
        raise fail("spec_", "missing or not a SensorSpec")
    try:
        spec.check()  # a loaded spec was not built through its constructor
    except ValueError as exc:
        raise fail("spec_", str(exc).rstrip(".")) from None
    try:
        names, columns = list(spec.names), list(spec.columns)
        sensor_columns = spec.column_indices()
    except Exception as exc:
        raise fail("spec_", f"unusable ({type(exc).__name__}: {exc})") from None
    n_columns, n_sensors = len(columns), len(names)
    if n_sensors == 0 or not all(isinstance(c, str) for c in columns):
        raise fail("spec_", "expected sensors with string column names")
    # feature_names_in_ is set after a fit on a table only (scikit-learn's).
    names_in = list(getattr(model, "feature_names_in_", columns))
    if model.n_features_in_ != n_columns or names_in != columns:
        raise fail("feature_names_in_", "differ from the sensor spec's columns")
    n_classes = _check_classes(model)
    dag = _check_dag(model, names)
    K = dag.n_states
    state_columns = check_state_columns(
        model.state_columns_, "state_columns_", n_columns, K
    )
    expected = dag.state_columns(sensor_columns)
    for k, (got, want) in enumerate(zip(state_columns, expected, strict=True)):
        if not np.array_equal(got, want):
            raise fail(f"state_columns_[{k}]", "differ from the state's sensors")
    _check_policies(model, dag, state_columns)
    bank = getattr(model, "bank_", None)
    if bank is None:
        raise fail("bank_", "missing")
    check = getattr(bank, "check_integrity", None)
    if check is not None:
        check()
    _check_strategy(model)
    if bank.n_states != K:
        raise fail("bank_", f"{bank.n_states} states, the DAG has {K}")
    for k, (got, want) in enumerate(zip(bank.state_columns_, expected, strict=True)):
        if not np.array_equal(got, want):
            raise fail(f"bank_.state_columns_[{k}]", "differ from the state's sensors")
    if n_classes is not None and getattr(bank, "n_classes_", n_classes) != n_classes:
        raise fail("bank_.n_classes_", f"{bank.n_classes_}, expected {n_classes}")
    if n_classes is not None and model.loss_matrix is not None:
        check_loss_matrix(model.loss_matrix, n_classes)


def _check_strategy(model: Any) -> None:
    """The strategy is one of the known ones; the validation numbers (where
    kept) chose it; the candidates (where kept) hold the bank."""
    strategy = getattr(model, "strategy_", None)
    if strategy not in ALL_STRATEGIES:
        raise fail("strategy_", f"expected one of {list(ALL_STRATEGIES)}")
    saved = getattr(model, "strategy_validation_", None)
    if saved is not None and not (
        isinstance(saved, dict)
        and isinstance(saved.get("strategy"), str)
        and strategy_name(saved["strategy"]) == strategy
    ):
        raise fail("strategy_validation_", "does not match strategy_")
    banks = getattr(model, "strategy_banks_", None)
    if banks is not None and not (
        isinstance(banks, StrategyBanks) and banks.key_of(model.bank_) is not None
    ):
        raise fail("strategy_banks_", "expected the candidates that hold bank_")


def _check_dag(model: Any, names: list[str]) -> SensorDAG:
    """The model's sensor DAG (checked by itself) and its networkx graph."""
    dag = getattr(model, "sensor_dag_", None)
    if not isinstance(dag, SensorDAG):
        raise fail("sensor_dag_", "missing or not a SensorDAG")
    dag.check_integrity("sensor_dag_", names)
    graph = getattr(model, "dag_", None)
    if not isinstance(graph, nx.DiGraph):
        raise fail("dag_", "missing or not a networkx DiGraph")
    if sorted(graph.nodes) != list(range(dag.n_states)) or {
        (k, c) for k, kids in enumerate(dag.children) for _, c in kids
    } != set(graph.edges):
        raise fail("dag_", "its nodes or edges differ from the sensor DAG")
    return dag


def _check_classes(model: Any) -> int | None:
    classes = getattr(model, "classes_", None)
    if classes is None:
        return None
    arr = check_array(classes, "classes_", shape=(None,))
    if len(arr) == 0:
        raise fail("classes_", "no classes")
    if arr.dtype.kind in "fc" and not np.isfinite(arr).all():
        raise fail("classes_", "holds NaN or infinite values")
    try:
        unique = np.unique(arr)
    except TypeError:
        raise fail("classes_", "labels of types that cannot be ordered") from None
    if len(unique) != len(arr) or not np.array_equal(unique, arr):
        raise fail("classes_", "expected sorted distinct labels")
    return len(arr)


def _check_policies(
    model: Any, dag: SensorDAG, state_columns: list[np.ndarray]
) -> None:
    policies = getattr(model, "policies_", None)
    if not isinstance(policies, list) or len(policies) != dag.n_states:
        raise fail("policies_", f"expected a list of {dag.n_states} node policies")
    for name in ("value_states_", "route_states_"):
        states = getattr(model, name, None)
        if states is not None:
            check_array(states, name, shape=(dag.n_states,), kind="b")
    inputs = model.inputs_
    for k, policy in enumerate(policies):
        where = f"policies_[{k}]"
        if not isinstance(policy, NodePolicy):
            raise fail(where, f"expected a NodePolicy, got {type(policy).__name__}")
        policy.check_integrity(where, k, dag.children[k], inputs.width(k))
