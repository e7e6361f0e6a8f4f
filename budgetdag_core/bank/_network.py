"""A small ReLU network trained by Adam, for the mask-encoded bank model.

:class:`~budgetdag_core.bank.MaskEncodedClassifier` trains its network one
epoch at a time (fresh masks each epoch, early stopping on held-out rows).
scikit-learn's ``MLPClassifier.partial_fit`` does the same arithmetic, but in
float64 and with checks, label handling and copies around every epoch and
mini-batch; on the few-hundred-row, many-sensor tables this bank is for, they
cost more than the products themselves (digits: a sparse bank's five fold
networks were most of its fit). :class:`ReluNetwork` keeps only the
arithmetic, in float32: Glorot-uniform initial weights, ReLU hidden layers, a
logistic output unit with two classes and a softmax beyond, cross-entropy
plus ``alpha / 2`` times the squared weights per mini-batch row, and Adam
(scikit-learn's defaults: beta 0.9 / 0.999, epsilon 1e-8).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy.special import expit

#: Adam's decay rates and epsilon (scikit-learn's and Kingma & Ba's defaults).
ADAM_BETAS = (0.9, 0.999)
ADAM_EPSILON = 1e-8
#: Adam steps between two :func:`zero_subnormals` passes over the weights
#: and moments (a value decays into the subnormal range over many steps; a
#: pass per step cost a tenth of the training).
FLUSH_EVERY = 8
#: float32's smallest normal magnitude: below it, values are subnormal.
FLOAT32_TINY = np.float32(np.finfo(np.float32).tiny)


def zero_subnormals(a: np.ndarray) -> np.ndarray:
    """Set ``a``'s subnormal float32 values to zero, in place; return ``a``.

    The penalty drives a dead unit's weights, and Adam's moments of weights
    without gradient, geometrically towards zero, below float32's normal
    range, and arithmetic with subnormal operands runs several times slower
    on x86 CPUs (a digits fold network's training took twice as long). Each
    such value is below 1e-38: lost in the rounding of any sum with a
    normal term, so the network's outputs do not change.

    Examples
    --------
    >>> zero_subnormals(np.array([1e-40, -1e-39, 0.5], dtype=np.float32)).tolist()
    [0.0, 0.0, 0.5]
    """
    np.copyto(a, 0, where=np.abs(a) < FLOAT32_TINY)
    return a


class ReluNetwork:
    """A ReLU network's float32 weights and Adam's state.

    Parameters
    ----------
    sizes : sequence of int
        Input width, hidden widths, output width (1: a logistic unit for two
        classes; otherwise a softmax).
    alpha : float
        L2 penalty, per mini-batch row (scikit-learn's scaling).
    learning_rate : float
        Adam's step size.
    batch_size : int
        Mini-batch rows.
    seed : int
        Seeds the initial weights and each epoch's shuffling.
    """

    def __init__(
        self,
        sizes: Sequence[int],
        *,
        alpha: float,
        learning_rate: float,
        batch_size: int,
        seed: int,
    ) -> None:
        self.rng = np.random.default_rng([int(seed), 2])
        self.coefs: list[np.ndarray] = []
        self.intercepts: list[np.ndarray] = []
        for fan_in, fan_out in zip(sizes[:-1], sizes[1:], strict=True):
            bound = np.sqrt(6.0 / (fan_in + fan_out))
            W = self.rng.uniform(-bound, bound, (fan_in, fan_out))
            b = self.rng.uniform(-bound, bound, fan_out)
            self.coefs.append(W.astype(np.float32))
            self.intercepts.append(b.astype(np.float32))
        self.alpha = float(alpha)
        self.learning_rate = float(learning_rate)
        self.batch_size = max(1, int(batch_size))
        params = self.coefs + self.intercepts
        self.first = [np.zeros_like(p) for p in params]
        self.second = [np.zeros_like(p) for p in params]
        self.steps = 0

    def targets(self, y_index: np.ndarray) -> np.ndarray:
        """The output layer's targets of class indices ``y_index``."""
        n_out = self.coefs[-1].shape[1]
        if n_out == 1:
            return (y_index == 1).astype(np.float32)[:, None]
        Y = np.zeros((len(y_index), n_out), dtype=np.float32)
        Y[np.arange(len(y_index)), y_index] = 1.0
        return Y

    def epoch(
        self, Z: np.ndarray, Y: np.ndarray, weight: np.ndarray | None = None
    ) -> None:
        """One pass of Adam over the rows ``Z`` (float32) in a fresh order
        (``weight``: float32 row weights scaling each row's loss)."""
        order = self.rng.permutation(len(Z))
        for start in range(0, len(Z), self.batch_size):
            rows = order[start : start + self.batch_size]
            self.step(Z[rows], Y[rows], None if weight is None else weight[rows])

    def step(
        self, Z: np.ndarray, Y: np.ndarray, weight: np.ndarray | None = None
    ) -> None:
        """One Adam step on the mini-batch ``Z``, ``Y`` (``weight``: each
        row's cross-entropy times its weight)."""
        acts = [Z]
        last = len(self.coefs) - 1
        out = Z
        for i, (W, b) in enumerate(zip(self.coefs, self.intercepts, strict=True)):
            out = out @ W + b
            if i < last:
                np.maximum(out, 0.0, out=out)
                acts.append(out)
        if out.shape[1] == 1:
            out = expit(out)
        else:
            out -= out.max(axis=1, keepdims=True)
            np.exp(out, out=out)
            out /= out.sum(axis=1, keepdims=True)
        delta = out - Y  # the cross-entropy's gradient at the output's input
        if weight is not None:
            delta *= weight[:, None]
        n = np.float32(len(Z))
        grads_W: list[np.ndarray] = [None] * len(self.coefs)  # type: ignore[list-item]
        grads_b: list[np.ndarray] = [None] * len(self.coefs)  # type: ignore[list-item]
        for i in range(last, -1, -1):
            W = self.coefs[i]
            grads_W[i] = (acts[i].T @ delta + np.float32(self.alpha) * W) / n
            grads_b[i] = delta.mean(axis=0)
            if i:
                delta = (delta @ W.T) * (acts[i] > 0)
        self._adam(grads_W + grads_b)

    def _adam(self, grads: list[np.ndarray]) -> None:
        b1, b2 = ADAM_BETAS
        self.steps += 1
        t = self.steps
        rate = self.learning_rate * np.sqrt(1.0 - b2**t) / (1.0 - b1**t)
        params = self.coefs + self.intercepts
        for p, g, m, v in zip(params, grads, self.first, self.second, strict=True):
            m *= b1
            m += (1.0 - b1) * g
            v *= b2
            v += (1.0 - b2) * g * g
            p -= np.float32(rate) * m / (np.sqrt(v) + np.float32(ADAM_EPSILON))
            if t % FLUSH_EVERY == 0:  # values decay into the range over steps
                for a in (p, m, v):
                    zero_subnormals(a)
