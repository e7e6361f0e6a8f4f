"""Consistency checks of fitted banks: arrays that index each other, and trees.

skops checks the *types* in a model file, not the *values*: an allow-listed tree
whose child index points past its node array reads out of bounds (or loops) at
predict time. :func:`check_bank_arrays` and :func:`check_model` validate what
indexes what, so a bank's ``check_integrity`` can refuse a tampered file with a
``ValueError`` naming the inconsistency before anything predicts with it.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def _fail(where: str, what: str) -> None:
    raise ValueError(f"Inconsistent classifier bank: {where}: {what}.")


def _check_shape(value: Any, shape: tuple[int, ...], where: str) -> None:
    got = np.shape(value)
    if got != shape:
        _fail(where, f"shape {got}, expected {shape}")


def check_bank_arrays(bank: Any) -> None:
    """The per-state arrays of a classifier bank agree with each other.

    ``state_columns_`` index the training columns; ``models_``,
    ``temperatures_`` and the calibration errors have one entry per state;
    ``oof_proba_`` (when kept) is (n_rows, n_states, n_classes_).
    """
    columns = bank.state_columns_
    K = len(columns)
    n_classes = int(bank.n_classes_)
    if n_classes < 1:
        _fail("n_classes_", f"{n_classes} is not a positive class count")
    n_columns = getattr(bank, "n_columns_", None)
    for k, cols in enumerate(columns):
        cols = np.asarray(cols)
        if cols.ndim != 1 or (cols.size and cols.dtype.kind not in "iu"):
            _fail(f"state_columns_[{k}]", "not a 1-D integer array")
        if cols.size and (
            cols.min() < 0 or (n_columns is not None and cols.max() >= n_columns)
        ):
            _fail(
                f"state_columns_[{k}]",
                f"column index out of range [0, {n_columns}): {cols.tolist()}",
            )
    if len(bank.models_) != K:
        _fail("models_", f"{len(bank.models_)} models for {K} states")
    for name in ("temperatures_", "oof_ece_raw_", "oof_ece_"):
        if hasattr(bank, name):
            _check_shape(getattr(bank, name), (K,), name)
    temperatures = np.asarray(getattr(bank, "temperatures_", np.ones(K)), dtype=float)
    if not (np.isfinite(temperatures).all() and (temperatures > 0).all()):
        _fail("temperatures_", "not all finite and positive")
    if hasattr(bank, "oof_proba_"):
        n = len(bank.oof_proba_)
        _check_shape(bank.oof_proba_, (n, K, n_classes), "oof_proba_")


def _check_classes(model: Any, n_classes: int, where: str) -> None:
    classes = getattr(model, "classes_", None)
    if classes is None:
        return
    classes = np.asarray(classes)
    if classes.dtype.kind not in "iu" or (
        classes.size and (classes.min() < 0 or classes.max() >= n_classes)
    ):
        _fail(where, f"classes_ {classes.tolist()} outside 0..{n_classes - 1}")


def _check_hgb(model: Any, where: str) -> None:
    """Trees of a HistGradientBoosting model: children, features and bins."""
    n_features = int(model.n_features_in_)
    per_iter = int(model.n_trees_per_iteration_)
    for i, trees in enumerate(model._predictors):
        if len(trees) != per_iter:
            _fail(where, f"iteration {i} has {len(trees)} trees, not {per_iter}")
        for t, predictor in enumerate(trees):
            _check_hgb_nodes(predictor, n_features, f"{where} iteration {i} tree {t}")
    baseline = np.asarray(model._baseline_prediction)
    if baseline.size != per_iter:
        _fail(where, f"baseline of size {baseline.size}, expected {per_iter}")


def _check_hgb_nodes(predictor: Any, n_features: int, where: str) -> None:
    nodes = predictor.nodes
    n = len(nodes)
    if n == 0:
        _fail(where, "no nodes")
    inner = np.flatnonzero(nodes["is_leaf"] == 0)
    if inner.size == 0:
        return
    for side in ("left", "right"):
        child = nodes[side][inner].astype(np.int64)
        # Children come after their parent: in range and no cycles.
        if (child <= inner).any() or (child >= n).any():
            _fail(where, f"{side} child index out of range (tree of {n} nodes)")
    feature = nodes["feature_idx"][inner].astype(np.int64)
    if feature.min() < 0 or feature.max() >= n_features:
        _fail(where, f"feature index out of range [0, {n_features})")
    categorical = nodes["is_categorical"][inner].astype(bool)
    if categorical.any():
        bitsets = np.asarray(predictor.raw_left_cat_bitsets)
        idx = nodes["bitset_idx"][inner][categorical].astype(np.int64)
        if idx.min() < 0 or idx.max() >= len(bitsets):
            _fail(where, "categorical bitset index out of range")


def _check_sklearn_tree(tree: Any, n_features: int, where: str) -> None:
    n = int(tree.node_count)
    left, right = np.asarray(tree.children_left), np.asarray(tree.children_right)
    feature = np.asarray(tree.feature)
    if not (len(left) == len(right) == len(feature) == n):
        _fail(where, f"node arrays of different lengths for {n} nodes")
    inner = np.flatnonzero(left != -1)
    for side, child in (("left", left), ("right", right)):
        c = child[inner]
        if (c <= inner).any() or (c >= n).any():
            _fail(where, f"{side} child index out of range (tree of {n} nodes)")
    if inner.size and (feature[inner].min() < 0 or feature[inner].max() >= n_features):
        _fail(where, f"feature index out of range [0, {n_features})")


def check_model(model: Any, n_features: int, n_classes: int, where: str) -> None:
    """A bank's fitted classifier reads ``n_features`` columns and knows its trees.

    Covers LightGBMTrees, HistGradientBoosting, scikit-learn trees and tree
    ensembles, and pipelines; for other models only ``n_features_in_`` and
    ``classes_``.
    """
    seen = getattr(model, "n_features_in_", None)
    if seen is not None and int(seen) != n_features:
        _fail(where, f"fitted on {seen} columns, the state has {n_features}")
    _check_classes(model, n_classes, where)
    if hasattr(model, "_predictors"):
        _check_hgb(model, where)
    if hasattr(model, "num_leaves_") and hasattr(model, "check_integrity"):
        try:
            model.check_integrity()
        except ValueError as exc:
            _fail(where, str(exc))
    if hasattr(model, "tree_"):
        _check_sklearn_tree(model.tree_, n_features, where)
    for i, sub in enumerate(getattr(model, "estimators_", None) or []):
        for j, est in enumerate(np.ravel(np.asarray(sub, dtype=object))):
            if hasattr(est, "tree_"):
                _check_sklearn_tree(est.tree_, n_features, f"{where} estimator {i}.{j}")
    coef = getattr(model, "coef_", None)
    if coef is not None and np.shape(coef)[-1] != n_features:
        _fail(where, f"coef_ of shape {np.shape(coef)} for {n_features} columns")
