"""Temperature scaling of class probabilities, fitted on out-of-fold predictions.

One scalar per bank state: ``q = softmax(log(p) / T)``. It keeps the predicted
class (so stop losses do not change) and only fixes over- or under-confidence.
The out-of-fold probabilities the bank computes anyway are the held-out data it
needs, so calibration costs no extra model fit.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import minimize_scalar

# Floor on probabilities before the log: memorising models output exact zeros.
EPS = 1e-6
MAX_CALIBRATION_ROWS = 20_000
LOG_T_BOUNDS = (np.log(0.05), np.log(50.0))


def apply_temperature(proba: np.ndarray, temperature: float) -> np.ndarray:
    """Rescale probabilities (last axis = classes) by ``temperature``."""
    if temperature == 1.0:
        return proba
    logits = np.log(np.maximum(proba, EPS)) / temperature
    logits -= logits.max(axis=-1, keepdims=True)
    out = np.exp(logits)
    out /= out.sum(axis=-1, keepdims=True)
    return out.astype(proba.dtype, copy=False)


def fit_temperature(
    proba: np.ndarray, y: np.ndarray, rng: np.random.Generator | None = None
) -> float:
    """The temperature minimising the log loss of ``proba`` (n, C) for labels ``y``.

    Uses at most ``MAX_CALIBRATION_ROWS`` rows (a random subset) to stay cheap on
    large tables; returns 1.0 when the probabilities carry no ranking (constant).
    """
    if len(proba) > MAX_CALIBRATION_ROWS:
        rng = rng if rng is not None else np.random.default_rng(0)
        rows = rng.choice(len(proba), MAX_CALIBRATION_ROWS, replace=False)
        proba, y = proba[rows], y[rows]
    logp = np.log(np.maximum(proba.astype(float), EPS))
    if np.ptp(logp, axis=1).max() == 0:
        return 1.0
    picked = logp[np.arange(len(y)), y]

    def nll(log_t: float) -> float:
        z = logp / np.exp(log_t)
        zmax = z.max(axis=1)
        lse = zmax + np.log(np.exp(z - zmax[:, None]).sum(axis=1))
        return float(np.mean(lse - picked / np.exp(log_t)))

    res = minimize_scalar(nll, bounds=LOG_T_BOUNDS, method="bounded")
    # Keep T = 1 unless scaling helps measurably: avoids churn on calibrated models.
    if nll(0.0) - res.fun < 1e-4:
        return 1.0
    return float(np.exp(res.x))


def expected_calibration_error(
    proba: np.ndarray, y: np.ndarray, n_bins: int = 15
) -> float:
    """Top-label ECE: mean |accuracy - confidence| over equal-width bins."""
    conf = proba.max(axis=1)
    correct = proba.argmax(axis=1) == y
    bins = np.minimum((conf * n_bins).astype(int), n_bins - 1)
    total = 0.0
    for b in np.unique(bins):
        sel = bins == b
        total += sel.sum() * abs(correct[sel].mean() - conf[sel].mean())
    return float(total / len(y))
