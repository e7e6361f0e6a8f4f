"""The loaders' structural check of a model, before anything runs on it.

Compiled prediction code trusts a model's index arrays (see
:mod:`budgetdag_core._integrity`), so the loaders refuse a model whose parts do
not check out. The model checks itself, part by part
(``BudgetDAGClassifier.check_integrity``); this module makes sure it is a
BudgetDAG estimator at all, and that whatever goes wrong is reported as a
``ValueError`` naming the model.
"""

from __future__ import annotations

from typing import Any

from .._integrity import IntegrityError, fail
from ..estimator import BudgetDAGClassifier, BudgetDAGRegressor


def check_model_integrity(model: Any) -> None:
    """Check a fitted BudgetDAG model's arrays against each other and its spec.

    Checked: the sensor spec and feature columns; the DAG (rebuilt from its
    units and compared); each state's columns; each node policy (its state,
    children, input width, actions, and the arrays of its filter tree or cost
    regression); ``classes_``; and the bank through its ``check_integrity``
    (every model's inputs and classes, every boosting tree's child, feature and
    threshold-bin indices, calibration temperatures).

    Parameters
    ----------
    model : BudgetDAGClassifier or BudgetDAGRegressor

    Raises
    ------
    ValueError
        Naming the first attribute found inconsistent.
    """
    if not isinstance(model, BudgetDAGClassifier | BudgetDAGRegressor):
        raise fail(
            "model", f"expected a BudgetDAG estimator, got {type(model).__name__}"
        )
    try:
        model.check_integrity()
    except IntegrityError:
        raise
    except Exception as exc:  # an attribute missing or of an unexpected type
        raise fail(
            type(model).__name__, f"unusable ({type(exc).__name__}: {exc})"
        ) from exc
