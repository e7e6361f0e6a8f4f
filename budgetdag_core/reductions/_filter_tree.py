"""Filter tree (Beygelzimer, Langford & Ravikumar 2007): CSL -> weighted binary."""

from __future__ import annotations

import functools
import warnings
from dataclasses import dataclass
from numbers import Integral
from typing import Any, Self

import numpy as np
from sklearn.base import BaseEstimator, clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression

from .._compiled import before_call
from .._integrity import check_array, check_int, fail
from ._base import (
    LEARNER_CONSTRAINTS,
    PolicyFeatures,
    check_fitted_learner,
    check_learner_settings,
    check_linear,
    check_row_weights,
    constant_action,
)
from ._logistic import SAFE_STEP, as_logistic_regression, fit_logistic
from ._tournament import MODEL, RIGHT, tournament_layout, train_tournament


def _decision(model: Any, F: np.ndarray) -> np.ndarray:
    """Positive where the node's model says "right wins".

    For the built-in logistic regression this is ``decision_function(F)``
    without re-validating ``F`` at every node; any other binary classifier
    (``FilterTree(estimator=...)``) is asked for its predicted label.
    """
    if isinstance(model, LogisticRegression):
        return F @ model.coef_[0] + model.intercept_[0]
    return np.where(np.asarray(model.predict(F)).astype(bool), 1.0, -1.0)


@functools.cache
def _constructor_params(cls: type) -> tuple[str, ...]:
    """``BaseEstimator._get_param_names`` of ``cls``, computed once."""
    return tuple(BaseEstimator._get_param_names.__func__(cls))


@dataclass
class _Node:
    """Internal tree node: left/right subtrees and a binary model (1 = right wins)."""

    left: _Node | int
    right: _Node | int
    model: Any | None = None
    constant: bool = False  # used when model is None
    # The model's decision on the scaled inputs (PolicyFeatures.fold), so that
    # prediction needs no expanded feature matrix.
    folded: tuple | None = None


class FilterTree(BaseEstimator):
    """Cost-sensitive classifier: a tournament of weighted binary logistic regressions.

    At each internal node the two sub-tournament winners of every example play; the
    label is which has the lower cost, the weight is the cost difference, and rows
    with zero weight are dropped. A node whose rows are all one way is a constant.

    Parameters
    ----------
    degree : int
        Degree of the polynomial feature map of the policy inputs, 1 to
        ``MAX_LEARNER_DEGREE`` (4).
    C : float
        Inverse regularisation strength of each logistic regression (on
        standardised features, with weights normalised to mean 1); > 0.
    max_features : int
        Cap on the expanded feature count (see ``effective_degree``).
    max_iter : int
        Iterations of each logistic regression, at most ``MAX_LEARNER_ITER``
        (10 000).
    estimator : binary classifier, optional
        Cloned at every internal node instead of the logistic regression (must
        accept ``sample_weight``), e.g. ``HistGradientBoostingClassifier``; then
        ``C`` and ``max_iter`` are unused. Tree models need no polynomial map:
        pair them with ``degree=1``.

    Examples
    --------
    >>> import numpy as np
    >>> z = np.linspace(0, 2, 80).reshape(-1, 1)
    >>> C = np.column_stack([z[:, 0] > 1, z[:, 0] <= 1]).astype(float)
    >>> tree = FilterTree(degree=1, C=100.0).fit(z, C)
    >>> bool((tree.predict(z) == (z[:, 0] > 1)).mean() > 0.9)
    True
    """

    _parameter_constraints: dict = {
        name: LEARNER_CONSTRAINTS[name]
        for name in ("degree", "C", "max_features", "max_iter")
    }

    def __init__(
        self,
        degree: int = 2,
        C: float = 1.0,
        max_features: int = 1000,
        max_iter: int = 100,
        estimator: Any = None,
    ) -> None:
        self.degree = degree
        self.C = C
        self.max_features = max_features
        self.max_iter = max_iter
        self.estimator = estimator

    @classmethod
    def _get_param_names(cls) -> list[str]:
        # Graph-Reduce clones the learner at every node, and scikit-learn
        # introspects the constructor's signature twice per clone, a visible
        # share of a policy fit: introspect once per class.
        return list(_constructor_params(cls))

    def fit(
        self, Z: np.ndarray, C: np.ndarray, sample_weight: np.ndarray | None = None
    ) -> Self:
        """Learn the tournament from the policy inputs ``Z`` (n_samples, d)
        and the action costs ``C`` (n_samples, n_actions).

        ``sample_weight`` (n_samples,), >= 0: a row counts that many times
        (its logistic weights and its share of the feature scaling are
        multiplied by it; integer weights give the tree of the duplicated
        rows, up to the solver's tolerance).
        """
        check_learner_settings(self)
        C = np.asarray(C, dtype=float)
        self.n_actions_ = C.shape[1]
        Z = np.asarray(Z, dtype=float).reshape(C.shape[0], -1)
        w = check_row_weights(sample_weight, len(C))
        if w is not None:
            if w.sum() == 0:
                raise ValueError("sample_weight is 0 on every row.")
            keep = w > 0  # a row of weight 0 is not there
            Z, C, w = Z[keep], C[keep], w[keep]
        if Z.shape[1] == 0 or self.n_actions_ == 1:
            self.constant_ = constant_action(C, w)
            return self
        self.constant_ = None
        self.features_ = PolicyFeatures(self.degree, self.max_features)
        F = self.features_.fit_transform(Z, w)
        if self.estimator is None:
            self.tree_ = self._train_logistic(F, C, w)
        else:
            self.tree_, _ = self._train(F, C, np.arange(self.n_actions_), w)
        self._fold(self.tree_)
        return self

    def _fold(self, node: _Node | int) -> bool:
        """Fold every node's model onto the scaled inputs; False if impossible."""
        if isinstance(node, int):
            return True
        if node.model is not None and not isinstance(node.model, LogisticRegression):
            return False
        if node.model is not None and getattr(node, "folded", None) is None:
            node.folded = self.features_.fold(
                node.model.coef_[0], node.model.intercept_[0]
            )
            if node.folded is None:
                return False
        return self._fold(node.left) and self._fold(node.right)

    def _predict_folded(self, node: _Node | int, Zs: np.ndarray) -> np.ndarray:
        if isinstance(node, int):
            return np.full(len(Zs), node, dtype=np.intp)
        win_left = self._predict_folded(node.left, Zs)
        win_right = self._predict_folded(node.right, Zs)
        if node.model is None:
            right_wins = np.full(len(Zs), node.constant)
        else:
            a, U, b = node.folded
            decision = Zs @ a + b
            if U is not None:
                decision += np.einsum("ij,ij->i", Zs @ U, Zs)
            right_wins = decision > 0
        return np.where(right_wins, win_right, win_left)

    def _train(
        self,
        F: np.ndarray,
        C: np.ndarray,
        actions: np.ndarray,
        row_weight: np.ndarray | None = None,
    ) -> tuple[_Node | int, np.ndarray]:
        if len(actions) == 1:
            return int(actions[0]), np.full(len(F), actions[0], dtype=np.intp)
        half = (len(actions) + 1) // 2
        left, win_left = self._train(F, C, actions[:half], row_weight)
        right, win_right = self._train(F, C, actions[half:], row_weight)
        rows = np.arange(len(F))
        cost_left, cost_right = C[rows, win_left], C[rows, win_right]
        label = cost_right < cost_left
        weight = np.abs(cost_left - cost_right)
        if row_weight is not None:
            weight = weight * row_weight
        keep = weight > 0
        node = _Node(left, right)
        if not keep.any() or label[keep].all() or not label[keep].any():
            node.constant = bool(label[keep].all()) if keep.any() else False
            right_wins = np.full(len(F), node.constant)
        else:
            # Mean 1 per counted row (each row counts its weight).
            counts = 1.0 if row_weight is None else row_weight[keep].mean()
            w = weight[keep] / (weight[keep].mean() / counts)
            node.model = self._fit_node_model(F[keep], label[keep], w)
            right_wins = _decision(node.model, F) > 0
        return node, np.where(right_wins, win_right, win_left)

    def _train_logistic(
        self, F: np.ndarray, C: np.ndarray, row_weight: np.ndarray | None = None
    ) -> _Node:
        """The tournament of :meth:`_train` with the built-in logistic
        regression, trained in one compiled call (same rows, weights and
        solver; see :mod:`._tournament`)."""
        left, right = tournament_layout(self.n_actions_)
        before_call("train_tournament")
        kinds, coefs, intercepts, steps, _ = train_tournament(
            np.ascontiguousarray(F, dtype=np.float64),
            np.ascontiguousarray(C, dtype=np.float64),
            np.ones(len(C)) if row_weight is None else row_weight,
            left,
            right,
            1.0 / self.C,
            int(self.max_iter),
            SAFE_STEP,
        )
        nodes: list[_Node] = []
        for i in range(len(left)):
            node = _Node(
                nodes[left[i]] if left[i] >= 0 else int(-left[i] - 1),
                nodes[right[i]] if right[i] >= 0 else int(-right[i] - 1),
            )
            if kinds[i] == MODEL:
                node.model = as_logistic_regression(
                    coefs[i], intercepts[i], int(steps[i]), self.C, self.max_iter
                )
            else:
                node.constant = bool(kinds[i] == RIGHT)
            nodes.append(node)
        return nodes[-1]

    def _fit_node_model(self, F: np.ndarray, label: np.ndarray, w: np.ndarray) -> Any:
        """The binary model of one tournament node (1 = right wins)."""
        if self.estimator is None:
            return fit_logistic(F, label, w, self.C, self.max_iter)
        model = clone(self.estimator)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            model.fit(F, label, sample_weight=w)
        return model

    def _predict_node(self, node: _Node | int, F: np.ndarray) -> np.ndarray:
        if isinstance(node, int):
            return np.full(len(F), node, dtype=np.intp)
        win_left = self._predict_node(node.left, F)
        win_right = self._predict_node(node.right, F)
        if node.model is None:
            right_wins = np.full(len(F), node.constant)
        else:
            right_wins = _decision(node.model, F) > 0
        return np.where(right_wins, win_right, win_left)

    def check_integrity(self, where: str, n_actions: int, n_inputs: int) -> None:
        """Raise ``ValueError`` unless this is a fitted tournament of
        ``n_actions`` actions on ``n_inputs`` policy inputs (a loaded model):
        every action a leaf once, every node model of the feature map's width."""
        width = check_fitted_learner(self, where, n_actions, n_inputs)
        if width is None:
            return
        leaves: list[int] = []
        _check_node(self.tree_, f"{where}.tree_", n_actions, width, leaves, 0, set())
        if sorted(leaves) != list(range(n_actions)):
            raise fail(
                f"{where}.tree_", "the tournament does not hold every action once"
            )
        for node_where, a in _folded_widths(self.tree_, f"{where}.tree_"):
            if a != n_inputs:
                raise fail(node_where, f"{a} folded inputs, expected {n_inputs}")

    def predict(self, Z: np.ndarray) -> np.ndarray:
        Z = np.asarray(Z, dtype=float)
        n = Z.shape[0]
        if self.constant_ is not None:
            return np.full(n, self.constant_, dtype=np.intp)
        Z = Z.reshape(n, -1)
        if self._fold(self.tree_):  # degree <= 2 (also folds models pickled before)
            return self._predict_folded(self.tree_, self.features_.scale_inputs(Z))
        return self._predict_node(self.tree_, self.features_.transform(Z))

    #: What :meth:`action_scores` measures (shown beside the scores).
    score_name = "chance to win the tournament"

    def action_scores(self, Z: np.ndarray) -> np.ndarray:
        """Each action's chance to win the tournament, (n_samples, n_actions).

        Every match is read as a coin whose bias is the node model's
        probability (the logistic function of its decision); an action's
        chance is the product over the matches on its way to the final. The
        chances of a row sum to 1; the predicted action wins each of its
        matches with a chance above 1/2, though another action may have a
        higher product.
        """
        Z = np.asarray(Z, dtype=float)
        n = Z.shape[0]
        out = np.zeros((n, self.n_actions_))
        if self.constant_ is not None:
            out[:, self.constant_] = 1.0
            return out
        Z = Z.reshape(n, -1)
        folded = self._fold(self.tree_)
        inputs = (
            self.features_.scale_inputs(Z) if folded else self.features_.transform(Z)
        )
        self._chances(self.tree_, inputs, folded, np.ones(n), out)
        return out

    def _chances(
        self,
        node: _Node | int,
        inputs: np.ndarray,
        folded: bool,
        reach: np.ndarray,
        out: np.ndarray,
    ) -> None:
        if isinstance(node, int):
            out[:, node] = reach
            return
        if node.model is None:
            right = np.full(len(inputs), float(node.constant))
        elif folded:
            a, U, b = node.folded
            decision = inputs @ a + b
            if U is not None:
                decision += np.einsum("ij,ij->i", inputs @ U, inputs)
            right = 1.0 / (1.0 + np.exp(-np.clip(decision, -500, 500)))
        elif hasattr(node.model, "predict_proba"):
            right = np.asarray(node.model.predict_proba(inputs))[:, 1]
        else:
            right = (_decision(node.model, inputs) > 0).astype(float)
        self._chances(node.left, inputs, folded, reach * (1.0 - right), out)
        self._chances(node.right, inputs, folded, reach * right, out)


# Deepest tournament accepted in a loaded model: log2 of a node's actions is
# far below this for any DAG the library builds (at most a few hundred actions).
_MAX_TREE_DEPTH = 64


def _check_node(
    node: Any,
    where: str,
    n_actions: int,
    width: int,
    leaves: list[int],
    depth: int,
    seen: set[int],
) -> None:
    """A loaded tournament node and its subtrees; collects the leaves' actions.

    ``seen`` holds the ids of the nodes met so far: a node met twice (shared by
    two parents, as a pickle or a forged file can make them) would make the
    walk exponential in the depth.
    """
    if isinstance(node, Integral) and not isinstance(node, bool):
        leaves.append(check_int(node, where, 0, n_actions))
        return
    if not isinstance(node, _Node):
        raise fail(where, f"expected a tree node, got {type(node).__name__}")
    if depth > _MAX_TREE_DEPTH:
        raise fail(where, "the tournament tree is too deep (a cycle?)")
    if id(node) in seen or len(seen) >= n_actions - 1:
        raise fail(where, "a node is shared, or more nodes than a tournament has")
    seen.add(id(node))
    if node.model is not None:
        if not isinstance(node.model, LogisticRegression):
            raise fail(f"{where}.model", f"unexpected {type(node.model).__name__}")
        check_linear(node.model, f"{where}.model", 1, width)
    if node.folded is not None:
        a, U, b = _unpack_folded(node.folded, f"{where}.folded")
        n_inputs = len(a)
        check_array(a, f"{where}.folded[0]", shape=(n_inputs,), kind="f")
        if U is not None:
            check_array(U, f"{where}.folded[1]", shape=(n_inputs, n_inputs), kind="f")
        if not isinstance(b, float | np.floating):
            raise fail(f"{where}.folded[2]", "expected a number")
    for side in ("left", "right"):
        child = getattr(node, side)
        _check_node(child, f"{where}.{side}", n_actions, width, leaves, depth + 1, seen)


def _unpack_folded(folded: Any, where: str) -> tuple[Any, Any, Any]:
    if not isinstance(folded, tuple | list) or len(folded) != 3:
        raise fail(where, "expected (a, U, b)")
    a, U, b = folded
    if not isinstance(a, np.ndarray):
        raise fail(where, "expected an array of linear coefficients")
    return a, U, b


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
