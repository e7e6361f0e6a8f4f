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
  three confidences;
- ``"auto"`` (the default): ``"proba"``, except at states whose classifier says
  much the same for every row (:func:`constant_states`: the acquired sensors
  say little about the class alone, e.g. a context that only says where to
  look), where the policy sees ``"sensors+proba"``: such a sensor is visible
  only through its values. Where every state's classifier is informative this
  is exactly ``"proba"``.

The training inputs come from the bank's out-of-fold probabilities (what the stop
loss is computed from); at predict time the bank gives them. The root (no sensor)
always sees nothing: its classifier is the same for every row.

:class:`PolicyInputs` is the one place that says what the policy at a state
sees; training, routing, sessions, explanations and figures all ask it. A new
kind of input is a new ``kind`` here (its width and how rows become inputs).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..bank import BaseBank

CONFIDENCE_FEATURES = ("top_proba", "margin", "entropy")
POLICY_FEATURES = (
    "sensors",
    "sensors+confidence",
    "confidence",
    "proba",
    "sensors+proba",
    "auto",
)
#: Kinds whose model part holds the probabilities (then the confidences).
_WITH_PROBA = ("proba", "sensors+proba", "auto")

#: A state whose classifier's out-of-fold probabilities lie, on average, less
#: than this total-variation distance from their mean says much the same for
#: every row (see :func:`constant_states`). Set between CUBE-NM's context
#: state (0.001-0.018: 600 and 5000 training rows, 2 seeds) and the least
#: informative state of the paper's data sets (pima 0.065-0.104 over its 10
#: validation and test splits; dna, landsat, letter, spam >= 0.28; out-of-fold,
#: training rows only).
CONSTANT_STATE_SPREAD = 0.03


def measured_values(
    X: np.ndarray, rows: np.ndarray | None, cols: np.ndarray
) -> np.ndarray:
    """The sensor values a policy reads: columns ``cols`` of ``rows`` of ``X``
    (None: all rows), a missing value (NaN: acquired but not measured) as 0.

    The bank reads a NaN as missing (boosting sends it to a learned side, a
    masked bank as a column not acquired); a policy's learner needs numbers,
    and 0 is the same number in training, batch predictions and sessions.

    Examples
    --------
    >>> measured_values(np.array([[1.0, np.nan], [3.0, 4.0]]), None, np.array([1]))
    array([[0.],
           [4.]])
    """
    values = X[:, cols] if rows is None else X[np.ix_(rows, cols)]  # a copy
    missing = np.isnan(values)
    if missing.any():
        values[missing] = 0.0
    return values


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
    and ``"confidence"``; probabilities then confidences for ``"proba"``,
    ``"sensors+proba"`` and ``"auto"``.
    """
    if not uses_model_inputs(policy_features):
        return None
    conf = confidence_features(proba)
    if policy_features in _WITH_PROBA:
        return np.concatenate([np.asarray(proba, dtype=float), conf], axis=-1)
    return conf


def policy_input_width(n_columns: int, n_classes: int, policy_features: str) -> int:
    """How many inputs :func:`policy_inputs` gives a policy that sees
    ``n_columns`` acquired columns and its classifier's output."""
    if not uses_model_inputs(policy_features):
        return n_columns
    n_model = 3 + (n_classes if policy_features in _WITH_PROBA else 0)
    if policy_features in ("confidence", "proba", "auto"):
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
    if policy_features in ("confidence", "proba", "auto"):
        return np.asarray(conf, dtype=float).reshape(len(features), -1)
    return np.hstack([features, conf])


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


@dataclass(frozen=True)
class PolicyInputs:
    """What the policy at each DAG state sees of a row.

    Parameters
    ----------
    kind : str
        One of :data:`POLICY_FEATURES` (``"sensors"`` for regressors and loss
        tables).
    state_columns : sequence of ndarray
        Per state, the positions (spec column order) of its sensors' columns.
    n_classes : int
        Classes of the state classifiers whose probabilities a policy may read
        (0 when no policy reads them).
    value_states : ndarray of bool, optional
        With ``kind="auto"``: per state, whether its policy also sees the
        acquired values (:func:`constant_states`); None: nowhere.
    value_kind : {"sensors+proba", "sensors"}
        What ``kind="auto"`` sees at those states. A sparse DAG's policies see
        the values only (``"sensors"``): there the near-constant probabilities
        differ between the out-of-fold models a policy learns from and the
        models that serve it, and a policy splitting on that noise routes
        rows the wrong way at predict time.
    route_states : ndarray of bool, optional
        With ``kind="auto"``: per state, whether it is a routing sensor's state
        (a routed DAG's, whose children are the routes of that sensor's
        values) that is not a value state: its policy sees ``"sensors+proba"``,
        the values it routes by and the posterior they leave. None: nowhere.

    Notes
    -----
    A missing sensor value (NaN in ``X``: acquired but not measured) is seen
    by a policy as 0 (:func:`measured_values`); the bank's probabilities it
    may also read treat it as missing.

    A new kind of input is named in :data:`POLICY_FEATURES`, given a width in
    :meth:`width` and built in :meth:`of_rows`, which sees whole rows (every
    column, acquired or not, and the state: enough for inputs such as masked
    sensor values with the acquisition mask). Training, routing, sessions,
    explanations, figures and the integrity check all go through these two.

    Examples
    --------
    >>> inputs = PolicyInputs("proba", [np.array([], int), np.array([0])], 2)
    >>> inputs.width(0), inputs.width(1)  # the root sees nothing
    (0, 5)
    >>> X = np.array([[1.5], [2.5]])
    >>> inputs.of_rows(X, 1, proba=np.array([[0.9, 0.1], [0.5, 0.5]])).shape
    (2, 5)
    """

    kind: str
    state_columns: Sequence[np.ndarray]
    n_classes: int = 0
    value_states: np.ndarray | None = None
    value_kind: str = "sensors+proba"
    route_states: np.ndarray | None = None

    def kind_at(self, state: int) -> str:
        """The kind of inputs of the policy at ``state`` (``"auto"`` resolved)."""
        if self.kind != "auto":
            return self.kind
        if self.value_states is not None and bool(self.value_states[state]):
            return self.value_kind
        if self.route_states is not None and bool(self.route_states[state]):
            return "sensors+proba"
        return "proba"

    @property
    def reads_model(self) -> bool:
        """Whether some policy reads its state classifier's probabilities."""
        return uses_model_inputs(self.kind)

    def reads_model_at(self, state: int) -> bool:
        """Whether the policy at ``state`` reads its classifier's probabilities
        (never the root's: its classifier is the same for every row)."""
        return self.reads_model and bool(len(self.state_columns[state]))

    def width(self, state: int) -> int:
        """The number of inputs of the policy at ``state``."""
        n_columns = len(self.state_columns[state])
        if not self.reads_model_at(state):
            return n_columns
        return policy_input_width(n_columns, self.n_classes, self.kind_at(state))

    def of_rows(
        self,
        X: np.ndarray,
        state: int,
        rows: np.ndarray | None = None,
        *,
        proba: np.ndarray | None = None,
        model_part: np.ndarray | None = None,
    ) -> np.ndarray:
        """Inputs at ``state`` of ``rows`` of ``X`` (spec columns; None: all rows).

        Only the state's own columns of ``X`` are read. ``proba`` are the state
        classifier's probabilities of those rows, or ``model_part`` the
        :func:`model_inputs` computed from them; either is needed where
        :meth:`reads_model_at` holds.
        """
        cols = self.state_columns[state]
        if not self.reads_model_at(state):
            return measured_values(X, rows, cols)
        if model_part is None:
            model_part = model_inputs(proba, self.kind)
        kind = self.kind_at(state)
        if not uses_model_inputs(kind):
            return measured_values(X, rows, cols)
        if not uses_sensor_values(kind):  # no copy of unread columns
            n = len(X) if rows is None else len(rows)
            return policy_inputs(np.empty((n, 0)), model_part, kind)
        return policy_inputs(measured_values(X, rows, cols), model_part, kind)

    def training(
        self, X: np.ndarray, oof_proba: np.ndarray | None
    ) -> Callable[[int], np.ndarray]:
        """Graph-Reduce's inputs at each state: all training rows, with the
        bank's out-of-fold probabilities ``oof_proba`` (rows x states x classes;
        the stop losses are computed from the same)."""
        if self.reads_model and oof_proba is None:
            raise ValueError(
                f"policy_features={self.kind!r} needs the bank's out-of-fold "
                "probabilities, which this (slim, saved) bank lacks: refit it."
            )
        if not self.reads_model:
            return lambda k: self.of_rows(X, k)
        return lambda k: self.of_rows(X, k, proba=oof_proba[:, k])

    def predicted(
        self, bank: Any, X: np.ndarray, state: int, rows: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray | None]:
        """Inputs at ``state`` of ``rows`` of ``X``, asking the fitted ``bank``
        for probabilities where they are read; also those probabilities (else
        None), so that a row stopping here is not scored twice."""
        if not self.reads_model_at(state):
            return self.of_rows(X, state, rows), None
        if isinstance(bank, BaseBank):  # it copies only the columns it reads
            proba = bank.predict_proba(X, state, rows=rows)
        else:
            proba = bank.predict_proba(X[rows], state)
        return self.of_rows(X, state, rows, proba=proba), proba

    def given(
        self,
        X: np.ndarray,
        *,
        state_proba: np.ndarray | None = None,
        model_part: np.ndarray | None = None,
    ) -> Callable[[int, np.ndarray], np.ndarray]:
        """Routing inputs from probabilities computed beforehand: every state's
        ``state_proba`` (rows x states x classes) or ``model_part`` (rows x
        states x d, see :func:`model_inputs`), e.g. a bank's out-of-fold ones."""
        if model_part is not None:
            return lambda k, rows: self.of_rows(
                X, k, rows, model_part=model_part[rows, k]
            )
        return lambda k, rows: self.of_rows(X, k, rows, proba=state_proba[rows, k])


class GrowthStateInputs:
    """A grown DAG's ``state_inputs(k, rows, proba)``: ``inputs.of_rows(X, k,
    rows, proba=proba)``, with a ``cache_key`` that names what it computes.

    The key digests ``inputs`` (kind, state columns, value and route states)
    and the bytes of ``X``: two callables of equal keys give equal inputs
    for equal rows and probabilities, so a walk may keep a row's inputs at
    a state and reuse them (``strategies.SparseGrowth.inputs_at``) across
    the cost scales of a sweep and the held-out parts of a fit.

    Examples
    --------
    >>> inputs = PolicyInputs("proba", [np.array([], int), np.array([0])], 2)
    >>> X = np.array([[1.5], [2.5]])
    >>> a, b = GrowthStateInputs(inputs, X), GrowthStateInputs(inputs, X.copy())
    >>> a.cache_key == b.cache_key
    True
    >>> a(1, np.array([1]), np.array([[0.9, 0.1]])).shape
    (1, 5)
    """

    def __init__(self, inputs: PolicyInputs, X: np.ndarray) -> None:
        self.inputs = inputs
        self.X = X
        self.cache_key = _inputs_digest(inputs, X)

    def __call__(self, k: int, rows: np.ndarray, proba: np.ndarray) -> np.ndarray:
        return self.inputs.of_rows(self.X, k, rows, proba=proba)


def _inputs_digest(inputs: PolicyInputs, X: np.ndarray) -> bytes:
    """A digest of everything :meth:`PolicyInputs.of_rows` reads besides the
    rows and their probabilities."""
    digest = hashlib.blake2b(digest_size=20)
    head = (inputs.kind, inputs.n_classes, inputs.value_kind, X.shape, X.dtype.str)
    digest.update(repr(head).encode())
    for part in (inputs.value_states, inputs.route_states):
        digest.update(b"-" if part is None else np.asarray(part, bool).tobytes())
    for cols in inputs.state_columns:
        digest.update(np.asarray(cols, dtype=np.int64).tobytes() + b";")
    digest.update(np.ascontiguousarray(X).tobytes())
    return digest.digest()
