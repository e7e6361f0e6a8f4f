"""Temperature scaling of class probabilities, fitted on out-of-fold predictions.

One scalar per bank state: ``q = softmax(log(p) / T)``. It keeps the predicted
class (so stop losses do not change) and only fixes over- or under-confidence.
The out-of-fold probabilities the bank computes anyway are the held-out data it
needs, so calibration costs no extra model fit.

All states are fitted at once (:func:`fit_temperatures`): the log loss is
convex in the inverse temperature ``1 / T``, so a safeguarded Newton iteration
on it converges in a few vectorised steps, where a scalar search per state cost
seconds on DAGs of hundreds of states.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numba import njit

from .._compiled import before_call
from .._threads import map_in_threads, single_threaded, threads_for

# Floor on probabilities before the log: memorising models output exact zeros.
EPS = 1e-6
MAX_CALIBRATION_ROWS = 20_000
#: Rows x states x classes a Newton step touches at most; DAGs with many states
#: calibrate each temperature on fewer rows (never fewer than MIN_CALIBRATION_ROWS).
MAX_CALIBRATION_VALUES = 2**20
MIN_CALIBRATION_ROWS = 2_000
LOG_T_BOUNDS = (np.log(0.05), np.log(50.0))
#: States scored together (bounds the float64 temporaries).
STATE_CHUNK_VALUES = 2**22
#: Rows x states x classes from which the states are shared among threads.
PARALLEL_CALIBRATION_VALUES = 2**18


def apply_temperature(proba: np.ndarray, temperature: float | np.ndarray) -> np.ndarray:
    """Rescale probabilities (last axis = classes) by ``temperature`` (or by
    an array of temperatures that broadcasts against ``proba``)."""
    if np.ndim(temperature) == 0 and temperature == 1.0:
        return proba
    logits = np.log(np.maximum(proba, EPS)) / temperature
    logits -= logits.max(axis=-1, keepdims=True)
    out = np.exp(logits)
    out /= out.sum(axis=-1, keepdims=True)
    return out.astype(proba.dtype, copy=False)


def apply_temperatures(
    proba: np.ndarray, temperatures: np.ndarray, n_jobs: int | None = None
) -> None:
    """Rescale ``proba`` (n, n_states, n_classes) in place, one temperature per
    state (states at temperature 1 are left as they are); groups of states in
    ``n_jobs`` threads."""

    def rescale(states: np.ndarray) -> None:
        logits = np.log(np.maximum(proba[:, states], EPS)) / temperatures[states, None]
        logits -= logits.max(axis=-1, keepdims=True)
        out = np.exp(logits)
        out /= out.sum(axis=-1, keepdims=True)
        proba[:, states] = out

    states = np.flatnonzero(temperatures != 1.0)
    _in_threads(rescale, _state_chunks(proba, states, n_jobs), n_jobs)


def _state_chunks(
    proba: np.ndarray, states: np.ndarray, n_jobs: int | None = None
) -> list[np.ndarray]:
    """``states`` in groups of at most ``STATE_CHUNK_VALUES`` values, and in
    at least one group per thread when there is work enough to share."""
    per_state = max(1, proba.shape[0] * proba.shape[2])
    size = max(1, STATE_CHUNK_VALUES // per_state)
    workers = threads_for(n_jobs)
    if workers > 1 and len(states) * per_state >= PARALLEL_CALIBRATION_VALUES:
        size = min(size, -(-len(states) // workers))
    return [states[i : i + size] for i in range(0, len(states), size)]


def _in_threads(
    work: Callable[[np.ndarray], None], chunks: list[np.ndarray], n_jobs: int | None
) -> None:
    """``work(chunk)`` for each chunk, in up to ``n_jobs`` threads (NumPy
    releases the GIL in the element-wise passes; each state's numbers do not
    depend on the group it is computed in)."""
    with single_threaded():
        map_in_threads(work, chunks, min(threads_for(n_jobs), len(chunks)))


def _row_mean(values: np.ndarray, weight: np.ndarray | None) -> np.ndarray:
    """Mean over the rows (axis 0) of (n, S) ``values``, row i counting
    ``weight[i]`` times (None: plain mean)."""
    if weight is None:
        return values.mean(axis=0)
    return weight @ values / weight.sum()


def _nll(
    logp: np.ndarray,
    picked: np.ndarray,
    beta: np.ndarray,
    weight: np.ndarray | None = None,
) -> np.ndarray:
    """Mean log loss per state of ``softmax(beta * logp)``; logp (C, n, S).

    Classes come first so that the reductions over them are sums of slabs
    (reductions along a short last axis are slow in NumPy).
    """
    z = logp * beta
    zmax = z.max(axis=0)
    lse = zmax + np.log(np.exp(z - zmax).sum(axis=0))
    return _row_mean(lse - beta * picked, weight)


def _gradient(
    logp: np.ndarray,
    picked: np.ndarray,
    beta: np.ndarray,
    weight: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """First and second derivative of :func:`_nll` in ``beta``, per state."""
    z = logp * beta
    z -= z.max(axis=0)
    q = np.exp(z)
    q /= q.sum(axis=0)
    mean = (q * logp).sum(axis=0)
    var = (q * logp * logp).sum(axis=0) - mean**2
    return (
        _row_mean(mean - picked, weight),
        np.maximum(_row_mean(var, weight), 1e-300),
    )


def _newton_beta(
    logp: np.ndarray, picked: np.ndarray, weight: np.ndarray | None = None
) -> np.ndarray:
    """Per state, the inverse temperature in the bounds minimising the log loss.

    A state whose loss still falls at a bound stops there; the others take
    Newton steps on the convex 1-D loss from ``beta = 1``, kept inside a
    bracket that shrinks with the sign of the gradient (bisection when a step
    leaves it).
    """
    n_states = logp.shape[2]
    low = np.full(n_states, np.exp(-LOG_T_BOUNDS[1]))
    high = np.full(n_states, np.exp(-LOG_T_BOUNDS[0]))
    at_low = _gradient(logp, picked, low, weight)[0] >= 0
    at_high = _gradient(logp, picked, high, weight)[0] <= 0
    beta = np.where(at_low, low, np.where(at_high, high, 1.0))
    todo = np.flatnonzero(~(at_low | at_high))
    for _ in range(100):
        if not todo.size:
            break
        b = beta[todo]
        grad, hess = _gradient(logp[:, :, todo], picked[:, todo], b, weight)
        low[todo] = np.where(grad < 0, b, low[todo])
        high[todo] = np.where(grad > 0, b, high[todo])
        step = b - grad / hess
        inside = (step > low[todo]) & (step < high[todo])
        new = np.where(inside, step, 0.5 * (low[todo] + high[todo]))
        beta[todo] = new
        todo = todo[np.abs(new - b) > 1e-7 * np.maximum(1.0, b)]
    return beta


def fit_temperatures(
    proba: np.ndarray,
    y: np.ndarray,
    rng: np.random.Generator | None = None,
    n_jobs: int | None = None,
    sample_weight: np.ndarray | None = None,
) -> np.ndarray:
    """Per state, the temperature minimising the log loss of ``proba`` (n, S, C).

    Uses at most ``MAX_CALIBRATION_ROWS`` rows, and fewer on DAGs with many
    states (``MAX_CALIBRATION_VALUES``; one random subset shared by the
    states). A state keeps ``T = 1`` when its probabilities carry no ranking
    (constant) or when scaling lowers its log loss by less than 1e-4. Groups
    of states are fitted in ``n_jobs`` threads (the same temperatures).
    ``sample_weight``: row i's log loss counts that many times.
    """
    n, n_states, n_classes = proba.shape
    budget = MAX_CALIBRATION_VALUES // max(1, n_states * n_classes)
    cap = min(MAX_CALIBRATION_ROWS, max(MIN_CALIBRATION_ROWS, budget))
    y = np.asarray(y)
    w = None if sample_weight is None else np.asarray(sample_weight, dtype=float)
    if n > cap:
        rng = rng if rng is not None else np.random.default_rng(0)
        rows = np.sort(rng.choice(n, cap, replace=False))
        proba, y = proba[rows], y[rows]
        w = None if w is None else w[rows]
    if w is not None and w.sum() == 0:
        return np.ones(n_states)  # the sampled rows all weigh 0: no evidence
    temperatures = np.ones(n_states)

    def fit(states: np.ndarray) -> None:
        # Classes first: (C, n, S); float32 halves the memory traffic.
        chunk = np.asarray(proba[:, states], dtype=np.float32).transpose(2, 0, 1)
        logp = np.log(np.maximum(chunk, np.float32(EPS)))
        ranked = (logp.max(axis=0) > logp.min(axis=0)).any(axis=0)
        if not ranked.any():
            return
        logp = np.ascontiguousarray(logp[:, :, ranked])
        picked = np.take_along_axis(logp, y[None, :, None], axis=0)[0]
        beta = _newton_beta(logp, picked, w)
        gain = _nll(logp, picked, np.ones_like(beta), w) - _nll(logp, picked, beta, w)
        # Keep T = 1 unless scaling helps measurably: no churn on calibrated models.
        temperatures[states[ranked]] = np.where(gain < 1e-4, 1.0, 1.0 / beta)

    _in_threads(fit, _state_chunks(proba, np.arange(n_states), n_jobs), n_jobs)
    return temperatures


def fit_temperature(
    proba: np.ndarray, y: np.ndarray, rng: np.random.Generator | None = None
) -> float:
    """The temperature minimising the log loss of ``proba`` (n, C) for labels ``y``
    (one state of :func:`fit_temperatures`)."""
    return float(fit_temperatures(np.asarray(proba)[:, None, :], y, rng)[0])


@njit(nogil=True, cache=True)
def _calibration_gaps(proba, y, n_bins):
    """Per state and confidence bin: summed correctness and summed top-class
    probability, over the rows in row order (as ``np.bincount`` sums them).
    (Their difference is taken outside: an array expression here would add a
    third of this kernel's compile time.)

    Also returns the first (row, state) whose top probability is NaN or
    negative, which has no bin (``(-1, -1)`` when there is none); the pass
    stops there rather than write outside the table.
    """
    n, n_states, n_classes = proba.shape
    gaps_correct = np.zeros((n_states, n_bins))
    gaps_conf = np.zeros((n_states, n_bins))
    for i in range(n):
        for k in range(n_states):
            conf = np.float64(proba[i, k, 0])
            top = 0
            for c in range(1, n_classes):
                if proba[i, k, c] > conf:  # the first of tied classes stays
                    conf = np.float64(proba[i, k, c])
                    top = c
            if not conf >= 0.0:
                return gaps_correct, gaps_conf, i, k
            b = min(int(conf * n_bins), n_bins - 1)
            gaps_correct[k, b] += 1.0 if top == y[i] else 0.0
            gaps_conf[k, b] += conf
    return gaps_correct, gaps_conf, -1, -1


def expected_calibration_errors(
    proba: np.ndarray, y: np.ndarray, n_bins: int = 15
) -> np.ndarray:
    """Top-label ECE per state of ``proba`` (n, n_states, n_classes).

    One compiled pass over the rows, with the same sums in the same order as
    NumPy would do them (bit for bit): the bank computes it twice per fit, over
    every row, state and class.
    """
    proba = np.ascontiguousarray(proba)
    before_call("_calibration_gaps")
    correct, confidence, row, state = _calibration_gaps(
        proba, np.ascontiguousarray(y, dtype=np.int64), n_bins
    )
    if row >= 0:
        raise ValueError(
            f"class probabilities must be numbers >= 0; row {row} at state "
            f"{state} has {proba[row, state].tolist()}"
        )
    return np.abs(correct - confidence).sum(axis=1) / proba.shape[0]


def expected_calibration_error(
    proba: np.ndarray, y: np.ndarray, n_bins: int = 15
) -> float:
    """Top-label ECE: mean |accuracy - confidence| over equal-width bins."""
    per_state = expected_calibration_errors(np.asarray(proba)[:, None, :], y, n_bins)
    return float(per_state[0])


def example_calls() -> dict[str, tuple]:
    """A tiny call of the compiled kernel with the argument types the bank
    passes (see :mod:`budgetdag_core._compiled`)."""
    proba = np.full((2, 1, 2), 0.5, dtype=np.float32)
    return {"_calibration_gaps": (proba, np.zeros(2, dtype=np.int64), 15)}
