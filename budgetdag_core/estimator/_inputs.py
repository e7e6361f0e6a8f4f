"""The state classifier's probabilities as policy inputs (beyond the paper).

In the paper a node policy sees the features of the sensors acquired so far
(``policy_features="sensors"``). The state's own classifier already summarises
them; its calibrated probabilities use only the acquired sensors, so a policy may
look at them without peeking at anything unacquired (Theorem 2.1 still holds):

- ``"sensors+confidence"``: the sensors' features, then how sure the state's
  classifier is (top-class probability, margin to the runner-up, entropy);
- ``"confidence"``: only those three numbers (what a confidence cascade sees);
- ``"proba"``: the class probabilities and the three confidences (the
  posterior, which decides *which* sensor helps, not only whether to stop).

The training inputs come from the bank's out-of-fold probabilities (what the stop
loss is computed from); at predict time the bank gives them. The root (no sensor)
always sees nothing: its classifier is the same for every row.
"""

from __future__ import annotations

import numpy as np

CONFIDENCE_FEATURES = ("top_proba", "margin", "entropy")
POLICY_FEATURES = ("sensors", "sensors+confidence", "confidence", "proba")


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


def uses_model_inputs(policy_features: str) -> bool:
    """Whether policies of this kind look at the state classifier's output."""
    return policy_features != "sensors"


def uses_sensor_values(policy_features: str) -> bool:
    """Whether policies of this kind look at the acquired sensors' values."""
    return policy_features.startswith("sensors")


def model_inputs(proba: np.ndarray, policy_features: str) -> np.ndarray | None:
    """What a policy sees of a state classifier's probabilities (``...``, n_classes).

    None for ``"sensors"``; the three confidences for ``"sensors+confidence"``
    and ``"confidence"``; probabilities then confidences for ``"proba"``.
    """
    if not uses_model_inputs(policy_features):
        return None
    conf = confidence_features(proba)
    if policy_features == "proba":
        return np.concatenate([np.asarray(proba, dtype=float), conf], axis=-1)
    return conf


def policy_input_width(n_columns: int, n_classes: int, policy_features: str) -> int:
    """How many inputs :func:`policy_inputs` gives a policy that sees
    ``n_columns`` acquired columns and its classifier's output."""
    if not uses_model_inputs(policy_features):
        return n_columns
    n_model = 3 + (n_classes if policy_features == "proba" else 0)
    if policy_features in ("confidence", "proba"):
        return n_model
    return n_columns + n_model


def policy_inputs(
    features: np.ndarray,
    conf: np.ndarray | None,
    policy_features: str = "sensors+confidence",
) -> np.ndarray:
    """A node policy's inputs from the acquired ``features`` and the
    :func:`model_inputs` ``conf`` of its classifier (None: features only)."""
    if conf is None:
        return features
    if policy_features in ("confidence", "proba"):
        return np.asarray(conf, dtype=float).reshape(len(features), -1)
    return np.hstack([features, conf])
