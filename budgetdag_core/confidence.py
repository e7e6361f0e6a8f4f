"""Confidence of a state's classifier as extra policy inputs (beyond the paper).

A node policy normally sees only the features of the sensors acquired so far. With
``policy_features="sensors+confidence"`` it also sees how sure the state's own
classifier is: top-class probability, margin to the runner-up and entropy. The
training inputs come from the bank's out-of-fold probabilities (what the stop loss
is computed from); at predict time the refit bank gives them.
"""

from __future__ import annotations

import numpy as np

CONFIDENCE_FEATURES = ("top_proba", "margin", "entropy")
POLICY_FEATURES = ("sensors", "sensors+confidence")


def confidence_features(proba: np.ndarray) -> np.ndarray:
    """Top-class probability, margin and entropy of class probabilities.

    Parameters
    ----------
    proba : ndarray (..., n_classes)
        Class probabilities (rows sum to one).

    Returns
    -------
    ndarray (..., 3), float64
        ``top_proba``, ``margin`` (top minus second probability) and ``entropy``
        (in nats) along the last axis.

    Examples
    --------
    >>> confidence_features(np.array([[0.5, 0.5], [1.0, 0.0]])).round(3)
    array([[0.5  , 0.   , 0.693],
           [1.   , 1.   , 0.   ]])
    """
    p = np.asarray(proba, dtype=float)
    if p.shape[-1] == 1:
        top2 = np.concatenate([p, np.zeros_like(p)], axis=-1)
    else:
        top2 = np.partition(p, p.shape[-1] - 2, axis=-1)[..., -2:]
    top, second = top2[..., 1], top2[..., 0]
    with np.errstate(divide="ignore", invalid="ignore"):
        plogp = np.where(p > 0, p * np.log(np.where(p > 0, p, 1.0)), 0.0)
    entropy = -plogp.sum(axis=-1)
    return np.stack([top, top - second, np.maximum(entropy, 0.0)], axis=-1)


def policy_inputs(features: np.ndarray, conf: np.ndarray | None) -> np.ndarray:
    """A node policy's inputs: the acquired features, then any confidences."""
    return features if conf is None else np.hstack([features, conf])
