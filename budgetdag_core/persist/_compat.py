"""Bring models saved by older versions up to date (used by the loaders only).

Two things change under a saved model. Modules move: a file names each class by
the module it lived in when it was written, so the loaders look old module
paths up in :data:`MOVED_MODULES`. Parameters are added: they are missing from
an old model, so the loaders (:mod:`budgetdag_core.persist`) fill them in once,
with the value that matches how the old model was fitted, so that the
estimators' code needs no ``getattr(self, name, default)`` fallbacks.
"""

from __future__ import annotations

import inspect
from typing import Any

from ..strategies import StrategyBanks

#: Modules of older versions whose classes now live elsewhere (old -> new).
MOVED_MODULES: dict[str, str] = {
    f"budgetdag_core.{old}": f"budgetdag_core.{new}"
    for old, new in [
        ("_bank_base", "bank._base"),
        ("_bank_models", "bank._models"),
        ("_calibration", "bank._calibration"),
        ("_lgbm_trees", "bank._lgbm_trees"),
        ("_regressor_models", "bank._regressor_models"),
        ("_row_order", "bank._row_order"),
        ("_tree_kernels", "bank._tree_kernels"),
        ("bank", "bank._per_state"),
        ("masked_bank", "bank._masked"),
        ("_estimator_base", "estimator._base"),
        ("confidence", "estimator._inputs"),
        ("estimator", "estimator._classifier"),
        ("policy", "estimator._policy"),
        ("regressor", "estimator._regressor"),
        ("session", "estimator._session"),
        ("_dag_layout", "plotting._dag_layout"),
        ("_plot_dag", "plotting._dag"),
        ("_plot_regions", "plotting._regions"),
        ("_plot_style", "plotting._style"),
        ("_plot_tradeoff", "plotting._tradeoff"),
        ("persist", "persist._io"),
        ("_sweep", "tradeoff._sweep"),
        ("baselines", "tradeoff._baselines"),
        ("budget", "tradeoff._budget"),
        ("cascade", "tradeoff._cascade"),
        ("fit_time", "tradeoff._fit_time"),
        ("tradeoff", "tradeoff._curve"),
        ("sparse_dag", "strategies._growth"),
        ("dag_strategy", "strategies._choice"),
        ("routed_dag", "strategies._routed"),
        ("subsets", "strategies._subsets"),
    ]
}


def current_module(module: str) -> str:
    """Where the classes a file places in ``module`` live today."""
    return MOVED_MODULES.get(module, module)


#: Missing parameters whose old behaviour differs from today's default.
LEGACY_VALUES: dict[str, Any] = {
    "bank_kind": "per_subset",  # before bank kinds, every bank was per subset
    "subset_reward": "correct",  # before the soft reward, Alg. 2 used "correct"
    "policy_features": "sensors",  # before confidence features
    "stop_loss": "zero_one",  # before expected (calibrated) stop losses
    "serve": "folds",  # cross-fitted banks predicted with their fold models
    "cost_scale": 1.0,  # the default before cost_scale="auto"
}


#: Fitted attributes of the estimators added since, with what an older fitted
#: model amounts to.
LEGACY_FITTED: dict[str, Any] = {
    "value_states_": None,  # before "auto" inputs: no state's policy saw both
    "route_states_": None,  # before routing states saw values and probabilities
    "cost_scale_search_": None,  # before cost_scale="auto": a given number
}

#: Fitted attributes added since whose old value is a parameter's: the cost
#: scale of a model from before "auto" is its number, its folds its ``cv``.
LEGACY_FITTED_FROM_PARAMS: dict[str, str] = {"cost_scale_": "cost_scale", "cv_": "cv"}


def upgrade_model(model: Any) -> list[str]:
    """Set the parameters ``model`` and its parts lack; the names of those set.

    A missing parameter gets its :data:`LEGACY_VALUES` entry, else the
    estimator's current default; a fitted model lacking a fitted attribute
    gets its :data:`LEGACY_FITTED` entry. The parts are the objects of this
    package the model holds: its bank, the bank's template and fitted models
    (nested in lists), and the node policies' learners. Anything that is not
    an object of this package (a damaged file's ``None``, number or text) is
    left as it is: the integrity check refuses it, naming what it is.
    """
    if not _is_ours(model):
        return []
    added = _upgrade_one(model)
    if "policies_" in vars(model):
        for name, value in LEGACY_FITTED.items():
            if name not in vars(model):
                setattr(model, name, value)
                added.append(name)
        for name, param in LEGACY_FITTED_FROM_PARAMS.items():
            value = vars(model).get(param)
            # A damaged value (text, None) is left to the integrity check.
            if name not in vars(model) and isinstance(value, int | float):
                setattr(model, name, float(value) if name == "cost_scale_" else value)
                added.append(name)
        added += _strategy_off_the_bank(model)
    for part in _bank_parts(getattr(model, "bank_", None)) + _learners(model):
        added += [f"{type(part).__name__}.{name}" for name in _upgrade_one(part)]
    return added


def _strategy_off_the_bank(model: Any) -> list[str]:
    """A model saved before its strategy and candidates left the bank: its
    ``bank_`` carried ``strategy_`` (many sensors), ``strategy_key_`` and
    ``strategy_banks_`` (a dict); the model now keeps ``strategy_`` and
    ``strategy_banks_``, each bank's growth its strategy, and the bank none
    of them."""
    if "strategy_" in vars(model):
        return []
    bank = vars(model).get("bank_")
    banks = vars(bank).get("strategy_banks_") if _is_ours(bank) else None
    banks = banks if isinstance(banks, dict) else {}
    for one in [bank, *banks.values()]:
        if not _is_ours(one):
            continue
        name = vars(one).pop("strategy_", None)
        growth = vars(one).get("sparse_growth_")
        if isinstance(name, str) and _is_ours(growth):
            growth.strategy = name
        vars(one).pop("strategy_key_", None)
        vars(one).pop("strategy_banks_", None)
    growth = vars(bank).get("sparse_growth_") if _is_ours(bank) else None
    if growth is not None:
        strategy = growth.strategy
    else:
        # A full DAG's strategy came from its selection; an any-subset bank
        # saved without its growth (slim) grew its DAG, the only strategy
        # before the choice among them.
        sparse = type(bank).__name__.startswith("Sparse")
        selected = vars(model).get("subset_selection_") is not None
        strategy = "grown" if sparse else "subsets" if selected else "full"
    model.strategy_ = strategy
    model.strategy_banks_ = StrategyBanks(banks) if banks else None
    return ["strategy_", "strategy_banks_"]


def _is_ours(value: Any) -> bool:
    return type(value).__module__.startswith("budgetdag_core")


def _bank_parts(bank: Any) -> list[Any]:
    """``bank`` and the package's objects among its attributes (lists searched)."""
    if not _is_ours(bank):  # None, or a damaged file's text: nothing to upgrade
        return []
    parts, todo = [bank], list(vars(bank).values())
    seen = {id(bank)}  # a list holding itself (a pickle can) would never end
    while todo:
        value = todo.pop()
        if id(value) in seen:
            continue
        seen.add(id(value))
        if isinstance(value, list | tuple):
            todo.extend(value)
        elif _is_ours(value):
            parts.append(value)
    return parts


def _learners(model: Any) -> list[Any]:
    """The package's learners among the node policies (a damaged list is left
    to the integrity check, which names the problem)."""
    policies = vars(model).get("policies_")
    if not isinstance(policies, list):
        return []
    learners = [vars(p).get("learner") for p in policies if hasattr(p, "__dict__")]
    return [learner for learner in learners if _is_ours(learner)]


def _upgrade_one(model: Any) -> list[str]:
    added = []
    signature = inspect.signature(type(model).__init__)
    for name, param in signature.parameters.items():
        if name == "self" or param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        if name not in vars(model):
            setattr(model, name, LEGACY_VALUES.get(name, param.default))
            added.append(name)
    return added
