"""Turning class probabilities into a decision: the class of least expected loss."""

from __future__ import annotations

import numpy as np


def decide(proba: np.ndarray, loss_matrix: np.ndarray | None = None) -> np.ndarray:
    """Index of the class to predict from probabilities over the last axis.

    Without ``loss_matrix`` this is the most probable class (0/1 loss). With it,
    ``loss_matrix[i, j]`` being the loss of predicting j when the truth is i, it
    is the Bayes decision: the j that minimises ``sum_i proba[i] * loss[i, j]``.
    Ties go to the lowest index, as with ``argmax``.
    """
    proba = np.asarray(proba, dtype=float)
    if loss_matrix is None:
        return proba.argmax(axis=-1)
    return (proba @ np.asarray(loss_matrix, dtype=float)).argmin(axis=-1)
