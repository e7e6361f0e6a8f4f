"""Trade-off page: the trained policy against every fixed sensor subset."""

from __future__ import annotations

import streamlit as st

from budgetdag_core.reports import baseline_table
from ui import widgets

widgets.enter_page()
st.title("Trade-off")
st.markdown(
    "A policy is judged by two numbers: its error and what it pays for sensors. "
    "A fixed (non-adaptive) subset buys the same sensors for every example; the "
    "policy buys them example by example."
)
st.info(
    "Coming next: the full cost-error curve of the DAG over many cost scales, the "
    "convex hull of the fixed subsets, the oracle bound, and picking a model for a "
    "target budget.",
    icon=":material/construction:",
)
run = widgets.need_run("the trade-off compares a trained policy with fixed subsets.")
widgets.need_results(run)

table = baseline_table(run.metrics, run.states)
fixed = table[table["kind"] == "fixed subset"]
beaten = int(fixed["policy_dominates"].sum())
policy = table[table["kind"] == "policy"].iloc[0]
as_good = fixed[fixed["error"] <= policy["error"]]
summary = (
    f"On the test set the policy has **{policy['error']:.1%}** error at average cost "
    f"**{policy['avg_cost']:.3g}**. It beats **{beaten} of {len(fixed)}** fixed "
    "subsets on both counts (cheaper and at least as accurate, or as cheap and "
    "more accurate)."
)
if len(as_good):
    cheapest = as_good.sort_values("avg_cost").iloc[0]
    summary += (
        f" The cheapest fixed subset that is at least as accurate, "
        f"{cheapest['sensors']}, costs {cheapest['avg_cost']:.3g}"
    )
    if cheapest["avg_cost"] > 0:
        saving = 1 - policy["avg_cost"] / cheapest["avg_cost"]
        summary += (
            f": the policy pays {saving:.0%} less."
            if saving > 0
            else f": the policy pays {-saving:.0%} more."
        )
    else:
        summary += "."
else:
    summary += " No fixed subset is as accurate."
st.markdown(summary)

points = table.assign(
    color=table["kind"].map({"policy": "#d9480f", "fixed subset": "#94a3b8"})
)
st.scatter_chart(
    points,
    x="avg_cost",
    y="error",
    color="color",
    size=140,
    x_label="average cost per example",
    y_label="test error",
    height=360,
)
st.caption("Orange: the BudgetDAG policy. Grey: each fixed subset of sensors.")
st.dataframe(
    table.drop(columns=["kind"]),
    hide_index=True,
    column_config={
        "avg_cost": st.column_config.NumberColumn("avg cost", format="%.3g"),
        "error": st.column_config.NumberColumn("test error", format="percent"),
        "policy_dominates": st.column_config.CheckboxColumn("policy better"),
    },
)
