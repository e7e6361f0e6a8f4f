"""Words and table styles for the Teaching page (no Streamlit)."""

from __future__ import annotations

import pandas as pd
from pandas.io.formats.style import Styler

from budgetdag_core import ReduceStep

CHEAPEST = "background-color: #d3f0d3"
PICKED = "font-weight: bold; color: #b3360b"


def step_summary(step: ReduceStep, label: str) -> str:
    """What happens at this step, in two sentences of markdown."""
    n_children = len(step.actions) - 1
    if n_children == 0:
        what = (
            "It holds every sensor, so the only action is to stop: its cost-to-go is "
            "the classification loss."
        )
    else:
        shares = ", ".join(
            f"{name} {share:.0%}" for name, share in step.action_shares.items()
        )
        what = (
            f"The policy chooses between stopping and {n_children} sensor(s) to buy; "
            f"on the training set it sends {shares}. It picks a cheapest action for "
            f"{step.agreement:.0%} of the training examples."
        )
    return (
        f"**Reducing node {step.state}: {label}.** {what} Average cost-to-go here: "
        f"**{step.mean_cost_to_go:.3g}** (loss units)."
    )


def action_label(action: str) -> str:
    """``acquire band1`` -> ``buy band1`` (short column names)."""
    return "buy " + action.removeprefix("acquire ") if action != "stop" else action


def costs_styler(step: ReduceStep) -> Styler:
    """The step's cost table: one column per action, the policy's pick and the
    cost-to-go; the cheapest action of each row green, the picked one bold."""
    actions = [action_label(a) for a in step.actions]
    table = step.costs[[*step.actions, "picked", "cost_to_go"]].copy()
    table.columns = [*actions, "policy picks", "cost-to-go"]
    table["policy picks"] = table["policy picks"].map(action_label)
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
