"""Class decisions and their losses: least expected loss, matrix loss of labels."""

from __future__ import annotations

from typing import Any

import numpy as np


def check_loss_matrix(loss_matrix: Any, n_classes: int) -> np.ndarray | None:
    """``loss_matrix`` as a checked float array, or None for the 0/1 loss.

    Parameters
    ----------
    loss_matrix : array-like (n_classes, n_classes) or None
        ``loss_matrix[i, j]``: the loss of predicting class j for truth i.
    n_classes : int

    Raises
    ------
    ValueError
        Naming the shape, or non-finite or negative entries.

    Examples
    --------
    >>> check_loss_matrix([[0, 1], [5, 0]], 2).tolist()
    [[0.0, 1.0], [5.0, 0.0]]
    >>> check_loss_matrix(None, 3) is None
    True
    """
    if loss_matrix is None:
        return None
    lm = np.asarray(loss_matrix, dtype=float)
    if lm.shape != (n_classes, n_classes):
        raise ValueError(
            f"loss_matrix must be {n_classes}x{n_classes} (one row and column "
            f"per class); got shape {lm.shape}."
        )
    if not np.isfinite(lm).all() or (lm < 0).any():
        raise ValueError("loss_matrix entries must be finite and non-negative.")
    return lm


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


def encode_labels(y: np.ndarray, classes: np.ndarray) -> np.ndarray:
    """Class index of each label in sorted ``classes``; -1 for unseen labels."""
    y = np.asarray(y)
    pos = np.clip(np.searchsorted(classes, y), 0, len(classes) - 1)
    return np.where(classes[pos] == y, pos, -1).astype(np.intp)


def matrix_loss(
    loss_matrix: np.ndarray, y_enc: np.ndarray, pred: np.ndarray
) -> np.ndarray:
    """``loss_matrix[y, pred]`` per row (and state: ``pred`` is (n, k)); 1 for a
    label unseen in training (``y_enc`` -1)."""
    lm = np.asarray(loss_matrix, dtype=float)
    y = np.asarray(y_enc, dtype=np.intp)
    seen = y >= 0
    return np.where(seen[:, None], lm[np.where(seen, y, 0)[:, None], pred], 1.0)
