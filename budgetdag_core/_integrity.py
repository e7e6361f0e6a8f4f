"""Structural checks of fitted objects, before anything runs on them.

A policy file (skops or pickle) holds arrays that index each other: a boosting
tree's child and feature indices, the columns of each DAG state, the children of
each node policy. Compiled prediction code trusts them, so a file whose indices
point out of range can crash the process (a segfault, not an exception) or give
silently wrong answers. Each class of a fitted model therefore checks its own
arrays (``check_integrity``) with the helpers here, and raises
:class:`IntegrityError` (a ``ValueError``) naming the attribute that is wrong;
the loaders (:func:`budgetdag_core.persist.check_model_integrity`) walk the
model from the estimator down.
"""

from __future__ import annotations

from collections.abc import Sequence
from numbers import Integral
from typing import Any

import numpy as np


class IntegrityError(ValueError):
    """A model's arrays are inconsistent (a damaged or forged model file)."""


def fail(where: str, what: str) -> IntegrityError:
    """The error for an inconsistency ``what`` found in ``where``."""
    return IntegrityError(f"Invalid model file: {where}: {what}.")


def check_int(value: Any, where: str, low: int, high: int | None = None) -> int:
    """``value`` as an int in ``[low, high)`` (``high`` None: no upper bound)."""
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise fail(where, f"expected an integer, got {type(value).__name__}")
    value = int(value)
    if value < low or (high is not None and value >= high):
        bound = f"[{low}, {high})" if high is not None else f">= {low}"
        raise fail(where, f"{value} is out of range {bound}")
    return value


def check_array(
    value: Any,
    where: str,
    *,
    shape: Sequence[int | None] | None = None,
    kind: str | None = None,
    finite: bool = False,
) -> np.ndarray:
    """``value`` as an ndarray of the given shape (None = any length) and dtype kind.

    ``kind`` is a string of accepted ``dtype.kind`` letters (``"iu"``, ``"f"``,
    ``"b"``, ...).
    """
    if not isinstance(value, np.ndarray):
        raise fail(where, f"expected an array, got {type(value).__name__}")
    if shape is not None:
        ok = value.ndim == len(shape) and all(
            want is None or got == want
            for got, want in zip(value.shape, shape, strict=True)
        )
        if not ok:
            wanted = tuple("n" if s is None else s for s in shape)
            raise fail(where, f"shape {value.shape}, expected {wanted}")
    if kind is not None and value.dtype.kind not in kind:
        raise fail(where, f"dtype {value.dtype} is not of kind {kind!r}")
    if finite and value.dtype.kind in "fc" and not np.isfinite(value).all():
        raise fail(where, "holds NaN or infinite values")
    return value


def check_indices(value: Any, where: str, high: int | None) -> np.ndarray:
    """A 1-D integer array with every entry in ``[0, high)`` (None: no bound)."""
    arr = check_array(value, where, shape=(None,), kind="iu")
    top = np.iinfo(np.int64).max if high is None else high
    if arr.size and (arr.min() < 0 or arr.max() >= top):
        bad = arr[(arr < 0) | (arr >= top)][0]
        raise fail(where, f"index {int(bad)} is out of range [0, {high})")
    if len(np.unique(arr)) != len(arr):
        raise fail(where, "repeated indices")
    return arr


def check_state_columns(
    state_columns: Any,
    where: str,
    n_columns: int | None,
    n_states: int | None = None,
) -> list[np.ndarray]:
    """Per state, valid column positions (``n_states`` entries when given).

    ``n_columns`` bounds the positions (None: the caller compares them later).
    """
    if not isinstance(state_columns, list | tuple):
        raise fail(where, f"expected a list, got {type(state_columns).__name__}")
    if n_states is not None and len(state_columns) != n_states:
        raise fail(where, f"{len(state_columns)} states, expected {n_states}")
    return [
        check_indices(cols, f"{where}[{k}]", n_columns)
        for k, cols in enumerate(state_columns)
    ]
