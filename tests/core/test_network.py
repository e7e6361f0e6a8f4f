"""The masked bank's float32 ReLU network: its gradients and its training."""

from __future__ import annotations

import copy

import numpy as np
import pytest
from scipy.special import expit, log_softmax

from budgetdag_core.bank._network import ReluNetwork


def loss(net: ReluNetwork, Z: np.ndarray, Y: np.ndarray, params=None) -> float:
    """Cross-entropy plus ``alpha / 2`` x squared weights per row, in float64."""
    coefs, intercepts = params or (net.coefs, net.intercepts)
    out = Z.astype(float)
    last = len(coefs) - 1
    for i, (W, b) in enumerate(zip(coefs, intercepts, strict=True)):
        out = out @ np.asarray(W, dtype=float) + np.asarray(b, dtype=float)
        if i < last:
            out = np.maximum(out, 0.0)
    if out.shape[1] == 1:
        p = np.clip(expit(out), 1e-12, 1 - 1e-12)
        ce = -(Y * np.log(p) + (1 - Y) * np.log(1 - p)).sum(axis=1)
    else:
        ce = -(Y * log_softmax(out, axis=1)).sum(axis=1)
    penalty = sum(float((np.asarray(W, dtype=float) ** 2).sum()) for W in coefs)
    return float(ce.mean() + net.alpha / 2 * penalty / len(Z))


def numeric_gradient(net, Z, Y, layer: int, index: tuple, eps=1e-5) -> float:
    coefs = [np.asarray(W, dtype=float).copy() for W in net.coefs]
    intercepts = [np.asarray(b, dtype=float) for b in net.intercepts]
    coefs[layer][index] += eps
    up = loss(net, Z, Y, (coefs, intercepts))
    coefs[layer][index] -= 2 * eps
    down = loss(net, Z, Y, (coefs, intercepts))
    return (up - down) / (2 * eps)


@pytest.mark.parametrize("n_out", [1, 3])
def test_the_first_adam_step_moves_each_weight_against_its_gradient(n_out):
    # Adam's first step is -learning_rate x sign(gradient) (bias-corrected
    # moments of one gradient), so the step shows the backpropagated
    # gradient's sign, checked here against central differences.
    rng = np.random.default_rng(0)
    Z = rng.normal(size=(40, 5)).astype(np.float32)
    labels = rng.integers(0, max(n_out, 2), size=40)
    net = ReluNetwork(
        (5, 7, n_out), alpha=0.3, learning_rate=1e-3, batch_size=40, seed=1
    )
    Y = net.targets(labels)
    before = copy.deepcopy(net)
    net.step(Z, Y)
    checked = 0
    for layer in range(2):
        for index in np.ndindex(net.coefs[layer].shape):
            g = numeric_gradient(before, Z, Y, layer, index)
            if abs(g) < 1e-3:
                continue  # a dead unit or a kink: no sign to compare
            moved = float(net.coefs[layer][index] - before.coefs[layer][index])
            assert np.sign(moved) == -np.sign(g), (layer, index, g, moved)
            assert abs(moved) == pytest.approx(1e-3, rel=1e-2)
            checked += 1
    assert checked >= 20


@pytest.mark.parametrize("n_classes", [2, 4])
def test_epochs_lower_the_training_loss_and_are_seeded(n_classes):
    rng = np.random.default_rng(3)
    Z = rng.normal(size=(300, 6)).astype(np.float32)
    labels = (Z[:, 0] > 0).astype(int) + (n_classes == 4) * 2 * (Z[:, 1] > 0)
    sizes = (6, 16, 1 if n_classes == 2 else n_classes)

    def trained(seed: int) -> ReluNetwork:
        net = ReluNetwork(
            sizes, alpha=1e-4, learning_rate=1e-2, batch_size=32, seed=seed
        )
        Y = net.targets(labels)
        start = loss(net, Z, Y)
        for _ in range(30):
            net.epoch(Z, Y)
        assert loss(net, Z, Y) < 0.5 * start
        return net

    a, b = trained(5), trained(5)
    for Wa, Wb in zip(a.coefs, b.coefs, strict=True):
        assert Wa.dtype == np.float32
        np.testing.assert_array_equal(Wa, Wb)
