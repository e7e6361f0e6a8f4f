"""The cost-sensitive learning protocol and the shared policy feature map."""

from __future__ import annotations

import copy
import functools
from math import comb
from typing import Any, Protocol, Self, runtime_checkable

import numpy as np
from numba import njit
from sklearn.preprocessing import PolynomialFeatures, StandardScaler

from .._compiled import before_call
from .._integrity import check_array, check_int, fail
from ..validation import check_params, int_in, real_in

#: Highest degree of a policy's polynomial feature map: the expansion's width
#: grows as (inputs ** degree), and ``max_features`` lowers the degree of wide
#: nodes one step at a time.
MAX_LEARNER_DEGREE = 4
#: Most iterations of a node's logistic regression: each is a pass over the
#: node's rows (the solver converges in tens).
MAX_LEARNER_ITER = 10_000
#: The learners' settings in scikit-learn's vocabulary (``_parameter_constraints``).
LEARNER_CONSTRAINTS: dict[str, list] = {
    "degree": [int_in(1, MAX_LEARNER_DEGREE)],
    "max_features": [int_in(1)],
    "C": [real_in(0.0, None, closed="neither")],
    "alpha": [real_in(0.0)],
    "max_iter": [int_in(1, MAX_LEARNER_ITER)],
}


def check_learner_settings(learner: Any) -> None:
    """Check ``learner``'s ``_parameter_constraints`` (as ``_validate_params``
    would, without building ``get_params`` at every node fit)."""
    constraints = learner._parameter_constraints
    values = {name: getattr(learner, name) for name in constraints}
    check_params(type(learner).__name__, constraints, **values)


@runtime_checkable
class CostSensitiveLearner(Protocol):
    """Learns ``Z -> action`` from a cost matrix ``C`` (n_samples x n_actions).

    The action of an example should have low cost; ``predict`` returns action
    indices (columns of ``C``).
    """

    def fit(self, Z: np.ndarray, C: np.ndarray) -> Self: ...

    # A learner may also take ``sample_weight`` (n_samples,) in ``fit``: a
    # row of weight w counts as w copies of it (``graph_reduce`` passes it
    # where the learner's ``fit`` names it; see ``graph_reduce.fit_node``).

    def predict(self, Z: np.ndarray) -> np.ndarray: ...


@njit(nogil=True, cache=True)
def _row_major_mean_var(Z):
    """``Z.mean(axis=0)`` and ``Z.var(axis=0)`` of a C-ordered float64 array
    with at least two columns and one row, bit for bit: NumPy reduces such an
    array row after row into one accumulator per column (a sum in row order),
    then divides; the variance sums the squared deviations the same way."""
    n, d = Z.shape
    total = np.zeros(d)
    for i in range(n):
        for k in range(d):
            total[k] += Z[i, k]
    mean = total / n
    squares = np.zeros(d)
    for i in range(n):
        for k in range(d):
            deviation = Z[i, k] - mean[k]
            squares[k] += deviation * deviation
    return mean, squares / n


def column_mean_var(Z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(Z.mean(axis=0), Z.var(axis=0))``, compiled where that is bit-equal
    (one column: NumPy sums it pairwise instead; other layouts: NumPy)."""
    if (
        Z.ndim == 2
        and Z.shape[0] >= 1
        and Z.shape[1] >= 2
        and Z.dtype == np.float64
        and Z.flags.c_contiguous
    ):
        before_call("_row_major_mean_var")
        return _row_major_mean_var(Z)
    return Z.mean(axis=0), Z.var(axis=0)


def weighted_mean_var(
    Z: np.ndarray, sample_weight: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Column means and variances of ``Z`` where row i counts
    ``sample_weight[i]`` times (as many copies of it would give)."""
    w = np.asarray(sample_weight, dtype=float)
    mean = w @ Z / w.sum()
    return mean, w @ (Z - mean) ** 2 / w.sum()


# The largest (|mean| + 1) / scale of a feature for which the folded form is
# used: rounding in the folded form grows with this ratio, so beyond it the
# decision would be off by more than 1e-9 of its size.
FOLD_LIMIT = 1e6


def fitted_scaler(
    Z: np.ndarray, sample_weight: np.ndarray | None = None
) -> StandardScaler:
    """``StandardScaler().fit(Z)`` for a finite float array, without its
    validation (thousands of node fits per Graph-Reduce; same attributes).
    With ``sample_weight`` a row counts that many times.

    A column that is constant up to rounding keeps scale 1, as scikit-learn's
    own constant-feature rule gives.
    """
    n = len(Z)
    if sample_weight is None:
        mean, var = column_mean_var(Z)
    else:
        mean, var = weighted_mean_var(Z, sample_weight)
    eps = np.finfo(np.float64).eps
    constant = var <= n * eps * var + (n * mean * eps) ** 2
    scaler = StandardScaler()
    scaler.n_features_in_ = Z.shape[1]
    scaler.n_samples_seen_ = np.int64(n)
    scaler.mean_, scaler.var_ = mean, var
    scaler.scale_ = np.where(constant, 1.0, np.sqrt(var))
    return scaler


def effective_degree(n_features: int, degree: int, max_features: int) -> int:
    """Largest degree <= ``degree`` whose expansion has at most ``max_features``.

    The number of monomials of degree 1..d in n variables is C(n + d, d) - 1. A
    degree-2 map on 50 columns already gives 1325 features, so wide states fall
    back to a lower degree (never below 1).
    """
    for d in range(degree, 1, -1):
        if comb(n_features + d, d) - 1 <= max_features:
            return d
    return 1


@functools.lru_cache(maxsize=64)
def _expansion_of_width(n_inputs: int, degree: int) -> PolynomialFeatures:
    return PolynomialFeatures(degree, include_bias=False).fit(np.zeros((1, n_inputs)))


def fitted_expansion(n_inputs: int, degree: int) -> PolynomialFeatures:
    """A fitted ``PolynomialFeatures(degree, include_bias=False)`` of
    ``n_inputs`` columns. Its fitted state depends on the width alone, so it
    is fitted once per width and copied: fitting one per node validated
    every node's whole input again."""
    return copy.copy(_expansion_of_width(n_inputs, degree))


def polynomial_terms(Zs: np.ndarray, poly: PolynomialFeatures) -> np.ndarray:
    """``poly.transform(Zs)`` for a float64 matrix, bit for bit. Degree 2 is
    written here (each product x_i * x_j, i <= j, in scikit-learn's column
    order) without the input validation that cost more than the products
    on a node's few hundred rows; other degrees go to scikit-learn."""
    if poly.degree != 2 or Zs.ndim != 2 or Zs.dtype != np.float64:
        return poly.transform(Zs)
    n, d = Zs.shape
    if d != poly.n_features_in_:
        raise ValueError(
            f"The policy's inputs have {d} columns; its feature map was fitted "
            f"on {poly.n_features_in_}."
        )
    out = np.empty((n, d + d * (d + 1) // 2))
    out[:, :d] = Zs
    start = d
    for i in range(d):
        np.multiply(Zs[:, i:], Zs[:, i : i + 1], out=out[:, start : start + d - i])
        start += d - i
    return out


class PolicyFeatures:
    """Standardise, expand to polynomial features, standardise again.

    Fitted once per DAG node and shared by all binary problems of that node.
    """

    def __init__(self, degree: int = 2, max_features: int = 1000) -> None:
        self.degree = degree
        self.max_features = max_features

    def fit_transform(
        self, Z: np.ndarray, sample_weight: np.ndarray | None = None
    ) -> np.ndarray:
        """Fit the map on ``Z`` (a row counting ``sample_weight`` times in
        the scalers' means and variances) and return ``transform(Z)``."""
        Z = np.asarray(Z, dtype=float)
        self.degree_ = effective_degree(Z.shape[1], self.degree, self.max_features)
        self.inner_ = fitted_scaler(Z, sample_weight)
        Zs = (Z - self.inner_.mean_) / self.inner_.scale_
        if self.degree_ > 1:
            self.poly_ = fitted_expansion(Zs.shape[1], self.degree_)
            Zs = polynomial_terms(Zs, self.poly_)
        else:
            self.poly_ = None
        self.outer_ = fitted_scaler(Zs, sample_weight)
        Zs -= self.outer_.mean_
        Zs /= self.outer_.scale_
        return Zs

    def scale_inputs(self, Z: np.ndarray) -> np.ndarray:
        """The inputs after the first standardisation (before any expansion)."""
        return (np.asarray(Z, dtype=float) - self.inner_.mean_) / self.inner_.scale_

    def fold(
        self, coef: np.ndarray, intercept: float
    ) -> tuple[np.ndarray, np.ndarray | None, float] | None:
        """A linear function of the features, rewritten on the scaled inputs.

        ``transform(Z) @ coef + intercept`` equals ``b + Zs @ a + sum((Zs @ U) *
        Zs, axis=1)`` with ``Zs = scale_inputs(Z)``: a quadratic form that needs no
        expanded feature matrix (``U`` is None at degree 1). Returns None at
        degree 3, and where a feature's scale is so small against its mean
        that the rewriting would lose precision: there the expansion is used
        as is.
        """
        if np.any(np.abs(self.outer_.mean_) + 1.0 > FOLD_LIMIT * self.outer_.scale_):
            # A column constant up to rounding (the square of a two-valued
            # input split evenly is 1 +- a few roundings) has a tiny scale;
            # the rewritten form would subtract two huge terms and lose the
            # decision to cancellation, so such a map keeps its expansion.
            return None
        c = np.asarray(coef, dtype=float) / self.outer_.scale_
        b = float(intercept - self.outer_.mean_ @ c)
        if self.poly_ is None:
            return c, None, b
        if self.degree_ > 2:
            return None
        # Degree 2's columns: x_0 .. x_{d-1}, then x_i x_k (i <= k) row by row
        # of the upper triangle (:func:`polynomial_terms`): each coefficient
        # lands in one place.
        d = len(self.inner_.mean_)
        U = np.zeros((d, d))
        U[np.triu_indices(d)] = c[d:]
        return c[:d].copy(), U, b

    def check_integrity(self, where: str, n_inputs: int) -> int:
        """Raise ``ValueError`` unless this is a fitted map of ``n_inputs``
        columns (degree, scalers, expansion); returns its output width."""
        degree = check_int(getattr(self, "degree_", None), f"{where}.degree_", 1, 4)
        check_scaler(getattr(self, "inner_", None), f"{where}.inner_", n_inputs)
        poly = getattr(self, "poly_", None)
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
        check_scaler(getattr(self, "outer_", None), f"{where}.outer_", width)
        return width

    def transform(self, Z: np.ndarray) -> np.ndarray:
        # The scalers' own transform validates and copies its input; on the hot
        # prediction path the arithmetic is done directly (same operations).
        Zs = (np.asarray(Z, dtype=float) - self.inner_.mean_) / self.inner_.scale_
        if self.poly_ is not None:
            Zs = polynomial_terms(Zs, self.poly_)
        Zs -= self.outer_.mean_
        Zs /= self.outer_.scale_
        return Zs


def constant_action(C: np.ndarray, sample_weight: np.ndarray | None = None) -> int:
    """The action with the lowest total cost (ties: the lowest index); with
    ``sample_weight`` a row's costs count that many times."""
    C = np.asarray(C, dtype=float)
    if sample_weight is None:
        return int(np.argmin(C.sum(axis=0)))
    return int(np.argmin(np.asarray(sample_weight, dtype=float) @ C))


def check_row_weights(sample_weight: Any, n_rows: int) -> np.ndarray | None:
    """A learner's ``sample_weight`` as floats of ``n_rows`` rows, finite and
    >= 0 (None stays None: every row once)."""
    if sample_weight is None:
        return None
    w = np.asarray(sample_weight, dtype=float).reshape(-1)
    if w.shape != (n_rows,):
        raise ValueError(
            f"sample_weight has {w.size} values; the cost table has {n_rows} rows."
        )
    bad = np.flatnonzero(~np.isfinite(w) | (w < 0))
    if bad.size:
        raise ValueError(
            f"sample_weight must be finite and >= 0; row {int(bad[0])} has "
            f"{w[bad[0]]!r}."
        )
    return w


# ------------------------------------------------------------ integrity checks
def check_scaler(scaler: Any, where: str, width: int) -> None:
    """A fitted StandardScaler of ``width`` columns with finite, non-zero scales."""
    if not isinstance(scaler, StandardScaler):
        raise fail(where, "expected a fitted StandardScaler")
    check_array(scaler.mean_, f"{where}.mean_", shape=(width,), kind="f")
    scale = check_array(
        scaler.scale_, f"{where}.scale_", shape=(width,), kind="f", finite=True
    )
    if (scale == 0).any():
        raise fail(f"{where}.scale_", "zero scale")


def check_linear(model: Any, where: str, n_outputs: int, width: int) -> None:
    """A fitted linear model's ``coef_`` and ``intercept_`` shapes."""
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


def check_fitted_learner(
    learner: Any, where: str, n_actions: int, n_inputs: int
) -> int | None:
    """What a fitted learner of this package holds before its own model: its
    number of actions, and either a constant action (returns None) or a feature
    map of ``n_inputs`` columns (returns the map's output width)."""
    # The loaders pass plain ints once per node (thousands in a large model):
    # those skip the full check, anything else gets it, named.
    plain = type(n_actions) is int and type(n_inputs) is int
    if not (plain and n_actions >= 1 and n_inputs >= 0):
        check_params(
            f"{type(learner).__name__}.check_integrity",
            {"n_actions": [int_in(1)], "n_inputs": [int_in(0)]},
            n_actions=n_actions,
            n_inputs=n_inputs,
        )
    if learner.n_actions_ != n_actions:
        raise fail(f"{where}.n_actions_", f"{learner.n_actions_}, expected {n_actions}")
    if learner.constant_ is not None:
        check_int(learner.constant_, f"{where}.constant_", 0, n_actions)
        return None
    if n_inputs == 0:
        raise fail(where, "a learned policy at a node without inputs")
    features = learner.features_
    if not isinstance(features, PolicyFeatures):
        raise fail(
            f"{where}.features_",
            f"expected PolicyFeatures, got {type(features).__name__}",
        )
    return features.check_integrity(f"{where}.features_", n_inputs)


def example_calls() -> dict[str, tuple]:
    """A tiny call of the compiled kernel with the argument types the policies
    pass (see :mod:`budgetdag_core._compiled`)."""
    return {"_row_major_mean_var": (np.zeros((2, 2)),)}
