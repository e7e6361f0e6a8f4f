"""Sensor subsets (Alg. 2) of a model in words and tables (no Streamlit)."""

from __future__ import annotations

from typing import Any

import pandas as pd

from .formatting import pct


def subset_table(model: Any) -> pd.DataFrame | None:
    """One row per selected subset: ``subset`` (1-based), ``sensors``, ``n
    sensors``, ``cost``; None for a model over the full DAG."""
    selection = getattr(model, "subset_selection_", None)
    if selection is None:
        return None
    spec = model.spec_
    n_all = spec.n_sensors
    rows = []
    for j, names in enumerate(selection.subsets, start=1):
        rows.append(
            {
                "subset": f"S{j}",
                "sensors": f"all {n_all} sensors"
                if len(names) == n_all
                else ", ".join(names),
                "n sensors": len(names),
                "cost": float(sum(spec.costs[n] for n in names)),
            }
        )
    return pd.DataFrame(rows, columns=["subset", "sensors", "n sensors", "cost"])


def subset_summary(model: Any) -> str | None:
    """What Alg. 2 selected and the DAG it gives, in one paragraph (Markdown)."""
    selection = getattr(model, "subset_selection_", None)
    if selection is None:
        return None
    t = len(selection.subsets)
    n_states = model.sensor_dag_.n_states
    n_all = model.spec_.n_sensors
    has_all = any(len(s) == n_all for s in selection.subsets)
    greedy = t - 1 if has_all and model.get_params().get("include_all") else t
    rows = f"{selection.n_rows:,} scored training rows"
    reward = (
        f"the best subset's out-of-fold probability of the true class, averaged "
        f"over the {rows}"
        if _soft(model)
        else f"share of the {rows} that some subset classifies right out of fold"
    )
    text = (
        f"Alg. 2 selected **{t} sensor subsets** ({greedy} greedily"
        + (", then all sensors" if greedy < t else "")
        + f"). Reward **G = {pct(selection.reward)}** ({reward}). "
        f"The DAG over their unions has **{n_states} states** "
        f"(at most 2^{t} = {2**t}; the full DAG of {n_all} sensors would have "
        f"2^{n_all})."
    )
    if selection.budget_used and selection.budget:
        text += (
            f" Greedy subsets use {selection.budget_used:g} of the budget "
            f"{selection.budget:g}."
        )
    return text


def _soft(model: Any) -> bool:
    return model.get_params().get("subset_reward", "correct") == "soft"


def edge_subset(model: Any, state: int, child: int) -> str | None:
    """``S<j>``: the subset bought on the edge ``state -> child`` (None for a
    model over the full DAG)."""
    if getattr(model, "subset_selection_", None) is None:
        return None
    # sensor_dag_, not dag_: reading ``dag_.edges`` caches a networkx view that
    # the skops export cannot store.
    unit = next(u for u, c in model.sensor_dag_.children[state] if c == child)
    return f"S{unit + 1}"


def action_label(model: Any, state: int, child: int, default: str) -> str:
    """An acquire action as ``buy S3 (+6 sensors): a, b, ...`` for subset
    models; ``default`` (the core's wording) otherwise or for stop."""
    name = None if child < 0 else edge_subset(model, state, child)
    if name is None:
        return default
    dag = model.sensor_dag_
    added = [dag.sensor_names[m] for m in dag.added_sensors(state, child)]
    return f"buy {name} (+{len(added)} sensors): " + ", ".join(added)


def path_subsets(model: Any, states: list[int]) -> list[str | None]:
    """The subset bought at each step of a path of states (None: full DAG)."""
    return [edge_subset(model, a, b) for a, b in zip(states, states[1:], strict=False)]
