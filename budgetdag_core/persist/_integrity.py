"""Structural checks of a loaded model, before anything runs on it.

A policy file (skops or pickle) holds arrays that index each other: a boosting
tree's child and feature indices, the columns of each DAG state, the children of
each node policy. Compiled prediction code trusts them, so a file whose indices
point out of range can crash the process (a segfault, not an exception) or give
silently wrong answers. :func:`check_model_integrity` checks every such array
against the model's own sensor spec and raises ``ValueError`` naming what is
wrong. The loaders in :mod:`budgetdag_core.persist` call it.

Every bank class exposes ``check_integrity(self) -> None`` (``ValueError`` on an
inconsistency); the estimator-level check calls it when the bank has it. The
helpers here (:func:`check_fitted_model`, :func:`check_state_columns`, ...) are
shared by those bank methods.
"""

from __future__ import annotations

from collections.abc import Sequence
from numbers import Integral
from typing import Any

import numpy as np

from ..bank._lgbm_trees import LightGBMTrees

# Deepest filter-tree tournament accepted: log2 of the actions of a node is
# far below this for any DAG the library builds (at most a few hundred actions).
_MAX_TREE_DEPTH = 64


class IntegrityError(ValueError):
    """A model's arrays are inconsistent (a damaged or forged model file)."""


def fail(where: str, what: str) -> IntegrityError:
    """The error for an inconsistency ``what`` found in ``where``."""
    return IntegrityError(f"Invalid model file: {where}: {what}.")


# ------------------------------------------------------------------- basics
def check_int(value: Any, where: str, low: int, high: int | None = None) -> int:
    """``value`` as an int in ``[low, high)`` (``high`` None: no upper bound)."""
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise fail(where, f"expected an integer, got {type(value).__name__}")
    value = int(value)
    if value < low or (high is not None and value >= high):
        bound = f"[{low}, {high})" if high is not None else f">= {low}"
        raise fail(where, f"{value} is out of range {bound}")
    return value


def check_array(
    value: Any,
    where: str,
    *,
    shape: Sequence[int | None] | None = None,
    kind: str | None = None,
    finite: bool = False,
) -> np.ndarray:
    """``value`` as an ndarray of the given shape (None = any length) and dtype kind.

    ``kind`` is a string of accepted ``dtype.kind`` letters (``"iu"``, ``"f"``,
    ``"b"``, ...).
    """
    if not isinstance(value, np.ndarray):
        raise fail(where, f"expected an array, got {type(value).__name__}")
    if shape is not None:
        ok = value.ndim == len(shape) and all(
            want is None or got == want
            for got, want in zip(value.shape, shape, strict=True)
        )
        if not ok:
            wanted = tuple("n" if s is None else s for s in shape)
            raise fail(where, f"shape {value.shape}, expected {wanted}")
    if kind is not None and value.dtype.kind not in kind:
        raise fail(where, f"dtype {value.dtype} is not of kind {kind!r}")
    if finite and value.dtype.kind in "fc" and not np.isfinite(value).all():
        raise fail(where, "holds NaN or infinite values")
    return value


def check_indices(value: Any, where: str, high: int | None) -> np.ndarray:
    """A 1-D integer array with every entry in ``[0, high)`` (None: no bound)."""
    arr = check_array(value, where, shape=(None,), kind="iu")
    top = np.iinfo(np.int64).max if high is None else high
    if arr.size and (arr.min() < 0 or arr.max() >= top):
        bad = arr[(arr < 0) | (arr >= top)][0]
        raise fail(where, f"index {int(bad)} is out of range [0, {high})")
    if len(np.unique(arr)) != len(arr):
        raise fail(where, "repeated indices")
    return arr


def check_state_columns(
    state_columns: Any,
    where: str,
    n_columns: int | None,
    n_states: int | None = None,
) -> list[np.ndarray]:
    """Per state, valid column positions (``n_states`` entries when given).

    ``n_columns`` bounds the positions (None: the caller compares them later).
    """
    if not isinstance(state_columns, list | tuple):
        raise fail(where, f"expected a list, got {type(state_columns).__name__}")
    if n_states is not None and len(state_columns) != n_states:
        raise fail(where, f"{len(state_columns)} states, expected {n_states}")
    return [
        check_indices(cols, f"{where}[{k}]", n_columns)
        for k, cols in enumerate(state_columns)
    ]


def _check_label_codes(classes: Any, where: str, n_classes: int) -> None:
    """A bank model's ``classes_``: distinct encoded labels in ``[0, n_classes)``."""
    arr = np.asarray(classes)
    if arr.ndim != 1 or arr.dtype.kind not in "iuf":
        raise fail(where, "expected a 1-D array of encoded labels")
    if arr.dtype.kind == "f" and not np.array_equal(arr, np.round(arr)):
        raise fail(where, "encoded labels must be whole numbers")
    codes = arr.astype(np.int64) if arr.size else arr
    if arr.size and (codes.min() < 0 or codes.max() >= n_classes):
        raise fail(where, f"label codes outside [0, {n_classes})")
    if len(np.unique(codes)) != len(codes):
        raise fail(where, "repeated labels")


# ----------------------------------------------------- scikit-learn models
def _check_hgb_predictor(predictor: Any, where: str, n_features: int) -> None:
    from sklearn.ensemble._hist_gradient_boosting.common import (
        PREDICTOR_RECORD_DTYPE,
        X_BITSET_INNER_DTYPE,
    )
    from sklearn.ensemble._hist_gradient_boosting.predictor import TreePredictor

    if not isinstance(predictor, TreePredictor):
        raise fail(where, f"expected a TreePredictor, got {type(predictor).__name__}")
    nodes = check_array(predictor.nodes, f"{where}.nodes", shape=(None,))
    if nodes.dtype != PREDICTOR_RECORD_DTYPE:
        raise fail(f"{where}.nodes", f"unexpected node record dtype {nodes.dtype}")
    n_nodes = len(nodes)
    if n_nodes == 0:
        raise fail(f"{where}.nodes", "a tree without nodes")
    for name in ("binned_left_cat_bitsets", "raw_left_cat_bitsets"):
        bits = check_array(getattr(predictor, name, None), f"{where}.{name}")
        if bits.dtype != X_BITSET_INNER_DTYPE or bits.ndim != 2 or bits.shape[1] != 8:
            raise fail(f"{where}.{name}", f"shape {bits.shape}, dtype {bits.dtype}")
    flags = {
        name: nodes[name]
        for name in ("is_leaf", "missing_go_to_left", "is_categorical")
    }
    for name, values in flags.items():
        if (values > 1).any():
            raise fail(f"{where}.nodes['{name}']", "flags must be 0 or 1")
    inner = np.flatnonzero(nodes["is_leaf"] == 0)
    ids = inner.astype(np.int64)
    for side in ("left", "right"):
        child = nodes[side][inner].astype(np.int64)
        # Children come after their parent (pre-order numbering): this bounds
        # every index and rules out cycles, so prediction walks end at a leaf.
        bad = (child <= ids) | (child >= n_nodes)
        if bad.any():
            node = int(inner[bad][0])
            raise fail(
                f"{where}.nodes[{node}]['{side}']",
                f"child index {int(child[bad][0])} is not in ({node}, {n_nodes})",
            )
    feature = nodes["feature_idx"][inner]
    bad = (feature < 0) | (feature >= n_features)
    if bad.any():
        node = int(inner[bad][0])
        raise fail(
            f"{where}.nodes[{node}]['feature_idx']",
            f"feature {int(feature[bad][0])} is out of range [0, {n_features})",
        )
    if (nodes["is_categorical"][inner] != 0).any():
        raise fail(where, "categorical splits are not used by BudgetDAG models")


def _check_hgb(model: Any, where: str, n_features: int, n_classes: int | None) -> None:
    trees = getattr(model, "_predictors", None)
    if not isinstance(trees, list):
        raise fail(f"{where}._predictors", "missing or not a list")
    per_iteration = check_int(
        getattr(model, "n_trees_per_iteration_", None),
        f"{where}.n_trees_per_iteration_",
        1,
    )
    if n_classes is not None:
        classes = getattr(model, "classes_", None)
        _check_label_codes(classes, f"{where}.classes_", n_classes)
        expected = 1 if len(classes) <= 2 else len(classes)
        if per_iteration != expected:
            raise fail(
                f"{where}.n_trees_per_iteration_",
                f"{per_iteration} for {len(classes)} classes (expected {expected})",
            )
    elif per_iteration != 1:
        raise fail(f"{where}.n_trees_per_iteration_", "a regressor grows one tree")
    check_array(
        getattr(model, "_baseline_prediction", None),
        f"{where}._baseline_prediction",
        shape=(1, per_iteration),
        kind="f",
    )
    if getattr(model, "_preprocessor", None) is not None or (
        getattr(model, "is_categorical_", None) is not None
    ):
        raise fail(where, "categorical features are not used by BudgetDAG models")
    # Prediction builds the known-categories bitsets from the bin mapper.
    mapper_flags = getattr(getattr(model, "_bin_mapper", None), "is_categorical_", None)
    if mapper_flags is not None:
        flags = check_array(
            mapper_flags,
            f"{where}._bin_mapper.is_categorical_",
            shape=(n_features,),
            kind="iub",
        )
        if flags.any():
            raise fail(
                f"{where}._bin_mapper.is_categorical_",
                "categorical features are not used by BudgetDAG models",
            )
    for i, iteration in enumerate(trees):
        if not isinstance(iteration, list) or len(iteration) != per_iteration:
            raise fail(f"{where}._predictors[{i}]", f"expected {per_iteration} trees")
        for j, predictor in enumerate(iteration):
            _check_hgb_predictor(
                predictor, f"{where}._predictors[{i}][{j}]", n_features
            )


def _check_sklearn_tree(tree: Any, where: str, n_features: int) -> None:
    """A fitted ``sklearn.tree._tree.Tree``: children after parents, features ok."""
    from sklearn.tree._tree import TREE_LEAF, Tree

    if not isinstance(tree, Tree):
        raise fail(where, f"expected a Tree, got {type(tree).__name__}")
    if tree.n_features != n_features:
        raise fail(where, f"{tree.n_features} features, expected {n_features}")
    n_nodes = tree.node_count
    left, right = tree.children_left, tree.children_right
    leaf = left == TREE_LEAF
    if ((right == TREE_LEAF) != leaf).any():
        raise fail(where, "a node with one child")
    ids = np.arange(n_nodes)
    for side, child in (("children_left", left), ("children_right", right)):
        bad = ~leaf & ((child <= ids) | (child >= n_nodes))
        if bad.any():
            raise fail(
                f"{where}.{side}[{int(ids[bad][0])}]", "child index out of range"
            )
    feature = tree.feature[~leaf]
    if feature.size and (feature.min() < 0 or feature.max() >= n_features):
        raise fail(f"{where}.feature", f"feature index out of range [0, {n_features})")


def _check_lgbm_trees(
    model: Any, where: str, n_features: int | None, n_classes: int | None
) -> None:
    """The bank's LightGBM trees: their own node checks, width and classes."""
    try:
        model.check_integrity()
    except (ValueError, TypeError, AttributeError, IndexError) as exc:
        raise fail(where, f"{type(exc).__name__}: {exc}") from None
    seen = getattr(model, "n_features_in_", None)
    if n_features is not None and seen != n_features:
        raise fail(where, f"{seen} input features, expected {n_features}")
    if n_classes is not None:
        _check_label_codes(model.classes_, f"{where}.classes_", n_classes)


def check_fitted_model(
    model: Any, where: str, n_features: int | None, n_classes: int | None = None
) -> None:
    """A fitted scikit-learn model of a bank: inputs, classes, tree indices.

    ``n_features`` is the width of the input the bank gives it (None: unknown,
    e.g. after a pipeline step that adds columns); ``n_classes`` the number of
    encoded labels of a classifier (None for a regressor). Pipelines are
    checked step by step; gradient-boosting and decision trees get their node
    arrays checked.
    """
    from sklearn.dummy import DummyClassifier, DummyRegressor
    from sklearn.ensemble import (
        HistGradientBoostingClassifier,
        HistGradientBoostingRegressor,
    )
    from sklearn.pipeline import Pipeline

    if model is None:
        raise fail(where, "missing model")
    if isinstance(model, list):  # cross-fitted: the fold models, averaged
        if not model:
            raise fail(where, "an empty list of fold models")
        for f, member in enumerate(model):
            check_fitted_model(member, f"{where}[{f}]", n_features, n_classes)
        return
    if isinstance(model, LightGBMTrees):
        _check_lgbm_trees(model, where, n_features, n_classes)
        return
    if isinstance(model, Pipeline):
        steps = getattr(model, "steps", None)
        if not isinstance(steps, list) or not steps:
            raise fail(f"{where}.steps", "expected a non-empty list")
        width = n_features
        for name, step in steps[:-1]:
            check_fitted_model(step, f"{where}[{name!r}]", width)
            width = _output_width(step)
        check_fitted_model(steps[-1][1], f"{where}[{steps[-1][0]!r}]", width, n_classes)
        return
    seen = getattr(model, "n_features_in_", None)
    if n_features is not None and seen is not None and seen != n_features:
        raise fail(where, f"{seen} input features, expected {n_features}")
    # scikit-learn checks inputs against n_features_in_ before predicting.
    width = n_features if n_features is not None else seen
    if n_classes is not None and hasattr(model, "classes_"):
        _check_label_codes(model.classes_, f"{where}.classes_", n_classes)
    if isinstance(
        model, HistGradientBoostingClassifier | HistGradientBoostingRegressor
    ):
        if not isinstance(width, Integral):
            raise fail(where, "unknown number of input features")
        _check_hgb(model, where, int(width), n_classes)
    elif isinstance(model, DummyClassifier):
        prior = check_array(
            getattr(model, "class_prior_", None), f"{where}.class_prior_", kind="f"
        )
        if prior.shape != np.shape(model.classes_):
            raise fail(f"{where}.class_prior_", "one prior per class expected")
    elif isinstance(model, DummyRegressor):
        check_array(getattr(model, "constant_", None), f"{where}.constant_", kind="f")
    trees = []
    if getattr(model, "tree_", None) is not None:
        trees.append((f"{where}.tree_", model.tree_))
    members = getattr(model, "estimators_", None)
    if isinstance(members, list | np.ndarray):
        for i, member in enumerate(np.ravel(np.asarray(members, dtype=object))):
            if getattr(member, "tree_", None) is not None:
                trees.append((f"{where}.estimators_[{i}].tree_", member.tree_))
    for tree_where, tree in trees:
        if not isinstance(width, Integral):
            raise fail(where, "unknown number of input features")
        _check_sklearn_tree(tree, tree_where, int(width))
    coef = getattr(model, "coef_", None)
    if isinstance(width, Integral) and isinstance(coef, np.ndarray) and coef.ndim:
        if coef.ndim > 2 or coef.shape[-1] != width:
            raise fail(f"{where}.coef_", f"shape {coef.shape}, {width} inputs")


def _output_width(step: Any) -> int | None:
    """Columns a fitted pipeline step outputs, when it says (else None)."""
    try:
        return len(step.get_feature_names_out())
    except Exception:  # steps without feature names: width unknown
        return None


def check_classifier_bank(bank: Any, where: str = "bank_") -> list[np.ndarray]:
    """What every classifier bank holds: state columns, classes, temperatures,
    and any out-of-fold probabilities. Returns the state columns."""
    n_classes = check_int(getattr(bank, "n_classes_", None), f"{where}.n_classes_", 1)
    n_columns = getattr(bank, "n_columns_", None)  # banks saved before it: None
    if n_columns is not None:
        n_columns = check_int(n_columns, f"{where}.n_columns_", 1)
    state_columns = check_state_columns(
        getattr(bank, "state_columns_", None), f"{where}.state_columns_", n_columns
    )
    n_states = len(state_columns)
    if n_states == 0 or len(state_columns[0]):
        raise fail(f"{where}.state_columns_", "state 0 must be the empty state")
    check_temperatures(bank, where, n_states)
    oof = getattr(bank, "oof_proba_", None)
    if oof is not None:
        check_array(
            oof, f"{where}.oof_proba_", shape=(None, n_states, n_classes), kind="f"
        )
    return state_columns


def check_temperatures(bank: Any, where: str, n_states: int) -> None:
    """A bank's calibration temperatures: one finite positive value per state."""
    temperatures = getattr(bank, "temperatures_", None)
    if temperatures is None:  # banks pickled before calibration existed
        return
    arr = check_array(
        temperatures, f"{where}.temperatures_", shape=(n_states,), kind="f", finite=True
    )
    if (arr <= 0).any():
        raise fail(f"{where}.temperatures_", "temperatures must be positive")


# ---------------------------------------------------------------- policies
def _check_scaler(scaler: Any, where: str, width: int) -> None:
    """A fitted StandardScaler of ``width`` columns with finite, non-zero scales."""
    from sklearn.preprocessing import StandardScaler

    if not isinstance(scaler, StandardScaler):
        raise fail(where, "expected a fitted StandardScaler")
    check_array(scaler.mean_, f"{where}.mean_", shape=(width,), kind="f")
    scale = check_array(
        scaler.scale_, f"{where}.scale_", shape=(width,), kind="f", finite=True
    )
    if (scale == 0).any():
        raise fail(f"{where}.scale_", "zero scale")


def _check_policy_features(features: Any, where: str, n_inputs: int) -> int:
    """A fitted PolicyFeatures; returns its output width."""
    from sklearn.preprocessing import PolynomialFeatures

    from ..reductions._base import PolicyFeatures

    if not isinstance(features, PolicyFeatures):
        raise fail(where, f"expected PolicyFeatures, got {type(features).__name__}")
    degree = check_int(getattr(features, "degree_", None), f"{where}.degree_", 1, 4)
    _check_scaler(getattr(features, "inner_", None), f"{where}.inner_", n_inputs)
    poly = getattr(features, "poly_", None)
    if degree == 1:
        if poly is not None:
            raise fail(f"{where}.poly_", "a degree-1 map has no expansion")
        width = n_inputs
    else:
        if not isinstance(poly, PolynomialFeatures):
            raise fail(f"{where}.poly_", "expected a fitted PolynomialFeatures")
        if poly.n_features_in_ != n_inputs or poly.degree != degree:
            raise fail(f"{where}.poly_", "inputs or degree differ from the map's")
        if poly.include_bias or poly.interaction_only:
            raise fail(f"{where}.poly_", "unexpected expansion settings")
        width = len(poly.powers_)
        if poly.n_output_features_ != width:
            raise fail(f"{where}.poly_", "output width differs from its powers")
    _check_scaler(getattr(features, "outer_", None), f"{where}.outer_", width)
    return width


def _check_linear(model: Any, where: str, n_outputs: int, width: int) -> None:
    check_array(
        getattr(model, "coef_", None),
        f"{where}.coef_",
        shape=(n_outputs, width),
        kind="f",
    )
    check_array(
        np.atleast_1d(getattr(model, "intercept_", None)),
        f"{where}.intercept_",
        shape=(n_outputs,),
        kind="f",
    )


def _check_tree_node(
    node: Any, where: str, n_actions: int, width: int, leaves: list[int], depth: int
) -> None:
    from sklearn.linear_model import LogisticRegression

    from ..reductions._filter_tree import _Node

    if isinstance(node, Integral) and not isinstance(node, bool):
        leaves.append(check_int(node, where, 0, n_actions))
        return
    if not isinstance(node, _Node):
        raise fail(where, f"expected a tree node, got {type(node).__name__}")
    if depth > _MAX_TREE_DEPTH:
        raise fail(where, "the tournament tree is too deep (a cycle?)")
    if node.model is not None:
        if not isinstance(node.model, LogisticRegression):
            raise fail(f"{where}.model", f"unexpected {type(node.model).__name__}")
        _check_linear(node.model, f"{where}.model", 1, width)
    if node.folded is not None:
        a, U, b = _unpack_folded(node.folded, f"{where}.folded")
        n_inputs = len(a)
        check_array(a, f"{where}.folded[0]", shape=(n_inputs,), kind="f")
        if U is not None:
            check_array(U, f"{where}.folded[1]", shape=(n_inputs, n_inputs), kind="f")
        if not isinstance(b, float | np.floating):
            raise fail(f"{where}.folded[2]", "expected a number")
    _check_tree_node(node.left, f"{where}.left", n_actions, width, leaves, depth + 1)
    _check_tree_node(node.right, f"{where}.right", n_actions, width, leaves, depth + 1)


def _unpack_folded(folded: Any, where: str) -> tuple[Any, Any, Any]:
    if not isinstance(folded, tuple | list) or len(folded) != 3:
        raise fail(where, "expected (a, U, b)")
    a, U, b = folded
    if not isinstance(a, np.ndarray):
        raise fail(where, "expected an array of linear coefficients")
    return a, U, b


def check_learner(learner: Any, where: str, n_actions: int, n_inputs: int) -> None:
    """A node's fitted cost-sensitive learner: actions, inputs, inner models."""
    from ..graph_reduce import ConstantAction
    from ..reductions._cost_regression import CostRegression
    from ..reductions._filter_tree import FilterTree

    if isinstance(learner, ConstantAction):
        check_int(learner.action, f"{where}.action", 0, n_actions)
        if learner.n_actions != n_actions:
            raise fail(
                f"{where}.n_actions", f"{learner.n_actions}, expected {n_actions}"
            )
        return
    if not isinstance(learner, FilterTree | CostRegression):
        return  # a user's own learner (pickles only): its internals are its own
    if learner.n_actions_ != n_actions:
        raise fail(f"{where}.n_actions_", f"{learner.n_actions_}, expected {n_actions}")
    if learner.constant_ is not None:
        check_int(learner.constant_, f"{where}.constant_", 0, n_actions)
        return
    if n_inputs == 0:
        raise fail(where, "a learned policy at a node without inputs")
    width = _check_policy_features(learner.features_, f"{where}.features_", n_inputs)
    if isinstance(learner, CostRegression):
        _check_linear(learner.model_, f"{where}.model_", n_actions, width)
        return
    leaves: list[int] = []
    _check_tree_node(learner.tree_, f"{where}.tree_", n_actions, width, leaves, 0)
    if sorted(leaves) != list(range(n_actions)):
        raise fail(f"{where}.tree_", "the tournament does not hold every action once")
    for node_where, a in _folded_widths(learner.tree_, f"{where}.tree_"):
        if a != n_inputs:
            raise fail(node_where, f"{a} folded inputs, expected {n_inputs}")


def _folded_widths(node: Any, where: str) -> list[tuple[str, int]]:
    if isinstance(node, Integral):
        return []
    out = []
    if node.folded is not None:
        out.append((f"{where}.folded", len(node.folded[0])))
    return (
        out
        + _folded_widths(node.left, f"{where}.left")
        + _folded_widths(node.right, f"{where}.right")
    )


# --------------------------------------------------------------- estimator
def _check_dag(model: Any, n_sensors: int, names: list[str]) -> Any:
    import networkx as nx

    from ..dag import SensorDAG

    dag = getattr(model, "sensor_dag_", None)
    if not isinstance(dag, SensorDAG):
        raise fail("sensor_dag_", "missing or not a SensorDAG")
    if list(dag.sensor_names) != names:
        raise fail("sensor_dag_.sensor_names", "differ from the sensor spec's names")
    units = dag.units
    if not isinstance(units, list | tuple) or not units:
        raise fail("sensor_dag_.units", "expected a non-empty list")
    for j, unit in enumerate(units):
        if not isinstance(unit, list | tuple) or not unit:
            raise fail(f"sensor_dag_.units[{j}]", "expected a non-empty tuple")
        for i in unit:
            check_int(i, f"sensor_dag_.units[{j}]", 0, n_sensors)
    # Everything else follows from the names and units: rebuild and compare.
    fresh = SensorDAG(names, [list(u) for u in units])
    if list(dag.states) != fresh.states:
        raise fail("sensor_dag_.states", "do not match the DAG of its units")
    if [list(map(tuple, c)) for c in dag.children] != [list(c) for c in fresh.children]:
        raise fail("sensor_dag_.children", "do not match the DAG of its units")
    if getattr(dag, "index", None) != fresh.index or list(
        getattr(dag, "unit_masks", [])
    ) != list(fresh.unit_masks):
        raise fail("sensor_dag_", "its state index or unit masks are inconsistent")
    graph = getattr(model, "dag_", None)
    if not isinstance(graph, nx.DiGraph):
        raise fail("dag_", "missing or not a networkx DiGraph")
    if sorted(graph.nodes) != list(range(fresh.n_states)) or {
        (k, c) for k, kids in enumerate(fresh.children) for _, c in kids
    } != set(graph.edges):
        raise fail("dag_", "its nodes or edges differ from the sensor DAG")
    return fresh


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


def check_model_integrity(model: Any) -> None:
    """Check a fitted BudgetDAG model's arrays against each other and its spec.

    Checked: the sensor spec and feature columns; the DAG (rebuilt from its
    units and compared); each state's columns; each node policy (its state,
    children, input width, actions, and the arrays of its filter tree or cost
    regression); ``classes_``; and the bank through its ``check_integrity``
    (every model's inputs and classes, every boosting tree's child, feature and
    threshold-bin indices, calibration temperatures).

    Parameters
    ----------
    model : BudgetDAGClassifier or BudgetDAGRegressor

    Raises
    ------
    ValueError
        Naming the first attribute found inconsistent.
    """
    try:
        _check_model(model)
    except IntegrityError:
        raise
    except Exception as exc:  # an attribute missing or of an unexpected type
        raise fail(
            type(model).__name__, f"unusable ({type(exc).__name__}: {exc})"
        ) from exc


def _check_model(model: Any) -> None:
    from ..estimator._classifier import BudgetDAGClassifier
    from ..estimator._regressor import BudgetDAGRegressor
    from ..sensors import SensorSpec

    if not isinstance(model, BudgetDAGClassifier | BudgetDAGRegressor):
        raise fail(
            "model", f"expected a BudgetDAG estimator, got {type(model).__name__}"
        )
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
    if model.n_features_in_ != n_columns or list(model.feature_names_in_) != columns:
        raise fail("feature_names_in_", "differ from the sensor spec's columns")
    n_classes = _check_classes(model)
    dag = _check_dag(model, n_sensors, names)
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
    if bank.n_states != K:
        raise fail("bank_", f"{bank.n_states} states, the DAG has {K}")
    for k, (got, want) in enumerate(zip(bank.state_columns_, expected, strict=True)):
        if not np.array_equal(got, want):
            raise fail(f"bank_.state_columns_[{k}]", "differ from the state's sensors")
    if n_classes is not None and getattr(bank, "n_classes_", n_classes) != n_classes:
        raise fail("bank_.n_classes_", f"{bank.n_classes_}, expected {n_classes}")
    if n_classes is not None and model.loss_matrix is not None:
        model._check_loss_matrix(n_classes)


def _check_policies(model: Any, dag: Any, state_columns: list[np.ndarray]) -> None:
    from ..graph_reduce import NodePolicy

    policies = getattr(model, "policies_", None)
    if not isinstance(policies, list) or len(policies) != dag.n_states:
        raise fail("policies_", f"expected a list of {dag.n_states} node policies")
    from ..estimator._inputs import policy_input_width

    uses_confidence = getattr(model, "_uses_confidence", lambda k: False)
    features = getattr(model, "policy_features", "sensors")
    n_classes = len(getattr(model, "classes_", ()))
    for k, policy in enumerate(policies):
        where = f"policies_[{k}]"
        if not isinstance(policy, NodePolicy):
            raise fail(where, f"expected a NodePolicy, got {type(policy).__name__}")
        if policy.state != k:
            raise fail(f"{where}.state", f"{policy.state}, expected {k}")
        children = [tuple(c) for c in policy.children]
        if children != list(dag.children[k]):
            raise fail(f"{where}.children", "differ from the DAG's")
        n_inputs = len(state_columns[k])
        if uses_confidence(k):
            n_inputs = policy_input_width(n_inputs, n_classes, features)
        n_actions = 1 + len(children)
        if policy.learner is None:
            if children:
                raise fail(where, "a node with children has no learned policy")
            continue
        if policy.n_features != n_inputs:
            raise fail(
                f"{where}.n_features", f"{policy.n_features}, expected {n_inputs}"
            )
        check_learner(policy.learner, f"{where}.learner", n_actions, n_inputs)
