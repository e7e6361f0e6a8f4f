"""LightGBM boosting kept as validated numpy arrays (safe to store with skops).

LightGBM trains about three times faster than scikit-learn's
HistGradientBoosting on the bank's small per-state problems, but its models are
C++ objects rebuilt from a text format: a malformed model string could crash the
parser. :class:`LightGBMTrees` therefore keeps only plain arrays per tree (split
feature, threshold, decision type, children, leaf values), checks that they
index each other consistently (:meth:`LightGBMTrees.check_integrity`), and
scores rows itself with compiled kernels over those arrays
(:mod:`~budgetdag_core.bank._tree_kernels`, LightGBM's decision rules, about four
times faster than LightGBM's predictor here). LightGBM only trains: a saved
model is never parsed by it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin

from .._compiled import before_call
from ..validation import int_seed
from ._row_order import (
    rows_in_order,
    scored_in_order,
    similar_rows_order,
    worth_sorting,
)
from ._tree_kernels import add_scores, add_state_scores, softmax_rows

# decision_type bits: 1 categorical (never produced: no categorical features),
# 2 default-left, bits 2-3 missing type (0 none, 1 zero, 2 NaN).
_ALLOWED_DECISIONS = frozenset({0, 2, 4, 6, 8, 10})
_TREE_KEYS = (
    "split_feature",
    "threshold",
    "decision_type",
    "left_child",
    "right_child",
)


#: LightGBM bins every |x| <= 1e-35 (its kZeroThreshold) as zero: a column whose
#: values are all that small is constant to it. Columns whose largest |x| is
#: below this bound are scaled by a power of two for training (exact in
#: floating point) and the thresholds scaled back, so the stored trees compare
#: the raw values; other columns, all of normal data, are left as they are.
_TINY_COLUMN = 1e-20


def _tiny_column_exponents(X: np.ndarray) -> np.ndarray | None:
    """Per column, the power of two that brings a column of tiny values to
    [0.5, 1) (0 for the others), or None when no column is tiny."""
    with np.errstate(invalid="ignore"):
        top = np.nanmax(np.abs(X), axis=0, initial=0.0)
    tiny = (top > 0) & (top < _TINY_COLUMN)
    if not tiny.any():
        return None
    return np.where(tiny, -np.frexp(top)[1], 0).astype(np.int64)


def _rescale_tiny_columns(
    X: np.ndarray, X_val: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None]:
    """``X`` and ``X_val`` (float) with tiny columns brought to [0.5, 1) by
    :func:`_tiny_column_exponents`, and those exponents (None: none tiny)."""
    X = np.asarray(X, dtype=float)
    exponents = _tiny_column_exponents(X) if len(X) else None
    if exponents is not None:
        X = np.ldexp(X, exponents)
        if X_val is not None:
            X_val = np.ldexp(np.asarray(X_val, dtype=float), exponents)
    return X, X_val, exponents


def _fail(what: str) -> None:
    raise ValueError(f"Inconsistent LightGBM trees: {what}.")


class LightGBMTrees(ClassifierMixin, BaseEstimator):
    """Gradient-boosted trees trained by LightGBM, stored as numpy arrays.

    Parameters
    ----------
    learning_rate : float, default=0.2
    max_iter : int, default=100
        Boosting rounds at most.
    num_leaves : int, default=31
    min_child_samples : int, default=20
    l2_regularization : float, default=1.0
    early_stopping : bool, default=True
        Stop when the validation log loss has not improved for
        ``n_iter_no_change`` rounds. The validation rows are ``X_val``/``y_val``
        when given to :meth:`fit` (the bank passes the fold's held-out rows),
        else a stratified ``validation_fraction`` of the training rows.
    validation_fraction : float, default=0.1
    n_iter_no_change : int, default=10
    max_bins : int, default=255
        Histogram bins per feature (LightGBM's ``max_bin``).
    random_state : int or None

    Attributes
    ----------
    classes_ : ndarray
    n_features_in_ : int
    n_iter_ : int
        Rounds kept (the best round with early stopping).
    n_trees_per_iteration_ : int
        1 for two classes (a logit), else the number of classes.
    num_leaves_ : ndarray (n_trees,)
    node_offsets_, leaf_offsets_ : ndarray (n_trees + 1,)
        Where each tree's nodes and leaves start in the flat arrays below.
    split_feature_, threshold_, decision_type_, left_child_, right_child_ :
        ndarray (n_nodes,)
        Internal nodes in LightGBM's encoding: a child ``c >= 0`` is a node of
        the same tree, ``c < 0`` the leaf ``~c``.
    leaf_value_ : ndarray (n_leaves,)
    """

    def __init__(
        self,
        *,
        learning_rate: float = 0.2,
        max_iter: int = 100,
        num_leaves: int = 31,
        min_child_samples: int = 20,
        l2_regularization: float = 1.0,
        early_stopping: bool = True,
        validation_fraction: float = 0.1,
        n_iter_no_change: int = 10,
        max_bins: int = 255,
        random_state: int | None = None,
    ) -> None:
        self.learning_rate = learning_rate
        self.max_iter = max_iter
        self.num_leaves = num_leaves
        self.min_child_samples = min_child_samples
        self.l2_regularization = l2_regularization
        self.early_stopping = early_stopping
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change
        self.max_bins = max_bins
        self.random_state = random_state

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        return tags

    # ------------------------------------------------------------------ fit
    def fit(
        self,
        X: np.ndarray,
        y: np.ndarray,
        X_val: np.ndarray | None = None,
        y_val: np.ndarray | None = None,
        sample_weight: np.ndarray | None = None,
        sample_weight_val: np.ndarray | None = None,
    ) -> LightGBMTrees:
        """Train with LightGBM (one thread, deterministic), keep the arrays.

        ``sample_weight`` (and ``sample_weight_val`` of the validation rows)
        weigh each row's loss (LightGBM's dataset weights)."""
        X, X_val, exponents = _rescale_tiny_columns(X, X_val)
        self.classes_, y_enc = np.unique(np.asarray(y), return_inverse=True)
        self.n_features_in_ = X.shape[1]
        n_classes = len(self.classes_)
        self.n_trees_per_iteration_ = 1 if n_classes <= 2 else n_classes
        if n_classes == 1:
            self._store_trees([])
            self.n_iter_ = 0
            return self
        seed = int_seed(self.random_state) or 0
        objective: dict[str, Any] = {"objective": "binary"}
        if n_classes > 2:
            objective = {"objective": "multiclass", "num_class": n_classes}
        train_rows = np.arange(len(X))
        valid = None
        if self.early_stopping:
            if X_val is None:
                train_rows, val_rows = self._split(y_enc, seed)
                if val_rows is not None:
                    valid = (
                        X[val_rows],
                        y_enc[val_rows],
                        _rows_of(sample_weight, val_rows),
                    )
            else:
                known = np.searchsorted(self.classes_, np.asarray(y_val))
                known = np.minimum(known, n_classes - 1)
                if np.array_equal(self.classes_[known], np.asarray(y_val)):
                    valid = (np.asarray(X_val, dtype=float), known, sample_weight_val)
        self._boost(
            X[train_rows], y_enc[train_rows], valid, objective, exponents,
            _rows_of(sample_weight, train_rows),
        )  # fmt: skip
        return self

    def _boost(
        self,
        X: np.ndarray,
        y: np.ndarray,
        valid: tuple[np.ndarray, np.ndarray, Any] | None,
        objective: dict[str, Any],
        exponents: np.ndarray | None,
        weight: np.ndarray | None = None,
    ) -> None:
        """Boost on rows ``X`` (targets ``y`` as LightGBM's ``objective``
        reads them), early-stopped on ``valid`` when given; keep the trees
        (thresholds scaled back by the tiny columns' ``exponents``)."""
        import lightgbm as lgb

        params: dict[str, Any] = {
            "learning_rate": self.learning_rate,
            "num_leaves": self.num_leaves,
            "min_child_samples": self.min_child_samples,
            "lambda_l2": self.l2_regularization,
            "num_threads": 1,
            "deterministic": True,
            "force_row_wise": True,
            "seed": int_seed(self.random_state) or 0,
            "verbose": -1,
            **objective,
        }
        # min_data_in_bin=1: LightGBM's default (3) merges the few distinct values
        # of a small table into shared bins, so a perfectly separating column
        # could not be split exactly (90 rows: 97.8 % instead of 100 % on it).
        binning = {"verbose": -1, "min_data_in_bin": 1, "max_bin": self.max_bins}
        train = lgb.Dataset(X, y, weight=weight, params=binning)
        callbacks = []
        valid_sets = []
        if valid is not None:
            valid_sets = [
                train.create_valid(valid[0], valid[1], weight=valid[2], params=binning)
            ]
            callbacks.append(lgb.early_stopping(self.n_iter_no_change, verbose=False))
        booster = lgb.train(
            params,
            train,
            num_boost_round=self.max_iter,
            valid_sets=valid_sets,
            callbacks=callbacks,
            keep_training_booster=True,  # no text round trip: the arrays are kept
        )
        best = booster.best_iteration if valid is not None else 0
        self.n_iter_ = int(best or booster.current_iteration())
        trees = _parse_trees(booster.model_to_string(num_iteration=best))
        if exponents is not None:  # thresholds back in the columns' own units
            for tree in trees:
                shift = exponents[tree["split_feature"]]
                tree["threshold"] = np.ldexp(tree["threshold"], -shift)
        self._store_trees(trees)

    def _split(self, y: np.ndarray, seed: int) -> tuple[np.ndarray, np.ndarray | None]:
        """A stratified validation split, or none when a class has < 2 rows."""
        counts = np.bincount(y)
        if counts.min() < 2 or self.validation_fraction * len(y) < 2 * len(counts):
            return np.arange(len(y)), None
        from sklearn.model_selection import train_test_split

        return train_test_split(
            np.arange(len(y)),
            test_size=self.validation_fraction,
            stratify=y,
            random_state=seed,
        )

    def _store_trees(self, trees: list[dict[str, np.ndarray]]) -> None:
        self.num_leaves_ = np.array([len(t["leaf_value"]) for t in trees], dtype=int)
        n_nodes = np.array([len(t["left_child"]) for t in trees], dtype=int)
        self.node_offsets_ = np.r_[0, np.cumsum(n_nodes)].astype(np.int64)
        self.leaf_offsets_ = np.r_[0, np.cumsum(self.num_leaves_)].astype(np.int64)
        for key, dtype in zip(_TREE_KEYS, (int, float, int, int, int), strict=True):
            parts = [t[key] for t in trees]
            setattr(
                self,
                f"{key}_",
                np.concatenate(parts).astype(dtype)
                if parts
                else np.zeros(0, dtype=dtype),
            )
        values = [t["leaf_value"] for t in trees]
        self.leaf_value_ = np.concatenate(values) if values else np.zeros(0)
        self.__dict__.pop("_compiled_cache", None)

    # ------------------------------------------------------------ integrity
    def check_integrity(self) -> None:
        """Raise ValueError unless every tree's arrays are consistent.

        Children of a node come after it (so no cycles) and stay inside its
        tree, leaves inside its leaf range, features below ``n_features_in_``,
        decision types among the numerical ones LightGBM writes, leaf values
        finite and thresholds not NaN; one tree per round for two classes, one
        per class otherwise (each tree writes one raw score), and the tree
        count a multiple of that.
        """
        n_trees = len(self.num_leaves_)
        per_iter = int(self.n_trees_per_iteration_)
        if n_trees and per_iter != self.n_outputs_:
            scored = (
                f"{len(self.classes_)} classes"
                if hasattr(self, "classes_")
                else f"{self.n_outputs_} output"
            )
            _fail(f"{per_iter} trees per round for {scored}")
        if n_trees % max(per_iter, 1):
            _fail(f"{n_trees} trees for {per_iter} trees per round")
        if (self.num_leaves_ < 1).any():
            _fail("a tree without leaves")
        nodes, leaves = self.node_offsets_, self.leaf_offsets_
        if len(nodes) != n_trees + 1 or len(leaves) != n_trees + 1:
            _fail("offset arrays do not match the tree count")
        if (
            not np.array_equal(np.diff(leaves), self.num_leaves_)
            or not np.array_equal(np.diff(nodes), self.num_leaves_ - 1)
            or nodes[0] != 0
            or leaves[0] != 0
        ):
            _fail("offsets do not match num_leaves_ (nodes = leaves - 1)")
        n_nodes = int(nodes[-1])
        for key in _TREE_KEYS:
            if len(getattr(self, f"{key}_")) != n_nodes:
                _fail(
                    f"{key}_ has {len(getattr(self, f'{key}_'))} entries, not {n_nodes}"
                )
        if len(self.leaf_value_) != leaves[-1]:
            _fail(f"leaf_value_ has {len(self.leaf_value_)} entries, not {leaves[-1]}")
        if not (
            np.isfinite(self.leaf_value_).all() and not np.isnan(self.threshold_).any()
        ):
            # An infinite threshold is legitimate (only missing values go right).
            _fail("NaN threshold or non-finite leaf value")
        feature = self.split_feature_
        if n_nodes and (feature.min() < 0 or feature.max() >= self.n_features_in_):
            _fail(f"split feature index out of range [0, {self.n_features_in_})")
        if not set(np.unique(self.decision_type_).tolist()) <= _ALLOWED_DECISIONS:
            _fail("decision type other than a numerical split")
        tree_of = np.repeat(np.arange(n_trees), self.num_leaves_ - 1)
        local = np.arange(n_nodes) - nodes[tree_of]
        for side in ("left_child", "right_child"):
            child = getattr(self, f"{side}_").astype(np.int64)
            inner = child >= 0
            last = (self.num_leaves_ - 1)[tree_of]
            if (inner & ((child <= local) | (child >= last))).any():
                _fail(f"{side} node index out of range")
            leaf = ~child
            if (~inner & (leaf >= self.num_leaves_[tree_of])).any():
                _fail(f"{side} leaf index out of range")

    # ------------------------------------------------------------ inference
    def _compiled(self) -> dict[str, Any]:
        """The checked arrays in the dtypes the compiled kernels take (cached)."""
        compiled = self.__dict__.get("_compiled_cache")
        if compiled is None:
            self.check_integrity()
            decision = self.decision_type_.astype(np.int64)
            missing_type = (decision >> 2) & 3
            default_left = (decision & 2) > 0
            threshold = self.threshold_.astype(np.float64)
            per_iter = max(int(self.n_trees_per_iteration_), 1)
            compiled = {
                "feature": self.split_feature_.astype(np.int32),
                "threshold": threshold,
                "left": self.left_child_.astype(np.int32),
                "right": self.right_child_.astype(np.int32),
                # LightGBM turns a NaN into 0.0 unless the missing type is NaN.
                "missing_left": np.where(
                    missing_type == 0, 0.0 <= threshold, default_left
                ),
                "zero_missing": missing_type == 1,
                "leaf_value": self.leaf_value_.astype(np.float64),
                "node_offsets": self.node_offsets_.astype(np.int64),
                "leaf_offsets": self.leaf_offsets_.astype(np.int64),
                "tree_output": (np.arange(len(self.num_leaves_)) % per_iter).astype(
                    np.int32
                ),
                "any_zero_missing": bool((missing_type == 1).any()),
                "all_present": np.ones(self.n_features_in_, dtype=bool),
                "split_counts": np.bincount(
                    self.split_feature_.astype(np.int64),
                    minlength=self.n_features_in_,
                ).astype(np.float64),
            }
            self.__dict__["_compiled_cache"] = compiled
        return compiled

    def __getstate__(self) -> dict[str, Any]:
        state = dict(super().__getstate__())
        state.pop("_compiled_cache", None)  # rebuilt from the arrays on first use
        return state

    @property
    def n_outputs_(self) -> int:
        """Raw scores per row: 1 for two classes (a logit), else one per class."""
        return 1 if len(self.classes_) <= 2 else len(self.classes_)

    def _rows(self, X: np.ndarray, *, column_major: bool = False) -> np.ndarray:
        """``X`` as float64, row-major, or with ``column_major`` laid out by
        column (returned as it is when each column's values are adjacent
        already, e.g. a row slice of a column-major table)."""
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2 or X.shape[1] != self.n_features_in_:
            raise ValueError(
                f"X has shape {X.shape}; the trees read {self.n_features_in_} columns."
            )
        if not column_major:
            return np.ascontiguousarray(X)
        if X.strides[0] == X.itemsize and X.strides[1] >= X.itemsize * len(X):
            return X
        return np.asfortranarray(X)

    def _general(
        self, compiled: dict[str, Any], X: np.ndarray, has_nan: bool | None = None
    ) -> bool:
        """Whether the NaN / zero-as-missing checks are needed for ``X``
        (``has_nan``: whether ``X`` holds a NaN, when the caller knows)."""
        if compiled["any_zero_missing"]:
            return True
        return bool(np.isnan(X).any()) if has_nan is None else bool(has_nan)

    def decision_function(
        self,
        X: np.ndarray,
        present: np.ndarray | None = None,
        *,
        sort_rows: bool = True,
        has_nan: bool | None = None,
    ) -> np.ndarray:
        """Raw scores (n_rows,) for two classes, else (n_rows, n_classes).

        ``present`` (n_features,) marks the columns the rows have; the others
        are scored as missing whatever they hold (as LightGBM scores NaN).
        Equal to LightGBM's own ``predict(raw_score=True)``. ``sort_rows=False``
        walks the rows as given (e.g. already in :func:`shared_walk_order`);
        either way the scores are the same. ``has_nan``: whether the present
        columns of ``X`` hold a NaN, when the caller knows (fold models
        scoring the same rows check once); None: checked here.
        """
        # The kernel walks one tree over all rows, then the next: rows stored
        # by column keep each split's column in cache.
        X = self._rows(X, column_major=True)
        out = np.zeros((len(X), self.n_outputs_))
        if len(self.num_leaves_):
            compiled = self._compiled()
            if present is None:
                present = compiled["all_present"]
            else:
                present = np.ascontiguousarray(present, dtype=bool)
                if present.shape != (self.n_features_in_,):
                    raise ValueError("present must have one entry per column.")
            general = self._general(compiled, X, has_nan)
            before_call("add_scores")

            def scores(rows: np.ndarray) -> np.ndarray:
                summed = np.zeros((len(rows), self.n_outputs_))
                add_scores(
                    _by_column(rows), present, general, *_kernel_args(compiled), summed
                )
                return summed

            # Similar rows in a row: the walks' branches repeat.
            walk = shared_walk_order([self], X, present) if sort_rows else None
            out = scored_in_order(scores, X, walk)
        return out[:, 0] if self.n_outputs_ == 1 else out

    def state_decision_function(
        self, X: np.ndarray, state_present: np.ndarray
    ) -> np.ndarray:
        """Raw scores of every row at every state, shape (n_rows, K, n_outputs).

        ``state_present`` (K, n_features): the columns each state has; a state
        scores its other columns as missing, exactly as
        ``decision_function(X, present=state_present[k])`` does.
        """
        X = self._rows(X)
        state_present = np.ascontiguousarray(state_present, dtype=bool)
        if state_present.ndim != 2 or state_present.shape[1] != self.n_features_in_:
            raise ValueError("state_present must have one column per feature.")
        out = np.zeros((len(X), self.n_outputs_, len(state_present)))
        if len(self.num_leaves_):
            compiled = self._compiled()
            before_call("add_state_scores")
            add_state_scores(
                X,
                state_present,
                self._general(compiled, X),
                *_kernel_args(compiled),
                out,
            )
        return out.transpose(0, 2, 1)

    def proba_from_scores(self, raw: np.ndarray, axis: int = -1) -> np.ndarray:
        """Class probabilities from raw scores (outputs along ``axis``)."""
        raw = np.moveaxis(np.asarray(raw, dtype=float), axis, -1)
        if len(self.classes_) == 1:
            out = np.ones(raw.shape[:-1] + (1,))
        elif len(self.classes_) == 2:
            p = 1.0 / (1.0 + np.exp(-raw[..., 0]))
            out = np.stack([1.0 - p, p], axis=-1)
        else:
            flat = np.ascontiguousarray(raw.reshape(-1, raw.shape[-1]))
            before_call("softmax_rows")
            out = softmax_rows(flat).reshape(raw.shape)
        return np.moveaxis(out, -1, axis)

    def predict_proba(
        self,
        X: np.ndarray,
        present: np.ndarray | None = None,
        *,
        sort_rows: bool = True,
        has_nan: bool | None = None,
    ) -> np.ndarray:
        """Class probabilities (n_rows, n_classes); ``present``, ``sort_rows``
        and ``has_nan`` as in :meth:`decision_function`."""
        if len(self.classes_) == 1:
            return np.ones((len(X), 1))
        raw = self.decision_function(X, present, sort_rows=sort_rows, has_nan=has_nan)
        return self.proba_from_scores(raw.reshape(len(raw), -1))

    def predict(self, X: np.ndarray) -> np.ndarray:
        return self.classes_[self.predict_proba(X).argmax(axis=1)]


class LightGBMRegressionTrees(RegressorMixin, LightGBMTrees):
    """Gradient-boosted regression trees (squared error) trained by LightGBM,
    stored and scored as :class:`LightGBMTrees` are (the same arrays, checks
    and compiled kernels, one raw score per row: the prediction).

    Parameters are :class:`LightGBMTrees`'; early stopping reads the squared
    error of ``X_val``/``y_val`` when given, else of a random
    ``validation_fraction`` of the rows.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(500, 2))
    >>> y = np.where(X[:, 0] > 0, 2.0, -1.0) + X[:, 1]
    >>> model = LightGBMRegressionTrees(random_state=0).fit(X, y)
    >>> bool(np.mean((model.predict(X) - y) ** 2) < 0.01 * np.var(y))
    True
    """

    def fit(
        self,
        X: np.ndarray,
        y: np.ndarray,
        X_val: np.ndarray | None = None,
        y_val: np.ndarray | None = None,
        sample_weight: np.ndarray | None = None,
        sample_weight_val: np.ndarray | None = None,
    ) -> LightGBMRegressionTrees:
        """Train with LightGBM (one thread, deterministic), keep the arrays
        (``sample_weight``: as :meth:`LightGBMTrees.fit`)."""
        X, X_val, exponents = _rescale_tiny_columns(X, X_val)
        y = np.asarray(y, dtype=float)
        self.n_features_in_ = X.shape[1]
        self.n_trees_per_iteration_ = 1
        train_rows, valid = np.arange(len(X)), None
        if self.early_stopping and X_val is not None:
            valid = (
                np.asarray(X_val, dtype=float),
                np.asarray(y_val, dtype=float),
                sample_weight_val,
            )
        elif self.early_stopping:
            rng = np.random.default_rng(int_seed(self.random_state) or 0)
            n_val = int(round(self.validation_fraction * len(X)))
            if n_val >= 2 and len(X) - n_val >= 2:
                order = rng.permutation(len(X))
                val_rows, train_rows = np.sort(order[:n_val]), np.sort(order[n_val:])
                valid = (X[val_rows], y[val_rows], _rows_of(sample_weight, val_rows))
        self._boost(
            X[train_rows], y[train_rows], valid, {"objective": "regression"},
            exponents, _rows_of(sample_weight, train_rows),
        )  # fmt: skip
        return self

    @property
    def n_outputs_(self) -> int:
        """One raw score per row: the prediction."""
        return 1

    def predict(self, X: np.ndarray, present: np.ndarray | None = None) -> np.ndarray:
        """Predictions (n_rows,); ``present`` as in :meth:`decision_function`."""
        return self.decision_function(X, present)


def _rows_of(weight: np.ndarray | None, rows: np.ndarray) -> np.ndarray | None:
    """The weights of ``rows`` (None: unweighted)."""
    return None if weight is None else np.asarray(weight, dtype=float)[rows]


_KERNEL_KEYS = (
    "feature",
    "threshold",
    "left",
    "right",
    "missing_left",
    "zero_missing",
    "leaf_value",
    "node_offsets",
    "leaf_offsets",
    "tree_output",
)


def shared_walk_order(
    models: Sequence[LightGBMTrees],
    X: np.ndarray,
    present: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray] | None:
    """A similarity order for one or several models scoring the same rows (a
    state's fold models), from their summed split counts (on the ``present``
    columns), and ``X``'s rows in it laid out by column; None where sorting
    would not pay. Fold models share one sort instead of one each: the sort
    was 15 % of landsat's prediction."""
    counts = np.sum([model._compiled()["split_counts"] for model in models], axis=0)
    read = np.flatnonzero(counts)
    mean_trees = np.mean([len(model.num_leaves_) for model in models])
    if not worth_sorting(len(X), mean_trees, len(read)):
        return None
    X = np.asarray(X, dtype=np.float64)
    order = similar_rows_order(X, counts if present is None else counts * present)
    return order, rows_in_order(X, order, read)


def _by_column(X: np.ndarray) -> np.ndarray:
    """``X.T`` C-contiguous (the layout :func:`add_scores` takes): a view of a
    column-major ``X``, else a copy."""
    return X.T if X.T.flags.c_contiguous else np.ascontiguousarray(X.T)


def _kernel_args(compiled: dict[str, Any]) -> tuple:
    return tuple(compiled[key] for key in _KERNEL_KEYS)


def _parse_trees(text: str) -> list[dict[str, np.ndarray]]:
    """The per-tree arrays of a LightGBM model text (as LightGBM wrote it)."""
    trees = []
    for block in text.split("\nTree=")[1:]:
        block = block.split("\nend of trees")[0]
        kv = dict(line.split("=", 1) for line in block.split("\n")[1:] if "=" in line)
        if int(kv.get("num_cat", 0)) != 0:
            raise ValueError("LightGBM produced a categorical split; none expected.")
        tree = {"leaf_value": np.array(kv["leaf_value"].split(), dtype=float)}
        for key in _TREE_KEYS:
            dtype = float if key == "threshold" else np.int64
            tree[key] = (
                np.array(kv[key].split(), dtype=dtype)
                if key in kv
                else (np.zeros(0, dtype=dtype))
            )
        trees.append(tree)
    return trees
