"""A greedy conditional-mutual-information acquirer with a masked classifier.

The idea behind GDFS (Covert et al., ICML 2023) and DIME (Gadgil et al., ICML
2024): at each step buy the sensor ``j`` with the largest ``I(y; x_j | x_o) /
cost_j`` given what ``o`` is observed, and stop when that falls below a
threshold. Those papers learn networks that predict the CMI; here it is
estimated directly, on CPU, with the masked classifier ``f``:

- draw ``k`` values of sensor ``j`` from its conditional given ``x_o``: the
  sensor's values in the ``k`` training rows nearest on the observed values
  (squared distance over the observed columns of standardised values; with
  nothing observed, a seeded sample of training rows, one estimate for all);
- plug each into the row, ``p_n = f(x_o, x_j = v_n)``;
- ``I = H(mean_n p_n) - mean_n H(p_n)`` (entropy of the mixture minus mean
  entropy: non-negative, zero when the sensor cannot change the prediction).

A sensor of several columns is drawn as a whole (its columns from one
neighbour). One forced rollout records each step's best score, so every
stopping threshold's policy is read from it (``Rollout.threshold_points``).
"""

from __future__ import annotations

import numpy as np
from _afa_common import MaskedClassifier, Rollout, nearest_rows, run_rollout

#: Rows whose candidates are scored in one prediction batch.
ROW_CHUNK = 32


def entropy(proba: np.ndarray) -> np.ndarray:
    return -(proba * np.log(np.clip(proba, 1e-12, None))).sum(axis=-1)


class GreedyCMI:
    """Greedy acquisition by estimated CMI per unit cost.

    Parameters
    ----------
    classifier : MaskedClassifier
        Fitted on the same training rows; its full model scores the rows.
    k_neighbors : int, default=16
        Draws of each candidate sensor's values.
    empty_reference : int, default=256
        Training rows drawn (seeded) as the values of a sensor when nothing is
        observed.
    random_state : int, default=0
    """

    def __init__(
        self,
        classifier: MaskedClassifier,
        *,
        k_neighbors: int = 16,
        empty_reference: int = 256,
        random_state: int = 0,
    ) -> None:
        self.classifier = classifier
        self.k_neighbors = int(k_neighbors)
        self.empty_reference = int(empty_reference)
        self.random_state = random_state

    def fit(self, X: np.ndarray, y: np.ndarray) -> GreedyCMI:
        """Keep the training rows (the classifier is fitted on them already)."""
        clf = self.classifier
        self.sensors = clf.sensors
        self.X_ = np.asarray(X, dtype=float)
        self.Z_ = (self.X_ - clf.mean_) / clf.scale_
        rng = np.random.default_rng(self.random_state)
        n_ref = min(self.empty_reference, len(self.X_))
        self.reference_ = np.sort(rng.choice(len(self.X_), n_ref, replace=False))
        return self

    def scores(self, X: np.ndarray, states: np.ndarray, neighbors: np.ndarray):
        """CMI per unit cost of every sensor for each row (NaN: bought)."""
        sensors, clf = self.sensors, self.classifier
        n, S = states.shape
        k = neighbors.shape[1]
        out = np.full((n, S), np.nan)
        cand_rows, cand_sensors = np.nonzero(~states)
        if not len(cand_rows):
            return out
        # One block of k rows per (row, candidate): the row's values, the
        # candidate's columns taken from each neighbour.
        rows = np.repeat(cand_rows, k)
        sens = np.repeat(cand_sensors, k)
        donors = neighbors[cand_rows].ravel()
        take = sensors.matrix[sens]
        values = np.where(take, self.X_[donors], X[rows])
        # Each row's observed columns once, then repeated (not per draw).
        cols = sensors.column_mask(states)[rows] | take
        proba = clf.predict_proba(values, cols).reshape(len(cand_rows), k, -1)
        cmi = entropy(proba.mean(axis=1)) - entropy(proba).mean(axis=1)
        out[cand_rows, cand_sensors] = (
            np.maximum(cmi, 0.0) / sensors.costs[cand_sensors]
        )
        return out

    def choose(self, X: np.ndarray, states: np.ndarray):
        """For each row: the best sensor, False (no own stop rule: thresholds
        are read afterwards), and its score."""
        score = np.full((len(X), self.sensors.n_sensors), np.nan)
        empty = ~states.any(axis=1)
        if empty.any():
            ref = self.reference_[None, :]
            score[empty] = self.scores(X[:1], states[:1] & False, ref)[0]
        rest = np.flatnonzero(~empty)
        cols = self.sensors.column_mask(states)
        Zq = (X - self.classifier.mean_) / self.classifier.scale_
        for start in range(0, len(rest), ROW_CHUNK):
            part = rest[start : start + ROW_CHUNK]
            nb = nearest_rows(self.Z_, Zq[part], cols[part], self.k_neighbors)
            score[part] = self.scores(X[part], states[part], nb)
        best = np.where(states, -np.inf, score).argmax(axis=1)
        return best, np.zeros(len(X), dtype=bool), score[np.arange(len(X)), best]

    def rollout(self, X: np.ndarray, *, max_cost: float | None = None) -> Rollout:
        """Every row of ``X`` through the acquirer, forced (the threshold
        policies are read from the recorded scores)."""
        return run_rollout(
            self.choose, self.classifier, X, force=True, max_cost=max_cost
        )
