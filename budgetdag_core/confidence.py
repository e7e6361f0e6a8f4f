"""The state classifier's probabilities as policy inputs (beyond the paper).

In the paper a node policy sees the features of the sensors acquired so far
(``policy_features="sensors"``). The state's own classifier already summarises
them; its calibrated probabilities use only the acquired sensors, so a policy may
look at them without peeking at anything unacquired (Theorem 2.1 still holds):

- ``"sensors+confidence"``: the sensors' features, then how sure the state's
  classifier is (top-class probability, margin to the runner-up, entropy);
- ``"confidence"``: only those three numbers (what a confidence cascade sees);
- ``"proba"``: the class probabilities and the three confidences (the
  posterior, which decides *which* sensor helps, not only whether to stop);
- ``"sensors+proba"``: the sensors' features, then the probabilities and the
  three confidences. A sensor that only says *where to look* (a context that
  leaves the posterior at the prior) is visible to the policy only through its
  values;
- ``"auto"``: ``"proba"`` at every state whose classifier says much the same
  for every row (:func:`constant_states`: the acquired sensors say little about
  the class alone, e.g. a context that only says where to look), and
  ``"sensors+proba"`` there. Where every state's classifier is informative this
  is exactly ``"proba"``.

The training inputs come from the bank's out-of-fold probabilities (what the stop
loss is computed from); at predict time the bank gives them. The root (no sensor)
always sees nothing: its classifier is the same for every row.
"""

from __future__ import annotations

import numpy as np

CONFIDENCE_FEATURES = ("top_proba", "margin", "entropy")
POLICY_FEATURES = (
    "sensors",
    "sensors+confidence",
    "confidence",
    "proba",
    "sensors+proba",
    "auto",
)

#: A state whose classifier's out-of-fold probabilities lie, on average, less
#: than this total-variation distance from their mean says much the same for
#: every row (see :func:`constant_states`). Set between CUBE-NM's context
#: state (0.001-0.018: 600 and 5000 training rows, 2 seeds) and the least
#: informative state of the paper's data sets (pima 0.065-0.104 over its 10
#: validation and test splits, landsat 0.45; out-of-fold, training rows only).
CONSTANT_STATE_SPREAD = 0.03


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
    and ``"confidence"``; probabilities then confidences for ``"proba"`` and
    ``"sensors+proba"``.
    """
    if not uses_model_inputs(policy_features):
        return None
    conf = confidence_features(proba)
    if policy_features in ("proba", "sensors+proba", "auto"):
        return np.concatenate([np.asarray(proba, dtype=float), conf], axis=-1)
    return conf


def policy_input_width(n_columns: int, n_classes: int, policy_features: str) -> int:
    """How many inputs :func:`policy_inputs` gives a policy that sees
    ``n_columns`` acquired columns and its classifier's output."""
    if not uses_model_inputs(policy_features):
        return n_columns
    with_proba = policy_features in ("proba", "sensors+proba", "auto")
    n_model = 3 + (n_classes if with_proba else 0)
    if policy_features in ("confidence", "proba", "auto"):
        return n_model
    return n_columns + n_model


def constant_states(oof_proba: np.ndarray) -> np.ndarray:
    """States whose classifier says much the same for every row.

    Parameters
    ----------
    oof_proba : ndarray (n_samples, n_states, n_classes)
        Out-of-fold class probabilities of every state.

    Returns
    -------
    ndarray (n_states,) of bool
        True where the mean total-variation distance of the rows' probabilities
        from their mean is below :data:`CONSTANT_STATE_SPREAD` (never the root,
        whose policy sees nothing). Policies with ``policy_features="auto"``
        see the acquired sensor values there: the probabilities give them
        nothing to route on.

    Examples
    --------
    >>> p = np.array([[[0.5, 0.5], [0.5, 0.5], [0.9, 0.1]],
    ...               [[0.5, 0.5], [0.52, 0.48], [0.1, 0.9]]])
    >>> constant_states(p).tolist()
    [False, True, False]
    """
    p = np.asarray(oof_proba)
    n, n_states = p.shape[:2]
    spread = np.empty(n_states)
    step = max(1, 2**22 // max(1, n * p.shape[2]))
    for start in range(0, n_states, step):
        block = np.asarray(p[:, start : start + step], dtype=float)
        distance = np.abs(block - block.mean(axis=0)).sum(axis=2) / 2
        spread[start : start + step] = distance.mean(axis=0)
    out = spread < CONSTANT_STATE_SPREAD
    out[0] = False
    return out


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
