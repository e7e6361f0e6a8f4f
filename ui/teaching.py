"""The Teaching page's replay of Graph-Reduce: its data, words and tables
(no Streamlit).

A replay needs the out-of-fold losses of the rows the model's policies were
trained on. :func:`replay_data` finds those rows (all training rows, or the
part a budget fit used); :func:`replay_problem` says in plain words when the
model lacks them (a model loaded from a file keeps no out-of-fold
predictions), and :func:`refit_out_of_fold` is the fix: the model's bank
refitted, with its own settings, on the rows at hand, for the replay only.
"""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Mapping
from typing import Any

import pandas as pd
from pandas.io.formats.style import Styler

from budgetdag_core import BudgetDAGClassifier, BudgetDAGRegressor, Dataset, Progress
from budgetdag_core.explain import action_names
from budgetdag_core.strategies import StrategyBanks, strategy_name
from budgetdag_core.teaching import ReduceStep

from .formatting import pct
from .training import TrainedRun, make_model, model_params


def replay_data(run: TrainedRun, dataset: Dataset) -> tuple[pd.DataFrame, pd.Series]:
    """The training rows the model's policies learned from, as ``(X, y)``.

    A model fitted for a budget learned from part of the training rows
    (``budget_report_.train_rows``); any other from all of them.
    """
    X, y = dataset.X("train", run.spec), dataset.y("train")
    report = getattr(run.model, "budget_report_", None)
    rows = getattr(report, "train_rows", None)
    if rows is not None and len(rows) and max(rows) < len(X):
        return X.iloc[rows], y.iloc[rows]
    return X, y


def replay_model(run: TrainedRun) -> BudgetDAGClassifier | BudgetDAGRegressor:
    """The model to replay: itself, or a copy with the refitted bank."""
    if run.replay_bank is None:
        return run.model
    model = copy.copy(run.model)
    model.bank_ = run.replay_bank
    return model


def replay_problem(run: TrainedRun, X: pd.DataFrame) -> str | None:
    """Why the model cannot be replayed on ``X`` as it is, in plain words."""
    bank = replay_model(run).bank_
    # A classifier's bank keeps out-of-fold probabilities, a regressor's
    # out-of-fold predictions; a grown DAG replays on its growth (the rows
    # that reached each state and their out-of-fold outputs).
    oof = getattr(bank, "oof_proba_", getattr(bank, "oof_pred_", None))
    models = "regressors" if run.task == "regression" else "classifiers"
    n_rows = None if oof is None else len(oof)
    growth = getattr(bank, "sparse_growth_", None)
    if n_rows is None and growth is not None:
        n_rows = len(growth.X)
    if n_rows is None:
        return (
            f"This model was {run.source}: a saved model keeps its policies and "
            f"{models}, not the out-of-fold predictions of the rows it was "
            "trained on, and the walk needs those (each example's loss from "
            f"{models} that did not see it)."
        )
    if n_rows != len(X):
        return (
            f"This model's out-of-fold predictions are for {n_rows:,} training "
            f"rows, but it does not say which; the current data has {len(X):,}."
        )
    return None


def refit_out_of_fold(
    model: BudgetDAGClassifier, dataset: Dataset, progress: Progress | None = None
) -> Any:
    """A bank with out-of-fold predictions on ``dataset``'s training rows,
    fitted with ``model``'s own settings (a worker's job).

    Raises ``ValueError`` when its DAG would differ from the model's (sensor
    subsets selected anew on these rows).
    """
    X, y = dataset.X("train", model.spec_), dataset.y("train")
    params = {**model_params(model), "cost_scale": model.cost_scale_}
    bank = make_model(model.spec_, params).fit_bank(X, y, progress=progress)
    # A many-sensor bank fit grows each strategy's DAG (the chain's at once,
    # the others' when asked for): the replay needs the model's (the same
    # states, grown again on the same rows and settings), so its strategy's
    # candidates are grown first.
    if isinstance(bank, StrategyBanks):
        states = list(model.sensor_dag_.states)
        for key in sorted(bank, key=lambda k: strategy_name(k) != model.strategy_):
            with contextlib.suppress(KeyError):  # nothing to grow on these rows
                one = bank[key]
                if list(one.sparse_growth_.dag.states) == states:
                    return one
        raise ValueError(
            "On the current training rows other states are grown than the "
            "model's: its walk cannot be replayed on them"
        )
    mine = getattr(model, "subset_selection_", None)
    theirs = getattr(bank, "subset_selection_", None)
    if (mine is None) != (theirs is None) or (
        mine is not None and mine.subsets != theirs.subsets
    ):
        raise ValueError(
            "On the current training rows other sensor subsets are selected than "
            "the model's: its walk cannot be replayed on them"
        )
    return bank


CHEAPEST = "background-color: #d3f0d3"
PICKED = "font-weight: bold; color: #b3360b"


def step_summary(
    step: ReduceStep, label: str, names: Mapping[str, str] | None = None
) -> str:
    """What happens at this step, in two sentences of markdown.

    ``names`` renames actions (``acquire a, b`` -> ``buy S3``, see
    :func:`renamed_actions`); then the actions buy sensor subsets.
    """
    names = names or {}
    n_children = len(step.actions) - 1
    what_to_buy = "sensor subset(s)" if names else "sensor(s)"
    if n_children == 0:
        what = (
            "It holds every sensor, so the only action is to stop: its cost-to-go is "
            "the loss of stopping there."
        )
    else:
        shares = ", ".join(
            f"{names.get(name, name)} {pct(share)}"
            for name, share in step.action_shares.items()
        )
        what = (
            f"The policy chooses between stopping and {n_children} {what_to_buy} "
            "to buy; "
            f"on the training set it sends {shares}. It picks a cheapest action for "
            f"{pct(step.agreement)} of the training examples."
        )
    return (
        f"**Reducing node {step.state}: {label}.** {what} Average cost-to-go here: "
        f"**{step.mean_cost_to_go:.3g}** (loss units)."
    )


def renamed_actions(model: BudgetDAGClassifier, step: ReduceStep) -> dict[str, str]:
    """For a model over sensor subsets, the step's actions -> the library's
    short names (``buy S3``, ``action_names(..., short=True)``); empty for a
    full DAG, whose sensor names :func:`action_label` keeps."""
    if getattr(model, "subset_selection_", None) is None:
        return {}
    short = action_names(model, step.state, short=True)
    return dict(zip(step.actions, short, strict=True))


def action_label(action: str, names: Mapping[str, str] | None = None) -> str:
    """``acquire band1`` -> ``buy band1`` (short column names), or the name
    ``names`` gives the action."""
    if names and action in names:
        return names[action]
    return "buy " + action.removeprefix("acquire ") if action != "stop" else action


def costs_styler(step: ReduceStep, names: Mapping[str, str] | None = None) -> Styler:
    """The step's cost table: one column per action, the policy's pick and the
    cost-to-go; the cheapest action of each row green, the picked one bold."""
    actions = [action_label(a, names) for a in step.actions]
    table = step.costs[[*step.actions, "picked", "cost_to_go"]].copy()
    table.columns = [*actions, "policy picks", "cost-to-go"]
    table["policy picks"] = table["policy picks"].map(lambda a: action_label(a, names))
    table.index = [f"row {i}" for i in table.index]

    def marks(row: pd.Series) -> list[str]:
        costs = row[actions].astype(float)
        low = costs.min()
        out = []
        for col in row.index:
            css = []
            if col in actions and costs[col] <= low + 1e-12:
                css.append(CHEAPEST)
            if col in actions and col == row["policy picks"]:
                css.append(PICKED)
            out.append("; ".join(css))
        return out

    return table.style.apply(marks, axis=1).format(
        "{:.3f}", subset=[*actions, "cost-to-go"]
    )


TOP_ACTIONS = 8  # actions listed in a step's summary (the most picked)


def arrivals_table(step: ReduceStep, names: Mapping[str, str] | None = None) -> Styler:
    """The sampled rows arriving at the step's node: the stop cost, the
    policy's pick and the cheapest action with their costs (loss units); a
    row whose pick is not a cheapest action in red."""
    table = step.arrivals.copy()
    for col in ("picked", "cheapest"):
        table[col] = table[col].map(lambda a: action_label(a, names))
    table.columns = [
        "stop cost",
        "pick",
        "its cost",
        "cheapest",
        "cheapest cost",
        "cost-to-go",
    ]
    table.index = [f"row {i}" for i in table.index]

    def marks(row: pd.Series) -> list[str]:
        worse = row["its cost"] > row["cheapest cost"] + 1e-12
        return [PICKED if worse and c == "pick" else "" for c in row.index]

    numbers = ["stop cost", "its cost", "cheapest cost", "cost-to-go"]
    return table.style.apply(marks, axis=1).format("{:.3f}", subset=numbers)


def action_summary(
    step: ReduceStep, names: Mapping[str, str] | None = None, top: int = TOP_ACTIONS
) -> tuple[pd.DataFrame, int]:
    """The most picked actions over the arriving rows (examples sent there,
    cheapest for, mean cost), and how many actions are left out."""
    table = step.action_summary.head(top).copy()
    table["action"] = table["action"].map(lambda a: action_label(a, names))
    table = table.rename(columns={"picked": "policy sends", "cheapest": "cheapest for"})
    return table, max(len(step.action_summary) - top, 0)
