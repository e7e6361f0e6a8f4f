"""BudgetDAG app: from a table to a trained sensor-acquisition policy.

Run with ``streamlit run app.py``. The pages follow the order a user works in;
they hold widgets and calls into ``budgetdag_core`` only.
"""

from __future__ import annotations

import streamlit as st

from ui import state, widgets

st.set_page_config(
    page_title="BudgetDAG",
    page_icon=":material/account_tree:",
    layout="wide",
)

navigation = st.navigation(
    [
        st.Page(
            widgets.PAGES["data"],
            title="Data",
            icon=":material/table_chart:",
            default=True,
        ),
        st.Page(widgets.PAGES["sensors"], title="Sensors", icon=":material/sensors:"),
        st.Page(
            widgets.PAGES["train"], title="Train", icon=":material/model_training:"
        ),
        st.Page(
            widgets.PAGES["explore"],
            title="Explore DAG",
            icon=":material/account_tree:",
        ),
        st.Page(
            widgets.PAGES["tradeoff"], title="Trade-off", icon=":material/show_chart:"
        ),
        st.Page(widgets.PAGES["export"], title="Export", icon=":material/download:"),
    ]
)

try:
    state.init(widgets.default_dataset)
except Exception as exc:  # e.g. the bundled demo files are missing
    widgets.show_unexpected(exc, "loading the default demo")

# Pages that change the data, sensors or model redraw this slot.
st.session_state[state.STATUS_SLOT] = st.sidebar.empty()
widgets.refresh_status()

st.session_state[state.IN_APP] = True
try:
    navigation.run()
except Exception as exc:  # last resort: no raw tracebacks, the other pages still work
    widgets.show_unexpected(exc, f"drawing the {navigation.title} page")
