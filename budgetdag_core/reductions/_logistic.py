"""Weighted L2 logistic regression by Newton's method, compiled (numba).

A filter tree fits thousands of small binary problems per Graph-Reduce (one per
tournament node per DAG state). ``LogisticRegression(solver="newton-cholesky")``
solves each in a few Newton steps too, but its input validation and set-up cost
more than the arithmetic on these problems (3.1 ms against 0.2 ms on 3 450 rows x
5 inputs), and NumPy spends a pass over the rows per operation. The compiled
solver takes each Newton step in one pass over the rows plus one matrix
product for the Hessian, and returns an ordinary fitted ``LogisticRegression`` with the
optimum of scikit-learn's objective, so predictions, saved files and their
checks are unchanged.
"""

from __future__ import annotations

import numpy as np
from numba import njit, types
from sklearn.linear_model import LogisticRegression

#: Stop when the largest gradient entry, per unit of total weight, is below this.
GRADIENT_TOL = 1e-5
#: Halvings of the backtracking line search at most.
MAX_HALVINGS = 30


#: LAPACK's dgesv as numba's own ``np.linalg.solve`` calls it (numba's helper
#: ``numba_xgesv``, which finds scipy's LAPACK): called directly, a Newton step
#: solves with the same routine on the same numbers, and compiling the solver
#: no longer builds ``np.linalg.solve``'s checks and error messages (4 of the
#: filter tree's 10 s of compilation on a fresh install).
_DGESV = types.ExternalFunction(
    "numba_xgesv",
    types.intc(
        types.char,  # kind: "d"
        types.intp,  # n
        types.intp,  # right-hand sides
        types.CPointer(types.float64),  # a (Fortran order), overwritten by LU
        types.intp,  # lda
        types.CPointer(types.int32),  # pivots
        types.CPointer(types.float64),  # b, overwritten by the solution
        types.intp,  # ldb
    ),
)
_DOUBLE = ord("d")


#: A full Newton step that moves no row's decision value by more than this
#: satisfies the line search's sufficient decrease without evaluating the
#: objective (see :func:`newton`).
SAFE_STEP = 1.5


@njit(nogil=True, cache=True)
def _decisions(F, coef, intercept, z, e):
    """Fill ``z`` (decision values at (coef, intercept)) and ``e = exp(-|z|)``
    (what the gradient pass needs; one exponential per row)."""
    linear = F @ coef
    for i in range(F.shape[0]):
        zi = linear[i] + intercept
        z[i] = zi
        e[i] = np.exp(-abs(zi))


@njit(nogil=True, cache=True)
def _objective(y, w, coef, penalty, z, e):
    """The objective from the decision values ``z`` and ``e`` of :func:`_decisions`."""
    loss = 0.0
    for i in range(z.shape[0]):
        if w[i] != 0.0:
            # log(1 + exp(z)) - y z, without overflow
            loss += w[i] * (np.log1p(e[i]) + max(z[i], 0.0) - y[i] * z[i])
    return loss + 0.5 * penalty * (coef @ coef)


@njit(nogil=True, cache=True)
def _largest_move(w, z, new_z):
    """The largest change of a counted row's decision value."""
    move = 0.0
    for i in range(z.shape[0]):
        if w[i] != 0.0:
            move = max(move, abs(new_z[i] - z[i]))
    return move


@njit(nogil=True, cache=True)
def _largest_abs(a):
    """``np.abs(a).max()`` of a non-empty vector (NaN if any entry is NaN)."""
    largest = 0.0
    for k in range(a.shape[0]):
        if np.isnan(a[k]):
            return np.nan
        largest = max(largest, abs(a[k]))
    return largest


@njit(nogil=True, cache=True)
def _solve(H, g):
    """``np.linalg.solve(H, g)`` for a square ``H``, by the same LAPACK call
    (dgesv on a Fortran-order copy) and with the same errors."""
    n = g.shape[0]
    for i in range(n):
        finite = np.isfinite(g[i])
        for j in range(n):
            finite = finite and np.isfinite(H[i, j])
        if not finite:
            raise np.linalg.LinAlgError("Array must not contain infs or NaNs.")
    lu = np.empty((n, n))
    for i in range(n):
        for j in range(n):
            lu[j, i] = H[i, j]  # lu's rows are H's columns: Fortran order
    solution = g.copy()
    pivots = np.empty(n, dtype=np.int32)
    info = _DGESV(_DOUBLE, n, 1, lu.ctypes, n, pivots.ctypes, solution.ctypes, n)
    if info != 0:
        raise np.linalg.LinAlgError("Matrix is singular to machine precision.")
    return solution


@njit(nogil=True, cache=True)
def newton(F, y, w, penalty, max_iter, tol, safe_step):
    """Coefficients, intercept and steps taken minimising
    ``sum_i w_i logloss_i + penalty * ||coef||^2 / 2``.

    Each step: one pass for the residuals and curvatures, the Hessian's
    feature block as one matrix product (BLAS), a solve of the small (d+1)
    system, and a backtracking line search on the objective.

    The objective (a logarithm per row, the costliest pass) is evaluated only
    when a step might fail the sufficient-decrease test. The logistic loss has
    |l'''| <= l'', so l(z + m) <= l(z) + l'(z) m + l''(z) (e^|m| - |m| - 1)
    (Bach 2010). Summed over the rows, a full Newton step that moves no
    decision value by more than D lowers the objective by at least
    1 - (e^D - D - 1) / D^2 times the predicted decrease: 0.12 at D =
    SAFE_STEP, where the test asks for 1e-4. The line search would take such a
    step whole, so it is taken without looking (``safe_step=0`` always looks).
    """
    n, d = F.shape
    total = 0.0
    positive = 0.0
    for i in range(n):
        total += w[i]
        positive += w[i] * y[i]
    total = max(total, 1e-300)
    coef = np.zeros(d)
    # Start from the best constant (the weighted log-odds): one step fewer.
    ratio = max(positive, 1e-12) / max(total - positive, 1e-12)
    intercept = min(max(np.log(ratio), -30.0), 30.0)
    z, e = np.empty(n), np.empty(n)
    new_z, new_e = np.empty(n), np.empty(n)
    _decisions(F, coef, intercept, z, e)
    objective = np.nan  # evaluated when a line search needs it
    Ft = np.ascontiguousarray(F.T)
    r = np.empty(n)
    Fs = np.empty((n, d))
    H = np.empty((d + 1, d + 1))
    g = np.empty(d + 1)
    steps = 0
    for _ in range(max_iter):
        r_sum = 0.0
        s_sum = 0.0
        border = np.zeros(d)
        for i in range(n):
            p = (1.0 if z[i] >= 0.0 else e[i]) / (1.0 + e[i])
            r[i] = w[i] * (p - y[i])
            s = w[i] * p * (1.0 - p)
            r_sum += r[i]
            s_sum += s
            for k in range(d):
                Fs[i, k] = F[i, k] * s
                border[k] += Fs[i, k]
        # Element loops rather than slice assignments: an assignment between
        # arrays compiles numba's shape checks and their formatted messages.
        Ftr = Ft @ r
        for k in range(d):
            g[k] = Ftr[k] + penalty * coef[k]
        g[d] = r_sum
        if _largest_abs(g) <= tol * total:
            break
        FtFs = Ft @ Fs
        for k in range(d):
            for m in range(d):
                H[k, m] = FtFs[k, m]
        # A tiny floor on the diagonal keeps the system positive definite when
        # every row is predicted with certainty (or the penalty is negligible).
        floor = 1e-12 * total
        for k in range(d):
            H[k, k] += penalty + floor
            H[d, k] = border[k]
            H[k, d] = border[k]
        H[d, d] = s_sum + floor
        step = _solve(H, g)
        decrease = g @ step
        t = 1.0
        new_coef = coef - step[:d]
        new_intercept = intercept - step[d]
        _decisions(F, new_coef, new_intercept, new_z, new_e)
        if safe_step > 0.0 and _largest_move(w, z, new_z) <= safe_step:
            objective = np.nan
        else:
            if np.isnan(objective):
                objective = _objective(y, w, coef, penalty, z, e)
            new_objective = _objective(y, w, new_coef, penalty, new_z, new_e)
            for _ in range(MAX_HALVINGS):
                if new_objective <= objective - 1e-4 * t * decrease:
                    break
                t *= 0.5
                new_coef = coef - t * step[:d]
                new_intercept = intercept - t * step[d]
                _decisions(F, new_coef, new_intercept, new_z, new_e)
                new_objective = _objective(y, w, new_coef, penalty, new_z, new_e)
            objective = new_objective
        coef, intercept = new_coef, new_intercept
        z, new_z = new_z, z
        e, new_e = new_e, e
        steps += 1
        if t * abs(decrease) <= 1e-14 * total:
            break
    return coef, intercept, steps


def fit_logistic(
    F: np.ndarray,
    label: np.ndarray,
    weight: np.ndarray,
    C: float = 1.0,
    max_iter: int = 100,
    safe_step: float = SAFE_STEP,
) -> LogisticRegression:
    """Minimise ``C * sum_i w_i logloss_i + ||coef||^2 / 2`` (intercept free).

    The objective of scikit-learn's ``LogisticRegression(C=C)`` with
    ``sample_weight=weight``, solved by Newton steps (a solve of the d+1
    Hessian) with a backtracking line search. A row of weight zero does not
    count.

    Parameters
    ----------
    F : ndarray (n, d)
        Features (the filter tree standardises them).
    label : ndarray (n,) of bool
        True for the positive class.
    weight : ndarray (n,)
        Non-negative sample weights.
    C : float
        Inverse L2 strength, as in scikit-learn.
    max_iter : int
        Newton steps at most.
    safe_step : float
        Full steps moving no decision value by more than this skip the line
        search's objective (see :func:`newton`); 0 evaluates it at every step.

    Returns
    -------
    LogisticRegression
        Fitted (``classes_`` ``[False, True]``, ``coef_``, ``intercept_``,
        ``n_iter_``), usable as if scikit-learn had fitted it.

    Examples
    --------
    >>> import numpy as np
    >>> x = np.linspace(-2, 2, 41).reshape(-1, 1)
    >>> model = fit_logistic(x, x[:, 0] > 0.1, np.ones(41), C=10.0)
    >>> bool(model.predict([[1.0]])[0]), bool(model.predict([[-1.0]])[0])
    (True, False)
    """
    F = np.ascontiguousarray(F, dtype=np.float64)
    y = np.ascontiguousarray(label, dtype=np.float64)
    w = np.ascontiguousarray(weight, dtype=np.float64)
    coef, intercept, steps = newton(
        F, y, w, 1.0 / C, int(max_iter), GRADIENT_TOL, float(safe_step)
    )
    return as_logistic_regression(coef, intercept, steps, C, max_iter)


def as_logistic_regression(
    coef: np.ndarray, intercept: float, steps: int, C: float, max_iter: int
) -> LogisticRegression:
    """A fitted binary ``LogisticRegression`` (classes ``[False, True]``) with
    the solver's coefficients, intercept and step count."""
    model = LogisticRegression(C=C, max_iter=max_iter, solver="newton-cholesky")
    model.classes_ = np.array([False, True])
    model.coef_ = np.array(coef, dtype=float).reshape(1, -1)  # its own array
    model.intercept_ = np.array([float(intercept)])
    model.n_features_in_ = model.coef_.shape[1]
    model.n_iter_ = np.array([steps], dtype=np.int32)
    return model
