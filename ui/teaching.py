"""Words and table styles for the Teaching page (no Streamlit)."""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd
from pandas.io.formats.style import Styler

from budgetdag_core import ReduceStep

from .formatting import pct

CHEAPEST = "background-color: #d3f0d3"
PICKED = "font-weight: bold; color: #b3360b"


def step_summary(
    step: ReduceStep, label: str, names: Mapping[str, str] | None = None
) -> str:
    """What happens at this step, in two sentences of markdown.

    ``names`` renames actions (``acquire a, b`` -> ``buy S3``, see
    :func:`ui.subsets.action_names`); then the actions buy sensor subsets.
    """
    names = names or {}
    n_children = len(step.actions) - 1
    what_to_buy = "sensor subset(s)" if names else "sensor(s)"
    if n_children == 0:
        what = (
            "It holds every sensor, so the only action is to stop: its cost-to-go is "
            "the classification loss."
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
