"""Structural checks of the banks' fitted models (scikit-learn and LightGBM).

The banks' ``check_integrity`` methods call these on a loaded bank: every
model's input width and classes, and every boosting or decision tree's node
arrays (children after parents, feature indices in range), which scikit-learn's
compiled predictors index without bounds checks.
"""

from __future__ import annotations

from numbers import Integral
from typing import Any

import numpy as np

from .._integrity import check_array, check_int, check_state_columns, fail
from ._encoded import MaskEncodedClassifier
from ._lgbm_trees import LightGBMTrees


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


def _check_encoded(
    model: MaskEncodedClassifier,
    where: str,
    n_features: int | None,
    n_classes: int | None,
) -> None:
    """A mask-encoded model: its layers chain, its width and classes."""
    try:
        model.check_integrity()
    except (ValueError, TypeError, AttributeError) as exc:
        raise fail(where, f"{type(exc).__name__}: {exc}") from None
    if n_features is not None and model.n_features_in_ != n_features:
        seen = model.n_features_in_
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
    if isinstance(model, MaskEncodedClassifier):
        _check_encoded(model, where, n_features, n_classes)
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
